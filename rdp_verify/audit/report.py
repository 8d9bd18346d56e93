"""Audit a reported (ε, δ) of a DP-SGD run against RDP accounting: the ``audit`` subcommand.

For each conversion (:mod:`rdp_verify.accounting.rdp`) the best ε over **all real
orders** α > 1 is bracketed by proven bounds (:mod:`rdp_verify.accounting.optimal_order`),
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
methods, :func:`rdp_verify.certificates.certify.certify`), one per distinct (q, σ) of the run.
If the claim names an order list, ε over that list is reported as well, with the
digits it prints to, to show whether the authors' figure is reproduced.

The run is assumed to be the SGM of Mironov–Talwar–Zhang 2019 (Poisson sampling,
add/remove-one neighbours, ℓ2-sensitivity 1, σ the noise multiplier), composed
over its steps (Mironov 2017, Proposition 1).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from ..accounting.optimal_order import RTOL, optimal_epsilon
from ..accounting.rdp import DPS, composed_rdp, delta_from_rdp, epsilon_at_orders
from ..certificates.certificate import seal
from ..certificates.certify import ASSUMPTIONS, certify
from ..foundations.decimals import decimal_text
from ..foundations.inputs import SGM, fraction_text
from ..foundations.results import Bounded
from .claims import Claim

__all__ = ["audit_claim", "verdict_of", "summary", "report_table", "FORMAT", "FORMAT_VERSION"]

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
