"""``rdp-verify check`` of everything written with --out (issue 27): audit reports (one claim, a claims file,
a canary attack) and RDP tables are confirmed; a forgery is FAILED (exit 1); JSON that is not one of the
project's sealed formats is refused in one line (exit 2)."""

import json
from pathlib import Path

import pytest

from rdp_verify.certificates.certificate import content_hash
from rdp_verify.cli import main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--q", "0.01", "--sigma", "4", "--steps", "100", "--delta", "1e-5"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def written(capsys, tmp_path, *argv):
    """The command's --out file, which must be what its --json prints, and its check's report line."""
    path = tmp_path / "out.json"
    code, out, _ = run(capsys, *argv, "--json", "--out", str(path))
    assert json.loads(out) == json.loads(path.read_text())
    checked, report, err = run(capsys, "check", str(path))
    assert checked == 0 and err == "", report
    return path, report


# slow: checking a sealed audit report is covered by test_a_claims_file_report_is_confirmed_report_by_report (reports
# confirmed one by one, a forged one FAILED) and tests/cli/test_events.py's sealed audit report (one) (default run)
@pytest.mark.slow
def test_an_audit_report_is_confirmed_and_a_forgery_is_failed(capsys, tmp_path):
    path, report = written(capsys, tmp_path, "audit", *SMALL, "--epsilon", "1")
    assert report.startswith(f"{path}: confirmed (1 audit report: schema, content hash, ")
    data = json.loads(path.read_text())
    data["accountants"]["pld"]["margin"] = "0.95"
    data["content_hash"] = content_hash(data)
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1 and out.startswith(f'{path}: FAILED accountants.pld.margin: claimed "0.95", recomputed "0.92')


def test_a_claims_file_report_is_confirmed_report_by_report(capsys, tmp_path):
    claims = tmp_path / "claims.csv"
    claims.write_text("id,q,sigma,steps,delta,epsilon,accountant\na,0.01,4,100,1e-5,1,pld\n"
                      "b,0.02,2,50,1e-6,0.2,rdp\n")
    path, report = written(capsys, tmp_path, "audit", "--claims", str(claims))
    assert report.startswith(f"{path}: confirmed (2 audit reports: ")
    data = json.loads(path.read_text())
    data[1]["verdict"] = "holds"  # b does not hold: 0.2 is below what RDP accounting proves
    data[1]["content_hash"] = content_hash(data[1])
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1 and out.startswith(f'{path}: FAILED [1] verdict: claimed "holds", recomputed ')


def test_a_canary_audit_is_confirmed_without_its_csv(capsys, tmp_path):
    canaries = tmp_path / "c.csv"
    canaries.write_bytes((ROOT / "examples" / "canaries-mu3.csv").read_bytes())
    path, _ = written(capsys, tmp_path, "audit", "--q", "1", "--sigma", "2", "--steps", "4", "--canaries", str(canaries))
    canaries.unlink()  # the report holds the counts it was computed from
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0 and ("recorded, not verified: canaries.file, canaries.sha256, below_curve.*.score, "
                          "strongest.score, software.*") in out
    assert json.loads(path.read_text())["verdict"] == "bug"


def test_an_rdp_table_is_confirmed(capsys, tmp_path):
    path, report = written(capsys, tmp_path, "rdp", "--q", "0.01", "--sigma", "1.1", "--orders", "2,8,32",
                           "--steps", "3")
    assert report == (f"{path}: confirmed (1 RDP table: schema, content hash, 21 fields recomputed and compared; "
                      "recorded, not verified: software.*)\n")


KNOWN = ("known formats: rdp_verify audit, rdp_verify calibration, rdp_verify canary audit, rdp_verify cdp claim, "
         "rdp_verify certificate, rdp_verify event privacy curve, rdp_verify one-run audit, rdp_verify privacy curve, "
         "rdp_verify rdp table, rdp_verify trade-off curve)")


@pytest.mark.parametrize("content, message", [
    ({}, 'is a JSON object, not an rdp_verify certificate or report (no "format" field; ' + KNOWN),
    ([1, 2], "is a JSON list, not an rdp_verify certificate or report, nor a list of them (" + KNOWN),
    ({"format": "other tool", "data": 1},
     'is a JSON object, not an rdp_verify certificate or report (its format "other tool" is not one of them; ' + KNOWN),
    ({"claims": [{"q": "0.01", "sigma": "1", "steps": "10", "delta": "1e-5", "epsilon": "1"}]},
     "is a claims file, not a certificate or report: audit it with rdp-verify audit --claims {path}"),
    ([{"q": "0.01", "sigma": "1", "steps": "10"}],
     "is a phases file, not a certificate or report: use it with rdp-verify dp --phases {path}"),
    ({"format": "rdp_verify golden grid", "version": 1},
     "is a golden grid file: compute its rows with rdp-verify golden --grid FILE --out DIR"),
    ({"format": "rdp_verify audit", "format_version": 2, "verdict": "holds"},
     "is a 'rdp_verify audit' file of format version 2, which was written before the format was sealed and cannot "
     "be checked: run the command again for a sealed one"),
])
def test_json_that_is_no_sealed_format_is_refused_in_one_line(capsys, tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(content))
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == "" and err == f"rdp-verify: error: {path} {message.format(path=path)}\n"


def test_a_list_with_one_foreign_object_names_it(capsys, tmp_path):
    path = tmp_path / "x.json"
    table = tmp_path / "t.json"
    assert run(capsys, "rdp", "--q", "0.01", "--sigma", "1", "--orders", "2", "--out", str(table))[0] == 0
    path.write_text(json.dumps([json.loads(table.read_text()), {"x": 1}]))
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and err.startswith(f"rdp-verify: error: {path} [1] is a JSON object, not an rdp_verify ")
    assert err.count("\n") == 1


def test_a_declared_format_that_fails_its_schema_is_failed_not_refused(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"format": "rdp_verify canary audit", "format_version": 1}))
    code, out, err = run(capsys, "check", str(path))
    assert code == 1 and err == "" and out.startswith(f"{path}: FAILED schema: (top level): ")
