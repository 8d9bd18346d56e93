"""Proven (ε, δ) of a DP-SGD run: the privacy curve of T adaptive SGM steps, bracketed from both sides.

The run is a sequence of phases (q_i, σ_i, T_i) of the Sampled Gaussian Mechanism (Poisson sampling,
ℓ2-sensitivity 1, add/remove-one neighbours). Its privacy curve is

    δ(ε) = max over the two directions of H_{e^ε}(P‖Q),   (P, Q) = (⊗μ_i^{T_i}, ⊗μ0^{T_i}) or swapped,

the hockey-stick divergence of the composed dominating pairs (Zhu, Dong, Wang 2022, Theorem 10 and
Theorem 11: the remove pair (μ, μ0) and the add pair (μ0, μ) are tight dominating pairs of one step,
and dominance survives adaptive composition), and ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

**The bracket.** Each step is replaced by two discrete pairs on a loss grid h·ℤ
(:mod:`rdp_verify.curves.discretize`): one that dominates it (connect-the-dots) and one it
dominates (lowered chords). Their compositions (:mod:`rdp_verify.curves.compose`, exact integers,
directed rounding) bracket the true curve in both directions:

* δ_upper(ε) = max over directions of the upper end of the dominating pairs' δ at ε;
* δ_lower(ε) = max over directions of the lower end of the dominated pairs' δ at ε;
* ε_upper(δ): a point where every direction's δ_upper ≤ δ, verified by evaluating δ there;
* ε_lower(δ): a point where some direction's δ_lower > δ, verified the same way (below it the true
  curve is above δ, so ε(δ) ≥ ε_lower).

**Choosing the grid.** The bracket's width is second order in h and grows with T (each step shifts
the mean loss by O(h²)). :func:`bracket` starts on a coarse grid, measures the width, and refines h
(width ∝ h²) until the relative width meets the tolerance. The fixed-point bits follow from δ
(40 guard bits below its scale); the truncation allowance is tolerance·δ/50. These choices only trade
accuracy for time: every bracket is proven whatever they are, and the certificate records them.

Cost: one discretisation per phase, O(n) Arb evaluations for n = (loss range)/h grid points; four
compositions (two directions × two bounds) of about 2·log2(T) integer-polynomial products each, of
length about (composed loss range)/h. For the issue's run (q = 256/60000, σ = 1.1, T = 14063,
δ = 1e-5, tolerance 1e-3) h = 2e-4 and about 4·40 000 grid values; time grows like √T·/h·log T.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

from flint import arb, ctx

from ..foundations.inputs import DELTA_MIN, MAX_STEPS, InputError, Phase
from ..foundations.results import arb_to_bounded
from .compose import PLD, Budget, compose, delta_at, epsilon_root, products_needed
from .discretize import StepPLD, discretize, grid_range

__all__ = ["DIRECTIONS", "MAX_STEPS", "DELTA_MIN", "Settings", "Curves", "Bracket", "compose_run",
           "delta_bracket", "epsilon_bracket", "bracket", "check_run", "default_settings"]

DIRECTIONS = ("remove", "add")
DEFAULT_TOLERANCE = Fraction(1, 1000)
MAX_REFINEMENTS = 4
MAX_GRID = 4 * 10**6  # grid points of a composed PLD we accept to compute (memory: about 100 MB each)
NICE = (1, Fraction(5, 4), 2, Fraction(5, 2), 4, 5, 8)  # grid steps are these times a power of ten


@dataclass(frozen=True)
class Settings:
    """How the curve is discretised; every bracket is proven whatever these are."""

    grid_step: Fraction  # h: losses lie on h·ℤ
    bits: int  # fixed-point bits of every mass
    truncation: Fraction  # B: the composition may cut off mass adding at most 2B to δ
    tail: Fraction  # single-step tail mass left beyond the grid, per step (moved to +∞ or dropped)

    def to_json(self) -> dict[str, Any]:
        from ..foundations.inputs import fraction_text
        return {"grid_step": fraction_text(self.grid_step), "fixed_point_bits": self.bits,
                "truncation_allowance": fraction_text(self.truncation), "single_step_tail": fraction_text(self.tail)}


@dataclass
class Curves:
    """The composed discrete PLDs of a run, per (direction, "upper" | "lower"), composed on first use."""

    phases: tuple[Phase, ...]
    settings: Settings
    steps: tuple[StepPLD, ...]
    budget: Budget
    plds: dict[tuple[str, str], PLD] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def prec(self) -> int:
        return self.settings.bits + 64

    def pld(self, direction: str, bound: str) -> PLD:
        """The composed PLD of the run for a direction and a bound (exact integers; cached)."""
        key = (direction, bound)
        if key not in self.plds:
            start = time.perf_counter()
            by_pair = {(s.q, s.sigma): s for s in self.steps}
            parts = [(_single(by_pair[(p.q, p.sigma)], direction, bound), p.steps) for p in self.phases]
            self.plds[key] = compose(parts, self.budget)
            self.seconds += time.perf_counter() - start
        return self.plds[key]


@dataclass(frozen=True)
class Bracket:
    """A proven interval [lower, upper] (upper may be None: +∞, no bound) and how it was obtained."""

    lower: Fraction
    upper: Fraction | None
    by_direction: dict[str, tuple[Fraction, Fraction | None]]
    curves: Curves
    refinements: list[dict[str, Any]] = field(default_factory=list)

    def relative_width(self) -> Fraction | None:
        if self.upper is None:
            return None
        if self.upper == 0:
            return Fraction(0)
        return (self.upper - self.lower) / self.upper


def check_run(phases: Sequence[Phase]) -> tuple[Phase, ...]:
    """The phases, refused if empty or beyond the supported total number of steps."""
    phases = tuple(phases)
    if not phases:
        raise InputError("a run needs at least one phase")
    for p in phases:
        if not isinstance(p, Phase):
            raise InputError("phases must be Phase objects")
    total = sum(p.steps for p in phases)
    if total > MAX_STEPS:
        raise InputError(f"steps={total} is beyond the supported maximum {MAX_STEPS} for privacy curves")
    return phases


def _check_delta(delta: Fraction) -> None:
    if isinstance(delta, bool) or not isinstance(delta, (Fraction, int)):
        raise InputError(f"delta={delta!r} must be an exact rational (Fraction)")
    if not 0 < delta < 1:
        raise InputError(f"delta={delta} must lie strictly between 0 and 1")
    if delta < DELTA_MIN:
        raise InputError(f"delta={delta} is below the supported minimum 1e-40")


def _check_epsilon(epsilon: Fraction) -> None:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (Fraction, int)):
        raise InputError(f"epsilon={epsilon!r} must be an exact rational (Fraction)")
    if epsilon < 0:
        raise InputError(f"epsilon={epsilon} must be non-negative")


def _nice_below(x: float) -> Fraction:
    """The largest 'nice' decimal (NICE × 10^k) not above x."""
    e = math.floor(math.log10(x))
    for m in reversed(NICE):
        value = Fraction(m) * Fraction(10) ** e
        if value <= x * (1 + 1e-12):
            return value
    return Fraction(NICE[-1]) * Fraction(10) ** (e - 1)


GUARD_BITS = 40  # rounding adds at most (products)·(length)·2^−bits ≈ 2^22·2^−bits to δ: far below tolerance·δ


def _bits_for(delta: float) -> int:
    return 32 * math.ceil((GUARD_BITS + math.log2(1 / max(delta, 1e-300))) / 32)


def _short(x: Fraction) -> Fraction:
    """x rounded down to one significant decimal digit (settings print as short exact decimals)."""
    from ..foundations.decimals import decimal_text
    return Fraction(decimal_text(x, 1, "down"))


def default_settings(phases: Sequence[Phase], grid_step: Fraction, delta_scale: Fraction,
                     tolerance: Fraction = DEFAULT_TOLERANCE) -> Settings:
    """Settings for a run whose δ is about ``delta_scale`` (truncation well below tolerance·δ)."""
    steps = sum(p.steps for p in phases)
    allowance = _short(Fraction(tolerance) * Fraction(delta_scale) / 50)
    return Settings(grid_step=grid_step, bits=_bits_for(float(delta_scale)), truncation=allowance,
                    tail=_short(allowance / (10 * steps)))


Mapper = Callable[[Callable[[Any], Any], list[Any]], Iterable[Any]]


def _discretize_step(args: tuple[Fraction, Fraction, Settings]) -> StepPLD:
    """One distinct (q, σ) step of a run, discretised with the run's settings (a picklable task)."""
    q, sigma, settings = args
    return discretize(q, sigma, grid_range(q, sigma, settings.grid_step, float(settings.tail)), settings.bits)


def compose_run(phases: Sequence[Phase], settings: Settings, mapper: Mapper = map) -> Curves:
    """Discretise every phase's step; the compositions follow on first use (:meth:`Curves.pld`).

    ``mapper(fn, items)`` may discretise the distinct steps in parallel (the CLI passes
    :func:`rdp_verify.foundations.parallel.progress_map` on its pool); the result is the same.
    """
    phases = check_run(phases)
    start = time.perf_counter()
    pairs = dict.fromkeys((p.q, p.sigma) for p in phases)
    steps = list(mapper(_discretize_step, [(q, sigma, settings) for q, sigma in pairs]))
    total_steps = sum(p.steps for p in phases)
    budget = Budget(int(settings.truncation * 2 ** settings.bits), total_steps,
                    products_needed([p.steps for p in phases]))
    return Curves(phases, settings, tuple(steps), budget, seconds=time.perf_counter() - start)


def _single(step: StepPLD, direction: str, bound: str) -> PLD:
    """One step's PLD for a direction and a bound, on the grid (the add direction is mirrored)."""
    g, rounding = step.grid, "up" if bound == "upper" else "down"
    if direction == "remove":
        masses = step.remove_upper if bound == "upper" else step.remove_lower
        inf = step.remove_upper_inf if bound == "upper" else 0
        return PLD.from_masses(masses, g.k_lo, inf, step.bits, g.h, rounding)
    masses = step.add_upper if bound == "upper" else step.add_lower
    inf = step.add_upper_inf if bound == "upper" else 0
    return PLD.from_masses(list(reversed(masses)), -g.k_hi, inf, step.bits, g.h, rounding)


def _exact(x: arb) -> Fraction:
    return arb_to_bounded(x).value


def delta_bracket(curves: Curves, epsilon: Fraction) -> Bracket:
    """Proven [δ_lower(ε), δ_upper(ε)] of the run at ε (module docstring).

    A direction's lower bound is composed only if its upper bound exceeds the best lower bound so
    far: otherwise it cannot raise max(δ_remove, δ_add)'s lower end.
    """
    _check_epsilon(epsilon)
    epsilon = Fraction(epsilon)
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


def _verified_root(p: PLD, delta: Fraction, prec: int, side: str) -> Fraction | None:
    """An ε with δ_p(ε) ≤ δ proven (side "upper") or δ_p(ε) > δ proven (side "lower"); None: +∞ / none."""
    root = epsilon_root(p, delta, prec)
    if side == "upper":
        if root is None:
            return Fraction(0)
        if not root.is_finite():
            return None
        eps = max(_exact(root.upper()), Fraction(0))
        step = max(abs(eps), Fraction(1)) / 2 ** 60
        for _ in range(200):
            if delta_at(p, eps, prec).upper() <= _exact_arb(delta):
                return eps
            eps += step
            step *= 2
        raise ArithmeticError("could not verify an upper end of epsilon")
    if root is None or not root.is_finite():
        return Fraction(0)
    eps = _exact(root.lower())
    step = max(abs(eps), Fraction(1)) / 2 ** 60
    for _ in range(200):
        if eps <= 0:
            return Fraction(0)
        if delta_at(p, eps, prec).lower() > _exact_arb(delta):
            return eps
        eps -= step
        step *= 2
    return Fraction(0)


def _exact_arb(x: Fraction) -> arb:
    from ..foundations.results import to_arb
    return to_arb(x)


def epsilon_bracket(curves: Curves, delta: Fraction) -> Bracket:
    """Proven [ε_lower(δ), ε_upper(δ)] of the run (module docstring); upper None means no finite bound.

    As in :func:`delta_bracket`, a direction's lower bound is composed only when it could decide.
    """
    _check_delta(delta)
    delta = Fraction(delta)
    with ctx.workprec(curves.prec):
        uppers = {d: _verified_root(curves.pld(d, "upper"), delta, curves.prec, "upper") for d in DIRECTIONS}
        per: dict[str, tuple[Fraction, Fraction | None]] = {}
        best = Fraction(0)
        order = sorted(DIRECTIONS, key=lambda d: (uppers[d] is not None, uppers[d] or 0), reverse=True)
        for d in order:
            if per and uppers[d] is not None and uppers[d] <= best:
                per[d] = (Fraction(0), uppers[d])  # this direction never decides the maximum
                continue
            low = _verified_root(curves.pld(d, "lower"), delta, curves.prec, "lower")
            per[d] = (low, uppers[d])
            best = max(best, low)
    lower = max(v[0] for v in per.values())
    ups = [v[1] for v in per.values()]
    upper = None if any(u is None for u in ups) else max(ups)
    if upper is not None and lower > upper:
        raise ArithmeticError("the lower end exceeds the upper end: a bug, refuse to certify")
    return Bracket(lower, upper, per, curves)


def _relative_width(b: Bracket) -> float:
    if b.upper is None:
        return math.inf
    if b.upper == 0:
        return 0.0
    return float((b.upper - b.lower) / b.upper)


def _longest(curves: Curves) -> int:
    return max(p.length for p in curves.plds.values())


def bracket(phases: Sequence[Phase], *, delta: Fraction | None = None, epsilon: Fraction | None = None,
            tolerance: Fraction = DEFAULT_TOLERANCE, settings: Settings | None = None, mapper: Mapper = map) -> Bracket:
    """Proven bracket of ε(δ) (given ``delta``) or of δ(ε) (given ``epsilon``) for the run.

    With ``settings`` the curve is composed once with them (how a certificate is re-checked);
    otherwise the grid is refined until the relative width is at most ``tolerance`` (module
    docstring). ``refinements`` records every attempt: grid step, width, seconds and PLD length.
    ``mapper`` is handed to :func:`compose_run`.
    """
    phases = check_run(phases)
    if (delta is None) == (epsilon is None):
        raise InputError("give exactly one of delta and epsilon")
    if delta is not None:
        _check_delta(delta)
    else:
        _check_epsilon(epsilon)
    tol = Fraction(tolerance)
    if not 0 < tol < 1:
        raise InputError(f"tolerance={tolerance} must lie strictly between 0 and 1")

    def evaluate(s: Settings) -> Bracket:
        curves = compose_run(phases, s, mapper)
        return epsilon_bracket(curves, delta) if delta is not None else delta_bracket(curves, epsilon)

    if settings is not None:
        return evaluate(settings)
    steps = sum(p.steps for p in phases)
    h = _nice_below(min(0.02, 0.1 / math.sqrt(steps)))
    scale = Fraction(delta) if delta is not None else Fraction(1, 10**10)  # δ's size, until a bracket tells it
    history: list[dict[str, Any]] = []
    result = None
    for attempt in range(MAX_REFINEMENTS + 1):
        s = default_settings(phases, h, scale, tol)
        result = evaluate(s)
        width = _relative_width(result)
        history.append({"grid_step": h, "relative_width": width, "seconds": round(result.curves.seconds, 3),
                        "composed_length": _longest(result.curves)})
        if delta is None:  # δ(ε): a scale far above δ would cut off too much; redo with the right one
            new_scale = max(result.lower if result.lower > 0 else result.upper, DELTA_MIN)
            if new_scale < scale / 100 and attempt < MAX_REFINEMENTS:
                scale = new_scale
                continue
            scale = min(scale, new_scale)
        if width <= float(tol):
            break
        # width ∝ h² once the grid resolves the curve; a very wide bracket is not there yet
        shrink = math.sqrt(0.6 * float(tol) / width) if math.isfinite(width) and 0 < width < 0.1 else 0.25
        new_h = _nice_below(float(h) * min(shrink, 0.8))
        if _longest(result.curves) * float(h / new_h) > MAX_GRID:
            break  # finer grids would not fit: return the proven, wider bracket
        h = new_h
    return Bracket(result.lower, result.upper, result.by_direction, result.curves, history)
