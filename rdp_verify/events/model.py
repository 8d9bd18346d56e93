"""The run model: typed, immutable privacy events, one class per dp_accounting 0.6 ``DpEvent``.

Every class of dp_accounting 0.6's ``dp_event.py`` has a twin here with the **same class name and the same
field names in the same order** (so a dp_accounting event, its ``to_named_tuple()`` and its JSON convert one to
one: :mod:`rdp_verify.events.read`), plus three **rdp_verify extensions** that dp_accounting has no event for:

* :class:`DiscreteGaussianDpEvent` ``(sigma, sensitivity)``: integer values plus noise from the discrete Gaussian
  N_Z(0, σ²), P[z] ∝ exp(−z²/(2σ²)) on the integers (Canonne, Kamath, Steinke 2020, "The Discrete Gaussian for
  Differential Privacy"); ``sensitivity`` bounds the ℓ2 norm of an integer-valued record's contribution.
* :class:`ShuffledDpEvent` and :class:`BallsInBinsDpEvent` ``(dataset_size, batch_size, steps, event)``: the
  per-epoch samplers of :class:`rdp_verify.foundations.run.Phase` (``shuffle``: a fresh permutation each epoch cut
  into N/b batches of b; ``balls-in-bins``: each record in one uniformly random step of the epoch's N/b), ``steps``
  steps of ``event`` from the start of an epoch. They carry their own step count because their steps are not
  independent draws (a phase of 150 steps is not 150 one-step phases), so every existing run is a tree.

**Numbers are exact.** A real-valued field holds a :class:`fractions.Fraction`; the constructors take a Fraction,
an int or exact decimal text (``"0.01"``, ``"1e-5"``, ``"1/3"``, read by
:func:`rdp_verify.foundations.inputs.parse_rational`). A float is refused here: floats are read (as the shortest
decimal that round-trips, ``repr``) only where dp_accounting hands them over, by the readers of
:mod:`rdp_verify.events.read`, as the drop-in accountants do. The one exception is
:attr:`RepeatAndSelectDpEvent.shape`, which may be ``math.inf`` (dp_accounting's Poisson case) or the text
``"inf"``. Counts and sizes are ints (not bools).

**Validation** happens in the constructor and refuses, as :class:`~rdp_verify.foundations.inputs.InputError`
with one line naming the field, its value and the event (``noise_multiplier=-1 must be positive or zero
(in GaussianDpEvent)``): NaN, infinities, negative values, probabilities outside [0, 1], ``sampling_probs`` that do not
sum to exactly 1, a fixed-size sample larger than its dataset, and a tree nesting deeper than
:data:`~rdp_verify.foundations.files.MAX_DEPTH` arrays and objects in its JSON form (so every event that can be
built can be written and read back, and every walk over a tree is shallow). Zero noise is a valid (non-private)
event; what an accountant can bound is decided by the accountant, not here. Messages about counts and sizes
begin as the drop-in accountant's did (``count=-1 must be a non-negative integer``).

:class:`NeighboringRelation` mirrors dp_accounting's enum of the same name (same member names and values).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, ClassVar

from ..foundations.files import MAX_DEPTH
from ..foundations.inputs import InputError, parse_rational, short_text

__all__ = [
    "DpEvent", "NeighboringRelation", "UnsupportedEvent",
    "NoOpDpEvent", "NonPrivateDpEvent", "UnsupportedDpEvent",
    "RandomizedResponseDpEvent", "GaussianDpEvent", "LaplaceDpEvent", "DiscreteLaplaceDpEvent",
    "SelfComposedDpEvent", "ComposedDpEvent", "PoissonSampledDpEvent", "SampledWithReplacementDpEvent",
    "SampledWithoutReplacementDpEvent", "SingleEpochTreeAggregationDpEvent", "RepeatAndSelectDpEvent",
    "MixtureOfGaussiansDpEvent", "ZCDpEvent", "TruncatedSubsampledGaussianDpEvent",
    "DiscreteGaussianDpEvent", "ShuffledDpEvent", "BallsInBinsDpEvent",
    "EVENT_CLASSES", "DP_ACCOUNTING_EVENTS", "EXTENSIONS", "SAMPLING_WRAPPERS", "Kind",
]


class UnsupportedEvent(InputError):
    """An event that is well formed but that the asking code cannot handle (an accountant's ``supports`` is
    False for it); raised, like every refusal here, with a one-line message."""


class NeighboringRelation(enum.Enum):
    """Which datasets are neighbours: dp_accounting's ``NeighboringRelation`` (same names and values)."""

    ADD_OR_REMOVE_ONE = 1
    REPLACE_ONE = 2
    REPLACE_SPECIAL = 3  # a record replaced by a special one, e.g. the zero record (arXiv 2103.00039, Def. 1.1)

    @classmethod
    def of(cls, value: Any) -> "NeighboringRelation":
        """The relation ``value`` names: this enum, dp_accounting's (by member name), or the name as text;
        None is the default ``ADD_OR_REMOVE_ONE``."""
        if value is None:
            return cls.ADD_OR_REMOVE_ONE
        name = value if isinstance(value, str) else getattr(value, "name", None)
        if isinstance(name, str) and name in cls.__members__:
            return cls[name]
        raise InputError(f"neighboring_relation={value!r} is not one of {', '.join(cls.__members__)}")


class Kind(enum.Enum):
    """What a field holds; it decides how the field is validated, read, written and rendered."""

    NONNEGATIVE = "a number >= 0"
    POSITIVE = "a number > 0"
    PROBABILITY = "a probability in [0, 1]"
    SHAPE = "a number >= 0 or inf"
    COUNT = "an integer >= 0"
    SIZE = "an integer >= 1"
    COUNTS = "an integer >= 0 or a non-empty list of them"
    NUMBERS = "a non-empty list of numbers >= 0"
    PROBABILITIES = "a non-empty list of probabilities summing to 1"
    EVENT = "an event"
    EVENTS = "a list of events"


def _spec(kind: Kind, **kwargs: Any) -> Any:
    return field(metadata={"kind": kind}, **kwargs)


def _message(name: str, shown: str, reason: str, event: str) -> InputError:
    return InputError(f"{name}={shown} {reason} (in {event})")


def _exact(value: Any, name: str, event: str) -> tuple[Fraction, str]:
    """An exact number and its spelling for messages: a Fraction, an int or decimal text; not a float."""
    if isinstance(value, bool):
        raise _message(name, repr(value), "is a bool, not a number", event)
    if isinstance(value, Fraction):
        return value, short_text(value)
    if isinstance(value, int):
        return Fraction(value), short_text(value)
    if isinstance(value, str):
        try:
            return parse_rational(value, name), value.strip()
        except InputError as exc:
            raise InputError(f"{exc} (in {event})") from None
    if isinstance(value, float):
        raise _message(name, repr(value), "is a float: give a Fraction, an int or exact text such as "
                       f"'{value!r}' (floats are read only from dp_accounting objects and JSON)", event)
    raise _message(name, f"<{type(value).__name__}>", "is not a number (give a Fraction, an int or decimal text)",
                   event)


def _number(value: Any, kind: Kind, name: str, event: str) -> Fraction | float:
    if kind is Kind.SHAPE and (value == math.inf or (isinstance(value, str) and value.strip().lower() in
                                                      ("inf", "infinity"))) and not isinstance(value, bool):
        return math.inf
    x, shown = _exact(value, name, event)
    if kind is Kind.POSITIVE and x <= 0:
        raise _message(name, shown, "must be positive", event)
    if kind in (Kind.NONNEGATIVE, Kind.SHAPE) and x < 0:
        raise _message(name, shown, "must be positive or zero", event)
    if kind is Kind.PROBABILITY and not 0 <= x <= 1:
        what = "a sampling probability" if name == "sampling_probability" else "a probability"
        raise _message(name, shown, f"is outside [0, 1]: it is {what}", event)
    return x


def _integer(value: Any, kind: Kind, name: str, event: str) -> int:
    least = 1 if kind is Kind.SIZE else 0
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        what = "a whole number of at least 1" if least else "a non-negative integer"
        raise _message(name, repr(value) if isinstance(value, (int, float, str)) else f"<{type(value).__name__}>",
                       f"must be {what}", event)
    return value


def _sequence(value: Any, name: str, event: str) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise _message(name, f"<{type(value).__name__}>", "must be a list", event)
    return tuple(value)


def _json_depth(event: "DpEvent") -> int:
    """How deep the event's JSON form nests arrays and objects (as :func:`~rdp_verify.foundations.files.parse_json`
    counts them): each event is one object, each list one more level."""
    depth = 1
    for f in fields(event):
        value = getattr(event, f.name)
        kind = f.metadata["kind"]
        if kind is Kind.EVENT:
            depth = max(depth, 1 + value._depth)
        elif kind is Kind.EVENTS:
            depth = max(depth, 2 + max((e._depth for e in value), default=0))
        elif isinstance(value, tuple):
            depth = max(depth, 2)
    return depth


@dataclass(frozen=True)
class DpEvent:
    """Base of every event: validates and normalises its fields (:class:`Kind`) when built."""

    extension: ClassVar[bool] = False  # True: an rdp_verify extension, not a dp_accounting class

    def __post_init__(self) -> None:
        event = type(self).__name__
        for f in fields(self):
            object.__setattr__(self, f.name, _checked(f.metadata["kind"], getattr(self, f.name), f.name, event))
        self._check()
        depth = _json_depth(self)
        if depth > MAX_DEPTH:
            raise InputError(f"{event} nests arrays and objects {depth} deep in its JSON form (at most {MAX_DEPTH})")
        object.__setattr__(self, "_depth", depth)

    def _check(self) -> None:
        """Checks across fields (none by default)."""

    @property
    def name(self) -> str:
        """The class name (dp_accounting's, for its twins)."""
        return type(self).__name__


def _checked(kind: Kind, value: Any, name: str, event: str) -> Any:
    if kind in (Kind.NONNEGATIVE, Kind.POSITIVE, Kind.PROBABILITY, Kind.SHAPE):
        return _number(value, kind, name, event)
    if kind in (Kind.COUNT, Kind.SIZE):
        return _integer(value, kind, name, event)
    if kind is Kind.COUNTS:
        if isinstance(value, (list, tuple)):
            items = _sequence(value, name, event)
            if not items:
                raise _message(name, "[]", "must be an integer or a non-empty list of integers", event)
            return tuple(_integer(v, Kind.COUNT, f"{name}[{i}]", event) for i, v in enumerate(items))
        return _integer(value, Kind.COUNT, name, event)
    if kind in (Kind.NUMBERS, Kind.PROBABILITIES):
        items = _sequence(value, name, event)
        if not items:
            raise _message(name, "[]", "must be a non-empty list", event)
        each = Kind.PROBABILITY if kind is Kind.PROBABILITIES else Kind.NONNEGATIVE
        return tuple(_number(v, each, f"{name}[{i}]", event) for i, v in enumerate(items))
    if kind is Kind.EVENT:
        if not isinstance(value, DpEvent):
            raise _message(name, f"<{type(value).__name__}>", "is not an event (a rdp_verify.events DpEvent)", event)
        return value
    assert kind is Kind.EVENTS
    items = _sequence(value, name, event)
    for i, v in enumerate(items):
        if not isinstance(v, DpEvent):
            raise _message(f"{name}[{i}]", f"<{type(v).__name__}>", "is not an event (a rdp_verify.events DpEvent)",
                           event)
    return items


# -- events without fields ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoOpDpEvent(DpEvent):
    """An operation with no privacy impact (disappears when a run is flattened)."""


@dataclass(frozen=True)
class NonPrivateDpEvent(DpEvent):
    """A non-private operation: every accountant answers ε = ∞ (δ = 1)."""


@dataclass(frozen=True)
class UnsupportedDpEvent(DpEvent):
    """An operation with no DP description yet: every accountant's ``supports`` is False."""


# -- mechanisms (leaves) --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RandomizedResponseDpEvent(DpEvent):
    """k-ary randomized response: the true bucket with probability 1 − p, else a uniformly random one of k."""

    noise_parameter: Fraction = _spec(Kind.PROBABILITY)
    num_buckets: int = _spec(Kind.SIZE)


@dataclass(frozen=True)
class GaussianDpEvent(DpEvent):
    """The Gaussian mechanism, noise standard deviation over ℓ2 sensitivity ``noise_multiplier``."""

    noise_multiplier: Fraction = _spec(Kind.NONNEGATIVE)


@dataclass(frozen=True)
class LaplaceDpEvent(DpEvent):
    """The Laplace mechanism, noise scale over ℓ1 sensitivity ``noise_multiplier``."""

    noise_multiplier: Fraction = _spec(Kind.NONNEGATIVE)


@dataclass(frozen=True)
class DiscreteLaplaceDpEvent(DpEvent):
    """The discrete Laplace mechanism DLap(a), P[z] = exp(−a|z|)·tanh(a/2), integer ℓ1 ``sensitivity``."""

    noise_parameter: Fraction = _spec(Kind.POSITIVE)
    sensitivity: int = _spec(Kind.COUNT)


@dataclass(frozen=True)
class DiscreteGaussianDpEvent(DpEvent):
    """rdp_verify extension (dp_accounting has no such event): the discrete Gaussian mechanism N_Z(0, σ²) on
    integer values with integer ℓ2 ``sensitivity`` (Canonne, Kamath, Steinke 2020)."""

    extension: ClassVar[bool] = True
    sigma: Fraction = _spec(Kind.POSITIVE)
    sensitivity: int = _spec(Kind.COUNT)


@dataclass(frozen=True)
class SingleEpochTreeAggregationDpEvent(DpEvent):
    """Tree aggregation over one epoch, each record at most once across all trees (arXiv 2103.00039, App. D);
    ``step_counts`` an int (one tree) or a tuple (one count per tree)."""

    noise_multiplier: Fraction = _spec(Kind.NONNEGATIVE)
    step_counts: int | tuple[int, ...] = _spec(Kind.COUNTS)


@dataclass(frozen=True)
class MixtureOfGaussiansDpEvent(DpEvent):
    """N(0, σ²) against Σ p_i N(c_i, σ²) (arXiv 2310.15526); ``sampling_probs`` sum to exactly 1."""

    standard_deviation: Fraction = _spec(Kind.POSITIVE)
    sensitivities: tuple[Fraction, ...] = _spec(Kind.NUMBERS)
    sampling_probs: tuple[Fraction, ...] = _spec(Kind.PROBABILITIES)

    def _check(self) -> None:
        if len(self.sensitivities) != len(self.sampling_probs):
            raise _message("sampling_probs", f"<{len(self.sampling_probs)} values>",
                           f"must have as many entries as sensitivities ({len(self.sensitivities)})", self.name)
        total = sum(self.sampling_probs, Fraction(0))
        if total != 1:
            raise _message("sampling_probs", f"<sum {short_text(total)}>", "must sum to exactly 1", self.name)


@dataclass(frozen=True)
class ZCDpEvent(DpEvent):
    """A mechanism satisfying (ξ, ρ)-zCDP: (α, ξ + ρα)-RDP for every α > 1."""

    rho: Fraction = _spec(Kind.NONNEGATIVE)
    xi: Fraction = _spec(Kind.NONNEGATIVE, default=Fraction(0))


@dataclass(frozen=True)
class TruncatedSubsampledGaussianDpEvent(DpEvent):
    """Poisson sampling at ``sampling_probability`` from ``dataset_size`` records, the batch truncated to
    ``truncated_batch_size``, then the Gaussian mechanism (arXiv 2508.15089)."""

    dataset_size: int = _spec(Kind.SIZE)
    sampling_probability: Fraction = _spec(Kind.PROBABILITY)
    truncated_batch_size: int = _spec(Kind.SIZE)
    noise_multiplier: Fraction = _spec(Kind.NONNEGATIVE)


# -- composition and repetition -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelfComposedDpEvent(DpEvent):
    """``count`` adaptive applications of ``event``."""

    event: DpEvent = _spec(Kind.EVENT)
    count: int = _spec(Kind.COUNT)


@dataclass(frozen=True)
class ComposedDpEvent(DpEvent):
    """The adaptive composition of ``events`` in order (a list is stored as a tuple)."""

    events: tuple[DpEvent, ...] = _spec(Kind.EVENTS)


@dataclass(frozen=True)
class RepeatAndSelectDpEvent(DpEvent):
    """``event`` run a random number of times (mean ``mean``; ``shape`` 0 logarithmic, 1 geometric, ∞ Poisson,
    else truncated negative binomial) and the best output selected (arXiv 2110.03620)."""

    event: DpEvent = _spec(Kind.EVENT)
    mean: Fraction = _spec(Kind.NONNEGATIVE)
    shape: Fraction | float = _spec(Kind.SHAPE)


# -- sampling wrappers ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoissonSampledDpEvent(DpEvent):
    """``event`` on a Poisson sample: each record joins independently with probability ``sampling_probability``."""

    sampling_probability: Fraction = _spec(Kind.PROBABILITY)
    event: DpEvent = _spec(Kind.EVENT)


def _sample_size_within(self: Any) -> None:
    if self.sample_size > self.source_dataset_size:
        raise _message("sample_size", str(self.sample_size),
                       f"must lie in [0, source_dataset_size={self.source_dataset_size}]", self.name)


@dataclass(frozen=True)
class SampledWithReplacementDpEvent(DpEvent):
    """``event`` on ``sample_size`` records drawn uniformly with replacement from ``source_dataset_size``."""

    source_dataset_size: int = _spec(Kind.COUNT)
    sample_size: int = _spec(Kind.COUNT)
    event: DpEvent = _spec(Kind.EVENT)


@dataclass(frozen=True)
class SampledWithoutReplacementDpEvent(DpEvent):
    """``event`` on ``sample_size`` distinct records drawn uniformly from ``source_dataset_size``
    (``sample_size`` ≤ ``source_dataset_size``)."""

    source_dataset_size: int = _spec(Kind.COUNT)
    sample_size: int = _spec(Kind.COUNT)
    event: DpEvent = _spec(Kind.EVENT)

    _check = _sample_size_within


def _per_epoch_check(self: Any) -> None:
    if self.batch_size > self.dataset_size:
        raise _message("batch_size", str(self.batch_size), f"exceeds dataset_size={self.dataset_size}", self.name)
    if self.dataset_size % self.batch_size:
        raise _message("dataset_size", str(self.dataset_size), f"is not a multiple of batch_size={self.batch_size} "
                       "(each record in exactly one of N/b batches per epoch)", self.name)


@dataclass(frozen=True)
class ShuffledDpEvent(DpEvent):
    """rdp_verify extension (dp_accounting has no such event): ``steps`` steps of ``event``, from the start of an
    epoch, on batches of ``batch_size`` cut from a fresh permutation of the ``dataset_size`` records each epoch
    (``batch_size`` divides ``dataset_size``): :class:`~rdp_verify.foundations.run.Phase` with sampler
    ``shuffle``."""

    extension: ClassVar[bool] = True
    dataset_size: int = _spec(Kind.SIZE)
    batch_size: int = _spec(Kind.SIZE)
    steps: int = _spec(Kind.COUNT)
    event: DpEvent = _spec(Kind.EVENT)

    _check = _per_epoch_check


@dataclass(frozen=True)
class BallsInBinsDpEvent(DpEvent):
    """rdp_verify extension (dp_accounting has no such event): ``steps`` steps of ``event``, from the start of an
    epoch, each record in one uniformly random step of each epoch's ``dataset_size/batch_size``:
    :class:`~rdp_verify.foundations.run.Phase` with sampler ``balls-in-bins``."""

    extension: ClassVar[bool] = True
    dataset_size: int = _spec(Kind.SIZE)
    batch_size: int = _spec(Kind.SIZE)
    steps: int = _spec(Kind.COUNT)
    event: DpEvent = _spec(Kind.EVENT)

    _check = _per_epoch_check


EVENT_CLASSES: dict[str, type[DpEvent]] = {cls.__name__: cls for cls in (
    NoOpDpEvent, NonPrivateDpEvent, UnsupportedDpEvent, RandomizedResponseDpEvent, GaussianDpEvent, LaplaceDpEvent,
    DiscreteLaplaceDpEvent, SelfComposedDpEvent, ComposedDpEvent, PoissonSampledDpEvent,
    SampledWithReplacementDpEvent, SampledWithoutReplacementDpEvent, SingleEpochTreeAggregationDpEvent,
    RepeatAndSelectDpEvent, MixtureOfGaussiansDpEvent, ZCDpEvent, TruncatedSubsampledGaussianDpEvent,
    DiscreteGaussianDpEvent, ShuffledDpEvent, BallsInBinsDpEvent)}
"""Every event class by name."""
DP_ACCOUNTING_EVENTS = frozenset(name for name, cls in EVENT_CLASSES.items() if not cls.extension)
"""The names of dp_accounting 0.6's event classes (its ``dp_event.py``, in full)."""
EXTENSIONS = frozenset(name for name, cls in EVENT_CLASSES.items() if cls.extension)
"""The rdp_verify extensions: DiscreteGaussianDpEvent, ShuffledDpEvent, BallsInBinsDpEvent."""
SAMPLING_WRAPPERS: tuple[type[DpEvent], ...] = (PoissonSampledDpEvent, SampledWithReplacementDpEvent,
                                                SampledWithoutReplacementDpEvent, ShuffledDpEvent, BallsInBinsDpEvent)
"""Events that choose which records a nested event sees."""
