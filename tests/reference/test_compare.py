"""Classification against certified intervals; the listed peer defects are found unaided."""

import json
import math
from fractions import Fraction

import pytest

from rdp_verify.cli import compare as compare_cli
from rdp_verify.cli import main
from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import Bounded
from rdp_verify.methods.rigorous import epsilon_bounds
from rdp_verify.reference import compare, peers
from rdp_verify.reference.compare import DEFAULT_GRID, classify, tolerance
from rdp_verify.reference.grid import Grid


def peer(name):
    try:
        return peers.load(name)
    except peers.PeerUnavailable as exc:
        pytest.skip(str(exc))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- classify: the rule itself, on a synthetic interval --------------------------------

EPS = Bounded(Fraction(1, 1000), Fraction(1, 10**20))  # ε_α ∈ 0.001 ± 1e-20
ALPHA = Fraction(3)
TAU = Fraction(1, 10**9) * EPS.upper + Fraction(1, 10**13) * 4 / 2  # rtol·|hi| + atol·(α + 1)/(α − 1)


def test_tolerance_formula():
    assert tolerance(EPS, ALPHA) == TAU


@pytest.mark.parametrize("value, expected", [
    (float(EPS.value), "exact"),
    (float(EPS.upper + TAU * Fraction(9, 10)), "exact"),
    (float(EPS.upper + TAU * 2), "conservative"),
    (float(EPS.lower - TAU * Fraction(9, 10)), "exact"),
    (float(EPS.lower - TAU * 2), "unsafe"),
    (-0.5, "unsafe"),
    (0.0, "unsafe"),
    (math.nan, "non-finite"),
    (math.inf, "non-finite"),
    (-math.inf, "non-finite"),
    (None, "non-finite"),  # the peer raised
])
def test_classify(value, expected):
    assert classify(value, EPS, ALPHA) == expected


TINY = Bounded(Fraction(88, 10**13), Fraction(1, 10**30))  # ε_α ≈ 8.8e-12 < τ ≈ 2e-11 at α = 1.01


@pytest.mark.parametrize("value, expected", [
    (8.8e-12 * 0.6, "exact"),  # within τ and not below half: float rounding of log A near 1.0
    (8.8e-12 * 0.4, "unsafe"),  # within τ, but less than half the certified lower end
    (0.0, "unsafe"),
    (-1e-12, "unsafe"),
])
def test_absolute_tolerance_never_excuses_half_or_a_sign(value, expected):
    alpha = Fraction(101, 100)
    assert tolerance(TINY, alpha) > TINY.upper  # the regime where τ alone would pass all of these
    assert classify(value, TINY, alpha) == expected


def test_call_peer_turns_exceptions_into_findings():
    def broken(q, sigma, alpha):
        raise ValueError("The result of subtraction must be non-negative.")
    value, error = compare.call_peer(broken, SGM.parse("0.1", "1", "2"))
    assert value is None and error == "ValueError: The result of subtraction must be non-negative."


# -- a correct peer is exact ----------------------------------------------------------

def test_a_correct_peer_is_exact_although_it_sees_doubles():
    # our own value, computed at the double inputs the peer receives (0.1 is not 1/10):
    # the 1e-17 input change is far inside the tolerance
    def ours(q, sigma, alpha):
        return float(epsilon_bounds(SGM(Fraction(q), Fraction(sigma), Fraction(alpha)), 20).value)
    grid = Grid.parse(["0.001", "0.1", "0.5"], ["0.7", "3"], ["1.1", "2.5", "7"])
    for sgm in grid.points():
        value, _ = compare.call_peer(ours, sgm)
        assert classify(value, epsilon_bounds(sgm, compare.DPS), sgm.alpha) == "exact"


def test_dp_accounting_integer_orders_are_exact():
    peer("dp_accounting_rdp")
    grid = Grid.parse(["1e-4", "0.01", "0.5"], ["0.5", "2.5", "100"], ["2", "17", "256", "2048"])
    points = compare.compare(["dp_accounting_rdp"], grid)
    assert {p.classification for p in points} == {"exact"} and len(points) == 36


# -- the defects listed in the issue, classified without being told where they are -----

def classes(name, q, sigma, alphas):
    peer(name)
    points = compare.compare([name], Grid.parse([q], [sigma], alphas))
    return {p.sgm.alpha: p for p in points}


def test_opacus_fractional_series_stops_early():
    # q = 0.4, σ = 12, α ∈ [58.5, 59.5]: from 58.8 on Opacus returns about −0.52
    alphas = [f"{x / 10:g}" for x in range(585, 596)]
    got = classes("opacus_rdp", "0.4", "12", alphas)
    unsafe = {a for a, p in got.items() if p.classification == "unsafe"}
    assert unsafe == {Fraction(a) for a in alphas} - {Fraction(a) for a in ("58.5", "58.6", "58.7", "59")}
    assert all(got[a].value < 0 for a in unsafe)
    assert {got[Fraction(a)].classification for a in ("58.5", "58.6", "58.7", "59")} == {"exact"}


def test_opacus_negative_rdp():
    p = classes("opacus_rdp", "0.5", "100", ["64.5"])[Fraction("64.5")]
    assert p.classification == "unsafe" and p.value < 0


def test_opacus_nan_past_1030():
    got = classes("opacus_rdp", "0.01", "1", ["1029", "1030", "1536", "2048"])
    assert [got[Fraction(a)].classification for a in ("1029", "1030", "1536", "2048")] == \
        ["exact", "non-finite", "non-finite", "non-finite"]


def test_dp_accounting_fractional_orders_over_report():
    p = classes("dp_accounting_rdp", "0.01", "2.5", ["1.5"])[Fraction("1.5")]
    assert p.classification == "conservative" and 0.02 < p.relative_error < 0.04  # ≈ 3 % high
    p = classes("dp_accounting_rdp", "0.1", "100", ["1.01"])[Fraction("1.01")]
    assert p.classification == "conservative" and 700 < p.value / float(p.epsilon.value) < 900  # ≈ 800×


def test_dp_accounting_returns_inf():
    got = classes("dp_accounting_rdp", "0.1", "1", ["1.1", "1.2", "1.3", "1.4", "1.5"])
    assert {p.classification for p in got.values()} == {"non-finite"}
    assert {p.value for p in got.values()} == {math.inf}


def test_default_grid_is_regular_and_contains_the_listed_defects():
    assert len(DEFAULT_GRID.points()) == 5 * 8 * 212
    halves = [a for a in DEFAULT_GRID.alpha if 2 <= a <= 100]
    assert halves == [Fraction(k, 2) for k in range(4, 201)]
    points = set(DEFAULT_GRID.points())
    listed = [("0.5", "100", "64.5"), ("0.01", "2.5", "1.5"), ("0.1", "100", "1.01"),
              ("0.1", "1", "1.1"), ("0.1", "1", "1.5"), ("0.01", "1", "2048")]
    assert all(SGM.parse(*p) in points for p in listed)


# -- summary, JSON, plot, CLI ----------------------------------------------------------

def test_list_text_compresses_runs():
    vals = [Fraction(x) for x in ("1.01", "1.1", "1.2", "1.3", "1.4", "2.5", "3.5", "2048")]
    assert compare._list_text(vals) == "1.01, 1.1, 1.2, …, 1.4, 2.5, 3.5, 2048"


def test_cli_report_json_and_plot(capsys, tmp_path):
    peer("opacus_rdp")
    out_json, out_png = tmp_path / "points.json", tmp_path / "err.png"
    code, out, err = run(capsys, "compare", "--against", "opacus_rdp", "--q", "0.5", "--sigma", "100",
                         "--alpha", "2,64.5,2048", "--json", str(out_json), "--plot", str(out_png))
    assert code == 1  # an unsafe point
    assert out.splitlines()[3].split() == ["peer", "exact", "conservative", "unsafe", "non-finite"]
    assert out.splitlines()[4].split() == ["opacus_rdp", "1", "0", "1", "1"]
    assert "opacus_rdp: unsafe at 1 point\n  alpha ∈ {64.5} at every (q, sigma) of the grid" in out
    points = json.loads(out_json.read_text())
    assert [p["classification"] for p in points] == ["exact", "unsafe", "non-finite"]
    assert set(points[0]) == {"peer", "q", "sigma", "alpha", "peer_value", "peer_error", "epsilon_lower",
                              "epsilon_upper", "relative_error", "classification"}
    assert points[2]["peer_value"] == "nan" and points[2]["relative_error"] is None
    assert Fraction(points[1]["epsilon_lower"]) <= Fraction(points[1]["epsilon_upper"])
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_json_to_stdout_with_jobs(capsys):
    peer("dp_accounting_rdp")
    code, out, err = run(capsys, "compare", "--against", "dp_accounting_rdp", "--q", "0.01", "--sigma", "2.5",
                         "--alpha", "1.5,2", "--json", "-", "--jobs", "2")
    assert code == 0  # conservative alone is not a failure
    assert [p["classification"] for p in json.loads(out)] == ["conservative", "exact"]
    assert "dp_accounting_rdp: conservative at 1 point" in err


def test_cli_skips_a_missing_peer(capsys, monkeypatch):
    def unavailable(name):
        raise peers.PeerUnavailable(f"{name} is not installed: pip install it")
    monkeypatch.setattr(compare_cli, "load", unavailable)
    code, out, err = run(capsys, "compare", "--against", "opacus_rdp", "--q", "0.1", "--sigma", "1", "--alpha", "2")
    assert code == 2 and out == ""
    assert "rdp-verify: skipping opacus_rdp: opacus_rdp is not installed: pip install it" in err
    assert "rdp-verify: error: no requested peer is installed" in err


@pytest.mark.parametrize("args, message", [
    (["--against", "tf_privacy"], "--against 'tf_privacy': unknown peer"),
    (["--against", "opacus_rdp", "--q", "2"], "q=2 is outside (0, 1]"),
    (["--against", "opacus_rdp", "--alpha", "2,2"], "repeats an order"),
    (["--against", "opacus_rdp", "--jobs", "0"], "--jobs 0"),
    (["--against", "opacus_rdp", "--plot", "err.txt"], "must end in .png, .svg or .pdf"),
    (["--against", "opacus_rdp", "--json", "no/such/dir/points.json"], "directory no/such/dir does not exist"),
])
def test_cli_bad_input(capsys, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "compare", *args)
    assert code == 2 and message in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
