"""``rdp-verify dp``: a proven (ε, δ) bracket of a DP-SGD run (:mod:`rdp_verify.curves`)."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

from ..audit.claims import STEP_CONVENTIONS, load_phases
from ..curves.options import DEFAULT_TOLERANCE, DELTA_MIN, MAX_STEPS
from ..foundations.decimals import decimal_text
from ..foundations.inputs import (
    InputError,
    fraction_text,
    parse_delta,
    parse_epsilon,
    parse_tolerance,
    short_text,
)
from ..foundations.parallel import progress_bar, progress_map, redraw, ticking
from ..foundations.run import Phase
from .common import (
    PHASE_FLAGS,
    UsageError,
    add_certificate_outputs,
    add_input,
    add_parallel_arguments,
    add_run_arguments,
    flag,
    run_from_flags,
    show,
    workers,
)

__all__ = ["Refining", "add_event_arguments", "event_run_of", "register", "run_phases", "run_text"]


class Refining:
    """A bracket's progress on a terminal (:func:`~rdp_verify.foundations.parallel.progress_bar`, stderr only): the
    grid being tried, its step and stage (or the leaf being discretised), the tightest relative width so far
    against the tolerance, and a clock that keeps moving: ``dp [01:02] grid 5 (step 1e-5): composing; width
    3.57e-6, tolerance 1e-7``, with ``leaf 2/3 (Laplace)`` for the stage while the second of three leaves is
    discretised. Use it as a context manager; the object itself is the ``progress`` callback of
    :func:`rdp_verify.curves.accountant.bracket`."""

    STAGES = {"grid": "discretising", "composing": "composing", "width": "done"}

    def __init__(self, tolerance: Fraction, desc: str = "dp"):
        self.tolerance, self.desc = tolerance, desc
        self.best: float | None = None
        self.where: str | None = None
        braces = desc.replace("{", "{{").replace("}", "}}")
        self.bar = progress_bar(desc="bracketing", bar_format=f"{braces} [{{elapsed}}] {{desc}}")  # clock, then text
        self._ticking = ticking(self.bar)

    def __enter__(self) -> "Refining":
        self._ticking.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._ticking.__exit__(*exc)
        finally:
            self.bar.close()

    def __call__(self, event: dict[str, Any]) -> None:
        stage = event["stage"]
        if stage == "width" and event["relative_width"] is not None:
            self.best = min(event["relative_width"], self.best if self.best is not None else float("inf"))
        if stage == "cross-check":
            self.text("cross-check")
            return
        if "grid" in event:
            self.where = f"grid {event['grid']} (step {short_text(event['grid_step'])})"
        doing = (f"leaf {event['leaf']}/{event['leaves']} ({event['mechanism']})" if stage == "leaf" else
                 self.STAGES.get(stage, stage))
        best = "" if self.best is None else f"; width {_width(self.best)}"
        self.text(f"{self.where}: {doing}{best}, tolerance {short_text(self.tolerance)}" if self.where else doing)

    def text(self, what: str) -> None:
        if not self.bar.disable:
            self.bar.set_description_str(what, refresh=False)
            redraw(self.bar)  # once its delay has passed; the ticking thread redraws it meanwhile


def _width(w: float) -> str:
    """A relative width in three digits, short: 0.0158, 5.86e-5 (not 5.86e-05)."""
    return (f"{w:.3g}" if w >= 0.01 or w == 0 or w == float("inf") else f"{w:.2e}").replace("e-0", "e-")


def run_phases(ns: argparse.Namespace) -> list[tuple[Phase, str]]:
    given = {f: getattr(ns, f) for f in PHASE_FLAGS if getattr(ns, f) is not None}
    if getattr(ns, "phases", None) is not None:  # audit --canaries has no --phases
        if given:
            raise UsageError(f"--phases cannot be combined with {flag(next(iter(given)))}")
        return load_phases(ns.phases)
    if not given:
        raise UsageError("give the run (--q or --batch-size/--dataset-size, --sigma, --steps or --epochs)"
                         + (" or --phases FILE" if hasattr(ns, "phases") else ""))
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
        return parse_delta(ns.delta), None
    return None, parse_epsilon(ns.epsilon)


def _sampling_text(p: Phase) -> str:
    if p.default:
        return f"q = {fraction_text(p.q)}"
    batches = f"batch {p.batch_size} of {p.dataset_size}" if p.batch_size is not None else f"q = {fraction_text(p.q)}"
    return f"{p.sampler} ({batches}), {p.neighbours}"


def run_text(phases: list[tuple[Phase, str]]) -> str:
    """The phases as given, each stretch of n > 1 identical consecutive ones written once as ``n x (...)``."""
    stretches: list[list[Any]] = []
    for phase in phases:
        if stretches and stretches[-1][0] == phase:
            stretches[-1][1] += 1
        else:
            stretches.append([phase, 1])
    texts = []
    for (p, how), n in stretches:
        text = f"{_sampling_text(p)}, sigma = {fraction_text(p.sigma)}, steps = {p.steps}" + \
            ("" if how == "given" else f" [{how}]")
        texts.append(text if n == 1 else f"{n} x ({text})")
    return "; ".join(texts)


HOW = {"discrete pairs": "grid step {grid_step}", "closed form": "closed form of the Gaussian mechanism",
       "per-epoch bounds": ("upper: no amplification, the Gaussian mechanism once per epoch; lower: an explicit "
                            "pair of datasets, the composed law of each epoch's largest step")}


def _upper_key(interval: dict[str, Any]) -> Fraction:
    return Fraction(10**9) if interval["upper"] is None else Fraction(interval["upper"])


def summary(cert: dict[str, Any], phases: list[tuple[Phase, str]]) -> str:
    """A few human-readable lines for one privacy-curve certificate."""
    inp = cert["inputs"]
    quantity, given = ("epsilon", f"delta = {inp['delta']}") if "delta" in inp else ("delta", f"epsilon = {inp['epsilon']}")
    b = cert[quantity]
    upper = b["upper"] if b["upper"] is not None else "inf (no finite bound)"
    how = HOW[cert["method"]].format(**cert["settings"])
    if "upper_random_allocation_order" in cert["settings"]:  # random allocation decided the upper end
        add_order = cert["settings"].get("upper_random_allocation_add_order")
        add = ("direction's shifted Gaussian" if add_order is None
               else f"direction's Renyi DP at order {add_order} of the exact pair (Laplace transform)")
        how = how.replace("upper: no amplification, the Gaussian mechanism once per epoch",
                          "upper: random allocation (Feldman & Shenfeld 2025: the larger of the remove direction's "
                          f"Renyi DP at order {cert['settings']['upper_random_allocation_order']} and the add "
                          f"{add}), below no amplification")
    width = "" if b["relative_width"] is None else f"relative width {b['relative_width']}, "
    lines = [f"run: {run_text(phases)}; {given}",
             f"{quantity} in [{b['lower']}, {upper}] (proven; {width}{how})"]
    lines.append(f"  tolerance {inp['tolerance']}: {tolerance_text(cert)}")
    directions = cert["directions"]
    symmetric = all(p.get("sampler") == "poisson" for p in inp["phases"])  # Poisson replace-one: one symmetric pair
    if cert["method"] == "discrete pairs" and symmetric:
        lines.append("  the replace-one pair is symmetric: both orders have the same curve (each is bracketed)")
    elif cert["method"] == "discrete pairs":
        # the deciding direction: the larger proven lower end, or, when both are 0, the larger upper end
        decide = max(directions, key=lambda d: (Fraction(directions[d]["lower"]), _upper_key(directions[d])))
        other = [d for d in directions if d != decide][0]
        o = directions[other]
        o_text = (f"at most {o['upper']} (below the deciding lower end: never the maximum)"
                  if Fraction(o["lower"]) == 0 and o["upper"] is not None
                  and Fraction(o["upper"]) <= Fraction(directions[decide]["lower"])
                  else f"[{o['lower']}, {o['upper'] if o['upper'] is not None else 'inf'}]")
        lines.append(f"  {decide} direction decides; {other}: {o_text}")
    cc = cc_line(cert["cross_check"], "delta" if quantity == "epsilon" else "the proven lower end of delta")
    lines.append(f"  cross-check: {cc}")
    lines.append(f"verdict: {cert['verdict']} ({cert['verdict_reason']})")
    return "\n".join(lines)


def tolerance_text(cert: dict[str, Any]) -> str:
    """Whether the bracket meets the requested relative width, and why not when it does not (the verdict
    ``certified`` says only that both ends are proven and finite)."""
    b = cert["epsilon" if "delta" in cert["inputs"] else "delta"]
    if b["tolerance_met"]:
        return "met"
    why = {"discrete pairs": "the finest grid that fits was used",
           "per-epoch bounds": "the two ends come from separate proofs: no finer computation closes the gap",
           }.get(cert["method"], "")
    if any(p.get("sampler") == "fixed" for p in cert["inputs"]["phases"]):
        why = ("the upper pair allows the worst order of each step separately, the lower pair one order for "
               "the whole run: Lebeda et al. 2024")
    wider = f", the bracket is {b['shortfall']} times wider" if b["shortfall"] is not None else ""
    return f"not met{wider}" + (f" ({why})" if why else "")


def cc_line(cc: dict[str, Any], reference: str = "delta") -> str:
    """The cross-check in one line: estimate, method, proven interval, and what it decides."""
    value = decimal_text(Fraction(cc["estimate"]["value"]), 6)
    error = decimal_text(Fraction(cc["estimate"]["error_bound"]), 1, "up")
    why = (f"there is no positive {reference.removeprefix('the ')} to measure its error against"
           if Fraction(cc["informative_below"]) == 0 else
           f"its error exceeds {cc['informative_below']} (a tenth of {reference})")
    judged = ("consistent" if cc["consistent"] else "INCONSISTENT") if cc["informative"] else \
        ("consistent" if cc["consistent"] else "misses it") + f", but uninformative here: {why}, so it does not decide"
    return (f"delta({cc['epsilon']}) estimated {value} +- {error} ({cc['method']}) against the proven "
            f"[{cc['proven_delta']['lower']}, {cc['proven_delta']['upper']}]: {judged}")


EXIT = {"certified": 0, "inconsistent": 1, "partial": 3}


def add_event_arguments(group: Any) -> None:
    """``--event FILE`` and ``--neighboring-relation``: the run as a dp_accounting event tree (docs/events.md)."""
    add_input(group, "--event", metavar="FILE", help="the run as a dp_accounting event tree in JSON (docs/events.md): "
                       "Laplace, randomized response, mixtures, ... beside the Gaussian steps")
    group.add_argument("--neighboring-relation", choices=("ADD_OR_REMOVE_ONE", "REPLACE_ONE", "REPLACE_SPECIAL"),
                       help="the relation of --event (default ADD_OR_REMOVE_ONE), as dp_accounting names it")


def event_run_of(ns: argparse.Namespace) -> Any:
    """The resolved run of ``--event FILE`` (:func:`rdp_verify.privacy_curve.table.resolve`), or None without it."""
    if ns.event is None:
        if ns.neighboring_relation is not None:
            raise UsageError("--neighboring-relation goes with --event (give phases --neighbours)")
        return None
    given = [f for f in (*PHASE_FLAGS, "phases") if getattr(ns, f, None) is not None]
    if given:
        raise UsageError(f"--event cannot be combined with {flag(given[0])}")
    from ..events.read import load_event
    from ..privacy_curve.table import resolve

    return resolve(load_event(ns.event), ns.neighboring_relation)


def _cmd_event(ns: argparse.Namespace, run: Any, delta: Fraction | None, epsilon: Fraction | None,
               tolerance: Fraction) -> int:
    """``dp --event`` for a run with mechanisms beyond the Gaussian family (or a non-private one)."""
    from ..events.read import render
    from ..privacy_curve.certificate import NotPrivate, certify_event

    if ns.plot is not None:
        raise UsageError("--plot draws runs of the Gaussian family only")
    try:
        with Refining(tolerance) as progress:
            cert = certify_event(run.event, run.relation, delta=delta, epsilon=epsilon, tolerance=tolerance,
                                 progress=progress)
    except NotPrivate as exc:
        print(f"run: {render(run.event)}; {run.relation.name}")
        print(f"{'epsilon = inf' if delta is not None else 'delta = 1'}: not private ({exc})")
        print("verdict: partial (no finite upper end: the run is not differentially private)")
        return EXIT["partial"]
    show(ns, cert, lambda: event_summary(cert))
    return EXIT[cert["verdict"]]


def event_summary(cert: dict[str, Any]) -> str:
    """A few human-readable lines for one event privacy-curve certificate."""
    inp = cert["inputs"]
    quantity, given = ("epsilon", f"delta = {inp['delta']}") if "delta" in inp else ("delta", f"epsilon = {inp['epsilon']}")
    b = cert[quantity]
    width = "" if b["relative_width"] is None else f"relative width {b['relative_width']}, "
    uses = ", ".join(f"{c['mechanism']} x {c['uses']}" for c in cert["components"])
    how = (f"grid step {cert['settings']['grid_step']}: {uses}" if cert["method"] == "discrete pairs" else
           f"upper: zCDP rho = {cert['settings']['rho']}, xi = {cert['settings']['xi']} as Renyi DP at order "
           f"{cert['settings']['order']}, Balle et al. 2020; lower: none, a zCDP guarantee bounds from above only")
    why = ("(the finest grid that fits was used)" if cert["method"] == "discrete pairs" else
           "(no lower end exists to narrow it)")
    if any(c["mechanism"] == "TruncatedSampledGaussian" for c in cert["components"]):
        why = ("(truncated batches: the upper pair counts a displaced record as a shift of 2, the lower pair is the "
               "record alone; no finer grid closes that gap)")
    lines = [f"run: {cert['mechanism']}; {inp['neighboring_relation']}; {given}",
             f"{quantity} in [{b['lower']}, {b['upper'] if b['upper'] is not None else 'inf (no finite bound)'}] "
             f"(proven; {width}{how})",
             f"  tolerance {inp['tolerance']}: " + ("met" if b["tolerance_met"] else
                                                    f"not met, the bracket is {b['shortfall']} times wider {why}")]
    cc = cert["cross_check"]
    lines.append("  cross-check: " + (f"none ({cc['reason']})" if cc["method"] == "none" else cc_line(cc)))
    lines.append(f"verdict: {cert['verdict']} ({cert['verdict_reason']})")
    return "\n".join(lines)


def cmd_dp(ns: argparse.Namespace) -> int:
    event_run = event_run_of(ns)
    phases = run_phases(ns) if event_run is None else [(p, "given") for p in event_run.phases]
    delta, epsilon = _target(ns)
    tolerance = parse_tolerance(ns.tolerance)
    if event_run is not None and (event_run.leaves or event_run.non_private or event_run.empty
                                  or event_run.zcdp is not None):
        return _cmd_event(ns, event_run, delta, epsilon, tolerance)
    from ..curves.accountant import bracket, check_run  # once the flags are read: a typo answers at once
    from ..curves.certificate import certificate_of

    run = check_run([p for p, _ in phases])
    with workers(ns) as pool, Refining(tolerance) as progress:  # one pool (one cluster) for every grid
        result = bracket(run, delta=delta, epsilon=epsilon, tolerance=tolerance,
                         mapper=lambda fn, items: progress_map(fn, items, pool, "discretising steps"),
                         progress=progress)
        progress({"stage": "cross-check"})
        cert = certificate_of(result, delta=delta, epsilon=epsilon, tolerance=tolerance)
    show(ns, cert, lambda: summary(cert, phases))
    if ns.plot is not None:
        from ..curves.plot import draw

        point = None if delta is None else (delta, result.lower, result.upper if result.upper is not None else result.lower)
        draw(result.curves, ns.plot, point)
        print(f"wrote {ns.plot}", file=sys.stderr)
    return EXIT[cert["verdict"]]


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
            "--sampler and --neighbours name other batch samplers and neighbour relations: replace-one\n"
            "under poisson or fixed (b of N without replacement) batches is bracketed the same way;\n"
            "shuffle and balls-in-bins (each record in one batch per epoch) get a no-amplification upper\n"
            "bound (balls-in-bins under zero-out: random allocation's where smaller) and a lower bound\n"
            "from an explicit pair of datasets; fixed with add-remove is refused.\n"
            "With --delta it prints the epsilon bracket, with --epsilon the delta bracket, and an\n"
            "independent estimate that must agree where it is accurate enough to tell (else exit 1).\n"
            "Runs with q = 1 in every phase are the Gaussian mechanism: bracketed in closed form.\n"
            "--event FILE reads the run as a dp_accounting event tree instead: DP-SGD steps mixed with\n"
            "Laplace, randomized response, discrete Laplace or Gaussian noise, mixtures of Gaussians,\n"
            "tree aggregation, zCDP guarantees (upper end only) -- each with its proven bracket.\n"
            "Numbers are exact: 1e-5 is 1/100000."
        ),
        epilog=(
            "Examples:\n"
            "\n"
            "  rdp-verify dp --q 256/60000 --sigma 1.1 --steps 14063 --delta 1e-5\n"
            "\n"
            "  rdp-verify dp --q 0.01,0.02 --sigma 1 --steps 1000,500 --epsilon 2 --json\n"
            "\n"
            "  rdp-verify dp --sampler shuffle --batch-size 250 --dataset-size 60000 --sigma 1.3 --epochs 3 --delta 1e-5\n"
            "\n"
            "  rdp-verify dp --event examples/event-dpsgd-laplace.json --delta 1e-5\n"
            "\n"
            f"Phases file: a JSON list of objects with the fields q (or batch_size, dataset_size), sigma,\n"
            f"steps (or epochs, step_convention), sampler, neighbours. At most {short_text(MAX_STEPS)} steps in all; delta >= {short_text(DELTA_MIN)}.\n"
            "Verdicts and exit codes: 0 certified (both ends proven, finite and not vacuous; whether\n"
            "the bracket meets --tolerance is a separate line, with the reason when it does not),\n"
            "1 inconsistent (an informative independent estimate misses the proven bracket), 2 bad\n"
            "input, 3 partial (a proven end is vacuous: no finite upper end, or a lower end 0 that is\n"
            "not known to be exact)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run (comma lists make phases; a single value is used in every phase)")
    add_run_arguments(run, f"number of SGM steps (whole number >= 1; at most {MAX_STEPS} in all)", STEP_CONVENTIONS)
    add_input(run, "--phases", metavar="FILE", help="the run as a JSON list of phases instead of the flags above")
    add_event_arguments(run)
    target = p.add_argument_group("what to bracket (exactly one)")
    target.add_argument("--delta", help="delta in (0, 1): print the proven epsilon bracket")
    target.add_argument("--epsilon", help="epsilon >= 0: print the proven delta bracket")
    p.add_argument("--tolerance", default=fraction_text(DEFAULT_TOLERANCE),
                   help="target relative width of the bracket (default 0.001); tighter costs a finer grid")
    add_certificate_outputs(p, "draw the curve's proven band and the RDP curve")
    add_parallel_arguments(p, "the phases' distinct steps")
    p.set_defaults(func=cmd_dp)

