"""Proven comparisons of the SGM's Rényi curve ε_α with the lines ξ + ρα over order ranges.

zCDP, (ξ, ρ)-zCDP and tCDP (MTZ19 Definition 12, via eq. (14)) all say
ε_α ≤ ξ + ρα for the orders α in a range (1, T), T ≤ ∞, where
ε_α = max(D_α(μ‖μ0), D_α(μ0‖μ)) covers both adjacent directions (Theorem 4). What
is proven, and how:

* **Above the Gaussian line** (every α, analytic): Rényi divergence is jointly
  quasi-convex (van Erven–Harremoës 2014, Theorem 13), so
  D_α(μ0 ‖ (1−q)μ0 + qμ1) ≤ max(D_α(μ0‖μ0), D_α(μ0‖μ1)) = α/(2σ²) and likewise in
  the other direction: ε_α ≤ α/(2σ²). Hence ρ ≥ 1/(2σ²), ξ ≥ 0 always holds.
* **Below it** the claim fails for large α: w ≥ q·μ1/μ0 gives
  D_α(μ‖μ0) ≥ α/(2σ²) − α·log(1/q)/(α − 1), which exceeds ξ + ρα once
  α ≥ max(2, (2 log(1/q) + ξ)/(1/(2σ²) − ρ) + 1) (:func:`analytic_witness`).
  So sup_α ε_α/α = 1/(2σ²) for every q: subsampling does not improve zCDP.
* **On a finite range** (:func:`sweep`): the claim is K_d(α) ≤ (α − 1)(ξ + ρα) for
  both directions d, with K_A(α) = log A_α = K(α) and K_B(α) = log B_α = K(1 − α),
  both convex in α (log-MGFs). On a cell [a, b] each K_d lies below its chord through
  the Arb upper bounds at a and b (K_d(1) = 0 exactly for the first cell (1, b]); the
  chord minus the convex quadratic (α − 1)(ξ + ρα) is concave, and its maximum on
  [a, b] is computed exactly in rationals (:func:`chord_excess_max`). A cell is
  proven when that maximum is ≤ 0 for both directions.
  A *witness* is an order α < T whose Arb lower bound of ε_α exceeds ξ + ρα.
* **Best ρ on (1, T)** (:func:`sup_ratio`): branch and bound on ε_α/α; ε_α is
  non-decreasing in α (vEH14, Theorem 3), so ε_α/α ≤ ε_b/a on [a, b] from above, and
  proven ε_α/α at interior orders from below.

Orders are exact rationals; enclosures are used for α ≤ 1e6 (the supported domain).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from fractions import Fraction

from flint import ctx

from ..foundations.inputs import ALPHA_MAX
from ..foundations.results import arb_to_bounded, to_arb
from .privacy_loss import DIRECTIONS, Direction, SGMLoss

__all__ = [
    "Witness",
    "SweepResult",
    "RatioBounds",
    "gaussian_line_holds",
    "analytic_witness",
    "search_witness",
    "sweep",
    "chord_excess_max",
    "sup_ratio",
    "witness_log_mgf",
    "DEFAULT_BUDGET",
]

DEFAULT_BUDGET = 400  # order evaluations per search (a few ms each)
FIRST_STEP = Fraction(1, 16)


@dataclass(frozen=True)
class Witness:
    """An order α at which a proven lower bound of D_α exceeds the claimed ξ + ρα."""

    alpha: Fraction
    direction: Direction
    divergence_lower: Fraction
    claimed: Fraction
    source: str


@dataclass(frozen=True)
class SweepResult:
    """ε_α ≤ ξ + ρα is proven on (1, proven_to]; ``witness`` refutes it (or None)."""

    proven_to: Fraction
    witness: Witness | None
    evaluations: int
    exhausted: bool


@dataclass(frozen=True)
class RatioBounds:
    """sup of ε_α/α over (1, T) lies in [lower, upper]; ``argmax`` attains ``lower``."""

    lower: Fraction
    upper: Fraction
    argmax: Fraction | None
    evaluations: int
    proof: str


def gaussian_line_holds(loss: SGMLoss, xi: Fraction, rho: Fraction) -> bool:
    """True when ε_α ≤ α/(2σ²) ≤ ξ + ρα for every α > 1 (quasi-convexity, exact test)."""
    return xi >= 0 and rho >= 1 / (2 * loss.s2)


def _enclosed_witness(loss: SGMLoss, alpha: Fraction, xi: Fraction, rho: Fraction) -> Witness | None:
    claimed = xi + rho * alpha
    for direction in DIRECTIONS:
        d = loss.divergence(alpha, direction)
        if d.lower > claimed:
            return Witness(alpha, direction, d.lower, claimed, "Arb enclosure of K (rdp_verify.rigorous)")
    return None


def analytic_witness(loss: SGMLoss, xi: Fraction, rho: Fraction) -> Witness | None:
    """A witness from D_α(μ‖μ0) ≥ α/(2σ²) − α log(1/q)/(α − 1), when ρ < 1/(2σ²).

    The bound is evaluated in Arb; α is a rational chosen as in the module docstring.
    """
    gap = 1 / (2 * loss.s2) - rho
    if gap <= 0:
        return None
    with ctx.workprec(128):
        log_inv_q = arb_to_bounded((1 / to_arb(loss.q)).log()).upper
    alpha = max(Fraction(2), Fraction(int((2 * log_inv_q + max(xi, Fraction(0))) / gap) + 2))
    with ctx.workprec(128):
        a = to_arb(alpha)
        lower = arb_to_bounded(a / (2 * to_arb(loss.s2)) + a * to_arb(loss.q).log() / (a - 1)).lower
    claimed = xi + rho * alpha
    if lower <= claimed:  # cannot happen by the choice of α; kept as a guard against a wrong proof
        return None
    return Witness(alpha, "mu||mu0", lower, claimed, "analytic: A_alpha >= q^alpha exp(alpha(alpha-1)/(2 sigma^2))")


def _grid(end: Fraction | None) -> list[Fraction]:
    """Orders 1 + 2^{k/2}/64 up to min(end, 1e6), exclusive of end (the range is open)."""
    out, k = [], 0
    while True:
        step = Fraction(2 ** (k // 2) * (3 if k % 2 else 2), 128)  # 1/64, 3/128, 1/32, ... ≈ √2 ratio
        alpha = 1 + step
        if alpha > ALPHA_MAX or (end is not None and alpha >= end):
            return out
        out.append(alpha)
        k += 1


def search_witness(loss: SGMLoss, xi: Fraction, rho: Fraction, end: Fraction | None) -> tuple[Witness | None, int]:
    """The first grid order in (1, end) with a proven violation, else the analytic witness (end = ∞)."""
    grid = _grid(end)
    for i, alpha in enumerate(grid):
        w = _enclosed_witness(loss, alpha, xi, rho)
        if w is not None:
            return w, i + 1
    w = analytic_witness(loss, xi, rho) if end is None else None
    if w is not None and end is not None and w.alpha >= end:
        w = None
    return w, len(grid)


def chord_excess_max(a: Fraction, b: Fraction, ka: Fraction, kb: Fraction,
                     c2: Fraction, c1: Fraction, c0: Fraction) -> Fraction:
    """max over x ∈ [a, b] of chord(x) − (c2·x² + c1·x + c0), exactly (c2 ≥ 0).

    chord is the line through (a, ka) and (b, kb); for a convex K with K(a) ≤ ka and
    K(b) ≤ kb this bounds max (K(x) − quadratic) on the cell from above.
    """
    slope = (kb - ka) / (b - a)
    if c2 > 0:
        x = min(b, max(a, (slope - c1) / (2 * c2)))
    else:
        x = b if slope - c1 >= 0 else a
    return ka + slope * (x - a) - (c2 * x * x + c1 * x + c0)


def _cell_proven(loss: SGMLoss, a: Fraction, b: Fraction, xi: Fraction, rho: Fraction) -> bool:
    """K_d(α) ≤ (α − 1)(ξ + ρα) = ρα² + (ξ − ρ)α − ξ on [a, b] for both directions (chords)."""
    for ga, gb in ((a, b), (1 - a, 1 - b)):  # K_A(α) = K(α), K_B(α) = K(1 − α)
        ka = loss.k(ga).upper
        kb = loss.k(gb).upper
        if chord_excess_max(a, b, ka, kb, rho, xi - rho, -xi) > 0:
            return False
    return True


def sweep(loss: SGMLoss, xi: Fraction, rho: Fraction, end: Fraction, budget: int = DEFAULT_BUDGET,
          tol: Fraction | None = None) -> SweepResult:
    """Prove ε_α ≤ ξ + ρα on (1, end) cell by cell from the left, or find a witness.

    Cells (chord test above) grow while they are proven and shrink when not; a failed
    cell end b < end is tested as a witness. With ``tol`` the search does not stop at
    the first witness: it keeps pushing the proven prefix towards the smallest witness
    found, until [proven_to, witness] is narrower than tol·proven_to (largest ω).
    """
    a, step, start, witness = Fraction(1), FIRST_STEP, loss.calls, None
    limit = end
    while a < limit and loss.calls - start < budget:
        b = min(limit, _short(a + step * a, a))
        if _cell_proven(loss, a, b, xi, rho):
            a, step = b, step * 2
            continue
        if b < limit:
            w = _enclosed_witness(loss, b, xi, rho)
            if w is not None:
                witness, limit = w, b
                if tol is None or (b - a) <= tol * a:
                    break
                continue
        step /= 2
        if step < Fraction(1, 10**12):
            break  # stuck: the claim is (numerically) tight here
    if witness is not None and tol is not None and (limit - a) > tol * a:
        exhausted = True
    else:
        exhausted = witness is None and a < end
    return SweepResult(a, witness, loss.calls - start, exhausted)


def _short(x: Fraction, floor: Fraction) -> Fraction:
    """x rounded down to 6 decimals when that stays above ``floor`` (readable orders)."""
    y = Fraction(int(x * 10**6), 10**6)
    return y if y > floor else x


def sup_ratio(loss: SGMLoss, end: Fraction, budget: int = DEFAULT_BUDGET, tol: Fraction = Fraction(1, 10**6)) -> RatioBounds:
    """Proven bounds on ρ*(T) = sup_{α ∈ (1, T)} ε_α/α, the best tCDP ρ for the range.

    Upper: max over cells [a, b] covering (1, T] of ε_b^up/a (ε_b^up for the first
    cell (1, b]); lower: the best proven ε_α^low/α at a cell midpoint α < T. Cells
    with the largest upper bound are split first until upper ≤ (1 + tol)·lower.
    """
    if loss.gaussian:
        exact = 1 / (2 * loss.s2)
        return RatioBounds(exact, exact, None, 0, "q = 1: eps_alpha/alpha = 1/(2 sigma^2) exactly")

    def upper_of(a: Fraction, b: Fraction) -> Fraction:
        return loss.epsilon(b).upper / a

    best_lower, argmax, start = Fraction(0), None, loss.calls
    edges = [Fraction(1)] + _grid(end)[::3] + [end]
    heap = [(-upper_of(a, b), a, b) for a, b in zip(edges[:-1], edges[1:])]
    heapq.heapify(heap)
    while heap and loss.calls - start < budget:
        neg_u, a, b = heap[0]
        if -neg_u <= best_lower * (1 + tol):
            break
        heapq.heappop(heap)
        m = _short((a + b) / 2 if a > 1 else 1 + (b - 1) / 4, a)
        eps_m = loss.epsilon(m)
        if eps_m.lower / m > best_lower:
            best_lower, argmax = eps_m.lower / m, m
        heapq.heappush(heap, (-upper_of(a, m), a, m))
        heapq.heappush(heap, (-upper_of(m, b), m, b))
    upper = -heap[0][0]
    proof = ("eps_alpha non-decreasing in alpha: on a cell [a, b], eps_alpha/alpha <= eps_b/a "
             "(Arb upper bounds); lower bound = proven eps_alpha/alpha at an interior order")
    return RatioBounds(best_lower, upper, argmax, loss.calls - start, proof)


def witness_log_mgf(w: Witness) -> tuple[Fraction, Fraction]:
    """The witness in Definition 12's form: (λ·D_lower, λ·claimed) with λ = α − 1 (eq. (14))."""
    lam = w.alpha - 1
    return lam * w.divergence_lower, lam * w.claimed
