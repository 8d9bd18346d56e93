"""Method 2: A_α and B_α by the analytic series of Section 3.3 (mpmath).

Notation as in :mod:`rdp_verify.methods.quadrature`: M(γ) = ∫ μ0 w^γ with
w = 1 − q + q·r, r(z) = μ1(z)/μ0(z) = exp((2z − 1)/(2σ²)); A_α = M(α) and
B_α = M(1 − α). The crossover z1 = 1/2 + σ² ln(1/q − 1) is where (1 − q) = q·r.
Each expansion below swaps sum and integral and integrates Gaussians exactly
(Section 3.3, by completing the square):

    ∫_{−∞}^{c} μ0 r^k = e^{(k²−k)/(2σ²)} · ½erfc((k − c)/(σ√2)),
    ∫_{c}^{∞}  μ0 r^m = e^{(m²−m)/(2σ²)} · ½erfc((c − m)/(σ√2)).

**Integer α (A_α).** The finite binomial sum of Section 3.3, Case I. We sum
A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k} q^k (e^{(k²−k)/(2σ²)} − 1), which uses
Σ_k C(α,k)(1−q)^{α−k}q^k = 1 and has only positive terms, so log A_α = log1p(·)
keeps full relative precision even when A_α − 1 is tiny.

**Fractional α (A_α), split at z1 (eq. (12)).** Left series
Σ C(α,k)(1−q)^{α−k}q^k ∫_{−∞}^{z1} μ0 r^k and right series
Σ C(α,k)(1−q)^k q^{α−k} ∫_{z1}^{∞} μ0 r^{α−k}. *Truncation bound:* writing the
k-th left term as (1−q)^α C(α,k) J_k with J_k = ∫_{−∞}^{z1} μ0 (q r/(1−q))^k,
J_k is non-increasing in k because q r/(1−q) ≤ 1 left of z1; abs(C(α,k+1)/C(α,k))
= abs(α−k)/(k+1) < 1 once k > (α−1)/2; and C(α,k) alternates in sign for k > α.
So past k = ⌈α⌉ the terms alternate and shrink, and the remainder after term K is
at most abs(term K+1) (Leibniz). The right series is the mirror image. The
terms decay only like k^(−α−2) when mass sits near z1 (small σ, q not small),
so if 300 terms do not reach the target we switch to the three-way split.

**Three-way split (fractional A_α, and every B_α).** Split the line at
c = z1 − sσ² and c' = z1 + sσ². On (−∞, c] the ratio q r/(1 − q) ≤ e^{−s}, so
the left series' terms t_k satisfy abs(t_{k+1}) ≤ abs(t_k) · abs(γ−k)/(k+1) · e^{−s}
(because ∫_{−∞}^{c} μ0 r^{k+1} ≤ r(c) ∫_{−∞}^{c} μ0 r^k); with
R_K = max(1, (K + abs(γ))/(K + 1)) ≥ abs(γ−k)/(k+1) for all k ≥ K and
x = R_K e^{−s} < 1, the remainder after term K is at most abs(t_K) x/(1 − x).
The right series over [c', ∞) obeys the same bound with (1−q)/(q r) ≤ e^{−s}.
The band [c, c'] is integrated with mpmath's quadrature (its error estimate).
s = max(2, ln(abs(γ)/5)) keeps both the number of terms and the cancellation among
terms of alternating sign (at most ((1+e^{−s})/(1−e^{−s}))^{abs(γ)}) small.

**B_α.** Expanding w^{1−α} at z1 exactly as above gives terms of size
~k^(α−3): the two series of eq. (12) for B_α converge absolutely only for α < 2,
conditionally for 2 ≤ α < 3 and diverge for α ≥ 3. B_α therefore always uses
the three-way split, where both series converge geometrically for every α.

**q = 1.** z1 = −∞, the left series is empty and only the k = 0 right term
survives: A_α = B_α = exp(α(α−1)/(2σ²)) exactly (no log 0 is formed).

Error bound (``estimate``): truncation bounds are proven; rounding is an
a-priori estimate (number of terms and exponent sizes times 10^−dps); the band
quadrature's error is mpmath's estimate.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from ..foundations.inputs import SGM
from ..foundations.results import (
    Bounded,
    MethodResult,
    MethodUnavailable,
    mpf_to_fraction,
    to_mpf,
)

__all__ = ["compute"]

PLAIN_TERMS = 300
MAX_TERMS = 20_000


def compute(sgm: SGM, dps: int) -> MethodResult:
    """log A_α and log B_α from the Section 3.3 series at ``dps`` working digits."""
    with mpmath.workdps(dps):
        ctx = _Series(sgm, dps)
        log_a, work_a = ctx.log_moment(sgm.alpha)
        log_b, work_b = ctx.log_moment(1 - sgm.alpha)
    return MethodResult(
        method="series",
        bound_kind="estimate",
        log_a=log_a,
        log_b=log_b,
        work={"working_digits": dps, "A": work_a, "B": work_b},
        notes=("truncation bounds proven; rounding estimated; band (if any) by mpmath quadrature",),
    )


class _Series:
    def __init__(self, sgm: SGM, dps: int):
        self.sgm = sgm
        self.dps = dps
        self.u = mpmath.mpf(10) ** (-dps)
        self.q = to_mpf(sgm.q)
        self.sigma = to_mpf(sgm.sigma)
        self.s2 = self.sigma**2
        self.root2s = self.sigma * mpmath.sqrt(2)
        self.z1 = None if sgm.q == 1 else mpmath.mpf(0.5) + self.s2 * mpmath.log(1 / self.q - 1)

    # -- building blocks -------------------------------------------------------
    def gauss_left(self, k, c):
        """∫_{−∞}^{c} μ0 r^k."""
        return mpmath.exp((k * k - k) / (2 * self.s2)) * mpmath.erfc((k - c) / self.root2s) / 2

    def gauss_right(self, m, c):
        """∫_{c}^{∞} μ0 r^m."""
        return mpmath.exp((m * m - m) / (2 * self.s2)) * mpmath.erfc((c - m) / self.root2s) / 2

    def exponent_size(self, k, gamma):
        """Crude bound on the exponents formed in term k (for the rounding estimate)."""
        g = abs(gamma)
        return ((k + g) ** 2 + k + g) / (2 * self.s2) + (k + g) * (
            abs(mpmath.log(self.q)) + abs(mpmath.log1p(-self.q))
        )

    def _finish(self, total, abs_sum, trunc, extra_rel, n_terms, size, work) -> tuple[Bounded, dict]:
        """Turn a moment estimate and its error pieces into log M with a bound.

        ``size`` bounds the exponents formed along the way: a term whose exponent
        is x carries a relative rounding error of about x·10^−dps.
        """
        if not total > 0:
            raise MethodUnavailable("series sum is not positive: precision exhausted")
        rounding = abs_sum * self.u * (n_terms + 20 + size)
        rel = (trunc + rounding) / total + extra_rel
        if rel >= mpmath.mpf("0.5"):
            raise MethodUnavailable("series error bound too large to bound log M")
        work["terms"] = n_terms
        return Bounded(mpf_to_fraction(mpmath.log(total)), mpf_to_fraction(-mpmath.log1p(-rel))), work

    # -- the moments -------------------------------------------------------------
    def log_moment(self, gamma: Fraction) -> tuple[Bounded, dict]:
        if self.sgm.q == 1:  # only the k = 0 right term survives; exact rational exponent
            value = (gamma * gamma - gamma) / (2 * self.sgm.sigma**2)
            return Bounded(value, Fraction(0)), {"scheme": "closed form (q = 1)"}
        if gamma > 0 and gamma.denominator == 1:
            return self._integer_sum(int(gamma))
        if gamma > 0:
            plain = self._plain_split(to_mpf(gamma))
            if plain is not None:
                return plain
        return self._three_way(to_mpf(gamma))

    def _integer_sum(self, alpha: int) -> tuple[Bounded, dict]:
        q, s2 = self.q, self.s2
        excess = mpmath.mpf(0)  # A_α − 1
        coef = mpmath.mpf(alpha) * (alpha - 1) / 2 * (1 - q) ** (alpha - 2) * q * q  # C(α,2)(1−q)^{α−2}q²
        for k in range(2, alpha + 1):
            excess += coef * mpmath.expm1((k * k - k) / (2 * s2))
            coef *= mpmath.mpf(alpha - k) / (k + 1) * q / (1 - q)
        # Positive terms: relative rounding ≲ u·(terms + exponent sizes).
        rel = self.u * (alpha + 20 + (alpha * alpha) / (2 * s2) + alpha * abs(mpmath.log(q)))
        log_total = mpmath.log1p(excess)
        err = rel * excess / (1 + excess) + 4 * self.u * log_total
        return Bounded(mpf_to_fraction(log_total), mpf_to_fraction(err)), {
            "scheme": "finite binomial sum (Section 3.3, Case I)",
            "terms": alpha - 1,
        }

    def _plain_split(self, alpha) -> tuple[Bounded, dict] | None:
        """Eq. (12) split at z1 with the Leibniz remainder; None if too slow."""
        q, z1 = self.q, self.z1
        tol = self.u
        left = right = abs_sum = mpmath.mpf(0)
        coef = mpmath.mpf(1)  # C(α, k)
        start = int(mpmath.ceil(alpha))
        for k in range(PLAIN_TERMS):
            t = coef * (1 - q) ** (alpha - k) * q**k * self.gauss_left(k, z1)
            v = coef * (1 - q) ** k * q ** (alpha - k) * self.gauss_right(alpha - k, z1)
            if k > start and abs(t) + abs(v) <= tol * (left + right):
                # Terms past ⌈α⌉ alternate and shrink: remainder ≤ |next term|.
                return self._finish(
                    left + right, abs_sum, abs(t) + abs(v), 0, k, self.exponent_size(k, alpha),
                    {"scheme": "two erfc series split at z1 (Section 3.3, eq. (12))"},
                )
            left += t
            right += v
            abs_sum += abs(t) + abs(v)
            coef *= (alpha - k) / (k + 1)
        return None

    def _three_way(self, gamma) -> tuple[Bounded, dict]:
        q, s2, z1 = self.q, self.s2, self.z1
        s = max(mpmath.mpf(2), mpmath.log(abs(gamma) / 5))
        ratio = mpmath.exp(-s)
        c_lo, c_hi = z1 - s * s2, z1 + s * s2
        tol = self.u  # absolute, against M ≥ 1 (Jensen)

        def run(term) -> tuple:
            total = abs_sum = mpmath.mpf(0)
            coef = mpmath.mpf(1)
            for k in range(MAX_TERMS):
                t = coef * term(k)
                total += t
                abs_sum += abs(t)
                reach = max(mpmath.mpf(1), (k + abs(gamma)) / (k + 1)) * ratio
                if reach < 1 and abs(t) * reach / (1 - reach) <= tol * max(1, abs(total)) / 4:
                    return total, abs_sum, abs(t) * reach / (1 - reach), k + 1
                coef *= (gamma - k) / (k + 1)
            raise MethodUnavailable(f"series needs more than {MAX_TERMS} terms")

        left, l_abs, l_trunc, l_n = run(
            lambda k: (1 - q) ** (gamma - k) * q**k * self.gauss_left(k, c_lo)
        )
        right, r_abs, r_trunc, r_n = run(
            lambda k: (1 - q) ** k * q ** (gamma - k) * self.gauss_right(gamma - k, c_hi)
        )

        def log_integrand(z):
            t = (2 * z - 1) / (2 * s2)
            return -z * z / (2 * s2) + gamma * mpmath.log1p(q * mpmath.expm1(t))

        inner = {c + j * self.sigma for c in (mpmath.mpf(0), gamma) for j in (-3, 0, 3)}
        inner |= {z1 + j * s2 for j in (-1, 0, 1)}
        points = sorted({c_lo, c_hi} | {p for p in inner if c_lo < p < c_hi})
        # integrate e^(log f − scale) so that mpmath's absolute tolerance is relative
        scale = max(log_integrand(p) for p in points)
        band, band_err = mpmath.quad(lambda z: mpmath.exp(log_integrand(z) - scale), points, error=True, maxdegree=10)
        factor = mpmath.exp(scale) / (self.sigma * mpmath.sqrt(2 * mpmath.pi))
        band, band_err = band * factor, band_err * factor
        total = left + right + band
        return self._finish(
            total,
            l_abs + r_abs + abs(band),
            l_trunc + r_trunc,
            band_err / total,
            l_n + r_n,
            self.exponent_size(max(l_n, r_n), gamma),
            {
                "scheme": "three-way split: series | band quadrature | series",
                "band": [mpmath.nstr(c_lo, 8), mpmath.nstr(c_hi, 8)],
                "band_share": mpmath.nstr(band / total, 3),
            },
        )
