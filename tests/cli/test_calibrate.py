"""``rdp-verify calibrate``: the answer with both proofs, a certificate ``check`` confirms, and bad input refused."""

import json
from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import gaussian_epsilon

from rdp_verify.calibration import solve
from rdp_verify.cli import main

RUN = ["--target-epsilon", "2", "--delta", "1e-5", "--q", "1", "--steps", "10"]


def test_summary_names_the_answer_and_the_neighbours_proof(capsys):
    assert main(["calibrate", *RUN]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("run: q = 1, steps = 10; target epsilon = 2 at delta = 0.00001")
    answer = Fraction(out[1].split("sigma = ")[1].split(":")[0])
    below = Fraction(out[2].split("sigma = ")[1].split(":")[0])
    mu = lambda s: mp.sqrt(10) / (mp.mpf(s.numerator) / s.denominator)  # noqa: E731
    assert gaussian_epsilon(1e-5, mu(answer)) <= 2 < gaussian_epsilon(1e-5, mu(below))  # Balle–Wang closed form
    assert out[1].endswith("<= 2") and out[2].endswith("> 2")
    assert out[-1].startswith("verdict: calibrated: the smallest sigma on the grid")


def test_json_certificate_is_checked(tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert main(["calibrate", *RUN, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert main(["check", str(out)]) == 0
    assert "confirmed" in capsys.readouterr().out


def test_batch_and_dataset_size_solve_for_steps(capsys):
    assert main(["calibrate", "--target-epsilon", "3", "--delta", "1e-5", "--batch-size", "600",
                 "--dataset-size", "600", "--sigma", "5"]) == 0
    assert "largest steps on the grid" in capsys.readouterr().out


def test_a_target_met_at_the_ranges_end_is_answered_at_once(tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--accountant", "rdp", "--target-epsilon", "1e6", "--delta", "1e-5", "--q", "1",
                 "--steps", "1", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("answer: sigma = 0.1: best RDP bound on epsilon in [")
    assert lines[2] == "  next smaller grid value: outside the supported range [0.1, 1e4]"
    assert lines[3].endswith("in [0.1, 1e4]; 1 grid value evaluated")
    assert lines[4] == ("verdict: calibrated: the end of the supported range [0.1, 1e4] meets the target, "
                        "so every sigma in it does; the smallest is the answer")
    assert main(["check", str(out)]) == 0


def test_a_target_out_of_reach_is_one_line_exit_2_and_nothing_written(tmp_path, capsys):
    # RDP of q = 1, T = 100 at sigma = 1e4 is about sqrt(2 T log(1/delta))/sigma = 0.048 > 1e-4
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--accountant", "rdp", "--target-epsilon", "1e-4", "--delta", "1e-5", "--q", "1",
                 "--steps", "100", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and not out.exists()
    assert captured.err.startswith("rdp-verify: error: no sigma <= 1e4 reaches epsilon <= 1e-4 at delta = 1e-5 "
                                   "under the rdp accountant (at sigma = 1e4, the best RDP bound on epsilon >= 0.002")


def test_the_issues_tiny_target_is_refused_in_one_line(monkeypatch, capsys):
    # the search logic only (a fake bracket, 1e-3 everywhere): the privacy curves are tested in tests/curves
    calls = []

    def epsilon_at(problem, value, tolerance):
        calls.append(value)
        return Fraction(1, 1000), Fraction(1, 1000), None

    monkeypatch.setattr(solve, "epsilon_at", epsilon_at)
    assert main(["calibrate", "--q", "0.01", "--steps", "1000", "--target-epsilon", "1e-6", "--delta", "1e-5"]) == 2
    assert capsys.readouterr().err == ("rdp-verify: error: no sigma <= 1e6 reaches epsilon <= 1e-6 at delta = 1e-5 "
                                       "(at sigma = 1e6, epsilon >= 0.001)\n")
    assert calls == [Fraction(1, 20), 10**6]


def test_help_states_the_ranges_and_every_exit_code(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sigma in [0.05, 1e6] (pld) or [0.1, 1e4] (rdp), steps in [1, 1e6], q in [1e-12, 1]" in text
    assert "Exit codes: 0 calibrated or inconclusive" in text and "1 a cross-check disagrees" in text
    assert "2 bad input or no answer" in text


@pytest.mark.parametrize("args, message", [
    (["--target-epsilon", "0", "--delta", "1e-5", "--q", "0.1", "--steps", "10"], "--target-epsilon=0 must be positive"),
    (["--target-epsilon", "1", "--delta", "1", "--q", "0.1", "--steps", "10"], "delta=1 must lie strictly between 0 and 1"),
    (["--target-epsilon", "1", "--delta", "0", "--q", "0.1", "--steps", "10"], "delta=0 must lie strictly between 0 and 1"),
    (["--target-epsilon", "1", "--delta", "1e-300", "--q", "0.1", "--steps", "10"],
     "delta=1e-300 is below the supported minimum 1e-40"),
    (["--target-epsilon", "1", "--delta", "NaN", "--q", "0.1", "--steps", "10"], "delta='NaN' is not a number"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "1.5", "--steps", "10"], "q=1.5 is outside (0, 1]"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--sigma", "-1"], "sigma=-1 must be positive"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "0"], "steps=0 must be a whole number"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--tolerance", "0"],
     "tolerance=0 must lie strictly between 0 and 1"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--sigma", "0.05", "--accountant", "rdp"],
     "sigma=0.05 is outside the supported range [0.1, 1e4]"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--sigma", "1"], "give two"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1"], "give two"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--dataset-size", "100", "--epochs", "2", "--sigma", "1"],
     "depends on q"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--digits", "0"], "digits"),
    (["--target-epsilon", "x", "--delta", "1e-5", "--q", "0.1", "--steps", "10"], "--target-epsilon='x' is not a number"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--out", "/nonexistent/c.json"],
     "does not exist"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


# slow: calibrate --event's summary is covered by the executed example of docs/calibration.md, its certificate's check
# by tests/calibration/test_certificate.py::test_event_calibration_is_checked_field_by_field (default run)
@pytest.mark.slow
def test_event_calibration_from_the_command_line(tmp_path, capsys):
    """calibrate --event: sigma of the tree's Gaussian mechanisms beside a Laplace release (the answer is checked
    against an independent mpmath computation in tests/calibration/test_certificate.py); check confirms it."""
    tree = tmp_path / "tree.json"
    tree.write_text(json.dumps({"class_name": "ComposedDpEvent", "events": [
        {"class_name": "SelfComposedDpEvent", "count": 4,
         "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"}},
        {"class_name": "LaplaceDpEvent", "noise_multiplier": "2"}]}))
    out = tmp_path / "cal.json"
    code = main(["calibrate", "--target-epsilon", "3", "--delta", "1e-5", "--event", str(tree), "--digits", "1",
                 "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and text.startswith("run: 4 x Gaussian(sigma=1) + Laplace(b=2); ADD_OR_REMOVE_ONE; the noise")
    assert "answer: sigma = 4: epsilon in [" in text and "next smaller grid value: sigma = 3: epsilon in [" in text
    assert main(["check", str(out)]) == 0


@pytest.mark.parametrize("extra, message", [
    (["--accountant", "rdp"], "--event calibrates with the pld accountant"),
    (["--q", "0.1"], "--event cannot be combined with --q"),
])
def test_event_calibration_refusals(tmp_path, capsys, extra, message):
    tree = tmp_path / "tree.json"
    tree.write_text(json.dumps({"class_name": "GaussianDpEvent", "noise_multiplier": "1"}))
    code = main(["calibrate", "--target-epsilon", "3", "--delta", "1e-5", "--event", str(tree), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
