"""``rdp-verify rdp``: proven ε_α of SG(q, σ) (optionally T-fold composed) at many orders, fast.

The fast path is :func:`rdp_verify.methods.rigorous.epsilon_many`: one Arb enclosure of A_α per
order, sharing the per-(q, σ) tables, with ε_α = log A_α/(α − 1) by Corollary 7 of
Mironov–Talwar–Zhang 2019 (A_α ≥ B_α). No four-method certificate is built per order (that is
``certify``). T steps are (α, T·ε_α)-RDP (Mironov 2017, Proposition 1).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from ..accounting.options import DPS
from ..accounting.order_lists import ORDER_LISTS, parse_orders
from ..foundations.decimals import interval_json
from ..foundations.inputs import InputError, fraction_text, parse_dps, parse_q, parse_sigma, parse_steps
from .common import emit

__all__ = ["register", "FORMAT"]

FORMAT = "rdp_verify rdp table"
PROOF = ("epsilon_alpha = log(A_alpha)/(alpha - 1) (Mironov-Talwar-Zhang 2019, Theorem 4 with Corollary 7: "
         "A_alpha >= B_alpha); A_alpha enclosed in Arb ball arithmetic (quadrature, tails and rounding "
         "inside the ball); T steps compose to T*epsilon_alpha (Mironov 2017, Proposition 1); "
         "each interval is rounded outward")


def cmd_rdp(ns: argparse.Namespace) -> int:
    q, sigma = parse_q(ns.q), parse_sigma(ns.sigma)
    orders, name = parse_orders(ns.orders)
    steps = parse_steps(ns.steps)
    dps = parse_dps(ns.dps)
    if not 1 <= ns.digits <= dps:
        raise InputError(f"--digits {ns.digits}: must lie between 1 and --dps ({dps})")
    from ..foundations.results import MethodUnavailable  # once the flags are read: a typo answers at once
    from ..methods.rigorous import epsilon_many

    try:
        eps = epsilon_many(q, sigma, list(orders), dps)
    except MethodUnavailable as exc:
        print(f"rdp-verify: rdp failed: {exc}", file=sys.stderr)
        return 1
    rows = [(a, e.scaled(steps)) for a, e in zip(orders, eps)]
    payload = {
        "format": FORMAT,
        "format_version": 1,
        "note": "proven intervals, not a sealed certificate (rdp-verify certify writes those, per order)",
        "inputs": {"q": fraction_text(q), "sigma": fraction_text(sigma), "steps": int(steps),
                   "orders": name or "given", "dps": dps},
        "proof": PROOF,
        "rows": [{"alpha": fraction_text(a), "epsilon": interval_json(e, ns.digits)} for a, e in rows],
    }
    if ns.out is not None:
        emit(payload, ns.out)
    if ns.json:
        emit(payload, None)
        return 0
    lines = [f"proven RDP of SG(q = {fraction_text(q)}, sigma = {fraction_text(sigma)}), "
             f"{int(steps)} step{'s' if steps > 1 else ''}, {len(rows)} orders"
             + (f" ({name})" if name else "") + ":",
             f"{'alpha':<10}  {'epsilon lower':<{ns.digits + 7}}  epsilon upper"]
    for a, e in rows:
        iv = interval_json(e, ns.digits)
        lines.append(f"{fraction_text(a):<10}  {iv['lower']:<{ns.digits + 7}}  {iv['upper']}")
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
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the JSON to FILE (atomically)")
    p.set_defaults(func=cmd_rdp)
