"""Example: a third-party test suite checking dp_accounting's PLD accountant against rdp_verify's
golden (ε, δ) vectors.

Copy this pattern into your own tests, with your accountant's ε of a whole run in place of ``epsilon``:

    pip install 'rdp_verify[peers]'
    python -m pytest examples/test_dp_accounting_pld_golden.py

``reference.check_dp`` evaluates ``epsilon(q, sigma, steps, delta)`` on every golden row (a run of
Poisson-subsampled Gaussian steps with a proven bracket of its ε(δ)) and raises AssertionError,
listing the worst rows, when a value lies below the bracket (a false privacy claim), is inf, NaN or
raised, or lies above it by more than ``rtol`` (unless over-reports are allowed). dp_accounting 0.6's
PLD accountant is within 0.1 % where it is finite except on the longest run (10⁶ steps: 6 % over), and
returns inf at δ = 1e-20: the last test records those known defects as an expected failure, so it
turns into an error once they are fixed. On one row, the Gaussian mechanism (q = 1, σ = 10, 1000
steps) at δ = 1e-10, it lands within 2e-6 relative of the bracket, on either side depending on the
NumPy/SciPy build (1.7e-6 below on one install, 3e-10 above on another; below, δ at its ε is up to
1.00008e-10 by the Balle–Wang closed form: float64 FFT round-off and the tail mass its
self-composition drops). The first two tests leave that row out; the third bounds the distance.
"""

from fractions import Fraction
from functools import lru_cache

import pytest

from rdp_verify import reference

dp_accounting = pytest.importorskip("dp_accounting")


@lru_cache(maxsize=None)
def accountant_of(q: float, sigma: float, steps: int):
    """dp_accounting's PLD accountant (default settings) after `steps` Poisson-subsampled Gaussian steps.

    Composed once per run: each run has golden rows at three deltas, and the tests below share them.
    """
    accountant = dp_accounting.pld.PLDAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    return accountant


def epsilon(q: float, sigma: float, steps: int, delta: float) -> float:
    """The accountant's epsilon at `delta` (get_epsilon reads the composed PLD, it does not change it)."""
    return accountant_of(q, sigma, steps).get_epsilon(delta)


def round_off_row(t) -> bool:
    """The row where dp_accounting's float64 round-off puts its ε just beside the proven bracket."""
    return t.phase.q == 1 and t.phase.sigma == 10 and t.delta == Fraction(1, 10**10)


def test_never_under_reports_where_finite():
    print(reference.check_dp(epsilon, allow_conservative=True,
                             select=lambda t: t.delta > 1e-15 and not round_off_row(t)))


def test_tight_on_runs_up_to_1e5_steps():
    reference.check_dp(epsilon, rtol=1e-3,
                       select=lambda t: t.delta > 1e-15 and t.phase.steps <= 10**5 and not round_off_row(t))


def test_the_round_off_row_is_within_1e_5_relative():
    (row,) = [t for t in reference.golden_dp_rows() if round_off_row(t)]
    value = epsilon(float(row.phase.q), float(row.phase.sigma), row.phase.steps, float(row.delta))
    assert row.lower * (1 - Fraction(1, 10**5)) <= Fraction(value) <= row.upper * (1 + Fraction(1, 10**5))


@pytest.mark.xfail(raises=AssertionError, strict=True,
                   reason="dp_accounting 0.6's PLD returns inf at delta = 1e-20 (its PMF truncation at "
                          "log_mass_truncation_bound = -50) and over-reports by 6 % on the 10^6-step run")
def test_every_row_is_tight():
    reference.check_dp(epsilon, rtol=1e-3)
