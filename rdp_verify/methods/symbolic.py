"""Method 3: SymPy's exact expansion of A_α for small integer α.

For integer α (Section 3.3, Case I),

    A_α = Σ_{k=0}^{α} C(α,k) (1 − q)^(α−k) q^k exp((k² − k)/(2σ²)),

a finite sum of exact rationals times exponentials of exact rationals. SymPy
builds it with :class:`sympy.Rational` coefficients (q and σ exactly as parsed)
and evaluates log A_α with ``evalf``, whose precision tracking raises the working
precision until the requested number of digits is obtained. To keep log A_α
accurate when A_α − 1 is tiny we evaluate log(1 + E) with the exact excess
E = Σ_{k≥2} C(α,k)(1−q)^(α−k) q^k (exp((k²−k)/(2σ²)) − 1) > 0 (it uses
Σ_k C(α,k)(1−q)^(α−k)q^k = 1).

Error bound (``estimate``): evalf is asked for ``dps + 10`` significant digits
and credited with ``dps + 5``, i.e. abs(error) ≤ 10^−(dps+5)·abs(log A_α). This trusts
SymPy's precision tracking; it is not a proof.

B_α has no such expansion: (1 − q + q·μ1/μ0)^(1−α) has a negative exponent, so
its binomial series is infinite (see :mod:`rdp_verify.methods.series`). The method
therefore reports A_α only; Corollary 7 (A_α ≥ B_α) makes ε_α = log A_α/(α − 1).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..foundations.inputs import SGM
from ..foundations.results import Bounded, MethodResult, MethodUnavailable

if TYPE_CHECKING:
    import sympy

__all__ = ["compute", "MAX_ORDER"]

MAX_ORDER = 64


def _rational(x: Fraction) -> sympy.Rational:
    import sympy  # imported on first use: 0.5 s that non-integer orders never need

    return sympy.Rational(x.numerator, x.denominator)


def excess_expression(q: Fraction, sigma: Fraction, alpha: int) -> sympy.Expr:
    """A_α − 1 as an exact SymPy expression (rational q, σ; integer α)."""
    import sympy

    qs, s2 = _rational(q), _rational(sigma) ** 2
    return sympy.Add(
        *[
            sympy.binomial(alpha, k)
            * (1 - qs) ** (alpha - k)
            * qs**k
            * (sympy.exp(sympy.Rational(k * k - k, 1) / (2 * s2)) - 1)
            for k in range(2, alpha + 1)
        ]
    )


def compute(sgm: SGM, dps: int) -> MethodResult:
    """log A_α from SymPy's exact finite sum, for integer 2 ≤ α ≤ 64."""
    if not sgm.integer_order:
        raise MethodUnavailable("symbolic expansion needs an integer order α")
    alpha = int(sgm.alpha)
    if alpha > MAX_ORDER:
        raise MethodUnavailable(f"symbolic expansion is limited to α ≤ {MAX_ORDER}")
    import sympy

    expr = sympy.log(1 + excess_expression(sgm.q, sgm.sigma, alpha))
    value = expr.evalf(dps + 10)
    if not value.is_real or not value.is_finite:
        raise MethodUnavailable(f"evalf returned {value}")
    exact = Fraction(sympy.Rational(value))
    error = abs(exact) * Fraction(1, 10 ** (dps + 5))
    return MethodResult(
        method="symbolic",
        bound_kind="estimate",
        log_a=Bounded(exact, error),
        log_b=None,
        work={"terms": alpha - 1, "evalf_digits": dps + 10},
        notes=("SymPy evalf precision tracking, not a proof; B_α has no finite expansion",),
    )
