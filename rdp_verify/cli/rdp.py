"""``rdp-verify rdp``: proven ε_α of SG(q, σ) (optionally T-fold composed) at many orders, fast.

The table, its proof and its re-verification are :mod:`rdp_verify.audit.rdp_table`; ``--json`` prints
and ``--out`` writes the same sealed table, which ``rdp-verify check`` recomputes.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from ..accounting.options import DPS
from ..accounting.order_lists import ORDER_LISTS, parse_orders
from ..audit.rdp_table import PROOF, check_digits, rdp_table
from ..foundations.inputs import parse_dps, parse_q, parse_sigma, parse_steps
from .common import emit

__all__ = ["register"]


def cmd_rdp(ns: argparse.Namespace) -> int:
    q, sigma = parse_q(ns.q), parse_sigma(ns.sigma)
    orders, name = parse_orders(ns.orders)
    steps = parse_steps(ns.steps)
    check_digits(ns.digits, parse_dps(ns.dps))
    from ..foundations.results import MethodUnavailable  # once the flags are read: a typo answers at once

    try:
        table = rdp_table(q, sigma, orders, name, steps, parse_dps(ns.dps), ns.digits)
    except MethodUnavailable as exc:
        print(f"rdp-verify: rdp failed: {exc}", file=sys.stderr)
        return 1
    if ns.out is not None:
        emit(table, ns.out)
    if ns.json:
        emit(table, None)
        return 0
    inp, rows = table["inputs"], table["rows"]
    lines = [f"proven RDP of SG(q = {inp['q']}, sigma = {inp['sigma']}), "
             f"{steps} step{'s' if steps > 1 else ''}, {len(rows)} orders"
             + (f" ({name})" if name else "") + ":",
             f"{'alpha':<10}  {'epsilon lower':<{ns.digits + 7}}  epsilon upper"]
    for row in rows:
        lines.append(f"{row['alpha']:<10}  {row['epsilon']['lower']:<{ns.digits + 7}}  {row['epsilon']['upper']}")
    lines += textwrap.wrap("proof: " + PROOF, 100)
    print("\n".join(lines))
    return 0


def register(subparsers: Any) -> None:
    """Add the ``rdp`` subcommand."""
    p = subparsers.add_parser(
        "rdp",
        help="proven epsilon_alpha of SGM(q, sigma) at many orders (fast; no per-order certificate)",
        description=(
            "Proven Renyi DP epsilon_alpha of the Sampled Gaussian Mechanism at a list of orders, through\n"
            "the fast path accounting uses: one Arb enclosure of A_alpha per order, epsilon_alpha =\n"
            "log(A_alpha)/(alpha - 1) (Theorem 4 with Corollary 7, A_alpha >= B_alpha). With --steps T\n"
            "the intervals are T*epsilon_alpha (composition). Each interval is rounded outward.\n"
            "For a four-method certificate of one order use rdp-verify certify."
        ),
        epilog=("Example: rdp-verify rdp --q 0.01 --sigma 1.1 --orders dp_accounting_default\n"
                "Exit codes: 0 ok, 1 an order could not be enclosed, 2 bad input."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--q", required=True, help="sampling rate in (0, 1], e.g. 0.01 or 256/60000")
    p.add_argument("--sigma", required=True, help="noise multiplier > 0")
    p.add_argument("--orders", required=True, metavar="LIST|NAME",
                   help="orders > 1 as a comma list, or one of " + ", ".join(ORDER_LISTS))
    p.add_argument("--steps", default="1", help="compose T steps (default 1)")
    p.add_argument("--dps", default=str(DPS), help=f"relative accuracy 10^-dps of each enclosure (default {DPS})")
    p.add_argument("--digits", type=int, default=12, help="significant digits printed, rounded outward (default 12)")
    p.add_argument("--json", action="store_true", help="print the sealed table as JSON (rdp-verify check re-verifies it)")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the sealed table to FILE (atomically)")
    p.set_defaults(func=cmd_rdp)
