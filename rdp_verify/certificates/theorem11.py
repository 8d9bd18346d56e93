"""Theorem 11 (closed-form bound) and Corollary 7 (A_α ≥ B_α) reports.

Theorem 11 (Mironov–Talwar–Zhang 2019): if q ≤ 1/5, σ ≥ 4 and α satisfies

    (4)  1 < α ≤ σ²L/2 − 2 ln σ,
    (5)  α ≤ (σ²L²/2 − ln 5 − 2 ln σ) / (L + ln(qα) + 1/(2σ²)),

with L = ln(1 + 1/(q(α − 1))), then SG_{q,σ} is (α, 2q²α/σ²)-RDP. The
denominator of (5) is positive because L + ln(qα) = ln(qα + α/(α − 1)) > 0.

Every comparison is decided in Arb ball arithmetic, raising the precision
until the sign of each margin (right-hand side − α) is certain; the margins are
reported as decimal strings for reading. Corollary 7 is checked on the proven
enclosures of log A_α and log B_α.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import arb, ctx

from ..foundations.decimals import decimal_text
from ..foundations.inputs import SGM, fraction_text
from ..foundations.results import Bounded, arb_to_bounded, to_arb

__all__ = ["theorem11_report", "corollary7_report", "closed_form_bound", "margins"]

_PRECISIONS = (128, 512, 2048)


def closed_form_bound(sgm: SGM) -> Fraction:
    """Theorem 11's ε bound 2q²α/σ² (an exact rational)."""
    return 2 * sgm.q**2 * sgm.alpha / sgm.sigma**2


def margins(sgm: SGM) -> tuple[arb, arb, arb, arb, arb]:
    """Balls (at the current Arb precision) for L, the right sides of (4) and (5), and their margins.

    Theorem 11: L = ln(1 + 1/(q(α − 1))); condition (4) is α ≤ σ²L/2 − 2 ln σ,
    condition (5) is α ≤ (σ²L²/2 − ln 5 − 2 ln σ)/(L + ln(qα) + 1/(2σ²)); the margins
    are right side − α (non-negative where the condition holds).
    """
    q, s, a = to_arb(sgm.q), to_arb(sgm.sigma), to_arb(sgm.alpha)
    s2 = s * s
    L = (1 + 1 / (q * (a - 1))).log()
    rhs4 = s2 * L / 2 - 2 * s.log()
    rhs5 = (s2 * L * L / 2 - arb(5).log() - 2 * s.log()) / (L + (q * a).log() + 1 / (2 * s2))
    return L, rhs4, rhs5, rhs4 - a, rhs5 - a


def _sign(x: arb) -> bool | None:
    """True if x ≥ 0 is certain, False if x < 0 is certain, None if undecided."""
    if x >= 0:
        return True
    if x < 0:
        return False
    return None


def _num(x: arb) -> str:
    return decimal_text(arb_to_bounded(x).value, 20)


def theorem11_report(sgm: SGM, epsilon: Bounded) -> dict[str, Any]:
    """Both sides of (4) and (5), their margins, the side conditions and the bound."""
    saved = ctx.prec
    try:
        for prec in _PRECISIONS:
            ctx.prec = prec
            L, rhs4, rhs5, m4, m5 = margins(sgm)
            c4, c5 = _sign(m4), _sign(m5)
            if c4 is not None and c5 is not None:
                break
    finally:
        ctx.prec = saved
    q_ok = sgm.q <= Fraction(1, 5)
    sigma_ok = sgm.sigma >= 4
    bound = closed_form_bound(sgm)
    report = {
        "statement": "q <= 1/5, sigma >= 4, (4) and (5) imply (alpha, 2 q^2 alpha / sigma^2)-RDP",
        "L": _num(L),
        "q_le_one_fifth": q_ok,
        "sigma_ge_4": sigma_ok,
        "condition_4": bool(c4),
        "condition_4_detail": {
            "lhs": fraction_text(sgm.alpha),
            "rhs": _num(rhs4),
            "margin": _num(m4),
            "decided": c4 is not None,
        },
        "condition_5": bool(c5),
        "condition_5_detail": {
            "lhs": fraction_text(sgm.alpha),
            "rhs": _num(rhs5),
            "margin": _num(m5),
            "decided": c5 is not None,
        },
        "all_hold": bool(q_ok and sigma_ok and c4 and c5),
        "bound": decimal_text(bound, 25),
        "bound_exact": fraction_text(bound),
        "epsilon_over_bound": {
            "lower": decimal_text(epsilon.lower / bound, 20, "down"),
            "upper": decimal_text(epsilon.upper / bound, 20, "up"),
        },
        "epsilon_le_bound": epsilon.upper <= bound,
    }
    return report


def corollary7_report(sgm: SGM, log_a: Bounded, log_b: Bounded, proven: bool) -> dict[str, Any]:
    """Corollary 7 (A_α ≥ B_α) on the enclosures; a failure is a bug or a precision problem."""
    gap = Bounded(log_a.value - log_b.value, log_a.error + log_b.error)
    if sgm.q == 1:  # w = r and M(α) = M(1 − α) = exp(α(α−1)/(2σ²)) in closed form
        status, explanation = "equal", "q = 1: A_alpha = B_alpha = exp(alpha(alpha-1)/(2 sigma^2)) exactly"
    elif gap.lower >= 0:
        status, explanation = "proven", "lower end of log A exceeds upper end of log B"
    elif gap.upper < 0:
        status = "violated"
        explanation = (
            "log A < log B on enclosures that are "
            + ("proven: a bug in the computation" if proven else "estimates: a bug or an underestimated error bound")
        )
    else:
        status, explanation = "unresolved", "precision: the two intervals overlap; raise --dps"
    return {
        "statement": "A_alpha >= B_alpha (Corollary 7 of Theorem 5)",
        "holds": status in ("proven", "equal"),
        "status": status,
        "explanation": explanation,
        "log_gap": {
            "lower": decimal_text(gap.lower, 20, "down"),
            "upper": decimal_text(gap.upper, 20, "up"),
        },
        "on_proven_enclosures": proven,
    }
