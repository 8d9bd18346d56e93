"""``rdp-verify golden``: regenerate the golden vectors (:mod:`rdp_verify.reference.golden`) bit for bit."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..foundations.atomic import write_atomic
from ..reference import golden
from .common import jobs

__all__ = ["register"]


def cmd_golden(ns: argparse.Namespace) -> int:
    text = golden.build(jobs(ns.jobs))
    if ns.out is None:
        sys.stdout.write(text)
    else:
        write_atomic(ns.out, text)
        print(f"wrote {len(golden.GRID.points())} rows to {ns.out}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "golden",
        help="regenerate the golden reference vectors (certificates/golden-v1.csv) bit for bit",
        description=(
            "Compute the golden dataset: proven epsilon_alpha intervals of one SGM step on the\n"
            f"documented grid ({golden.GRID.describe()}), as CSV with a comment header.\n"
            "No timestamps or machine-dependent fields: the output does not depend on --jobs."
        ),
        epilog=f"Example: {golden.COMMAND} --jobs 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", metavar="FILE", help="write the CSV to FILE (atomically) instead of stdout")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.set_defaults(func=cmd_golden)
