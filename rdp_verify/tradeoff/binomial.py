"""Binomial tails, proven, fast: the one-sided Clopper–Pearson bounds of the canary audits.

For k events in n independent trials of probability p, the lower tail F(p) = P(Binomial(n, p) ≤ k) falls
strictly from 1 to 0 as p runs over [0, 1] (k < n). The exact one-sided **Clopper–Pearson** upper bound at
level ℓ (Clopper and Pearson 1934) is the q with F(q) = ℓ, equivalently I_q(k + 1, n − k) = 1 − ℓ, the
regularized incomplete beta function; for k = n every p fits and the bound is 1. q grows with k (F grows with
k at every p), the monotonicity the screened canary audit stands on (:mod:`rdp_verify.tradeoff.canaries`).

**Proven comparisons** (:func:`cdf_exceeds`): whether F(p) > ℓ at a rational p, decided from an enclosure of
F(p) (:func:`cdf_enclosure`, about 0.1 ms at n = 10^6):

* F(p) = pmf(k)·S with pmf(k) = C(n, k) p^k (1 − p)^(n−k) enclosed in Arb (log-gamma of the integers, logs
  of p and 1 − p) and S = Σ_{t=0}^{k} Π_{s<t} r_{k−s}, r_j = pmf(j − 1)/pmf(j) = j(1 − p)/((n − j + 1)p), summed
  in float64 **with a proven error bound**: each ratio is three correctly rounded operations on the
  correctly rounded p and 1 − p (relative error ≤ 6u, u = 2⁻⁵³), the t-th term a product of t ratios
  (≤ 7tu), and a sum of T + 1 positive terms in any order adds ≤ Tu (Higham 2002, Section 4.2), so the
  float sum Ŝ of the first T + 1 terms lies within a relative (16T + 16)u of the exact one (the factor 2
  covers the second-order terms while Tu ≪ 1);
* r_j grows with j, so once r_k < 1 the terms after the T-th are at most term_T·ρ/(1 − ρ), ρ = r_{k−T}
  (a geometric series); the sum stops when a term falls below 10⁻²⁵ (S ≥ 1).

When that enclosure cannot decide (F(p) within about 10⁻¹¹ relative of ℓ, or p at or below the mean so
that r_k ≥ 1), Arb's incomplete beta decides (python-flint ``beta_lower``, at 128 bits and then higher;
milliseconds at n = 10^6). Nothing is decided in floating point alone.

**Bounds.** :func:`quantile_estimate` finds q in float64 (Newton's method on log F, safeguarded by
bisection; log pmf by Loader's saddle-point form, "Fast and accurate computation of binomial
probabilities", 2000, accurate to about 1e-15 relative; not a proof). :func:`clopper_pearson_upper` moves
it up by a relative 1e-9, rounds up to 12 significant digits and proves F ≤ ℓ there (the pad grows tenfold
until proven): a rational at or above q, typically within 1e-9 of it (pessimistic for the attack).
:func:`clopper_pearson_lower` moves it down and proves F > ℓ: a rational below q, hence below the
Clopper–Pearson bound of every count k' ≥ k out of the same n.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, ctx

from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError
from ..foundations.results import to_arb

__all__ = ["cdf_enclosure", "cdf_exceeds", "quantile_estimate", "clopper_pearson_upper", "clopper_pearson_lower",
           "log_pmf"]

_U = 2.0**-53
_LN_2PI = math.log(2 * math.pi)
_TINY = 1e-25  # a term below this (the sum is at least 1) ends the float sum
_PREC = 128


def _check(k: int, n: int) -> None:
    if not (0 <= k <= n and n > 0):
        raise InputError(f"{k} events of {n} trials")


# -- float64 (estimates) --------------------------------------------------------------------------------

def _stirlerr(n: float) -> float:
    """log(n!) − log(√(2πn)·(n/e)^n) (Loader 2000)."""
    if n <= 15:
        return math.lgamma(n + 1) - (n + 0.5) * math.log(n) + n - _LN_2PI / 2
    nn = n * n
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _bd0(x: float, m: float) -> float:
    """x·log(x/m) + m − x without cancellation (Loader 2000)."""
    if abs(x - m) < 0.1 * (x + m):
        v = (x - m) / (x + m)
        s = (x - m) * v
        ej = 2 * x * v
        v2 = v * v
        for j in range(1, 1000):
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
    return x * math.log(x / m) + m - x


def log_pmf(k: int, n: int, p: float) -> float:
    """log P(Binomial(n, p) = k) in float64 (Loader's saddle-point form; an estimate, not a proof)."""
    q = 1.0 - p
    if k == 0:
        return n * math.log1p(-p)
    if k == n:
        return n * math.log(p)
    lc = _stirlerr(n) - _stirlerr(k) - _stirlerr(n - k) - _bd0(k, n * p) - _bd0(n - k, n * q)
    return lc - 0.5 * (_LN_2PI + math.log(k) + math.log1p(-k / n))


def _tail_sum(k: int, n: int, pf: float, qf: float) -> tuple[float, int, float, float] | None:
    """Ŝ = 1 + Σ_{t=1}^{T} Π_{s<t} r_{k−s} in float64, with T, the last term and ρ = r_{k−T} (0 when the sum is
    complete); None when r_k ≥ 1 (p at or below the mean: the terms do not fall)."""
    if k == 0:
        return 1.0, 0, 1.0, 0.0
    if k * qf >= (n - k + 1) * pf:
        return None
    total, last, done, chunk = 1.0, 1.0, 0, 256
    while done < k:
        j = np.arange(k - done, max(k - done - chunk, 0), -1, dtype=np.float64)
        terms = last * np.cumprod((j * qf) / ((n - j + 1) * pf))
        small = np.flatnonzero(terms < _TINY)
        if small.size:
            t = int(small[0]) + 1  # terms[:t] kept: the last of them is below _TINY
            total += float(np.sum(terms[:t]))
            done += t
            last = float(terms[t - 1])
            jn = k - done  # the next ratio's index
            rho = (jn * qf) / ((n - jn + 1) * pf) if jn >= 1 else 0.0
            return total, done, last, rho
        total += float(np.sum(terms))
        done += terms.size
        last = float(terms[-1])
        chunk *= 4
    return total, done, last, 0.0


def _log_cdf(k: int, n: int, p: float) -> tuple[float, float]:
    """(log F(p), S) in float64 (estimates); (+inf, +inf) at or below the mean, where the search never goes."""
    summed = _tail_sum(k, n, p, 1.0 - p)
    if summed is None:
        return math.inf, math.inf
    return log_pmf(k, n, p) + math.log(summed[0]), summed[0]


def _log_level(level: Fraction) -> float:
    return math.log(level.numerator) - math.log(level.denominator)


def _normal_upper_quantile(log_level: float) -> float:
    """z with P(N(0, 1) > z) = e^log_level, by Newton's method on math.erfc (float64)."""
    z = math.sqrt(max(-2 * log_level - math.log(max(-2 * log_level, 1.0)) - _LN_2PI, 0.0)) + 0.5
    for _ in range(60):
        tail = 0.5 * math.erfc(z / math.sqrt(2))
        if tail <= 0:
            break
        step = (math.log(tail) - log_level) * tail / (math.exp(-z * z / 2) / math.sqrt(2 * math.pi))
        z += step
        if abs(step) < 1e-14 * max(z, 1):
            break
    return z


def quantile_estimate(k: int, n: int, level: Fraction) -> float:
    """The Clopper–Pearson upper bound q (F(q) = level) in float64, typically within 1e-14 relative
    (Newton's method on log F from the Wilson score bound, safeguarded by bisection; not a proof)."""
    _check(k, n)
    if k == n:
        return 1.0
    target = _log_level(Fraction(level))
    if k == 0:
        return -math.expm1(target / n)
    z = _normal_upper_quantile(max(target, -700.0))
    kc = k + 0.5
    p = (kc + z * z / 2 + z * math.sqrt(kc * (n - kc) / n + z * z / 4)) / (n + z * z)
    lo, hi = k / n, 1.0
    p = min(max(p, lo + (hi - lo) * 1e-3), hi - (hi - lo) * 1e-3)
    for _ in range(200):
        value, s = _log_cdf(k, n, p)
        g = value - target
        if g > 0:
            lo = p
        else:
            hi = p
        step = g * (1 - p) * s / (n - k)  # Newton: d log F/dp = −(n − k)/((1 − p)·S)
        if abs(step) <= 1e-14 * p or hi - lo <= 1e-15 * hi:
            return p + step
        new = p + step
        p = new if lo < new < hi else (lo + hi) / 2
    return p


# -- proven ---------------------------------------------------------------------------------------------

def cdf_enclosure(p: Fraction, k: int, n: int) -> arb | None:
    """A proven Arb ball holding F(p) = P(Binomial(n, p) ≤ k) for a rational 0 < p < 1, k < n (module docstring:
    Arb's pmf times a float64 sum with a proven error bound); None when p lies at or below the mean."""
    pf, qf = float(p), float(1 - p)  # each correctly rounded
    summed = _tail_sum(k, n, pf, qf)
    if summed is None or not 0 < pf < 1:
        return None
    total, t, last, rho = summed
    e = (16 * t + 16) * _U
    with ctx.workprec(_PREC):
        pa, qa = to_arb(p), to_arb(1 - p)
        if k == 0:
            return (qa.log() * n).exp()
        log_pmf_ = (arb(n + 1).lgamma() - arb(k + 1).lgamma() - arb(n - k + 1).lgamma()
                    + k * pa.log() + (n - k) * qa.log())
        low = arb(total) * (1 - arb(e))
        high = arb(total) * (1 + arb(e))
        if rho > 0:
            rho_hi = arb(rho) * (1 + arb(6 * _U))
            if not rho_hi < 1:
                return None
            high += arb(last) * (1 + arb(e)) * rho_hi / (1 - rho_hi)
        s = arb(low.lower()).union(arb(high.upper()))
        return log_pmf_.exp() * s


def cdf_exceeds(p: Fraction, k: int, n: int, level: Fraction) -> bool | None:
    """Whether F(p) = P(Binomial(n, p) ≤ k) > level, proven: True (F(p) > level: p lies below the
    Clopper–Pearson bound), False (F(p) < level: p lies above it), None when not decided even by Arb's
    incomplete beta at 512 bits."""
    _check(k, n)
    if k == n or p <= 0:
        return True  # F = 1
    if p >= 1:
        return False  # F = 0
    ball = cdf_enclosure(p, k, n)
    with ctx.workprec(_PREC):
        if ball is not None:
            lv = to_arb(level)
            if ball > lv:
                return True
            if ball < lv:
                return False
    for prec in (_PREC, 256, 512):
        with ctx.workprec(prec):
            upper_tail = to_arb(p).beta_lower(k + 1, n - k, 1)  # I_p(k + 1, n − k) = 1 − F(p)
            target = 1 - to_arb(level)
            if upper_tail < target:
                return True
            if upper_tail > target:
                return False
    return None


def _rounded(x: float | Fraction, rounding: str) -> Fraction:
    """x rounded to 12 significant decimal digits (a short exact rational)."""
    return Fraction(decimal_text(Fraction(x), 12, rounding))


def clopper_pearson_upper(k: int, n: int, level: Fraction, estimate: float | None = None) -> Fraction:
    """A rational p_U with P(Binomial(n, p_U) ≤ k) ≤ level proven: at or above the exact one-sided
    Clopper–Pearson upper bound at ``level`` (module docstring), typically within a relative 1e-9 of it (the
    pad grows tenfold until the inequality is proven, then the bound is 1). ``estimate``: the float64 quantile
    to start from (default :func:`quantile_estimate`)."""
    _check(k, n)
    if k == n:
        return Fraction(1)
    estimate = quantile_estimate(k, n, level) if estimate is None else estimate
    pad = Fraction(1, 10**9)
    while pad < 1:
        p = _rounded(Fraction(estimate) * (1 + pad), "up")
        if p >= 1:
            break
        if cdf_exceeds(p, k, n, level) is False:
            return p
        pad *= 10
    return Fraction(1)


def clopper_pearson_lower(k: int, n: int, level: Fraction) -> Fraction:
    """A rational at or below the exact Clopper–Pearson upper bound q(k) at ``level`` (F > level proven there),
    typically within a relative 1e-9 of it; 0 when nothing better is proven. As q grows with k, it lies below
    the bound of every count k' ≥ k out of n, and below every :func:`clopper_pearson_upper` of those."""
    _check(k, n)
    if k == n:
        return Fraction(1)
    estimate = Fraction(quantile_estimate(k, n, level))
    margin = Fraction(1, 10**9)
    while margin < 1:
        p = _rounded(estimate * (1 - margin), "down")
        if p <= 0:
            break
        if cdf_exceeds(p, k, n, level) is True:
            return p
        margin *= 10
    return Fraction(0)
