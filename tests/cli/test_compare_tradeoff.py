"""``rdp-verify compare --tradeoff``: riskcal's, dp_accounting's and jax_privacy's values against proven envelopes
and brackets; table, JSON, exit codes, bad input. References are closed forms computed here with mpmath."""

import json
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import pytest

from rdp_verify.cli import main
from rdp_verify.reference import tradeoff_peers as tp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def need(*names):
    for name in names:
        try:
            (tp.load_curve if tp.TRADEOFF_PEERS[name].kind == "curve" else tp.load_auditor)(name)
        except tp.PeerUnavailable as exc:
            pytest.skip(str(exc))


def gaussian_tradeoff(mu, alpha: str) -> mp.mpf:
    with mp.workdps(50):
        return mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(alpha) - 1) - mu)


def test_curves_against_the_gaussian_closed_form(tmp_path, capsys):
    need("riskcal")
    out = tmp_path / "points.json"
    code = main(["compare", "--tradeoff", "--against", "riskcal", "--q", "1", "--sigma", "2", "--steps", "4",
                 "--alpha", "0.5,1e-6", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 1  # riskcal is unsafe
    assert text.startswith("runs: q=1 sigma=2 steps=4 (Poisson, add/remove)\nalpha: 0.000001, 0.5\n")
    assert "riskcal unsafe: q=1 sigma=2 steps=4 (alpha 0.000001, 0.5)" in text
    points = json.loads(out.read_text())
    assert [(p["peer"], p["alpha"]) for p in points] == [("riskcal", "0.000001"), ("riskcal", "0.5")]
    for p in points:
        # the envelopes printed are the run's: they enclose G_1(alpha), computed here
        exact = gaussian_tradeoff(mp.mpf(1), p["alpha"])
        assert Fraction(p["lower"]) <= Fraction(mp.nstr(exact, 40)) <= Fraction(p["upper"])
        assert p["quantity"] == "beta(alpha)" and p["kind"] == "curve"
        assert float(p["peer_value"]) > exact and p["classification"] == "unsafe"


def test_auditors_on_the_shipped_canaries(tmp_path, capsys, monkeypatch):
    need("jax_privacy_gdp", "jax_privacy_clopper_pearson")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mu1.csv").write_text(EXAMPLES.joinpath("canaries-mu1.csv").read_text())
    (tmp_path / "mu3.csv").write_text(EXAMPLES.joinpath("canaries-mu3.csv").read_text())
    code = main(["compare", "--tradeoff", "--against", "jax_privacy_gdp,jax_privacy_clopper_pearson", "--q", "1",
                 "--sigma", "2", "--steps", "4", "--canaries", "mu1.csv,mu3.csv", "--json", "p.json"])
    text = capsys.readouterr().out
    assert code == 1  # the mu = 3 attack exceeds the mu = 1 run: its GDP estimate is above the proven epsilon
    assert "canaries: mu1.csv (500 members, 500 non-members)" in text
    assert "epsilon lower bounds at delta 0.00001, confidence 0.95" in text
    assert "jax_privacy_gdp unsafe: q=1 sigma=2 steps=4 (mu3.csv at delta 0.00001)" in text
    points = json.loads((tmp_path / "p.json").read_text())
    assert len(points) == 4
    # the bracket is the run's epsilon(1e-5): Balle-Wang for mu = 1 is 4.37717809568122 (bisection at 40 digits)
    assert all(Fraction(p["lower"]) <= Fraction("4.37717809568122") <= Fraction(p["upper"]) for p in points)
    classes = {(p["peer"], p["canaries"]): p["classification"] for p in points}
    assert classes == {("jax_privacy_gdp", "mu1.csv"): "conservative", ("jax_privacy_gdp", "mu3.csv"): "unsafe",
                       ("jax_privacy_clopper_pearson", "mu1.csv"): "conservative",
                       ("jax_privacy_clopper_pearson", "mu3.csv"): "conservative"}


def test_the_null_run_where_epsilon_is_zero(tmp_path, capsys):
    """q = 1, sigma = 1e6, one step: delta(0) = 4e-7 < 1e-5, so epsilon(1e-5) = 0 is proven exactly; scores of the
    same law for members and non-members (a post-processing of that mechanism) make epsilon_from_gdp claim ~4."""
    need("jax_privacy_gdp")
    import random

    rng = random.Random(7)
    rows = [f"{rng.gauss(1e-6, 1):.4f},1" for _ in range(500)] + [f"{rng.gauss(0, 1):.4f},0" for _ in range(500)]
    path = tmp_path / "null.csv"
    path.write_text("score,member\n" + "\n".join(rows) + "\n")
    code = main(["compare", "--tradeoff", "--against", "jax_privacy_gdp", "--q", "1", "--sigma", "1000000",
                 "--steps", "1", "--canaries", str(path)])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 1
    assert "proven epsilon in [0, 0], its epsilon lower bound above the upper end by" in text


def test_auditors_without_canaries_are_skipped(capsys):
    need("riskcal")
    assert main(["compare", "--tradeoff", "--against", "riskcal,jax_privacy_gdp", "--q", "1", "--sigma", "2",
                 "--steps", "4", "--alpha", "0.5"]) == 1
    captured = capsys.readouterr()
    assert "skipping jax_privacy_gdp: an auditor needs canary scores: --canaries FILE" in captured.err
    assert "jax_privacy" not in captured.out


@pytest.mark.parametrize("args, message", [
    (["--dp"], "--dp and --tradeoff are two comparisons"),
    (["--plot", "x.png"], "--plot is not available with --tradeoff"),
    (["--neighbours", "replace-one"], "--neighbours is not available with --tradeoff"),
    (["--q", "0.1"], "give all of --q, --sigma and --steps, or none"),
    (["--q", "2", "--sigma", "1", "--steps", "1"], "q=2 is outside (0, 1]"),
    (["--alpha", "0"], "alpha 0 must lie strictly between 0 and 1"),
    (["--alpha", "1.5"], "alpha 1.5 must lie strictly between 0 and 1"),
    (["--against", "riskcal", "--canaries", "c.csv"], "--canaries is for the auditors"),
    (["--against", "riskcal", "--delta", "1e-5"], "--delta and --confidence are for the auditors"),
    (["--canaries", "c.csv", "--confidence", "1.5"], "confidence 1.5 must lie strictly between 0 and 1"),
    (["--canaries", "c.csv", "--delta", "0"], "delta"),
    (["--canaries", "counts.csv"], "the auditors need the columns score,member"),
    (["--canaries", "missing.csv"], "missing.csv"),
    (["--against", "riskcall"], "unknown peer"),
])
def test_bad_input_exit_2_nothing_written(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.csv").write_text("score,member\n0.5,1\n0.1,0\n")
    (tmp_path / "counts.csv").write_text("threshold,tp,fp,tn,fn\n0.5,1,2,3,4\n")
    against = [] if "--against" in args else ["--against", "all"]
    assert main(["compare", "--tradeoff", *against, *args, "--json", "out.json"]) == 2
    err = capsys.readouterr().err
    assert message in err.splitlines()[-1] and err.splitlines()[-1].startswith("rdp-verify: error:")
    assert not (tmp_path / "out.json").exists()


def test_canaries_need_tradeoff(capsys):
    assert main(["compare", "--against", "all", "--canaries", "c.csv"]) == 2
    assert "need --tradeoff" in capsys.readouterr().err
