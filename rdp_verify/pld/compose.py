"""Composition of discrete privacy-loss distributions in exact integers with directed rounding.

A privacy-loss distribution (PLD) on a shifted grid a + h·ℤ is the list of P-masses m_i at losses
a + (o + i)·h, plus a mass m_∞ at loss +∞. The shift a = Σ_j c_j·log A_j is kept exactly, as rational
anchors A_j with integer counts c_j: one SGM step's grid may be anchored at a rational A ≠ 1
(:func:`rdp_verify.curves.discretize.anchor_for`), and shifts add under composition. For product pairs the PLD is the convolution of the factors' PLDs (the
losses add; Sommer, Meiser, Mohammadi 2019, PoPETs; Koskela, Jälkö, Honkela 2020, AISTATS), and the privacy curve is

    δ(ε) = Σ_i m_i·(1 − e^{ε − a − (o+i)h})_+ + m_∞                                  (1)

(it is E_P[(1 − e^{ε − L})_+], the hockey-stick divergence, with L = +∞ where Q = 0). (1) has
non-negative coefficients, so it is increasing in every mass, and the composed masses are
polynomials with non-negative coefficients in the factors' masses. Hence:

* **upper bounds** (``rounding = "up"``): masses are integers M_i ≥ 2^bits·m_i. A product is the
  exact integer convolution, divided by 2^bits rounding up; m_∞ of a product is bounded by
  a_∞ + b_∞ ≥ 1 − (1 − a_∞)(1 − b_∞); mass cut off at either end of the window is added to m_∞
  (moving P-mass to loss +∞ only raises (1)). Every computed δ is ≥ the exact δ of the composed
  dominating pairs.
* **lower bounds** (``rounding = "down"``): M_i ≤ 2^bits·m_i, products rounded down, mass cut off
  at either end dropped (dropping P-mass only lowers (1)); m_∞ = 0. Every computed δ is ≤ the
  exact δ of the composed dominated pairs.

The window kept after each product is the shortest one whose two cut-off ends each hold at most
a budget, found by bisection on exact integer sums; the cut-off mass is accounted for exactly as
above, so the budget only trades accuracy for speed. Mass cut from a PLD of m steps reappears in
each of the T/m copies of it that the T-step result contains (union bound), so a product standing
for m of the run's T steps may cut 2·B·m/(T·N) (N products in all): the cuts add up to at most 2B
in the final δ (plus one unit per product where an upper cut is rounded up). Products use FLINT's
``fmpz_poly`` multiplication (python-flint): exact, and bit for bit the same on every machine.

Cost: a product of lengths n and m costs one integer-polynomial multiplication, about
O((n + m)·bits·log) (Schönhage–Strassen via Kronecker substitution; a squaring passes the same object twice,
which FLINT squares, about 30% cheaper than a product); T steps take about 2·log2 T products by repeated
squaring. Around each product: the division by 2^bits (one FLINT pass over the coefficients, up to about half
of the product's time for dense 64-bit PLDs), the window (galloping, then bisection on halving segments: O(cut length)
coefficient reads) and the copy of the window. Measured on ``benchmarks/bench_events.py`` (Laplace and randomized
response, 100 uses, h = 1e-3): the products are 63% (Laplace) and 75% (randomized response) of the whole ε(δ)
bracket, the divisions 27% and 5% (dense against sparse PLDs), the windows 4%, the root searches 3-5%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from flint import arb, arb_poly, ctx, fmpz, fmpz_poly

from ..foundations.inputs import Refused
from ..foundations.results import arb_to_bounded, to_arb
from ..foundations.search import last_true

__all__ = ["PLD", "Shift", "Budget", "add_shifts", "shift_ball", "multiply", "power", "compose", "products_needed",
           "delta_at", "epsilon_root", "verified_root", "bits_for", "FIXED_POINT_GUARD_BITS"]

# fixed-point bits below δ's scale: rounding adds at most (products)·(length)·2^−bits ≈ 2^22·2^−bits to δ, far below
# tolerance·δ
FIXED_POINT_GUARD_BITS = 40


Shift = tuple[tuple[Fraction, int], ...]  # ((anchor A, count c), ...): the shift Σ c·log A


def add_shifts(a: Shift, b: Shift) -> Shift:
    """The shift of a product: the counts of each log A add (zero counts dropped)."""
    counts: dict[Fraction, int] = dict(a)
    for q, c in b:
        counts[q] = counts.get(q, 0) + c
    return tuple(sorted((q, c) for q, c in counts.items() if c))


def shift_ball(shift: Shift) -> arb:
    """A ball containing Σ c·log A (call under a working precision)."""
    total = arb(0)
    for anchor, c in shift:
        total += c * to_arb(anchor).log()
    return total


@dataclass(frozen=True)
class PLD:
    """A discrete privacy-loss distribution in fixed point (see the module docstring)."""

    coeffs: fmpz_poly  # coefficient i: mass at loss shift + (offset + i)·h, in units of 2^−bits
    offset: int
    inf: int  # mass at +∞ in units of 2^−bits (0 for lower bounds)
    bits: int
    h: Fraction
    rounding: str  # "up" or "down"
    steps: int = 1  # how many composed steps this PLD stands for
    shift: Shift = ()  # the losses' shift Σ c·log A as sorted ((A, c), ...), exact

    @classmethod
    def from_masses(cls, masses: Sequence[int], offset: int, inf: int, bits: int, h: Fraction,
                    rounding: str, shift: Shift = ()) -> "PLD":
        if rounding not in ("up", "down"):
            raise ValueError("rounding must be 'up' or 'down'")
        if rounding == "down" and inf:
            raise ValueError("a lower-bound PLD has no mass at +∞")
        return trim(cls(fmpz_poly(list(masses)), offset, inf, bits, h, rounding, 1, shift))

    @property
    def length(self) -> int:
        return self.coeffs.length()

    def total(self) -> int:
        """Σ M_i + M_∞ (units of 2^−bits)."""
        return int(self.coeffs(1)) + self.inf


@dataclass(frozen=True)
class Budget:
    """Cut-off allowance: at most ``total`` (units of 2^−bits) in the final δ, over ``products`` products."""

    total: int
    steps: int  # T, the steps of the whole run
    products: int  # an upper bound on the number of products
    max_length: int | None = None  # a composed PLD longer than this is refused (InputError Refused): see multiply

    def per_cut(self, steps: int) -> int:
        return self.total * steps // (self.steps * self.products)


def trim(p: PLD) -> PLD:
    """Drop zero coefficients at the low end (exact: no mass moves; fmpz_poly drops the high ones)."""
    c, low = p.coeffs, 0
    while low < c.length() and c[low] == 0:
        low += 1
    if low == 0:
        return p
    return PLD(c.right_shift(low), p.offset + low, p.inf, p.bits, p.h, p.rounding, p.steps, p.shift)


def _rescale(c: fmpz_poly, bits: int, rounding: str) -> fmpz_poly:
    """⌊c_i/2^bits⌋ (``down``) or ⌈c_i/2^bits⌉ (``up``) of every coefficient c_i ≥ 0 of a product.

    python-flint's ``fmpz_poly // d`` is polynomial division by the constant d: a coefficient with |c_i| ≥ d
    becomes ⌊c_i/d⌋, one with |c_i| < d becomes 0. That is the floor for 0 ≤ c_i, but not for −d < c_i < 0,
    so the textbook ⌈c/d⌉ = −⌊−c/d⌋ would turn 0 < c_i < d into 0: an upper bound rounded down (found in
    2026-11; it dropped at most length·2^−bits of mass per product). Up is therefore ⌊(c_i + d − 1)/d⌋,
    whose numerators are all ≥ 0. tests/curves/test_compose.py checks both against Python's integers.
    """
    scale = fmpz(2) ** bits
    if rounding == "down":
        return c // scale
    return (c + _pad(bits, c.length())) // scale


_PADS: dict[int, fmpz_poly] = {}  # bits -> the polynomial Σ_i (2^bits − 1)·x^i, long enough so far


def _pad(bits: int, n: int) -> fmpz_poly:
    """Σ_{i<n} (2^bits − 1)·x^i, cut from a cached longer one (building it from a Python list costs more than the
    division it serves)."""
    pad = _PADS.get(bits)
    if pad is None or pad.length() < n:
        pad = _PADS[bits] = fmpz_poly([fmpz(2) ** bits - 1] * max(n, 2 * (pad.length() if pad is not None else 0)))
    return pad.truncate(n)


def _prefix(c: fmpz_poly, n: int) -> int:
    return int(c.truncate(n)(1)) if n > 0 else 0


def _suffix(c: fmpz_poly, n: int) -> int:
    return int(c.right_shift(n)(1)) if n < c.length() else 0


def _most_within(c: fmpz_poly, bound: int, budget: int, from_top: bool) -> tuple[int, int]:
    """(m, s): the largest m < ``bound`` whose m coefficients at one end of c — the lowest, or with ``from_top`` the
    highest — sum to s ≤ budget (c_k ≥ 0, budget ≥ 0; the sums are exact and grow with m, so m is unique).

    Found in O(m) coefficient reads instead of O(length·log) for a bisection on end sums: galloping away from the
    end (m = 1, 3, 7, ...), then bisection on the bracketing segment, halving the segment it sums. The segment
    between a and b coefficients from the end is kept as a polynomial; its part nearer the end is its low part
    (from the bottom) or its high part (from the top).
    """
    n, a, total, step = c.length(), 0, 0, 1
    while a + step < bound:
        s = _suffix(c, n - a - step) if from_top else _prefix(c, a + step)
        if s > budget:
            break
        a, total, step = a + step, s, 2 * step
    b = min(a + step, bound)  # the answer lies in [a, b): the a-sum ≤ budget, and b = bound or the b-sum > budget
    seg = c.truncate(n - a).right_shift(n - b) if from_top else c.truncate(b).right_shift(a)
    while b - a > 1:
        mid = (a + b) // 2
        near, far = (seg.right_shift(b - mid), seg.truncate(b - mid)) if from_top else \
            (seg.truncate(mid - a), seg.right_shift(mid - a))
        s = total + int(near(1))
        if s <= budget:
            seg, a, total = far, mid, s
        else:
            seg, b = near, mid
    return a, total


def _window(c: fmpz_poly, budget: int) -> tuple[int, int, int]:
    """(lo, hi, cut): keep coefficients lo..hi−1; cut = exact mass outside (≤ 2·budget)."""
    n = c.length()
    lo, below = _most_within(c, n, budget, from_top=False)  # cut at most ``budget`` below
    if _suffix(c, lo) <= budget:
        hi = lo
    else:  # the smallest hi > lo with suffix(hi) ≤ budget: the most coefficients from the top, fewer than n − lo
        m, above = _most_within(c, n - lo, budget, from_top=True)
        hi = n - m
    if hi <= lo:
        hi = lo + 1
        above = _suffix(c, hi)
    return lo, hi, below + above


def multiply(a: PLD, b: PLD, budget: Budget) -> PLD:
    """The PLD of the product pair, rounded in the direction of ``a`` and cut to a window (module docstring).

    Upper bounds are cut on the exact product, before rounding: the cut-off mass (exact, in units of 2^−2·bits)
    goes to +∞ rounded up, and only the kept coefficients are rounded up. Rounding first would keep every far-tail
    coefficient below one unit as one whole unit, and such tails (each below the budget only in total) would then
    never be cut: the composed length would grow with every product.
    """
    if (a.bits, a.h, a.rounding) != (b.bits, b.h, b.rounding):
        raise ValueError("PLDs on different grids, scales or rounding directions")
    c = a.coeffs * b.coeffs
    steps, inf, offset, shift = a.steps + b.steps, a.inf + b.inf, a.offset + b.offset, add_shifts(a.shift, b.shift)
    up, per_cut = a.rounding == "up", budget.per_cut(steps)
    if not up:
        c = _rescale(c, a.bits, "down")
    if c.length() == 0:
        return PLD(c, offset, inf, a.bits, a.h, a.rounding, steps, shift)
    lo, hi, cut = _window(c, per_cut << a.bits if up else per_cut)
    if budget.max_length is not None and hi - lo > budget.max_length:  # a check's settings asked for more work than
        # any command does (the length cannot be known before composing): stop here, before the next product
        raise Refused(f"settings: a composed privacy-loss distribution of {hi - lo} grid points, beyond the "
                      f"{budget.max_length} any command composes")
    kept = c.right_shift(lo).truncate(hi - lo)
    if up:
        kept = _rescale(kept, a.bits, "up")
        inf += -(-cut >> a.bits)  # ⌈cut/2^bits⌉: the cut-off mass moved to loss +∞
    return trim(PLD(kept, offset + lo, inf, a.bits, a.h, a.rounding, steps, shift))


def power(p: PLD, t: int, budget: Budget) -> PLD:
    """The t-fold composition by repeated squaring (at most 2·log2 t products)."""
    if t < 1:
        raise ValueError("t must be at least 1")
    result: PLD | None = None
    base = p
    while True:
        if t & 1:
            result = base if result is None else multiply(result, base, budget)
        t >>= 1
        if not t:
            return result
        base = multiply(base, base, budget)


def products_needed(steps: Sequence[int]) -> int:
    """An upper bound on the products :func:`compose` makes for phases of these step counts."""
    return sum(2 * max(t.bit_length(), 1) for t in steps) + len(steps)


def compose(parts: Sequence[tuple[PLD, int]], budget: Budget) -> PLD:
    """Each phase's PLD composed its number of times, then the phases together."""
    total = None
    for pld, steps in parts:
        composed = power(pld, steps, budget)
        total = composed if total is None else multiply(total, composed, budget)
    return total


# -- reading the curve off a composed PLD -------------------------------------------------------

def _tail_sums(p: PLD, first: int) -> tuple[int, arb]:
    """(Σ_{i ≥ first} M_i exactly, a ball for Σ_{i ≥ first} M_i·e^{−ℓ_i}); call under a working precision."""
    tail = p.coeffs.right_shift(first) if first > 0 else p.coeffs
    if tail.length() == 0:
        return 0, arb(0)
    hx = to_arb(p.h)
    return int(tail(1)), arb_poly(tail)((-hx).exp()) * (-hx * (p.offset + first) - shift_ball(p.shift)).exp()


def _loss(p: PLD, i: int) -> arb:
    """A ball containing the loss of index i, shift + (offset + i)·h."""
    return shift_ball(p.shift) + to_arb(Fraction(p.offset + i) * p.h)


def _first_above(p: PLD, epsilon: Fraction) -> int:
    """The first index whose loss may exceed ε (its ball's upper end does), clamped to 0..length.

    Below it every loss is proven ≤ ε, so its term of (1) is 0. Losses whose balls straddle ε are
    handled by :func:`delta_at`.
    """
    if not p.shift:
        k = epsilon / p.h
        return min(max(k.numerator // k.denominator + 1 - p.offset, 0), p.length)
    eps = to_arb(epsilon)
    guess = int(((eps - shift_ball(p.shift)) / to_arb(p.h)).mid().floor().unique_fmpz()) - p.offset
    i = min(max(guess - 2, 0), p.length)
    while i < p.length and not _loss(p, i).upper() > eps:
        i += 1
    while i > 0 and _loss(p, i - 1).upper() > eps:
        i -= 1
    return i


def delta_at(p: PLD, epsilon: Fraction, prec: int) -> arb:
    """A ball containing (1) at the rational ε for the masses M_i·2^−bits.

    (1) is V_m, the sum cut at the first index m whose loss exceeds ε, V_k = Σ_{i ≥ k} M_i(1 − e^{ε−ℓ_i}) + M_∞.
    When losses k..l−1 straddle ε in rounding (l the first proven above it; only with an irrational shift),
    m is one of k..l, and every other cut adds non-positive terms or drops positive ones, so V_k..V_l ≤ V_m:
    the union of their balls encloses (1).
    """
    with ctx.workprec(prec):
        first = _first_above(p, epsilon)
        last = first
        if p.shift:
            eps = to_arb(epsilon)
            while last < p.length and not _loss(p, last).lower() > eps:
                last += 1
        x, scale = to_arb(epsilon).exp(), arb(2) ** p.bits
        value = None
        for k in range(first, last + 1):
            mass, weighted = _tail_sums(p, k)
            v = (arb(mass) + p.inf - x * weighted) / scale
            value = v if value is None else value.union(v)
        return value


def epsilon_root(p: PLD, delta: Fraction, prec: int) -> arb | None:
    """An estimate (a ball, not a proof) of the root ε of (1) = δ, possibly negative; None if (1) never
    exceeds δ (its supremum, the total mass, is ≤ δ); +inf if (1) > δ for every ε (the mass at +∞
    alone exceeds δ).

    (1) is continuous and decreasing; on (ℓ_i, ℓ_{i+1}] it equals (A + M_∞ − e^ε·B)·2^−bits with A, B
    the tail sums from i + 1, so its root there is log((A + M_∞ − 2^bits·δ)/B). Callers verify the
    root they use with :func:`delta_at`.
    """
    with ctx.workprec(prec):
        target = to_arb(delta) * arb(2) ** p.bits
        if p.inf >= target:
            return arb.pos_inf()

        # the probes' tail sums as in _tail_sums, with the fmpz_poly evaluated at the ball e^{−h} directly (no
        # arb_poly built per probe) and the constant balls made once: other, still rigorous, balls, which may
        # decide a probe within their radius of δ differently; the returned root is computed as before
        hx = to_arb(p.h)
        x, shift = (-hx).exp(), shift_ball(p.shift)

        def above(i: int) -> bool:  # (1) at ℓ_i exceeds δ
            tail = p.coeffs.right_shift(i + 1)
            if tail.length() == 0:
                return bool(arb(p.inf) > target)
            weighted = tail(x) * (-hx * (p.offset + i + 1) - shift).exp()
            loss = shift + to_arb(Fraction(p.offset + i) * p.h)
            return bool(arb(int(tail(1))) + p.inf - loss.exp() * weighted > target)

        # the root lies in (ℓ_lo, ℓ_lo+1], ℓ_{−1} = −∞
        lo = last_true(-1, p.length - 1 if above(0) else 0, above)
        mass, weighted = _tail_sums(p, lo + 1)
        excess = arb(mass) + p.inf - target
        if not excess > 0 or not weighted > 0:
            return None
        return (excess / weighted).log()


def bits_for(delta: Fraction) -> int:
    """Fixed-point bits for a δ scale: :data:`FIXED_POINT_GUARD_BITS` below it, a multiple of 32 (exact: no float
    for tiny δ)."""
    scale = max(0, delta.denominator.bit_length() - delta.numerator.bit_length() + 1)  # ≥ log2(1/δ)
    return 32 * math.ceil((FIXED_POINT_GUARD_BITS + scale) / 32)


def verified_root(p: PLD, delta: Fraction, prec: int, side: str) -> Fraction | None:
    """An ε ≥ 0 with δ_p(ε) ≤ δ proven (side "upper"; None: no finite one) or with δ_p(ε) > δ proven
    (side "lower"; 0 when none is found, a trivially true lower end): :func:`epsilon_root`'s estimate, moved
    outward in doubling steps until :func:`delta_at` proves the inequality (Arb, at ``prec`` bits)."""
    target = to_arb(delta)
    root = epsilon_root(p, delta, prec)
    if side == "upper":
        if root is not None and not root.is_finite():
            return None  # the mass at +∞ alone exceeds δ
        eps = Fraction(0) if root is None else max(arb_to_bounded(root.upper()).value, Fraction(0))
        step = max(abs(eps), p.h) / 2 ** 60  # relative to ε (or to the grid step): ε may be 1e-16
        for _ in range(200):
            if delta_at(p, eps, prec).upper() <= target:
                return eps
            eps += step
            step *= 2
        raise ArithmeticError("could not verify an upper end of epsilon")
    if root is None or not root.is_finite():
        return Fraction(0)
    eps = arb_to_bounded(root.lower()).value
    step = max(abs(eps), p.h) / 2 ** 60
    for _ in range(200):
        if eps <= 0:
            return Fraction(0)
        if delta_at(p, eps, prec).lower() > target:
            return eps
        eps -= step
        step *= 2
    return Fraction(0)
