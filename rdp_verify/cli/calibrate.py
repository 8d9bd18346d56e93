"""``rdp-verify calibrate``: the best σ, steps or q on a decimal grid with a proven ε ≤ target."""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..audit.claims import STEP_CONVENTIONS
from ..calibration.options import ACCOUNTANTS, DEFAULT_TOLERANCE, domain
from ..foundations.inputs import DELTA_MIN, fraction_text, parse_delta, parse_epsilon, parse_tolerance, short_text
from .common import PHASE_FLAGS, UsageError, add_run_arguments, run_from_flags, show
from .dp import add_event_arguments, event_run_of

if TYPE_CHECKING:
    from ..calibration.solve import Calibration, Evaluation, Problem

__all__ = ["register", "summary"]

# each unknown, with the flags that would give it
_GIVES = {"sigma": ("sigma",), "steps": ("steps", "epochs"), "q": ("q", "batch_size")}


def _event_problem(ns: argparse.Namespace, run: Any) -> Problem:
    """calibrate --event: σ of the tree's Gaussian steps, solved for beside its other mechanisms."""
    if ns.accountant != "pld":
        raise UsageError("--event calibrates with the pld accountant (the RDP one is the Sampled Gaussian Mechanism's)")
    from ..calibration.solve import Problem, event_text

    return Problem("sigma", parse_epsilon(ns.target_epsilon, "--target-epsilon", positive=True), parse_delta(ns.delta),
                   accountant="pld", digits=ns.digits, tolerance=parse_tolerance(ns.tolerance),
                   event=event_text(run.event), relation=run.relation.name)


def _problem(ns: argparse.Namespace) -> Problem:
    event = event_run_of(ns)
    if event is not None:
        return _event_problem(ns, event)
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
    target = parse_epsilon(ns.target_epsilon, "--target-epsilon", positive=True)
    delta = parse_delta(ns.delta)
    given = {"q": phase.q, "sigma": phase.sigma, "steps": phase.steps}
    given[unknown] = None
    tolerance = parse_tolerance(ns.tolerance)
    from ..calibration.solve import Problem  # once the flags are read: a typo answers at once

    return Problem(unknown, target, delta, accountant=ns.accountant, digits=ns.digits, tolerance=tolerance, **given,
                   sampler=phase.sampler, neighbours=phase.neighbours, batch_size=phase.batch_size,
                   dataset_size=phase.dataset_size)


def _line(p: Problem, ev: Evaluation) -> str:
    up = ev.upper if ev.upper is not None else "inf"
    e = fraction_text(p.target_epsilon)
    relation = {"meets": f"<= {e}", "exceeds": f"> {e}", "undecided": f"straddles {e}: undecided"}[ev.decision]
    quantity = "epsilon" if p.accountant == "pld" else "best RDP bound on epsilon"
    return f"{p.unknown} = {fraction_text(ev.value)}: {quantity} in [{ev.lower}, {up}] {relation}"


def _range(unknown: str, accountant: str) -> str:
    low, high = domain(unknown, accountant)
    return f"[{short_text(low)}, {short_text(high)}]"


def summary(cal: Calibration, cert: dict[str, Any]) -> str:
    """A few human-readable lines for one calibration."""
    p = cal.problem
    if p.event is not None:
        return _summary_lines(cal, cert, cert["mechanism"])
    given = ", ".join(f"{k} = {fraction_text(Fraction(v))}" for k, v in
                      (("q", p.q), ("sigma", p.sigma), ("steps", p.steps)) if v is not None)
    if (p.sampler, p.neighbours) != ("poisson", "add-remove"):
        batches = "" if p.batch_size is None else f" (batch {p.batch_size} of {p.dataset_size})"
        given = f"{p.sampler}{batches}, {p.neighbours}, {given}"
    return _summary_lines(cal, cert, given)


def _summary_lines(cal: Calibration, cert: dict[str, Any], given: str) -> str:
    p = cal.problem
    best = "smallest" if p.unknown == "sigma" else "largest"
    beyond = "next smaller" if p.unknown == "sigma" else "next larger"
    how = "proven privacy curve (pld)" if p.accountant == "pld" else "best proven RDP bound (rdp)"
    searched = _range(p.unknown, p.accountant)
    lines = [f"run: {given}; target epsilon = {fraction_text(p.target_epsilon)} at delta = {fraction_text(p.delta)}; "
             f"accountant: {how}",
             f"answer: {_line(p, cal.answer)}",
             f"  {beyond} grid value: " + (f"outside the supported range {searched}" if cal.neighbour is None
                                           else _line(p, cal.neighbour)),
             f"  grid: {p.grid.describe()} in {searched}; {len(cal.evaluations)} grid "
             f"value{'s' if len(cal.evaluations) > 1 else ''} evaluated"]
    calibrated = (f"calibrated: the {best} {p.unknown} on the grid with a proven epsilon <= the target"
                  if cal.neighbour is not None else
                  f"calibrated: the end of the supported range {searched} meets the target, so every {p.unknown} "
                  f"in it does; the {best} is the answer")
    meaning = {
        "calibrated": calibrated,
        "inconclusive": (f"inconclusive: the answer is proven, but the {beyond} grid value is undecided "
                         "(a smaller --tolerance may decide it)"),
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
    show(ns, cert, lambda: summary(cal, cert))
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
            "  rdp-verify calibrate --target-epsilon 2 --delta 1e-5 --event examples/event-dpsgd-laplace.json\n"
            "  (the sigma of the tree's Gaussian steps, beside its other mechanisms; its value in the file is not used)\n"
            "\n"
            f"Supported ranges searched: sigma in {_range('sigma', 'pld')} (pld) or {_range('sigma', 'rdp')} (rdp), "
            f"steps in {_range('steps', 'pld')},\n"
            f"q in {_range('q', 'pld')}. If the range's best end (smallest sigma, largest steps or q) meets the target,\n"
            "it is the answer at once (verdict calibrated, no neighbour: the end of the supported range).\n"
            "\n"
            "Exit codes: 0 calibrated or inconclusive (the answer is proven either way; inconclusive:\n"
            "the neighbour is undecided), 1 a cross-check disagrees (inconsistent), 2 bad input or no\n"
            "answer: no value in the supported range is proven to reach the target (one line on stderr\n"
            "with the bracket at the range's end, e.g. 'no sigma <= 1e6 reaches epsilon <= ...'); nothing\n"
            "is written."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run: give two of sigma, q and steps (the third is solved for)")
    add_run_arguments(run, "number of SGM steps (whole number >= 1)", STEP_CONVENTIONS)
    add_event_arguments(run)
    p.add_argument("--target-epsilon", dest="target_epsilon", required=True, help="the target epsilon (> 0)")
    p.add_argument("--delta", required=True, help=f"delta in [{short_text(DELTA_MIN)}, 1)")
    p.add_argument("--accountant", choices=ACCOUNTANTS, default="pld",
                   help="pld (default): proven privacy curve; rdp: best proven RDP bound over all orders")
    p.add_argument("--digits", type=int, default=3, help="significant digits of the grid (default 3)")
    p.add_argument("--tolerance", default=fraction_text(DEFAULT_TOLERANCE),
                   help="the finest relative bracket width tried near the answer (default 0.0001)")
    p.add_argument("--json", action="store_true", help="print the sealed certificate instead of the summary")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the certificate to FILE (atomically)")
    p.set_defaults(func=cmd_calibrate)
