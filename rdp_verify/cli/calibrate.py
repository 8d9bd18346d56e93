"""``rdp-verify calibrate``: the best σ, steps or q on a decimal grid with a proven ε ≤ target."""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..audit.claims import STEP_CONVENTIONS
from ..calibration.options import ACCOUNTANTS, DEFAULT_TOLERANCE
from ..foundations.inputs import InputError, fraction_text, parse_rational
from .common import PHASE_FLAGS, UsageError, add_run_arguments, emit, run_from_flags

if TYPE_CHECKING:
    from ..calibration.solve import Calibration, Evaluation, Problem

__all__ = ["register", "summary"]

# each unknown, with the flags that would give it
_GIVES = {"sigma": ("sigma",), "steps": ("steps", "epochs"), "q": ("q", "batch_size")}


def _problem(ns: argparse.Namespace) -> Problem:
    missing = [u for u, flags in _GIVES.items() if all(getattr(ns, f) is None for f in flags)]
    if len(missing) != 1:
        raise UsageError("give two of the run's sigma, q (or --batch-size/--dataset-size) and steps (or --epochs); "
                         "the missing one is solved for")
    unknown = missing[0]
    if unknown == "q" and ns.epochs is not None:
        raise UsageError("with --epochs the number of steps depends on q: give --steps to solve for q")
    fields = {f: getattr(ns, f) for f in PHASE_FLAGS if getattr(ns, f) is not None}
    if unknown == "q":
        fields.pop("dataset_size", None)
    fields[unknown] = "1"  # stands in for the unknown while the run is parsed
    (phase, _), = run_from_flags(fields)
    delta = parse_rational(ns.delta, "delta")
    if not 0 < delta < 1:
        raise InputError(f"delta={ns.delta} must lie strictly between 0 and 1")
    target = parse_rational(ns.target_epsilon, "target epsilon")
    if target <= 0:
        raise InputError(f"--target-epsilon {ns.target_epsilon}: must be positive")
    given = {"q": phase.q, "sigma": phase.sigma, "steps": phase.steps}
    given[unknown] = None
    tolerance = parse_rational(ns.tolerance, "tolerance")
    from ..calibration.solve import Problem  # once the flags are read: a typo answers at once

    return Problem(unknown, target, delta, accountant=ns.accountant, digits=ns.digits, tolerance=tolerance, **given)


def _line(p: Problem, ev: Evaluation) -> str:
    up = ev.upper if ev.upper is not None else "inf"
    e = fraction_text(p.target_epsilon)
    relation = {"meets": f"<= {e}", "exceeds": f"> {e}", "undecided": f"straddles {e}: undecided"}[ev.decision]
    quantity = "epsilon" if p.accountant == "pld" else "best RDP bound on epsilon"
    return f"{p.unknown} = {fraction_text(ev.value)}: {quantity} in [{ev.lower}, {up}] {relation}"


def summary(cal: Calibration, cert: dict[str, Any]) -> str:
    """A few human-readable lines for one calibration."""
    p = cal.problem
    given = ", ".join(f"{k} = {fraction_text(Fraction(v))}" for k, v in
                      (("q", p.q), ("sigma", p.sigma), ("steps", p.steps)) if v is not None)
    best = "smallest" if p.unknown == "sigma" else "largest"
    beyond = "next smaller" if p.unknown == "sigma" else "next larger"
    how = "proven privacy curve (pld)" if p.accountant == "pld" else "best proven RDP bound (rdp)"
    lines = [f"run: {given}; target epsilon = {fraction_text(p.target_epsilon)} at delta = {fraction_text(p.delta)}; "
             f"accountant: {how}"]
    if cal.answer is None:
        last = cal.evaluations[-1]
        lines.append(f"no grid {p.unknown} in the supported range meets the target; at the range's end: "
                     + _line(p, last).split(": ", 1)[1])
    else:
        lines.append(f"answer: {_line(p, cal.answer)}")
        if cal.neighbour is None:
            lines.append(f"  {beyond} grid value: outside the supported range")
        else:
            lines.append(f"  {beyond} grid value: {_line(p, cal.neighbour)}")
    lines.append(f"  grid: {p.grid.describe()}; {len(cal.evaluations)} grid values evaluated")
    meaning = {
        "calibrated": f"calibrated: the {best} {p.unknown} on the grid with a proven epsilon <= the target",
        "inconclusive": (f"inconclusive: the answer is proven, but the {beyond} grid value is undecided "
                         "(a smaller --tolerance may decide it)" if cal.answer is not None
                         else "inconclusive: the range's end is undecided"),
        "infeasible": f"infeasible: no {p.unknown} in the supported range reaches the target",
        "inconsistent": "INCONSISTENT: an independent cross-check disagrees with a bracket; nothing is certified",
    }[cert["verdict"]]
    if p.accountant == "rdp" and cal.neighbour is not None and cal.neighbour.decision == "exceeds":
        meaning += " (an RDP bound above the target is not a proof that the run is not private)"
    lines.append(f"verdict: {meaning}")
    return "\n".join(lines)


def cmd_calibrate(ns: argparse.Namespace) -> int:
    problem = _problem(ns)
    from ..calibration.certificate import certificate
    from ..calibration.solve import calibrate

    cal = calibrate(problem)
    cert = certificate(cal)
    if ns.out is not None:
        emit(cert, ns.out)
    if ns.json:
        emit(cert, None)
    else:
        print(summary(cal, cert))
    return 0 if cert["verdict"] in ("calibrated", "inconclusive") else 1


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` subcommand."""
    p = subparsers.add_parser(
        "calibrate",
        help="certified calibration: the smallest sigma (or largest steps or q) with a proven epsilon <= target",
        description=(
            "Give two of sigma, q and steps; the third is searched on a decimal grid (default 3\n"
            "significant digits) for the best value whose epsilon(delta) is PROVEN <= the target:\n"
            "the smallest sigma, or the largest steps or q. The next grid value beyond the answer is\n"
            "proven to exceed the target (then, by monotonicity, every value beyond it does), or is\n"
            "reported undecided. One phase of Poisson-sampled Gaussian steps, add/remove-one."
        ),
        epilog=(
            "Examples:\n"
            "\n"
            "  rdp-verify calibrate --target-epsilon 2.39 --delta 1e-5 --q 256/60000 --steps 14063\n"
            "\n"
            "  rdp-verify calibrate --target-epsilon 8 --delta 1e-5 --batch-size 256 --dataset-size 60000 --sigma 1.1\n"
            "\n"
            "Exit codes: 0 calibrated or inconclusive (the answer is proven either way), 1 infeasible\n"
            "or a cross-check disagrees, 2 bad input."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run: give two of sigma, q and steps (the third is solved for)")
    add_run_arguments(run, "number of SGM steps (whole number >= 1)", STEP_CONVENTIONS)
    p.add_argument("--target-epsilon", dest="target_epsilon", required=True, help="the target epsilon (> 0)")
    p.add_argument("--delta", required=True, help="delta in (0, 1)")
    p.add_argument("--accountant", choices=ACCOUNTANTS, default="pld",
                   help="pld (default): proven privacy curve; rdp: best proven RDP bound over all orders")
    p.add_argument("--digits", type=int, default=3, help="significant digits of the grid (default 3)")
    p.add_argument("--tolerance", default=fraction_text(DEFAULT_TOLERANCE),
                   help="the finest relative bracket width tried near the answer (default 0.0001)")
    p.add_argument("--json", action="store_true", help="print the sealed certificate instead of the summary")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the certificate to FILE (atomically)")
    p.set_defaults(func=cmd_calibrate)
