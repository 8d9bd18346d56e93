"""``rdp-verify dp``: a proven (ε, δ) bracket of a DP-SGD run (:mod:`rdp_verify.curves`)."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

from ..audit.claims import STEP_CONVENTIONS, load_phases
from ..curves.accountant import DEFAULT_TOLERANCE, bracket, check_run
from ..curves.certificate import certificate_of
from ..foundations.figures import check_plot_path
from ..foundations.inputs import DELTA_MIN, MAX_STEPS, InputError, Phase, fraction_text, parse_rational
from ..foundations.parallel import progress_map
from .common import (
    PHASE_FLAGS,
    UsageError,
    add_parallel_arguments,
    add_run_arguments,
    check_out,
    emit,
    flag,
    run_from_flags,
    workers,
)

__all__ = ["register"]

def _phases(ns: argparse.Namespace) -> list[tuple[Phase, str]]:
    given = {f: getattr(ns, f) for f in PHASE_FLAGS if getattr(ns, f) is not None}
    if ns.phases is not None:
        if given:
            raise UsageError(f"--phases cannot be combined with {flag(next(iter(given)))}")
        return load_phases(ns.phases)
    if not given:
        raise UsageError("give the run (--q or --batch-size/--dataset-size, --sigma, --steps or --epochs) or --phases FILE")
    lists = {f: [v.strip() for v in text.split(",")] for f, text in given.items()}
    n = max(len(v) for v in lists.values())
    for f, values in lists.items():
        if len(values) not in (1, n):
            raise InputError(f"{flag(f)} has {len(values)} values where the other lists have {n}")
    fields = [{f: values[i if len(values) > 1 else 0] for f, values in lists.items()} for i in range(n)]
    return run_from_flags({"phases": fields} if n > 1 else fields[0])


def _target(ns: argparse.Namespace) -> tuple[Fraction | None, Fraction | None]:
    if (ns.delta is None) == (ns.epsilon is None):
        raise UsageError("give exactly one of --delta (for the epsilon bracket) and --epsilon (for the delta bracket)")
    if ns.delta is not None:
        delta = parse_rational(ns.delta, "delta")
        if not 0 < delta < 1:
            raise InputError(f"delta={ns.delta} must lie strictly between 0 and 1")
        if delta < DELTA_MIN:
            raise InputError(f"delta={ns.delta} is below the supported minimum 1e-40")
        return delta, None
    epsilon = parse_rational(ns.epsilon, "epsilon")
    if epsilon < 0:
        raise InputError(f"epsilon={ns.epsilon} must be non-negative")
    return None, epsilon


def _run_text(phases: list[tuple[Phase, str]]) -> str:
    return "; ".join(f"q = {fraction_text(p.q)}, sigma = {fraction_text(p.sigma)}, steps = {p.steps}"
                     + ("" if how == "given" else f" [{how}]") for p, how in phases)


def summary(cert: dict[str, Any], phases: list[tuple[Phase, str]]) -> str:
    """A few human-readable lines for one privacy-curve certificate."""
    inp = cert["inputs"]
    quantity, given = ("epsilon", f"delta = {inp['delta']}") if "delta" in inp else ("delta", f"epsilon = {inp['epsilon']}")
    b = cert[quantity]
    upper = b["upper"] if b["upper"] is not None else "inf (no finite bound)"
    decide = max(cert["directions"], key=lambda d: Fraction(cert["directions"][d]["lower"]))
    other = [d for d in cert["directions"] if d != decide][0]
    o = cert["directions"][other]
    o_text = (f"at most {o['upper']} (below the deciding lower end: never the maximum)"
              if Fraction(o["lower"]) == 0 and o["upper"] is not None else f"[{o['lower']}, {o['upper']}]")
    cc = cert["cross_check"]
    lines = [
        f"run: {_run_text(phases)}; {given}",
        f"{quantity} in [{b['lower']}, {upper}] (proven; relative width {b['relative_width']}, "
        f"grid step {cert['settings']['grid_step']})",
        f"  {decide} direction decides; {other}: {o_text}",
        f"  cross-check: delta({cc['epsilon']}) estimated {cc['estimate']['value']} +- {cc['estimate']['error_bound']} "
        f"({cc['method']}) against the proven [{cc['proven_delta']['lower']}, {cc['proven_delta']['upper']}]: "
        + ("consistent" if cc["consistent"] else "INCONSISTENT")
        + ("" if cc["informative"] else " (uninformative here: the estimate's error exceeds a tenth of delta)"),
        f"verdict: {cert['verdict']}",
    ]
    if not b["tolerance_met"]:
        lines.insert(2, f"  note: the tolerance {inp['tolerance']} was not met within the supported grid sizes")
    return "\n".join(lines)


def cmd_dp(ns: argparse.Namespace) -> int:
    phases = _phases(ns)
    run = check_run([p for p, _ in phases])
    delta, epsilon = _target(ns)
    tolerance = parse_rational(ns.tolerance, "tolerance")
    if not 0 < tolerance < 1:
        raise InputError(f"tolerance={ns.tolerance} must lie strictly between 0 and 1")
    if ns.plot is not None:
        check_plot_path("--plot", ns.plot)
    check_out(ns.out)
    with workers(ns) as pool:  # one pool (one cluster) for every refinement of the grid
        result = bracket(run, delta=delta, epsilon=epsilon, tolerance=tolerance,
                         mapper=lambda fn, items: progress_map(fn, items, pool, "discretising steps"))
    cert = certificate_of(result, delta=delta, epsilon=epsilon, tolerance=tolerance)
    if ns.out is not None:
        emit(cert, ns.out)
    if ns.json:
        emit(cert, None)
    else:
        print(summary(cert, phases))
    if ns.plot is not None:
        from ..curves.plot import draw

        point = None if delta is None else (delta, result.lower, result.upper if result.upper is not None else result.lower)
        draw(result.curves, ns.plot, point)
        print(f"wrote {ns.plot}", file=sys.stderr)
    return 0 if cert["verdict"] == "certified" else 1


def register(subparsers: Any) -> None:
    """Add the ``dp`` subcommand."""
    p = subparsers.add_parser(
        "dp",
        help="proven (epsilon, delta) of a DP-SGD run: its privacy curve bracketed from both sides",
        description=(
            "The privacy curve delta(epsilon) of T adaptive steps of the Sampled Gaussian Mechanism\n"
            "(Poisson sampling, add/remove-one neighbours, both directions), bracketed by two proven\n"
            "bounds: a discrete pair that dominates each step (connect-the-dots) and one each step\n"
            "dominates (lowered chords), composed in exact integer arithmetic with directed rounding.\n"
            "With --delta it prints the epsilon bracket, with --epsilon the delta bracket, and an\n"
            "independent estimate that must agree (else exit 1). Numbers are exact: 1e-5 is 1/100000."
        ),
        epilog=(
            "Examples:\n"
            "\n"
            "  rdp-verify dp --q 256/60000 --sigma 1.1 --steps 14063 --delta 1e-5\n"
            "\n"
            "  rdp-verify dp --q 0.01,0.02 --sigma 1 --steps 1000,500 --epsilon 2 --json\n"
            "\n"
            f"Phases file: a JSON list of objects with the fields q (or batch_size, dataset_size), sigma,\n"
            f"steps (or epochs, step_convention). At most {MAX_STEPS} steps in all; delta >= 1e-40.\n"
            "Exit codes: 0 certified, 1 the two computations disagree, 2 bad input."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run (comma lists make phases; a single value is used in every phase)")
    add_run_arguments(run, f"number of SGM steps (whole number >= 1; at most {MAX_STEPS} in all)", STEP_CONVENTIONS)
    run.add_argument("--phases", metavar="FILE", help="the run as a JSON list of phases instead of the flags above")
    target = p.add_argument_group("what to bracket (exactly one)")
    target.add_argument("--delta", help="delta in (0, 1): print the proven epsilon bracket")
    target.add_argument("--epsilon", help="epsilon >= 0: print the proven delta bracket")
    p.add_argument("--tolerance", default=fraction_text(DEFAULT_TOLERANCE),
                   help="target relative width of the bracket (default 0.001); tighter costs a finer grid")
    p.add_argument("--json", action="store_true", help="print the sealed certificate instead of the summary")
    p.add_argument("--out", metavar="FILE", help="also write the certificate to FILE (atomically)")
    p.add_argument("--plot", metavar="FILE", help="draw the curve's proven band and the RDP curve (.png, .svg, .pdf)")
    add_parallel_arguments(p, "the phases' distinct steps")
    p.set_defaults(func=cmd_dp)

