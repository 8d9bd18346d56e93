"""``rdp-verify dp``: summary, certificate, phases, plot, and one-line refusals that write nothing."""

import json
from fractions import Fraction

import pytest

from rdp_verify.cli import main
from rdp_verify.curves.certificate import check_run_certificate

RUN = ["--q", "0.02", "--sigma", "1.5", "--steps", "300"]


def run(capsys, *argv):
    code = main(["dp", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary(capsys):
    code, out, err = run(capsys, *RUN, "--delta", "1e-6")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "run: q = 0.02, sigma = 1.5, steps = 300; delta = 0.000001"
    assert lines[1].startswith("epsilon in [") and "(proven; relative width" in lines[1]
    assert "consistent" in out and lines[-1] == "verdict: certified (both ends proven and finite)" and "  tolerance 0.001: met" in lines


def test_json_out_and_check(capsys, tmp_path):
    path = tmp_path / "cert.json"  # delta(1) is about 2e-5: a 64-bit grid (delta(2) ~ 4e-12 needs 3x the work)
    code, out, err = run(capsys, *RUN, "--epsilon", "1", "--json", "--out", str(path))
    cert = json.loads(out)
    assert code == 0 and json.loads(path.read_text()) == cert and "delta" in cert
    assert main(["check", str(path)]) == 0
    assert "confirmed (1 certificate" in capsys.readouterr().out
    assert check_run_certificate(cert) == []


def test_phases_as_lists_and_as_a_file(capsys, tmp_path):
    code, out, _ = run(capsys, "--q", "0.02,0.05", "--sigma", "1.5", "--steps", "200,100", "--delta", "1e-6", "--json")
    listed = json.loads(out)
    assert code == 0 and [p["steps"] for p in listed["inputs"]["phases"]] == [200, 100]
    path = tmp_path / "phases.json"
    path.write_text('[{"q": 0.02, "sigma": 1.5, "steps": 200}, {"q": "0.05", "sigma": "1.5", "steps": "100"}]')
    code, out, _ = run(capsys, "--phases", str(path), "--delta", "1e-6", "--json")
    assert code == 0 and json.loads(out)["epsilon"] == listed["epsilon"]


def test_repeated_phases_are_written_once_and_recorded_as_given(capsys, tmp_path):
    path = tmp_path / "phases.json"
    path.write_text(json.dumps([{"q": "0.02", "sigma": "1.5", "steps": 1}] * 60 + [{"q": "0.05", "sigma": "1.5", "steps": 9}]))
    out_file = tmp_path / "cert.json"  # the summary and the certificate of one run (--out writes what --json prints)
    code, out, _ = run(capsys, "--phases", str(path), "--delta", "1e-6", "--out", str(out_file))
    assert code == 0 and out.splitlines()[0] == \
        "run: 60 x (q = 0.02, sigma = 1.5, steps = 1); q = 0.05, sigma = 1.5, steps = 9; delta = 0.000001"
    cert = json.loads(out_file.read_text())
    assert [p["steps"] for p in cert["inputs"]["phases"]] == [1] * 60 + [9] and check_run_certificate(cert) == []


def test_batch_size_and_epochs(capsys):
    code, out, _ = run(capsys, "--batch-size", "256", "--dataset-size", "60000", "--sigma", "1.1", "--epochs", "1",
                       "--step-convention", "ceil", "--delta", "1e-5")
    assert code == 0 and "steps = 235 [q = 256/60000; ceil(1 epochs / q) = ceil(234.375) = 235]" in out


def test_plot(capsys, tmp_path):
    path = tmp_path / "curve.png"
    code, _, err = run(capsys, *RUN, "--delta", "1e-6", "--plot", str(path))
    assert code == 0 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"wrote {path}" in err


@pytest.mark.parametrize("run_args", [
    ["--neighbours", "replace-one", "--q", "0.05", "--sigma", "2", "--steps", "20"],
    # slow: the plot without an RDP curve is covered by the replace-one case (default run)
    pytest.param(["--sampler", "shuffle", "--batch-size", "100", "--dataset-size", "1000", "--sigma", "1", "--epochs",
                  "2"], marks=pytest.mark.slow),
])
def test_plot_of_other_samplers_has_no_rdp_curve(capsys, tmp_path, monkeypatch, run_args):
    from rdp_verify.curves import plot

    monkeypatch.setattr(plot, "rdp_points", lambda *a: pytest.fail("RDP is the Poisson add/remove SGM's only"))
    path = tmp_path / "curve.png"
    code, _, err = run(capsys, *run_args, "--delta", "1e-5", "--plot", str(path))
    assert code == 0 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"wrote {path}" in err


def test_inconsistent_exits_1(capsys, monkeypatch):
    from rdp_verify.curves import certificate
    from rdp_verify.curves.crosscheck import Estimate
    monkeypatch.setattr(certificate, "estimate_delta",
                        lambda phases, eps, scale=None: Estimate(Fraction(1, 2), Fraction(0), "x", {}))
    code, out, _ = run(capsys, *RUN, "--delta", "1e-6")
    assert code == 1 and "INCONSISTENT" in out and "verdict: inconsistent (" in out.splitlines()[-1]


# slow: covered by docs/privacy-curves.md's example of this very command, its last line and exit status 3 compared
# (tests/test_docs.py, default run)
@pytest.mark.slow
def test_partial_exits_3(capsys):
    # one step of q = 0.01, sigma = 4 has privacy loss above 20 only beyond about 98 sigma (1 - q + q e^((2x - 1)/32)
    # > e^20 needs x > 394): delta(20) is far below 1e-40, so no positive lower end can be proven (docs/privacy-curves.md
    # shows the same run)
    code, out, _ = run(capsys, "--q", "0.01", "--sigma", "4", "--steps", "1", "--epsilon", "20")
    assert code == 3 and out.splitlines()[-1].startswith("verdict: partial (lower end 0")


def test_gaussian_runs_are_in_closed_form(capsys):
    code, out, _ = run(capsys, "--q", "1", "--sigma", "0.1", "--steps", "1", "--delta", "1e-5")
    assert code == 0 and "closed form of the Gaussian mechanism" in out.splitlines()[1]


@pytest.mark.parametrize("args, message", [
    (RUN + ["--delta", "1"], "delta=1 must lie strictly between 0 and 1"),
    (RUN + ["--delta", "0"], "delta=0 must lie strictly between 0 and 1"),
    (RUN + ["--delta", "1e-50"], "below the supported minimum 1e-40"),
    (RUN + ["--epsilon", "-1"], "epsilon=-1 must be non-negative"),
    (RUN + ["--epsilon", "nan"], "not a number"),
    # issue 27: negative numbers in every spelling reach the validator (before: "expected one argument")
    (RUN + ["--delta", "-1e-5"], "delta=-1e-5 must lie strictly between 0 and 1"),
    (RUN + ["--epsilon", "-2.5E1"], "epsilon=-2.5E1 must be non-negative"),
    (RUN + ["--delta", "-1/100000"], "delta=-1/100000 must lie strictly between 0 and 1"),
    (["--q", "-.5", "--sigma", "1.5", "--steps", "10", "--delta", "1e-5"], "q=-.5 is outside (0, 1]"),
    (RUN + ["--delta", "1e-5", "--plot", "."], "is a directory"),
    (["--sampler", "shuffle", "--batch-size", "7", "--dataset-size", "100", "--sigma", "1", "--epochs", "1",
      "--delta", "1e-5"], "dataset_size=100 is not a multiple of batch_size=7"),
    (RUN + ["--delta", "1e-5", "--epsilon", "1"], "exactly one of --delta"),
    (RUN, "exactly one of --delta"),
    (["--q", "0.02", "--sigma", "1.5", "--steps", "2.5", "--delta", "1e-5"], "steps=2.5 must be a whole number"),
    (["--q", "0.02", "--sigma", "1.5", "--steps", "0", "--delta", "1e-5"], "steps=0 must be a whole number"),
    (["--q", "0.02", "--sigma", "1.5", "--steps", "2000000", "--delta", "1e-5"], "beyond the supported maximum"),
    (["--q", "0.02,0.03,0.04", "--sigma", "1.5,2", "--steps", "10", "--delta", "1e-5"], "--sigma has 2 values"),
    (["--sigma", "1.5", "--steps", "10", "--delta", "1e-5"], "missing --q"),
    (RUN + ["--delta", "1e-5", "--tolerance", "2"], "tolerance=2"),
    (RUN + ["--delta", "1e-5", "--plot", "curve.gif"], "must end in .png"),
    ([], "give the run"),
    (["--sampler", "fixed", "--batch-size", "10", "--dataset-size", "1000", "--sigma", "1", "--steps", "10",
      "--delta", "1e-5"], "sampler fixed with add-remove neighbours has no proven bound"),
    (["--sampler", "shuffle", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5"],
     "sampler shuffle needs --batch-size and --dataset-size, not --q"),
    (["--sampler", "shuffle", "--batch-size", "7", "--dataset-size", "100", "--sigma", "1", "--steps", "10",
      "--delta", "1e-5"], "dataset_size=100 is not a multiple of batch_size=7"),
    (["--sampler", "poissn"] + RUN + ["--delta", "1e-5"], "sampler='poissn' is not one of"),
    (["--neighbours", "replace-one,add-remove", "--q", "0.01", "--sigma", "1", "--steps", "10,20",
      "--delta", "1e-5"], "same neighbour relation"),
])
def test_bad_input_one_line_exit_2_nothing_written(capsys, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args, "--out", "cert.json")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []


def test_bad_phases_file(capsys, tmp_path):
    path = tmp_path / "phases.json"
    path.write_text('[{"q": "0.02", "sigma": "1.5", "stepz": 10}]')
    code, _, err = run(capsys, "--phases", str(path), "--delta", "1e-5")
    assert code == 2 and "unknown phase field 'stepz'" in err
    code, _, err = run(capsys, "--phases", str(path), "--q", "0.1", "--delta", "1e-5")
    assert code == 2 and "cannot be combined" in err


def test_samplers_on_the_command_line(capsys, tmp_path):
    code, out, _ = run(capsys, "--neighbours", "replace-one", "--q", "0.05", "--sigma", "2", "--steps", "20",
                       "--delta", "1e-5", "--out", str(tmp_path / "r.json"))
    assert code == 0 and "poisson (q = 0.05), replace-one" in out and "symmetric" in out
    cert = json.loads((tmp_path / "r.json").read_text())
    assert cert["inputs"]["phases"][0]["neighbours"] == "replace-one"
    assert main(["check", str(tmp_path / "r.json")]) == 0
    # one epoch: 0.9 CPU-s (two: 2.4, their add direction's order of the exact pair is shown by docs/samplers.md:245)
    code, out, _ = run(capsys, "--sampler", "balls-in-bins", "--batch-size", "100", "--dataset-size", "1000",
                       "--sigma", "1", "--epochs", "1", "--epsilon", "1")
    assert code == 0 and "balls-in-bins (batch 100 of 1000), add-remove, sigma = 1, steps = 10" in out
    assert "no finer computation closes the gap" in out
