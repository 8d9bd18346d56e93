"""``rdp-verify golden``: regenerate the golden vectors (:mod:`rdp_verify.reference.golden`) bit for bit."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..foundations.atomic import write_atomic
from ..reference import golden, golden_dp
from .common import UsageError, add_parallel_arguments, workers
from .golden_dataset import add_dataset_arguments, cmd_dataset

__all__ = ["register"]


def _out_kind(ns: argparse.Namespace) -> str:
    """``--out`` is the CSV file, or with ``--grid`` the dataset's directory."""
    return "directory" if ns.grid is not None else "file"


def cmd_golden(ns: argparse.Namespace) -> int:
    if (ns.grid, ns.verify, ns.sample) != (None, None, None):
        if ns.dp:
            raise UsageError("--dp writes the one golden (epsilon, delta) file: not with --grid, --verify or --sample")
        return cmd_dataset(ns)
    module = golden_dp if ns.dp else golden
    text = module.build(workers(ns))
    if ns.out is None:
        sys.stdout.write(text)
    else:
        write_atomic(ns.out, text)
        print(f"wrote {text.count(chr(10)) - module.header().count(chr(10))} rows to {ns.out}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "golden",
        help=("regenerate the golden vectors bit for bit (certificates/golden-v1.csv; "
              f"--dp: golden-dp-v{golden_dp.FORMAT_VERSION}.csv)"),
        description=(
            "Compute the golden dataset: proven epsilon_alpha intervals of one SGM step on the\n"
            f"documented grid ({golden.GRID.describe()}), as CSV with a comment header.\n"
            "No timestamps or machine-dependent fields: the output does not depend on --jobs or --cluster.\n"
            "With --grid, the rows of any grid go to a directory of chunks with a manifest (docs/cluster.md).\n"
            f"With --dp: the golden (epsilon, delta) vectors ({len(golden_dp.RUNS) + len(golden_dp.SAMPLER_RUNS)} runs x delta "
            f"{', '.join(golden_dp.DELTAS)}), regenerated bit for bit by: {golden_dp.COMMAND}"
        ),
        epilog=(f"Examples: {golden.COMMAND} --jobs 2\n"
                "          rdp-verify golden --grid examples/grid-small.json --out small --cluster local:2\n"
                "          rdp-verify golden --verify small"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_output("--out", kind=_out_kind, metavar="FILE",
                 help="write the CSV to FILE (atomically) instead of stdout; with --grid, the dataset's directory")
    p.add_argument("--dp", action="store_true",
                   help=f"the golden (epsilon, delta) vectors instead (certificates/golden-dp-v{golden_dp.FORMAT_VERSION}"
                        ".csv): proven epsilon(delta) brackets of whole runs; about three minutes")
    add_parallel_arguments(p, "the rows")
    add_dataset_arguments(p)
    p.set_defaults(func=cmd_golden)
