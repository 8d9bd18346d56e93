"""Resealed forgeries of a certificate, one field at a time: the mutation test behind ``rdp-verify check``.

For every leaf of a certificate (:func:`rdp_verify.certificates.fields.leaf_paths`), :func:`forgeries`
makes type-preserving edits (a number written as a decimal string moves by one unit in its last digit, an
exact ``p/q`` by one, integers by one, floats by a half; booleans flip; other strings are altered; empty
lists and objects get an element) and sets it to null, then reseals it as a careful forger would: every
sealed object around the field gets the content hash of its new content (but an edited hash stays edited).

:func:`assert_every_field_checked` runs a format's ``compare(claimed, fresh)`` on each forgery against one
fresh recomputation (valid because a check is exactly integrity + ``compare(cert, recompute(cert))`` and the
forgeries keep the inputs), and asserts that a forgery of a verified or derived field is caught and named, by
the schema or by ``compare`` (a derived one by the format's re-derivation), and that a forgery of a field
recorded but not verified is not reported: every field is caught or declared.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any, Callable

from rdp_verify.certificates.certificate import content_hash, integrity_errors
from rdp_verify.certificates.fields import FieldPolicy, leaf_paths, matches
from rdp_verify.foundations.inputs import fraction_text

_DECIMAL = re.compile(r"-?\d+(?:\.(\d+))?(?:e([+-]?\d+))?")
_RATIO = re.compile(r"-?\d+/\d+")


def perturbed(value: Any) -> list[Any]:
    """Type-preserving edits of one leaf value, and null (or "0" for a null): the smallest change of each kind,
    since no field is compared within a tolerance (rdp_verify.certificates.fields)."""
    if value is None:
        return ["0"]
    if isinstance(value, bool):
        out: Any = not value
    elif isinstance(value, int):
        out = value + 1
    elif isinstance(value, float):
        out = value + 0.5
    elif isinstance(value, str) and (m := _DECIMAL.fullmatch(value)):
        out = fraction_text(Fraction(value) + Fraction(10) ** (int(m[2] or 0) - len(m[1] or "")))
    elif isinstance(value, str) and _RATIO.fullmatch(value):
        out = fraction_text(Fraction(value) + 1)
    elif isinstance(value, str):
        out = value + " (edited)"
    elif isinstance(value, list):
        out = ["edited"]
    else:
        out = {"edited": "edited"}
    return [out, None]


def _set(obj: Any, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for segment in parents:
        obj = obj[int(segment)] if isinstance(obj, list) else obj[segment]
    if isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


def _at(obj: Any, segments: list[str]) -> Any:
    for segment in segments:
        obj = obj[int(segment)] if isinstance(obj, list) else obj[segment]
    return obj


def edited(cert: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``cert`` with the leaf at ``path`` set to ``value``, every enclosing sealed object resealed."""
    out = json.loads(json.dumps(cert))  # a JSON document's deep copy, several times faster than copy.deepcopy
    _set(out, path, value)
    segments = path.split(".")
    for depth in range(len(segments) - 1, -1, -1):
        obj = _at(out, segments[:depth])
        if isinstance(obj, dict) and "content_hash" in obj and segments[depth:] != ["content_hash"]:
            obj["content_hash"] = content_hash(obj)
    return out


def _field(line: str) -> str:
    """The field a problem line names (an embedded certificate's lines carry its prefix)."""
    return line.split(": ", 1)[0]


def names(path: str, lines: list[str]) -> bool:
    """Whether a problem line (``field: reason`` or ``schema: field: reason``) names ``path``, an object holding
    it, or (for an edit that filled an empty list or object) a field inside it."""
    for line in lines:
        field = line.split(": ", 2)[1] if line.startswith("schema: ") else line.split(": ", 1)[0]
        if field == path or path.startswith(field + ".") or field.startswith(path + "."):
            return True
    return False


def assert_every_field_checked(cert: dict[str, Any], fresh: dict[str, Any], policy: FieldPolicy,
                               compare: Callable[[Any, Any], list[str]], schema: str,
                               recomputed_from: tuple[str, ...] = ("inputs.**",)) -> int:
    """Forge every leaf but the inputs (those go through the full check); return how many forgeries were caught."""
    assert policy.partition_errors(cert) == [], "fields in neither list or in both"
    assert compare(cert, fresh) == []
    caught = 0
    for path, original in leaf_paths(cert).items():
        if any(matches(p, path) for p in recomputed_from):
            continue
        for value in perturbed(original):
            forged = edited(cert, path, value)
            problems = compare(forged, fresh)  # robust to any JSON; the schema is consulted only when it is silent
            if policy.is_verified(path):
                assert names(path, problems) or names(path, integrity_errors(forged, schema)), \
                    f"{path} = {value!r} is not caught: {problems}"
                caught += 1
            else:
                # a recorded field is not compared; an edit the schema forbids (of an embedded certificate too, or
                # a value that is not a number) is refused; the fields derived from it (a verdict from an estimate)
                # are re-derived and may disagree
                assert problems == [] or integrity_errors(forged, schema) or all(
                    "schema: " in p or policy.is_derived(_field(p)) or (value is None and names(path, [p]))
                    for p in problems), \
                    f"{path} is not verified, yet {problems}"
    return caught
