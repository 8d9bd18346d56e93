"""Partitioned golden datasets: a big grid of golden rows computed in chunks that survive a kill.

``rdp-verify golden --grid GRID.json --out DIR`` computes the golden rows
(:func:`rdp_verify.reference.golden.row`: proven ε_α intervals at 40 digits, printed to 25) of
every point of the grid in GRID.json, in chunks of ``chunk_size`` points, and writes each chunk
to DIR as soon as it is done, then the manifest that records it. A run that is killed, or whose
worker dies, is resumed by the same command: chunks whose file matches the manifest are kept,
missing or corrupt ones are recomputed. ``rdp-verify golden --verify DIR`` re-checks a dataset.

The grid file (JSON; the numbers are exact decimal strings, as on the command line)::

    {"format": "rdp_verify golden grid", "version": 1,
     "q": ["0.01", "0.1"], "sigma": ["1", "2.5"], "alpha": ["1.5", "2", "32"],
     "chunk_size": 100}

``chunk_size`` is optional (default :data:`DEFAULT_CHUNK_SIZE`). Points run over q, then σ,
then α, as in ``golden-v1.csv``: point i is (q[i // (nσ·nα)], σ[(i // nα) mod nσ], α[i mod nα]),
and chunk k holds the points [k·chunk_size, min((k + 1)·chunk_size, n)).

DIR then holds ``chunk-00000.csv``, ``chunk-00001.csv``, … (the column line, then the rows,
byte for byte as the same points' rows of ``rdp-verify golden``) and ``manifest.json``: the
grid (values in canonical form), the columns, the precision, and per chunk its file, grid
slice [start, stop), row count and SHA-256. The manifest has no timestamps: the same grid gives
the same manifest, whatever the workers, the interruptions or the order chunks finished in.
Every file is written atomically.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Sequence

from .. import __version__
from ..certificates.certificate import dumps
from ..foundations.atomic import write_atomic
from ..foundations.files import read_json
from ..foundations.inputs import SGM, InputError, fraction_text
from ..foundations.parallel import Pool, progress_map
from .golden import COLUMNS, DIGITS, DPS, row
from .grid import Grid

__all__ = ["GRID_FORMAT", "FORMAT", "VERSION", "DEFAULT_CHUNK_SIZE", "MANIFEST", "GridSpec", "read_grid",
           "Plan", "plan", "build", "verify"]

GRID_FORMAT = "rdp_verify golden grid"
FORMAT = "rdp_verify golden dataset"
VERSION = 1
DEFAULT_CHUNK_SIZE = 100
MANIFEST = "manifest.json"
_AXES = ("q", "sigma", "alpha")
_COLUMN_LINE = ",".join(COLUMNS) + "\n"


@dataclass(frozen=True)
class GridSpec:
    """A grid to compute and how to cut it: ``chunk_size`` consecutive points per chunk."""

    grid: Grid
    chunk_size: int

    @cached_property
    def points(self) -> list[SGM]:
        return self.grid.points()

    @cached_property
    def chunks(self) -> list[tuple[int, int]]:
        """[start, stop) of every chunk, in order."""
        n = len(self.points)
        return [(start, min(start + self.chunk_size, n)) for start in range(0, n, self.chunk_size)]

    def chunk_file(self, index: int) -> str:
        width = max(5, len(str(len(self.chunks) - 1)))
        return f"chunk-{index:0{width}d}.csv"

    def to_json(self) -> dict[str, Any]:
        """The grid as the manifest records it: canonical value texts (``0.010`` is ``0.01``)."""
        return {"q": [fraction_text(x) for x in self.grid.q], "sigma": [fraction_text(x) for x in self.grid.sigma],
                "alpha": [fraction_text(x) for x in self.grid.alpha], "chunk_size": self.chunk_size}

    @classmethod
    def from_json(cls, obj: Any, where: str) -> "GridSpec":
        """Check and parse a grid (the grid file's fields, without format and version); errors name ``where``."""
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object")
        unknown = sorted(set(obj) - {*_AXES, "chunk_size"})
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r}")
        axes = {}
        for axis in _AXES:
            values = obj.get(axis)
            if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
                raise InputError(f"{where}: {axis!r} must be a non-empty list of decimal strings, e.g. [\"0.01\"]")
            axes[axis] = values
        size = obj.get("chunk_size", DEFAULT_CHUNK_SIZE)
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise InputError(f"{where}: 'chunk_size' must be a whole number >= 1")
        try:
            grid = Grid.parse(**axes)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        for axis in _AXES:
            if len(set(getattr(grid, axis))) < len(axes[axis]):
                raise InputError(f"{where}: {axis!r} repeats a value")
        return cls(grid, size)


def read_grid(path: str | os.PathLike) -> GridSpec:
    """The grid file at ``path`` (module docstring), checked: a bad file is an :class:`InputError`."""
    obj = read_json(path, "grid file")
    if not isinstance(obj, dict) or obj.get("format") != GRID_FORMAT or obj.get("version") != VERSION:
        raise InputError(f"{path}: not a grid file (needs \"format\": \"{GRID_FORMAT}\", \"version\": {VERSION})")
    return GridSpec.from_json({k: v for k, v in obj.items() if k not in ("format", "version")}, str(path))


def _manifest(spec: GridSpec, entries: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "made_by": f"rdp_verify {__version__}",
        "rows": "golden rows (rdp_verify.reference.golden.row): exact q, sigma, alpha and a proven interval "
                "epsilon_lower <= epsilon_alpha <= epsilon_upper",
        "dps": DPS,
        "digits": DIGITS,
        "columns": list(COLUMNS),
        "grid": spec.to_json(),
        "points": len(spec.points),
        "chunk_count": len(spec.chunks),
        "chunks": [entries[i] for i in sorted(entries)],
    }


def _entry(spec: GridSpec, index: int, text: str) -> dict[str, Any]:
    start, stop = spec.chunks[index]
    return {"index": index, "file": spec.chunk_file(index), "start": start, "stop": stop, "rows": stop - start,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _chunk_text(points: Sequence[SGM]) -> str:
    """A chunk file: the column line and one golden row per point (a picklable task)."""
    return _COLUMN_LINE + "".join(row(p) for p in points)


def _chunk_problem(out: Path, spec: GridSpec, index: int, entry: Any) -> str | None:
    """Why listed chunk ``index`` cannot be trusted, or None: entry as expected, file present, hash as listed,
    the right points in order."""
    name = spec.chunk_file(index)
    expected = _entry(spec, index, "")
    if not isinstance(entry, dict) or set(entry) != set(expected) or not isinstance(entry["sha256"], str) or any(
            entry[k] != expected[k] for k in expected if k != "sha256"):
        return f"{name}: its manifest entry does not describe chunk {index} of this grid"
    try:
        data = (out / name).read_bytes()
    except FileNotFoundError:
        return f"{name}: missing"
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        return f"{name}: SHA-256 differs from the manifest (corrupt or modified)"
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    start, stop = spec.chunks[index]
    inputs = [",".join(p.texts()[a] for a in _AXES) + "," for p in spec.points[start:stop]]
    if len(lines) != 1 + len(inputs) or lines[0] != _COLUMN_LINE or any(
            not line.startswith(want) for line, want in zip(lines[1:], inputs)):
        return f"{name}: its rows are not the points [{start}, {stop}) of the grid"
    return None


@dataclass(frozen=True)
class Plan:
    """What a run on ``out`` will do: keep the verified chunks, compute the rest."""

    spec: GridSpec
    out: Path
    kept: dict[int, dict[str, Any]]
    todo: list[int]
    problems: list[str]  # why each chunk of a resumed dataset is recomputed (empty for a new one)


def plan(spec: GridSpec, out: str | os.PathLike) -> Plan:
    """Read ``out`` (new, empty, or an earlier run of the same grid) and decide what to compute.

    A directory holding another grid's dataset, or files but no manifest, is refused: resuming
    must never mix two grids.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory")
    if not (out / MANIFEST).exists():
        if out.is_dir() and any(out.iterdir()):
            raise InputError(f"--out {out}: not empty and holds no {MANIFEST}: not a dataset to resume")
        return Plan(spec, out, {}, list(range(len(spec.chunks))), [])
    old = _load_manifest(out)
    if old["grid"] != spec.to_json() or (old["dps"], old["digits"]) != (DPS, DIGITS):
        raise InputError(f"--out {out}: holds a dataset of another grid; give a new directory")
    if old["made_by"] != f"rdp_verify {__version__}":
        raise InputError(f"--out {out}: made by {old['made_by']}, this is rdp_verify {__version__}; "
                         "give a new directory")
    listed = _listed(old)
    kept, todo, problems = {}, [], []
    for index in range(len(spec.chunks)):
        problem = None if index not in listed else _chunk_problem(out, spec, index, listed[index])
        if index in listed and problem is None:
            kept[index] = listed[index]
        else:
            todo.append(index)
            if problem is not None:
                problems.append(problem)
    return Plan(spec, out, kept, todo, problems)


def _load_manifest(out: Path) -> dict[str, Any]:
    manifest = read_json(out / MANIFEST, "manifest")
    fields = ("format", "version", "made_by", "dps", "digits", "grid", "chunks")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("version") != VERSION \
            or any(k not in manifest for k in fields) or not isinstance(manifest["chunks"], list):
        raise InputError(f"{out / MANIFEST}: not a {FORMAT} manifest, version {VERSION}")
    return manifest


def _listed(manifest: dict[str, Any]) -> dict[int, Any]:
    """The manifest's chunk entries by index (entries without a whole-number index are ignored)."""
    return {e["index"]: e for e in manifest["chunks"] if isinstance(e, dict) and type(e.get("index")) is int}


def build(p: Plan, workers: int | Pool = 1) -> Iterator[int]:
    """Compute the chunks of ``p.todo`` on ``workers``, yielding each index once its file and the manifest are written.

    Files are written as chunks finish, in any order; the manifest lists the finished chunks in
    index order, so an interrupted run leaves a dataset that :func:`plan` resumes. Stale temporary
    files of a killed run are removed first.
    """
    p.out.mkdir(parents=True, exist_ok=True)
    for stale in [*p.out.glob(".chunk-*.tmp"), *p.out.glob(f".{MANIFEST}.*.tmp")]:
        stale.unlink()
    entries = dict(p.kept)
    write_atomic(p.out / MANIFEST, dumps(_manifest(p.spec, entries)))
    if not p.todo:
        return
    pool = workers if isinstance(workers, Pool) else Pool(workers)
    points = p.spec.points
    slices = [points[slice(*p.spec.chunks[i])] for i in p.todo]
    for k, text in pool.completed(_chunk_text, slices, "golden chunks", batch=1, unit="chunk"):
        index = p.todo[k]
        write_atomic(p.out / p.spec.chunk_file(index), text)
        entries[index] = _entry(p.spec, index, text)
        write_atomic(p.out / MANIFEST, dumps(_manifest(p.spec, entries)))
        yield index


def verify(out: str | os.PathLike, sample: int = 0, workers: int | Pool = 1) -> tuple[GridSpec, list[str]]:
    """(the grid, every problem found) for the dataset in ``out``: no problem means it is complete and intact.

    Every chunk must be listed, present, match its SHA-256 and hold the right points in order.
    With ``sample`` > 0 that many rows, spread evenly over the grid, are also recomputed and
    compared byte for byte (a check that does not trust the manifest's hashes).
    """
    out = Path(out)
    manifest = _load_manifest(out)
    spec = GridSpec.from_json(manifest["grid"], str(out / MANIFEST))
    listed = _listed(manifest)
    missing = [spec.chunk_file(i) for i in range(len(spec.chunks)) if i not in listed]
    problems = [problem for index in sorted(set(listed) & set(range(len(spec.chunks))))
                if (problem := _chunk_problem(out, spec, index, listed[index])) is not None]
    if missing:
        problems.append(f"{len(missing)} of {len(spec.chunks)} chunks not computed yet ({missing[0]}"
                        f"{', …' if len(missing) > 1 else ''}): rerun the command that made the dataset to resume")
    if sample > 0 and not problems:
        n, k = len(spec.points), min(sample, len(spec.points))
        chosen = [i * (n - 1) // max(k - 1, 1) for i in range(k)]  # k distinct points, first and last included
        rows = progress_map(row, [spec.points[i] for i in chosen], workers, "recomputing rows")
        for i, want in zip(chosen, rows):
            index = i // spec.chunk_size
            lines = (out / spec.chunk_file(index)).read_text(encoding="utf-8").splitlines(keepends=True)
            if lines[1 + i - index * spec.chunk_size] != want:
                problems.append(f"{spec.chunk_file(index)}: row of point {i} differs from its recomputation")
    return spec, problems
