"""Proven discretised privacy-loss distributions of a monotone pair: losses rounded up or down to h·ℤ.

**The curve.** For a pair (P, Q) with privacy loss L = log dP/dQ (L = +∞ where Q = 0), its PLD is the
law of L under P and its privacy curve is the hockey-stick divergence

    δ(ε) = E_P[(1 − e^{ε − L})_+].                                                            (1)

For independent pairs (P_1, Q_1), …, (P_k, Q_k) the composed pair's loss is L_1 + … + L_k under
P_1 × … × P_k, so

    δ_k(ε) = E_{P_1×…×P_k}[(1 − e^{ε − L_1 − … − L_k})_+],                                      (2)

with the mass where some L_i = +∞ counting 1. Under adaptive composition each step's worst pair
dominates the adaptively chosen ones, and dominance survives composition (Zhu, Dong, Wang 2022,
AISTATS, Theorem 10): (2) for the composed worst-case pairs bounds the adaptive composition.

**Upper bounds: losses rounded up, masses rounded up** (pessimistic rounding, Meiser & Mohammadi 2018,
CCS, "Tight on budget?", the privacy buckets; Koskela, Jälkö, Honkela 2020, AISTATS). The integrand of
(2) is non-decreasing in each L_i, pointwise. Replace L by L̄ = h·⌈L/h⌉ ≥ L: the grid point ℓ_k = kh
receives the P-probability of the cell (ℓ_{k−1}, ℓ_k], so each factor of (2) is replaced by the law of a
loss that is pointwise ≥ the true one under the same coupling, and every δ_k computed from the
discrete laws, also composed with other factors (the SGM PLDs of :mod:`rdp_verify.curves.discretize`,
other mechanisms), is ≥ the true one. Then:

* each cell's probability is enclosed in an Arb ball and written as an integer in units of 2^−bits
  with the ball's upper end rounded up: (2) is a polynomial with non-negative coefficients in the
  masses (:mod:`rdp_verify.pld.compose`, equation (1)), so raising masses only raises it;
* mass of L above the top grid point ℓ_{k_hi} goes to loss +∞ (rounding up to +∞), and the range is
  chosen so that it is at most ``tail`` (proven: the ball's upper end is ≤ ``tail``);
* mass of L at or below the bottom point ℓ_{k_lo} goes to ℓ_{k_lo} (its losses are rounded up, further
  than one cell).

**Lower bounds: losses rounded down, masses rounded down** (optimistic rounding, same sources).
L̲ = h·⌊L/h⌋ ≤ L: the grid point ℓ_k receives the P-probability of [ℓ_k, ℓ_{k+1}); masses are the
balls' lower ends rounded down (floored at 0); mass of L at or above the top point goes to ℓ_{k_hi}
(rounded down, further than one cell; also any mass at +∞), and mass below ℓ_{k_lo} is dropped
(dropping P-mass only lowers (2)), at most ``tail`` (proven). Every δ_k computed from these is ≤ the
true one of the composed pairs. (The total mass is < 1: the discrete "pair" is a sub-probability
measure, which (2) and :mod:`rdp_verify.pld.compose` handle as it is.)

**Monotone pairs** (:class:`MonotonePair`). Every mechanism here is a pair of laws on ℝ (with
densities) or on ℤ whose loss L(x) is non-increasing in x (dp_accounting's
``AdditiveNoisePrivacyLoss`` convention: P = μ_upper, Q = μ_lower). Then for every level ℓ there is a
cut t with {L > ℓ} = {x < t} and one with {L ≥ ℓ} = {x ≤ t} (up to P- and Q-null sets: the laws
on ℝ have no atoms, and on ℤ the cuts are half-integers), so

    P(L > ℓ) = F_P(t_gt(ℓ)),   P(L ≥ ℓ) = F_P(t_ge(ℓ)),                                          (3)

with F_P the CDF. A pair gives F_P, F_Q at exact points and an enclosure [t⁻, t⁺] of each cut (exact
rationals where the inverse loss is rational, an Arb ball or a verified bracket of a root otherwise,
±∞ where the set is empty or everything); F is non-decreasing, so the probability lies in
[F(t⁻), F(t⁺)], the union of the two balls. A cell's probability is the difference of two such
balls, which contains the exact difference: its upper end rounded up is ≥ it (outward) and its lower
end rounded down is ≤ it (inward). A pair whose survival has a closed form may give these balls directly
(:meth:`MonotonePair.survivals`, e.g. Laplace's 1 − e^{(ℓ − ε₀)/2}/2, one exponential per grid point); all that
the rounding uses is that each ball contains the exact P(L > ℓ) or P(L ≥ ℓ).

**The two directions.** "remove" is the pair (P, Q) itself, the law of L under P. "add" is the
swapped pair (Q, P), whose loss is −L under Q: Q(−L > ℓ) = 1 − F_Q(t_ge(−ℓ)) and
Q(−L ≥ ℓ) = 1 − F_Q(t_gt(−ℓ)). For symmetric mechanisms both laws are equal and computed once.

**Exact δ of one use** (:func:`hockey_stick`). By Neyman–Pearson, δ(ε) = sup_A P(A) − e^ε Q(A) is
attained at A = {L > ε} = {x < t}, so with d(u) = F_P(u) − e^ε F_Q(u): every d(u) ≤ δ(ε), and for a cut
enclosed in [t⁻, t⁺], δ(ε) = d(t) ≤ d(t⁻) + P(t⁻ ≤ X < t) ≤ d(t⁻) + F_P(t⁺) − F_P(t⁻). The add
direction is the same with the sets {x > t} and Q, P swapped.

**Fixed point and precision.** Balls are computed at ``bits`` + :data:`GUARD_BITS` bits, so each
enclosure is far narrower than one unit 2^−bits and the rounding of a mass costs at most one unit.
The grid's range (where the tails fall below ``tail``) is found by a search on whole numbers; it only
affects tightness and size, never validity. :data:`MAX_POINTS` caps a grid (larger is refused).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Callable, ClassVar, Sequence

from flint import arb, ctx, fmpq

from ..foundations.inputs import InputError
from ..foundations.results import lower_end, to_arb, upper_end
from .compose import PLD
from .grid import GUARD_BITS

__all__ = ["DIRECTIONS", "BOUNDS", "GUARD_BITS", "MAX_POINTS", "MAX_BITS", "BELOW", "ABOVE", "Cut", "MonotonePair",
           "FinitePair", "PoissonSampled", "discretize", "hockey_stick", "survival", "upper_int", "lower_int", "ball_cut",
           "exact_cut"]

DIRECTIONS = ("remove", "add")
BOUNDS = ("upper", "lower")
MAX_POINTS = 1 << 22  # the most grid points one PLD may have
MAX_BITS = 4096


class _Infinite:
    """An end of the extended real line, as a cut: F(−∞) = 0, F(+∞) = 1."""

    def __init__(self, name: str, cdf: int):
        self.name, self.cdf = name, cdf

    def __repr__(self) -> str:
        return self.name


BELOW = _Infinite("-inf", 0)  # the cut lies below every x: the set {x < t} is empty
ABOVE = _Infinite("+inf", 1)  # the cut lies above every x: the set is everything

Point = arb | _Infinite  # an exact Arb point or ±∞
Cut = tuple[Point, Point]  # an enclosure [t⁻, t⁺] of a cut


def ball_cut(x: arb) -> Cut:
    """The enclosure of a cut known as an Arb ball: its two exact ends."""
    return x.lower(), x.upper()


def exact_cut(x: Fraction) -> Cut:
    """A cut at a rational: the ends of its ball (one exact point when x is dyadic)."""
    return ball_cut(to_arb(x))


def upper_int(x: arb, scale: arb) -> int:
    """The smallest integer ≥ every point of the ball x·scale (at least 0)."""
    return max(0, int((x * scale).upper().ceil().unique_fmpz()))


def lower_int(x: arb, scale: arb) -> int:
    """The largest integer ≤ every point of the ball x·scale (at least 0)."""
    return max(0, int((x * scale).lower().floor().unique_fmpz()))


class MonotonePair(ABC):
    """A pair (P, Q) on ℝ (with densities) or on ℤ whose loss L(x) = log dP/dQ(x) is non-increasing in x,
    finite everywhere (module docstring, (3)). Call its methods under a working precision."""

    continuous_loss: ClassVar[bool] = False  # the law of L has no atoms: P(L > ℓ) = P(L ≥ ℓ)

    @abstractmethod
    def p_cdf(self, x: arb) -> arb:
        """A ball containing P(X ≤ x) at the exact point x."""

    @abstractmethod
    def q_cdf(self, x: arb) -> arb:
        """A ball containing Q(X ≤ x) at the exact point x."""

    @abstractmethod
    def cut(self, level: Fraction, strict: bool) -> Cut:
        """An enclosure of the cut t with {L > level} = {X < t} (``strict``) or {L ≥ level} = {X ≤ t}."""

    def survival(self, direction: str, level: Fraction, strict: bool) -> arb:
        """A ball containing the direction's P(L > level) (``strict``) or P(L ≥ level): by default from the cut and
        the CDFs (:func:`survival`); a pair with a closed form may return its own ball (it must contain the same
        exact value: the rounding of :func:`discretize` depends only on that)."""
        return survival(self, direction, level, strict)

    def survivals(self, direction: str, h: Fraction, ks: range, strict: bool) -> list[arb]:
        """:meth:`survival` at the levels k·h for k in ``ks`` (a pair may compute them together, faster)."""
        return [self.survival(direction, k * h, strict) for k in ks]


def _at(cdf: Callable[[arb], arb], x: Point) -> arb:
    return arb(x.cdf) if isinstance(x, _Infinite) else cdf(x)


def _over(cdf: Callable[[arb], arb], cut: Cut) -> arb:
    """A ball containing F(t) for every t in the cut's enclosure (F non-decreasing)."""
    lo, hi = cut
    a = _at(cdf, lo)
    return a if hi is lo else a.union(_at(cdf, hi))


def survival(pair: MonotonePair, direction: str, level: Fraction, strict: bool) -> arb:
    """A ball containing the direction's P(L > level) (``strict``) or P(L ≥ level) (module docstring)."""
    if direction == "remove":
        return _over(pair.p_cdf, pair.cut(level, strict))
    return 1 - _over(pair.q_cdf, pair.cut(-level, not strict))


class _Survival:
    """The survival balls of one direction on the lattice h·ℤ, each computed once."""

    def __init__(self, pair: MonotonePair, direction: str, h: Fraction):
        self.pair, self.direction, self.h = pair, direction, h
        self.cache: dict[tuple[int, bool], arb] = {}

    def __call__(self, k: int, strict: bool) -> arb:
        if self.pair.continuous_loss:
            strict = True
        key = (k, strict)
        if key not in self.cache:
            self.cache[key] = self.pair.survival(self.direction, k * self.h, strict)
        return self.cache[key]

    def many(self, ks: range, strict: bool) -> list[arb]:
        """The balls at every k in ``ks`` (those not cached yet computed together by the pair)."""
        if self.pair.continuous_loss:
            strict = True
        missing = [k for k in ks if (k, strict) not in self.cache]
        if missing:
            runs = [missing[0]]  # the missing ks as consecutive runs (one batch each)
            for a, b in zip(missing, missing[1:]):
                if b != a + 1:
                    runs += [a, b]
            runs.append(missing[-1])
            for lo, hi in zip(runs[::2], runs[1::2]):
                batch = range(lo, hi + 1)
                self.cache.update(zip(((k, strict) for k in batch),
                                      self.pair.survivals(self.direction, self.h, batch, strict)))
        return [self.cache[k, strict] for k in ks]


def _first_true(holds: Callable[[int], bool], start: int = 0) -> int:
    """The smallest k with holds(k), for ``holds`` false then true as k grows (doubling, then bisection)."""
    step, down = 1, holds(start)
    while holds(start - step) if down else not holds(start + step):
        step *= 2
        if step > 4 * MAX_POINTS:
            raise InputError("the loss range is beyond the grid's limit: take a larger grid step h")
    bad, good = (start - step, start - step // 2 if step > 1 else start) if down else \
        (start + step // 2 if step > 1 else start, start + step)
    while good - bad > 1:  # holds(bad) is false, holds(good) true
        mid = (good + bad) // 2
        good, bad = (mid, bad) if holds(mid) else (good, mid)
    return good


def _range(s: _Survival, tail: Fraction) -> tuple[int, int]:
    """(k_lo, k_hi): k_hi the smallest k with P(L > ℓ_k) ≤ tail, k_lo the largest with P(L < ℓ_k) ≤ tail
    (both proven from the balls' upper ends), k_lo ≤ k_hi."""
    limit = to_arb(tail)
    k_hi = _first_true(lambda k: bool(s(k, True).upper() <= limit.lower()))
    k_lo = _first_true(lambda k: not bool((1 - s(k, False)).upper() <= limit.lower()), k_hi) - 1
    k_lo = min(k_lo, k_hi)
    if k_hi - k_lo + 1 > MAX_POINTS:
        raise InputError(f"the grid would have {k_hi - k_lo + 1} points, beyond the {MAX_POINTS} allowed: "
                         f"take a larger grid step h")
    return k_lo, k_hi


def discretize(pair: MonotonePair, direction: str, h: Fraction, bits: int, tail: Fraction) -> tuple[PLD, PLD]:
    """(upper, lower): the PLDs of the direction's loss rounded up and down to h·ℤ (module docstring)."""
    with ctx.workprec(bits + GUARD_BITS):
        s = _Survival(pair, direction, h)
        k_lo, k_hi = _range(s, tail)
        scale = arb(2) ** bits
        above = s.many(range(k_lo, k_hi + 1), True)  # P(L > ℓ_k)
        at_least = s.many(range(k_lo, k_hi + 1), False)  # P(L ≥ ℓ_k)
        # upper: ℓ_k gets P(ℓ_{k−1} < L ≤ ℓ_k); the bottom point everything ≤ ℓ_{k_lo}; +∞ everything above the top
        up = [1 - above[0]] + [above[i - 1] - above[i] for i in range(1, len(above))]
        upper = PLD.from_masses([upper_int(m, scale) for m in up], k_lo, upper_int(above[-1], scale), bits, h, "up")
        # lower: ℓ_k gets P(ℓ_k ≤ L < ℓ_{k+1}); the top point everything ≥ ℓ_{k_hi}; below the bottom dropped
        low = [at_least[i] - at_least[i + 1] for i in range(len(at_least) - 1)] + [at_least[-1]]
        lower = PLD.from_masses([lower_int(m, scale) for m in low], k_lo, 0, bits, h, "down")
    return upper, lower


def hockey_stick(pair: MonotonePair, direction: str, epsilon: Fraction) -> arb:
    """A ball containing the direction's δ(ε) (module docstring, Neyman–Pearson); call under a precision."""
    x = to_arb(epsilon).exp()
    if direction == "remove":
        lo, hi = pair.cut(epsilon, True)  # the optimal set {X < t}

        def d(u: Point) -> arb:
            return _at(pair.p_cdf, u) - x * _at(pair.q_cdf, u)

        base, slack = d(lo), _at(pair.p_cdf, hi) - _at(pair.p_cdf, lo)
    else:
        lo, hi = pair.cut(-epsilon, False)  # {−L > ε} = {L < −ε} = {X > t}

        def d(u: Point) -> arb:
            return (1 - _at(pair.q_cdf, u)) - x * (1 - _at(pair.p_cdf, u))

        base, slack = d(hi), _at(pair.q_cdf, hi) - _at(pair.q_cdf, lo)
    top = base.upper() + slack.upper()
    bottom = base.lower()
    return arb(bottom).union(arb(top))


# -- two generic pairs ---------------------------------------------------------------------------------

class FinitePair(MonotonePair):
    """A pair on finitely many outcomes with exact rational masses, all positive: outcomes sorted by
    decreasing likelihood ratio r_i = p_i/q_i and placed at x = 0, 1, …, so L(x) = log r_x is
    non-increasing; a cut is a half-integer, found by comparing r_i with e^ℓ (exact at ℓ = 0; in Arb
    otherwise, an undecided comparison widening the enclosure)."""

    def __init__(self, p: Sequence[Fraction], q: Sequence[Fraction]):
        order = sorted(range(len(p)), key=lambda i: p[i] / q[i], reverse=True)
        self.p = [Fraction(p[i]) for i in order]
        self.q = [Fraction(q[i]) for i in order]
        self.ratio = [a / b for a, b in zip(self.p, self.q)]
        self.prefix = {"p": [sum(self.p[:n], Fraction(0)) for n in range(len(self.p) + 1)],
                       "q": [sum(self.q[:n], Fraction(0)) for n in range(len(self.q) + 1)]}
        self.balls: dict[tuple[str, int], list[arb]] = {}  # per (kind, precision): the same balls, computed once

    def _at_prec(self, kind: str, make: Callable[[], list[arb]]) -> list[arb]:
        key = (kind, ctx.prec)
        if key not in self.balls:
            self.balls[key] = make()
        return self.balls[key]

    def _cdf(self, kind: str, x: arb) -> arb:
        n = int(x.floor().unique_fmpz())  # x is an exact half-integer or beyond the outcomes
        sums = self._at_prec(kind, lambda: [to_arb(v) for v in self.prefix[kind]])
        return sums[max(0, min(n + 1, len(sums) - 1))]

    def p_cdf(self, x: arb) -> arb:
        return self._cdf("p", x)

    def q_cdf(self, x: arb) -> arb:
        return self._cdf("q", x)

    def _above(self, i: int, level: Fraction, strict: bool, lv: arb | None = None) -> bool | None:
        """log r_i > level (``strict``) or ≥ level; None if undecided in Arb (``lv``: the level's ball, if known)."""
        r = self.ratio[i]
        if level == 0:
            return r > 1 if strict else r >= 1
        logs = self._at_prec("log", lambda: [to_arb(v).log() for v in self.ratio])
        diff = logs[i] - (to_arb(level) if lv is None else lv)
        if diff > 0:
            return True
        if diff < 0:
            return False
        return None

    def _last(self, level: Fraction, strict: bool, lv: arb | None = None) -> tuple[int, int]:
        """(sure, possible): the last outcome surely / possibly in the set (the set is a prefix; −1: none)."""
        sure = possible = -1
        lv = to_arb(level) if lv is None else lv
        for i in range(len(self.ratio)):
            verdict = self._above(i, level, strict, lv)
            if verdict is None:
                possible = i
            elif verdict:
                sure = possible = i
        return sure, possible

    def cut(self, level: Fraction, strict: bool) -> Cut:
        sure, possible = self._last(level, strict)
        return to_arb(Fraction(2 * sure + 1, 2)), to_arb(Fraction(2 * possible + 1, 2))  # exact half-integers

    def survivals(self, direction: str, h: Fraction, ks: range, strict: bool) -> list[arb]:
        """The generic balls (:func:`survival`: the same cut, the same CDF balls and their union), each distinct cut's
        computed once: the survival is a step function of the level with at most one step per outcome."""
        kind, sign, strict = ("p", 1, strict) if direction == "remove" else ("q", -1, not strict)
        sums = self._at_prec(kind, lambda: [to_arb(v) for v in self.prefix[kind]])
        memo: dict[tuple[int, int], arb] = {}
        out = []
        for k in ks:
            level = sign * k * h
            key = self._last(level, strict, arb(fmpq(level.numerator, level.denominator)))  # = to_arb(level)
            if key not in memo:
                ball = sums[key[0] + 1].union(sums[key[1] + 1])  # F at the cut's two ends (_over)
                memo[key] = ball if direction == "remove" else 1 - ball
            out.append(memo[key])
        return out


class PoissonSampled(MonotonePair):
    """Poisson sampling of a monotone pair: P = (1 − q)·Q_in + q·P_in, Q = Q_in (the remove direction;
    add is the swapped pair). Its loss L = log(1 − q + q·e^{L_in}) is a non-decreasing function of L_in,
    hence non-increasing in x, and L > ℓ ⟺ L_in > g(ℓ) = log((e^ℓ − 1 + q)/q) where e^ℓ > 1 − q (for
    e^ℓ ≤ 1 − q every x is in the set: L > log(1 − q)). The cut of g(ℓ) is the inner pair's; g(ℓ) is an
    Arb ball, and the inner cut is non-increasing in the level, so the cut over the ball is enclosed by the
    inner cuts at its two exact (rational) ends. Atoms of L_in map to atoms of L."""

    def __init__(self, inner: MonotonePair, q: Fraction):
        self.inner, self.q = inner, Fraction(q)
        self.continuous_loss = inner.continuous_loss

    def p_cdf(self, x: arb) -> arb:
        q = to_arb(self.q)
        return (1 - q) * self.inner.q_cdf(x) + q * self.inner.p_cdf(x)

    def q_cdf(self, x: arb) -> arb:
        return self.inner.q_cdf(x)

    def cut(self, level: Fraction, strict: bool) -> Cut:
        if self.q == 1:
            return self.inner.cut(level, strict)
        q = to_arb(self.q)
        margin = to_arb(level).exp() - (1 - q) if level else q  # e^ℓ − (1 − q), exact at ℓ = 0
        if margin <= 0:
            return ABOVE, ABOVE
        if not margin > 0:  # undecided: the set may be everything
            g = (margin.upper() / q).log()
            return self.inner.cut(upper_end(g), strict)[0], ABOVE
        g = (margin / q).log()
        if g.is_exact():
            return self.inner.cut(upper_end(g), strict)
        return self.inner.cut(upper_end(g), strict)[0], self.inner.cut(lower_end(g), strict)[1]
