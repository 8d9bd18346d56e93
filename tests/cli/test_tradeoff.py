"""``rdp-verify tradeoff`` and ``rdp-verify audit --canaries``: summaries, certificates, plots, exit codes, and
one-line refusals that write nothing."""

import json
from pathlib import Path

import pytest

from rdp_verify.cli import main

ROOT = Path(__file__).resolve().parents[2]
GAUSSIAN = ["--q", "1", "--sigma", "2", "--steps", "4"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_summary(capsys):
    code, out, err = run(capsys, "tradeoff", *GAUSSIAN, "--alpha", "0.1", "--fpr", "1e-3", "--prior", "0.5")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "run: q = 1, sigma = 2, steps = 4"
    assert lines[2].startswith("  alpha = 0.1: f in [0.610856308") and "FPR = 0.001: TPR in [0.0182984684" in out
    assert "mu of Gaussian DP in [1, 1] (exact: the run is the Gaussian mechanism)" in out


def test_json_out_check_and_plot(capsys, tmp_path):
    cert_path, plot_path = tmp_path / "t.json", tmp_path / "t.png"
    # a discretised run (q < 1) of 10 steps: 0.8 CPU-s with its check, where q = 0.02, sigma = 1.5, 100 steps took 1.9
    code, out, err = run(capsys, "tradeoff", "--q", "0.1", "--sigma", "2", "--steps", "10", "--fpr", "1e-3",
                         "--json", "--out", str(cert_path), "--plot", str(plot_path))
    cert = json.loads(out)
    assert code == 0 and json.loads(cert_path.read_text()) == cert and cert["method"] == "discrete pairs"
    assert plot_path.read_bytes()[:4] == b"\x89PNG" and f"wrote {plot_path}" in err
    assert run(capsys, "check", str(cert_path))[0] == 0
    cert["tpr"][0]["upper"] = "0.9"
    cert_path.write_text(json.dumps(cert))
    code, out, _ = run(capsys, "check", str(cert_path))
    assert code == 1 and "content_hash" in out


@pytest.mark.parametrize("argv,message", [
    (["--fpr", "2"], "FPR 2 must lie in [0, 1]"),
    (["--alpha", "-0.1"], "alpha -1/10 must lie in [0, 1]"),
    (["--prior", "1"], "prior 1 must lie strictly between 0 and 1"),
    (["--fpr", "abc"], "FPR"),
    (["--fpr", "0.1,,0.2"], "empty entry"),
])
def test_refusals_write_nothing(capsys, tmp_path, argv, message):
    out = tmp_path / "t.json"
    code, _, err = run(capsys, "tradeoff", *GAUSSIAN, *argv, "--out", str(out))
    assert code == 2 and message in err and len(err.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("name,code,verdict", [("canaries-mu3.csv", 1, "bug"), ("canaries-mu1.csv", 0, "consistent")])
def test_audit_canaries(capsys, tmp_path, name, code, verdict):
    report_path = tmp_path / "r.json"
    got, out, _ = run(capsys, "audit", *GAUSSIAN, "--canaries", str(ROOT / "examples" / name), "--out", str(report_path))
    assert got == code and f"verdict: {verdict}" in out and "empirical epsilon at delta = 0.00001: >= " in out
    report = json.loads(report_path.read_text())
    assert report["verdict"] == verdict and report["confidence"] == "0.95"


@pytest.mark.parametrize("text,extra,message", [
    ("score\n1\n", [], "needs the columns"),
    ("threshold,tp,fp,tn,fn\n0,-2,1,1,1\n", [], "not a whole number"),
    ("score,member\n1,1\n0,0\n", ["--confidence", "1.5"], "confidence 3/2 must lie strictly between 0 and 1"),
    ("score,member\n1,1\n0,0\n", ["--epsilon", "1"], "--canaries cannot be combined with --epsilon"),
])
def test_audit_canaries_refusals(capsys, tmp_path, text, extra, message):
    canaries, out = tmp_path / "c.csv", tmp_path / "r.json"
    canaries.write_text(text)
    code, _, err = run(capsys, "audit", *GAUSSIAN, "--canaries", str(canaries), *extra, "--out", str(out))
    assert code == 2 and message in err and len(err.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("text,extra,message", [
    ("threshold,tp,fp,tn,fn\n0,40,0,30,0\n1,20,0,31,20\n", [], "the counts rows cannot be the thresholds of one "
     "attack's scores (the rows do not all count the same members and non-members)"),
    ("score,member\n1,1\n0,0\n", ["--thresholds-fixed-in-advance"], "thresholds read off the scores are chosen by "
     "the data, not fixed in advance"),
])
def test_the_level_rule_refusals(capsys, tmp_path, text, extra, message):
    canaries, out = tmp_path / "c.csv", tmp_path / "r.json"
    canaries.write_text(text)
    code, _, err = run(capsys, "audit", *GAUSSIAN, "--canaries", str(canaries), *extra, "--out", str(out))
    assert code == 2 and message in err and len(err.splitlines()) == 1 and not out.exists()


def test_thresholds_fixed_in_advance(capsys, tmp_path):
    """Issue 30: counts rows get the level valid for any threshold of the scores unless the user says the
    thresholds were fixed in advance; the summary and the sealed report say which rule, and check repeats it."""
    canaries, out = tmp_path / "c.csv", tmp_path / "r.json"
    canaries.write_text("threshold,tp,fp,tn,fn\n0.5,60,10,90,40\n0.9,30,2,98,70\n")
    code, text, _ = run(capsys, "audit", *GAUSSIAN, "--canaries", str(canaries))
    assert code == 0 and ("at level 0.00025: valid for every threshold of the scores at once, even one picked after "
                          "seeing them)") in text
    code, text, _ = run(capsys, "audit", *GAUSSIAN, "--canaries", str(canaries), "--thresholds-fixed-in-advance",
                        "--out", str(out))
    assert code == 0 and "at level 0.0125: Bonferroni over thresholds fixed in advance)" in text
    report = json.loads(out.read_text())
    assert report["level_rule"] == "fixed-in-advance" and report["strongest"]["threshold"] == "0.5"
    assert run(capsys, "check", str(out))[0] == 0
    code, _, err = run(capsys, "audit", *GAUSSIAN, "--delta", "1e-5", "--epsilon", "1", "--thresholds-fixed-in-advance")
    assert code == 2 and "--thresholds-fixed-in-advance belongs to --canaries" in err
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--thresholds-fixed-in-advance" in text and "picking the best-looking threshold" in text


def test_audit_canaries_needs_the_run(capsys):
    code, _, err = run(capsys, "audit", "--canaries", str(ROOT / "examples" / "canaries-mu1.csv"))
    assert code == 2 and err.strip() == ("rdp-verify: error: give the run (--q or --batch-size/--dataset-size, --sigma, "
                                         "--steps or --epochs)")
