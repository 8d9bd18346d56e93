"""``rdp-verify cdp``: certified claims in the CDP family (see :mod:`rdp_verify.cdp.concentrated`).

Sub-commands: ``zcdp``, ``tcdp``, ``best-rho``, ``largest-omega``, ``concentrated``,
``compose``, ``dp``. Each prints a short summary, or with ``--json`` / ``--out FILE`` the
sealed certificate. Exit 0 when the claim holds (or the bracket is proven), 1 when it
is refuted or inconclusive, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from typing import Any, Callable

from ..cdp.options import CONVENTIONS
from ..foundations.inputs import InputError, parse_delta, parse_dps, parse_q, parse_rational, parse_sigma
from .common import emit

__all__ = ["register"]

# a claim as the name of its function in rdp_verify.cdp.concentrated and the arguments read from the flags
Call = tuple[str, tuple[Any, ...]]
Build = Callable[[argparse.Namespace], Call]

EPILOG = "Exit codes: 0 holds, 1 refuted or inconclusive, 2 bad input. Numbers are exact: 0.1 means 1/10."


def _nonneg(text: str, name: str) -> Fraction:
    x = parse_rational(text, name)
    if x < 0:
        raise InputError(f"{name}={text.strip()} must be non-negative")
    return x


def _positive(text: str, name: str) -> Fraction:
    x = parse_rational(text, name)
    if x <= 0:
        raise InputError(f"{name}={text.strip()} must be positive")
    return x


def _delta(text: str | None) -> Fraction | None:
    if text is None:
        return None
    return parse_delta(text)


def _summary(cert: dict[str, Any]) -> str:
    """A few readable lines: claim, verdict, the key numbers, the witness, the proof."""
    mech = cert["mechanism"]
    name = mech["name"] + (f"(q={mech['q']}, sigma={mech['sigma']})" if "sigma" in mech else "")
    params = ", ".join(f"{k}={v}" for k, v in cert["claim"]["parameters"].items())
    lines = [f"{cert['claim']['notion']} of {name}" + (f" with {params}" if params else ""),
             f"verdict: {cert['verdict']}"]
    for key in ("best_rho", "largest_omega", "order_bracket", "expected_loss", "theorem_3_5_mean_bound",
                "optimal_tau_squared", "parts", "theorem_bound", "direct", "exact"):
        if key in cert:
            lines.append(f"{key}: {json.dumps(cert[key], ensure_ascii=False)}")
    if "witness" in cert:
        lines.append(f"witness: {json.dumps(cert['witness'], ensure_ascii=False)}")
    if "implies" in cert:
        lines.append(f"implies: {json.dumps(cert['implies'], ensure_ascii=False)}")
    lines.append(f"proof: {cert['proof']}")
    return "\n".join(lines) + "\n"


def _run(build: Build) -> Callable[[argparse.Namespace], int]:
    def handler(ns: argparse.Namespace) -> int:
        name, args = build(ns)  # every flag is read before the engines load
        from ..cdp import concentrated

        cert = getattr(concentrated, name)(*args)
        if ns.json or ns.out:
            emit(cert, ns.out)
        else:
            print(_summary(cert), end="")
        return 0 if cert["verdict"] == "holds" else 1
    return handler


def _zcdp(ns: argparse.Namespace) -> Call:
    return "zcdp", (parse_q(ns.q), parse_sigma(ns.sigma), _nonneg(ns.rho, "rho"), _nonneg(ns.xi, "xi"),
                    _delta(ns.delta), parse_dps(ns.dps))


def _tcdp(ns: argparse.Namespace) -> Call:
    return "tcdp", (parse_q(ns.q), parse_sigma(ns.sigma), _nonneg(ns.rho, "rho"), _positive(ns.omega, "omega"),
                    ns.convention, parse_dps(ns.dps))


def _best_rho(ns: argparse.Namespace) -> Call:
    omega = None if ns.omega is None else _positive(ns.omega, "omega")
    return "best_rho", (parse_q(ns.q), parse_sigma(ns.sigma), omega, ns.convention, parse_dps(ns.dps))


def _largest_omega(ns: argparse.Namespace) -> Call:
    return "largest_omega", (parse_q(ns.q), parse_sigma(ns.sigma), _nonneg(ns.rho, "rho"), ns.convention,
                             parse_dps(ns.dps))


def _concentrated(ns: argparse.Namespace) -> Call:
    return "concentrated", (parse_q(ns.q), parse_sigma(ns.sigma), _nonneg(ns.mu, "mu"), _positive(ns.tau, "tau"),
                            ns.group, _delta(ns.delta), parse_dps(ns.dps))


def _compose(ns: argparse.Namespace) -> Call:
    parts = ns.sigma.split(",")
    if any(not p.strip() for p in parts):
        raise InputError(f"sigma list {ns.sigma!r} has an empty entry")
    return "compose", ([parse_sigma(p) for p in parts],)


def _dp(ns: argparse.Namespace) -> Call:
    stay = _nonneg(ns.stay, "stay")
    if stay >= 1:
        raise InputError(f"stay={ns.stay.strip()} must be below 1")
    return "dp_to_cdp", (_positive(ns.epsilon, "epsilon"), stay, None if ns.mu is None else _nonneg(ns.mu, "mu"),
                         None if ns.tau is None else _positive(ns.tau, "tau"))


def _common(p: argparse.ArgumentParser, sgm: bool = True) -> None:
    if sgm:
        p.add_argument("--q", default="1", help="sampling rate in (0, 1]; omitted or 1 = the plain Gaussian mechanism")
        p.add_argument("--sigma", required=True, help="noise multiplier (noise std / l2-sensitivity), e.g. 2")
        p.add_argument("--dps", default="20", help="digits of the Arb enclosures (default 20)")
    p.add_argument("--json", action="store_true", help="print the JSON certificate instead of the summary")
    p.add_output("--out", kind="file", metavar="FILE", help="write the JSON certificate to FILE (atomically)")


def _convention(p: argparse.ArgumentParser) -> None:
    p.add_argument("--convention", choices=sorted(CONVENTIONS), default="mtz19",
                   help="tCDP order range: mtz19 (Definition 12: alpha in (1, omega+1), default) or bdrs18 (alpha in (1, omega))")


def register(subparsers: argparse._SubParsersAction) -> None:
    top = subparsers.add_parser(
        "cdp",
        help="certify claims in the CDP family: zCDP, tCDP, (mu, tau)-CDP, composition, DP => CDP",
        description=("Certified claims about the privacy-loss random variable of the Gaussian mechanism and the\n"
                     "Sampled Gaussian Mechanism (Dwork-Rothblum 2016; Mironov-Talwar-Zhang 2019, Section 4).\n"
                     "Each verdict is holds (proven for every order / lambda), refuted (with a witness) or\n"
                     "inconclusive (neither within the budget)."),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = top.add_subparsers(dest="cdp_command", metavar="CLAIM", parser_class=type(top))
    sub.required = True

    def add(name: str, help_text: str, example: str, build: Build) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=f"Example: {example}\n{EPILOG}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=_run(build))
        return p

    p = add("zcdp", "(xi, rho)-zCDP: D_alpha <= xi + rho*alpha for every alpha > 1",
            "rdp-verify cdp zcdp --q 0.01 --sigma 1 --rho 0.001", _zcdp)
    p.add_argument("--rho", required=True, help="claimed rho >= 0")
    p.add_argument("--xi", default="0", help="(xi, rho)-zCDP; default 0 (rho-zCDP)")
    p.add_argument("--delta", help="also report the implied (epsilon, delta)-DP")
    _common(p)

    p = add("tcdp", "(rho, omega)-tCDP: D_alpha <= rho*alpha on the order range of omega",
            "rdp-verify cdp tcdp --q 0.01 --sigma 1 --rho 0.001 --omega 5", _tcdp)
    p.add_argument("--rho", required=True, help="claimed rho >= 0")
    p.add_argument("--omega", required=True, help="claimed omega > 0 (see --convention)")
    _convention(p)
    _common(p)

    p = add("best-rho", "the smallest rho with (rho, omega)-tCDP, or rho-zCDP without --omega",
            "rdp-verify cdp best-rho --q 0.01 --sigma 1 --omega 5", _best_rho)
    p.add_argument("--omega", help="tCDP omega; omitted: the best zCDP rho")
    _convention(p)
    _common(p)

    p = add("largest-omega", "the largest omega with (rho, omega)-tCDP, as a proven bracket",
            "rdp-verify cdp largest-omega --q 0.01 --sigma 1 --rho 0.001", _largest_omega)
    p.add_argument("--rho", required=True, help="rho >= 0")
    _convention(p)
    _common(p)

    p = add("concentrated", "Dwork-Rothblum (mu, tau)-CDP: E[L] <= mu and L - E[L] tau-subgaussian",
            "rdp-verify cdp concentrated --sigma 2 --mu 0.125 --tau 0.5", _concentrated)
    p.add_argument("--mu", required=True, help="claimed bound on the expected loss")
    p.add_argument("--tau", required=True, help="claimed subgaussian standard > 0")
    p.add_argument("--group", type=int, default=1, help="group size s (Gaussian mechanism only, Corollary 3.3)")
    p.add_argument("--delta", help="also report the implied (epsilon, delta)-DP")
    _common(p)

    p = add("compose", "Theorem 3.4 for Gaussian mechanisms vs the exact composed loss",
            "rdp-verify cdp compose --sigma 1,2,3", _compose)
    p.add_argument("--sigma", required=True, help="comma-separated noise multipliers")
    _common(p, sgm=False)

    p = add("dp", "Theorem 3.5 (DP => CDP) on eps-DP randomized response / an antipodal pair",
            "rdp-verify cdp dp --epsilon 1", _dp)
    p.add_argument("--epsilon", required=True, help="the pure DP epsilon > 0")
    p.add_argument("--stay", default="0", help="mass r of the no-information outcome (0 = randomized response)")
    p.add_argument("--mu", help="claimed mean bound (default eps(e^eps - 1)/2)")
    p.add_argument("--tau", help="claimed subgaussian standard (default eps)")
    _common(p, sgm=False)
