"""Privacy accounting of a DP-SGD run: composition of SGM steps and RDP → (ε, δ) conversions.

**Composition** (Mironov 2017, *Rényi Differential Privacy*, Proposition 1): if
M1 is (α, ε1)-RDP and M2 is (α, ε2)-RDP then (M1, M2) is (α, ε1 + ε2)-RDP, also
when M2 is chosen adaptively. T steps of SG_{q,σ} are therefore (α, T·ε_α)-RDP,
with ε_α the one-step RDP of Theorem 4 of Mironov–Talwar–Zhang 2019 (enclosed by
:func:`rdp_verify.methods.rigorous.epsilon_bounds`), and a run made of phases
(q_i, σ_i, T_i) is (α, R(α))-RDP with R(α) = Σ_i T_i·ε_α(q_i, σ_i).

**RDP → (ε, δ)**: an (α, R)-RDP mechanism is (ε, δ)-DP for every δ ∈ (0, 1) with
ε = R + c(α, δ), where, writing λ = α − 1 and L = log(1/δ) > 0,

* ``mironov2017`` -- Mironov 2017, Proposition 3: c = L/λ;
* ``balle2020`` -- Balle, Barthe, Gaboardi, Hsu, Sato 2020, *Hypothesis testing
  interpretations and Rényi differential privacy*, Theorem 21 (the same bound is
  Canonne–Kamath–Steinke 2020, Proposition 12):
  c = log((α−1)/α) − (log δ + log α)/(α−1) = (L + φ(λ))/λ with
  φ(λ) = λ·log(λ/(1+λ)) − log(1+λ).

Both read c = (L + φ(λ))/λ (φ = 0 for ``mironov2017``). Solving for δ gives the
reverse conversion log δ = λ·(R − ε) + φ(λ).

**Rounding.** Inputs are exact rationals; the transcendental parts L, φ, exp are
evaluated in Arb ball arithmetic (python-flint) at :data:`PREC` bits and turned
into exact rational intervals, so every returned :class:`Bounded` *contains* the
exact value: its ``upper`` end is a safe (ε, δ) claim, its ``lower`` end a safe
lower bound. The RDP enters as the proven interval of the rigorous engine; the
upper end of ε uses the upper end of R and of c, the lower end the lower ends.

An (ε, δ) guarantee with ε < 0 is no stronger than ε = 0, so ε-valued results
that describe a mechanism (order lists, :mod:`rdp_verify.accounting.optimal_order`) are
clipped at 0, as dp_accounting's ``compute_epsilon`` does; δ is clipped at 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

from flint import arb, ctx

from ..foundations.inputs import SGM, InputError, check_alpha, check_delta, check_epsilon, check_sigma
from ..foundations.results import Bounded, arb_to_bounded, to_arb
from ..foundations.run import Phase
from ..methods.rigorous import epsilon_bounds
from .options import CONVERSIONS, DPS

__all__ = [
    "CONVERSIONS",
    "step_rdp",
    "composed_rdp",
    "log_inv_delta",
    "conversion_offset",
    "epsilon_from_rdp",
    "delta_from_rdp",
    "OrderListResult",
    "epsilon_at_orders",
    "check_conversion",
]

PREC = 192  # bits for the conversion terms; every rounding is inside the balls
LOG_FLOOR = 10_000  # δ below e^−10000 is reported as the interval [0, e^−10000]


@lru_cache(maxsize=8192)
def step_rdp(q: Fraction, sigma: Fraction, alpha: Fraction, dps: int = DPS) -> Bounded:
    """Proven interval for ε_α of one SGM step (Theorem 4), cached per (q, σ, α, dps)."""
    return epsilon_bounds(SGM(q, sigma, alpha), dps)


def composed_rdp(phases: Sequence[Phase], alpha: Fraction, dps: int = DPS) -> Bounded:
    """Proven interval for R(α) = Σ T_i·ε_α(q_i, σ_i) (composition, Mironov 2017 Prop. 1)."""
    if not phases:
        raise InputError("a run needs at least one phase")
    for p in phases:  # runs accept σ ∈ [0.05, 1e6]; the RDP methods are validated on [0.1, 1e4]
        check_sigma(p.sigma)
        if not p.default:  # Theorem 4 is the SGM's: Poisson sampling, add/remove-one
            raise InputError(f"RDP accounting covers Poisson sampling with add-remove neighbours only, not sampler "
                             f"{p.sampler} with {p.neighbours} neighbours")
    parts = [step_rdp(p.q, p.sigma, alpha, dps) for p in phases]
    return Bounded.between(sum(p.steps * b.lower for p, b in zip(phases, parts)),
                   sum(p.steps * b.upper for p, b in zip(phases, parts)))


def check_conversion(conversion: str) -> None:
    """Refuse a conversion name that is not in :data:`CONVERSIONS`."""
    if conversion not in CONVERSIONS:
        raise InputError(f"conversion {conversion!r} is not one of {', '.join(CONVERSIONS)}")


def log_inv_delta(delta: Fraction) -> arb:
    """Ball for L = log(1/δ), δ ∈ [1e-40, 1) (:func:`~rdp_verify.foundations.inputs.check_delta`).
    Call under ``ctx.workprec``."""
    return -to_arb(check_delta(delta)).log()


def _phi(conversion: str, lam: Fraction) -> arb:
    """φ(λ): 0 (Mironov 2017 Prop. 3) or λ·log(λ/(1+λ)) − log(1+λ) (Balle et al. 2020 Thm 21)."""
    if conversion == "mironov2017":
        return arb(0)
    x = to_arb(lam)
    return x * (x / (1 + x)).log() - x.log1p()


def conversion_offset(conversion: str, alpha: Fraction, delta: Fraction) -> Bounded:
    """Proven interval for c(α, δ) = (log(1/δ) + φ(α − 1))/(α − 1), so that ε = R + c."""
    lam = check_alpha(alpha) - 1
    check_delta(delta)
    check_conversion(conversion)
    with ctx.workprec(PREC):
        return arb_to_bounded((log_inv_delta(delta) + _phi(conversion, lam)) / to_arb(lam))


def epsilon_from_rdp(rdp: Bounded, alpha: Fraction, delta: Fraction, conversion: str) -> Bounded:
    """Enclosure of ε = R + c(α, δ) for R in the interval ``rdp`` (not clipped at 0).

    The upper end is a proven (ε, δ)-DP guarantee for an (α, rdp.upper)-RDP mechanism.
    """
    c = conversion_offset(conversion, alpha, delta)
    return Bounded.between(rdp.lower + c.lower, rdp.upper + c.upper)


def delta_from_rdp(rdp: Bounded, alpha: Fraction, epsilon: Fraction, conversion: str) -> Bounded:
    """Enclosure of δ = min(1, exp(λ·(R − ε) + φ(λ))), λ = α − 1: the reverse conversion.

    Increasing in R, so the upper end uses rdp.upper: an (α, R)-RDP mechanism is
    (ε, δ.upper)-DP.
    """
    lam = check_alpha(alpha) - 1
    check_epsilon(epsilon)
    check_conversion(conversion)
    with ctx.workprec(PREC):
        phi = _phi(conversion, lam)
        lo, hi = (_clipped_exp(to_arb(lam * (r - epsilon)) + phi) for r in (rdp.lower, rdp.upper))
    return Bounded.between(lo.lower, hi.upper)


def _clipped_exp(x: arb) -> Bounded:
    """Enclosure of min(1, e^x); δ ≥ 1 says nothing, so large x is never exponentiated.

    Below e^−LOG_FLOOR (x.upper < −LOG_FLOOR) the enclosure is [0, e^−LOG_FLOOR]:
    true, and it keeps the exact rationals (and their decimal text) small.
    """
    if x >= 0:
        return Bounded(Fraction(1), Fraction(0))
    if x.upper() < -LOG_FLOOR:
        return Bounded.between(Fraction(0), arb_to_bounded(arb(-LOG_FLOOR).exp()).upper)
    e = arb_to_bounded(x.exp())
    return Bounded.between(max(e.lower, Fraction(0)), min(e.upper, Fraction(1)))


@dataclass(frozen=True)
class OrderListResult:
    """ε over a given list of orders, as a library computes it (min over the list)."""

    conversion: str
    best_order: Fraction  # the order with the smallest proven upper bound
    epsilon: Bounded  # encloses max(0, min over the list of R(α) + c(α, δ))
    values: tuple[tuple[Fraction, Bounded], ...]  # (α, enclosure of R(α) + c(α, δ)) per order


def epsilon_at_orders(phases: Sequence[Phase], delta: Fraction, conversion: str,
                      orders: Sequence[Fraction], dps: int = DPS) -> OrderListResult:
    """ε of the run at each order of ``orders`` and the minimum over them (rounded safely).

    This is what an RDP accountant with a fixed order list (TF Privacy, dp_accounting,
    Opacus) reports; the minimum over all real α is :func:`rdp_verify.accounting.optimal_order.optimal_epsilon`.
    """
    check_delta(delta)
    check_conversion(conversion)
    if not orders:
        raise InputError("the order list is empty")
    for a in orders:
        check_alpha(a)
    values = tuple((a, epsilon_from_rdp(composed_rdp(phases, a, dps), a, delta, conversion)) for a in orders)
    best_order, best = min(values, key=lambda v: v[1].upper)
    lo = max(Fraction(0), min(v.lower for _, v in values))
    return OrderListResult(conversion, best_order, Bounded.between(lo, max(Fraction(0), best.upper)), values)
