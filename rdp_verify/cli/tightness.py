"""The ``figure1`` and ``table1`` subcommands: how tight Theorem 11's closed form is.

``rdp-verify figure1 --out DIR [--json]`` recomputes Figure 1 of
Mironov–Talwar–Zhang 2019 (:mod:`rdp_verify.tightness.figure1`) and writes
DIR/figure1.png and DIR/figure1.svg (:mod:`rdp_verify.tightness.plots`), plus
DIR/figure1.json with ``--json``; ``--json`` without ``--out`` prints the
JSON and draws nothing. ``rdp-verify table1 [--json]`` prints the Table 1
comparison (:mod:`rdp_verify.tightness.table1`).

Exit codes: 0 ok; 1 a claim failed: a computed result contradicts Theorem 11
inside its conditions (a bug here or in the paper), or a listed counterexample
is not re-proven; 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..foundations.inputs import parse_alphas, parse_dps, parse_q, parse_sigma
from ..foundations.parallel import progress_map
from .common import UsageError, add_parallel_arguments, emit, workers

__all__ = ["register"]


def cmd_figure1(ns: argparse.Namespace) -> int:
    if ns.out is None and not ns.json:
        raise UsageError("nothing to do: give --out DIR (PNG and SVG) and/or --json")
    dps, pool = parse_dps(ns.dps), workers(ns)
    from ..tightness.figure1 import figure1_data

    with pool:  # one pool (one cluster) for both panels
        data = figure1_data(mapper=lambda fn, items: progress_map(fn, items, pool, "figure 1"), dps=dps)
    if ns.out is None:
        emit(data, None)
    else:
        from ..tightness.plots import save  # matplotlib only when drawing

        written = save(data, ns.out)
        if ns.json:
            path = Path(ns.out) / "figure1.json"
            emit(data, str(path))
            written.append(path)
        print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    bad = [p for p in data["left"] if not p["consistent_with_theorem11"]]
    for p in bad:
        print(f"rdp-verify: Theorem 11 contradicted at sigma={p['sigma']}, q={p['q']}", file=sys.stderr)
    return 1 if bad else 0


def cmd_table1(ns: argparse.Namespace) -> int:
    dps = parse_dps(ns.dps)
    given = {
        "q": [parse_q(x) for x in ns.q.split(",")] if ns.q else None,
        "sigma": [parse_sigma(x) for x in ns.sigma.split(",")] if ns.sigma else None,
        "alpha": parse_alphas(ns.alpha) if ns.alpha else None,
    }
    from ..tightness.table1 import DEFAULT_GRID, table1_report, table1_text

    grid = {axis: DEFAULT_GRID[axis] if values is None else values for axis, values in given.items()}
    report = table1_report(grid, dps)
    if ns.json or ns.out:
        emit(report, ns.out)
    else:
        sys.stdout.write(table1_text(report))
    failed = report["theorem11_refuted_inside_conditions"] or [c for c in report["counterexamples"] if not c["certified"]]
    return 1 if failed else 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "figure1",
        help="recompute Figure 1 (Theorem 11's conditions vs the exact curve) with certified brackets",
        description=(
            "Figure 1 of Mironov-Talwar-Zhang 2019, recomputed. Left: for sigma = 4, 10 and q from 1e-5\n"
            "to 0.2, the largest alpha allowed by condition (4), by (5), by both, and the exact largest\n"
            "alpha with epsilon_alpha <= 2 q^2 alpha / sigma^2, each as a certified bracket. Right: the\n"
            "proven epsilon_alpha against alpha with Theorem 11's bound (solid where its conditions hold).\n"
            "Takes about 5 s on one core."
        ),
        epilog="Example: rdp-verify figure1 --out figures --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_output("--out", kind="plot-directory", metavar="DIR",
                 help="write DIR/figure1.png and DIR/figure1.svg (DIR is created)")
    p.add_argument("--json", action="store_true",
                   help="also write DIR/figure1.json with every plotted number; without --out, print it")
    p.add_argument("--dps", default="20", help="digits of the proven epsilon enclosures (default 20)")
    add_parallel_arguments(p, "the figure's points")
    p.set_defaults(func=cmd_figure1)

    p = sub.add_parser(
        "table1",
        help="compare the exact epsilon with the bounds of Table 1 (Abadi et al., Bun et al., Theorem 11)",
        description=(
            "On a grid of (q, sigma, alpha): the proven epsilon_alpha of the Sampled Gaussian Mechanism\n"
            "(Poisson sampling, add/remove-one neighbours) against each bound of Table 1 of\n"
            "Mironov-Talwar-Zhang 2019, with every stated condition decided exactly, the ratio\n"
            "bound/epsilon as a proven interval, and certified counterexamples where a bound fails\n"
            "once a condition is dropped."
        ),
        epilog="Example: rdp-verify table1 --q 0.01 --sigma 4 --alpha 8,32",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--q", help="sampling rates, comma-separated (default 0.001,0.01,0.1)")
    p.add_argument("--sigma", help="noise multipliers, comma-separated (default 1,4,10)")
    p.add_argument("--alpha", help="orders, comma-separated (default 2,8,32,128)")
    p.add_argument("--dps", default="20", help="digits of the proven epsilon enclosures (default 20)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_output("--out", kind="file", metavar="FILE", help="write the JSON report to FILE (atomically)")
    p.set_defaults(func=cmd_table1)
