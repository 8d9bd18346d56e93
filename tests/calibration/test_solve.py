"""Calibration finds the grid's optimum: checked against closed forms computed independently, and (the
search logic, both ends of the range first) against a brute-force scan of the grid with a fake ε.

For q = 1 a run of T steps is the Gaussian mechanism with μ = √T/σ, whose exact ε(δ) is Balle & Wang
(2018, Theorem 8) (tests/curve_oracles.py), and whose RDP is Tα/(2σ²) (Mironov 2017, Proposition 7),
converted here by a dense scan over α of the Balle et al. (2020) formula in mpmath.
"""

from fractions import Fraction
from functools import cache

import mpmath as mp
import pytest
from curve_oracles import gaussian_epsilon
from hypothesis import given, settings
from hypothesis import strategies as st

from rdp_verify.calibration import solve
from rdp_verify.calibration.solve import Problem, calibrate, domain
from rdp_verify.foundations.decimals import decimal_text
from rdp_verify.foundations.inputs import InputError

DELTA = Fraction(1, 10**5)


def exact(sigma, steps):
    return gaussian_epsilon(DELTA, mp.sqrt(steps) / mp.mpf(sigma.numerator) * sigma.denominator)


@cache
def rdp_gaussian(sigma, steps):
    """The minimum over the orders α = 1 + k/1000 (k = 1, 8, 15, ... < 200000) of the converted RDP. The objective is
    smooth in α: every 10th order first, then every order within ±0.5 of the best of those (2 900 evaluations, not
    28 600; the minimum is the full scan's unless another order 0.5 away were lower, where the objective varies
    slowly)."""
    s2 = mp.mpf(sigma.numerator) ** 2 / sigma.denominator ** 2
    d = mp.mpf(DELTA.numerator) / DELTA.denominator

    def epsilon(k):
        a = 1 + mp.mpf(k) / 1000
        return steps * a / (2 * s2) + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)

    best = min(range(1, 200000, 70), key=epsilon)
    return min(epsilon(k) for k in range(max(1, best - 497), min(200000, best + 498), 7))


def test_smallest_sigma_matches_the_gaussian_closed_form():
    cal = calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10))
    assert cal.verdict == "calibrated"
    sigma, below = cal.answer.value, cal.neighbour.value
    assert below == sigma - Fraction(1, 100) * (1 if sigma < 10 else 10)
    assert exact(sigma, 10) <= 2 < exact(below, 10)
    assert Fraction(cal.answer.upper) <= 2 < Fraction(cal.neighbour.lower)


def test_largest_steps_matches_the_gaussian_closed_form():
    cal = calibrate(Problem("steps", Fraction(3), DELTA, q=Fraction(1), sigma=Fraction(5)))
    assert cal.verdict == "calibrated"
    t, above = int(cal.answer.value), int(cal.neighbour.value)
    assert exact(Fraction(5), t) <= 3 < exact(Fraction(5), above)


def test_rdp_accountant_matches_the_gaussian_rdp_closed_form():
    cal = calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10, accountant="rdp"))
    assert cal.verdict == "calibrated"
    assert rdp_gaussian(cal.answer.value, 10) <= 2 + 1e-6
    assert rdp_gaussian(cal.neighbour.value, 10) > 2 - 1e-6
    tight = calibrate(Problem("sigma", Fraction(2), DELTA, q=Fraction(1), steps=10))
    assert tight.answer.value < cal.answer.value  # the privacy curve needs less noise than any RDP bound


@pytest.mark.slow  # a full search of q up to 1
def test_largest_q_is_at_least_the_rdp_answer_and_stops_at_one():
    pld = calibrate(Problem("q", Fraction(1), DELTA, sigma=Fraction(2), steps=100))
    rdp = calibrate(Problem("q", Fraction(1), DELTA, sigma=Fraction(2), steps=100, accountant="rdp"))
    assert pld.verdict == rdp.verdict == "calibrated"
    assert pld.answer.value >= rdp.answer.value
    assert pld.neighbour.value > pld.answer.value and pld.neighbour.decision == "exceeds"
    whole = calibrate(Problem("q", Fraction(50), DELTA, sigma=Fraction(2), steps=10))
    assert whole.answer.value == 1 and whole.neighbour is None and whole.verdict == "calibrated"


def test_unreachable_target_is_refused_with_the_bracket_at_the_ranges_end():
    # RDP of q = 1, T = 100 at sigma = 1e4 (the rdp range's top): about sqrt(2 T log(1/delta))/sigma = 0.048
    problem = Problem("sigma", Fraction(1, 10**4), DELTA, q=Fraction(1), steps=100, accountant="rdp")
    seen = []
    with pytest.raises(InputError) as info:
        calibrate(problem, progress=seen.append)
    message = str(info.value)
    assert message.startswith("no sigma <= 1e4 reaches epsilon <= 1e-4 at delta = 1e-5 under the rdp accountant "
                              "(at sigma = 1e4, the best RDP bound on epsilon >= ")
    assert [e.value for e in seen] == [Fraction(1, 10), 10**4]  # both ends, nothing else
    lower = Fraction(message.rsplit(">= ", 1)[1].rstrip(")"))
    assert Fraction(1, 10**4) < lower and mp.mpf(lower.numerator) / lower.denominator <= rdp_gaussian(Fraction(10**4), 100)


def test_a_target_met_at_the_ranges_best_end_is_answered_at_once():
    # RDP at sigma = 0.1, q = 1, T = 1: min over alpha of 50 alpha + log(1e5)/(alpha - 1) + ... < 100
    seen = []
    cal = calibrate(Problem("sigma", Fraction(1000), DELTA, q=Fraction(1), steps=1, accountant="rdp"),
                    progress=seen.append)
    assert cal.answer.value == Fraction(1, 10) and cal.neighbour is None and cal.verdict == "calibrated"
    lower = Fraction(cal.answer.lower)
    assert len(seen) == 1 and mp.mpf(lower.numerator) / lower.denominator <= rdp_gaussian(Fraction(1, 10), 1)
    assert Fraction(cal.answer.upper) <= 1000


# -- the search logic, against a brute-force scan of the grid (a fake, exact, monotone epsilon) -----------------------

def fake_epsilon(monkeypatch, epsilon, straddle=None):
    """Make ``epsilon(value)`` the proven bracket (exact: lower = upper) everywhere, except ``straddle`` (a value
    whose bracket [0, 2E] never decides); return the list of values evaluated."""
    calls = []

    def epsilon_at(problem, value, tolerance):
        calls.append(value)
        if value == straddle:
            return Fraction(0), 2 * problem.target_epsilon, None
        exact = Fraction(decimal_text(epsilon(value), 9))  # short decimals: the printed bounds are exact
        return exact, exact, None

    monkeypatch.setattr(solve, "epsilon_at", epsilon_at)
    return calls


def grid_values(problem):
    return _grid_values(problem.range, problem.grid)


@cache
def _grid_values(bounds, grid):  # every grid value in the range (one list per range and grid: the scan is shared)
    low, high = bounds
    return [grid.value(n) for n in range(grid.index_at_or_above(low), grid.index_at_or_below(high) + 1)]


def meets(target):
    """A test of Fraction(decimal_text(e, 9)) <= target, the fake's printed bound against the target: rounding to 9
    significant digits moves a value by less than 1e-8 of itself, so only values that close to the target need it."""
    surely, never = target * (1 - Fraction(1, 10**8)), target * (1 + Fraction(1, 10**8))
    return lambda e: e <= surely or (e < never and Fraction(decimal_text(e, 9)) <= target)


def brute_force(problem, epsilon):
    test = meets(problem.target_epsilon)
    feasible = [v for v in grid_values(problem) if test(epsilon(v))]
    return (min if problem.unknown == "sigma" else max)(feasible)


PROBLEMS = {  # a fake epsilon of the right monotonicity for each unknown
    "sigma": (dict(q=Fraction(1, 100), steps=1000), lambda c: lambda sigma: c / sigma),
    "steps": (dict(q=Fraction(1, 100), sigma=Fraction(1)), lambda c: lambda steps: c * steps),
    "q": (dict(sigma=Fraction(1), steps=1000), lambda c: lambda q: c * q),
}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(PROBLEMS)), st.sampled_from(["pld", "rdp"]),
       st.fractions(min_value=Fraction(1, 10**3), max_value=Fraction(10**3)),
       st.fractions(min_value=Fraction(1, 10**3), max_value=Fraction(10**3)))
def test_the_search_finds_the_grids_optimum(unknown, accountant, c, target):
    given_values, family = PROBLEMS[unknown]
    epsilon = family(c)
    problem = Problem(unknown, target, DELTA, accountant=accountant, **given_values)
    with pytest.MonkeyPatch.context() as mp_:
        calls = fake_epsilon(mp_, epsilon)
        try:
            cal = calibrate(problem)
        except InputError as exc:
            assert str(exc).startswith(f"no {unknown} ")
            assert not any(map(meets(target), map(epsilon, grid_values(problem))))
            assert len(calls) == 2
            return
    assert cal.answer.value == brute_force(problem, epsilon)
    assert cal.answer.decision == "meets" and len(calls) == len(set(calls)) <= 40
    if cal.neighbour is None:  # the range's best end
        assert cal.answer.value == grid_values(problem)[0 if unknown == "sigma" else -1] and len(calls) == 1
    else:
        assert cal.neighbour.decision == "exceeds" and cal.verdict == "calibrated"


BEST, OTHER = {"sigma": Fraction(1, 20), "steps": 10**6, "q": 1}, {"sigma": 10**6, "steps": 1, "q": Fraction(1, 10**12)}


@pytest.mark.parametrize("unknown", sorted(PROBLEMS))
def test_a_target_met_at_the_best_end_is_answered_after_one_evaluation(monkeypatch, unknown):
    given_values, family = PROBLEMS[unknown]
    calls = fake_epsilon(monkeypatch, family(Fraction(1, 100)))
    cal = calibrate(Problem(unknown, Fraction(10**9), DELTA, **given_values))
    assert calls == [BEST[unknown]] and cal.answer.value == BEST[unknown]
    assert cal.neighbour is None and cal.verdict == "calibrated"


@pytest.mark.parametrize("unknown, target, message", [
    ("sigma", Fraction(1, 10**9), "no sigma <= 1e6 reaches epsilon <= 1e-9 at delta = 1e-5 (at sigma = 1e6, "
                                  "epsilon >= 1e-8)"),
    ("steps", Fraction(1, 10**9), "no steps >= 1 reaches epsilon <= 1e-9 at delta = 1e-5 (at steps = 1, "
                                  "epsilon >= 0.01)"),
    ("q", Fraction(1, 10**18), "no q >= 1e-12 reaches epsilon <= 1e-18 at delta = 1e-5 (at q = 1e-12, "
                               "epsilon >= 1e-14)"),
])
def test_a_target_the_other_end_misses_is_refused_after_two_evaluations(monkeypatch, unknown, target, message):
    given_values, family = PROBLEMS[unknown]
    calls = fake_epsilon(monkeypatch, family(Fraction(1, 100)))
    with pytest.raises(InputError) as info:
        calibrate(Problem(unknown, target, DELTA, **given_values))
    assert str(info.value) == message and calls == [BEST[unknown], OTHER[unknown]]


def test_an_undecided_far_end_is_refused_not_guessed(monkeypatch):
    calls = fake_epsilon(monkeypatch, lambda sigma: 1 / sigma, straddle=Fraction(10**6))
    with pytest.raises(InputError) as info:
        calibrate(Problem("sigma", Fraction(1, 10**3), DELTA, q=Fraction(1, 100), steps=1000))
    assert str(info.value) == ("no sigma <= 1e6 reaches epsilon <= 1e-3 at delta = 1e-5 provably: at sigma = 1e6, "
                               "epsilon in [0, 0.002] straddles the target at the finest tolerance 1e-4 "
                               "(a smaller tolerance may decide it)")
    assert calls[0] == Fraction(1, 20) and set(calls[1:]) == {10**6} and len(calls) == 1 + len(solve.LADDER) - 2


def test_an_undecided_neighbour_makes_the_answer_inconclusive(monkeypatch):
    # 1/sigma <= 1/2 from sigma = 2 on; the neighbour 1.99 straddles the target
    fake_epsilon(monkeypatch, lambda sigma: 1 / sigma, straddle=Fraction(199, 100))
    cal = calibrate(Problem("sigma", Fraction(1, 2), DELTA, q=Fraction(1, 100), steps=1000))
    assert cal.answer.value == 2 and cal.neighbour.value == Fraction(199, 100)
    assert cal.neighbour.decision == "undecided" and cal.verdict == "inconclusive"


def test_ranges_are_the_supported_domains():
    assert domain("sigma", "pld") == (Fraction(1, 20), 10**6)  # the run domain (privacy curves)
    assert domain("sigma", "rdp") == (Fraction(1, 10), 10**4)  # the RDP methods' domain
    assert domain("steps", "pld") == domain("steps", "rdp") == (1, 10**6)
    assert domain("q", "pld") == domain("q", "rdp") == (Fraction(1, 10**12), 1)


def test_a_target_on_the_boundary_is_undecided_not_guessed():
    # ε(σ = 1) for q = 1, T = 1 is a number no finite bracket reaches exactly: make it the target
    target = Fraction(mp.nstr(exact(Fraction(1), 1), 30))
    cal = calibrate(Problem("sigma", target, DELTA, q=Fraction(1), steps=1, tolerance=Fraction(1, 1000)))
    assert cal.verdict == "inconclusive"
    assert cal.neighbour.value == 1 and cal.neighbour.decision == "undecided"
    assert Fraction(cal.neighbour.lower) <= target <= Fraction(cal.neighbour.upper)


@pytest.mark.parametrize("kwargs, match", [
    ({"unknown": "sigma", "q": Fraction(1, 10), "sigma": Fraction(1), "steps": 10}, "not sigma"),
    ({"unknown": "alpha", "q": Fraction(1, 10), "steps": 10}, "unknown"),
    ({"unknown": "sigma", "q": Fraction(2), "steps": 10}, r"q=2 is outside \(0, 1\]"),
    ({"unknown": "sigma", "q": Fraction(1, 10), "steps": 0}, "steps=0 must be a whole number"),
    ({"unknown": "steps", "q": Fraction(1, 10), "sigma": Fraction(-1)}, "sigma=-1 must be positive"),
    ({"unknown": "steps", "q": Fraction(1, 10), "sigma": Fraction(1, 20), "accountant": "rdp"},
     r"sigma=0.05 is outside the supported range \[0.1, 1e4\]"),
    ({"unknown": "sigma", "q": Fraction(1, 10), "steps": 10, "delta": Fraction(1, 10**300)},
     "delta=1e-300 is below the supported minimum 1e-40"),
    ({"unknown": "sigma", "q": Fraction(1, 10), "steps": 10, "delta": Fraction(1)}, "delta=1 must lie strictly"),
    ({"unknown": "sigma", "q": Fraction(1, 10), "steps": 10, "target_epsilon": Fraction(0)},
     "target_epsilon=0 must be positive"),
    ({"unknown": "sigma", "q": Fraction(1, 10), "steps": 10, "tolerance": Fraction(1)}, "tolerance=1 must lie"),
    ({"unknown": "sigma", "q": 0.1, "steps": 10}, "q=0.1 must be an exact rational"),
    ({"unknown": "steps", "q": Fraction(1, 10), "sigma": Fraction(1), "digits": 9}, "digits"),
    ({"unknown": "steps", "q": Fraction(1, 10), "sigma": Fraction(1), "accountant": "prv"}, "accountant"),
])
def test_bad_problems_are_refused(kwargs, match):
    with pytest.raises(InputError, match=match):
        Problem(**{"target_epsilon": Fraction(1), "delta": DELTA, **kwargs})


def test_an_embedded_event_that_repeats_a_key_is_refused():
    # a calibration certificate records its event as JSON text, read through the shared reader (issue 39, item 2)
    from rdp_verify.calibration.solve import _tree
    from rdp_verify.foundations.inputs import InputError

    with pytest.raises(InputError, match="repeats the key 'noise_multiplier'"):
        _tree('{"name":"GaussianDpEvent","noise_multiplier":"1","noise_multiplier":"2"}')
