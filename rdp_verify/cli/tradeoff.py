"""``rdp-verify tradeoff``: the proven trade-off curve (f-DP) of a DP-SGD run (:mod:`rdp_verify.tradeoff`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..audit.claims import STEP_CONVENTIONS
from ..curves.options import DEFAULT_TOLERANCE
from ..foundations.inputs import fraction_text, parse_rational, parse_tolerance
from ..foundations.parallel import progress_map
from .common import add_certificate_outputs, add_input, add_parallel_arguments, add_run_arguments, show, split_list, workers
from .dp import add_event_arguments, event_run_of, run_phases, run_text

__all__ = ["register", "tradeoff_summary", "parse_rates"]

DEFAULTS = {"alpha": "1e-5,1e-3,0.01,0.1,0.5", "fpr": "1e-5,1e-3,0.01,0.1", "prior": "0.01,0.5"}


def parse_rates(text: str, name: str) -> list[Any]:
    """A comma list of exact rationals (range checks follow in the engine, one line each)."""
    return [parse_rational(v, name) for v in split_list(text, name)]


def tradeoff_summary(cert: dict[str, Any], run: str) -> str:
    """A few human-readable lines for one trade-off certificate."""
    lines = [f"run: {run}",
             "trade-off function f (proven envelopes; no attack has type-II error below f_lower at type-I error alpha):"]
    for e in cert["envelope"]:
        lines.append(f"  alpha = {e['alpha']}: f in [{e['f_lower']}, {e['f_upper']}]")
    lines.append("largest true-positive rate the guarantee allows at a false-positive rate, TPR = 1 - f(FPR) "
                 "(no attack exceeds the upper end):")
    for t in cert["tpr"]:
        lines.append(f"  FPR = {t['fpr']}: TPR in [{t['lower']}, {t['upper']}] (relative width {t['relative_width']})")
    mu = cert["mu"]
    how = {"gaussian mechanism": "exact: the run is the Gaussian mechanism",
           "all-steps component": "exact: the no-amplification mu, attained in the tail by the runs where the "
                                  "record enters every step",
           "envelope": "lower end from the upper envelope, upper end without amplification",
           "envelope, no upper end (mechanisms beyond the Gaussian family)":
               "lower end from the upper envelope; no upper end is proven for mechanisms beyond the Gaussian "
               "family"}[mu["how"]]
    upper = "inf" if mu["upper"] is None else mu["upper"]
    lines.append(f"mu of Gaussian DP in [{mu['lower']}, {upper}] ({how})")
    if mu["how"] == "all-steps component":
        lines.append(f"  at FPR >= 1e-10 the curve already needs mu >= {mu['grid_lower']} (G_mu above f_upper there)")
    adv = cert["advantage"]
    lines.append(f"advantage max(1 - alpha - f(alpha)) = delta(0) in [{adv['lower']}, {adv['upper']}]")
    for b in cert["bayes"]:
        lines.append(f"best chance of guessing membership, prior {b['prior']}: in [{b['lower']}, {b['upper']}]")
    if cert["method"] == "per-epoch bounds":
        lines.append("  note: shuffled and balls-in-bins runs: the lower envelope is the no-amplification Gaussian, "
                     "the upper one comes from explicit-pair attacks (two separate proofs, not tight)")
    return "\n".join(lines)


def cmd_tradeoff(ns: argparse.Namespace) -> int:
    event = event_run_of(ns)  # --event FILE: the run as an event tree, refused where no curve is built
    phases = run_phases(ns) if event is None else [(p, "given") for p in event.phases]
    alphas = parse_rates(ns.alpha, "alpha")
    fprs = parse_rates(ns.fpr, "FPR")
    priors = parse_rates(ns.prior, "prior")
    tolerance = parse_tolerance(ns.tolerance)
    from ..curves.accountant import check_run  # once the flags are read: a typo answers at once
    from ..tradeoff.certificate import certificate_of, check_event_run
    from ..tradeoff.curve import check_prior, check_rate, tradeoff

    for a in alphas:
        check_rate(a, "alpha")
    for a in fprs:
        check_rate(a, "FPR")
    for p in priors:
        check_prior(p)
    leaves = () if event is None else check_event_run(event).leaves
    run = check_run([p for p, _ in phases], leaves)
    with workers(ns) as pool:
        trade = tradeoff(run, fprs=[*alphas, *fprs], tolerance=tolerance, leaves=leaves,
                         mapper=lambda fn, items: progress_map(fn, items, pool, "discretising steps"))
    cert = certificate_of(trade, alphas=alphas, fprs=fprs, priors=priors, tolerance=tolerance, run=event)
    show(ns, cert, lambda: tradeoff_summary(cert, run_text(phases) if event is None else cert["mechanism"]))
    if ns.plot is not None:
        from ..tradeoff.plot import draw

        draw(trade, ns.plot)
        print(f"wrote {ns.plot}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``tradeoff`` subcommand."""
    p = subparsers.add_parser(
        "tradeoff",
        help="proven trade-off curve (f-DP) of a DP-SGD run: TPR at FPR, Gaussian-DP mu, attack bounds",
        description=(
            "The trade-off function f(alpha) of a DP-SGD run: the smallest false-negative rate of any\n"
            "membership test at false-positive rate alpha (Dong, Roth, Su 2022). Its lower envelope comes\n"
            "from the pairs that dominate the run (what no attack can beat), its upper envelope from the\n"
            "pairs it dominates, both read exactly off the same discrete pairs as rdp-verify dp.\n"
            "Prints the envelopes at --alpha, the largest TPR the guarantee allows at each --fpr (no\n"
            "membership attack exceeds its upper end), a proven bracket of the\n"
            "Gaussian-DP parameter mu, the advantage max(1 - alpha - f) and the best chance of guessing\n"
            "membership for each --prior. Numbers are exact: 1e-3 is 1/1000."
        ),
        epilog=(
            "Examples:\n"
            "\n"
            "  rdp-verify tradeoff --q 256/60000 --sigma 1.1 --steps 14063 --fpr 1e-3\n"
            "\n"
            "  rdp-verify tradeoff --q 1 --sigma 2 --steps 4 --json\n"
            "\n"
            "  rdp-verify tradeoff --event examples/event-dpsgd-laplace.json --fpr 1e-3\n"
            "\n"
            "Exit codes: 0 done, 2 bad input. rdp-verify check re-verifies a --out certificate."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run (as for rdp-verify dp)")
    add_run_arguments(run, "number of SGM steps (whole number >= 1)", STEP_CONVENTIONS)
    add_input(run, "--phases", metavar="FILE", help="the run as a JSON list of phases instead of the flags above")
    add_event_arguments(run)
    p.add_argument("--alpha", default=DEFAULTS["alpha"], help=f"type-I errors for the envelopes (default {DEFAULTS['alpha']})")
    p.add_argument("--fpr", default=DEFAULTS["fpr"], help=f"false-positive rates for TPR (default {DEFAULTS['fpr']})")
    p.add_argument("--prior", default=DEFAULTS["prior"],
                   help=f"prior probabilities of membership for the Bayesian bound (default {DEFAULTS['prior']})")
    p.add_argument("--tolerance", default=fraction_text(DEFAULT_TOLERANCE),
                   help="target relative width of the epsilon bracket that sets the grid (default 0.001)")
    add_certificate_outputs(p, "draw the trade-off band, linear and log-log, with Gaussian-DP curves")
    add_parallel_arguments(p, "the phases' distinct steps")
    p.set_defaults(func=cmd_tradeoff)
