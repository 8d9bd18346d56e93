"""The one way rdp_verify reads a file it is given: text, JSON and CSV with limits on size, depth and shape.

Every file a command reads -- certificates and reports (``check``), phases (``dp --phases``,
``tradeoff --phases``), claims (``audit --claims``), canaries (``audit --canaries``), grids and
manifests (``golden --grid``) -- comes through these readers, so a hostile or broken file gets the same
one-line :class:`~rdp_verify.foundations.inputs.InputError` (exit 2 at the command line) whatever
command reads it, before any work starts:

* **size**: at most :data:`MAX_BYTES` bytes (checked before the file is read in full);
* **text**: UTF-8, with or without a byte-order mark (spreadsheets save CSV with one);
* **JSON depth**: at most :data:`MAX_DEPTH` nested arrays and objects, checked on the text before it is
  parsed (Python's parser would otherwise exhaust the interpreter's stack on ``[[[[...``);
  ``NaN`` and ``Infinity``, which the JSON standard does not have, are refused;
* **JSON keys**: an object that repeats a key is refused, naming the key (Python's parser would keep the last
  value silently, so a reader of the file and rdp_verify would see different claims; RFC 8259 Section 4 leaves
  the meaning of repeated names unspecified);
* **CSV shape**: a header, every row with exactly the header's number of cells, at most
  :data:`MAX_ROWS` rows.

What each file must hold (its fields and their values) is checked by the reader of that format.
"""

from __future__ import annotations

import csv
import json
import os
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

from .inputs import InputError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_ROWS", "read_text", "parse_json", "read_json", "parse_csv", "read_csv"]

MAX_BYTES = 256 * 2**20  # 256 MiB: a million canary rows or a grid's certificates take a few tens of MiB
MAX_DEPTH = 64  # the files rdp_verify writes nest a few levels (a list of calibrations embedding run certificates)
MAX_ROWS = 10**7

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def read_text(path: str | os.PathLike, what: str) -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark dropped), refused in one line when the file
    cannot be read, is larger than :data:`MAX_BYTES` or is not UTF-8; ``what`` names the file in messages."""
    p = Path(path)
    try:
        with open(p, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{what} {p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{what} {p}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise InputError(f"{what} {p} is larger than {MAX_BYTES // 2**20} MiB, the most rdp_verify reads")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {p} is not UTF-8 text (byte {exc.start})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _DuplicateKey(Exception):
    """An object of the text repeats a key (raised by :func:`_unique_keys`, reported by :func:`parse_json`)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object's dict, refused when a key appears twice."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def parse_json(text: str, what: str, *, numbers_as_text: bool = False) -> Any:
    """The JSON value of ``text``, refused in one line when it is not JSON, nests deeper than
    :data:`MAX_DEPTH`, repeats a key in an object or holds ``NaN``/``Infinity``. ``numbers_as_text``: numbers stay their text (``1e-5``
    read exactly later, never through a double)."""
    if len(text) > MAX_BYTES:
        raise InputError(f"{what} is larger than {MAX_BYTES // 2**20} MiB, the most rdp_verify reads")
    brackets = _BRACKET.findall(_STRING.sub('""', text))
    depth = max(accumulate(1 if b in "[{" else -1 for b in brackets), default=0)
    if depth > MAX_DEPTH:
        raise InputError(f"{what} nests arrays and objects {depth} deep (at most {MAX_DEPTH})")
    kwargs: dict[str, Any] = {"parse_constant": _refuse_constant, "object_pairs_hook": _unique_keys}
    if numbers_as_text:
        kwargs.update(parse_float=str, parse_int=str)
    try:
        return json.loads(text, **kwargs)
    except _DuplicateKey as exc:
        raise InputError(f"{what} repeats the key {exc.args[0]!r} in one object (ambiguous: refused)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # a refused constant, or an integer of more than 4300 digits
        raise InputError(f"{what} is not usable JSON: {exc}") from None
    except RecursionError:  # only if the limit above were raised past the interpreter's stack
        raise InputError(f"{what} nests too deeply") from None


def read_json(path: str | os.PathLike, what: str, *, numbers_as_text: bool = False) -> Any:
    """:func:`parse_json` of the file at ``path`` (:func:`read_text`)."""
    return parse_json(read_text(path, what), f"{what} {path}", numbers_as_text=numbers_as_text)


def parse_csv(text: str, what: str) -> list[dict[str, str]]:
    """The rows of CSV ``text`` as ``{header: cell}`` (header names and cells stripped of surrounding blanks),
    refused in one line when a row has more or fewer cells than the header, a header name is empty or
    repeated, or there are more than :data:`MAX_ROWS` rows. Blank lines are skipped."""
    text = text.removeprefix("\ufeff")
    try:
        reader = csv.reader(text.splitlines())
        header = next(reader, None)
        if header is None:
            raise InputError(f"{what} is empty (a header line and rows are needed)")
        names = [h.strip() for h in header]
        if any(not n for n in names) or len(set(names)) != len(names):
            raise InputError(f"{what}: the header {','.join(header)!r} has an empty or repeated column name")
        rows = []
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(names):
                raise InputError(f"{what}: line {reader.line_num} has {len(cells)} cells, the header {len(names)}")
            if len(rows) == MAX_ROWS:
                raise InputError(f"{what} has more than {MAX_ROWS} rows, the most rdp_verify reads")
            rows.append({n: c.strip() for n, c in zip(names, cells)})
    except csv.Error as exc:
        raise InputError(f"{what} is not CSV: {exc}") from None
    return rows


def read_csv(path: str | os.PathLike, what: str) -> list[dict[str, str]]:
    """:func:`parse_csv` of the file at ``path`` (:func:`read_text`)."""
    return parse_csv(read_text(path, what), f"{what} {path}")
