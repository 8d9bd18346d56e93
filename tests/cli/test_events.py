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
SGM = {"class_name": "SelfComposedDpEvent", "count": 10,
       "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": "0.01",
                 "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"}}}


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
    _, by_flags, _ = run(capsys, "dp", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5")
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
