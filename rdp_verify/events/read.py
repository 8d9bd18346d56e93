"""Reading and writing events: JSON (rdp_verify's and dp_accounting's), live dp_accounting objects, one line of text.

**The JSON form** (written by :func:`to_json`, read by :func:`from_named_tuple_json` and :func:`load_event`;
schema ``rdp_verify/certificates/schemas/dp-event-v1.schema.json``, :func:`rdp_verify.events.schema.event_schema`).
An event is an object naming its class by dp_accounting's ``class_name`` and holding its fields by their
dp_accounting names; a nested event is such an object again, ``events`` a list of them::

    {"class_name": "ComposedDpEvent", "events": [
      {"class_name": "SelfComposedDpEvent", "count": 1000,
       "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": "0.01",
                 "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"}}},
      {"class_name": "LaplaceDpEvent", "noise_multiplier": "2"}]}

* numbers are exact decimal or ``p/q`` text (:func:`to_json` writes them so) or JSON numbers; a JSON number in a
  file is read exactly from its text (:func:`load_event`), one already parsed into a Python float by its shortest
  decimal (``repr``), as the drop-in accountants read dp_accounting's floats; NaN and infinities are refused
  (``RepeatAndSelectDpEvent.shape`` alone may be the text ``"inf"``);
* counts and sizes are JSON integers (or their digits as text);
* ``module_name`` may be present, as ``to_named_tuple()`` has it: ``dp_accounting.dp_event`` (for dp_accounting's
  classes) or ``rdp_verify.events`` (for any class); another module is refused;
* ``ZCDpEvent.xi`` may be left out (0, dp_accounting's default); every other field is required, and unknown fields
  are refused.

**dp_accounting's own serialisation is read too.** ``DpEvent.to_named_tuple()`` gives nested named tuples
``(module_name, class_name, *fields)``; ``json.dumps`` writes a named tuple as a *list*, so
``json.dumps(event.to_named_tuple())`` is ``["dp_accounting.dp_event", "PoissonSampledDpEvent", 0.01,
["dp_accounting.dp_event", "GaussianDpEvent", 1.0]]`` (``_asdict()`` makes only the outer level an object). Such a
positional list, with the fields in dp_accounting's order, is accepted wherever an event object is, and so are the
named tuples themselves (:func:`from_named_tuple_json` of ``event.to_named_tuple()``).

**Refusals** are :class:`~rdp_verify.foundations.inputs.InputError`, one line naming the event and the field: an
unknown class (:class:`~rdp_verify.events.model.UnsupportedEvent`, naming it), a missing, unknown or invalid field,
and nesting deeper than :data:`~rdp_verify.foundations.files.MAX_DEPTH` arrays and objects (checked before
descending, so a tree 100000 levels deep is refused at once; a file is also held to the shared readers' size,
depth and NaN limits, :func:`rdp_verify.foundations.files.read_json`).
"""

from __future__ import annotations

import decimal
import math
import os
import re
from dataclasses import MISSING, Field, fields
from fractions import Fraction
from typing import Any, Callable

from ..foundations.files import MAX_DEPTH, read_json
from ..foundations.inputs import InputError, fraction_text
from .model import (
    DP_ACCOUNTING_EVENTS,
    EVENT_CLASSES,
    ComposedDpEvent,
    DpEvent,
    Kind,
    SelfComposedDpEvent,
    UnsupportedEvent,
)

__all__ = ["from_named_tuple_json", "load_event", "from_dp_accounting", "to_json", "render",
           "DP_ACCOUNTING_MODULES", "RDP_VERIFY_MODULES"]

DP_ACCOUNTING_MODULES = ("dp_accounting.dp_event", "dp_accounting")
"""``module_name`` values accepted for dp_accounting's classes."""
RDP_VERIFY_MODULES = ("rdp_verify.events", "rdp_verify.events.model")
"""``module_name`` values accepted for every class (rdp_verify's twins and extensions)."""

_NUMBER_KINDS = (Kind.NONNEGATIVE, Kind.POSITIVE, Kind.PROBABILITY, Kind.SHAPE)
_DIGITS = re.compile(r"\s*-?\d{1,100}\s*")


def _shown(text: Any) -> str:
    text = repr(text)
    return text if len(text) <= 60 else text[:57] + "..."


def _deep(depth: int) -> None:
    if depth > MAX_DEPTH:
        raise InputError(f"the event nests arrays and objects more than {MAX_DEPTH} deep")


def _class(name: Any, module: Any) -> type[DpEvent]:
    if not isinstance(name, str):
        raise InputError(f"class_name={_shown(name)} is not text (an event names its class, e.g. 'GaussianDpEvent')")
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        raise UnsupportedEvent(f"class_name={_shown(name)} is not an event class of dp_accounting 0.6 nor an "
                               "rdp_verify extension")
    if module is not None:
        allowed = RDP_VERIFY_MODULES + (DP_ACCOUNTING_MODULES if name in DP_ACCOUNTING_EVENTS else ())
        if module not in allowed:
            raise InputError(f"module_name={_shown(module)} is not one of {', '.join(allowed)} (in {name})")
    return cls


def _number(value: Any, kind: Kind, name: str, event: str) -> Any:
    """A number as the constructors take it: floats as their shortest decimal text (``repr``)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float):
        if kind is Kind.SHAPE and value == math.inf:
            return value
        if not math.isfinite(value):
            raise InputError(f"{name}={value!r} is not a finite number (in {event})")
        return repr(value)
    return value


def _count(value: Any, text_ok: bool) -> Any:
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if text_ok and isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    return value


def _value(f: Field, value: Any, event: str, depth: int, read: Callable[[Any, int], DpEvent], text_ok: bool) -> Any:
    """One field's raw value (JSON or a live object's) as the constructor takes it."""
    kind = f.metadata["kind"]
    if kind in _NUMBER_KINDS:
        return _number(value, kind, f.name, event)
    if kind in (Kind.COUNT, Kind.SIZE):
        return _count(value, text_ok)
    if kind is Kind.EVENT:
        return read(value, depth + 1)
    if not isinstance(value, (list, tuple)):
        return _count(value, text_ok) if kind is Kind.COUNTS else value  # the constructor names what is wrong
    _deep(depth + 1)
    if kind is Kind.EVENTS:
        return tuple(read(v, depth + 2) for v in value)
    if kind is Kind.COUNTS:
        return tuple(_count(v, text_ok) for v in value)
    return tuple(_number(v, Kind.NONNEGATIVE, f"{f.name}[{i}]", event) for i, v in enumerate(value))


def _build(cls: type[DpEvent], raw: dict[str, Any], depth: int, read: Callable[[Any, int], DpEvent],
           text_ok: bool) -> DpEvent:
    values = {}
    for f in fields(cls):
        if f.name not in raw:
            if f.default is MISSING:
                raise InputError(f"missing field {f.name!r} (in {cls.__name__})")
            continue
        values[f.name] = _value(f, raw[f.name], cls.__name__, depth, read, text_ok)
    return cls(**values)


def _from_json(value: Any, depth: int) -> DpEvent:
    _deep(depth)
    if isinstance(value, dict):
        cls = _class(value.get("class_name"), value.get("module_name"))
        known = {f.name for f in fields(cls)}
        for key in value:
            if key not in known and key not in ("class_name", "module_name"):
                listed = ", ".join(sorted(known)) or "none"
                raise InputError(f"unknown field {_shown(key)} (in {cls.__name__}; its fields: {listed})")
        return _build(cls, value, depth, _from_json, True)
    if isinstance(value, (list, tuple)) and len(value) >= 2:
        cls = _class(value[1], value[0])
        names = [f.name for f in fields(cls)]
        least = sum(f.default is MISSING for f in fields(cls))
        given = len(value) - 2
        if not least <= given <= len(names):
            raise InputError(f"{cls.__name__} as a list [module_name, class_name, {', '.join(names) or '...'}] has "
                             f"{given} field(s), not {len(names)}")
        return _build(cls, dict(zip(names, value[2:])), depth, _from_json, True)
    raise InputError(f"an event must be an object with 'class_name' (or dp_accounting's list [module_name, "
                     f"class_name, fields...]), got {type(value).__name__}")


def from_named_tuple_json(obj: Any) -> DpEvent:
    """The event of a JSON value (as :func:`json.loads` gives it) in the form above: objects with
    ``class_name``, dp_accounting's positional lists, or ``to_named_tuple()``'s named tuples themselves."""
    return _from_json(obj, 1)


def load_event(path: str | os.PathLike) -> DpEvent:
    """The event in a JSON file, read by the shared hostile-file-safe reader (numbers read exactly from their
    text); every refusal is one line naming the file."""
    data = read_json(path, "event file", numbers_as_text=True)
    try:
        return from_named_tuple_json(data)
    except InputError as exc:
        raise type(exc)(f"{path}: {exc}") from None


def _from_live(obj: Any, depth: int) -> DpEvent:
    _deep(depth)
    if isinstance(obj, DpEvent):
        return obj
    if isinstance(obj, tuple) and hasattr(obj, "_fields") and hasattr(obj, "class_name"):
        return _from_json(obj, depth)  # a to_named_tuple() value
    name = type(obj).__name__
    cls = EVENT_CLASSES.get(name)
    if cls is None:
        raise UnsupportedEvent(f"{name} is not an event class of dp_accounting 0.6 nor an rdp_verify extension")
    raw = {f.name: getattr(obj, f.name) for f in fields(cls) if hasattr(obj, f.name)}
    return _build(cls, raw, depth, _from_live, False)


def from_dp_accounting(obj: Any) -> DpEvent:
    """The event of a live dp_accounting ``DpEvent`` (or of its ``to_named_tuple()``), recognised by its class
    name and read field by field (duck typing: dp_accounting is never imported). Floats are read as the shortest
    decimal that round-trips (``repr``: 0.1 is 1/10), numpy scalars by their Python value; counts must be ints.
    An event of this module is returned as it is."""
    return _from_live(obj, 1)


def _text(value: Any) -> Any:
    if isinstance(value, Fraction):
        return fraction_text(value)
    if isinstance(value, float):  # RepeatAndSelectDpEvent.shape = inf, the one non-rational number
        return "inf"
    return value


def to_json(event: DpEvent) -> dict[str, Any]:
    """The JSON form (above) of ``event``: numbers as exact text, counts as integers;
    ``from_named_tuple_json(to_json(e)) == e``."""
    out: dict[str, Any] = {"class_name": event.name}
    for f in fields(event):
        value = getattr(event, f.name)
        kind = f.metadata["kind"]
        if kind is Kind.EVENT:
            out[f.name] = to_json(value)
        elif kind is Kind.EVENTS:
            out[f.name] = [to_json(e) for e in value]
        elif isinstance(value, tuple):
            out[f.name] = [_text(v) for v in value]
        else:
            out[f.name] = _text(value)
    return out


_SHORT_NAMES = {  # field names in the one-line text, where the usual letter is clearer
    "GaussianDpEvent": {"noise_multiplier": "sigma"},
    "LaplaceDpEvent": {"noise_multiplier": "b"},
    "DiscreteLaplaceDpEvent": {"noise_parameter": "a"},
    "RandomizedResponseDpEvent": {"noise_parameter": "p", "num_buckets": "k"},
    "SingleEpochTreeAggregationDpEvent": {"noise_multiplier": "sigma"},
    "MixtureOfGaussiansDpEvent": {"standard_deviation": "sigma", "sensitivities": "c", "sampling_probs": "p"},
    "TruncatedSubsampledGaussianDpEvent": {"dataset_size": "N", "sampling_probability": "q",
                                           "truncated_batch_size": "B", "noise_multiplier": "sigma"},
    "PoissonSampledDpEvent": {"sampling_probability": "q"},
    "SampledWithReplacementDpEvent": {"source_dataset_size": "N", "sample_size": "b"},
    "SampledWithoutReplacementDpEvent": {"source_dataset_size": "N", "sample_size": "b"},
    "ShuffledDpEvent": {"dataset_size": "N", "batch_size": "b"},
    "BallsInBinsDpEvent": {"dataset_size": "N", "batch_size": "b"},
}


def _render_value(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_render_value(v) for v in value) + "]"
    return str(_text(value))


def render(event: DpEvent) -> str:
    """The run on one line, exact: ``1000 x PoissonSampled(q=0.01, Gaussian(sigma=1)) + Laplace(b=2)``.

    Class names lose ``DpEvent``; ``n x E`` is ``SelfComposedDpEvent(E, n)``, ``A + B`` a composition
    (parenthesised where it nests), ``Composed()`` the empty one; fields are named as in dp_accounting except the
    usual letters (σ ``sigma``, q, Laplace scale b, batch b of N records, ...)."""
    if isinstance(event, SelfComposedDpEvent):
        inner = render(event.event)
        return f"{event.count} x " + (f"({inner})" if isinstance(event.event, ComposedDpEvent) else inner)
    if isinstance(event, ComposedDpEvent):
        if not event.events:
            return "Composed()"
        return " + ".join(f"({render(e)})" if isinstance(e, ComposedDpEvent) and e.events else render(e)
                          for e in event.events)
    short = _SHORT_NAMES.get(event.name, {})
    parts = []
    for f in fields(event):
        value = getattr(event, f.name)
        if f.metadata["kind"] is Kind.EVENT:
            parts.append(render(value))
        else:
            parts.append(f"{short.get(f.name, f.name)}={_render_value(value)}")
    title = event.name.removesuffix("DpEvent")
    return f"{title}({', '.join(parts)})" if parts else title
