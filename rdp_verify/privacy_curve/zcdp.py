"""A run given only as zCDP guarantees (``ZCDpEvent``): a proven upper end by the best conversion, no lower end.

(ξ, ρ)-zCDP (Bun & Steinke 2016, Definition 1.1; the ξ of MTZ19 Definition 12) is (α, ξ + ρα)-RDP at every order
α > 1, and zCDP guarantees compose by adding ξ and ρ (Bun & Steinke 2016, Lemma 2.3). An (α, R)-RDP mechanism is
(ε, δ)-DP with

    ε = R + (log(1/δ) + (α − 1)·log((α − 1)/α) − log α)/(α − 1)

(Balle, Barthe, Gaboardi, Hsu, Sato 2020, Theorem 21; :func:`rdp_verify.accounting.rdp.conversion_offset`, the
"balle2020" conversion), and with δ = exp((α − 1)(R − ε) + (α − 1)·log((α − 1)/α) − log α) for a given ε. Every α
gives a proven bound; the order is chosen by a double-precision search (a heuristic) and the bound at that exact
rational order is evaluated in Arb and rounded up. The result is never above Bun & Steinke's ξ + ρ + 2√(ρ log(1/δ))
(their Proposition 1.3), which the search starts from.

**No lower end.** A zCDP guarantee is an upper bound on the mechanism's Rényi divergences; the mechanism may
release nothing at all, so the only lower end is the trivial 0 (ε) or 0 (δ), and the bracket says so.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..accounting.rdp import delta_from_rdp, epsilon_from_rdp
from ..foundations.results import Bounded

__all__ = ["epsilon_upper", "delta_upper", "epsilon_at", "delta_at", "best_order"]

CONVERSION = "balle2020"


def _float_epsilon(rho: float, xi: float, delta: float, alpha: float) -> float:
    lam = alpha - 1
    return xi + rho * alpha + (math.log(1 / delta) + lam * math.log(lam / alpha) - math.log(alpha)) / lam


def _float_log_delta(rho: float, xi: float, epsilon: float, alpha: float) -> float:
    lam = alpha - 1
    return lam * (xi + rho * alpha - epsilon) + lam * math.log(lam / alpha) - math.log(alpha)


def best_order(rho: Fraction, xi: Fraction, *, delta: Fraction | None = None, epsilon: Fraction | None = None) -> Fraction:
    """A short rational order near the minimiser of the conversion (golden-section search in double precision on
    log(α − 1) ∈ [log 1e-6, log 1e6]; any order is valid)."""
    r, x = float(rho), float(xi)
    if delta is not None:
        d = float(delta)
        f = (lambda a: _float_epsilon(r, x, d, a))
    else:
        e = float(epsilon)
        f = (lambda a: _float_log_delta(r, x, e, a))
    lo, hi = math.log(1e-6), math.log(1e6)
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    for _ in range(200):
        if f(1 + math.exp(a)) < f(1 + math.exp(b)):
            hi, b = b, a
            a = hi - g * (hi - lo)
        else:
            lo, a = a, b
            b = lo + g * (hi - lo)
    lam = math.exp((lo + hi) / 2)
    return 1 + Fraction(f"{lam:.6g}")


def epsilon_at(rho: Fraction, xi: Fraction, delta: Fraction, alpha: Fraction) -> tuple[Fraction, Fraction]:
    """(ε, α): the proven ε of the conversion at the order α (rounded up; at least 0)."""
    rdp = Bounded.between(xi + rho * alpha, xi + rho * alpha)
    return max(epsilon_from_rdp(rdp, alpha, delta, CONVERSION).upper, Fraction(0)), alpha


def delta_at(rho: Fraction, xi: Fraction, epsilon: Fraction, alpha: Fraction) -> tuple[Fraction, Fraction]:
    """(δ, α): the proven δ of the conversion at the order α (rounded up; at most 1)."""
    rdp = Bounded.between(xi + rho * alpha, xi + rho * alpha)
    return min(delta_from_rdp(rdp, alpha, epsilon, CONVERSION).upper, Fraction(1)), alpha


def epsilon_upper(rho: Fraction, xi: Fraction, delta: Fraction) -> tuple[Fraction, Fraction]:
    """(ε, α): a proven ε with the run (ε, δ)-DP, at the order the search chose (module docstring)."""
    return epsilon_at(rho, xi, delta, best_order(rho, xi, delta=delta))


def delta_upper(rho: Fraction, xi: Fraction, epsilon: Fraction) -> tuple[Fraction, Fraction]:
    """(δ, α): a proven δ ≤ 1 with the run (ε, δ)-DP, at the order the search chose (module docstring)."""
    return delta_at(rho, xi, epsilon, best_order(rho, xi, epsilon=epsilon))
