"""Cross-checking independent method results.

Two methods agree on a quantity when their intervals (value ± error bound)
overlap. Agreement in digits is −log10(abs(v₁ − v₂) / abs(v)): how many leading
significant digits the two values share. A pair that does not overlap makes the
certificate ``inconsistent``: the toolkit never picks one value silently.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations
from typing import Any

from ..foundations.decimals import decimal_text
from ..foundations.results import Bounded, MethodResult

__all__ = ["agreement_digits", "method_epsilon", "cross_check"]

MAX_DIGITS = 1000.0


def agreement_digits(x: Bounded, y: Bounded) -> float:
    """Shared significant digits of two values (capped at 1000 when identical)."""
    scale = max(abs(x.value), abs(y.value))
    diff = abs(x.value - y.value)
    if diff == 0 or scale == 0:
        return MAX_DIGITS
    return round(min(MAX_DIGITS, -math.log10(diff / scale)), 1)


def method_epsilon(result: MethodResult, alpha: Fraction) -> Bounded:
    """ε_α = log max(A_α, B_α)/(α − 1) from one method.

    A method without B_α (symbolic) gives log A_α/(α − 1), which equals ε_α by
    Corollary 7 (A_α ≥ B_α).
    """
    log_max = result.log_max() or result.log_a
    return log_max.scaled(1 / (alpha - 1))


def cross_check(results: dict[str, MethodResult], alpha: Fraction) -> dict[str, Any]:
    """Pairwise overlap and agreement of log A, log B and ε over all methods."""
    pairs: list[dict[str, Any]] = []
    conflicts: list[str] = []
    epsilons = {name: method_epsilon(r, alpha) for name, r in results.items()}
    for (n1, r1), (n2, r2) in combinations(sorted(results.items()), 2):
        entry: dict[str, Any] = {"methods": [n1, n2]}
        for key, label in (("log_a", "log_A"), ("log_b", "log_B")):
            x, y = getattr(r1, key), getattr(r2, key)
            if x is None or y is None:
                continue
            overlap = x.overlaps(y)
            entry[label] = {"overlap": overlap, "agreement_digits": agreement_digits(x, y)}
            if not overlap:
                gap = max(x.lower - y.upper, y.lower - x.upper)
                conflicts.append(
                    f"{label}: {n1} and {n2} differ by more than their error bounds "
                    f"(gap {decimal_text(gap, 3, 'up')})"
                )
        entry["epsilon_agreement_digits"] = agreement_digits(epsilons[n1], epsilons[n2])
        pairs.append(entry)
    if len(results) < 2:
        conflicts.append("fewer than two methods produced a value: nothing to cross-check")
    eps_digits = [p["epsilon_agreement_digits"] for p in pairs]
    return {
        "consistent": not conflicts,
        "methods_compared": sorted(results),
        "pairs": pairs,
        "epsilon_agreement_digits": min(eps_digits) if eps_digits else None,
        "conflicts": conflicts,
    }
