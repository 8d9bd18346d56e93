"""Two discrete pairs on a loss grid log A + h·ℤ that bracket a pair given by its curve: one dominates it, one is
dominated. Nothing here knows a mechanism: the curve is given (:func:`curve_pairs`).

**Curves and dominance.** A pair (P, Q) is described by its curve H(x) = E_Q[(dP/dQ − x)_+] + P(dQ = 0),
x ≥ 0: convex, non-increasing, H(0) = 1, H'(0+) ≥ −1. Conversely every such function is the curve of
a pair, and a convex piecewise-linear one with kinks at x_k = A·e^{kh} is the curve of a pair whose
atoms have privacy loss log A + kh (P-mass at the kink x_k is x_k times the jump of the slope; a kink at 0 is
Q-mass at loss −∞, the limit H(∞) is P-mass at +∞). (P, Q) *dominates* (P', Q') when H ≥ H' on
[0, ∞); by Blackwell's theorem for binary experiments (Blackwell 1953, Ann. Math. Statist. 24; see also Dong, Roth, Su 2022)
(P', Q') is then a post-processing of (P, Q), and dominance survives composition: if each factor
dominates, the products do (Zhu, Dong, Wang 2022, Theorem 10). So the privacy curve of the composed true
pairs lies between those of the composed discrete pairs.

**Upper pair: connect the dots** (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, PoPETs). The
piecewise-linear interpolation H̄ of H at the grid x_{k_lo} < … < x_{k_hi}, continued by the chord from
(0, 1) on the left and by the constant H(x_{k_hi}) on the right, is convex (chords of a convex function)
and ≥ H. Its pair has P-mass p̄_k = x_k·(s_{k+1} − s_k) at x_k (s the chord slopes), P-mass
H(x_{k_hi}) at +∞ (the truncated tail) and Q-mass 1 + s_{k_lo} at −∞.

**Evaluated points.** The curve may be evaluated only at some of the grid points (``ks``: for the Sampled Gaussian
step, :func:`rdp_verify.curves.discretize.grid_points`, every 2^j-th point where it is nearly linear); the masses of
the points skipped are 0 and both constructions below are unchanged (a cell is then the span between consecutive
evaluated points).

**Lower pair: lowered chords and a proven convex hull.** On a cell [a, b] of width Δ with
M ≥ sup H'' (the curve's ``curvature_bound``), Taylor's theorem gives
H(x) ≥ (1 − t)H(a) + tH(b) − t(1 − t)·Δ²M/2 for x = a + tΔ. A line through (a, H(a) − u) and
(b, H(b) − v), u, v ≥ 0, therefore lies below H on the cell when (1 − t)u + tv ≥ t(1 − t)·D for all
t ∈ [0, 1], D = Δ²M/2, which is equivalent to (√u + √v)² ≥ D (minimise u/t + v/(1 − t)). The target
values are H(x_k) − d_k with d_k = max of D/4 over the adjacent cells, but never below the trivial
curve (1 − x)_+ (a lower value would not be a pair's curve); where a cell fails the criterion because
one end sits on that floor, the other end is lowered to (√D − √u)², or also put on the floor. The
two grid ends are put on the floor (1 − x below x_{k_lo}, 0 above x_{k_hi}), so every atom is on the
grid, P has total mass 1 and Q total mass 1. The lower convex hull of the points is taken with every
kink's mass proven positive in ball arithmetic (a vertex whose mass is not is removed), and then the
criterion is verified again on every cell of the final curve; if any check fails, the grid gets no
dominated pair (its masses are 0, so the δ read off it is 0, a true but vacuous lower bound).
The curve is convex, equals 1 − x near 0, vanishes beyond x_{k_hi} and lies below H: a dominated pair.
Its error is second order in h (Taylor), unlike rounding every loss down (first order, T·h in ε).

**The add direction** uses the same two pairs with P and Q swapped (the perspective map
H ↦ 1 − x + x·H(1/x) keeps both the interpolation and the dominance): its P-masses are the Q-masses
p_k/x_k of the remove pair, at loss −log x_k.

**Fixed point.** Masses are enclosed in Arb balls at :func:`rdp_verify.pld.grid.precision` bits and written as
integers in units of 2^−bits: the upper pair's rounded up (and the masses at ±∞ kept separately, rounded up), the
lower pair's rounded down. Rounding up the masses of a dominating pair and down those of a dominated
one keeps every δ computed from them on the safe side (:mod:`rdp_verify.pld.compose`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flint import arb, ctx

from ..foundations.results import to_arb
from .grid import Grid

__all__ = ["LowerPairError", "curve_pairs"]


class LowerPairError(ArithmeticError):
    """The dominated (lower) pair could not be verified: refuse rather than guess."""


def _upper_int(x: arb, scale: arb) -> int:
    return max(0, int((x * scale).upper().ceil().unique_fmpz()))


def _lower_int(x: arb, scale: arb) -> int:
    return max(0, int((x * scale).lower().floor().unique_fmpz()))


class _Curve:
    """Grid points, native values and slopes of H on the grid (G-units left of x = 1, H-units right).

    G = H − (1 − x) differs from H by a linear function, so its chords differ by exactly −1 in slope
    and its second differences (the masses) are the same; using G where x < 1 keeps full relative
    accuracy where H ≈ 1 − x. A cell whose left end is left of 1 and right end right of it is in
    H-units (the G value at its left end converted).
    """

    def __init__(self, curve: Any, grid: Grid, ks: list[int] | None = None):
        self.grid = grid
        self.k = list(range(grid.k_lo, grid.k_hi + 1)) if ks is None else list(ks)
        hx, anchor = to_arb(grid.h), to_arb(grid.anchor)
        self.x = [anchor * (hx * k).exp() for k in self.k]  # exact 1 at k = 0 on the usual lattice
        # t = x − (1 − q) = anchor·expm1(kh) + (anchor − (1 − q)), without the cancellation of the difference
        offset = to_arb(grid.anchor - (1 - curve.q_exact))
        ts = [anchor * (hx * k).expm1() + offset for k in self.k]
        if not (self.x[0] < 1 and self.x[-1] > 1):
            raise ArithmeticError("the grid does not straddle x = 1")
        # G-side: x ≤ 1, a prefix of the grid (at x = 1 exactly both units agree, and conversions stay exact)
        self.g = [not x > 1 for x in self.x]
        self.f, self.fp = [], []  # native value and native slope (G, G' on the G-side; H, H' else)
        for g, x, t, k in zip(self.g, self.x, ts, self.k):
            value, slope = curve.values(x, g_side=g, t=t, k=k)
            self.f.append(value)
            self.fp.append(slope)

    def g_side(self, i: int) -> bool:
        return self.g[i]

    def one_side(self, i: int) -> bool:
        """Cell [i, i + 1] lies on one side of x = 1 (x = 1 itself counts on both: there 1 − x = 0), so a
        native 0 at both ends is the floor (1 − x)_+ on the whole cell."""
        return self.g[i] == self.g[i + 1] or (self.x[i].is_exact() and self.x[i] == 1)

    def cell_slopes(self, i: int) -> tuple[arb, arb]:
        """H'(x_i), H'(x_{i+1}) in the units of cell [i, i+1] (G-units if x_{i+1} ≤ 1, else H-units)."""
        left = self.fp[i] - 1 if self.g[i] and not self.g[i + 1] else self.fp[i]  # G' − 1 = H'
        return left, self.fp[i + 1]

    def span_slope(self, i: int, j: int, values: list[arb]) -> tuple[arb, str]:
        """Slope of the chord through (x_i, values[i]) and (x_j, values[j]) (native values), with its unit."""
        xi, xj, vi, vj = self.x[i], self.x[j], values[i], values[j]
        if self.g[j]:
            return (vj - vi) / (xj - xi), "G"
        if not self.g[i]:
            return (vj - vi) / (xj - xi), "H"
        return (vj - (vi + 1 - xi)) / (xj - xi), "H"  # the G value at i converted to H

    def kink(self, i: int, left: tuple[arb, str], right: tuple[arb, str]) -> arb:
        """P-mass x_i·(right slope − left slope) at grid point i, slopes in their units."""
        (sl, ul), (sr, ur) = left, right
        if ul == ur:
            return self.x[i] * (sr - sl)
        return self.x[i] * (sr - sl + 1)  # left in G-units (H-slope = G-slope − 1), right in H-units


def _upper_masses(c: _Curve) -> tuple[list[arb], arb, arb]:
    """Connect the dots: P-masses at the grid, at +∞, and the Q-mass at −∞ (= add direction's +∞)."""
    n = len(c.x)
    left0 = (c.f[0] / c.x[0], "G")  # chord of G from (0, 0): G(0) = H(0) − 1 = 0
    slopes = [c.span_slope(i, i + 1, c.f) for i in range(n - 1)]
    masses = []
    for i in range(n):
        left = left0 if i == 0 else slopes[i - 1]
        right = (arb(0), "H") if i == n - 1 else slopes[i]
        masses.append(c.kink(i, left, right))
    return masses, c.f[-1], left0[0]


def _sqrt_lower(x: arb) -> arb:
    """A lower bound of √max(x, 0), as an exact point."""
    lo = x.lower()
    return arb(0) if not lo > 0 else lo.sqrt().lower()


@dataclass(frozen=True)
class _Cell:
    """What bounds the gap E = chord − H on one cell of width Δ (all exact upper bounds).

    Taylor: E(a + tΔ) ≤ t(1 − t)·D with D = Δ²·sup H''/2. Tangents (H convex): E(x) ≤ α(x − a) and
    E(x) ≤ β(b − x) with α = s − H'(a), β = H'(b) − s, s the chord slope.
    """

    d: arb
    alpha: arb
    beta: arb
    width: arb

    def holds(self, u: arb, v: arb) -> bool:
        """The line through (a, H(a) − u), (b, H(b) − v) is proven ≤ H on the cell (u, v: gap balls).

        Taylor: (1 − t)u + tv ≥ t(1 − t)D for all t ⟺ (√u + √v)² ≥ D. Tangents: a line is above the
        tent min(αΔt, βΔ(1 − t)) iff it is at its apex t = β/(α + β) ⟺ αu + βv ≥ αβΔ.
        """
        su, sv = _sqrt_lower(u), _sqrt_lower(v)
        if ((su + sv) * (su + sv)).lower() >= self.d:
            return True
        lo_u, lo_v = u.lower(), v.lower()
        lo_u, lo_v = (lo_u if lo_u > 0 else arb(0)), (lo_v if lo_v > 0 else arb(0))
        return bool((self.alpha * lo_u + self.beta * lo_v).lower() >= (self.alpha * self.beta * self.width).upper())

    def symmetric(self) -> arb:
        """A gap g that makes the cell hold with u = v = g: min(D/4, αβΔ/(α + β))."""
        tent = (self.alpha * self.beta * self.width / (self.alpha + self.beta)).upper() \
            if (self.alpha + self.beta) > 0 else arb(0)
        return min(self.d / 4, tent) * (1 + arb(2) ** -40)

    def need(self, fixed: arb, fixed_is_left: bool) -> arb:
        """The smallest gap at the other end that makes the cell hold, given the gap ``fixed``."""
        root = (self.d.sqrt() - _sqrt_lower(fixed)).upper()
        taylor = (root * root).upper() if root > 0 else arb(0)
        lo = fixed.lower() if fixed.lower() > 0 else arb(0)
        own, other = (self.beta, self.alpha) if fixed_is_left else (self.alpha, self.beta)
        if own > 0:
            tent = ((self.alpha * self.beta * self.width - other * lo) / own).upper()
            tent = tent if tent > 0 else arb(0)
        else:
            tent = taylor
        return min(taylor, tent) * (1 + arb(2) ** -40)


def _cells(curve: Any, c: _Curve) -> list[_Cell]:
    cells = []
    for i in range(len(c.x) - 1):
        dx = c.x[i + 1] - c.x[i]
        m = curve.curvature_bound(c.x[i], c.x[i + 1], ks=(c.k[i], c.k[i + 1]))
        s, _ = c.span_slope(i, i + 1, c.f)
        left, right = c.cell_slopes(i)
        cells.append(_Cell(d=(dx * dx * m / 2).upper(), alpha=(s - left).upper(), beta=(right - s).upper(),
                           width=dx.upper()))
    return cells


def _lower_masses(curve: Any, c: _Curve) -> tuple[list[arb], dict[str, Any]]:
    """The dominated pair's P-masses on the grid (module docstring), verified, or LowerPairError."""
    n = len(c.x)
    cells = _cells(curve, c)
    zero = arb(0)
    lowering = []
    for i in range(n):
        adjacent = [cells[j].symmetric() for j in (i - 1, i) if 0 <= j < n - 1]
        lowering.append(max(adjacent) if adjacent else zero)
    floor = [False] * n  # True: the target value is the floor (native value 0)
    floor[0] = floor[-1] = True

    def gap(i: int) -> arb:
        return c.f[i] if floor[i] else lowering[i]

    for i in range(n):
        if not floor[i] and not (c.f[i] - lowering[i]) > 0:
            floor[i] = True
    # Cells with one end on the floor: lower the other end as far as the cell needs, or floor it too.
    # A cell with both ends on the floor is the floor line itself, below H. Each change re-queues the
    # neighbouring cells; floors only grow and lowerings only rise, so this ends.
    work, checked = list(range(n - 1)), 0
    while work:
        i = work.pop()
        checked += 1
        if floor[i] and floor[i + 1] and c.one_side(i):  # the floor line itself
            continue
        if cells[i].holds(gap(i), gap(i + 1)):
            continue
        if floor[i] and floor[i + 1]:  # across x = 1 the chord between the two floors is above the floor
            raise LowerPairError(f"lower pair: cell [{c.k[i]}h, {c.k[i + 1]}h] across x = 1 is not proven below H")
        end, other = (i + 1, i) if floor[i] else (i, i + 1)
        if floor[other]:
            lowering[end] = max(lowering[end], cells[i].need(c.f[other], fixed_is_left=other == i))
            if not (c.f[end] - lowering[end]) > 0 or not cells[i].holds(gap(i), gap(i + 1)):
                floor[end] = True
        else:  # two lowered ends fail only through rounding: give up on this cell's ends
            floor[i] = floor[i + 1] = True
        work.extend(j for j in (i - 1, i, i + 1) if 0 <= j < n - 1)
    target = [zero if floor[i] else c.f[i] - lowering[i] for i in range(n)]

    # lower convex hull, keeping only vertices whose kink mass is proven positive
    left0, right_end = (zero, "G"), (zero, "H")  # slope −1 (G-units 0) below x_lo; 0 above x_hi
    chain: list[int] = [0]
    for j in range(1, n):
        while len(chain) >= 2:
            a, v = chain[-2], chain[-1]
            mass = c.kink(v, c.span_slope(a, v, target), c.span_slope(v, j, target))
            if mass.lower() > 0:
                break
            chain.pop()
        chain.append(j)
    masses = [zero] * n
    for idx, v in enumerate(chain):  # the end vertices too: slope −1 on the left, 0 on the right
        left = left0 if idx == 0 else c.span_slope(chain[idx - 1], v, target)
        right = right_end if idx == len(chain) - 1 else c.span_slope(v, chain[idx + 1], target)
        m = c.kink(v, left, right)
        if not m.lower() >= 0:
            raise LowerPairError(f"lower pair: the kink at grid loss {c.k[v]}h is not proven convex")
        masses[v] = m
    # verify every cell of the final curve against H
    curve_values = list(target)
    for a, b in zip(chain, chain[1:]):
        slope, unit = c.span_slope(a, b, target)
        for i in range(a + 1, b):
            base = target[a] if (unit == "G" or not c.g_side(a)) else target[a] + 1 - c.x[a]
            value = base + slope * (c.x[i] - c.x[a])
            if unit == "H" and c.g_side(i):
                value = value - (1 - c.x[i])  # back to G-units
            curve_values[i] = value
    for i in range(n - 1):
        u, v = c.f[i] - curve_values[i], c.f[i + 1] - curve_values[i + 1]
        # native 0 at both ends of a cell on one side of x = 1 (x = 1 itself counts on both sides: there 1 − x = 0):
        # the floor (1 − x)_+ itself, below every curve (nothing to verify; u, v may round below 0). A chord
        # across x = 1 is above the floor and is verified like any other.
        on_floor = curve_values[i].is_zero() and curve_values[i + 1].is_zero() and c.one_side(i)
        if on_floor:
            continue
        if not (u.lower() >= 0 and v.lower() >= 0 and cells[i].holds(u, v)):
            raise LowerPairError(f"lower pair: cell [{c.k[i]}h, {c.k[i + 1]}h] is not proven below H")
    checks = {"cells_verified": n - 1, "hull_vertices": len(chain), "floor_points": sum(floor),
              "cell_checks": checked}
    return masses, checks


def curve_pairs(curve: Any, lower_curve: Any, grid: Grid, ks: list[int], bits: int, prec: int) -> dict[str, Any]:
    """The fixed-point masses of the dominating pair (connect the dots on ``curve``) and the dominated pair (lowered
    chords on ``lower_curve``) at the grid points ``ks``, both directions (module docstring), as :class:`StepPLD`'s
    fields. A curve gives ``values(x, g_side, t, k)`` (G or H and its slope at the grid point x = anchor·e^{kh},
    balls), ``curvature_bound(a, b, ks)`` (≥ sup H'' on the open cell between the grid points of indices ks, +∞
    allowed: the tangent bounds then decide) and ``q_exact`` (t = x − (1 − q_exact) is passed to ``values``): :class:`rdp_verify.curves.single_step.StepCurve`, or another mechanism's curve
    (:class:`rdp_verify.mechanisms.laplace.LaplaceCurve`)."""
    with ctx.workprec(prec):
        c = _Curve(curve, grid, ks)
        upper, upper_inf, q_minus_inf = _upper_masses(c)
        c_lower = c if lower_curve is curve else _Curve(lower_curve, grid, ks)
        try:
            lower, checks = _lower_masses(lower_curve, c_lower)
        except ArithmeticError as exc:  # no verified dominated pair on this grid (LowerPairError, or a bound that
            # the working precision could not make finite): the trivial lower bound δ ≥ 0
            lower, checks = [arb(0)] * len(c.x), {"lower_pair": f"refused ({exc}): masses 0, lower bound 0"}
        scale = arb(2) ** bits
        q_weights = [1 / x for x in c.x]  # Q-mass = P-mass·e^{−loss} = P-mass/x

        def dense(values: list[int]) -> tuple[int, ...]:
            out = [0] * grid.size
            for k, v in zip(ks, values):
                out[k - grid.k_lo] = v
            return tuple(out)

        return {
            "remove_upper": dense([_upper_int(m, scale) for m in upper]),
            "remove_upper_inf": _upper_int(upper_inf, scale),
            "remove_lower": dense([_lower_int(m, scale) for m in lower]),
            "add_upper": dense([_upper_int(m * w, scale) for m, w in zip(upper, q_weights)]),
            "add_upper_inf": _upper_int(q_minus_inf, scale),
            "add_lower": dense([_lower_int(m * w, scale) for m, w in zip(lower, q_weights)]),
            "checks": {**checks, "points_evaluated": len(ks)},
        }
