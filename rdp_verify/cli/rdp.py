"""``rdp-verify rdp``: proven ε_α of SG(q, σ) (optionally T-fold composed) at many orders, fast; with
``--event FILE``, of a whole event tree (:mod:`rdp_verify.privacy_curve.rdp`).

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
from .common import UsageError, emit, show
from .dp import add_event_arguments

__all__ = ["register"]


def _count(n: int) -> str:
    return f"{n} order{'s' if n != 1 else ''}"


def _event_lines(table: dict[str, Any], name: str | None, digits: int) -> list[str]:
    """The human-readable event table: the run, its components and their sources, the rows, the proof."""
    rows, comps = table["rows"], table["components"]
    lines = [f"proven RDP of {table['mechanism']}; {table['inputs']['neighboring_relation']}; {_count(len(rows))}"
             + (f" ({name})" if name else "") + ":"]
    for c in comps:
        lines += textwrap.wrap(f"{c['uses']} x {c['component']}: {c['bound']}; {c['source']}", 100,
                               initial_indent="  ", subsequent_indent="    ")
    if not comps:
        lines.append("  no mechanism: the run releases nothing about the data (epsilon_alpha = 0 exactly)")
    lines.append(f"{'alpha':<10}  {'epsilon lower':<{digits + 7}}  epsilon upper")
    for row in rows:
        lines.append(f"{row['alpha']:<10}  {row['epsilon']['lower']:<{digits + 7}}  {row['epsilon']['upper']}")
    if comps and all(c["bound"] == "upper only" for c in comps):
        lines.append("lower: none (no lower end for an abstract guarantee: 0 is the trivial one)")
    elif any(c["bound"] == "upper only" for c in comps):
        lines.append("lower: the other components' only (no lower end for an abstract guarantee)")
    if any(c["bound"] == "bracket" for c in comps):
        lines.append("bracket: the two ends of a bracketed component come from two arguments (not tight)")
    return lines + textwrap.wrap("proof: " + table["proof"], 100)


def _cmd_event(ns: argparse.Namespace) -> int:
    """``rdp --event FILE``: the sealed table of a whole event tree (format version 3)."""
    given = [f for f in ("q", "sigma", "steps") if getattr(ns, f) is not None]
    if given:
        raise UsageError(f"--event cannot be combined with --{given[0]} (compose in the tree: SelfComposedDpEvent)")
    orders, name = parse_orders(ns.orders)
    dps = parse_dps(ns.dps)
    check_digits(ns.digits, dps)
    from ..audit.rdp_table import NotPrivate, event_rdp_table
    from ..events.read import load_event, render
    from ..foundations.results import MethodUnavailable

    event = load_event(ns.event)
    try:
        table = event_rdp_table(event, ns.neighboring_relation, orders, name, dps, ns.digits)
    except MethodUnavailable as exc:
        print(f"rdp-verify: rdp failed: {exc}", file=sys.stderr)
        return 1
    except NotPrivate as exc:
        relation = ns.neighboring_relation or "ADD_OR_REMOVE_ONE"
        print(f"proven RDP of {render(event)}; {relation}; {_count(len(orders))}" + (f" ({name})" if name else "") + ":")
        print(f"epsilon_alpha = inf at every order: not private ({exc}); no table is written")
        return 3
    show(ns, table, lambda: "\n".join(_event_lines(table, name, ns.digits)))
    comps = table["components"]
    return 3 if comps and all(c["bound"] == "upper only" for c in comps) else 0


def cmd_rdp(ns: argparse.Namespace) -> int:
    if ns.event is not None:
        return _cmd_event(ns)
    if ns.neighboring_relation is not None:
        raise UsageError("--neighboring-relation goes with --event")
    missing = [f for f in ("q", "sigma") if getattr(ns, f) is None]
    if missing:
        raise UsageError(f"give --q and --sigma (the Sampled Gaussian Mechanism), or --event FILE (missing --{missing[0]})")
    ns.steps = "1" if ns.steps is None else ns.steps
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
        help="proven epsilon_alpha of SGM(q, sigma), or of an event tree, at many orders (fast)",
        description=(
            "Proven Renyi DP epsilon_alpha of the Sampled Gaussian Mechanism at a list of orders, through\n"
            "the fast path accounting uses: one Arb enclosure of A_alpha per order, epsilon_alpha =\n"
            "log(A_alpha)/(alpha - 1) (Theorem 4 with Corollary 7, A_alpha >= B_alpha). With --steps T\n"
            "the intervals are T*epsilon_alpha (composition). Each interval is rounded outward.\n"
            "For a four-method certificate of one order use rdp-verify certify.\n"
            "--event FILE reads a whole run as a dp_accounting event tree instead (docs/events.md): DP-SGD\n"
            "steps, Gaussian, Laplace, randomized response, discrete Laplace or Gaussian noise, tree\n"
            "aggregation, zCDP guarantees (upper end only), each component's interval from its named\n"
            "source, summed under composition; NonPrivateDpEvent is epsilon_alpha = inf (exit 3)."
        ),
        epilog=("Examples:\n"
                "  rdp-verify rdp --q 0.01 --sigma 1.1 --orders dp_accounting_default\n"
                "  rdp-verify rdp --event examples/event-dpsgd-laplace.json --orders 2,8,32\n\n"
                "Exit codes: 0 ok, 1 an order could not be enclosed, 2 bad input or a refused event, 3 partial\n"
                "(--event: not private, or only an upper end: a run of zCDP guarantees)."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--q", help="sampling rate in (0, 1], e.g. 0.01 or 256/60000")
    p.add_argument("--sigma", help="noise multiplier > 0")
    p.add_argument("--orders", required=True, metavar="LIST|NAME",
                   help="orders > 1 as a comma list, or one of " + ", ".join(ORDER_LISTS))
    p.add_argument("--steps", help="compose T steps (default 1; not with --event)")
    add_event_arguments(p)
    p.add_argument("--dps", default=str(DPS), help=f"relative accuracy 10^-dps of each enclosure (default {DPS})")
    p.add_argument("--digits", type=int, default=12, help="significant digits printed, rounded outward (default 12)")
    p.add_argument("--json", action="store_true", help="print the sealed table as JSON (rdp-verify check re-verifies it)")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the sealed table to FILE (atomically)")
    p.set_defaults(func=cmd_rdp)
