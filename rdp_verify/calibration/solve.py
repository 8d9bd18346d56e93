"""Certified calibration: the smallest σ, or the largest steps or q, on a decimal grid with proven ε ≤ E.

A DP-SGD run here is one phase (q, σ, T) of the Sampled Gaussian Mechanism; two of the three are
given and the third (the *unknown*) is searched on a :class:`~rdp_verify.calibration.grid.DecimalGrid`
(default 3 significant digits) for the best value whose ε(δ) is **proven** ≤ the target E:

* ``sigma``: the smallest grid σ in the supported range with ε ≤ E: [0.05, 1e6] under ``pld``
  (the privacy-curve domain), [0.1, 1e4] under ``rdp`` (the RDP methods' domain);
* ``steps``: the largest grid T in [1, 1e6] with ε ≤ E;
* ``q``: the largest grid q in [1e-12, 1] with ε ≤ E.

The ranges are :mod:`rdp_verify.foundations.inputs`' domain limits (:func:`domain`).

**Accountants.** ``pld`` (default): ε(δ) is bracketed by :func:`rdp_verify.curves.accountant.bracket`
(proven two-sided bounds on the privacy curve; Zhu, Dong, Wang 2022, Theorems 10–11). ``rdp``: the
best RDP bound over all real orders under the Balle et al. (2020, Theorem 21) conversion,
:func:`rdp_verify.accounting.optimal_order.optimal_epsilon`; there, "exceeds" means that no RDP
order proves ε ≤ E (a statement about the RDP accountant, not a proof that the run is not private).

**Why the answer is optimal on the grid.** The ε of a run is monotone in each parameter, because the
pairs of one step are post-processings of each other (data processing inequality for the hockey-stick
divergence, applied to the product of the kernels, which handles the T-fold composition):

* σ < σ': adding independent N(0, σ'² − σ²) noise maps (μ_{q,σ}, μ0_σ) to (μ_{q,σ'}, μ0_{σ'}) and the
  swapped pair likewise, so δ(ε) is non-increasing in σ;
* q < q': keeping the output with probability q/q' and otherwise replacing it by a fresh N(0, σ²)
  sample maps μ_{q',σ} = (1 − q')N(0, σ²) + q'N(1, σ²) to μ_{q,σ} and N(0, σ²) to itself, so δ(ε)
  is non-decreasing in q;
* T < T': dropping the last T' − T outputs maps the T'-fold products to the T-fold ones, so δ(ε) is
  non-decreasing in T.

The run's sampler and neighbour relation (:mod:`rdp_verify.foundations.run`) may be any the privacy
curve brackets: adding noise and dropping outputs are post-processings of every sampler's mechanism, so
σ and T stay monotone; q is solved for under Poisson sampling only (replace-one: the same thinning maps
(1 − q')N(0, σ²) + q'N(±1, σ²) to the rate-q pair, which neighbouring datasets attain), for the others
q = b/N is given. The RDP accountant is the Poisson add/remove SGM's.

The same holds for the RDP bound (Rényi divergences satisfy data processing; van Erven & Harremoës
2014, Theorem 9). Hence a proof that the *neighbouring* grid value (next smaller σ, next larger T or
q) has ε > E proves that every grid value beyond it does too: the answer is the optimum of the grid.
If the neighbour's bracket still straddles E at the finest tolerance it is reported ``undecided``
(the answer is then proven private but maybe not optimal by one grid step).

**Search.** Both ends of the range first. If the range's best end (smallest σ, largest T or q)
meets E, so does every value in the range: it is the answer, with no neighbour inside the range
(one evaluation). If the other end does not meet E (proven to exceed it, or undecided at the
finest tolerance), no value in the range is proven to: :func:`calibrate` refuses with a one-line
:class:`~rdp_verify.foundations.inputs.InputError` that says so and shows that end's bracket (two
evaluations). Otherwise gallop from a start value by doubling index jumps until the answer is
bracketed, then bisect on grid indices: O(log(range)) evaluations. Each evaluation walks a ladder of
tolerances (1e-1, 1e-2, …, down to ``tolerance``) and stops at the first that decides, so points far
from the boundary cost one coarse bracket (for the privacy curve the first two rungs start on grids 10
and 3 times coarser, :data:`COARSEN`). Whatever the search order, the answer's and the
neighbour's claims are the brackets reported (and re-verified by :mod:`rdp_verify.calibration.certificate`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

from ..accounting.optimal_order import optimal_epsilon
from ..curves.accountant import bracket
from ..events.model import DpEvent, GaussianDpEvent, Kind
from ..events.read import from_named_tuple_json, render, to_json
from ..foundations.decimals import decimal_text
from ..foundations.files import parse_json
from ..foundations.inputs import (
    InputError,
    check_delta,
    check_epsilon,
    check_sigma,
    check_tolerance,
    short_text,
)
from ..foundations.run import Phase
from ..foundations.search import last_true
from ..privacy_curve.table import Run, resolve
from .grid import DecimalGrid
from .options import ACCOUNTANTS, DEFAULT_TOLERANCE, domain

_START = {"sigma": Fraction(1), "steps": Fraction(1000), "q": Fraction(1, 100)}
_FEASIBLE_UP = {"sigma": True, "steps": False, "q": False}  # does ε ≤ E hold for LARGER values?

__all__ = ["domain", "UNKNOWNS", "ACCOUNTANTS", "CONVERSION", "DIGITS", "DEFAULT_TOLERANCE", "Problem", "Evaluation",
           "Calibration", "calibrate", "evaluate", "epsilon_at", "with_sigma", "event_text"]

UNKNOWNS = ("sigma", "steps", "q")
CONVERSION = "balle2020"  # the RDP-to-(ε, δ) conversion of the rdp accountant
DIGITS = 12  # printed bounds (rounded outward); decisions compare the printed values, so they re-check
LADDER = tuple(Fraction(1, 10**k) for k in range(1, 7))
# The loose rungs start the privacy curve's grid this many times coarser (its width grows like the grid
# step squared): values far from the target are decided at a tenth of the cost.
COARSEN = {Fraction(1, 10): 10, Fraction(1, 100): 3}
@dataclass(frozen=True)
class Problem:
    """What to solve: ``unknown`` ∈ UNKNOWNS; the other two of q, sigma, steps are given."""

    unknown: str
    target_epsilon: Fraction
    delta: Fraction
    q: Fraction | None = None
    sigma: Fraction | None = None
    steps: int | None = None
    accountant: str = "pld"
    digits: int = 3
    tolerance: Fraction = DEFAULT_TOLERANCE
    sampler: str = "poisson"  # the run's batch sampler and neighbour relation (rdp_verify.foundations.run)
    neighbours: str = "add-remove"
    batch_size: int | None = None
    dataset_size: int | None = None
    # calibrate --event: the tree (canonical JSON of rdp_verify.events.read.to_json) whose Gaussian noise
    # multiplier is the unknown σ, and its neighbouring relation; its other mechanisms stay as given
    event: str | None = None
    relation: str | None = None

    def __post_init__(self) -> None:
        if self.unknown not in UNKNOWNS:
            raise InputError(f"unknown={self.unknown!r} is not one of {', '.join(UNKNOWNS)}")
        if self.accountant not in ACCOUNTANTS:
            raise InputError(f"accountant={self.accountant!r} is not one of {', '.join(ACCOUNTANTS)}")
        if self.event is not None:  # the tree gives the run; its Gaussian noise multiplier is the unknown
            self._check_event()
            return
        given = {"q": self.q, "sigma": self.sigma, "steps": self.steps}
        for name, value in given.items():
            if (value is None) != (name == self.unknown):
                raise InputError(f"give {' and '.join(n for n in given if n != self.unknown)}, "
                                 f"and not {self.unknown} (it is solved for)")
        if self.sampler != "poisson" and self.unknown == "q":
            raise InputError(f"sampler {self.sampler}: q = batch_size/dataset_size is given, not solved for "
                             "(solve for sigma or steps)")
        if self.accountant == "rdp" and (self.sampler, self.neighbours) != ("poisson", "add-remove"):
            raise InputError("accountant rdp covers Poisson sampling with add-remove neighbours only; use pld")
        check_epsilon(self.target_epsilon, "target_epsilon", positive=True)
        check_delta(self.delta, "delta")
        check_tolerance(self.tolerance, "tolerance")
        self.phase(self.range[0])  # the given values are in the run domain
        if self.accountant == "rdp" and self.sigma is not None:
            check_sigma(self.sigma)  # and in the RDP methods' narrower one
        DecimalGrid(self.digits)  # a supported number of digits

    @property
    def grid(self) -> DecimalGrid:
        return DecimalGrid(self.digits, integer=self.unknown == "steps")

    @property
    def range(self) -> tuple[Fraction, Fraction]:
        """The supported range searched (:func:`domain`)."""
        return domain(self.unknown, self.accountant)

    def phase(self, value: Fraction) -> Phase:
        """The run with the unknown set to ``value``."""
        fields: dict[str, Any] = {"q": self.q, "sigma": self.sigma, "steps": self.steps}
        fields[self.unknown] = int(value) if self.unknown == "steps" else value  # the integer grid's values are whole
        return Phase(**fields, sampler=self.sampler, neighbours=self.neighbours, batch_size=self.batch_size,
                     dataset_size=self.dataset_size)

    def ladder(self) -> tuple[Fraction, ...]:
        return tuple(t for t in LADDER if t > self.tolerance) + (self.tolerance,)

    # -- an event tree's σ (calibrate --event) ------------------------------------------------------------

    @property
    def event_json(self) -> Any:
        """The tree as JSON (:func:`rdp_verify.events.read.to_json`)."""
        return parse_json(self.event, "the calibrated event")

    def event_at(self, value: Fraction) -> DpEvent:
        """The tree with every Gaussian noise multiplier set to ``value`` (σ of the run's Gaussian steps)."""
        return with_sigma(_tree(self.event), Fraction(value))

    def run_at(self, value: Fraction) -> Run:
        """The tree at σ = ``value``, resolved (:func:`rdp_verify.privacy_curve.table.resolve`)."""
        return resolve(self.event_at(value), self.relation)

    def parts_at(self, value: Fraction) -> tuple[list[Phase], tuple[tuple[Any, int], ...]]:
        """The run's SGM phases and other mechanisms (leaves) with the unknown at ``value``."""
        if self.event is None:
            return [self.phase(value)], ()
        run = self.run_at(value)
        return list(run.phases), run.leaves

    @property
    def has_leaves(self) -> bool:
        """A tree with mechanisms composed as leaves (a Gaussian beside a Laplace is one): its points' certificates
        are event certificates (:mod:`rdp_verify.privacy_curve.certificate`)."""
        return self.event is not None and bool(self.run_at(self.range[0]).leaves)

    def _check_event(self) -> None:
        """A tree is calibrated for the noise multiplier of its Gaussian mechanisms (every ``GaussianDpEvent``, sampled
        or not), with the pld accountant; a tree without one, a non-private tree and a zCDP guarantee are refused in
        one line. The monotonicity of :mod:`this module <rdp_verify.calibration.solve>` holds factor by factor: adding
        independent noise to each Gaussian output is a post-processing of the whole composition."""
        if (self.unknown, self.accountant) != ("sigma", "pld"):
            raise InputError("calibrate --event solves for the noise multiplier sigma of the tree's Gaussian "
                             "mechanisms, with the pld accountant")
        tree = _tree(self.event)
        if with_sigma(tree, Fraction(1)) == with_sigma(tree, Fraction(2)):
            raise InputError(f"calibrate --event: {render(tree)} has no GaussianDpEvent whose noise multiplier could "
                             "be solved for")
        for value in self.range:
            run = self.run_at(value)
            if run.non_private or run.zcdp is not None or run.empty:
                raise InputError(f"calibrate --event: {render(run.event)} is not a run of mechanisms with a privacy "
                                 "curve (non-private, or an abstract zCDP guarantee)")


@lru_cache(maxsize=32)
def _tree(text: str) -> DpEvent:
    return from_named_tuple_json(parse_json(text, "the calibrated event"))


def event_text(event: DpEvent) -> str:
    """The canonical JSON text of a tree (:attr:`Problem.event`)."""
    return json.dumps(to_json(event), sort_keys=True, separators=(",", ":"))


def with_sigma(event: DpEvent, sigma: Fraction) -> DpEvent:
    """``event`` with the noise multiplier of every ``GaussianDpEvent`` in it set to ``sigma``."""
    if isinstance(event, GaussianDpEvent):
        return replace(event, noise_multiplier=sigma)
    changes: dict[str, Any] = {}
    for f in fields(event):
        kind = f.metadata.get("kind")
        if kind is Kind.EVENT:
            changes[f.name] = with_sigma(getattr(event, f.name), sigma)
        elif kind is Kind.EVENTS:
            changes[f.name] = type(getattr(event, f.name))(with_sigma(e, sigma) for e in getattr(event, f.name))
    return replace(event, **changes) if changes else event


@dataclass(frozen=True)
class Evaluation:
    """The proven ε bracket of the run at one grid value, and what it decides."""

    value: Fraction
    decision: str  # "meets" (upper ≤ E), "exceeds" (lower > E) or "undecided"
    lower: str  # printed ends, rounded outward (DIGITS significant digits)
    upper: str | None  # None: no finite upper bound
    tolerance: Fraction  # the rung that decided (or the last one tried)
    result: Any = field(repr=False, compare=False, default=None)  # the Bracket or Optimum behind it


@dataclass
class Calibration:
    """The answer and its neighbour's status."""

    problem: Problem
    answer: Evaluation
    neighbour: Evaluation | None  # the next grid value beyond the answer (None: outside the range)
    evaluations: list[Evaluation]

    @property
    def verdict(self) -> str:
        if self.neighbour is None or self.neighbour.decision == "exceeds":
            return "calibrated"
        return "inconclusive"


def epsilon_at(problem: Problem, value: Fraction, tolerance: Fraction) -> tuple[Fraction, Fraction | None, Any]:
    """The proven [lower, upper] of ε(δ) with the unknown at ``value`` (upper None: no finite bound), at relative
    ``tolerance``, and the accountant's result behind it: the one place the search calls an accountant."""
    run, leaves = problem.parts_at(value)
    if problem.accountant == "pld":
        b = bracket(run, delta=problem.delta, tolerance=tolerance, coarsen=COARSEN.get(tolerance, 1), leaves=leaves)
        return b.lower, b.upper, b
    opt = optimal_epsilon(run, problem.delta, CONVERSION, rtol=tolerance)
    return opt.epsilon.lower, opt.epsilon.upper, opt


def evaluate(problem: Problem, value: Fraction) -> Evaluation:
    """Bracket ε at ``value`` on the tolerance ladder until the bracket decides against the target."""
    e = problem.target_epsilon
    for tol in problem.ladder():
        lower, upper, result = epsilon_at(problem, value, tol)
        lo = decimal_text(lower, DIGITS, "down")
        up = None if upper is None else decimal_text(upper, DIGITS, "up")
        decision = ("meets" if up is not None and Fraction(up) <= e else
                    "exceeds" if Fraction(lo) > e else "undecided")
        if decision != "undecided":
            break
    return Evaluation(value, decision, lo, up, tol, result)


def _out_of_reach(problem: Problem, end: Evaluation) -> str:
    """Why no value in the range is proven to meet the target: the far end's bracket."""
    u, at = problem.unknown, short_text(end.value)
    head = (f"no {u} {'<=' if u == 'sigma' else '>='} {at} reaches epsilon <= {short_text(problem.target_epsilon)} "
            f"at delta = {short_text(problem.delta)}" + ("" if problem.accountant == "pld" else " under the rdp accountant"))
    quantity = "epsilon" if problem.accountant == "pld" else "the best RDP bound on epsilon"
    if end.decision == "exceeds":
        return f"{head} (at {u} = {at}, {quantity} >= {end.lower})"
    upper = end.upper if end.upper is not None else "inf"
    return (f"{head} provably: at {u} = {at}, {quantity} in [{end.lower}, {upper}] straddles the target at the "
            f"finest tolerance {short_text(end.tolerance)} (a smaller tolerance may decide it)")


def calibrate(problem: Problem, progress: Callable[[Evaluation], None] | None = None) -> Calibration:
    """Search the grid for the best value with proven ε ≤ E (module docstring: method and proofs).

    Raises :class:`~rdp_verify.foundations.inputs.InputError` if no value in the range is proven to meet E.
    """
    grid = problem.grid
    low, high = problem.range
    sign = 1 if _FEASIBLE_UP[problem.unknown] else -1  # in m = sign·index, feasibility is an up-set
    a, b = sorted((sign * grid.index_at_or_above(low), sign * grid.index_at_or_below(high)))  # a: the best end
    seen: dict[int, Evaluation] = {}
    order: list[Evaluation] = []

    def ev(m: int) -> Evaluation:
        if m not in seen:
            seen[m] = evaluate(problem, grid.value(sign * m))
            order.append(seen[m])
            if progress is not None:
                progress(seen[m])
        return seen[m]

    def meets(m: int) -> bool:
        return ev(m).decision == "meets"

    if meets(a):  # every value in the range meets E: the best one is the answer, nothing beyond it to prove
        return Calibration(problem, ev(a), None, order)
    if not meets(b):
        raise InputError(_out_of_reach(problem, ev(b)))
    lo, hi = a, b  # not proven at lo, proven at hi
    jump = 3 * 10 ** (problem.digits - 1)  # a third of a decade: about a factor 2 on the grid
    m = sign * grid.index_at_or_below(_START[problem.unknown])
    while lo < m < hi:  # gallop from the start until the direction turns
        if meets(m):
            hi, m = m, m - jump
        else:
            lo, m = m, m + jump
        jump *= 2
    lo = last_true(lo, hi, lambda m: not meets(m))  # bisect: not proven, then proven
    return Calibration(problem, ev(lo + 1), ev(lo), order)
