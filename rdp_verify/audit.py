"""Audit a reported (ε, δ) of a DP-SGD run against RDP accounting: the ``audit`` subcommand.

For each conversion (:mod:`rdp_verify.accounting`) the best ε over **all real
orders** α > 1 is bracketed by proven bounds (:mod:`rdp_verify.optimal_order`),
[ε_lo, ε_hi], and the reported ε is judged:

* ``holds`` -- ε_hi ≤ reported: RDP accounting with this conversion proves the
  run (ε_reported, δ)-DP, at the order ``optimal_order``;
* ``unsupported`` -- ε_lo > reported: no order α > 1 gives the reported ε under
  this conversion. This is **not** proof that the run is not (ε, δ)-DP: a
  tighter conversion or accountant (e.g. PLD) may still back it;
* ``inconclusive`` -- the bracket contains the reported value, or a certificate
  at the optimal order did not certify.

Over several conversions a claim holds if one of them proves it, is unsupported
if all of them refute it, else inconclusive; ``epsilon`` is then [min ε_lo, min ε_hi].
Behind each verdict are the certificates of ε_α at the optimal order (all four
methods, :func:`rdp_verify.certify.certify`), one per distinct (q, σ) of the run.
If the claim names an order list, ε over that list is reported as well, with the
digits it prints to, to show whether the authors' figure is reproduced.

The run is assumed to be the SGM of Mironov–Talwar–Zhang 2019 (Poisson sampling,
add/remove-one neighbours, ℓ2-sensitivity 1, σ the noise multiplier), composed
over its steps (Mironov 2017, Proposition 1).
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from .accounting import CONVERSIONS, DPS, composed_rdp, delta_from_rdp, epsilon_at_orders
from .certificate import seal
from .certify import ASSUMPTIONS, certify
from .claims import STEP_CONVENTIONS, Claim, parse_claim, read_claims
from .cli import UsageError, emit, progress_map
from .decimals import decimal_text
from .inputs import SGM, InputError, fraction_text, parse_dps
from .optimal_order import RTOL, optimal_epsilon
from .order_lists import ORDER_LISTS
from .results import Bounded, MethodUnavailable

__all__ = ["audit_claim", "verdict_of", "report_table", "register", "FORMAT", "FORMAT_VERSION"]

FORMAT = "rdp_verify audit"
FORMAT_VERSION = 1
DIGITS = 10  # significant digits of printed bounds (rounded outward)
UNSUPPORTED_NOTE = ("'unsupported' means RDP accounting under this conversion cannot give the reported epsilon; "
                    "it is not proof that the run is not private (a tighter accountant may still back it)")


def verdict_of(lower: Fraction, upper: Fraction, reported: Fraction) -> str:
    """``holds`` if upper ≤ reported, ``unsupported`` if lower > reported, else ``inconclusive``."""
    if upper <= reported:
        return "holds"
    if lower > reported:
        return "unsupported"
    return "inconclusive"


def _interval(lower: Fraction, upper: Fraction) -> dict[str, str]:
    return {"lower": decimal_text(lower, DIGITS, "down"), "upper": decimal_text(upper, DIGITS, "up")}


def _printed(x: Fraction, like: str) -> str | None:
    """x rounded to the decimal places of the reported text ``like`` (None if ``like`` is a ratio)."""
    try:
        exponent = Decimal(like).as_tuple().exponent
    except InvalidOperation:
        return None
    return str(Decimal(round(x / Fraction(10) ** exponent)).scaleb(exponent))


def _order_list(claim: Claim, conversion: str, dps: int) -> dict[str, Any] | None:
    if claim.orders is None:
        return None
    r = epsilon_at_orders(claim.phases, claim.delta, conversion, claim.orders, dps)
    lo, hi = _printed(r.epsilon.lower, claim.epsilon_text), _printed(r.epsilon.upper, claim.epsilon_text)
    printed = lo if lo == hi else None  # None: the enclosure straddles a rounding boundary
    return {
        "name": claim.orders_name or "given",
        "count": len(claim.orders),
        "best_order": fraction_text(r.best_order),
        "epsilon": _interval(r.epsilon.lower, r.epsilon.upper),
        "printed": printed,
        "reproduces_reported": None if printed is None else Decimal(printed) == Decimal(claim.epsilon_text),
    }


def _certificates(claim: Claim, alpha: Fraction, dps: int) -> list[dict[str, Any]]:
    pairs = dict.fromkeys((p.q, p.sigma) for p in claim.phases)
    return [seal(certify(SGM(q, sigma, alpha), dps)) for q, sigma in pairs]


def _audit_conversion(claim: Claim, conversion: str, dps: int, rtol: Fraction) -> tuple[dict[str, Any], Bounded]:
    """The report entry of one conversion, and its exact bracket of the best ε."""
    opt = optimal_epsilon(claim.phases, claim.delta, conversion, rtol=rtol, dps=dps)
    lo, hi = opt.epsilon.lower, opt.epsilon.upper
    verdict = verdict_of(lo, hi, claim.epsilon)
    certs = _certificates(claim, opt.order, dps)
    notes = []
    if any(c["verdict"] != "certified" for c in certs):
        verdict = "inconclusive"
        notes.append("a certificate at the optimal order is not 'certified': the methods disagree")
    delta = delta_from_rdp(composed_rdp(claim.phases, opt.order, dps), opt.order, claim.epsilon, conversion)
    entry = {
        "verdict": verdict,
        "epsilon": _interval(lo, hi),
        "margin": decimal_text(claim.epsilon - hi, 6, "down"),
        "optimal_order": fraction_text(opt.order),
        "search": {"orders": "all real alpha > 1", "rigorous_evaluations": opt.evaluations,
                   "converged": opt.converged, "relative_tolerance": fraction_text(rtol)},
        "delta_at_reported_epsilon": {"upper": decimal_text(delta.upper, 6, "up"), "order": fraction_text(opt.order)},
        "order_list": _order_list(claim, conversion, dps),
        "notes": notes,
        "certificates": certs,
    }
    return entry, opt.epsilon


def audit_claim(claim: Claim, dps: int = DPS, rtol: Fraction = RTOL) -> dict[str, Any]:
    """The audit report of one claim (a JSON-ready dict; see the module docstring)."""
    audited = {c: _audit_conversion(claim, c, dps, rtol) for c in claim.conversions}
    per = {c: entry for c, (entry, _) in audited.items()}
    verdicts = {v["verdict"] for v in per.values()}
    verdict = "holds" if "holds" in verdicts else "unsupported" if verdicts == {"unsupported"} else "inconclusive"
    best = min(audited, key=lambda c: audited[c][1].upper)
    lo = min(bracket.lower for _, bracket in audited.values())
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "claim": claim.to_json(),
        "assumptions": {**ASSUMPTIONS, "composition": "RDP adds over steps and phases, per order (Mironov 2017, Prop. 1)"},
        "verdict": verdict,
        "conversion": best,
        "epsilon": _interval(lo, audited[best][1].upper),
        "margin": per[best]["margin"],
        "optimal_order": per[best]["optimal_order"],
        "conversions": per,
        "note": UNSUPPORTED_NOTE,
    }


def _run_text(claim: dict[str, Any]) -> str:
    parts = [f"q = {p['q']}, sigma = {p['sigma']}, steps = {p['steps']}"
             + ("" if p["steps_from"] == "given" else f" [{p['steps_from']}]") for p in claim["phases"]]
    return "; ".join(parts) + f"; delta = {claim['delta']}"


def summary(report: dict[str, Any]) -> str:
    """A few human-readable lines for one audit report."""
    claim = report["claim"]
    lines = [f"claim {claim['id']}: {_run_text(claim)}; reported epsilon = {claim['epsilon']}"]
    for name, c in report["conversions"].items():
        e = c["epsilon"]
        lines.append(f"  {name}: best epsilon over all real alpha in [{e['lower']}, {e['upper']}] "
                     f"(alpha = {c['optimal_order']}): {c['verdict']}, margin {c['margin']}")
        ol = c["order_list"]
        if ol is not None:
            lines.append(f"    order list {ol['name']} ({ol['count']} orders): epsilon {ol['epsilon']['upper']} "
                         f"at alpha = {ol['best_order']}, prints as {ol['printed']} (reported {claim['epsilon']})")
        lines += [f"    note: {n}" for n in c["notes"]]
    lines.append(f"verdict: {report['verdict']}")
    if report["verdict"] == "unsupported":
        lines.append(f"  ({UNSUPPORTED_NOTE})")
    return "\n".join(lines)


def report_table(reports: list[dict[str, Any]]) -> str:
    """A Markdown table, one row per claim and conversion, and a count of verdicts."""
    head = ["claim", "delta", "reported ε", "conversion", "ε over all α > 1 (proven)", "α*",
            "ε on the order list → printed", "verdict"]
    rows = [head, ["---"] * len(head)]
    for r in reports:
        claim = r["claim"]
        for name, c in r["conversions"].items():
            ol = c["order_list"]
            listed = "—" if ol is None else (
                f"{decimal_text(Fraction(ol['epsilon']['upper']), 6, 'up')} (α = {ol['best_order']}) → {ol['printed']}"
                + (" ✓" if ol["reproduces_reported"] else ""))
            e = c["epsilon"]
            rows.append([claim["id"], claim["delta"], claim["epsilon"], name,
                         f"[{decimal_text(Fraction(e['lower']), 6, 'down')}, {decimal_text(Fraction(e['upper']), 6, 'up')}]",
                         c["optimal_order"], listed, c["verdict"]])
    counts = {v: sum(r["verdict"] == v for r in reports) for v in ("holds", "unsupported", "inconclusive")}
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.append("")
    lines.append(f"{len(reports)} claim(s): " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return "\n".join(lines)


# -- command line -----------------------------------------------------------------------------

_SINGLE = ("q", "batch_size", "dataset_size", "sigma", "steps", "epochs", "step_convention",
           "delta", "epsilon", "conversion", "orders")


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def _audit_one(args: tuple[Claim, int]) -> dict[str, Any]:
    return audit_claim(*args)


def cmd_audit(ns: argparse.Namespace) -> int:
    dps = parse_dps(ns.dps)
    given = {f: getattr(ns, f) for f in _SINGLE if getattr(ns, f) is not None}
    if ns.claims is not None:
        if given:
            raise UsageError(f"--claims cannot be combined with {_flag(next(iter(given)))}")
        claims = read_claims(ns.claims)
    elif not given:
        raise UsageError("give the run and the claim (e.g. --q, --sigma, --steps, --delta, --epsilon) or --claims FILE")
    else:
        try:
            claims = [parse_claim(given, default_id="command-line")]
        except InputError as exc:  # name the flag, not the claims-file field
            message = str(exc).replace("missing field ", "missing ")
            for f in _SINGLE:
                message = message.replace(f"'{f}'", _flag(f))
            raise InputError(message) from None
    if ns.jobs < 1:
        raise InputError(f"--jobs {ns.jobs}: must be at least 1")
    try:
        reports = progress_map(_audit_one, [(c, dps) for c in claims], ns.jobs, "auditing")
    except MethodUnavailable as exc:  # the engine could not enclose some ε_α: no verdict at all
        print(f"rdp-verify: audit failed: {exc}", file=sys.stderr)
        return 1
    single = ns.claims is None
    payload = reports[0] if single else reports
    if ns.out is not None:
        emit(payload, ns.out)
    if ns.json:
        emit(payload, None)
    else:
        print(summary(reports[0]) if single else report_table(reports))
    return 0 if all(r["verdict"] == "holds" for r in reports) else 1


def register(subparsers: Any) -> None:
    """Add the ``audit`` subcommand (see :mod:`rdp_verify.cli`)."""
    p = subparsers.add_parser(
        "audit",
        help="check a reported (epsilon, delta) of a DP-SGD run against RDP accounting",
        description=(
            "Is a reported epsilon of a DP-SGD run backed by RDP accounting? Composes the certified RDP\n"
            "of the Sampled Gaussian Mechanism over the run's steps, converts it to (epsilon, delta) and\n"
            "brackets the best epsilon over ALL real orders alpha > 1 by proven bounds. Verdict per\n"
            "conversion: holds (proven upper bound <= reported), unsupported (proven lower bound >\n"
            "reported: this conversion cannot give the reported value; NOT proof the run is not private),\n"
            "or inconclusive. Conversions: mironov2017 (Mironov 2017, Prop. 3) and balle2020\n"
            "(Balle et al. 2020, Thm 21). Numbers are read exactly: 1.1 means 11/10."
        ),
        epilog=(
            "Examples:\n"
            "  rdp-verify audit --batch-size 256 --dataset-size 60000 --sigma 1.1 --epochs 60 \\\n"
            "      --step-convention ceil --delta 1e-5 --epsilon 3.01\n"
            "  rdp-verify audit --claims examples/claims.json\n"
            "Claims file: a JSON list (or {\"claims\": [...]}) or a CSV whose columns are the flags'\n"
            "names: id, source, q (or batch_size, dataset_size), sigma, steps (or epochs, step_convention),\n"
            "delta, epsilon, conversion, orders; a JSON claim may give a multi-phase run as \"phases\": [...].\n"
            "Exit codes: 0 every claim holds, 1 a claim is unsupported or inconclusive, 2 bad input."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = p.add_argument_group("the run (or --claims FILE)")
    run.add_argument("--q", help="sampling rate in (0, 1], e.g. 0.01 or 256/60000")
    run.add_argument("--batch-size", dest="batch_size", help="expected batch size; q = batch size / dataset size")
    run.add_argument("--dataset-size", dest="dataset_size", help="number of training records N")
    run.add_argument("--sigma", help="noise multiplier (noise std / clipping norm)")
    run.add_argument("--steps", help="number of SGM steps T (whole number >= 1)")
    run.add_argument("--epochs", help="epochs instead of --steps: steps = epochs / q, rounded by --step-convention")
    run.add_argument("--step-convention", dest="step_convention", choices=STEP_CONVENTIONS,
                     help="with --epochs: exact (default; epochs/q must be whole), ceil (TF Privacy's "
                          "compute_dp_sgd_privacy) or floor (TF Privacy's MNIST tutorials)")
    claim = p.add_argument_group("the claim")
    claim.add_argument("--delta", help="reported delta, 0 < delta < 1")
    claim.add_argument("--epsilon", help="reported epsilon >= 0, as printed (its digits are what is reproduced)")
    claim.add_argument("--conversion", choices=(*CONVERSIONS, "both"), help="default both")
    claim.add_argument("--orders", help="also evaluate on this order list: a comma list, or one of "
                                        + ", ".join(ORDER_LISTS))
    p.add_argument("--claims", metavar="FILE", help="audit every claim of a JSON or CSV file and print a table")
    p.add_argument("--json", action="store_true", help="print the full JSON report (a list with --claims)")
    p.add_argument("--out", metavar="FILE", help="also write the JSON report to FILE (atomically)")
    p.add_argument("--dps", default=str(DPS), help=f"digits of each RDP enclosure and certificate (default {DPS})")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for a claims file (default 1)")
    p.set_defaults(func=cmd_audit)
