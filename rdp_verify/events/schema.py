"""The JSON Schema of the event form (:mod:`rdp_verify.events.read`), generated from the event classes.

``event_schema()`` is the schema; it ships as ``rdp_verify/certificates/schemas/dp-event-v1.schema.json`` beside
the other formats' schemas (a test keeps the file equal to this function's output). It fixes the *shape*: every
class with its fields by name (an object with ``class_name``) or by position (dp_accounting's ``[module_name,
class_name, fields...]`` list), numbers as exact text or JSON numbers, counts as integers. What a shape cannot say
-- ranges, ``sampling_probs`` summing to 1, a sample no larger than its dataset, nesting depth -- the readers check,
with one-line messages.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

from .model import DP_ACCOUNTING_EVENTS, EVENT_CLASSES, Kind
from .read import DP_ACCOUNTING_MODULES, RDP_VERIFY_MODULES

__all__ = ["SCHEMA_NAME", "event_schema"]

SCHEMA_NAME = "dp-event-v1"

_DECIMAL = r"^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$"
_RATIO = r"^\s*[+-]?\d+/\d+\s*$"
_NUMBER = {"anyOf": [{"type": "number"}, {"type": "string", "pattern": _DECIMAL},
                     {"type": "string", "pattern": _RATIO}]}
_INTEGER = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": r"^\s*\d+\s*$"}]}


def _field(kind: Kind) -> dict[str, Any]:
    if kind in (Kind.NONNEGATIVE, Kind.POSITIVE, Kind.PROBABILITY):
        return {"$ref": "#/$defs/number"}
    if kind is Kind.SHAPE:
        return {"anyOf": [{"$ref": "#/$defs/number"}, {"enum": ["inf", "infinity", "Infinity"]}]}
    if kind in (Kind.COUNT, Kind.SIZE):
        return {"$ref": "#/$defs/integer"}
    if kind is Kind.COUNTS:
        return {"anyOf": [{"$ref": "#/$defs/integer"}, {"type": "array", "minItems": 1,
                                                        "items": {"$ref": "#/$defs/integer"}}]}
    if kind in (Kind.NUMBERS, Kind.PROBABILITIES):
        return {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/number"}}
    if kind is Kind.EVENT:
        return {"$ref": "#/$defs/event"}
    return {"type": "array", "items": {"$ref": "#/$defs/event"}}


def _forms(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The class's object form and positional-list form."""
    cls = EVENT_CLASSES[name]
    modules = list(RDP_VERIFY_MODULES + (DP_ACCOUNTING_MODULES if name in DP_ACCOUNTING_EVENTS else ()))
    specs = [(f.name, _field(f.metadata["kind"]), f.default is MISSING) for f in fields(cls)]
    by_name = {
        "description": (cls.__doc__ or name).split("\n")[0],
        "properties": {"class_name": {"const": name}, "module_name": {"enum": modules},
                       **{n: s for n, s, _ in specs}},
        "required": ["class_name", *[n for n, _, required in specs if required]],
        "additionalProperties": False,
    }
    by_position = {
        "prefixItems": [{"enum": modules}, {"const": name}, *[s for _, s, _ in specs]],
        "items": False,
        "minItems": 2 + sum(required for _, _, required in specs),
    }
    return by_name, by_position


def _dispatch(names: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Objects and lists, each checked against its own class's form only (``if`` on the class name, so the
    validation of a tree is linear in its size)."""
    objects: dict[str, Any] = {"type": "object", "required": ["class_name"],
                               "properties": {"class_name": {"enum": names}}, "allOf": []}
    lists: dict[str, Any] = {"type": "array", "minItems": 2,
                             "prefixItems": [{"type": "string"}, {"enum": names}], "allOf": []}
    for name in names:
        by_name, by_position = _forms(name)
        objects["allOf"].append({"if": {"properties": {"class_name": {"const": name}}, "required": ["class_name"]},
                                 "then": by_name})
        lists["allOf"].append({"if": {"prefixItems": [True, {"const": name}], "minItems": 2}, "then": by_position})
    return objects, lists


def event_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one event in the JSON form."""
    objects, lists = _dispatch(sorted(EVENT_CLASSES))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:rdp-verify:dp-event:1",
        "title": "rdp_verify privacy event (dp_accounting 0.6 DpEvent and rdp_verify extensions), version 1",
        "description": ("One event: an object naming its class (class_name, optionally module_name) with its fields "
                        "by dp_accounting's names, or dp_accounting's to_named_tuple() as JSON writes it, a list "
                        "[module_name, class_name, fields...]. Nested events take either form. Numbers are exact "
                        "decimal or p/q text or JSON numbers; counts are integers. Ranges, sums and depth are "
                        "checked by rdp_verify.events.read, not by this schema."),
        "$ref": "#/$defs/event",
        "$defs": {
            "number": _NUMBER,
            "integer": _INTEGER,
            "event": {"if": {"type": "object"}, "then": {"$ref": "#/$defs/event_object"},
                      "else": {"$ref": "#/$defs/event_list"}},
            "event_object": objects,
            "event_list": lists,
        },
    }
