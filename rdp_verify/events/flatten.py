"""A run's tree flattened: the mechanisms it applies and how often, and the phases of today's accountants.

:func:`components` turns an event tree into an ordered tuple of :class:`Component`: a mechanism (a leaf),
possibly inside **one** sampling wrapper, and how many times it is applied in a row:

* ``SelfComposedDpEvent(e, n)`` multiplies the counts of ``e``'s components by n; ``ComposedDpEvent``
  concatenates; ``NoOpDpEvent``, count 0 and samples that hold no record (Poisson q = 0, a sample of size 0,
  0 per-epoch steps) disappear;
* ``NonPrivateDpEvent`` stays, as the marker the caller answers ε = ∞ for; a sampling wrapper around anything
  holding it (with a positive chance of including a record) becomes that marker: ε = ∞ bounds every run;
* sampling of something that is not one mechanism applied once (a composition, ``n x e`` with n > 1, another kind
  of sampling) is refused by name, as :class:`~rdp_verify.events.model.UnsupportedEvent`, unless it reduces
  exactly: Poisson sampling at q = 1 and a fixed-size sample of the whole dataset are the dataset itself (the
  wrapper drops out), and Poisson sampling of a Poisson sample is one Poisson sample at the product of the rates
  (independent thinning);
* ``RepeatAndSelectDpEvent``, ``TruncatedSubsampledGaussianDpEvent`` and ``UnsupportedDpEvent`` are leaves
  (kept whole: the first repeats its event a random number of times, which is not a composition; the second is a
  mechanism with its sampling built in, bracketed by :mod:`rdp_verify.privacy_curve.table`; the caller decides what
  it supports).

:func:`to_phases` is the run as :class:`~rdp_verify.foundations.run.Phase` objects exactly as
``CertifiedPldAccountant._phases`` of :mod:`rdp_verify.accountants.dp_accounting_api` makes them (the Gaussian
family, and a ``TruncatedSubsampledGaussianDpEvent`` that can never truncate, truncated_batch_size ≥ dataset_size:
the Poisson-sampled Gaussian; same order, same merging, same refusals with the same messages);
:func:`phases_to_event` is the way back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Sequence

from ..foundations.inputs import InputError, check_q, check_run_sigma, check_steps
from ..foundations.run import Phase
from .model import (
    SAMPLING_WRAPPERS,
    BallsInBinsDpEvent,
    ComposedDpEvent,
    DpEvent,
    GaussianDpEvent,
    NeighboringRelation,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    SampledWithoutReplacementDpEvent,
    SampledWithReplacementDpEvent,
    SelfComposedDpEvent,
    ShuffledDpEvent,
    TruncatedSubsampledGaussianDpEvent,
    UnsupportedEvent,
)

__all__ = ["Component", "components", "to_phases", "phases_to_event", "NEIGHBOURS"]

NEIGHBOURS = {NeighboringRelation.ADD_OR_REMOVE_ONE: "add-remove", NeighboringRelation.REPLACE_ONE: "replace-one"}
"""The relations a :class:`~rdp_verify.foundations.run.Phase` can hold, by its ``neighbours`` text. (For the
per-epoch samplers Phase's ``add-remove`` is the zero-out relation: :mod:`rdp_verify.foundations.run`.)"""


@dataclass(frozen=True)
class Component:
    """``count`` consecutive applications of ``event``: a mechanism, possibly inside one sampling wrapper."""

    event: DpEvent
    count: int

    @property
    def wrapper(self) -> DpEvent | None:
        """The sampling wrapper, or None for a mechanism applied to the whole dataset."""
        return self.event if isinstance(self.event, SAMPLING_WRAPPERS) else None

    @property
    def mechanism(self) -> DpEvent:
        """The mechanism (the leaf)."""
        return self.event.event if isinstance(self.event, SAMPLING_WRAPPERS) else self.event

    @property
    def non_private(self) -> bool:
        """The ε = ∞ marker (``NonPrivateDpEvent``)."""
        return isinstance(self.event, NonPrivateDpEvent)


def _empty_sample(event: DpEvent) -> bool:
    if isinstance(event, PoissonSampledDpEvent):
        return event.sampling_probability == 0
    if isinstance(event, (SampledWithoutReplacementDpEvent, SampledWithReplacementDpEvent)):
        return event.sample_size == 0
    return event.steps == 0  # per-epoch


def _whole_dataset(event: DpEvent) -> bool:
    if isinstance(event, PoissonSampledDpEvent):
        return event.sampling_probability == 1
    if isinstance(event, SampledWithoutReplacementDpEvent):
        return event.sample_size == event.source_dataset_size
    return False


def _sampled(wrapper: DpEvent) -> list[Component]:
    if _empty_sample(wrapper):
        return []
    inner = _flat(wrapper.event)
    if not inner:
        return []
    if any(c.non_private for c in inner):
        return [Component(NonPrivateDpEvent(), 1)]
    if _whole_dataset(wrapper):
        return inner
    if len(inner) == 1 and inner[0].count == 1:
        (only,) = inner
        if only.wrapper is None:
            return [Component(replace(wrapper, event=only.event), 1)]
        if isinstance(wrapper, PoissonSampledDpEvent) and isinstance(only.event, PoissonSampledDpEvent):
            q = wrapper.sampling_probability * only.event.sampling_probability
            return [Component(replace(only.event, sampling_probability=q), 1)]
        what = f"another sampling ({only.event.name})"
    elif len(inner) == 1:
        what = f"{inner[0].count} applications of {inner[0].event.name} on one sample"
    else:
        what = f"a composition of {len(inner)} mechanisms on one sample"
    raise UnsupportedEvent(f"{wrapper.name} of {wrapper.event.name} is not supported: it samples {what} "
                           "(sample one mechanism at a time)")


def _flat(event: DpEvent) -> list[Component]:
    if isinstance(event, NoOpDpEvent):
        return []
    if isinstance(event, SelfComposedDpEvent):
        if event.count == 0:
            return []
        return [Component(c.event, c.count * event.count) for c in _flat(event.event)]
    if isinstance(event, ComposedDpEvent):
        return [c for e in event.events for c in _flat(e)]
    if isinstance(event, SAMPLING_WRAPPERS):
        return _sampled(event)
    return [Component(event, 1)]


def components(event: DpEvent) -> tuple[Component, ...]:
    """The run's mechanisms in order, each with its count (the rules above); consecutive equal components are
    not merged (a per-epoch component's count is how many times its phase, from an epoch's start, is repeated)."""
    return tuple(_flat(event))


# -- the phases of today's accountants -------------------------------------------------------------------------


def _neighbours(relation: Any) -> str:
    rel = NeighboringRelation.of(relation)
    if rel not in NEIGHBOURS:
        raise InputError(f"neighboring_relation={relation}: one of ADD_OR_REMOVE_ONE, REPLACE_ONE is supported")
    return NEIGHBOURS[rel]


TRUNCATED = ("TruncatedSubsampledGaussianDpEvent with truncated_batch_size < dataset_size is not a phase: its batches "
             "can be truncated (rdp_verify.privacy_curve.table brackets it)")


def _sigma(event: GaussianDpEvent | TruncatedSubsampledGaussianDpEvent) -> Fraction:
    return check_run_sigma(event.noise_multiplier, "noise_multiplier")


_PER_EPOCH = {ShuffledDpEvent: "shuffle", BallsInBinsDpEvent: "balls-in-bins"}


def _phases(event: DpEvent, count: int, neighbours: str) -> list[Phase]:
    """``CertifiedPldAccountant._phases``, step for step, on this module's events."""
    name = event.name
    if isinstance(event, NoOpDpEvent) or (count == 0 and not isinstance(event, SelfComposedDpEvent)):
        return []
    if isinstance(event, GaussianDpEvent):
        return [Phase(Fraction(1), _sigma(event), count, neighbours=neighbours)]
    if isinstance(event, PoissonSampledDpEvent):
        if not isinstance(event.event, GaussianDpEvent):
            raise UnsupportedEvent(f"{event.event.name} under Poisson sampling: only GaussianDpEvent is supported")
        if event.sampling_probability == 0:  # releases nothing about the data
            return []
        return [Phase(check_q(event.sampling_probability, "sampling_probability"), _sigma(event.event), count,
                      neighbours=neighbours)]
    if isinstance(event, TruncatedSubsampledGaussianDpEvent):
        if event.sampling_probability == 0:  # releases nothing about the data
            return []
        if event.truncated_batch_size < event.dataset_size:
            raise UnsupportedEvent(TRUNCATED)
        return [Phase(check_q(event.sampling_probability, "sampling_probability"), _sigma(event), count,
                      neighbours=neighbours)]
    if isinstance(event, SampledWithoutReplacementDpEvent):
        if not isinstance(event.event, GaussianDpEvent):
            raise UnsupportedEvent(f"{event.event.name} on fixed-size batches: only GaussianDpEvent is supported")
        if neighbours != "replace-one":
            raise UnsupportedEvent("SampledWithoutReplacementDpEvent needs neighboring_relation REPLACE_ONE (under "
                                   "add/remove no bound for fixed-size batches is proven)")
        n, b = event.source_dataset_size, event.sample_size
        if b == 0:
            return []
        return [Phase(Fraction(b, n), _sigma(event.event), count, "fixed", "replace-one", b, n)]
    if isinstance(event, (ShuffledDpEvent, BallsInBinsDpEvent)):  # rdp_verify's extensions: no dp_accounting twin
        sampler = _PER_EPOCH[type(event)]
        if not isinstance(event.event, GaussianDpEvent):
            raise UnsupportedEvent(f"{event.event.name} under {sampler} sampling: only GaussianDpEvent is supported")
        if event.steps == 0:
            return []
        check_steps(event.steps * count)  # the run's limit, before count copies are made
        phase = Phase(Fraction(event.batch_size, event.dataset_size), _sigma(event.event), event.steps, sampler,
                      neighbours, event.batch_size, event.dataset_size)
        return [phase] * count  # each repetition starts an epoch: count phases, never one merged phase
    if isinstance(event, SelfComposedDpEvent):
        return _phases(event.event, count * event.count, neighbours)
    if isinstance(event, ComposedDpEvent):
        return [p for e in event.events for p in _phases(e, count, neighbours)]
    raise UnsupportedEvent(f"{name} is not supported (a DP-SGD run is Poisson-sampled Gaussian steps)")


def to_phases(event: DpEvent, relation: Any = NeighboringRelation.ADD_OR_REMOVE_ONE) -> list[Phase]:
    """The run as phases, exactly as ``CertifiedPldAccountant(relation)._phases(event, 1)`` makes them: a Gaussian
    is a phase at q = 1, a Poisson-sampled Gaussian a phase at its q (none at q = 0), a Gaussian on fixed-size
    batches (under ``REPLACE_ONE`` only) a ``fixed`` phase (none for batches of 0), the per-epoch extensions
    ``shuffle``/``balls-in-bins`` phases, a truncated Poisson sample that can never be truncated (B ≥ N) a phase
    at its q; ``n x e`` multiplies step counts and a composition concatenates, without
    merging. Everything else is refused (:class:`~rdp_verify.events.model.UnsupportedEvent`, or
    :class:`~rdp_verify.foundations.inputs.InputError` for a value outside the run domain), with ``_phases``'s
    message. ``relation``: :class:`~rdp_verify.events.model.NeighboringRelation`, dp_accounting's, or its name;
    ``REPLACE_SPECIAL`` is refused as the accountant refuses it."""
    return _phases(event, 1, _neighbours(relation))


def _phase_event(phase: Phase) -> DpEvent:
    gaussian = GaussianDpEvent(phase.sigma)
    if phase.sampler in ("shuffle", "balls-in-bins"):
        cls = ShuffledDpEvent if phase.sampler == "shuffle" else BallsInBinsDpEvent
        return cls(phase.dataset_size, phase.batch_size, phase.steps, gaussian)
    if phase.sampler == "fixed":
        step: DpEvent = SampledWithoutReplacementDpEvent(phase.dataset_size, phase.batch_size, gaussian)
    elif phase.q == 1:
        step = gaussian
    else:
        step = PoissonSampledDpEvent(phase.q, gaussian)
    return step if phase.steps == 1 else SelfComposedDpEvent(step, phase.steps)


def phases_to_event(phases: Sequence[Phase]) -> tuple[DpEvent, NeighboringRelation]:
    """The event tree of a run's phases and its neighbouring relation, so that ``to_phases(*phases_to_event(p))``
    gives ``p`` back: a Poisson phase is ``steps x PoissonSampled(q, Gaussian(σ))`` (``Gaussian(σ)`` at q = 1), a
    fixed one ``steps x SampledWithoutReplacement(N, b, Gaussian(σ))``, a shuffled or balls-in-bins one the extension
    event carrying its steps; several phases are composed in order, none is the empty composition. (A Poisson
    phase's optional batch_size/dataset_size, which only restate q, are not kept.) Phases with different relations
    are refused: a run has one."""
    relations = {p.neighbours for p in phases}
    if len(relations) > 1:
        raise InputError("every phase of a run must use the same neighbour relation, got "
                         + " and ".join(sorted(relations)))
    text = relations.pop() if relations else "add-remove"
    relation = next(r for r, name in NEIGHBOURS.items() if name == text)
    events = [_phase_event(p) for p in phases]
    return (events[0] if len(events) == 1 else ComposedDpEvent(tuple(events))), relation
