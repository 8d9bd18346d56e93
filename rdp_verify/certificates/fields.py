"""Which fields of a sealed certificate ``rdp-verify check`` re-verifies, and the generic comparison.

Every *leaf* of a certificate (a JSON string, number, boolean or null, or an empty object or array)
has a *path*: its keys and array indices joined by dots, e.g. ``methods.series.log_A.value`` or
``cross_check.pairs.0.methods.1``. A :class:`FieldPolicy` puts every leaf of a format in exactly one
of three lists of path patterns:

* ``verified``: recomputed from the certificate's inputs and compared exactly;
* ``derived``: re-derived exactly from other fields of the certificate itself by the format's
  self-consistency check (never compared with the recomputation), for the few fields judged from numbers
  that are recorded but not verified (the privacy-curve certificate's verdict, from its floating-point
  estimate);
* ``not_verified``: recorded, not verified (software versions: facts about the machine that wrote it; an
  estimate whose last digits depend on the machine).

No field is compared within a tolerance: each is equal, exactly re-derived, or declared.

A pattern is a path whose segments may be ``*`` (any one segment) and whose last segment (after at least one
other) may be ``**`` (any number of further segments, none included): ``methods.*.work.**`` covers a
free-form subtree.

:meth:`FieldPolicy.compare` is the comparison every format's check uses: each verified leaf must equal
the fresh recomputation's leaf exactly (same JSON type and value), because each recomputation is
deterministic: it repeats the recorded computation, at the recorded precisions, with exact rational or
correctly rounded arithmetic. A ``content_hash`` leaf is the exception: it is verified against the
content it seals (:func:`rdp_verify.certificates.certificate.integrity_errors`), not against the fresh
one, which seals fresh software versions. A leaf that no pattern classifies is reported as not a field
of the format, so an added field can never pass unchecked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator

__all__ = ["FieldPolicy", "leaf_paths", "matches"]

_MISSING = object()


def leaf_paths(obj: Any) -> dict[str, Any]:
    """Every leaf of ``obj`` by path, in document order (an empty object or array is a leaf)."""
    out: dict[str, Any] = {}

    def walk(x: Any, path: str) -> None:
        if isinstance(x, dict) and x:
            for key, value in x.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(x, list) and x:
            for i, value in enumerate(x):
                walk(value, f"{path}.{i}" if path else str(i))
        else:
            out[path] = x

    walk(obj, "")
    return out


@lru_cache(maxsize=None)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression matching the paths any of ``patterns`` matches."""
    def one(pattern: str) -> str:
        segments = pattern.split(".")
        tail = r"(?:\..+)?" if segments[-1] == "**" else ""
        return r"\.".join("[^.]+" if s == "*" else re.escape(s) for s in segments[:-1 if tail else None]) + tail

    return re.compile("|".join(f"(?:{one(p)})" for p in patterns) or "(?!)")


def matches(pattern: str, path: str) -> bool:
    """Whether ``path`` matches ``pattern`` (``*``: one segment; a final ``**``: any further segments)."""
    return _compiled((pattern,)).fullmatch(path) is not None


def _get(obj: Any, path: str) -> Any:
    for segment in path.split(".") if path else ():
        if isinstance(obj, dict) and segment in obj:
            obj = obj[segment]
        elif isinstance(obj, list) and segment.isdigit() and int(segment) < len(obj):
            obj = obj[int(segment)]
        else:
            return _MISSING
    return obj


def _divergence(claimed: Any, fresh: Any, path: str) -> str:
    """The shortest prefix of ``path`` at which the two documents part: not both objects, nor lists of one length."""
    segments = path.split(".")
    for i in range(1, len(segments)):
        prefix = ".".join(segments[:i])
        a, b = _get(claimed, prefix), _get(fresh, prefix)
        if not (isinstance(a, dict) and isinstance(b, dict) or
                isinstance(a, list) and isinstance(b, list) and len(a) == len(b)):
            return prefix
    return path


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells ``true`` from ``1`` and ``1`` from ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _show(x: Any) -> str:
    if x is _MISSING:
        return "absent"
    if isinstance(x, dict):
        return "an object" if x else "{}"
    if isinstance(x, list):
        return f"a list of {len(x)}" if x else "[]"
    text = json.dumps(x, ensure_ascii=False)
    return text if len(text) <= 80 else text[:60] + "…" + text[-12:]


@dataclass(frozen=True)
class FieldPolicy:
    """The three lists of path patterns of one certificate format (see the module docstring)."""

    verified: tuple[str, ...]
    not_verified: tuple[str, ...]
    derived: tuple[str, ...] = ()
    _seen: dict[str, tuple[bool | None, bool]] = field(default_factory=dict, init=False, repr=False, compare=False,
                                                      hash=False)  # path -> (is_verified, is_derived)

    def under(self, prefix: str) -> FieldPolicy:
        """The same policy for a certificate embedded at ``prefix``."""
        return FieldPolicy(tuple(f"{prefix}.{p}" for p in self.verified),
                           tuple(f"{prefix}.{p}" for p in self.not_verified),
                           tuple(f"{prefix}.{p}" for p in self.derived))

    def __add__(self, other: FieldPolicy) -> FieldPolicy:
        return FieldPolicy(self.verified + other.verified, self.not_verified + other.not_verified,
                           self.derived + other.derived)

    def is_verified(self, path: str) -> bool | None:
        """True (recomputed and compared, or exactly re-derived), False (recorded, not verified) or None (in no
        list, or in more than one)."""
        return self._kinds(path)[0]

    def is_derived(self, path: str) -> bool:
        """The leaf is re-derived from the certificate's own fields, not compared with the recomputation."""
        return self._kinds(path)[1]

    def _kinds(self, path: str) -> tuple[bool | None, bool]:
        """(is_verified, is_derived) of a path, matched once per policy and path (a check asks for each leaf several
        times, a mutation test for each leaf of hundreds of forgeries)."""
        kinds = self._seen.get(path)
        if kinds is None:
            v = _compiled(self.verified).fullmatch(path) is not None
            d = _compiled(self.derived).fullmatch(path) is not None
            n = _compiled(self.not_verified).fullmatch(path) is not None
            if len(self._seen) >= 100_000:  # a stranger's file with ever new paths: memory stays bounded
                self._seen.clear()
            kinds = self._seen[path] = (None if v + d + n != 1 else not n, d)
        return kinds

    def partition_errors(self, cert: Any) -> list[str]:
        """Leaves of ``cert`` in neither list or in both: empty iff the lists partition its fields."""
        return [path for path in leaf_paths(cert) if self.is_verified(path) is None]

    def verified_count(self, cert: Any) -> int:
        """How many leaves of ``cert`` are recomputed and compared (the derived ones not counted)."""
        return sum(self.is_verified(path) is True and not self.is_derived(path) for path in leaf_paths(cert))

    def present(self, cert: Any, patterns: tuple[str, ...]) -> list[str]:
        """The ``patterns`` that match some leaf of ``cert``, in their order (what a report can truthfully name)."""
        paths = list(leaf_paths(cert))
        return [p for p in patterns if any(_compiled((p,)).fullmatch(path) for path in paths)]

    def compare(self, claimed: Any, fresh: Any) -> list[str]:
        """``field: reason`` for every verified leaf of ``claimed`` that differs from ``fresh`` (or is absent in it).

        A difference is reported once, where the two documents part (``b: claimed an object, recomputed null``,
        not each leaf below ``b``); ``content_hash`` leaves are left to the integrity check of the object they seal.
        """
        return list(self._differences(claimed, fresh))

    def _differences(self, claimed: Any, fresh: Any) -> Iterator[str]:
        mine, theirs = leaf_paths(claimed), leaf_paths(fresh)
        reported: list[str] = []
        for path in [*mine, *(p for p in theirs if p not in mine)]:
            if any(path == r or path.startswith(r + ".") for r in reported):
                continue
            kind = self.is_verified(path)
            if kind is None:
                reported.append(path)
                yield (f"{path}: not a field of this certificate format" if path in mine
                       else f"{path}: recomputed, but in no field list (a gap in rdp_verify's field policy)")
            elif kind and path.rsplit(".", 1)[-1] != "content_hash" and not self.is_derived(path) \
                    and not _same(mine.get(path, _MISSING), theirs.get(path, _MISSING)):
                # a path that is a leaf on one side only is absent or a non-empty container on the other: unequal
                # either way, as _get would find
                at = _divergence(claimed, fresh, path)
                reported.append(at)
                yield f"{at}: claimed {_show(_get(claimed, at))}, recomputed {_show(_get(fresh, at))}"
