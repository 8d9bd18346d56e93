"""reference.check: passes a correct implementation, fails each kind of wrong one, readably."""

import math
from fractions import Fraction
from pathlib import Path

import pytest

from rdp_verify import reference

ROOT = Path(__file__).resolve().parents[2]

# The golden intervals keyed by the doubles an implementation receives.
TRUTH = {(float(s.q), float(s.sigma), float(s.alpha)): e for s, e in reference.golden_rows()}


def exact(q, sigma, alpha):
    """A correct implementation: the nearest double to the certified value."""
    return float(TRUTH[q, sigma, alpha].value)


def at(target, wrong):
    """``exact`` except at the row ``target`` = (q, sigma, alpha), where it returns ``wrong(ε)``."""
    def fn(q, sigma, alpha):
        eps = exact(q, sigma, alpha)
        return wrong(eps) if (q, sigma, alpha) == target else eps
    return fn


ROW = (0.5, 100.0, 64.5)  # Opacus returns −0.6987 here


def test_a_correct_implementation_passes():
    report = reference.check(exact)
    assert report.checked == len(TRUTH) == 1656
    assert report.counts == {"exact": 1656} and report.failures == ()
    assert "1656 golden rows: 1656 exact, 0 conservative, 0 unsafe, 0 non-finite" in str(report)


def test_packaged_rows_are_the_certificate_file():
    text = (ROOT / "certificates" / "golden-v1.csv").read_text()
    assert len(reference.golden_rows()) == sum(1 for line in text.splitlines() if line[:1].isdigit())


def test_under_reporting_fails_with_a_readable_message():
    with pytest.raises(AssertionError) as info:
        reference.check(at(ROW, lambda e: -0.6987))
    message = str(info.value)
    assert "disagrees with rdp_verify's certified epsilon at 1 of 1656 golden rows" in message
    assert "unsafe: q=0.5 sigma=100 alpha=64.5: fn -0.6987, certified [0.000807542045, 0.0008075420451]" in message


def test_tolerance_boundary():
    # 2e-9 relative low fails at rtol = 1e-9 and passes at rtol = 3e-9
    low = at(ROW, lambda e: e * (1 - 2e-9))
    with pytest.raises(AssertionError, match="1 unsafe"):
        reference.check(low, rtol=1e-9)
    assert reference.check(low, rtol=3e-9).counts["exact"] == 1656


def test_over_reporting_fails_unless_allowed():
    high = at(ROW, lambda e: 2 * e)
    with pytest.raises(AssertionError, match="1 conservative"):
        reference.check(high)
    assert reference.check(high, allow_conservative=True).counts["conservative"] == 1


def test_inf_is_a_vacuous_bound_nan_and_exceptions_always_fail():
    infinite = at(ROW, lambda e: math.inf)
    with pytest.raises(AssertionError, match="1 non-finite"):
        reference.check(infinite)
    assert reference.check(infinite, allow_conservative=True).counts["non-finite"] == 1
    for wrong in (lambda e: math.nan, lambda e: -math.inf, lambda e: 1 / 0):
        with pytest.raises(AssertionError, match="1 non-finite"):
            reference.check(at(ROW, wrong), allow_conservative=True)
    with pytest.raises(AssertionError, match="ZeroDivisionError: division by zero"):
        reference.check(at(ROW, lambda e: 1 / 0))


@pytest.mark.parametrize("wrong", [lambda e: repr(e), lambda e: True, lambda e: None, lambda e: [e]])
def test_a_value_that_is_not_a_number_fails(wrong):
    # issue 27: a function returning the string "0.1" was graded as the number 0.1 (float("0.1"))
    with pytest.raises(AssertionError, match="TypeError: returned .* not a real number"):
        reference.check(at(ROW, wrong), allow_conservative=True)


def test_numpy_scalars_are_numbers():
    import numpy as np
    assert reference.check(lambda q, s, a: np.float64(exact(q, s, a))).counts["exact"] > 0


def test_select_restricts_rows():
    report = reference.check(at(ROW, lambda e: -1.0), select=lambda p: p.integer_order)
    assert report.checked == 792  # 9 q × 8 σ × 11 integer orders
    report = reference.check(exact, select=lambda p: p.q == Fraction(1, 2) and p.alpha < 2)
    assert report.checked == 8 * 5


def test_bad_arguments():
    with pytest.raises(ValueError, match="kept no golden rows"):
        reference.check(exact, select=lambda p: False)
    with pytest.raises(ValueError, match="non-negative"):
        reference.check(exact, rtol=-1e-9)
    with pytest.raises(ValueError, match="non-negative"):
        reference.check(exact, atol=math.nan)


# ---- check_dp: the golden (epsilon, delta) rows

from rdp_verify.reference import check_dp, golden_dp_rows  # noqa: E402

SHORT = (lambda t: t.phase.steps <= 100)


def _lookup(pick):
    rows = {(float(t.phase.q), float(t.phase.sigma), t.phase.steps, float(t.delta)): t for t in golden_dp_rows()
            if t.phase.default}
    return lambda q, sigma, steps, delta: pick(rows[q, sigma, steps, delta])


def test_check_dp_passes_values_inside_the_brackets():
    report = check_dp(_lookup(lambda t: float((t.lower + t.upper) / 2)), select=SHORT)
    assert report.checked == sum(1 for t in golden_dp_rows() if SHORT(t) and t.phase.default)
    assert report.counts == {"exact": report.checked}


def test_check_dp_checks_replace_one_rows_when_asked():
    rows = {(float(t.phase.q), float(t.phase.sigma), t.phase.steps, float(t.delta)): t for t in golden_dp_rows()
            if t.phase.sampler == "poisson" and t.phase.neighbours == "replace-one"}
    report = check_dp(lambda q, s, n, d: float((rows[q, s, n, d].lower + rows[q, s, n, d].upper) / 2),
                      neighbours="replace-one", select=SHORT)
    assert report.checked == sum(1 for t in rows.values() if SHORT(t)) > 0


def test_check_dp_fails_an_under_report_and_an_inf():
    with pytest.raises(AssertionError, match="1 unsafe"):
        check_dp(_lookup(lambda t: float(t.lower) * (0.999 if t.phase.steps == 10 and t.delta < 1e-15 else 1.001)),
                 select=SHORT)
    with pytest.raises(AssertionError, match="failed"):
        check_dp(_lookup(lambda t: math.inf), select=SHORT)


def test_check_dp_fails_a_value_that_is_not_a_number():
    with pytest.raises(AssertionError, match="not a real number"):
        check_dp(_lookup(lambda t: str(float(t.upper))), select=SHORT)


def test_check_dp_conservative_values_fail_unless_allowed():
    over = _lookup(lambda t: float(t.upper) * 1.01)
    with pytest.raises(AssertionError, match="conservative"):
        check_dp(over, select=SHORT)
    check_dp(over, select=SHORT, allow_conservative=True)
    check_dp(over, select=SHORT, rtol=0.02)
    with pytest.raises(ValueError, match="no golden"):
        check_dp(over, select=lambda t: False)
