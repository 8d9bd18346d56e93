"""``--event FILE`` in dp and audit: event trees from the command line, their certificates and refusals."""

import json
from fractions import Fraction
from pathlib import Path

import pytest

from rdp_verify.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path, tree):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(tree))
    return path


LAPLACE = {"class_name": "LaplaceDpEvent", "noise_multiplier": "1"}
# q = 0.1, sigma = 2, 10 steps: epsilon(1e-5) = 0.7985, on a grid of step 0.0025 (q = 0.01, sigma = 1 needs 0.0005 for
# its epsilon of 0.38: the three tests below took 8.4 CPU-s on it, 3.9 on this run)
SGM = {"class_name": "SelfComposedDpEvent", "count": 10,
       "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": "0.1",
                 "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "2"}}}


def test_dp_event_laplace_is_the_closed_form_and_its_certificate_is_confirmed(capsys, tmp_path):
    """Laplace(b = 1) once: ε(1e-5) = 1 + 2 log(1 − 1e-5) = 0.99997999990..., inside the printed bracket."""
    out_file = tmp_path / "cert.json"
    code, out, err = run(capsys, "dp", "--event", _write(tmp_path, LAPLACE), "--delta", "1e-5", "--out", out_file)
    assert code == 0 and err == ""
    cert = json.loads(out_file.read_text())
    assert Fraction(cert["epsilon"]["lower"]) <= Fraction("0.9999799999") <= Fraction(cert["epsilon"]["upper"])
    assert cert["cross_check"]["consistent"] and cert["cross_check"]["informative"]
    code, out, _ = run(capsys, "check", out_file)
    assert code == 0 and "confirmed" in out


def test_dp_event_of_the_sgm_family_is_todays_dp(capsys, tmp_path):
    """A tree of Poisson-sampled Gaussian steps prints exactly what the same run given by flags prints."""
    _, by_event, _ = run(capsys, "dp", "--event", _write(tmp_path, SGM), "--delta", "1e-5")
    _, by_flags, _ = run(capsys, "dp", "--q", "0.1", "--sigma", "2", "--steps", "10", "--delta", "1e-5")
    assert by_event == by_flags


@pytest.mark.parametrize("argv, message", [
    (["--neighboring-relation", "REPLACE_ONE"], "LaplaceDpEvent needs neighboring_relation"),
    (["--q", "0.1"], "--event cannot be combined with --q"),
])
def test_dp_event_refusals_are_one_line_exit_2(capsys, tmp_path, argv, message):
    code, out, err = run(capsys, "dp", "--event", _write(tmp_path, LAPLACE), "--delta", "1e-5", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_dp_event_non_private_is_never_a_number(capsys):
    code, out, _ = run(capsys, "dp", "--event", EXAMPLES / "event-nonprivate.json", "--delta", "1e-5")
    assert code == 3 and "epsilon = inf" in out and "verdict: partial" in out


def test_audit_event_violated_and_holds(capsys, tmp_path):
    """Laplace(b = 1) once: a claim of 0.99 at δ = 1e-5 is false (ε = 0.99998), 1.0 holds; --out is the
    certificate behind the verdict."""
    path, out_file = _write(tmp_path, LAPLACE), tmp_path / "proof.json"
    code, out, _ = run(capsys, "audit", "--event", path, "--delta", "1e-5", "--epsilon", "0.99", "--out", out_file)
    assert code == 1 and "verdict: violated" in out
    assert run(capsys, "check", out_file)[0] == 0
    code, out, _ = run(capsys, "audit", "--event", path, "--delta", "1e-5", "--epsilon", "1")
    assert code == 0 and "verdict: holds" in out


def test_audit_event_of_the_sgm_family_is_a_sealed_audit_report(capsys, tmp_path):
    out_file = tmp_path / "report.json"
    code, out, _ = run(capsys, "audit", "--event", _write(tmp_path, SGM), "--delta", "1e-5", "--epsilon", "1",
                       "--out", out_file)
    assert code == 0 and "verdict: holds" in out
    assert json.loads(out_file.read_text())["format"] == "rdp_verify audit"
    assert run(capsys, "check", out_file)[0] == 0


def test_tradeoff_event_laplace_holds_the_closed_form_and_is_checked(capsys, tmp_path):
    """tradeoff --event on Laplace(b = 1): the TPR bracket at FPR 0.01 holds 1 − f(0.01) = e·0.01 (Dong, Roth, Su
    2022, the Laplace trade-off function, below α = e⁻¹/2), μ has no upper end, and check confirms the certificate."""
    import math
    out_file = tmp_path / "t.json"
    code, out, err = run(capsys, "tradeoff", "--event", _write(tmp_path, LAPLACE), "--fpr", "0.01", "--out", out_file)
    assert code == 0 and err == "" and out.startswith("run: Laplace(b=1)\n")
    assert "mu of Gaussian DP in [" in out and ", inf] (lower end from the upper envelope; no upper end" in out
    cert = json.loads(out_file.read_text())
    tpr = cert["tpr"][0]
    assert float(tpr["lower"]) <= math.e * 0.01 * (1 + 1e-12) and math.e * 0.01 * (1 - 1e-12) <= float(tpr["upper"])
    code, out, _ = run(capsys, "check", out_file)
    assert code == 0 and "confirmed" in out


def test_tradeoff_event_of_the_sgm_family_is_todays_tradeoff(capsys, tmp_path):
    """A tree of Poisson-sampled Gaussian steps gets the same envelopes as the same run given by flags."""
    argv = ["--alpha", "0.01", "--fpr", "0.01", "--prior", "0.5", "--json"]
    _, by_event, _ = run(capsys, "tradeoff", "--event", _write(tmp_path, SGM), *argv)
    _, by_flags, _ = run(capsys, "tradeoff", "--q", "0.1", "--sigma", "2", "--steps", "10", *argv)
    by_event, by_flags = json.loads(by_event), json.loads(by_flags)
    assert by_event["inputs"]["event"] == SGM
    for key in ("envelope", "tpr", "mu", "advantage", "bayes", "settings"):
        assert by_event[key] == by_flags[key]


@pytest.mark.parametrize("tree, argv, message", [
    ({"class_name": "NonPrivateDpEvent"}, [], "non-private event: its trade-off function is 0"),
    ({"class_name": "ZCDpEvent", "rho": "0.5"}, [], "abstract zCDP guarantee"),
    (LAPLACE, ["--q", "0.1"], "--event cannot be combined with --q"),
    ({"class_name": "UnsupportedDpEvent"}, [], "Unsupported"),
])
def test_tradeoff_event_refusals_are_one_line_exit_2(capsys, tmp_path, tree, argv, message):
    out_file = tmp_path / "t.json"
    code, out, err = run(capsys, "tradeoff", "--event", _write(tmp_path, tree), *argv, "--out", out_file)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1 and not out_file.exists()
