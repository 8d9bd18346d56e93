import json
from fractions import Fraction

import mpmath
import pytest
from oracles import mp

from rdp_verify.certificates.theorem11 import theorem11_report
from rdp_verify.cli import main
from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import Bounded
from rdp_verify.methods import quadrature
from rdp_verify.methods.crosscheck import method_epsilon
from rdp_verify.tightness import figure1


def margins_mpmath(q, sigma, alpha):
    """Margins of (4) and (5), transcribed from the paper (Theorem 11) independently in mpmath."""
    q, s = mp(Fraction(q)), mp(Fraction(sigma))
    L = mpmath.log(1 + 1 / (q * (alpha - 1)))
    m4 = s**2 * L / 2 - 2 * mpmath.log(s) - alpha
    m5 = (s**2 * L**2 / 2 - mpmath.log(5) - 2 * mpmath.log(s)) / (L + mpmath.log(q * alpha) + 1 / (2 * s**2)) - alpha
    return m4, m5


def test_bisection_brackets_a_known_root():
    inside = lambda alphas: [a * a <= 7 for a in alphas]  # noqa: E731  the set (1, √7]
    b = figure1.largest_in_set(inside, figure1.log_grid(Fraction(1, 100), Fraction(100), 5))
    assert b.lo * b.lo <= 7 < b.hi * b.hi
    assert (b.hi - b.lo) / b.lo <= figure1.REL_WIDTH
    assert (b.sign_changes, b.undecided) == (1, 0)
    assert b.evaluations < 40


def test_grid_scan_reports_a_set_that_is_not_an_interval():
    inside = lambda alphas: [a <= 2 or 5 <= a <= 10 for a in alphas]  # noqa: E731
    b = figure1.largest_in_set(inside, figure1.log_grid(Fraction(1, 10), Fraction(100), 10))
    assert b.lo <= 10 < b.hi and b.sign_changes == 3
    assert "3 sign changes" in figure1._grid_verdict(b)


def test_undecided_points_stop_bisection_but_keep_a_valid_bracket():
    inside = lambda alphas: [True if a < 3 else None if a < 4 else False for a in alphas]  # noqa: E731
    b = figure1.largest_in_set(inside, figure1.log_grid(Fraction(1), Fraction(10), 10))
    assert b.lo < 3 and b.hi >= 4 and b.undecided >= 1
    assert (b.hi - b.lo) / b.lo > figure1.REL_WIDTH  # stopped early, bracket still proven


def test_log_grid_is_exact_short_decimals():
    grid = figure1.log_grid(Fraction(1, 10**9), Fraction(10**6) - 1, 40)
    assert grid[0] == 1 + Fraction(1, 10**9) and grid[-1] == 10**6
    assert all(b / a > 1 for a, b in zip(grid, grid[1:]))
    steps = [(b - 1) / (a - 1) for a, b in zip(grid, grid[1:])]
    assert 10 ** (0.5 / 40) < min(steps) and max(steps) < 10 ** (1.5 / 40)
    assert all(len(str((a - 1).numerator).rstrip("0")) <= 3 for a in grid[1:-1])


@pytest.fixture(scope="module")
def point():
    return figure1.left_point((Fraction(4), Fraction(1, 1000), 20))


@pytest.mark.parametrize("which", [0, 1])
def test_condition_brackets_against_independent_transcription(point, which):
    key = f"condition_{4 + which}"
    lo, hi = Fraction(point[key]["alpha_lo"]), Fraction(point[key]["alpha_hi"])
    with mpmath.workdps(40):
        assert margins_mpmath("0.001", "4", mp(lo))[which] >= 0
        assert margins_mpmath("0.001", "4", mp(hi))[which] < 0
        root = mpmath.findroot(lambda a: margins_mpmath("0.001", "4", a)[which], (mp(lo), mp(hi)), solver="anderson")
        assert mp(lo) <= root <= mp(hi)
    assert (hi - lo) / lo <= figure1.REL_WIDTH
    assert point[key]["grid"]["sign_changes"] == 1


def test_exact_bracket_against_quadrature(point):
    # The bracket's ends are re-decided with the mpmath quadrature method (independent of Arb).
    lo, hi = Fraction(point["exact"]["alpha_lo"]), Fraction(point["exact"]["alpha_hi"])
    for alpha, below in ((lo, True), (hi, False)):
        sgm = SGM(Fraction(1, 1000), Fraction(4), alpha)
        eps = method_epsilon(quadrature.compute(sgm, 30), alpha)
        bound = 2 * sgm.q**2 * alpha / sgm.sigma**2
        assert (eps.upper <= bound) if below else (eps.lower > bound)
        assert Fraction(point["exact"]["at_lo" if below else "at_hi"]["bound"]) == bound
    assert (hi - lo) / lo <= figure1.REL_WIDTH


def test_theorem11_conditions_never_exceed_the_exact_largest_alpha(point):
    # Theorem 11 => ε_α ≤ 2q²α/σ² for every α up to min(α4*, α5*).
    assert point["theorem11_applies"] and point["consistent_with_theorem11"]
    ratio = point["exact_over_minimum"]
    assert 1 < Fraction(ratio["lower"]) <= Fraction(ratio["upper"])
    assert Fraction(point["minimum"]["alpha_hi"]) == min(Fraction(point["condition_4"]["alpha_hi"]),
                                                         Fraction(point["condition_5"]["alpha_hi"]))


def test_right_curve_flags_match_theorem11_report():
    curve = figure1.right_curve((Fraction(1, 100), Fraction(4), 20))
    flags = []
    for p in curve["points"][::5]:
        sgm = SGM(Fraction(1, 100), Fraction(4), Fraction(p["alpha"]))
        unused = Bounded(Fraction(1), Fraction(0))  # only the report's condition fields are read
        assert p["conditions_hold"] == theorem11_report(sgm, unused)["all_hold"]
        assert Fraction(p["epsilon"]["lower"]) <= Fraction(p["epsilon"]["upper"])
        flags.append(p["conditions_hold"])
    assert True in flags and False in flags


def test_cli_writes_png_svg_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(figure1, "Q_GRID", (Fraction(1, 1000), Fraction(1, 10)))
    monkeypatch.setattr(figure1, "RIGHT_PANEL", ((Fraction(1, 100), Fraction(4)),))
    # both runs below draw the same figure: computed once, by the first (its numbers are checked here and by the tests
    # above; the second run checks the stdout writer against the file's): 1.5 CPU-s less
    computed, shared = figure1.figure1_data, {}
    monkeypatch.setattr(figure1, "figure1_data", lambda **kw: shared[kw["dps"]] if kw["dps"] in shared else
                        shared.setdefault(kw["dps"], computed(**kw)))
    out = tmp_path / "new" / "dir"
    assert main(["figure1", "--out", str(out), "--json"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["figure1.json", "figure1.png", "figure1.svg"]
    assert (out / "figure1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "figure1.svg").read_text().lstrip().startswith("<?xml")
    data = json.loads((out / "figure1.json").read_text())
    assert [(p["sigma"], p["q"]) for p in data["left"]] == [("4", "0.001"), ("4", "0.1"), ("10", "0.001"), ("10", "0.1")]
    right = data["right"][0]
    assert Fraction(right["theorem11_largest_alpha"]["alpha_hi"]) < Fraction(right["exact_largest_alpha"]["alpha_lo"])
    capsys.readouterr()
    assert main(["figure1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["left"] == data["left"]


@pytest.mark.parametrize("args", [[], ["--json", "--dps", "x"], ["--json", "--jobs", "0"], ["--out", "FILE"]])
def test_cli_bad_input_exits_2_without_files(tmp_path, capsys, args):
    (tmp_path / "FILE").write_text("not a directory")
    args = [str(tmp_path / "FILE") if a == "FILE" else a for a in args]
    assert main(["figure1", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("rdp-verify: error:")
    assert [p.name for p in tmp_path.iterdir()] == ["FILE"]
