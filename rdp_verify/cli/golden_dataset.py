"""``rdp-verify golden --grid GRID.json --out DIR`` and ``--verify DIR``: partitioned golden datasets.

The options of ``rdp-verify golden`` (:mod:`rdp_verify.cli.golden`) that compute a grid file's
golden rows in chunks with a manifest, resume an interrupted run, and re-check a dataset
(:mod:`rdp_verify.reference.dataset`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import UsageError, add_input, workers

__all__ = ["add_dataset_arguments", "cmd_dataset"]


def add_dataset_arguments(p: Any) -> None:
    """``--grid``, ``--verify`` and ``--sample``."""
    g = p.add_argument_group("partitioned datasets (a grid file's rows in chunks, with a manifest)")
    add_input(g, "--grid", metavar="GRID.json",
                   help="compute the golden rows of the grid in GRID.json into the directory given by --out, "
                        "chunk by chunk, with manifest.json; the same command resumes an interrupted run, "
                        "recomputing only missing or corrupt chunks")
    add_input(g, "--verify", metavar="DIR",
                   help="re-check the dataset in DIR: every chunk present, its SHA-256 as in the manifest and its "
                        "rows the grid's points (exit 1, one line per bad chunk)")
    g.add_argument("--sample", type=int, metavar="N",
                   help="with --verify: also recompute N rows spread over the grid and compare them byte for byte")


def _verify(ns: argparse.Namespace) -> int:
    if ns.grid is not None or ns.out is not None:
        raise UsageError("--verify DIR takes neither --grid nor --out")
    sample = 0 if ns.sample is None else ns.sample
    if sample < 0:
        raise UsageError(f"--sample {sample}: must be at least 0")
    from ..reference import dataset

    spec, problems = dataset.verify(ns.verify, sample, workers(ns))
    if problems:
        for line in problems:
            print(f"{ns.verify}: FAILED {line}")
        return 1
    recomputed = f", {min(sample, len(spec.points))} rows recomputed" if sample else ""
    print(f"{ns.verify}: confirmed ({len(spec.points)} rows in {len(spec.chunks)} chunks: manifest, SHA-256 and "
          f"grid points of every chunk{recomputed})")
    return 0


def cmd_dataset(ns: argparse.Namespace) -> int:
    """Build or resume (``--grid``), or re-check (``--verify``), a partitioned dataset."""
    if ns.verify is not None:
        return _verify(ns)
    if ns.sample is not None:
        raise UsageError("--sample goes with --verify")
    if ns.out is None:
        raise UsageError("--grid needs --out DIR, the dataset's directory")
    from ..reference import dataset

    spec = dataset.read_grid(ns.grid)
    pool = workers(ns)
    plan = dataset.plan(spec, ns.out)
    for line in plan.problems:
        print(f"rdp-verify: {ns.out}: {line}: recomputing it", file=sys.stderr)
    if plan.kept:
        print(f"rdp-verify: resuming {ns.out}: {len(plan.kept)} of {len(spec.chunks)} chunks verified, "
              f"{len(plan.todo)} to compute", file=sys.stderr)
    with pool:  # connect before the directory is touched: an unreachable cluster writes nothing
        for _ in dataset.build(plan, pool):
            pass
    print(f"wrote {ns.out}: {len(spec.points)} rows in {len(spec.chunks)} chunks ({len(plan.todo)} computed, "
          f"{len(plan.kept)} kept), manifest.json", file=sys.stderr)
    return 0
