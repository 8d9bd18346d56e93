"""``rdp-verify compare``: float64 RDP accountants against certified intervals (:mod:`rdp_verify.reference.compare`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Mapping, Sequence

from ..foundations.decimals import decimal_text
from ..foundations.inputs import (
    InputError,
    fraction_text,
    parse_alphas,
    parse_delta,
    parse_q,
    parse_rational,
    parse_run_sigma,
    parse_sigma,
    parse_steps,
    parse_whole,
)
from ..foundations.run import Phase
from ..reference import golden_dp
from ..reference.dp_peers import DP_PEERS, load_dp
from ..reference.grid import Grid
from ..reference.peers import PEERS, PeerUnavailable, load
from ..reference.tradeoff_peers import TRADEOFF_PEERS
from .common import UsageError, add_input, add_parallel_arguments, emit, split_list, workers

__all__ = ["register"]


def _names(text: str, known: Mapping[str, Any]) -> list[str]:
    """The peers of ``--against``, each by its one name; ``all``, or a library's name for all its accountants."""
    names = []
    for given in split_list(text, "--against"):
        if given == "all":
            names += known
        elif given in known:
            names.append(given)
        elif any(peer.library == given for peer in known.values()):
            names += [name for name, peer in known.items() if peer.library == given]
        else:
            libraries = dict.fromkeys(peer.library for peer in known.values())
            aliases = ", ".join(lib for lib in libraries if lib not in known)
            raise InputError(f"--against {given!r}: unknown peer (choose from {', '.join(known)}, or all; "
                             f"{aliases} for every accountant of that library)")
    return list(dict.fromkeys(names))


def _available(names: Sequence[str], loader: Callable[[str], Any]) -> list[str]:
    ok = []
    for name in names:
        try:
            loader(name)
            ok.append(name)
        except PeerUnavailable as exc:
            print(f"rdp-verify: skipping {name}: {exc}", file=sys.stderr)
    return ok


def _dp_grid(ns: argparse.Namespace) -> tuple[list[Any], str] | None:
    """The lists of --q, --sigma, --steps and --delta, validated, with their description; None for the default grid."""
    if ns.alpha:
        raise UsageError("--alpha is for RDP peers: with --dp give --steps and --delta")
    given = [ns.q, ns.sigma, ns.steps, ns.delta]
    if not any(given):
        if ns.neighbours or ns.dataset_size:
            raise UsageError("--neighbours and --dataset-size describe a grid: give --q, --sigma, --steps and --delta")
        return None
    if not all(given):
        raise UsageError("with --dp give all of --q, --sigma, --steps and --delta, or none (the default grid)")
    qs = [parse_q(x) for x in split_list(ns.q, "q")]
    sigmas = [parse_sigma(x) for x in split_list(ns.sigma, "sigma")]
    steps = [parse_steps(x) for x in split_list(ns.steps, "steps")]
    deltas = [parse_delta(x) for x in split_list(ns.delta, "delta")]
    neighbours = ns.neighbours or "add-remove"
    size = None if ns.dataset_size is None else parse_whole(ns.dataset_size, "--dataset-size")
    from ..curves.accountant import check_run

    if size is None:
        check_run([Phase(qs[0], sigmas[0], max(steps), neighbours=neighbours)])
    else:  # fixed-size batches of q·N: refused here if no proof covers them (add/remove) or q·N is not whole
        for q in qs:
            if (q * size).denominator != 1:
                raise UsageError(f"--q {fraction_text(q)} times --dataset-size {size} is not a whole batch size")
        check_run([Phase(qs[0], sigmas[0], max(steps), "fixed", neighbours, int(qs[0] * size), size)])
    kind = ("" if neighbours == "add-remove" and size is None else
            f" ({'fixed batches of q x ' + str(size) if size else 'poisson'}, {neighbours})")
    text = (f"q {', '.join(map(fraction_text, qs))} x sigma {', '.join(map(fraction_text, sigmas))} x steps "
            f"{', '.join(map(str, steps))} x delta {', '.join(decimal_text(d, 3) for d in deltas)}{kind}")
    return [qs, sigmas, steps, deltas, {"neighbours": neighbours, "dataset_size": size}], text


def _report(ns: argparse.Namespace, names: list[str], loader: Callable[[str], Any],
            compute: Callable[[list[str], Any], tuple[list[Any], Any]], summarise: Callable[[list[Any], Any], str],
            draw: Callable[[list[Any], str], None], failing: tuple[str, ...]) -> int:
    """Keep the installed peers, compute the points, then table, JSON and plot."""
    pool = workers(ns)
    names = _available(names, loader)
    if not names:
        raise UsageError("no requested peer is installed (see the messages above)")
    points, grid = compute(names, pool)
    table = summarise(points, grid)
    if ns.json is not None:
        emit([p.to_json() for p in points], None if ns.json == "-" else ns.json)
    print(table, end="", file=sys.stderr if ns.json == "-" else sys.stdout)
    if ns.plot:
        draw(points, ns.plot)
    return 1 if any(p.classification in failing for p in points) else 0


# --tradeoff without --q/--sigma/--steps: the Gaussian mechanism of docs/tradeoff.md's canary run (mu = 1), a
# stronger one (mu = 2), and a subsampled run
TRADEOFF_RUNS = (("1", "2", "4"), ("1", "0.5", "1"), ("0.01", "1", "1000"))
TRADEOFF_ALPHAS = "1e-10,1e-8,1e-6,1e-4,1e-3,0.01,0.1,0.3,0.5,0.9"
TRADEOFF_DELTA = "1e-5"
TRADEOFF_CONFIDENCE = "0.95"


def _tradeoff_runs(ns: argparse.Namespace) -> list[Phase]:
    """The runs of --tradeoff: the product of --q, --sigma, --steps (Poisson add/remove), or the default runs."""
    given = [ns.q, ns.sigma, ns.steps]
    if not any(given):
        rows = TRADEOFF_RUNS
    elif not all(given):
        raise UsageError("with --tradeoff give all of --q, --sigma and --steps, or none (the default runs)")
    else:
        rows = [(q, s, t) for q in split_list(ns.q, "q") for s in split_list(ns.sigma, "sigma")
                for t in split_list(ns.steps, "steps")]
    phases = list(dict.fromkeys(Phase(parse_q(q), parse_run_sigma(s), parse_steps(t)) for q, s, t in rows))
    from ..curves.accountant import check_run

    for phase in phases:
        check_run([phase])
    return phases


def cmd_tradeoff(ns: argparse.Namespace) -> int:
    """``compare --tradeoff``: peers' trade-off values and auditors' epsilon against proven envelopes and brackets."""
    if ns.dp:
        raise UsageError("--dp and --tradeoff are two comparisons: give one")
    for flag_, value in (("--neighbours", ns.neighbours), ("--dataset-size", ns.dataset_size), ("--plot", ns.plot)):
        if value is not None:
            raise UsageError(f"{flag_} is not available with --tradeoff (the peers account Poisson add/remove runs)"
                             if flag_ != "--plot" else "--plot is not available with --tradeoff")
    from ..reference.tradeoff_peers import load_auditor, load_curve, read_scores

    names = _names(ns.against, TRADEOFF_PEERS)
    phases = _tradeoff_runs(ns)
    alphas = [parse_rational(a, "alpha") for a in split_list(ns.alpha or TRADEOFF_ALPHAS, "alpha")]
    for a in alphas:
        if not 0 < a < 1:
            raise InputError(f"alpha {fraction_text(a)} must lie strictly between 0 and 1 (a type-I error)")
    alphas = sorted(set(alphas))
    auditors = [n for n in names if TRADEOFF_PEERS[n].kind == "auditor"]
    canaries_given = ns.canaries is not None
    if canaries_given and not auditors:
        raise UsageError("--canaries is for the auditors (" + ", ".join(
            n for n, p in TRADEOFF_PEERS.items() if p.kind == "auditor") + ")")
    if not canaries_given and (ns.delta is not None or ns.confidence is not None):
        raise UsageError("--delta and --confidence are for the auditors: give --canaries FILE")
    deltas = [parse_delta(d) for d in split_list(ns.delta or TRADEOFF_DELTA, "delta")]
    confidence = parse_rational(ns.confidence or TRADEOFF_CONFIDENCE, "confidence")
    if not 0 < confidence < 1:
        raise InputError(f"confidence {fraction_text(confidence)} must lie strictly between 0 and 1")
    canaries = [read_scores(path) for path in split_list(ns.canaries, "--canaries")] if canaries_given else []

    curves = _available([n for n in names if TRADEOFF_PEERS[n].kind == "curve"], load_curve)
    if auditors and not canaries_given:
        for name in auditors:
            print(f"rdp-verify: skipping {name}: an auditor needs canary scores: --canaries FILE", file=sys.stderr)
        auditors = []
    auditors = _available(auditors, load_auditor)
    if not curves and not auditors:
        raise UsageError("no requested peer is installed (see the messages above)")

    from ..foundations.parallel import progress_map
    from ..reference.dp_compare import grid_targets
    from ..reference.tradeoff_peers import CurveTarget, compare_auditors, compare_curves, table
    from ..tradeoff.curve import tradeoff

    points = []
    with workers(ns) as pool:
        if curves:
            targets = []
            for phase in phases:
                trade = tradeoff([phase], fprs=alphas,
                                 mapper=lambda fn, items: progress_map(fn, items, pool, "discretising steps"))
                targets += [CurveTarget(phase, a, *trade.f(a)) for a in alphas]
            points += compare_curves(curves, targets)
        if auditors:
            brackets = [t for phase in phases for t in grid_targets([phase.q], [phase.sigma], [phase.steps], deltas,
                                                                     pool)]
            points += compare_auditors(auditors, canaries, brackets, confidence)
    lines = ["runs: " + "; ".join(f"q={fraction_text(p.q)} sigma={fraction_text(p.sigma)} steps={p.steps}"
                                  for p in phases) + " (Poisson, add/remove)"]
    if curves:
        lines += [f"alpha: {', '.join(decimal_text(a, 3) for a in alphas)}",
                  "beta(alpha) against the proven [f_lower, f_upper]: unsafe above f_upper (claims more privacy than "
                  "the run has), conservative below f_lower"]
    if auditors:
        lines += [f"canaries: {c.label} ({len(c.members)} members, {len(c.non_members)} non-members)"
                  for c in canaries]
        lines += [f"epsilon lower bounds at delta {', '.join(decimal_text(d, 3) for d in deltas)}, confidence "
                  f"{fraction_text(confidence)}, against the proven epsilon(delta) bracket: unsafe above its upper end "
                  "(more leakage than the run has), conservative below its lower end"]
    text = "\n".join(lines) + "\n\n" + table(points)
    if ns.json is not None:
        emit([p.to_json() for p in points], None if ns.json == "-" else ns.json)
    print(text, end="", file=sys.stderr if ns.json == "-" else sys.stdout)
    return 1 if any(p.classification in ("unsafe", "failed") for p in points) else 0


def cmd_compare(ns: argparse.Namespace) -> int:
    if ns.tradeoff:
        return cmd_tradeoff(ns)
    if ns.canaries is not None or ns.confidence is not None:
        raise UsageError("--canaries and --confidence need --tradeoff (the auditors' comparison)")
    if ns.dp:
        names, grid = _names(ns.against, DP_PEERS), _dp_grid(ns)
        from ..reference import dp_compare

        def compute_dp(names: list[str], pool: Any) -> tuple[list[Any], str]:
            if grid is None:
                targets = dp_compare.default_targets()
                text = (f"{len(golden_dp.RUNS) + len(golden_dp.SAMPLER_RUNS)} runs x delta "
                        f"{', '.join(golden_dp.DELTAS)} (the golden (epsilon, delta) rows; docs/library-authors.md)")
            else:
                *axes, kind = grid[0]
                targets, text = dp_compare.grid_targets(*axes, pool, **kind), grid[1]
            return dp_compare.compare_dp(names, targets, pool), text

        return _report(ns, names, load_dp, compute_dp, dp_compare.summary, dp_compare.plot, ("unsafe", "failed"))
    if ns.steps or ns.delta or ns.neighbours or ns.dataset_size:
        raise UsageError("--steps, --delta, --neighbours and --dataset-size need --dp (the (epsilon, delta) comparison)")
    names = _names(ns.against, PEERS)
    q = tuple(map(parse_q, split_list(ns.q, "q"))) if ns.q else None
    sigma = tuple(map(parse_sigma, split_list(ns.sigma, "sigma"))) if ns.sigma else None
    alpha = tuple(parse_alphas(ns.alpha)) if ns.alpha else None
    from ..reference.compare import DEFAULT_GRID, compare, plot, summary

    grid = Grid(q or DEFAULT_GRID.q, sigma or DEFAULT_GRID.sigma, alpha or DEFAULT_GRID.alpha)
    return _report(ns, names, load, lambda names, pool: (compare(names, grid, pool), grid), summary, plot,
                   ("unsafe", "non-finite"))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="test float64 accountants against certified values: one-step RDP, (epsilon, delta) of runs with --dp, "
             "trade-off curves and canary auditors with --tradeoff",
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
            "the default grid (docs/library-authors.md).\n"
            "\n"
            "With --dp: (epsilon, delta) accountants (dp_accounting_pld, dp_accounting_rdp, prv_accountant,\n"
            "opacus_rdp, opacus_prv, autodp) on whole runs (q, sigma, steps) at delta, against proven epsilon(delta)\n"
            "brackets [lo, hi]: exact (lo <= x <= hi + the peer's stated error), conservative (above),\n"
            "unsafe (x < lo: the claim (x, delta)-DP is false) and failed (inf, NaN or raised). Default\n"
            "grid: the golden (epsilon, delta) rows "
            f"(certificates/golden-dp-v{golden_dp.FORMAT_VERSION}.csv). Replace-one runs\n"
            "(--neighbours replace-one) go to dp_accounting_pld_replace_one, fixed-size batches\n"
            "(--dataset-size N: batches of q*N) to dp_accounting_rdp_fixed; each peer sees only its kind.\n"
            "\n"
            "With --tradeoff: trade-off curves (f-DP) of Poisson add/remove runs (q, sigma, steps) and\n"
            "auditors' epsilon estimates, against proven envelopes. A peer's type-II error beta(alpha)\n"
            "(riskcal, dp_accounting_pld) is held against [f_lower, f_upper] (rdp-verify tradeoff):\n"
            "unsafe above f_upper (some test has a lower type-II error: the run is less private than the\n"
            "peer says), conservative below f_lower, exact inside. jax_privacy's auditors\n"
            "(jax_privacy_clopper_pearson, jax_privacy_gdp, jax_privacy_one_run, jax_privacy_one_run_fdp)\n"
            "give an empirical epsilon lower bound from --canaries (score,member CSV) at --delta and\n"
            "--confidence, held against the run's proven epsilon(delta) bracket: unsafe above its upper\n"
            "end (more leakage than the run has: on canaries of an honest run the estimate is wrong),\n"
            "conservative below its lower end, exact inside. Default runs:\n" +
            "; ".join(f"q={q} sigma={s} steps={t}" for q, s, t in TRADEOFF_RUNS) + " (docs/library-authors.md)."
        ),
        epilog=("Exit codes: 0 every point exact or conservative, 1 some point unsafe or non-finite, 2 bad input.\n"
                "Example: rdp-verify compare --against dp_accounting_rdp,opacus_rdp --jobs 2 --plot compare.png\n"
                "Example: rdp-verify compare --dp --against all --plot compare-dp.png\n"
                "Example: rdp-verify compare --tradeoff --against all --q 1 --sigma 2 --steps 4 "
                "--canaries examples/canaries-mu1.csv"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--against", required=True, metavar="NAME[,NAME...]",
                   help=f"peers: {', '.join(PEERS)}, or all; with --dp: {', '.join(DP_PEERS)}, or all; "
                        f"with --tradeoff: {', '.join(TRADEOFF_PEERS)}, or all; "
                        "a library's name (dp_accounting, opacus, jax_privacy) means each of its accountants; "
                        "a missing one is skipped with a message")
    p.add_argument("--dp", action="store_true",
                   help="compare (epsilon, delta) accountants on whole runs against proven epsilon(delta) brackets "
                        "(classes exact, conservative, unsafe, failed)")
    p.add_argument("--tradeoff", action="store_true",
                   help="compare trade-off curves (riskcal, dp_accounting_pld) and auditors' epsilon (jax_privacy) "
                        "against proven envelopes (classes exact, conservative, unsafe, failed)")
    p.add_argument("--steps", help="with --dp or --tradeoff: numbers of steps, comma list (default grid: see above)")
    p.add_argument("--delta", help="with --dp: deltas, comma list; with --tradeoff: the auditors' deltas "
                                   f"(default {TRADEOFF_DELTA})")
    add_input(p, "--canaries", many=True, metavar="FILE[,FILE...]",
                   help="with --tradeoff: canary scores (score,member CSV, as for rdp-verify audit) for the auditors")
    p.add_argument("--confidence", help=f"with --tradeoff: the auditors' confidence, 1 - significance "
                                        f"(default {TRADEOFF_CONFIDENCE})")
    p.add_argument("--neighbours", choices=("add-remove", "replace-one"),
                   help="with --dp: the neighbour relation of the grid's runs (default add-remove)")
    p.add_argument("--dataset-size", dest="dataset_size",
                   help="with --dp: fixed-size batches of q*N from N records instead of Poisson sampling (needs "
                        "--neighbours replace-one)")
    p.add_argument("--q", help="sampling rates, comma list (default: 1e-4,1e-3,0.01,0.1,0.5)")
    p.add_argument("--sigma", help="noise multipliers, comma list (default: 0.5,1,2.5,5,10,25,50,100)")
    p.add_argument("--alpha", help="orders, comma list (default: 1.01,1.1,...,1.5, 2 to 100 step 0.5, 128 to 2048); "
                                   f"with --tradeoff: type-I errors (default {TRADEOFF_ALPHAS})")
    p.add_output("--json", kind="file", stdout=True, metavar="FILE",
                 help="write the points as a JSON list to FILE ('-' for stdout)")
    p.add_output("--plot", kind="plot", metavar="FILE",
                 help="plot the relative error over the grid to FILE (.png, .svg or .pdf)")
    add_parallel_arguments(p, "the grid's points")
    p.set_defaults(func=cmd_compare)
