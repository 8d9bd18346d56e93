"""Two discrete pairs on a loss grid log A + h·ℤ that bracket one SGM step: one dominates it, one is dominated.

The pairs are built from the step's curve H (:class:`rdp_verify.curves.single_step.StepCurve`, or the replace-one
curves of :mod:`rdp_verify.curves.replace_one`) by the constructions of :mod:`rdp_verify.pld.pairs`, which know no
mechanism and prove the pairs: connect the dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, PoPETs) above,
lowered chords and a proven convex hull below, the add direction by the perspective map, and masses in fixed point
rounded to the safe side (:mod:`rdp_verify.pld.compose`). What is specific to the step is here: the grid, the
points evaluated and the one-step pairs (:data:`PAIRS`).

**The grid** (:func:`grid_range`): the anchor A is 1, or just above the sliver where Q's mass of the
likelihood ratio sits for σ ≪ 1 (:func:`anchor_for`: otherwise the dominated pair collapses); the
range reaches where each direction's tail has mass below the per-step allowance. With a budget,
the curve is evaluated only at :func:`grid_points` (every 2^j-th point where it is nearly linear);
the masses of the points skipped are 0 and both constructions are unchanged (a cell is then
the span between consecutive evaluated points).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath

from ..pld.grid import Grid, precision
from ..pld.pairs import curve_pairs
from .replace_one import ReplaceOneCurve, SymmetrisedCurve, replace_loss_scale, replace_tail
from .single_step import StepCurve

__all__ = ["PAIRS", "StepPLD", "discretize", "grid_points", "grid_range", "anchor_for", "loss_scale"]

# the one-step pairs: SG(q, σ) under add/remove; replace-one under Poisson sampling (the mixture pair); replace-one
# with fixed-size batches (upper: the symmetrised remove curve of SG(q, σ/2); lower: SG(q, σ/2)'s own pairs)
PAIRS = ("sgm", "replace-one", "fixed-replace-one")


@dataclass(frozen=True)
class StepPLD:
    """Fixed-point privacy-loss distributions of one SGM step, both bounds and both directions.

    ``remove_upper[i]`` is an integer ≥ 2^bits·p̄_k (P-mass of the dominating pair at loss
    log(anchor) + kh, k = k_lo + i); ``remove_upper_inf`` ≥ 2^bits·(its P-mass at +∞).
    ``remove_lower[i]`` ≤ 2^bits·π_k (the dominated pair). ``add_upper[i]`` / ``add_lower[i]`` are the
    same for the add direction at loss −log(anchor) − kh (P-mass p_k/x_k); ``add_upper_inf`` bounds its
    mass at +∞.
    """

    q: Fraction
    sigma: Fraction
    grid: Grid
    bits: int
    remove_upper: tuple[int, ...]
    remove_upper_inf: int
    remove_lower: tuple[int, ...]
    add_upper: tuple[int, ...]
    add_upper_inf: int
    add_lower: tuple[int, ...]
    checks: dict[str, Any] = field(default_factory=dict)
    pair: str = "sgm"  # which one-step pairs (PAIRS) were discretised


def discretize(q: Fraction, sigma: Fraction, grid: Grid, bits: int, budget: Fraction | None = None,
               pair: str = "sgm") -> StepPLD:
    """The two fixed-point discrete pairs of one step on ``grid`` (module docstring): of SG(q, σ) (``pair``
    "sgm"), of the replace-one mixture pair of Poisson sampling ("replace-one"), or for fixed-size batches
    under replace-one ("fixed-replace-one": the upper pair from the symmetrised curve of SG(q, σ/2), the
    lower pairs from SG(q, σ/2)'s remove curve; :mod:`rdp_verify.curves.replace_one`).

    With a ``budget`` (SG's curve only), the curve is evaluated only at the grid points :func:`grid_points`
    selects (where it is nearly linear, every 2^j-th point); the pairs' atoms lie on those points, the masses of the
    others are 0. Both pairs stay proven (a chord over several cells is as valid as over one); only
    their distance from the curve grows, by at most the budget. Where the dominated pair cannot be
    verified on this grid, its masses are all 0: every δ read off it is 0, a true lower bound.
    """
    prec = precision(bits, grid.h)
    if pair not in PAIRS:
        raise ValueError(f"pair={pair!r}: one of {', '.join(PAIRS)}")
    if pair == "sgm":
        curve = lower_curve = StepCurve(q, sigma, prec)
    elif pair == "replace-one":
        curve = lower_curve = ReplaceOneCurve(q, sigma, prec)
    else:
        curve, lower_curve = SymmetrisedCurve(q, sigma, prec), StepCurve(q, sigma / 2, prec)
    ks = grid_points(q, sigma, grid, budget) if budget is not None and pair == "sgm" \
        else list(range(grid.k_lo, grid.k_hi + 1))
    return StepPLD(q=q, sigma=sigma, grid=grid, bits=bits, **curve_pairs(curve, lower_curve, grid, ks, bits, prec),
                   pair=pair)



_SELECTED: dict[tuple[Fraction, Fraction, Grid, Fraction], list[int]] = {}  # the last few selections (a check
# counts them before it discretises, with the same arguments)


class TooManyPoints(ValueError):
    """:func:`grid_points` would select more than its ``max_points``."""


def grid_points(q: Fraction, sigma: Fraction, grid: Grid, budget: Fraction, max_points: int | None = None) -> list[int]:
    """:func:`_grid_points`, remembered for the last few arguments; with ``max_points``, the walk stops and
    raises :class:`TooManyPoints` as soon as it selects more (so a forged budget costs no more than that)."""
    key = (q, sigma, grid, budget)
    if key not in _SELECTED:
        points = _grid_points(q, sigma, grid, budget, max_points)
        while len(_SELECTED) >= 4:
            del _SELECTED[next(iter(_SELECTED))]
        _SELECTED[key] = points
    points = _SELECTED[key]
    if max_points is not None and len(points) > max_points:
        raise TooManyPoints(f"more than {max_points} grid points selected")
    return list(points)


def _grid_points(q: Fraction, sigma: Fraction, grid: Grid, budget: Fraction, max_points: int | None) -> list[int]:
    """The grid points at which the curve is evaluated: walking away from the peak of H'', each span is as
    long as 2^j grid cells allows while the chord's Taylor gap Δ²·H''/8 stays within ``budget`` (H'' =
    σφ(z/σ)/t decreases away from its peak, so the largest H'' of a span is at its end nearer the peak).
    The walk re-tests the stride at every point (about two evaluations per point kept). Decided in
    mpmath at a fixed precision: the same points on every machine.
    """
    with mpmath.workdps(_DPS):
        s, qm, hm = (mpmath.mpf(x.numerator) / x.denominator for x in (sigma, q, grid.h))
        a = mpmath.mpf(grid.anchor.numerator) / grid.anchor.denominator
        offset = a - 1 + qm
        limit = mpmath.mpf(budget.numerator) / budget.denominator

        def t(k: int) -> Any:
            return a * mpmath.expm1(k * hm) + offset

        at_near: dict[int, Any] = {}  # near -> (H''(x_near), e^{near·h}): the walk asks at each point about twice

        def gap(near: int, far: int) -> Any:  # Δ²·H''(x_near)/8 for the span between the two points
            if near not in at_near:
                tk = t(near)
                at_near.clear()  # the walk never returns to an earlier point
                at_near[near] = None if tk <= 0 else (s * mpmath.npdf(_z_at(q, sigma, tk) / s) / tk,
                                                      mpmath.exp(near * hm))
            if at_near[near] is None:
                return mpmath.mpf(0)
            curvature, e_near = at_near[near]
            width = a * abs(mpmath.exp(far * hm) - e_near)
            return width * width * curvature / 8

        # H = 1 − x where t ≤ 0: the grid points there need no evaluation but the last one
        edge = grid.k_lo if t(grid.k_lo) > 0 else min(grid.k_hi, int(mpmath.floor(mpmath.log1p(-offset / a) / hm)) + 1)
        while edge > grid.k_lo and t(edge - 1) > 0:  # guard the rounding of the floor above
            edge -= 1
        while t(edge) <= 0:
            edge += 1
        # the peak of H'' on t > 0: t_c = q·e^{−3/(2σ²)} (z = −1), clamped to [edge, k_hi]
        t_c = qm * mpmath.exp(-3 / (2 * s * s))
        ratio = (t_c - offset) / a
        peak = int(mpmath.floor(mpmath.log1p(ratio) / hm)) if ratio > -1 else edge
        peak = min(max(peak, edge), grid.k_hi)
        one = int(mpmath.floor(-mpmath.log(a) / hm))  # x_one ≤ 1 < x_{one + 1}: no chord may jump over x = 1
        points = {grid.k_lo, max(edge - 1, grid.k_lo), edge, grid.k_hi, peak,
                  min(max(one, grid.k_lo), grid.k_hi), min(max(one + 1, grid.k_lo), grid.k_hi)}
        # the peak of H'' lies in the cell [peak, peak + 1]: walk right from its right end, left from its left end
        points.add(min(peak + 1, grid.k_hi))
        for d, end in ((1, grid.k_hi), (-1, edge)):
            k, stride = (min(peak + 1, grid.k_hi) if d == 1 else peak), 1
            while k != end:
                # the span's width grows with x while H'' falls, so the allowed stride can shrink again: re-test it
                # at every point, halving it until the span is flat enough, or doubling it while it stays so
                while stride > 1 and gap(k, k + d * stride) > limit:
                    stride //= 2
                while stride < 2**20 and gap(k, k + d * 2 * stride) <= limit:
                    stride *= 2
                k = min(k + stride, end) if d == 1 else max(k - stride, end)
                points.add(k)
                if max_points is not None and len(points) > max_points:
                    raise TooManyPoints(f"more than {max_points} grid points selected")
    return sorted(points)


# -- choosing the grid (heuristics in deterministic mpmath: any choice gives proven bounds) -----------

_DPS = 30  # mpmath digits for the grid heuristics: results are the same on every machine
_SPREAD_DPS = 15  # digits of the loss's standard deviation (only the first step size's heuristic uses it)


def _z_at(q: Fraction, sigma: Fraction, t: Any) -> Any:
    """The z where the remove pair's likelihood ratio w(z) is x = 1 − q + t, or None for t ≤ 0:
    w(z) = x ⟺ z = 1/2 + σ²·log(t/q)."""
    if t <= 0:
        return None
    qm = mpmath.mpf(q.numerator) / q.denominator
    s2 = mpmath.mpf(sigma.numerator) ** 2 / mpmath.mpf(sigma.denominator) ** 2
    return mpmath.mpf(1) / 2 + s2 * (mpmath.log(t) - mpmath.log(qm))


def _upper_tail(q: Fraction, sigma: Fraction, t: Any) -> Any:
    """P(Λ > 1 − q + t) for the remove pair (P = μ): q·Φ̄((z − 1)/σ) + (1 − q)·Φ̄(z/σ)."""
    z = _z_at(q, sigma, t)
    if z is None:
        return mpmath.mpf(1)
    s = mpmath.mpf(sigma.numerator) / sigma.denominator
    qm = mpmath.mpf(q.numerator) / q.denominator
    return qm * mpmath.ncdf(-(z - 1) / s) + (1 - qm) * mpmath.ncdf(-z / s)


def _lower_tail(q: Fraction, sigma: Fraction, t: Any) -> Any:
    """Q(Λ < 1 − q + t) for the remove pair (Q = μ0): Φ(z/σ); the add direction's mass beyond."""
    z = _z_at(q, sigma, t)
    if z is None:
        return mpmath.mpf(0)
    return mpmath.ncdf(z / (mpmath.mpf(sigma.numerator) / sigma.denominator))


def anchor_for(q: Fraction, sigma: Fraction, h: Fraction) -> Fraction:
    """The grid's anchor: 1, or a rational 1 − q + τ with 0 < τ < q (a heuristic in mpmath; any anchor
    gives proven bounds, this one keeps the lower bound tight).

    Under Q, t = Λ − (1 − q) = q·e^r with r ~ N(−1/(2σ²), 1/σ²), and the curve is linear below
    t = 0. A dominated pair with atoms only on the grid can leave the floor (1 − x)_+ only at a grid
    point: on the cell whose left end lies below 1 − q its lower curve must stay on the floor, so it
    loses G(x) = E_Q[(x − Λ)_+] at the cell's right end x. For σ ≪ 1 nearly all of Q's mass sits in a
    sliver of t far thinner than a cell, and on the lattice e^{kh} that loss is everything (the pair
    collapses). A grid anchored at x_0 = 1 − q + τ loses G(x_0) = τΦ(d) − qΦ(d − 1/σ),
    d = (log(τ/q) + 1/(2σ²))·σ, plus about m·Δ for the mass m of t in its first cell of width
    Δ = x_0·(e^h − 1). (The grid keeps one point below 1 − q, where the curve is linear, so the upper
    pair is exact there and moves no mass to loss −∞.) τ is chosen among q·e^r for r at −40 … 40
    standard deviations of r to minimise that sum; if the lattice e^{kh} (whose point just above 1 − q
    plays x_0) does as well, the anchor is 1.
    """
    if q == 1:
        return Fraction(1)
    with mpmath.workdps(_DPS):
        s, qm, hm = (mpmath.mpf(x.numerator) / x.denominator for x in (sigma, q, h))
        mean = -1 / (2 * s * s)

        def floor_loss(tau: Any) -> Any:  # G(1 − q + τ) = E_Q[(τ − t)_+]
            d = (mpmath.log(tau / qm) - mean) * s
            return tau * mpmath.ncdf(d) - qm * mpmath.ncdf(d - 1 / s)

        def loss(tau: Any) -> Any:
            d = (mpmath.log(tau / qm) - mean) * s
            width = (1 - qm + tau) * mpmath.expm1(hm)
            d2 = (mpmath.log((tau + width) / qm) - mean) * s
            return floor_loss(tau) + (mpmath.ncdf(d2) - mpmath.ncdf(d)) * width

        k = mpmath.ceil(mpmath.log1p(-qm) / hm)  # the lattice point e^{kh} just above 1 − q
        usual = mpmath.exp(k * hm) - (1 - qm)
        best, tau = (loss(usual), None) if usual > 0 else (mpmath.inf, None)
        for j in range(-80, 81):
            candidate = qm * mpmath.exp(mean + j / (2 * s))
            if candidate < qm / 2:
                value = loss(candidate)
                if value < best:
                    best, tau = value, candidate
        if tau is None:
            return Fraction(1)
        tau = Fraction(mpmath.nstr(tau, 3, strip_zeros=False, min_fixed=1, max_fixed=0))
    return 1 - q + tau


def _last_index(fn: Any, start: int, step: int) -> int:
    """Starting at a k with fn(k) true, the last k in the direction of ``step`` (±1) with fn(k) true
    (fn true up to some point, then false): doubling, then bisection."""
    good, jump = start, 1
    while fn(start + step * jump):
        good, jump = start + step * jump, jump * 2
    bad = start + step * jump
    while abs(bad - good) > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if fn(mid) else (good, mid)
    return good


def _bisect(fn: Any, a: Any, b: Any) -> Any:
    """A point near the switch of a predicate that is true at ``a`` and false at ``b`` (100 halvings)."""
    for _ in range(100):
        mid = (a + b) / 2
        a, b = (mid, b) if fn(mid) else (a, mid)
    return (a + b) / 2


def grid_range(q: Fraction, sigma: Fraction, h: Fraction, tail: Fraction, pair: str = "sgm") -> Grid:
    """A grid on the anchor's lattice (:func:`anchor_for`) wide enough that each direction's one-step
    tail beyond it has mass at most ``tail``.

    With x_k = anchor·e^{kh}: k_hi is the smallest k with P(Λ > x_k) ≤ tail; k_lo is, on an anchored
    lattice, the last point at or below 1 − q (one or a few points below the anchor), else the largest
    k < 0 with Q(Λ < x_k) ≤ tail (since P(Λ > 1) and Q(Λ < 1) are at least 1/2, the range straddles x = 1). Computed in mpmath at a fixed precision, so the grid is the same on
    every machine; the certificate records it and ``check`` recomputes it. The choice only affects
    tightness: whatever lies beyond the grid is accounted for safely (the upper pair's tail mass goes
    to ±∞, the lower pair's curve to the floor).

    The replace-one curves (``pair``) are symmetric: their grid is −k_hi … k_hi on the lattice h·ℤ, k_hi the
    smallest k ≥ 1 with P(log Λ > kh) ≤ ``tail`` (for fixed-size batches, Λ of SG(q, σ/2)'s remove pair).
    """
    if pair != "sgm":
        with mpmath.workdps(_DPS):
            hm, limit = mpmath.mpf(h.numerator) / h.denominator, mpmath.mpf(tail.numerator) / tail.denominator
            qm = mpmath.mpf(q.numerator) / q.denominator

            def above(k: int) -> bool:
                if pair == "replace-one":
                    return replace_tail(q, sigma, k * hm) > limit
                return _upper_tail(q, sigma / 2, mpmath.expm1(k * hm) + qm) > limit

            k = _last_index(above, 1, 1) + 1 if above(1) else 1
        return Grid(h, -k, k)
    anchor = anchor_for(q, sigma, h)
    with mpmath.workdps(_DPS):
        hm = mpmath.mpf(h.numerator) / h.denominator
        limit = mpmath.mpf(tail.numerator) / tail.denominator
        a = mpmath.mpf(anchor.numerator) / anchor.denominator
        offset = a - 1 + mpmath.mpf(q.numerator) / q.denominator  # t_k = anchor·expm1(kh) + offset

        def t(k: int) -> Any:
            return a * mpmath.expm1(k * hm) + offset

        k0 = int(mpmath.floor(-mpmath.log(a) / hm)) + 1  # the smallest k with x_k > 1

        def upper_above(k: int) -> bool:
            return _upper_tail(q, sigma, t(k)) > limit

        def lower_above(k: int) -> bool:
            return _lower_tail(q, sigma, t(k)) > limit

        k_hi = _last_index(upper_above, k0, 1) + 1 if upper_above(k0) else k0
        if anchor < 1:  # the last point at or below 1 − q: the curve is linear there, the upper pair exact
            k_lo = int(mpmath.floor(mpmath.log((1 - mpmath.mpf(q.numerator) / q.denominator) / a) / hm))
            while t(k_lo) > 0:
                k_lo -= 1
        else:
            k_lo = _last_index(lower_above, -1, -1) - 1 if lower_above(-1) else -1
    return Grid(h, k_lo, k_hi, anchor)


def loss_scale(q: Fraction, sigma: Fraction, tail: Fraction, pair: str = "sgm") -> tuple[float, float]:
    """(width, spread): the width of the one-step loss range outside which each direction has mass at
    most ``tail``, and the standard deviation of the remove pair's loss under P (a heuristic in mpmath
    for the grid's first step size; never a bound). ``pair`` "replace-one": the same for that pair.
    """
    if pair == "replace-one":
        return replace_loss_scale(q, sigma, tail)
    if pair == "fixed-replace-one":  # the remove pair of SG(q, σ/2), whose range and spread the symmetrised curve shares
        sigma = sigma / 2
    with mpmath.workdps(_DPS):
        limit = mpmath.mpf(tail.numerator) / tail.denominator
        qm = mpmath.mpf(q.numerator) / q.denominator
        s = mpmath.mpf(sigma.numerator) / sigma.denominator
        # the loss is increasing in z: the range's ends are the z-quantiles of P's upper and Q's lower tail
        hi = _bisect(lambda z: qm * mpmath.ncdf(-(z - 1) / s) + (1 - qm) * mpmath.ncdf(-z / s) > limit,
                     -80 * s, 1 + 80 * s)
        lo = _bisect(lambda z: mpmath.ncdf(z / s) <= limit, -80 * s, 80 * s)

        def loss(z: Any) -> Any:  # log(1 − q + q·e^r) without cancellation
            r = (2 * z - 1) / (2 * s * s)
            return r if q == 1 else mpmath.log1p(qm * mpmath.expm1(r))

        width = loss(hi) - loss(lo)
        # Var_P(L) = E_{μ0}[w·(log w)²] − E_{μ0}[w·log w]², by quadrature over z
        seen: dict[Any, tuple[Any, Any]] = {}

        def at(z: Any) -> tuple[Any, Any]:  # (density, loss) at z, μ = μ0·w; both quadratures use the same nodes
            # (same intervals, rule and precision): each node is evaluated once
            if z not in seen:
                ell = loss(z)
                seen[z] = (mpmath.npdf(z, 0, s) * mpmath.exp(ell), ell)
            return seen[z]

        cut = sorted({mpmath.mpf(0), mpmath.mpf(1), lo, hi})
        with mpmath.workdps(_SPREAD_DPS):  # a step size needs a few digits, not thirty: four times faster
            m1 = mpmath.quad(lambda z: at(z)[0] * at(z)[1], [-mpmath.inf] + cut + [mpmath.inf])
            m2 = mpmath.quad(lambda z: at(z)[0] * at(z)[1] ** 2, [-mpmath.inf] + cut + [mpmath.inf])
            return float(width), float(mpmath.sqrt(max(m2 - m1 * m1, 0)))
