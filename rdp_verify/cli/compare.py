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
    parse_sigma,
    parse_steps,
    parse_whole,
)
from ..foundations.run import Phase
from ..reference import golden_dp
from ..reference.dp_peers import DP_PEERS, load_dp
from ..reference.grid import Grid
from ..reference.peers import PEERS, PeerUnavailable, load
from .common import UsageError, add_parallel_arguments, emit, split_list, workers

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


def cmd_compare(ns: argparse.Namespace) -> int:
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
        help="test float64 accountants against certified values: one-step RDP, or (epsilon, delta) of runs with --dp",
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
            "(--dataset-size N: batches of q*N) to dp_accounting_rdp_fixed; each peer sees only its kind."
        ),
        epilog=("Exit codes: 0 every point exact or conservative, 1 some point unsafe or non-finite, 2 bad input.\n"
                "Example: rdp-verify compare --against dp_accounting_rdp,opacus_rdp --jobs 2 --plot compare.png\n"
                "Example: rdp-verify compare --dp --against all --plot compare-dp.png"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--against", required=True, metavar="NAME[,NAME...]",
                   help=f"peers: {', '.join(PEERS)}, or all; with --dp: {', '.join(DP_PEERS)}, or all; "
                        "a library's name (dp_accounting, opacus) means each of its accountants; "
                        "a missing one is skipped with a message")
    p.add_argument("--dp", action="store_true",
                   help="compare (epsilon, delta) accountants on whole runs against proven epsilon(delta) brackets "
                        "(classes exact, conservative, unsafe, failed)")
    p.add_argument("--steps", help="with --dp: numbers of steps, comma list (default grid: see above)")
    p.add_argument("--delta", help="with --dp: deltas, comma list")
    p.add_argument("--neighbours", choices=("add-remove", "replace-one"),
                   help="with --dp: the neighbour relation of the grid's runs (default add-remove)")
    p.add_argument("--dataset-size", dest="dataset_size",
                   help="with --dp: fixed-size batches of q*N from N records instead of Poisson sampling (needs "
                        "--neighbours replace-one)")
    p.add_argument("--q", help="sampling rates, comma list (default: 1e-4,1e-3,0.01,0.1,0.5)")
    p.add_argument("--sigma", help="noise multipliers, comma list (default: 0.5,1,2.5,5,10,25,50,100)")
    p.add_argument("--alpha", help="orders, comma list (default: 1.01,1.1,...,1.5, 2 to 100 step 0.5, 128 to 2048)")
    p.add_output("--json", kind="file", stdout=True, metavar="FILE",
                 help="write the points as a JSON list to FILE ('-' for stdout)")
    p.add_output("--plot", kind="plot", metavar="FILE",
                 help="plot the relative error over the grid to FILE (.png, .svg or .pdf)")
    add_parallel_arguments(p, "the grid's points")
    p.set_defaults(func=cmd_compare)
