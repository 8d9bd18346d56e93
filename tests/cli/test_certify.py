import json
import re
import subprocess
import sys

import pytest

from rdp_verify.certificates.certificate import content_hash
from rdp_verify.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_certify_default_example(capsys):
    code, out, err = run(capsys, "certify", "--q", "0.01", "--sigma", "4", "--alpha", "32")
    cert = json.loads(out)
    assert code == 0 and cert["verdict"] == "certified"
    assert cert["cross_check"]["epsilon_agreement_digits"] >= 25
    assert set(cert["cross_check"]["methods_compared"]) == {"quadrature", "series", "symbolic", "rigorous"}


# slow: this very command and its check are README.md:73's example, its summary line (3 certified) and the check's
# confirmed line with its count of recomputed fields compared (tests/test_docs.py, default run)
@pytest.mark.slow
def test_certify_list_and_file(capsys, tmp_path):
    path = tmp_path / "certs.json"
    code, out, err = run(capsys, "certify", "--q", "0.01", "--sigma", "4", "--alpha", "1.5,2.5,10.7", "--out", str(path))
    certs = json.loads(path.read_text())
    assert code == 0 and out == "" and "3 certified" in err
    assert [c["inputs"]["alpha"] for c in certs] == ["1.5", "2.5", "10.7"]
    for c in certs:  # fractional orders: quadrature and series agree
        pairs = {tuple(p["methods"]): p for p in c["cross_check"]["pairs"]}
        assert pairs[("quadrature", "series")]["epsilon_agreement_digits"] >= 25
    code, out, err = run(capsys, "check", str(path))
    assert code == 0 and re.fullmatch(r".*certs\.json: confirmed \(3 certificates: schema, content hash, \d{3} fields "
                                      r"recomputed and compared; recorded, not verified: software\.\*\)\n", out)


def test_check_a_cdp_claim(capsys, tmp_path):
    path = tmp_path / "claim.json"
    assert run(capsys, "cdp", "zcdp", "--q", "0.01", "--sigma", "1", "--rho", "0.5", "--out", str(path))[0] == 0
    code, out, err = run(capsys, "check", str(path))
    assert code == 0 and "confirmed (1 certificate: schema, content hash, " in out
    cert = json.loads(path.read_text())
    cert["best_rho"]["value"] = "0.25"
    cert["content_hash"] = content_hash(cert)
    path.write_text(json.dumps(cert))
    code, out, err = run(capsys, "check", str(path))
    assert code == 1 and out == f'{path}: FAILED best_rho.value: claimed "0.25", recomputed "0.5"\n'


def test_grid_with_jobs(capsys):
    code, out, err = run(capsys, "certify", "--q", "0.01,0.1", "--sigma", "1", "--alpha", "2", "--jobs", "2", "--dps", "15")
    certs = json.loads(out)
    assert code == 0 and [c["inputs"]["q"] for c in certs] == ["0.01", "0.1"]


@pytest.mark.parametrize(
    "args",
    [
        ["--q", "0", "--sigma", "1", "--alpha", "2"],
        ["--q", "1.5", "--sigma", "1", "--alpha", "2"],
        ["--q", "0.1", "--sigma", "0", "--alpha", "2"],
        ["--q", "0.1", "--sigma", "-3", "--alpha", "2"],
        ["--q", "0.1", "--sigma", "1", "--alpha", "1"],
        ["--q", "0.1", "--sigma", "1", "--alpha", "0.5"],
        ["--q", "nan", "--sigma", "1", "--alpha", "2"],
        ["--q", "0.1", "--sigma", "inf", "--alpha", "2"],
        ["--q", "0.1", "--sigma", "1", "--alpha", "two"],
        ["--q", "0.1", "--sigma", "1", "--alpha", "2,2"],
        ["--q", "0.1", "--sigma", "1", "--alpha", "2", "--dps", "x"],
        ["--q", "0.1", "--sigma", "1", "--alpha", "2", "--jobs", "0"],
        ["--q", "0.1", "--sigma", "1"],
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_file(capsys, tmp_path, args):
    path = tmp_path / "never.json"
    code, out, err = run(capsys, "certify", *args, "--out", str(path))
    assert code == 2
    assert out == "" and err.count("\n") == 1 and err.startswith("rdp-verify: error:")
    assert list(tmp_path.iterdir()) == []


def test_check_exit_codes(capsys, tmp_path):
    assert run(capsys, "check", str(tmp_path / "missing.json"))[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = run(capsys, "check", str(bad))
    assert code == 2 and err.count("\n") == 1
    bad.write_text(json.dumps({"format": "something else"}))  # not a format of rdp_verify: refused, not FAILED
    code, out, err = run(capsys, "check", str(bad))
    assert code == 2 and out == "" and err.count("\n") == 1 and 'its format "something else" is not one of them' in err
    bad.write_text(json.dumps({"format": "rdp_verify certificate"}))  # one of them, broken: FAILED
    code, out, err = run(capsys, "check", str(bad))
    assert code == 1 and "schema" in out


def test_help_and_console_script():
    proc = subprocess.run([sys.executable, "-m", "rdp_verify.cli", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "certify" in proc.stdout and "Exit codes" in proc.stdout
    proc = subprocess.run(["rdp-verify", "certify", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--alpha" in proc.stdout


def _run_certificate(tmp_path, **edits):
    from fractions import Fraction

    from mutations import edited

    from rdp_verify.curves.certificate import certify_run
    from rdp_verify.foundations.run import Phase
    cert = certify_run([Phase(Fraction(1, 50), Fraction(3, 2), 300)], delta=Fraction(1, 10**6))
    for path, value in edits.items():
        cert = edited(cert, path.replace("__", "."), value)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(cert))
    return path


def test_check_names_the_declared_and_re_derived_fields_of_a_run_certificate(capsys, tmp_path):
    """Issue 27, item 4: the confirmed line says which fields were only recorded or re-derived, by name."""
    path = _run_certificate(tmp_path)
    code, out, err = run(capsys, "check", str(path))
    assert code == 0
    assert out.endswith("fields recomputed and compared; re-derived from the certificate's own fields: "
                        "cross_check.consistent, cross_check.informative, verdict, verdict_reason; recorded, not "
                        "verified: software.rdp_verify, work.refinements.**, cross_check.estimate.value, "
                        "cross_check.estimate.error_bound, cross_check.details.saddle_point, cross_check.details.cut)\n")
    assert "cross_check.details.mu" not in out  # only the fields this file has are named


def test_check_refuses_a_run_certificate_asking_for_a_grid_step_of_1e_7(capsys, tmp_path, monkeypatch):
    """Issue 27, item 3: one line, exit 2, before any discretisation."""
    from rdp_verify.curves import accountant

    def started(*args, **kwargs):
        raise AssertionError("work started")
    path = _run_certificate(tmp_path, settings__grid_step="0.0000001")
    monkeypatch.setattr(accountant, "discretize", started)
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "settings: grid_step=0.0000001 makes a grid of 14279614 points" in err
