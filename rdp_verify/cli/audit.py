"""``rdp-verify audit``: a reported (ε, δ) against accounting (:mod:`rdp_verify.audit.report`)."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from ..accounting.options import CONVERSIONS, DPS
from ..accounting.order_lists import ORDER_LISTS
from ..audit.claims import ACCOUNTANTS, STEP_CONVENTIONS, Claim, parse_claim, read_claims
from ..foundations.inputs import InputError, parse_delta, parse_dps, parse_rational
from ..foundations.parallel import progress_map
from .common import (
    PHASE_FLAGS,
    UsageError,
    add_input,
    add_parallel_arguments,
    add_run_arguments,
    emit,
    flag,
    show,
    workers,
)

__all__ = ["register"]

_SINGLE = (*PHASE_FLAGS, "delta", "epsilon", "conversion", "orders", "accountant")


def _audit_one(args: tuple[Claim, int]) -> dict[str, Any]:
    from ..audit.report import audit_claim

    return audit_claim(*args)


def canary_summary(report: dict[str, Any], run: str, source: str) -> str:
    """A few human-readable lines for a canary audit."""
    rule = ("valid for every threshold of the scores at once, even one picked after seeing them"
            if report.get("level_rule", "any-threshold") == "any-threshold" else
            "Bonferroni over thresholds fixed in advance")
    lines = [f"run: {run}",
             f"canaries: {report['thresholds']} threshold(s) from {source}; confidence {report['confidence']} "
             f"(each rate's Clopper-Pearson bound at level {report['bonferroni_level']}: {rule})",
             f"verdict: {report['verdict']} ({report['verdict_reason']})"]
    s = report["strongest"]
    if s is not None:
        where = s.get("threshold", s.get("score", f"#{s.get('rank')}"))
        lines.append(f"  threshold {where} (the largest empirical epsilon): FPR <= {s['fpr_upper']}, "
                     f"FNR <= {s['fnr_upper']}"
                     + (f" (the certified curve: FNR >= {s['certified_fnr_lower']} at that FPR)"
                        if "certified_fnr_lower" in s else ""))
    proven = report["proven_epsilon"]
    emp = report["empirical_epsilon_lower"]
    lines.append(f"  empirical epsilon at delta = {report['delta']}: "
                 + ("none (no threshold bounds it)" if emp is None else f">= {emp}")
                 + f"; proven epsilon in [{proven['lower']}, {proven['upper'] if proven['upper'] is not None else 'inf'}]"
                 + ("" if report["auditing_gap"] is None else f"; auditing gap (empirical / proven) {report['auditing_gap']}"))
    lines.append(f"  assumption: {report['assumption']}")
    return "\n".join(lines)


def _cmd_canaries(ns: argparse.Namespace, given: dict[str, Any]) -> int:
    from .dp import run_phases, run_text

    for f in ("epsilon", "conversion", "orders", "accountant"):
        if given.get(f) is not None:
            raise UsageError(f"--canaries cannot be combined with {flag(f)}")
    if ns.claims is not None:
        raise UsageError("--canaries cannot be combined with --claims")
    if ns.method in ("one-run", "one-run-fdp"):
        return _cmd_one_run(ns, given)
    confidence = parse_rational(ns.confidence if ns.confidence is not None else "0.95", "confidence")
    delta = parse_delta(ns.delta) if ns.delta is not None else None
    phases = run_phases(ns)
    from ..tradeoff.canaries import DEFAULT_DELTA, check_confidence, level_rule, read_canaries  # after the flags
    from ..tradeoff.canary_report import canary_report

    check_confidence(confidence)
    counts = read_canaries(ns.canaries)
    level_rule(counts, ns.thresholds_fixed_in_advance)  # refused in one line before the run is composed
    try:  # the file's provenance, recorded in the report (its counts are what the report is checked from)
        digest = hashlib.sha256(Path(ns.canaries).read_bytes()).hexdigest()
    except OSError as exc:
        raise InputError(f"cannot read canary file {ns.canaries}: {exc.strerror}") from None
    from tqdm import tqdm  # a bar on a terminal, for large files (stderr, after a second)

    bar = tqdm(total=2 * len(counts), desc="auditing thresholds", unit="thr", delay=1.0, file=sys.stderr,
               disable=len(counts) < 10**4 or not sys.stderr.isatty(), leave=False)
    with workers(ns) as pool, bar:
        trade, report = canary_report([p for p, _ in phases], counts, confidence=confidence,
                                      delta=DEFAULT_DELTA if delta is None else delta,
                                      fixed_in_advance=ns.thresholds_fixed_in_advance, file=str(ns.canaries),
                                      sha256=digest, tick=bar.update,
                                      mapper=lambda fn, items: progress_map(fn, items, pool, "discretising steps"))
    show(ns, report, lambda: canary_summary(report, run_text(phases), str(ns.canaries)))
    if ns.plot is not None:
        from ..tradeoff.canaries import LISTED
        from ..tradeoff.plot import draw

        below = report["below_curve"]
        draw(trade, ns.plot, below, strongest=report["strongest"], more=len(below) >= LISTED,
             boxes_label="box(es) below the certified curve")
        print(f"wrote {ns.plot}", file=sys.stderr)
    return 0 if report["verdict"] == "consistent" else 1


def one_run_summary(report: dict[str, Any], run: str | None, source: str) -> str:
    """A few human-readable lines for a one-run audit (rdp_verify.tradeoff.one_run)."""
    paper = ("Steinke, Nasr, Jagielski 2023" if report["method"] == "one-run"
             else "Mahloujifar, Melis, Chaudhuri 2024, f-DP")
    rule = ("the thresholds fixed in advance" if report["level_rule"] == "fixed-in-advance"
            else f"the {report['canary_count']} possible guess counts")
    lines = [f"run: {run if run is not None else 'none given (the empirical bounds only)'}",
             f"canaries: {report['canary_count']} from {source}, {report['thresholds']} threshold(s); method "
             f"{report['method']} ({paper}): each threshold's test at level {report['level']} (confidence "
             f"{report['confidence']}, Bonferroni over {rule})"]
    if report["verdict"] is not None:
        lines.append(f"verdict: {report['verdict']} ({report['verdict_reason']})")
    s = report["strongest"]
    emp = report["empirical_epsilon_lower"]
    lines.append(f"  empirical epsilon at delta = {report['delta']}: >= {emp}"
                 + (f" (proven: threshold {s['threshold']}, {s['correct']} of {s['guesses']} guesses correct"
                    + (f", p-value <= {s['p_value_upper']})" if "p_value_upper" in s else ")") if s is not None
                    else " (no threshold rejects any epsilon)"))
    if "gdp_mu_lower" in report:
        g = report["gaussian_epsilon_lower"]
        phases = report.get("run")
        if not phases:  # no run: the figure as jax_privacy reports it
            which = ": an epsilon bound only if the run's curve is Gaussian"
        elif all(parse_rational(str(p["q"]), "q") == 1 for p in phases):
            which = "; this run's curve is Gaussian (q = 1), so it bounds the run's epsilon"
        else:
            which = "; this run's curve is not Gaussian, so it does not bound the run's epsilon"
        lines.append("  Gaussian DP: no threshold rejects any mu" if report["gdp_mu_lower"] == "0" else
                     f"  Gaussian DP: mu >= {report['gdp_mu_lower']} (the run is not mu-GDP for any smaller mu)"
                     + ("" if g is None else f"; G_mu has epsilon >= {g} at delta = {report['delta']} (jax_privacy's "
                                             f"epsilon_one_run_fdp figure{which})"))
    if "proven_epsilon" in report:
        p = report["proven_epsilon"]
        lines.append(f"  proven epsilon in [{p['lower']}, {p['upper'] if p['upper'] is not None else 'inf'}]")
    lines.append(f"  assumption: {report['assumption']}")
    return "\n".join(lines)


def _cmd_one_run(ns: argparse.Namespace, given: dict[str, Any]) -> int:
    """``--canaries FILE --method one-run | one-run-fdp``: with a run, bug or consistent (exit 1 / 0); without,
    the proven empirical bounds (exit 0)."""
    from .common import PHASE_FLAGS
    from .dp import run_phases, run_text

    confidence = parse_rational(ns.confidence if ns.confidence is not None else "0.95", "confidence")
    delta = parse_delta(ns.delta) if ns.delta is not None else None
    phases = run_phases(ns) if any(f in given for f in PHASE_FLAGS) else None
    from ..tradeoff.canaries import DEFAULT_DELTA, check_confidence, read_canaries  # once the flags are read
    from ..tradeoff.one_run_report import one_run_report

    check_confidence(confidence)
    counts = read_canaries(ns.canaries)
    from_scores = bool(getattr(counts, "from_scores", counts[0].from_scores))
    fixed = bool(getattr(ns, "thresholds_fixed_in_advance", False))
    if fixed and from_scores:
        raise UsageError("thresholds read off the scores are chosen by the data: --thresholds-fixed-in-advance "
                         "goes with counts rows (threshold,tp,fp,tn,fn)")
    try:
        digest = hashlib.sha256(Path(ns.canaries).read_bytes()).hexdigest()
    except OSError as exc:
        raise InputError(f"cannot read canary file {ns.canaries}: {exc.strerror}") from None
    with workers(ns) as pool:
        trade, report = one_run_report(None if phases is None else [p for p, _ in phases], counts, method=ns.method,
                                   confidence=confidence, delta=DEFAULT_DELTA if delta is None else delta,
                                   rule="fixed-in-advance" if fixed else "any-threshold",
                                   thresholds_from="scores" if from_scores else "counts", file=str(ns.canaries),
                                   sha256=digest,
                                   mapper=lambda fn, items: progress_map(fn, items, pool, "discretising steps"))
    show(ns, report, lambda: one_run_summary(report, None if phases is None else run_text(phases), str(ns.canaries)))
    if ns.plot is not None:  # the run's band (if given) and the curves the attack refutes: one-run audits have no boxes
        from fractions import Fraction

        from ..tradeoff.plot import draw

        refuted: list[tuple[str, Fraction, Fraction | None]] = []
        if report.get("gdp_mu_lower", "0") != "0":
            refuted.append(("gdp", Fraction(report["gdp_mu_lower"]), None))
        if report["empirical_epsilon_lower"] != "0":
            refuted.append(("eps", Fraction(report["empirical_epsilon_lower"]), Fraction(report["delta"])))
        draw(trade, ns.plot, refuted=refuted)
        print(f"wrote {ns.plot}", file=sys.stderr)
    return 1 if report["verdict"] == "bug" else 0


def _event_claim(ns: argparse.Namespace, given: dict[str, Any]) -> tuple[Any, Claim | None]:
    """``--event FILE`` with --delta and --epsilon: the resolved run, and the claim when the run is of the SGM
    family (audited as before, by both accountants where they apply)."""
    others = [f for f in given if f not in ("delta", "epsilon")]
    for f, v in (("claims", ns.claims), ("canaries", ns.canaries)):
        if v is not None:
            others.append(f)
    if others:
        raise UsageError(f"--event cannot be combined with {flag(others[0])}")
    if ns.delta is None or ns.epsilon is None:
        raise UsageError("--event needs the claim: --delta and --epsilon")
    from ..events.read import load_event, render
    from ..privacy_curve.table import resolve

    run = resolve(load_event(ns.event), ns.neighboring_relation)
    if run.leaves or run.non_private or run.empty or run.zcdp is not None:
        return run, None
    phases = [{k: v if isinstance(v, str) else str(v) for k, v in p.to_json().items() if v is not None}
              for p in run.phases]  # the claims reader takes text
    fields = {"phases": phases, "delta": ns.delta, "epsilon": ns.epsilon,
              "source": render(run.event)}
    return run, parse_claim(fields, default_id="event")


def _cmd_event(ns: argparse.Namespace, run: Any) -> int:
    """A claim about a run with mechanisms beyond the SGM family: the event bracket decides (pld only)."""
    from fractions import Fraction

    from ..audit.report import pld_verdict  # the one holds / violated / inconclusive rule of every audit
    from ..events.read import render
    from ..foundations.inputs import parse_epsilon
    from ..privacy_curve.certificate import NotPrivate, certify_event

    delta, epsilon = parse_delta(ns.delta), parse_epsilon(ns.epsilon)
    print(f"claim event: {render(run.event)}; {run.relation.name}; delta = {ns.delta}; reported epsilon = {ns.epsilon}")
    try:
        cert = certify_event(run.event, run.relation, delta=delta)
        low, up = Fraction(cert["epsilon"]["lower"]), cert["epsilon"]["upper"]
        if low <= epsilon and (up is None or epsilon < Fraction(up)):  # the bracket holds the claim: narrow it once
            cert = certify_event(run.event, run.relation, delta=delta, tolerance=Fraction(1, 10**5))
    except NotPrivate as exc:
        print(f"  pld: no finite epsilon is proven ({exc})")
        print("verdict: inconclusive (the run holds a non-private event)")
        return 1
    b = cert["epsilon"]
    verdict = pld_verdict(Fraction(b["lower"]), None if b["upper"] is None else Fraction(b["upper"]), epsilon)
    why = {"holds": f"proven epsilon({ns.delta}) <= {b['upper']} <= reported {ns.epsilon}",
           "violated": f"proven epsilon({ns.delta}) >= {b['lower']} > reported {ns.epsilon}: the run is "
                       f"not ({ns.epsilon}, {ns.delta})-DP",
           "inconclusive": "the proven epsilon bracket contains the reported epsilon"}[verdict]
    print(f"  pld: epsilon in [{b['lower']}, {b['upper'] if b['upper'] is not None else 'inf'}] "
          f"({cert['method']}): {verdict}")
    print(f"verdict: {verdict} ({why})")
    if ns.out is not None:  # the proof behind the verdict: the sealed event certificate, which check recomputes
        emit(cert, ns.out)
    return 0 if verdict == "holds" else 1


def cmd_audit(ns: argparse.Namespace) -> int:
    given = {f: getattr(ns, f) for f in _SINGLE if getattr(ns, f) is not None}
    event_claim = None
    if ns.event is not None:
        run, event_claim = _event_claim(ns, given)
        if event_claim is None:
            return _cmd_event(ns, run)
        given = {}
    elif ns.neighboring_relation is not None:
        raise UsageError("--neighboring-relation goes with --event (give phases --neighbours)")
    if ns.thresholds_fixed_in_advance and ns.canaries is None:
        raise UsageError("--thresholds-fixed-in-advance belongs to --canaries (with counts rows)")
    if ns.canaries is not None:
        return _cmd_canaries(ns, given)
    if ns.confidence is not None or ns.plot is not None or ns.method is not None:
        raise UsageError("--confidence, --method and --plot belong to --canaries")
    dps = parse_dps(ns.dps)
    if event_claim is not None:
        claims = [event_claim]
    elif ns.claims is not None:
        if given:
            raise UsageError(f"--claims cannot be combined with {flag(next(iter(given)))}")
        claims = read_claims(ns.claims)
    elif not given:
        raise UsageError("give the run and the claim (e.g. --q, --sigma, --steps, --delta, --epsilon) or --claims FILE")
    else:
        try:
            claims = [parse_claim(given, default_id="command-line")]
        except InputError as exc:  # name the flag, not the claims-file field
            message = str(exc).replace("missing field ", "missing ")
            for f in _SINGLE:
                message = message.replace(f"'{f}'", flag(f))
            raise InputError(message) from None
    pool = workers(ns)
    from ..audit.report import report_table, summary  # once the flags are read: a typo answers at once
    from ..foundations.results import MethodUnavailable

    try:
        reports = progress_map(_audit_one, [(c, dps) for c in claims], pool, "auditing")
    except MethodUnavailable as exc:  # the engine could not enclose some ε_α: no verdict at all
        print(f"rdp-verify: audit failed: {exc}", file=sys.stderr)
        return 1
    single = ns.claims is None
    payload = reports[0] if single else reports
    show(ns, payload, lambda: summary(reports[0]) if single else report_table(reports))
    return 0 if all(r["verdict"] == "holds" for r in reports) else 1


def register(subparsers: Any) -> None:
    """Add the ``audit`` subcommand (see :mod:`rdp_verify.cli`)."""
    p = subparsers.add_parser(
        "audit",
        help="check a reported (epsilon, delta) of a DP-SGD run (proven true, false, or neither), or a canary attack",
        description=(
            "Is a reported (epsilon, delta) of a DP-SGD run true? Two accountants, both proven:\n"
            "pld brackets epsilon(delta) of the run's privacy curve from both sides (as rdp-verify dp):\n"
            "holds (proven upper bound <= reported) or violated (the proven lower bound of\n"
            "delta(reported epsilon) exceeds the reported delta: the claim is false). rdp brackets the best\n"
            "epsilon of RDP accounting over ALL real orders alpha > 1 for each conversion, mironov2017\n"
            "(Mironov 2017, Prop. 3) and balle2020 (Balle et al. 2020, Thm 21): holds, or unsupported\n"
            "(this accounting cannot give the reported value; NOT proof the run is not private).\n"
            "The report names the accountant and the argument that decided. Numbers are read exactly."
        ),
        epilog=(
            "Examples:\n"
            "\n"
            "  rdp-verify audit --batch-size 256 --dataset-size 60000 --sigma 1.1 --epochs 60 \\\n"
            "  --step-convention ceil --delta 1e-5 --epsilon 3.01\n"
            "\n"
            "  rdp-verify audit --claims examples/claims.json\n"
            "\n"
            "Claims file: a JSON list (or {\"claims\": [...]}) or a CSV whose columns are the flags'\n"
            "names: id, source, sampler, neighbours, q (or batch_size, dataset_size), sigma, steps (or epochs,\n"
            "step_convention), delta, epsilon, accountant, conversion, orders; a JSON claim may give a\n"
            "multi-phase run as \"phases\": [...].\n"
            "A run that names another sampler or neighbour relation (--sampler, --neighbours) is audited by\n"
            "pld only; a shuffled or balls-in-bins run is violated when the explicit-pair lower end exceeds the\n"
            "claim, holds when the no-amplification upper end is below it (docs/samplers.md).\n"
            "\n"
            "Canary attacks: --canaries FILE holds an empirical membership attack against the run's certified\n"
            "trade-off curve (rdp-verify tradeoff): a CSV of score,member (one row per canary) or of\n"
            "threshold,tp,fp,tn,fn. Each threshold gets exact Clopper-Pearson bounds on its FPR and FNR at a\n"
            "level valid for every threshold of one attack's scores at once, even one picked after seeing\n"
            "them: gamma/(2 max(m, members, non-members)), 1 - gamma the --confidence, m thresholds. Counts\n"
            "rows must then be thresholds of one list of scores (the same canaries in every row, counts\n"
            "nested), else they are refused; --thresholds-fixed-in-advance (counts rows only) says every\n"
            "threshold was fixed before the canaries were scored, for the Bonferroni level gamma/(2m)\n"
            "(picking the best-looking threshold after seeing the scores breaks it). bug when some\n"
            "threshold's box lies below the certified curve or the empirical epsilon lower bound at --delta\n"
            "(default 1e-5) exceeds the proven epsilon, else consistent. Canaries are assumed to be\n"
            "independent trials. A bar on stderr follows large files on a terminal.\n\n"
            "  rdp-verify audit --q 1 --sigma 2 --steps 4 --canaries examples/canaries-mu3.csv\n"
            "\n"
            "One-run audits (--method one-run | one-run-fdp; Steinke, Nasr, Jagielski 2023 and Mahloujifar,\n"
            "Melis, Chaudhuri 2024): the canaries were all in ONE training run, each included independently\n"
            "with probability 1/2, the bits drawn before training and hidden from the attack. That is\n"
            "assumed, not checked: the file shows only scores and 0/1 labels. The attack guesses member at\n"
            "every threshold; each threshold's test gets level (1 - confidence)/m, m canaries (Bonferroni over\n"
            "the m possible guess counts; counts rows: nested, or --thresholds-fixed-in-advance). one-run\n"
            "tests (epsilon, delta)-DP by the paper's p-value, proven in Arb; one-run-fdp runs the f-DP\n"
            "recursion against f_{eps,delta}, against G_mu and, with a run, against its exact curve (q = 1)\n"
            "or its proven (epsilon, delta) lines refined where the thresholds read them. With a run: bug\n"
            "(exit 1) when some threshold rejects the run's certified guarantee or a printed empirical bound\n"
            "exceeds the run's proven end, else consistent; without: the proven empirical epsilon (exit 0).\n"
            "The 2*m*delta term of the (eps,\n"
            "delta) test needs delta far below 1/m^2: use a small --delta.\n\n"
            "  rdp-verify audit --q 1 --sigma 8 --steps 4 --delta 1e-7 --method one-run \\\n"
            "  --canaries examples/canaries-one-run-mu4.csv\n"
            "\n"
            "Exit codes: 0 every claim holds (canaries: consistent), 1 a claim is violated, unsupported or\n"
            "inconclusive (canaries: bug), 2 bad input."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run (or --claims FILE)")
    add_run_arguments(run, "number of SGM steps T (whole number >= 1)", STEP_CONVENTIONS)
    claim = p.add_argument_group("the claim")
    claim.add_argument("--delta", help="reported delta, 0 < delta < 1")
    claim.add_argument("--epsilon", help="reported epsilon >= 0, as printed (its digits are what is reproduced)")
    claim.add_argument("--accountant", choices=ACCOUNTANTS,
                       help="pld (privacy curve), rdp (RDP over all orders) or all (default: both)")
    claim.add_argument("--conversion", choices=(*CONVERSIONS, "both"), help="RDP conversion (default both)")
    claim.add_argument("--orders", help="also evaluate on this order list: a comma list, or one of "
                                        + ", ".join(ORDER_LISTS))
    add_input(p, "--claims", metavar="FILE", help="audit every claim of a JSON or CSV file and print a table")
    add_input(p, "--event", metavar="FILE", help="the run as a dp_accounting event tree in JSON (docs/events.md), "
                   "with --delta and --epsilon; runs beyond the SGM family are judged by the event bracket")
    p.add_argument("--neighboring-relation", choices=("ADD_OR_REMOVE_ONE", "REPLACE_ONE", "REPLACE_SPECIAL"),
                   help="the relation of --event (default ADD_OR_REMOVE_ONE)")
    canaries = p.add_argument_group("an empirical canary attack (instead of a claim)")
    add_input(canaries, "--canaries", metavar="FILE",
                          help="CSV of score,member or threshold,tp,fp,tn,fn: bug or consistent against the run's "
                               "certified trade-off curve")
    canaries.add_argument("--confidence", help="confidence of the verdict and of the empirical epsilon (default 0.95)")
    canaries.add_argument("--thresholds-fixed-in-advance", action="store_true",
                          help="counts rows only: every threshold was fixed before the canaries were scored (none "
                               "picked after seeing the data), so each row's bounds get the Bonferroni level "
                               "gamma/(2m); without it the level holds for any threshold the data could have picked")
    canaries.add_argument("--method", choices=("clopper-pearson", "one-run", "one-run-fdp"),
                          help="clopper-pearson (default): canaries are independent trials, one per training run; "
                               "one-run, one-run-fdp: all canaries in ONE run, each included independently with "
                               "probability 1/2 (the run may be omitted: then only the empirical bounds)")
    p.add_output("--plot", kind="plot", metavar="FILE",
                        help="draw the certified trade-off band with the attack's confidence boxes (one-run methods: "
                             "the curves it refutes)")
    p.add_argument("--json", action="store_true", help="print the full JSON report (a list with --claims)")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the JSON report to FILE (atomically)")
    p.add_argument("--dps", default=str(DPS), help=f"digits of each RDP enclosure and certificate (default {DPS})")
    add_parallel_arguments(p, "the claims of a file")
    p.set_defaults(func=cmd_audit)
