"""Proven envelopes of a run's trade-off function (f-DP), from the discrete pairs that bracket its privacy curve.

**The object.** For distinguishing two output distributions with a test of type-I error α (false
positives: the test says "member" on the dataset without the record), the trade-off function
f(α) = inf{β : type-I error ≤ α, type-II error β} is the smallest type-II error (false negatives;
Dong, Roth, Su 2022, Definition 2.1). A run's privacy curve δ(ε) (ε ≥ 0, the larger of the two
directions: :mod:`rdp_verify.curves.accountant`) and its symmetric trade-off function determine each
other (Dong, Roth, Su 2022, Proposition 2.12, with Proposition 2.5 for one (ε, δ)):

.. math::

   f(α) = \\sup_{ε ≥ 0} \\max\\{0,\\; 1 − δ(ε) − e^{ε}α,\\; e^{−ε}(1 − δ(ε) − α)\\}.

Every attack on any pair of neighbouring datasets has (FPR, FNR) with FNR ≥ f(FPR) (and FPR ≥ f(FNR));
TPR = 1 − f(FPR) is the largest true-positive rate at a false-positive rate FPR.

**Both envelopes from the same formula.** f is decreasing in δ: the run's dominating discrete pairs
(connect-the-dots, masses rounded up, cut-off mass moved to loss +∞) give δ_up(ε) ≥ δ(ε) for every ε at
once, hence the **lower envelope** f_low ≤ f, what no attack can beat; the dominated pairs (lowered
chords, masses rounded down) give δ_low(ε) ≤ δ(ε) for every ε, hence the **upper envelope** f_up ≥ f.

On a composed PLD with masses M_i at losses ℓ_i (and M_∞ at +∞), δ_d(ε) = A_i − e^{ε}B_i on the
piece ℓ_{i−1} ≤ ε < ℓ_i, with A_i = Σ_{j≥i} M_j + M_∞ and B_i = Σ_{j≥i} M_j e^{−ℓ_j}
(:mod:`rdp_verify.pld.compose`). Both suprema are convex problems:

* the first family is 1 − min_{t≥1} g(t), g(t) = max_d δ_d(log t) + αt, convex piecewise linear in
  t = e^{ε}, with slope α − B_i in t;
* the second, sup over ε ≥ 0 of e^{−ε}(1 − δ(ε) − α), is written in u = e^{−ε} ∈ (0, 1] as
  max_u u(1 − α − δ(−log u)) = −min_u φ(u),
  φ(u) = max_d (u·A_i − B_i) − u(1 − α), convex piecewise linear in u (a sum of (u − e^{−ℓ_j})_+ terms),
  with slope A_i − (1 − α) in u.

A bisection on ε (in exact rationals, a heuristic that only steers) finds two points ε_a < ε_b around the
minimiser. For the **lower envelope** any point is a valid choice: f_low is 1 minus the value at the better
point, the upper end of an Arb ball (pessimistic). For the **upper envelope** the minimum itself must be
bounded from below: each direction's value and slope at a point give a tangent line below that
direction's convex function, hence below the maximum; with a proven negative slope at one point and a
proven positive slope at the other, the two lines' intersection is a lower bound on the minimum over the
whole domain (convexity), rounded down. When a slope's sign cannot be proven the trivial bound is used
(f_up = 1 − α), never an estimate. Then f_low = max(0, both families), f_up = min(1 − α, max(0, both)).
Their gap comes from the grid (second order in its step, as the (ε, δ) bracket) and from the mass at +∞.

**q = 1** runs are the Gaussian mechanism with μ² = Σ Δ²T_i/σ_i² (:mod:`rdp_verify.curves.gaussian`),
whose trade-off function is G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) exactly (Dong, Roth, Su 2022, Definition 2.7 and
Corollary 3.3): both envelopes are the two ends of its Arb ball (erfc and erfcinv), at any number of steps.
Where the whole ball lies below :data:`~rdp_verify.curves.gaussian.FLOOR` (10^−1000; e.g. μ = 20000, σ = 0.05
for 10⁶ steps, where G_μ(α) is about 10^−8.7e7) the envelopes are [0, FLOOR], as for the privacy curve:
exact rationals of that size would not fit in memory, and the ball's ends are never converted.

**Shuffled and balls-in-bins runs** (:mod:`rdp_verify.curves.per_epoch`; what is used is recorded,
:class:`PerEpochEnvelope`, and a check re-proves it).

*Lower envelope.* f_low = max(G_μ₀, L): G_μ₀ of the no-amplification Gaussian mechanism (proven, the same
μ₀² as the ε upper end), and, for a balls-in-bins run under zero-out, the lines of random allocation's proven
(ε, δ) upper curve (:mod:`rdp_verify.curves.random_allocation`, Feldman & Shenfeld 2025):

    L(α) = max over ε ∈ E of max{0, 1 − δ_up(ε) − e^ε·α, e^{−ε}(1 − δ_up(ε) − α)}.

*Theorem* (Dong, Roth, Su 2022, Proposition 2.5; the hypothesis-testing form of Kairouz, Oh, Viswanath 2015): a
mechanism is (ε, δ)-DP iff T(M(D), M(D')) ≥ f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} for every pair
of neighbouring datasets, either order. The run is (ε, δ_up(ε))-DP at every ε (δ_up proven for both directions
of the pair, :mod:`~rdp_verify.curves.random_allocation`), so f ≥ f_{ε,δ_up(ε)} for each ε, hence f ≥ L (a
maximum of lower bounds). E is the subset of :data:`ALLOCATION_LADDER` (ε = k/8, 0 ≤ k ≤ 128) where random
allocation's δ_up(ε) at the order found (every order of :data:`~rdp_verify.curves.random_allocation.ORDERS` at
the first point, then a descent from the previous point's best: a heuristic, any order is proven; the add
direction at its best order of :data:`~rdp_verify.curves.random_allocation.ADD_ORDERS`, the Rényi DP of the exact
pair, where it beats the shifted Gaussian; certificates from before it record no add order and keep the shifted
Gaussian) is below no amplification's (elsewhere the line is below G_μ₀, the exact trade-off function of that Gaussian). **Rounding:**
δ_up(ε) is an exact rational at or above the proven ball (pessimistic, random_allocation's rounding); f_{ε,δ} is
decreasing in δ, so the line at δ_up is at most the line at the true δ(ε); each line is an Arb ball (e^ε a ball)
and its *lower* end is taken: L is rounded down. Shuffled runs, and balls-in-bins under replace-one, have no
amplified upper end: f_low = G_μ₀ as before.

*Upper envelope.* f_up = min(1 − α, H(α), F(α)), each an upper bound of f:

* H, from attacks: each explicit-pair count test (searched at ε ∈ :data:`LADDER`, or a certificate's
  recorded ones) has type-I error α_j and type-II error β_j with f(α_j) ≤ β_j, proven in Arb (α_j and β_j
  rounded up: f is decreasing); f is convex and symmetric, so f(β_j) ≤ α_j too, and with f(0) ≤ 1,
  f(1) = 0, f lies below the lower convex hull H of these points (exact rationals);
* F, from the composed binned per-epoch maxima (:func:`~rdp_verify.curves.per_epoch.composed_pld`, Chua et
  al., NeurIPS 2024, Section 3), both orders of the pair (the others' gradient c as the bracket chooses it at
  ε = 0; balls-in-bins: c = 0). Each PLD is a proven lower bound of the privacy curve: δ_low(ε) ≤ δ(ε) at
  every ε at once (P-masses and losses rounded down; its hockey-stick formula is increasing in both).
  F is the formula of f from δ (first paragraph) on δ_low = max over the two orders, the same convex problems as
  the dominated pairs of a discrete run, with the same proven rounding: F(α) = 1 − (a lower bound of the
  minimum, by tangent lines with proven slope signs), so F is rounded **up** and F ≥ f (f is decreasing
  in δ). The bisection is steered in double precision (cheap: a certificate reads F at about 50 α), then
  moved to the two half-lattice points around the nearest loss k·h (every composed loss lies on h·ℤ): there
  each direction's piece is unambiguous, and when the kink is the minimiser the two tangent lines are its
  two pieces, so the bound is the minimum itself up to the balls' radii. Why not the Neyman–Pearson points
  (B_i, 1 − A_i) of the PLD read as a pair: after rounding, B_i = Σ_{j≥i} M_j e^{−ℓ_j} moves both ways (masses
  down, e^{−ℓ} up, cells dropped), so it bounds no true type-I error; F uses only δ_low's monotonicity (and
  its first family never exceeds 1 − A_i at α = B_i, since δ_low(ε) ≥ A_i − e^ε·B_i: it loses nothing against
  those points). H can still win where the count tests' pairs (other c) are stronger, so the minimum of both
  is kept.

Cost: after the run is composed (as for ``dp``), preparing each of the four composed PLDs costs O(n) Arb
operations (n its length); each α then costs O(log n) per bisection step, about 60 steps per family and
bound. Per-epoch runs: the allocation ladder's search about 0.7 s at t = 100 (a check re-evaluates only the
recorded orders), the composed pairs as for the ``dp`` lower end (about a second for 3 epochs of 100 steps).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Sequence

from flint import arb, ctx

from ..curves.accountant import DIRECTIONS, Curves
from ..curves.gaussian import FLOOR, GaussianCurve
from ..curves.per_epoch import Composed, PerEpochBounds, composed_pld
from ..curves.random_allocation import ADD_ORDERS, ORDERS, SEARCH, applies
from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError, fraction_text, parse_rational
from ..foundations.normal import inverse_phi, phi
from ..foundations.results import lower_end, to_arb, upper_end
from ..foundations.run import Phase
from ..pld.compose import PLD, shift_ball

__all__ = ["Envelopes", "PerEpochEnvelope", "gaussian_tradeoff", "lower_hull", "hull_at",
           "LADDER", "ALLOCATION_LADDER", "check_rate"]

LADDER = (Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4), Fraction(8))  # ε of the per-epoch tests
# ε of the (ε, δ_upper(ε)) lines of a balls-in-bins run's lower envelope: 0, 1/8, …, 16 (module docstring)
ALLOCATION_LADDER = tuple(Fraction(k, 8) for k in range(129))
_MAX_COMPOSED = 4  # composed pairs a certificate may record for the upper envelope (both orders of up to two c)
_BISECTIONS = 64  # bisection steps on ε (each halves the interval; 64 reach far below any grid step)
_GAUSSIAN_PREC = 256


def gaussian_tradeoff(mu: arb, alpha: arb) -> arb:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) = Φ(−Φ⁻¹(α) − μ) as a ball (Dong, Roth, Su 2022, Definition 2.7)."""
    return phi(-inverse_phi(alpha) - mu)


def check_rate(value: Fraction, name: str = "alpha") -> Fraction:
    """A rate (α, an FPR) must lie in [0, 1]."""
    value = Fraction(value)
    if not 0 <= value <= 1:
        raise InputError(f"{name} {value} must lie in [0, 1]")
    return value


def lower_hull(points: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
    """The lower convex hull (sorted by α) of points (a, b) with f(a) ≤ b, their mirror images (b, a), (0, 1)
    and (1, 0). Any symmetric trade-off function f below the points lies below the hull (f is convex), so
    the hull is an upper envelope of f. Points are first rounded up to 12 significant digits (f is
    decreasing: a larger α or β keeps f(α) ≤ β), which keeps the exact arithmetic short."""
    short = {(Fraction(decimal_text(a, 12, "up")), Fraction(decimal_text(b, 12, "up"))) for a, b in points}
    pts = sorted(short | {(b, a) for a, b in short} | {(Fraction(0), Fraction(1)), (Fraction(1), Fraction(0))})
    hull: list[tuple[Fraction, Fraction]] = []
    for x, y in pts:  # Andrew's monotone chain, lower half
        while len(hull) >= 2 and (hull[-1][0] - hull[-2][0]) * (y - hull[-2][1]) \
                <= (hull[-1][1] - hull[-2][1]) * (x - hull[-2][0]):
            hull.pop()
        if hull and hull[-1][0] == x:
            continue  # the same α: the lower point came first
        hull.append((x, y))
    return hull


def hull_at(hull: list[tuple[Fraction, Fraction]], alpha: Fraction) -> Fraction:
    """The lower hull's value at α ∈ [0, 1] (linear between its vertices; exact)."""
    i = bisect_right([x for x, _ in hull], alpha)
    if i == len(hull):
        return hull[-1][1]
    (x1, y1), (x2, y2) = hull[i - 1], hull[i]
    return y1 + (y2 - y1) * (alpha - x1) / (x2 - x1)


@dataclass(frozen=True)
class PerEpochEnvelope:
    """What a per-epoch run's envelopes use beyond its bracket's settings (a trade-off certificate records it):
    ``allocation``, the (ε, random-allocation remove order, add order) of the :data:`ALLOCATION_LADDER` points
    whose proven δ_upper(ε) beats no amplification (lower envelope; the add order None: the shifted Gaussian, else
    the Rényi DP of the exact pair at that order, :mod:`~rdp_verify.curves.random_allocation`), and ``composed``, the composed binned maxima pairs
    whose PLDs give the upper envelope (module docstring). Both empty: a certificate from before either
    (the lower envelope G_μ₀, the upper one the hull of the count tests)."""

    allocation: tuple[tuple[Fraction, int, Fraction | None], ...] = ()
    composed: tuple[Composed, ...] = ()

    KEYS = ("envelope_lower_random_allocation", "envelope_upper_composed")

    def to_json(self) -> dict[str, Any]:
        """The settings' fields; none when both are empty (the same envelopes as a certificate from before them).
        The ladder points are written as runs of consecutive points sharing their orders: {order, from, to} and
        ``add_order`` where the add direction is the Rényi DP of the exact pair (absent: the shifted Gaussian)."""
        if not (self.allocation or self.composed):
            return {}
        index = {e: i for i, e in enumerate(ALLOCATION_LADDER)}
        runs: list[list[Any]] = []
        for eps, order, add in self.allocation:
            if runs and runs[-1][:2] == [order, add] and index[runs[-1][3]] + 1 == index[eps]:
                runs[-1][3] = eps
            else:
                runs.append([order, add, eps, eps])
        return {"envelope_lower_random_allocation": [{"order": o, **({} if add is None else
                                                                     {"add_order": fraction_text(add)}),
                                                      "from_epsilon": fraction_text(a), "to_epsilon": fraction_text(b)}
                                                     for o, add, a, b in runs],
                "envelope_upper_composed": [c.to_json() for c in self.composed]}

    @classmethod
    def from_json(cls, phases: Sequence[Phase], s: dict[str, Any]) -> "PerEpochEnvelope":
        """The recorded settings, or InputError when they do not fit the run or ask for more than the search
        does (ε off the ladder, an order not tried, a ladder point twice, more than :data:`_MAX_COMPOSED`
        pairs). Neither key: ((), ())."""
        phases = tuple(phases)
        if not any(k in s for k in cls.KEYS):
            return cls()
        index = {e: i for i, e in enumerate(ALLOCATION_LADDER)}
        allocation: list[tuple[Fraction, int, Fraction | None]] = []
        for entry in s.get("envelope_lower_random_allocation") or []:
            order = entry["order"]
            first = index.get(parse_rational(entry["from_epsilon"], "from_epsilon"))
            last = index.get(parse_rational(entry["to_epsilon"], "to_epsilon"))
            add = parse_rational(entry["add_order"], "add_order") if "add_order" in entry else None
            if first is None or last is None or first > last or order not in ORDERS or not applies(phases) \
                    or (add is not None and add not in ADD_ORDERS):
                raise InputError(f"settings: envelope_lower_random_allocation entry {entry} is not a run of ladder "
                                 "points and orders of a run with a balls-in-bins add-remove phase")
            allocation += [(ALLOCATION_LADDER[i], order, add) for i in range(first, last + 1)]
        if len({e for e, _, _ in allocation}) != len(allocation):
            raise InputError("settings: envelope_lower_random_allocation repeats a ladder point")
        composed = []
        for c in s.get("envelope_upper_composed") or []:
            composed.append(Composed(
                c["order"], parse_rational(c["others_gradient"], "others_gradient"),
                parse_rational(c["lowest_edge"], "lowest_edge"), parse_rational(c["bin_width"], "bin_width"),
                c["edges"], parse_rational(c["grid_step"], "grid_step"), c["fixed_point_bits"]).checked(phases))
        if len(composed) > _MAX_COMPOSED:
            raise InputError(f"settings: envelope_upper_composed records more than {_MAX_COMPOSED} pairs")
        return cls(tuple(allocation), tuple(composed))


def search_per_epoch(curves: PerEpochBounds) -> PerEpochEnvelope:
    """The settings of a per-epoch run's envelopes (module docstring): every ladder point where random
    allocation's best order beats no amplification, and both orders of the composed maxima pair with the
    others' gradient c chosen as the bracket chooses it at ε = 0 (a heuristic: any choice is proven)."""
    from ..curves.per_epoch import _choose  # noqa: PLC0415 (the bracket's own choice of c; private to curves)

    allocation, index = [], None
    bound = curves.allocation
    if bound is not None:
        for eps in ALLOCATION_LADDER:
            if index is None:  # every order at the first point, then a descent from the last point's best
                order, value = bound.delta(eps)
                index = ORDERS.index(order)
            else:
                value = bound.delta(eps, ORDERS[index])[1]
                for step in (1, -1):
                    while 0 <= index + step < len(ORDERS):
                        nearby = bound.delta(eps, ORDERS[index + step])[1]
                        if not nearby < value:
                            break
                        index, value = index + step, nearby
            _, add, value = bound.delta_orders(eps, ORDERS[index], SEARCH)  # the add direction at its best order
            if value < curves.upper.delta_bounds(eps)[1]:
                allocation.append((eps, ORDERS[index], add))
    composed: tuple[Composed, ...] = ()
    if any(p.epochs[0] >= 1 for p in curves.phases):
        comp = _choose(curves.phases, None, Fraction(0))
        composed = tuple(replace(comp, order=o) for o in ("forward", "reverse"))
    return PerEpochEnvelope(tuple(allocation), composed)


@dataclass
class _Side:
    """One direction's composed PLD, prepared: suffix sums A_i (exact integers) and B_i (balls)."""

    pld: PLD
    prec: int
    a: list[int] = field(default_factory=list)
    b: list[arb] = field(default_factory=list)
    loss0: arb = field(default_factory=arb)

    def __post_init__(self) -> None:
        p = self.pld
        masses = [int(c) for c in p.coeffs.coeffs()]
        n = len(masses)
        with ctx.workprec(self.prec):
            h = to_arb(p.h)
            self.loss0 = shift_ball(p.shift) + h * p.offset  # loss of index 0
            step = h.exp()
            weight = (-(self.loss0 + h * (n - 1))).exp() if n else arb(0)  # e^{−ℓ_{n−1}}
            a, b = [0] * (n + 1), [arb(0)] * (n + 1)
            a[n] = p.inf
            for j in range(n - 1, -1, -1):
                a[j] = a[j + 1] + masses[j]
                b[j] = b[j + 1] + masses[j] * weight
                weight *= step
            self.scale = arb(2) ** -p.bits
            self.b = [x * self.scale for x in b]  # at the working precision: exact, a power of two
            # double-precision copies that only steer a bisection (per-epoch runs; never part of a bound)
            self.float_a = [x / (1 << p.bits) for x in a]
            self.float_b = [float(x.mid()) for x in self.b]
            self.float_loss0, self.float_h = float(self.loss0.mid()), float(p.h)
        self.a = a

    def at_float(self, eps: float, x: float) -> tuple[float, float, float]:
        """(δ_d(ε), A, B) in double precision, x = e^ε (a heuristic for steering: the piece of the first loss above
        ε; IEEE operations only, so the same on every machine)."""
        n = self.pld.length
        i = min(max(math.floor((eps - self.float_loss0) / self.float_h) + 1, 0), n) if n else 0
        return self.float_a[i] - x * self.float_b[i], self.float_a[i], self.float_b[i]

    def top(self) -> arb:
        """The largest finite loss (a ball)."""
        return self.loss0 + to_arb(self.pld.h) * max(self.pld.length - 1, 0)

    def at(self, eps: arb) -> tuple[arb, arb, arb]:
        """(δ_d(ε), A, B) at ε (balls; call under the working precision). When ε is within rounding of losses
        j..i−1, the true piece m is one of j..i: A and B are the unions of A_j, A_i and of B_j, B_i (monotone,
        so every A_m, B_m lies between: every slope a subgradient), and δ_d(ε) = V_m, V_k = A_k − e^ε·B_k;
        every other V_k adds terms M(1 − e^{ε−ℓ}) ≤ 0 of losses below ε or drops positive ones above it, so
        V_k ≤ V_m, and the union of the balls V_j..V_i encloses δ_d(ε)."""
        n = self.pld.length
        h = to_arb(self.pld.h)
        guess = int(((eps - self.loss0) / h).mid().floor().unique_fmpz()) + 1 if n else 0
        i = min(max(guess - 2, 0), n)
        while i < n and not (self.loss0 + h * i) > eps:  # first index whose loss is proven above ε
            i += 1
        while i > 0 and (self.loss0 + h * (i - 1)) > eps:
            i -= 1
        j = i  # first index whose loss may be above ε (its ball's upper end is)
        while j > 0 and (self.loss0 + h * (j - 1)).upper() > eps.lower():
            j -= 1
        a = arb(self.a[i]) * self.scale
        b = self.b[i]
        if j < i:  # ε may lie at one of the losses j..i−1: both pieces' sums
            a = a.union(arb(self.a[j]) * self.scale)
            b = b.union(self.b[j])
        x = eps.exp()
        value = arb(self.a[i]) * self.scale - x * self.b[i]
        for k in range(j, i):
            value = value.union(arb(self.a[k]) * self.scale - x * self.b[k])
        return value, a, b


class Envelopes:
    """Proven lower and upper envelopes of the trade-off function of a run (module docstring)."""

    def __init__(self, curves: Curves | GaussianCurve | PerEpochBounds, recorded: PerEpochEnvelope | None = None):
        """``recorded``: a per-epoch run's envelope settings to use (a certificate's; None: searched when first
        needed, then :attr:`per_epoch` holds them)."""
        self.curves = curves
        self._sides: dict[str, list[_Side]] = {}
        self.per_epoch = recorded
        # per-epoch runs steer the bisection in double precision (the bound is still proven at its end points)
        self._float_steering = isinstance(curves, PerEpochBounds)
        self._ladder: list[tuple[arb, Fraction]] | None = None  # (e^ε, proven δ_upper(ε)) of the allocation lines
        if isinstance(curves, Curves):
            self.prec = curves.prec
            for bound in ("upper", "lower"):
                self._sides[bound] = [_Side(curves.pld(d, bound), self.prec) for d in DIRECTIONS]
            with ctx.workprec(self.prec):
                tops = [s.top() for sides in self._sides.values() for s in sides]
                self._eps_max = max((upper_end(t) for t in tops), default=Fraction(0)) + 1
        else:
            self.prec = _GAUSSIAN_PREC
        self._hull: list[tuple[Fraction, Fraction]] | None = None

    @property
    def mu_squared(self) -> Fraction | None:
        """μ² of the Gaussian mechanism bounding the run from above (q = 1: exact; per-epoch: no amplification)."""
        if isinstance(self.curves, (GaussianCurve, PerEpochBounds)):
            return self.curves.mu_squared
        return None

    def bounds(self, alpha: Fraction) -> tuple[Fraction, Fraction]:
        """Proven [f_low(α), f_up(α)] for a rational α ∈ [0, 1]."""
        return self.lower(alpha), self.upper(alpha)

    def lower(self, alpha: Fraction) -> Fraction:
        """f_low(α): a proven lower bound of f(α), from the dominating pairs (what no attack can beat)."""
        alpha = check_rate(alpha)
        if alpha == 1:
            return Fraction(0)
        if isinstance(self.curves, PerEpochBounds):
            if alpha == 0:
                return Fraction(1)  # G_μ(0) = 1
            low = max(self._gaussian(alpha)[0], self.allocation_lower(alpha))
            if hull_at(self.hull(), alpha) < low:
                raise ArithmeticError("an attack beats the proven lower envelope: a bug, refuse")
            return low
        if not isinstance(self.curves, Curves):
            return Fraction(1) if alpha == 0 else self._gaussian(alpha)[0]  # G_μ(0) = 1
        if alpha == 0:  # f(0) = 1 − δ(∞) ≥ 1 − (the dominating pairs' mass at +∞)
            with ctx.workprec(self.prec):
                top = max(upper_end(arb(s.a[-1]) * s.scale) for s in self._sides["upper"])
            return max(Fraction(0), 1 - top)
        return max(Fraction(0), self._family(alpha, "upper", "t"), self._family(alpha, "upper", "u"))

    def upper(self, alpha: Fraction) -> Fraction:
        """f_up(α): a proven upper bound of f(α), from the dominated pairs (at most the trivial 1 − α)."""
        alpha = check_rate(alpha)
        if alpha in (0, 1):
            return 1 - alpha
        if isinstance(self.curves, PerEpochBounds):
            up = min(hull_at(self.hull(), alpha), self.composed_upper(alpha), 1 - alpha)
            if up < self.lower(alpha):
                raise ArithmeticError("an attack beats the proven lower envelope: a bug, refuse")
            return up
        if not isinstance(self.curves, Curves):
            return self._gaussian(alpha)[1]
        up = max(Fraction(0), self._family(alpha, "lower", "t"), self._family(alpha, "lower", "u"))
        return min(up, 1 - alpha)

    # -- per-epoch runs -----------------------------------------------------------------------------

    def hull(self) -> list[tuple[Fraction, Fraction]]:
        """The lower convex hull of the explicit-pair count tests' (α, β) (per-epoch runs; module docstring)."""
        if self._hull is None:
            self._hull = lower_hull(self.curves.attack_points(LADDER)[0])
        return self._hull

    def prepare(self) -> PerEpochEnvelope:
        """A per-epoch run's envelope settings (searched once, or the recorded ones) with the allocation lines'
        δ_upper(ε) and the composed pairs' prepared PLDs."""
        if self.per_epoch is None:
            self.per_epoch = search_per_epoch(self.curves)
        if self._ladder is None:
            ladder = []
            with ctx.workprec(self.prec):
                for eps, order, add in self.per_epoch.allocation:
                    ladder.append((to_arb(eps).exp(), self.curves.allocation.delta_orders(eps, order, add)[2]))
            sides = []
            for comp in self.per_epoch.composed:
                pld = composed_pld(tuple(self.curves.phases), comp)
                if pld is not None:
                    sides.append(_Side(pld, self.prec))
            self._sides["lower"] = sides
            # every composed loss lies on grid_step·ℤ (no shift): the steering's lattice
            self._lattice = min((c.grid_step for c in self.per_epoch.composed), default=Fraction(1))
            with ctx.workprec(self.prec):
                self._eps_max = max((upper_end(s.top()) for s in sides), default=Fraction(0)) + 1
            self._ladder = ladder
        return self.per_epoch

    def allocation_lower(self, alpha: Fraction) -> Fraction:
        """max over the recorded ladder points of the (ε, δ_upper(ε))-DP trade-off lower bound at α, each line's
        Arb ball's lower end (0 with no ladder point; module docstring)."""
        self.prepare()
        best = Fraction(0)
        with ctx.workprec(self.prec):
            a = to_arb(alpha)
            for x, delta in self._ladder:
                rest = 1 - to_arb(delta)
                best = max(best, lower_end(rest - x * a), lower_end((rest - a) / x))
        return best

    def composed_upper(self, alpha: Fraction) -> Fraction:
        """The upper envelope from the composed maxima PLDs' δ_low(ε) (module docstring; 1 − α without any)."""
        self.prepare()
        if not self._sides["lower"]:
            return 1 - alpha
        return max(Fraction(0), self._family(alpha, "lower", "t"), self._family(alpha, "lower", "u"))

    def _gaussian(self, alpha: Fraction) -> tuple[Fraction, Fraction]:
        with ctx.workprec(self.prec):
            mu = to_arb(self.curves.mu_squared).sqrt()
            g = gaussian_tradeoff(mu, to_arb(alpha))
            tiny = bool(g.upper() < to_arb(FLOOR))  # [0, FLOOR] (module docstring)
            low = Fraction(0) if tiny else max(Fraction(0), lower_end(g))
            high = FLOOR if tiny else upper_end(g)
        return low, min(high, 1 - alpha)

    # -- the convex problems ----------------------------------------------------------------------

    def _point(self, eps: Fraction, alpha: arb, bound: str, family: str) -> tuple[arb, list[tuple[arb, arb]]]:
        """(x, [(value, slope) per direction]) of the family's convex function at ε, x = e^{ε} or e^{−ε}."""
        e = to_arb(eps)
        rows = []
        for side in self._sides[bound]:
            value, a, b = side.at(e)
            if family == "t":  # g_d(t) = δ_d + αt, slope α − B
                t = e.exp()
                rows.append((value + alpha * t, alpha - b))
            else:  # φ_d(u) = u(δ_d − (1 − α)), slope A − (1 − α)
                u = (-e).exp()
                rows.append((u * (value - (1 - alpha)), a - (1 - alpha)))
        x = e.exp() if family == "t" else (-e).exp()
        return x, rows

    def _float_slope(self, eps: float, alpha: float, bound: str, family: str) -> float:
        """The active direction's slope at ε in double precision (steering only, as :meth:`_point`'s)."""
        rows = []
        x = float(arb(eps).exp().mid())  # e^ε by Arb (not the platform's libm: the steering is the same everywhere)
        for side in self._sides[bound]:
            value, a, b = side.at_float(eps, x)
            if family == "t":
                rows.append((value + alpha * x, alpha - b))
            else:
                rows.append(((value - (1 - alpha)) / x, a - (1 - alpha)))
        return max(rows)[1]

    @staticmethod
    def _active(rows: list[tuple[arb, arb]]) -> tuple[arb, arb]:
        return max(rows, key=lambda r: float(r[0].mid()))

    def _family(self, alpha: Fraction, bound: str, family: str) -> Fraction:
        """A proven bound on sup over ε ≥ 0 of one family of lines (module docstring): from the dominating
        pairs (bound "upper") a lower bound of f, from the dominated ones (bound "lower") an upper bound."""
        with ctx.workprec(self.prec):
            a = to_arb(alpha)

            def past(eps: Fraction) -> bool:  # the minimiser lies at ε or below (the active slope steers)
                if self._float_steering:
                    slope = self._float_slope(float(eps), float(alpha), bound, family)
                else:
                    slope = float(self._active(self._point(eps, a, bound, family)[1])[1].mid())
                return slope >= 0 if family == "t" else slope <= 0  # x = e^{ε} grows with ε, x = e^{−ε} shrinks

            lo, hi = Fraction(0), self._eps_max
            if past(lo):
                hi = lo  # the minimum is at ε = 0 (t = 1, u = 1)
            else:
                for _ in range(_BISECTIONS):
                    mid = (lo + hi) / 2
                    if past(mid):
                        hi = mid
                    else:
                        lo = mid
                if self._float_steering:  # the kink k·h nearest: its two pieces, read between lattice points
                    h = self._lattice
                    k = math.floor((lo + hi) / (2 * h) + Fraction(1, 2))
                    lo, hi = max((k - Fraction(1, 2)) * h, Fraction(0)), (k + Fraction(1, 2)) * h
            xa, rows_a = self._point(lo, a, bound, family)
            xb, rows_b = self._point(hi, a, bound, family)
            if bound == "upper":  # any point gives a valid lower bound on f: take the better one
                best = min(upper_end(max(rows, key=lambda r: upper_end(r[0]))[0]) for rows in (rows_a, rows_b))
                return (1 if family == "t" else 0) - best
            low = self._minimum_lower(xa, rows_a, xb, rows_b, lo == hi, family)
            trivial = Fraction(0) if family == "t" else Fraction(-1)
            # A bisection that ends on a kink of a piecewise-linear function (a pure-DP leaf's largest loss, where
            # δ drops to 0) leaves lo and hi so close that the loss's ball straddles both and no slope sign is
            # proven. Tangents at any two points with proven slopes −/+ still bound the convex minimum from below,
            # so step outward from the kink (well inside its two neighbouring pieces) until the signs are proven.
            boundary = lo == hi
            for widen in (Fraction(1, 2**40), Fraction(1, 2**24), Fraction(1, 2**14)):
                if low != trivial:
                    break
                if boundary:
                    low = self._boundary_lower(xa, rows_a, *self._point(widen, a, bound, family), family)
                    continue
                if lo == 0:  # the minimiser lies in [0, hi], and at ε = 0 a kink (an atom at loss 0, as randomized
                    # response's composed law has) leaves the slope's sign open: the tangent at the end point bounds it
                    low = self._boundary_lower(xa, rows_a, xb, rows_b, family)
                    if low != trivial:
                        break
                lo, hi = max(lo - widen, Fraction(0)), hi + widen
                xa, rows_a = self._point(lo, a, bound, family)
                xb, rows_b = self._point(hi, a, bound, family)
                low = self._minimum_lower(xa, rows_a, xb, rows_b, lo == hi, family)
            return (1 if family == "t" else 0) - low

    def _boundary_lower(self, x0: arb, rows0: list[tuple[arb, arb]], xb: arb, rows_b: list[tuple[arb, arb]],
                        family: str) -> Fraction:
        """A proven lower bound on the convex minimum when the bisection ends at the domain's end point x0 (ε = 0)
        but the slope there is not proven of the right sign (its ball holds 0: a symmetric pair at α = 1/2). With a
        point xb a little inside (ε > 0) whose slope points back at x0 (t: ≥ 0; u: ≤ 0), the minimiser lies between
        them, where g(x) ≥ g(x0) − |g'(x0)|·|x − x0| (convexity: g lies above its tangent at x0), and beyond xb
        g ≥ g(xb). Trivial when xb's slope sign is not proven either."""
        v0, s0 = self._active(rows0)
        vb, sb = self._active(rows_b)
        if not (sb >= 0 if family == "t" else sb <= 0):
            return Fraction(0) if family == "t" else Fraction(-1)
        slope = to_arb(max(abs(upper_end(s0)), abs(lower_end(s0))))  # a ball: x's are balls (was a Fraction · arb)
        return min(lower_end(vb), lower_end(v0 - slope * abs(xb - x0)))

    def _minimum_lower(self, xa: arb, rows_a: list[tuple[arb, arb]], xb: arb, rows_b: list[tuple[arb, arb]],
                       boundary: bool, family: str) -> Fraction:
        """A proven lower bound on the minimum over the domain of max_d (a convex function), from tangent
        lines at two points; the trivial bound (the value that makes the family's line vacuous) when the
        slopes' signs cannot be proven."""
        trivial = Fraction(0) if family == "t" else Fraction(-1)  # 1 − 0 ≥ 1 − α; −(−1) = 1 ≥ 1 − α
        va, sa = self._active(rows_a)
        vb, sb = self._active(rows_b)
        if family == "u":  # in u the interval runs from xb (smaller u) to xa
            (xa, va, sa), (xb, vb, sb) = (xb, vb, sb), (xa, va, sa)
        if boundary:
            # the minimum over the domain's end point: t = 1 with slope ≥ 0 (t ≥ 1), or u = 1 with slope ≤ 0 (u ≤ 1)
            ok = sa >= 0 if family == "t" else sb <= 0
            v = va if family == "t" else vb
            return lower_end(v) if ok else trivial
        for v, s in ((va, sa), (vb, sb)):
            if s == 0:  # an exact zero slope (Arb: a zero ball): a convex function's minimum is attained there
                return lower_end(v)
        if not (sa < 0 and sb > 0):
            return trivial
        # tangent lines v_a + s_a(x − x_a) and v_b + s_b(x − x_b) lie below the function; they meet at x*
        x = (vb - va + sa * xa - sb * xb) / (sa - sb)
        value = va + sa * (x - xa)
        if not value.is_finite():
            return trivial
        return lower_end(value)
