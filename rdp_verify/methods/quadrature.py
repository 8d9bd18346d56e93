"""Method 1: A_α and B_α by mpmath quadrature of the defining integral.

Both quantities of Theorem 4 (Section 3 of Mironov–Talwar–Zhang 2019) are
moments of the likelihood ratio under μ0 = N(0, σ²):

    A_α = E_{μ0}[(μ/μ0)^α]           = ∫ μ0(z) w(z)^α     dz,
    B_α = E_{μ}[(μ0/μ)^α] = E_{μ0}[(μ/μ0)^(1−α)] = ∫ μ0(z) w(z)^(1−α) dz,

with μ = (1 − q)μ0 + qμ1 and w(z) = μ(z)/μ0(z) = 1 − q + q·exp((2z − 1)/(2σ²)).
This module integrates M(γ) = ∫ μ0 w^γ for γ = α and γ = 1 − α with mpmath's
tanh-sinh rule on a finite window [a, b], split where the integrand changes
character: at 0 (the μ0 peak), at γ (the peak of μ0·(q·μ1/μ0)^γ), at the
crossover z1 = 1/2 + σ² ln(1/q − 1) where (1 − q)μ0 = qμ1 (Section 3.3), and at
3σ either side of the peaks and σ², 4σ² either side of z1.

Error bound (an *estimate*, not a proof): mpmath's own quadrature error
estimate, plus an explicit bound on the two truncated tails, plus a rounding
allowance of 10^(2 − dps) times the size of the exponents involved. The tails are bounded in closed form (Φ is the
standard normal CDF, Φ̄ = 1 − Φ), using that w is increasing in z::

    γ > 0:  ∫_{−∞}^{a} μ0 w^γ ≤ w(a)^γ Φ(a/σ),
            ∫_{b}^{∞}  μ0 w^γ ≤ (1 + (1−q)/(q r(b)))^γ · q^γ e^{(γ²−γ)/(2σ²)} Φ̄((b−γ)/σ),
    γ < 0:  w^γ ≤ min((1−q)^γ, (q r)^γ) gives the same Gaussian tails,

where r(z) = μ1(z)/μ0(z) and ∫ μ0 r^γ 1[z ≥ b] = e^{(γ²−γ)/(2σ²)} Φ̄((b−γ)/σ)
(completing the square, Section 3.3). The window is widened until the tails are
below 10^−(dps+3) times a lower bound of M(γ).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from ..foundations.inputs import SGM
from ..foundations.results import Bounded, MethodResult, mpf_to_fraction, to_mpf

__all__ = ["compute"]

_MAXDEGREE = 10


def compute(sgm: SGM, dps: int) -> MethodResult:
    """log A_α and log B_α by quadrature at ``dps`` working digits."""
    with mpmath.workdps(dps):
        log_a, work_a = _log_moment(sgm, sgm.alpha, dps)
        log_b, work_b = _log_moment(sgm, 1 - sgm.alpha, dps)
    return MethodResult(
        method="quadrature",
        bound_kind="estimate",
        log_a=log_a,
        log_b=log_b,
        work={"working_digits": dps, "A": work_a, "B": work_b},
        notes=("mpmath tanh-sinh error estimate + proven tail bounds; not a proof",),
    )


class _Integrand:
    """log of μ0(z)·w(z)^γ and the closed-form pieces used for tail bounds."""

    def __init__(self, sgm: SGM, gamma: Fraction):
        self.q = to_mpf(sgm.q)
        self.unit = sgm.q == 1
        self.sigma = to_mpf(sgm.sigma)
        self.s2 = self.sigma**2
        self.gamma = to_mpf(gamma)
        self.lognorm = -mpmath.log(self.sigma) - mpmath.log(2 * mpmath.pi) / 2
        self.z1 = None if self.unit else mpmath.mpf(0.5) + self.s2 * mpmath.log(1 / self.q - 1)
        self.evaluations = 0

    def log_w(self, z):
        t = (2 * z - 1) / (2 * self.s2)
        return t if self.unit else mpmath.log1p(self.q * mpmath.expm1(t))

    def log_f(self, z):
        """log μ0(z) + γ log w(z), without the 1/(σ√2π) normalisation."""
        return -z * z / (2 * self.s2) + self.gamma * self.log_w(z)

    def log_gauss_tail(self, x, upper: bool):
        """log of ∫ μ0 r^γ over [x, ∞) (upper) or (−∞, x], times q^γ."""
        g = self.gamma
        arg = (x - g) / (self.sigma * mpmath.sqrt(2))
        tail = mpmath.erfc(arg) / 2 if upper else mpmath.erfc(-arg) / 2
        return g * mpmath.log(self.q) + (g * g - g) / (2 * self.s2) + mpmath.log(tail)

    def log_plain_tail(self, x, upper: bool):
        """log of (1 − q)^γ ∫ μ0 over [x, ∞) or (−∞, x]."""
        arg = x / (self.sigma * mpmath.sqrt(2))
        tail = mpmath.erfc(arg) / 2 if upper else mpmath.erfc(-arg) / 2
        return self.gamma * mpmath.log1p(-self.q) + mpmath.log(tail)

    def log_tails(self, a, b):
        """Upper bound on log(∫_{−∞}^a + ∫_b^∞) of μ0 w^γ (normalised density)."""
        if self.gamma > 0:
            left = self.gamma * self.log_w(a) + mpmath.log(mpmath.erfc(-a / (self.sigma * mpmath.sqrt(2))) / 2)
            right = self.log_gauss_tail(b, upper=True)
            if not self.unit:
                ratio = (1 - self.q) / (self.q * mpmath.exp((2 * b - 1) / (2 * self.s2)))
                right += self.gamma * mpmath.log1p(ratio)
        else:
            left = self.log_gauss_tail(a, upper=False)
            right = self.log_gauss_tail(b, upper=True)
            if not self.unit:
                left = min(left, self.log_plain_tail(a, upper=False))
                right = min(right, self.log_plain_tail(b, upper=True))
        return _log_add(left, right)

    def log_lower_bound(self, centre):
        """log of a proven lower bound of ∫ μ0 w^γ over [c − σ, c + σ]."""
        lo, hi = centre - self.sigma, centre + self.sigma
        far = max(abs(lo), abs(hi))
        w_end = lo if self.gamma > 0 else hi
        return (
            mpmath.log(2 * self.sigma)
            - far * far / (2 * self.s2)
            + self.lognorm
            + self.gamma * self.log_w(w_end)
        )


def _log_add(x, y):
    m = max(x, y)
    return m + mpmath.log(mpmath.exp(x - m) + mpmath.exp(y - m))


def _log_moment(sgm: SGM, gamma: Fraction, dps: int) -> tuple[Bounded, dict]:
    f = _Integrand(sgm, gamma)
    centres = [mpmath.mpf(0), f.gamma]
    if f.z1 is not None:
        centres.append(f.z1)
    log_lb = max(f.log_lower_bound(c) for c in (mpmath.mpf(0), f.gamma))
    log_target = log_lb - (dps + 3) * mpmath.log(10)

    # Widen the window until the proven tail bound is negligible.
    lo_c, hi_c = min(centres[:2]), max(centres[:2])
    width = mpmath.mpf(6)
    while True:
        a, b = lo_c - width * f.sigma, hi_c + width * f.sigma
        log_tail = f.log_tails(a, b) + f.lognorm
        if log_tail < log_target:
            break
        width *= mpmath.mpf(1.4)
        if width > 10**5:
            raise ArithmeticError("quadrature window did not converge")

    # Gaussian peaks vary on the scale σ; w changes character around z1 on the
    # scale σ² (w = (1 − q)(1 + e^{(z − z1)/σ²})), which is far narrower when σ < 1.
    candidates = [c + k * f.sigma for c in centres[:2] for k in (-3, 0, 3)]
    if f.z1 is not None:
        candidates += [f.z1 + k * f.s2 for k in (-4, -1, 0, 1, 4)]
    points = sorted({a, b} | {p for p in candidates if a < p < b})
    scale = max(f.log_f(p) for p in points)

    def integrand(z):
        f.evaluations += 1
        return mpmath.exp(f.log_f(z) - scale)

    value, quad_err = mpmath.quad(integrand, points, error=True, maxdegree=_MAXDEGREE)
    if not value > 0:
        raise ArithmeticError("quadrature returned a non-positive integral")
    log_moment = scale + f.lognorm + mpmath.log(value)
    # Relative error of the moment: quadrature estimate + tails + rounding. The
    # exponent log f − scale is formed from numbers as large as |scale| + |log f|,
    # so each integrand value carries a relative rounding error of that order.
    magnitude = 1 + abs(scale) + max(abs(f.log_f(p)) for p in points)
    rounding = magnitude * mpmath.mpf(10) ** (2 - dps)
    rel = quad_err / value + mpmath.exp(log_tail - log_moment) + rounding
    if rel >= mpmath.mpf("0.5"):
        raise ArithmeticError("quadrature error estimate too large to bound log M")
    log_err = -mpmath.log1p(-rel)  # |log M̂ − log M| ≤ −log(1 − rel)
    work = {
        "subintervals": len(points) - 1,
        "evaluations": f.evaluations,
        "window": [mpmath.nstr(a, 8), mpmath.nstr(b, 8)],
        "quadrature_error_estimate": mpmath.nstr(quad_err / value, 3),
        "relative_tail_bound": mpmath.nstr(mpmath.exp(log_tail - log_moment), 3),
    }
    return Bounded(mpf_to_fraction(log_moment), mpf_to_fraction(log_err)), work
