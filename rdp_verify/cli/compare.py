"""``rdp-verify compare``: float64 RDP accountants against certified intervals (:mod:`rdp_verify.reference.compare`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

from ..foundations.figures import check_plot_path
from ..foundations.inputs import InputError, parse_alphas, parse_q, parse_sigma
from ..reference.compare import DEFAULT_GRID, Grid, compare, plot, summary
from ..reference.peers import PEERS, PeerUnavailable, load
from .common import UsageError, emit, jobs, split_list

__all__ = ["register"]

def _names(text: str) -> list[str]:
    names = list(PEERS) if text.strip() == "all" else [n.strip() for n in text.split(",")]
    for n in names:
        if n not in PEERS:
            raise InputError(f"--against {n!r}: unknown peer (choose from {', '.join(PEERS)}, or all)")
    return list(dict.fromkeys(names))


def _available(names: Sequence[str]) -> list[str]:
    ok = []
    for name in names:
        try:
            load(name)
            ok.append(name)
        except PeerUnavailable as exc:
            print(f"rdp-verify: skipping {name}: {exc}", file=sys.stderr)
    return ok


def _check_output(option: str, text: str) -> None:
    """Refuse before the (long) run what would fail after it."""
    if option == "--plot":
        check_plot_path(option, text)
    elif text != "-" and not Path(text).parent.is_dir():
        raise InputError(f"{option} {text}: directory {Path(text).parent} does not exist")


def cmd_compare(ns: argparse.Namespace) -> int:
    names = _names(ns.against)
    default = DEFAULT_GRID
    grid = Grid(
        tuple(map(parse_q, split_list(ns.q, "q"))) if ns.q else default.q,
        tuple(map(parse_sigma, split_list(ns.sigma, "sigma"))) if ns.sigma else default.sigma,
        tuple(parse_alphas(ns.alpha)) if ns.alpha else default.alpha,
    )
    jobs(ns.jobs)
    for option, value in (("--json", ns.json), ("--plot", ns.plot)):
        if value is not None:
            _check_output(option, value)
    names = _available(names)
    if not names:
        raise UsageError("no requested peer is installed (see the messages above)")
    points = compare(names, grid, ns.jobs)
    table = summary(points, grid)
    if ns.json is not None:
        emit([p.to_json() for p in points], None if ns.json == "-" else ns.json)
    print(table, end="", file=sys.stderr if ns.json == "-" else sys.stdout)
    if ns.plot:
        plot(points, ns.plot)
    return 1 if any(p.classification in ("unsafe", "non-finite") for p in points) else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="test float64 RDP accountants (dp_accounting, opacus, ...) against certified intervals",
        description=(
            "Evaluate peer accountants' one-step RDP of the Poisson-subsampled Gaussian mechanism\n"
            "on a grid and classify each value against our proven interval [lo, hi] for epsilon_alpha:\n"
            "\n"
            "  exact         within [lo - tau, hi + tau]\n"
            "  conservative  above hi + tau (over-reports: safe but loose)\n"
            "  unsafe        below lo - tau (under-reports: a privacy claim built on it is false)\n"
            "  non-finite    NaN, inf, or the peer raised\n"
            "\n"
            "tau = 1e-9*|epsilon| + 1e-13*(alpha + 1)/(alpha - 1) allows for double rounding (1e-13 per\n"
            "term in log A_alpha). Peers see q, sigma, alpha rounded to doubles. Axes not given use\n"
            "the default grid (docs/library-authors.md)."
        ),
        epilog=("Exit codes: 0 every point exact or conservative, 1 some point unsafe or non-finite, 2 bad input.\n"
                "Example: rdp-verify compare --against dp_accounting,opacus --jobs 2 --plot compare.png"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--against", required=True, metavar="NAME[,NAME...]",
                   help=f"peers: {', '.join(PEERS)}, or all; a missing one is skipped with a message")
    p.add_argument("--q", help="sampling rates, comma list (default: 1e-4,1e-3,0.01,0.1,0.5)")
    p.add_argument("--sigma", help="noise multipliers, comma list (default: 0.5,1,2.5,5,10,25,50,100)")
    p.add_argument("--alpha", help="orders, comma list (default: 1.01,1.1,...,1.5, 2 to 100 step 0.5, 128 to 2048)")
    p.add_argument("--json", metavar="FILE", help="write the points as a JSON list to FILE ('-' for stdout)")
    p.add_argument("--plot", metavar="FILE", help="plot the relative error over the grid to FILE (.png, .svg or .pdf)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.set_defaults(func=cmd_compare)
