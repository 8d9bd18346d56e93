"""``rdp-verify calibrate``: the answer with both proofs, a certificate ``check`` confirms, and bad input refused."""

import json
from fractions import Fraction

import mpmath as mp
import pytest
from curve_oracles import gaussian_epsilon

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


def test_infeasible_target_exits_1(capsys):
    assert main(["calibrate", "--target-epsilon", "1e-4", "--delta", "1e-5", "--q", "1", "--steps", "100"]) == 1
    assert "verdict: infeasible" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--target-epsilon", "0", "--delta", "1e-5", "--q", "0.1", "--steps", "10"], "must be positive"),
    (["--target-epsilon", "1", "--delta", "1", "--q", "0.1", "--steps", "10"], "strictly between 0 and 1"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--sigma", "1"], "give two"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1"], "give two"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--dataset-size", "100", "--epochs", "2", "--sigma", "1"],
     "depends on q"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--digits", "0"], "digits"),
    (["--target-epsilon", "x", "--delta", "1e-5", "--q", "0.1", "--steps", "10"], "target epsilon"),
    (["--target-epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "10", "--out", "/nonexistent/c.json"],
     "does not exist"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
