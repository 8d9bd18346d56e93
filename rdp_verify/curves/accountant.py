"""Proven (ε, δ) of a DP-SGD run: the privacy curve of T adaptive SGM steps, bracketed from both sides.

The run is a sequence of phases (q_i, σ_i, T_i) of the Sampled Gaussian Mechanism (Poisson sampling,
ℓ2-sensitivity 1, add/remove-one neighbours). Its privacy curve is

    δ(ε) = max over the two directions of H_{e^ε}(P‖Q),   (P, Q) = (⊗μ_i^{T_i}, ⊗μ0^{T_i}) or swapped,

the hockey-stick divergence of the composed dominating pairs (Zhu, Dong, Wang 2022, Theorem 10 and
Theorem 11: the remove pair (μ, μ0) and the add pair (μ0, μ) are tight dominating pairs of one step,
and dominance survives adaptive composition), and ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

**The bracket.** Each step is replaced by two discrete pairs on a loss grid h·ℤ
(:mod:`rdp_verify.curves.discretize`): one that dominates it (connect-the-dots) and one it
dominates (lowered chords). Their compositions (:mod:`rdp_verify.pld.compose`, exact integers,
directed rounding) bracket the true curve in both directions:

* δ_upper(ε) = max over directions of the upper end of the dominating pairs' δ at ε;
* δ_lower(ε) = max over directions of the lower end of the dominated pairs' δ at ε;
* ε_upper(δ): a point where every direction's δ_upper ≤ δ, verified by evaluating δ there;
* ε_lower(δ): a point where some direction's δ_lower > δ, verified the same way (below it the true
  curve is above δ, so ε(δ) ≥ ε_lower).

**q = 1.** A run whose every phase has q = 1 is the Gaussian mechanism with μ² = Σ T_i/σ_i²; its
curve is bracketed in closed form (:mod:`rdp_verify.curves.gaussian`), with no grid.

**Choosing the grid.** Every bracket is proven whatever the grid is; the grid only decides the width.
The first grid step comes from the size of one step's privacy loss (:func:`initial_step`: about a
twentieth of its standard deviation, the resolution at which T composed steps meet a relative width
of 1e-3, but at least 1/20000 and at most 1/400 of its range; where the curve is nearly linear only
every 2^j-th grid point is evaluated, :func:`rdp_verify.curves.discretize.grid_points`). :func:`bracket` then measures the
width and refines h (the width is second order in h) along a path that depends only on the widths
found, never on the tolerance asked for: a tighter tolerance walks the same path further, and the
tightest bracket seen is returned, so a tighter tolerance never gives a wider bracket. Each
refinement aims at the next rung of 1, 2, 5 × 10^−k at least twice below the width found. The
fixed-point bits follow from δ (40 guard bits below its scale) and the truncation allowance is
rung·δ/50 (at most 1e-3·δ/50). When the predicted cost of the next grid exceeds :data:`MAX_GRID`
composed or per-step grid points or :data:`MAX_STEP_POINTS` evaluated points per step, the tightest bracket found is returned
and the certificate states by how much it misses the tolerance. A bracket wider than half its upper end
(a dominated pair that does not resolve the loss yet) is followed by a grid a quarter as fine; after
two of them in a row the search stops.

Cost: one discretisation per distinct (q, σ), O(n) Arb evaluations for n = (loss range)/h grid points;
four compositions (two directions × two bounds) of about 2·log2(T) integer-polynomial products each (per
stretch of identical consecutive phases, which are composed as one: 5000 one-step phases cost one 5000-step
phase), of length about (composed loss range)/h. For the run of TF Privacy's MNIST tutorial (q = 256/60000,
σ = 1.1, T = 14063, δ = 1e-5) h = 2e-4, about 20 000 grid points per step (13 000 evaluated) and
39 000 composed; time grows like √T/h·log T. A process keeps its last 16 step discretisations (at most 4·10^5 grid
points in all), 16 leaf discretisations and 8 composed PLDs (each table at most 2·10^6 grid points), keyed by every exact input they depend on (pure functions of them,
immutable), so a calibration's probes, a refinement walked further or a check after a certificate in the same process meet them
again instead of recomputing them; :func:`forget_kept` drops them (the benchmarks time every run from cold).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Iterable, Protocol, Sequence

import mpmath
from flint import arb, ctx

from ..foundations.inputs import (
    InputError,
    check_delta,
    check_epsilon,
    check_steps,
    check_tolerance,
    fraction_text,
)
from ..foundations.results import arb_to_bounded, to_arb
from ..foundations.run import Phase, merged, run_family
from ..pld.compose import PLD, Budget, bits_for, compose, delta_at, epsilon_root, products_needed, verified_root
from .discretize import StepPLD, discretize, grid_range, loss_scale
from .gaussian import GaussianCurve, is_gaussian_run
from .options import DEFAULT_TOLERANCE, DELTA_MIN
from .per_epoch import PerEpochBounds, is_per_epoch_run

__all__ = ["DIRECTIONS", "Settings", "Curves", "Bracket", "Leaf", "Progress", "compose_run",
           "delta_bracket", "epsilon_bracket", "bracket", "check_run", "default_settings", "forget_kept", "initial_step",
           "method_of", "Memo", "step_task_key", "leaf_key", "composed_key"]

DIRECTIONS = ("remove", "add")
MAX_REFINEMENTS = 6
MAX_GRID = 4 * 10**6  # grid points of a composed PLD we accept to compute (memory: about 100 MB each)
MAX_STEP_POINTS = 4 * 10**5  # grid points evaluated for one step's discretisation (about 40 s of Arb evaluations)
FIRST_RUNG = Fraction(1, 1000)  # the truncation allowance of the first grid is 1e-3·δ/50
NICE = (1, Fraction(5, 4), 2, Fraction(5, 2), 4, 5, 8)  # grid steps are these times a power of ten
RUNGS = (5, 2, 1)  # refinements aim at widths of 5, 2, 1 × 10^−k


@dataclass(frozen=True)
class Settings:
    """How the curve is discretised; every bracket is proven whatever these are."""

    grid_step: Fraction  # h: losses lie on h·ℤ
    bits: int  # fixed-point bits of every mass
    truncation: Fraction  # B: the composition may cut off mass adding at most 2B to δ
    tail: Fraction  # single-step tail mass left beyond the grid, per step (moved to +∞ or dropped)
    max_length: int | None = None  # not recorded: a check's cap on composed PLDs (certificate.LIMITS), else none

    def to_json(self) -> dict[str, Any]:
        return {"grid_step": fraction_text(self.grid_step), "fixed_point_bits": self.bits,
                "truncation_allowance": fraction_text(self.truncation), "single_step_tail": fraction_text(self.tail)}


class Leaf(Protocol):
    """A mechanism composed beside the SGM steps (:mod:`rdp_verify.mechanisms`): its proven PLDs on h·ℤ per
    (direction, bound), each leaving at most ``tail`` of mass beyond its grid, and the size of its loss (a heuristic
    for the first grid). A leaf may say ``order = 2`` when its PLDs' error is second order in h (the first grid is
    then coarser and refinements shrink h like the square root of the width, as for the SGM steps; default 1). A
    leaf may name a ``grid_unit()``, a loss it is exact at when that is a grid point (a run of leaves only then takes
    grid steps dividing it: :func:`aligned`). A leaf may also have ``self_composed(uses)``: a leaf standing for that many uses, whose PLDs
    are the composed law's rounded once (exact for randomized response:
    :class:`rdp_verify.mechanisms.finite_composition.SelfComposed`), or None; the run then composes it once. A leaf
    whose two ends bracket different pairs (a dominating and a dominated one that differ, as the fixed-size
    replace-one steps) says ``structural = True``: :func:`bracket` then stops refining once a finer grid no longer
    narrows the bracket (truncated Poisson sampling:
    :class:`rdp_verify.mechanisms.truncated_sampled_gaussian.TruncatedSampledGaussian`)."""

    def plds(self, h: Fraction, bits: int, tail: Fraction) -> dict[tuple[str, str], PLD]: ...

    def loss_scale(self) -> Fraction: ...


def folded(leaves: Sequence[tuple[Leaf, int]]) -> tuple[tuple[Leaf, int], ...]:
    """The factors the run composes for its leaves: a leaf used n > 1 times that has an exact self-composition
    (:class:`Leaf`) as that composition used once, every other leaf as it is."""
    out = []
    for leaf, count in leaves:
        fold = getattr(leaf, "self_composed", None)
        composed = fold(count) if fold is not None and count > 1 else None
        out.append((leaf, count) if composed is None else (composed, 1))
    return tuple(out)


@dataclass
class Curves:
    """The composed discrete PLDs of a run, per (direction, "upper" | "lower"), composed on first use; identical
    consecutive phases are composed as one (:func:`~rdp_verify.foundations.run.merged`), ``phases`` kept as given."""

    phases: tuple[Phase, ...]
    settings: Settings
    steps: tuple[StepPLD, ...]
    budget: Budget
    leaves: tuple[tuple[Leaf, int], ...] = ()  # other mechanisms and how often each is applied, as given
    leaf_plds: tuple[dict[tuple[str, str], PLD], ...] = ()  # the PLDs of folded(leaves), composed their counts
    plds: dict[tuple[str, str], PLD] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def prec(self) -> int:
        return self.settings.bits + 64

    def pld(self, direction: str, bound: str) -> PLD:
        """The composed PLD of the run for a direction and a bound (exact integers; cached)."""
        key = (direction, bound)
        other = ("add" if direction == "remove" else "remove", bound)
        if key not in self.plds and other in self.plds and self._symmetric():
            self.plds[key] = self.plds[other]  # both directions have the same factors: the same composition
        if key not in self.plds:
            start = time.perf_counter()
            kept = composed_key(direction, bound, self.settings, self.budget, self.phases, self.leaves)
            found = COMPOSED.get(kept)
            if found is not None:
                self.plds[key] = found
            else:
                by_pair = {(s.pair, s.q, s.sigma): s for s in self.steps}
                parts = [(_single(by_pair[step_key(p)], direction, bound), p.steps) for p in merged(self.phases)]
                parts += [(plds[(direction, bound)], count) for (_, count), plds in zip(folded(self.leaves),
                                                                                        self.leaf_plds)]
                self.plds[key] = compose(parts, self.budget)
                COMPOSED.put(kept, self.plds[key], self.plds[key].length)
            self.seconds += time.perf_counter() - start
        return self.plds[key]

    def _symmetric(self) -> bool:
        """Every factor has one PLD for both directions (leaves only, each symmetric: the same objects)."""
        return not self.phases and all(p[("add", b)] is p[("remove", b)] for p in self.leaf_plds
                                       for b in ("upper", "lower"))

    def longest(self) -> int:
        """The longest composed PLD so far (grid points)."""
        return max((p.length for p in self.plds.values()), default=0)


@dataclass(frozen=True)
class Bracket:
    """A proven interval [lower, upper] (upper may be None: +∞, no bound) and how it was obtained.

    ``curves`` is the run's :class:`Curves` (discrete pairs) or :class:`GaussianCurve` (q = 1, closed
    form); ``refinements`` lists every grid tried (empty for the closed form).
    """

    lower: Fraction
    upper: Fraction | None
    by_direction: dict[str, tuple[Fraction, Fraction | None]]
    curves: Curves | GaussianCurve | PerEpochBounds
    refinements: list[dict[str, Any]] = field(default_factory=list)
    proven: PerEpochBounds | None = None  # a per-epoch run's bounds at the tests and orders that gave this bracket

    @property
    def method(self) -> str:
        return method_of(self.curves)

    @property
    def proof(self) -> Curves | GaussianCurve | PerEpochBounds:
        """The curves at exactly what gave this bracket, what a certificate records and re-checks: for a per-epoch
        run the bounds at its tests, composed bound and random-allocation orders (:meth:`PerEpochBounds.delta_proof`),
        otherwise :attr:`curves` itself. A value: computing another bracket from the same curves never changes it."""
        return self.curves if self.proven is None else self.proven

    def relative_width(self) -> Fraction | None:
        if self.upper is None:
            return None
        if self.upper == 0:
            return Fraction(0)
        return (self.upper - self.lower) / self.upper


def method_of(curves: Curves | GaussianCurve | PerEpochBounds) -> str:
    """How a run's curve is bracketed: ``discrete pairs``, ``closed form`` (q = 1) or ``per-epoch bounds``."""
    if isinstance(curves, PerEpochBounds):
        return "per-epoch bounds"
    return "closed form" if isinstance(curves, GaussianCurve) else "discrete pairs"


def check_run(phases: Sequence[Phase], leaves: Sequence[tuple[Leaf, int]] = ()) -> tuple[Phase, ...]:
    """The phases, refused if the run is empty, beyond the supported total number of steps (with the leaves'
    uses), or mixing neighbour relations or per-epoch samplers with others
    (:func:`~rdp_verify.foundations.run.run_family`; per-epoch samplers have bounds, not PLDs, so no leaves either)."""
    phases = tuple(phases)
    if not phases and not leaves:
        raise InputError("a run needs at least one phase")
    for p in phases:
        if not isinstance(p, Phase):
            raise InputError("phases must be Phase objects")
    check_steps(total_steps(phases, leaves), "steps")  # in all, for privacy curves
    if phases:
        run_family(phases)
    if leaves and phases and is_per_epoch_run(phases):
        raise InputError("shuffled or balls-in-bins phases are bracketed per epoch and cannot be composed with "
                         "other mechanisms")
    return phases


def total_steps(phases: Sequence[Phase], leaves: Sequence[tuple[Leaf, int]] = ()) -> int:
    """The run's steps and the leaves' uses: the composed factors."""
    return sum(p.steps for p in phases) + sum(count for _, count in leaves)


def _nice_below(x: float) -> Fraction:
    """The largest 'nice' decimal (NICE × 10^k) not above x."""
    e = math.floor(math.log10(x))
    for m in reversed(NICE):
        value = Fraction(m) * Fraction(10) ** e
        if value <= x * (1 + 1e-12):
            return value
    return Fraction(NICE[-1]) * Fraction(10) ** (e - 1)


def _short(x: Fraction) -> Fraction:
    """x rounded down to one significant decimal digit (settings print as short exact decimals)."""
    from ..foundations.decimals import decimal_text
    return Fraction(decimal_text(x, 1, "down"))


def default_settings(phases: Sequence[Phase], grid_step: Fraction, delta_scale: Fraction,
                     rung: Fraction = FIRST_RUNG, leaves: Sequence[tuple[Leaf, int]] = ()) -> Settings:
    """Settings for a run whose δ is about ``delta_scale``: truncation rung·δ/50, so its share of the
    width stays far below the rung aimed at."""
    steps = total_steps(phases, leaves)
    allowance = _short(min(Fraction(rung), FIRST_RUNG) * Fraction(delta_scale) / 50)
    return Settings(grid_step=grid_step, bits=bits_for(Fraction(delta_scale)), truncation=allowance,
                    tail=_short(allowance / (10 * steps)))


def step_key(phase: Phase) -> tuple[str, Fraction, Fraction]:
    """(pair, q, σ) of a phase's step: the one-step pairs that bound it (:data:`~rdp_verify.curves.discretize.PAIRS`)."""
    if phase.neighbours == "add-remove":
        if phase.sampler != "poisson":
            raise InputError(f"sampler {phase.sampler} with add-remove neighbours has no discretised pair")
        return "sgm", phase.q, phase.sigma
    if phase.sampler not in ("poisson", "fixed"):
        raise InputError(f"sampler {phase.sampler} has no discretised pair")
    return ("replace-one" if phase.sampler == "poisson" else "fixed-replace-one"), phase.q, phase.sigma


LEAF_RESOLUTION = {1: 1000, 2: 50}  # a leaf's first grid step: its loss scale over this, by the order of its PLDs'
# error in h (losses rounded to the grid: first order; Laplace's connect-the-dots and lowered chords: second)


def aligned(h: Fraction, leaves: Sequence[tuple[Leaf, int]]) -> Fraction:
    """The largest step ≤ h that divides every leaf's ``grid_unit()`` (a loss its PLDs are exact at when it is a grid
    point: Laplace's atoms ±ε₀, where its curve has kinks), i.e. g/⌈g/h⌉ for g the largest rational dividing them all;
    h itself when no leaf names one, or when that step would be below h/2 (units without a common measure near h, such
    as 1/1000 and 1/1001: their grid would be tiny). Off such points a kink falls inside a cell and its width is first
    order."""
    units = [Fraction(u) for u in (getattr(leaf, "grid_unit", lambda: None)() for leaf, _ in leaves) if u]
    if not units:
        return h
    common = math.lcm(*(u.denominator for u in units))
    g = Fraction(math.gcd(*(u.numerator * (common // u.denominator) for u in units)), common)
    step = g / -(-g // h)
    return step if 2 * step >= h else h


def order_of(leaf: Leaf) -> int:
    """How the width of a leaf's PLDs shrinks with the grid step, like h^order (:class:`Leaf`; 1 unless it says)."""
    return 2 if getattr(leaf, "order", 1) == 2 else 1


def initial_step(phases: Sequence[Phase], tail: Fraction, leaves: Sequence[tuple[Leaf, int]] = ()) -> Fraction:
    """The first grid step (module docstring): per distinct step, a twentieth of the loss's standard
    deviation, clamped to [range/20000, range/400]; the smallest over the steps, rounded to a nice decimal. A run
    of leaves only: the smallest of their loss scales over :data:`LEAF_RESOLUTION` for their order (beside SGM
    steps, whose grid already resolves the run's loss, a leaf's own scale is not asked for: refinement follows the
    width found)."""
    steps = [] if phases else [Fraction(leaf.loss_scale()) / LEAF_RESOLUTION[order_of(leaf)] for leaf, _ in leaves]
    for pair, q, sigma in dict.fromkeys(step_key(p) for p in phases):
        width, spread = _loss_scale(q, sigma, tail, pair)
        steps.append(min(max(spread / 20, width / 20000), width / 400))
    h = min(steps)
    if not phases:  # many uses: the composed loss spreads like √(Σ n·scale²); keep its first grid within MAX_GRID
        spread = math.sqrt(sum(count * float(leaf.loss_scale()) ** 2 for leaf, count in leaves))
        h = max(h, Fraction(40 * spread / MAX_GRID))
    elif leaves:  # SGM steps whose loss is tiny (a huge sigma) beside a leaf: its own grid must still fit
        h = max(h, max(16 * Fraction(leaf.loss_scale()) for leaf, _ in leaves) / MAX_GRID)
    return _nice_below(h)


_loss_scale = lru_cache(maxsize=64)(loss_scale)  # a pure function of its arguments, asked twice by bracket()
DELTA_WIDTH_AIM = 5  # the first grid of δ(ε) aims at about this many times the ε bracket's width (_delta_steering)


def _delta_steering(phases: Sequence[Phase], epsilon: Fraction, tail: Fraction) -> tuple[Fraction | None, float]:
    """(scale, factor) for the first grid of δ(ε): a heuristic that only steers (every bracket is proven whatever
    the grid), from the central limit: the run's loss as the Gaussian mechanism with μ² = Σ T_i·s_i² (s_i one
    step's loss spread, :func:`~rdp_verify.curves.discretize.loss_scale`), whose δ_G(ε) = Φ(−ε/μ + μ/2) −
    e^ε·Φ(−ε/μ − μ/2) (Balle & Wang 2018, Theorem 8) has the log-slope κ = ε·e^ε·Φ(−ε/μ − μ/2)/δ_G.

    * scale: δ_G/10, one significant digit (None when δ_G vanishes in double precision: the default scale
      stays). A scale far above δ is caught as before (the bracket's size redoes it); one below only costs bits.
    * factor: a bracket of relative width w in ε is one of about κ·w in δ at the same grid, and the width is
      second order in the step, so the first step is √(DELTA_WIDTH_AIM/κ) times :func:`initial_step`, within
      [1/4, 1] (δ's first grid then lands near the tolerance instead of a refinement after a wasted one)."""
    with mpmath.workdps(15):
        mu = mpmath.sqrt(sum(p.steps * _loss_scale(*step_key(p)[1:], tail, step_key(p)[0])[1] ** 2 for p in phases))
        eps = mpmath.mpf(epsilon.numerator) / epsilon.denominator
        if not mu > 0:
            return None, 1.0
        tail_mass = mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
        delta = mpmath.ncdf(-eps / mu + mu / 2) - tail_mass
        if not delta > 1e-300:
            return None, 1.0
        kappa = float(eps * tail_mass / delta)
        scale = max(_short(Fraction(float(delta / 10))), DELTA_MIN)
    return scale, min(max(math.sqrt(DELTA_WIDTH_AIM / kappa), 0.25), 1.0) if kappa > 0 else 1.0


Mapper = Callable[[Callable[[Any], Any], list[Any]], Iterable[Any]]
# Told how the work goes, for a caller to show (the command line's progress bar): one dict per stage, plain data.
# It computes nothing and its return value is ignored: the brackets are the same with or without it.
Progress = Callable[[dict[str, Any]], None]


def _discretize_step(args: tuple[str, Fraction, Fraction, Settings]) -> StepPLD:
    """One distinct (pair, q, σ) step of a run, discretised with the run's settings (a picklable task)."""
    pair, q, sigma, settings = args
    grid = grid_range(q, sigma, settings.grid_step, settings.tail, pair)
    return discretize(q, sigma, grid, settings.bits, budget=10 * settings.tail, pair=pair)


def _leaf_plds(leaf: Leaf, settings: Settings) -> dict[tuple[str, str], PLD]:
    """A leaf's discrete PLDs on the run's grid, kept like :func:`_discretize_step`'s (leaves are frozen; a folded
    randomized response's PLD spans its composed range, so the table is bounded by grid points too)."""
    key = leaf_key(leaf, settings)
    plds = LEAVES.get(key)
    if plds is None:
        plds = leaf.plds(settings.grid_step, settings.bits, settings.tail)
        LEAVES.put(key, plds, sum(p.length for p in {id(p): p for p in plds.values()}.values()))
    return plds


class Memo:
    """The last results of one pure function of exact inputs, by a key naming every input it reads (the key
    functions below; a key None, for an input that cannot be hashed, is never kept): at most ``most`` entries and
    ``points`` grid points in all, the oldest dropped first (a long process stays small); a value larger than
    ``points`` alone is not kept. The values are immutable, so a caller that meets one again shares it safely."""

    def __init__(self, most: int, points: int) -> None:
        self.most, self.points = most, points
        self._table: dict[Any, tuple[Any, int]] = {}  # insertion order = age

    def get(self, key: Any) -> Any:
        """The kept value, now the newest, or None."""
        if key is None or key not in self._table:
            return None
        self._table[key] = self._table.pop(key)
        return self._table[key][0]

    def put(self, key: Any, value: Any, size: int) -> None:
        if key is None or size > self.points:
            return
        self._table[key] = (value, size)
        while len(self._table) > self.most or sum(n for _, n in self._table.values()) > self.points:
            del self._table[next(iter(self._table))]

    def clear(self) -> None:
        self._table.clear()


STEPS = Memo(16, 4 * 10**5)  # step discretisations (four integers a grid point: about 60 MB)
LEAVES = Memo(16, 2 * 10**6)  # leaves' PLDs (a folded randomized response's spans its composed range)
COMPOSED = Memo(8, 2 * 10**6)  # composed PLDs (about 50 MB)


def _hashable(key: tuple) -> tuple | None:
    try:
        hash(key)
    except TypeError:  # an unhashable leaf (a caller's own class): computed each time
        return None
    return key


def step_task_key(pair: str, q: Fraction, sigma: Fraction, settings: Settings) -> tuple:
    """Everything one step's discretisation reads (:func:`_discretize_step`'s task)."""
    return pair, q, sigma, settings


def leaf_key(leaf: Leaf, settings: Settings) -> tuple | None:
    """Everything a leaf's PLDs read: the (frozen) leaf and the grid step, bits and tail."""
    return _hashable((leaf, settings.grid_step, settings.bits, settings.tail))


def composed_key(direction: str, bound: str, settings: Settings, budget: Budget, phases: Sequence[Phase],
                 leaves: Sequence[tuple[Leaf, int]]) -> tuple | None:
    """Everything a composed PLD reads: its direction and bound, the settings, the cut budget, each merged phase's
    step pair and count, and the leaves with their counts (the factors follow from these)."""
    return _hashable((direction, bound, settings, budget, tuple((step_key(p), p.steps) for p in merged(phases)),
                      tuple(leaves)))


def forget_kept() -> None:
    """Drop the kept discretisations and compositions (benchmarks time each run from cold)."""
    for memo in (STEPS, LEAVES, COMPOSED):
        memo.clear()


def compose_run(phases: Sequence[Phase], settings: Settings, mapper: Mapper = map,
                leaves: Sequence[tuple[Leaf, int]] = (), progress: Progress | None = None) -> Curves:
    """Discretise every phase's step; the compositions follow on first use (:meth:`Curves.pld`).

    ``mapper(fn, items)`` may discretise the distinct steps in parallel (the CLI passes
    :func:`rdp_verify.foundations.parallel.progress_map` on its pool); the result is the same.
    ``progress`` (:data:`Progress`), if given, hears ``{"stage": "leaf", "leaf": i, "leaves": n, "mechanism":
    name}`` before the i-th (from 1) of the n distinct leaves is discretised.
    """
    phases, leaves = check_run(phases, leaves), tuple(leaves)
    start = time.perf_counter()
    pairs = dict.fromkeys(step_key(p) for p in phases)
    tasks = [step_task_key(pair, q, sigma, settings) for pair, q, sigma in pairs]
    found = {t: STEPS.get(t) for t in tasks}
    todo = [t for t in tasks if found[t] is None]
    found.update(zip(todo, mapper(_discretize_step, todo)))
    for t in todo:
        STEPS.put(t, found[t], len(found[t].remove_upper))
    steps = [found[t] for t in tasks]
    factors = folded(leaves)

    def leaf_plds_of(i: int, leaf: Leaf) -> dict[tuple[str, str], PLD]:
        if progress is not None:
            progress({"stage": "leaf", "leaf": i, "leaves": len(factors), "mechanism": type(leaf).__name__})
        return _leaf_plds(leaf, settings)

    leaf_plds = tuple(leaf_plds_of(i, leaf) for i, (leaf, _) in enumerate(factors, 1))
    budget = Budget(int(settings.truncation * 2 ** settings.bits), total_steps(phases, leaves),
                    products_needed([p.steps for p in merged(phases)] + [count for _, count in factors]),
                    settings.max_length)
    return Curves(phases, settings, tuple(steps), budget, leaves, leaf_plds, seconds=time.perf_counter() - start)


def _single(step: StepPLD, direction: str, bound: str) -> PLD:
    """One step's PLD for a direction and a bound, on its grid log(anchor) + kh (the add direction mirrored)."""
    g, rounding = step.grid, "up" if bound == "upper" else "down"
    shift = ((g.anchor, 1),) if g.anchor != 1 else ()  # the losses are log(anchor) + kh
    if direction == "remove":
        masses = step.remove_upper if bound == "upper" else step.remove_lower
        inf = step.remove_upper_inf if bound == "upper" else 0
        return PLD.from_masses(masses, g.k_lo, inf, step.bits, g.h, rounding, shift)
    masses = step.add_upper if bound == "upper" else step.add_lower
    inf = step.add_upper_inf if bound == "upper" else 0
    return PLD.from_masses(list(reversed(masses)), -g.k_hi, inf, step.bits, g.h, rounding,
                           tuple((q, -c) for q, c in shift))


def _exact(x: arb) -> Fraction:
    return arb_to_bounded(x).value


def delta_bracket(curves: Curves | GaussianCurve | PerEpochBounds, epsilon: Fraction) -> Bracket:
    """Proven [δ_lower(ε), δ_upper(ε)] of the run at ε (module docstring).

    A direction's lower bound is composed only if its upper bound exceeds the best lower bound so
    far: otherwise it cannot raise max(δ_remove, δ_add)'s lower end.
    """
    epsilon = check_epsilon(epsilon)
    if isinstance(curves, GaussianCurve):  # both directions have the same bounds
        low, up = curves.delta_bounds(epsilon)
        return Bracket(low, up, {d: (low, up) for d in DIRECTIONS}, curves)
    if isinstance(curves, PerEpochBounds):
        low, up, proven = curves.delta_proof(epsilon)
        return Bracket(low, up, {d: (low, up) for d in DIRECTIONS}, curves, proven=proven)
    with ctx.workprec(curves.prec):  # ends of balls are rounded at the working precision
        uppers = {d: min(_exact(delta_at(curves.pld(d, "upper"), epsilon, curves.prec).upper()), Fraction(1))
                  for d in DIRECTIONS}
        per: dict[str, tuple[Fraction, Fraction | None]] = {}
        best = Fraction(0)
        for d in sorted(DIRECTIONS, key=lambda d: -uppers[d]):
            if per and uppers[d] <= best:
                per[d] = (Fraction(0), uppers[d])  # this direction never decides the maximum
                continue
            low = max(_exact(delta_at(curves.pld(d, "lower"), epsilon, curves.prec).lower()), Fraction(0))
            per[d] = (low, uppers[d])
            best = max(best, low)
    return Bracket(max(v[0] for v in per.values()), max(v[1] for v in per.values()), per, curves)


def epsilon_bracket(curves: Curves | GaussianCurve | PerEpochBounds, delta: Fraction) -> Bracket:
    """Proven [ε_lower(δ), ε_upper(δ)] of the run (module docstring); upper None means no finite bound.

    As in :func:`delta_bracket`, a direction's lower bound is composed only when it could decide.
    """
    delta = check_delta(delta)
    if isinstance(curves, GaussianCurve):
        low, up = curves.epsilon_bounds(delta)
        return Bracket(low, up, {d: (low, up) for d in DIRECTIONS}, curves)
    if isinstance(curves, PerEpochBounds):
        low, up, proven = curves.epsilon_proof(delta)
        return Bracket(low, up, {d: (low, up) for d in DIRECTIONS}, curves, proven=proven)
    roots: dict[tuple[int, str], Fraction | None] = {}

    def root(pld: PLD, side: str) -> Fraction | None:  # a symmetric run's two directions are one PLD: verify once
        if (id(pld), side) not in roots:
            roots[(id(pld), side)] = verified_root(pld, delta, curves.prec, side)
        return roots[(id(pld), side)]

    with ctx.workprec(curves.prec):
        uppers = {d: root(curves.pld(d, "upper"), "upper") for d in DIRECTIONS}
        per: dict[str, tuple[Fraction, Fraction | None]] = {}
        best = Fraction(0)
        order = sorted(DIRECTIONS, key=lambda d: (uppers[d] is not None, uppers[d] or 0), reverse=True)
        for d in order:
            if per and uppers[d] is not None and uppers[d] <= best:
                per[d] = (Fraction(0), uppers[d])  # this direction never decides the maximum
                continue
            low = root(curves.pld(d, "lower"), "lower")
            per[d] = (low, uppers[d])
            best = max(best, low)
    lower = max(v[0] for v in per.values())
    ups = [v[1] for v in per.values()]
    upper = None if any(u is None for u in ups) else max(ups)
    if upper is not None and lower > upper:
        raise ArithmeticError("the lower end exceeds the upper end: a bug, refuse to certify")
    return Bracket(lower, upper, per, curves)


def _largest_step(curves: Curves) -> int:
    """The most grid points of one step's or one leaf's PLD."""
    return max([st.grid.size for st in curves.steps] + [p.length for plds in curves.leaf_plds for p in plds.values()],
               default=0)


def _relative_width(b: Bracket) -> float:
    if b.upper is None:
        return math.inf
    if b.upper == 0:
        return 0.0
    return float((b.upper - b.lower) / b.upper)


def _next_rung(width: float) -> Fraction:
    """The largest of 5, 2, 1 × 10^−k at least twice below ``width`` (at most 0.1)."""
    e = math.floor(math.log10(min(width, 1.0) / 2))
    for m in RUNGS:
        value = Fraction(m) * Fraction(10) ** e
        if value <= Fraction(width) / 2:
            return min(value, Fraction(1, 10))
    return min(Fraction(5) * Fraction(10) ** (e - 1), Fraction(1, 10))


def bracket(phases: Sequence[Phase], *, delta: Fraction | None = None, epsilon: Fraction | None = None,
            tolerance: Fraction = DEFAULT_TOLERANCE, settings: Settings | None = None, mapper: Mapper = map,
            coarsen: int = 1, tighten: Callable[[Bracket], Fraction | None] | None = None,
            leaves: Sequence[tuple[Leaf, int]] = (), progress: Progress | None = None) -> Bracket:
    """Proven bracket of ε(δ) (given ``delta``) or of δ(ε) (given ``epsilon``) for the run.

    A run with q = 1 in every phase is bracketed in closed form. Otherwise, with ``settings`` the curve
    is composed once with them (how a certificate is re-checked); without, the grid is refined until
    the relative width is at most ``tolerance`` or the next grid would be too large, and the
    tightest bracket found is returned (module docstring). ``refinements`` records every attempt:
    grid step, width, seconds and PLD length. ``mapper`` is handed to :func:`compose_run`. The first grid
    step is ``coarsen`` times :func:`initial_step` (which aims at a relative width near 1e-4 to 1e-3; the
    width grows like the step squared, so a loose tolerance such as 0.1 is met about ``coarsen``² wider
    at ``coarsen`` times less cost: the calibration ladder's first rungs use it). When the width meets the
    tolerance, ``tighten(best)`` may return a smaller tolerance to walk on (the path does not depend on the
    tolerance, so this is the bracket a call with that tolerance would give, without repeating the grids
    already tried: an audit narrows a bracket that contains the claim this way); None stops. ``leaves`` are other
    mechanisms composed with the phases (:class:`Leaf`); most have their losses rounded to the grid (first order in
    h), so with a first-order leaf (:func:`order_of`) each refinement shrinks h in proportion to the width instead of
    its square root. ``progress`` (:data:`Progress`), if given, hears each grid as it goes: ``{"stage": "grid",
    "grid": n, "grid_step": h, "best_width": w}`` before the n-th grid is discretised (w the relative width of the
    tightest bracket so far, None before the first), the leaves of :func:`compose_run`, ``{"stage": "composing",
    "grid": n, "grid_step": h}`` before the compositions and their roots, and ``{"stage": "width", "grid": n,
    "grid_step": h, "relative_width": w}`` once the n-th grid's bracket is known.
    """
    phases, leaves = check_run(phases, leaves), tuple(leaves)
    if (delta is None) == (epsilon is None):
        raise InputError("give exactly one of delta and epsilon")
    if delta is not None:
        delta = check_delta(delta)
    else:
        epsilon = check_epsilon(epsilon)
    tol = check_tolerance(tolerance)
    if not leaves and (is_gaussian_run(phases) or is_per_epoch_run(phases)):
        curve = GaussianCurve(phases) if is_gaussian_run(phases) else PerEpochBounds(phases)
        return epsilon_bracket(curve, delta) if delta is not None else delta_bracket(curve, epsilon)

    def tell(stage: str, grid: int, s: Settings, **fields: Any) -> None:
        if progress is not None:
            progress({"stage": stage, "grid": grid, "grid_step": s.grid_step, **fields})

    def evaluate(s: Settings, grid: int = 1, best_width: float | None = None) -> Bracket:
        tell("grid", grid, s, best_width=best_width)
        curves = compose_run(phases, s, mapper, leaves, progress)
        tell("composing", grid, s)
        result = epsilon_bracket(curves, delta) if delta is not None else delta_bracket(curves, epsilon)
        tell("width", grid, s, relative_width=_relative_width(result))
        return result

    if settings is not None:
        return evaluate(settings)
    scale = Fraction(delta) if delta is not None else Fraction(1, 10**10)  # δ's size, until a bracket tells it
    rung = FIRST_RUNG
    if not (isinstance(coarsen, int) and coarsen >= 1):
        raise ValueError(f"coarsen={coarsen!r} must be a positive integer")
    h = initial_step(phases, default_settings(phases, Fraction(1), scale, leaves=leaves).tail, leaves) * coarsen
    # a run of leaves only takes steps dividing their grid units (Laplace's kinks on the grid); beside SGM steps, the
    # steps' own rules choose the grid
    align = (lambda step: aligned(step, leaves)) if not phases else (lambda step: step)
    h = align(h)
    if epsilon is not None:  # δ(ε): its size and the slope of log δ steer the first grid (_delta_steering)
        guess, factor = _delta_steering(phases, epsilon, default_settings(phases, Fraction(1), scale, leaves=leaves).tail)
        guess, factor = (None, 1.0) if leaves else (guess, factor)  # the steering knows the SGM steps only
        scale = max(scale, guess) if guess is not None else scale
        h = _nice_below(float(h) * factor) if factor < 1 else h
    history: list[dict[str, Any]] = []
    best: Bracket | None = None
    structural = (any(step_key(p)[0] == "fixed-replace-one" for p in phases)
                  or any(getattr(leaf, "structural", False) for leaf, _ in leaves))
    collapsed = 0
    for attempt in range(MAX_REFINEMENTS + 1):
        s = default_settings(phases, h, scale, rung, leaves)
        result = evaluate(s, attempt + 1, None if best is None else _relative_width(best))
        width = _relative_width(result)
        history.append({"grid_step": h, "relative_width": width, "seconds": round(result.curves.seconds, 3),
                        "composed_length": result.curves.longest()})
        if delta is None:  # δ(ε): a scale far above δ would cut off too much; redo with the right one
            if result.lower > 0:
                new_scale = max(result.lower, DELTA_MIN)
            elif result.upper is not None and result.upper <= scale:
                new_scale = DELTA_MIN  # the upper end is mostly cut-off mass: go to the floor at once, not 5e4× a step
            else:
                new_scale = max(result.upper or scale, DELTA_MIN)
            if new_scale < scale / 100 and attempt < MAX_REFINEMENTS:
                scale = new_scale
                continue
            if result.upper is not None and result.upper <= DELTA_MIN:  # below the supported δ: no finer grid helps
                best = result if best is None or width <= _relative_width(best) else best
                break
        previous = _relative_width(best) if best is not None else math.inf
        if best is None or width <= _relative_width(best):
            best = result
        while tol is not None and _relative_width(best) <= float(tol):
            tol = tighten(best) if tighten is not None else None
        if tol is None:
            break
        if structural and width > 0.75 * previous:
            break  # fixed-size replace-one, structural leaves: the width is the gap between two pairs, not the grid's
        # width ∝ h² once the grid resolves the curve; a very wide bracket is not there yet: a quarter of h, and
        # after two such grids in a row the lower end is out of reach of any grid that fits
        collapsed = collapsed + 1 if width >= 0.5 else 0
        if collapsed == 2:
            break
        target = _next_rung(min(width, 1.0))
        first_order = any(order_of(leaf) == 1 for leaf, _ in leaves)
        shrink = (0.8 * float(target) / width if first_order else math.sqrt(0.8 * float(target) / width)) \
            if width < 0.5 else 0.25
        new_h = align(_nice_below(float(h) * min(max(shrink, 0.1), 0.8)))
        factor = float(h / new_h)
        if (result.curves.longest() * factor > MAX_GRID
                or _largest_step(result.curves) * factor > MAX_GRID
                or max((st.checks["points_evaluated"] for st in result.curves.steps), default=0) * factor
                > MAX_STEP_POINTS):
            break  # finer grids would not fit: return the tightest proven bracket found
        h, rung = new_h, min(rung, target)
    return Bracket(best.lower, best.upper, best.by_direction, best.curves, history, best.proven)
