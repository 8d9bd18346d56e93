"""Audit a reported (ε, δ) of a DP-SGD run: can it be proven, or proven false? The ``audit`` subcommand.

Two accountants judge a claim (ε_rep, δ_rep) of a run (``accountant``: ``rdp``, ``pld`` or ``all``,
the default):

**pld** -- the run's privacy curve bracketed from both sides (:mod:`rdp_verify.curves`): a proven
bracket [ε_lo, ε_hi] of ε(δ_rep), the smallest ε for which the mechanism is (ε, δ_rep)-DP.

* ``holds`` -- ε_hi ≤ ε_rep: the run is proven (ε_rep, δ_rep)-DP;
* ``violated`` -- ε_lo > ε_rep: the proven lower bound of δ(ε_rep) exceeds δ_rep (δ_lower is
  decreasing and δ_lower(ε_lo) > δ_rep is verified), so the stated mechanism is **not**
  (ε_rep, δ_rep)-DP and the claim is false;
* ``inconclusive`` -- the bracket contains ε_rep even after tightening it (up to
  :data:`MAX_TIGHTENING` times).

**rdp** -- RDP accounting over all real orders (:mod:`rdp_verify.accounting`): for each conversion
the best ε over all orders α > 1 is bracketed by proven bounds, and the claim ``holds`` (proven
upper bound ≤ ε_rep), is ``unsupported`` (proven lower bound > ε_rep: this kind of accounting cannot
give the reported value, which is **not** proof that the run is not private) or ``inconclusive``.
Over several conversions a claim holds if one of them proves it, is unsupported if all refute it.
Behind each verdict are the certificates of ε_α at the optimal order (all four methods,
:func:`rdp_verify.certificates.certify.certify`). If the claim names an order list, ε over that
list is reported with the digits it prints to, to show whether the authors' figure is reproduced.

**The claim's verdict** (``all``): ``holds`` if an accountant proves it, ``violated`` if the PLD
bracket proves it false, ``unsupported`` if RDP is the only accountant and refutes it, else
``inconclusive``; ``decided_by`` names the accountant and the argument.

The run is the SGM of Mironov–Talwar–Zhang 2019 (Poisson sampling, add/remove-one neighbours,
ℓ2-sensitivity 1, σ the noise multiplier), composed adaptively over its steps, unless its phases name
another sampler or neighbour relation (:mod:`rdp_verify.foundations.run`). Then only the PLD accountant
audits it (the RDP accountant is the SGM's), and for shuffled or balls-in-bins runs the verdict follows
the two per-epoch proofs (:mod:`rdp_verify.curves.per_epoch`): ``violated`` when the explicit-pair lower
end exceeds the reported ε, ``holds`` when the upper end is below it (no amplification; for balls-in-bins
under zero-out the smaller of that and random allocation's, :mod:`rdp_verify.curves.random_allocation`), else
``inconclusive`` with both numbers; ``assumption`` says which proof decided, and ``as_poisson`` gives
the ε a Poisson accountant would report for the same q, σ and steps, for contrast.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from .. import __version__
from ..accounting.optimal_order import RTOL, optimal_epsilon
from ..accounting.rdp import DPS, composed_rdp, delta_from_rdp, epsilon_at_orders
from ..certificates.certificate import seal
from ..certificates.certify import ASSUMPTIONS, certify
from ..curves.accountant import DEFAULT_TOLERANCE, Bracket, bracket, delta_bracket
from ..curves.certificate import ASSUMPTIONS_BY_FAMILY, certificate_of
from ..foundations.decimals import decimal_text
from ..foundations.inputs import SGM, fraction_text
from ..foundations.results import Bounded
from ..foundations.run import Phase, run_family
from .claims import Claim

__all__ = ["audit_claim", "verdict_of", "pld_verdict", "summary", "report_table", "FORMAT", "FORMAT_VERSION",
           "SCHEMA", "MAX_TIGHTENING"]

FORMAT = "rdp_verify audit"
FORMAT_VERSION = 3  # 3: sealed (settings, software, content_hash), re-verified by rdp_verify.audit.check
SCHEMA = "audit-v3"
MAX_TIGHTENING = 2  # times the PLD bracket is tightened when it contains the reported epsilon
TIGHTEST = Fraction(1, 10**5)  # the smallest relative width an audit asks for (finer grids cost ~1/width)
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


def pld_verdict(lower: Fraction, upper: Fraction | None, reported: Fraction) -> str:
    """``holds`` if ε_upper ≤ reported, ``violated`` if ε_lower > reported, else ``inconclusive``."""
    if upper is not None and upper <= reported:
        return "holds"
    if lower > reported:
        return "violated"
    return "inconclusive"


def _audit_rdp(claim: Claim, dps: int, rtol: Fraction) -> dict[str, Any]:
    audited = {c: _audit_conversion(claim, c, dps, rtol) for c in claim.conversions}
    per = {c: entry for c, (entry, _) in audited.items()}
    verdicts = {v["verdict"] for v in per.values()}
    verdict = "holds" if "holds" in verdicts else "unsupported" if verdicts == {"unsupported"} else "inconclusive"
    best = min(audited, key=lambda c: audited[c][1].upper)
    lo = min(b.lower for _, b in audited.values())
    return {
        "verdict": verdict,
        "conversion": best,
        "epsilon": _interval(lo, audited[best][1].upper),
        "margin": per[best]["margin"],
        "optimal_order": per[best]["optimal_order"],
        "conversions": per,
    }


def _assumption(result: Any, verdict: str, allocation_order: int | None,
                add_order: Fraction | None = None) -> str | None:
    """Which proof decided a per-epoch (shuffle, balls-in-bins) run's verdict, or None for other runs;
    ``allocation_order`` is the random-allocation order behind the upper end (None: no amplification), ``add_order``
    its add direction's Renyi order (None: the shifted Gaussian)."""
    if result.method != "per-epoch bounds":
        return None
    phases = result.curves.phases
    samplers = " and ".join(dict.fromkeys(p.sampler for p in phases))
    samplers += " (zero-out neighbours)" if phases[0].neighbours == "add-remove" else " (replace-one neighbours)"
    if allocation_order is None:
        upper, name = ("the upper end without amplification (each record in at most one batch per epoch: the "
                       "Gaussian mechanism once per epoch)"), "no-amplification"
    else:
        add = ("a shifted Gaussian" if add_order is None
               else f"Renyi DP at order {add_order} of the exact pair (Laplace transform)")
        upper, name = (f"the upper end from random allocation (Feldman & Shenfeld 2025: Renyi DP at order "
                       f"{allocation_order} in the remove direction, {add} in the add direction; below "
                       "no amplification)"), "random-allocation"
    if verdict == "holds":
        return f"{samplers}: {upper} is below the reported epsilon"
    if verdict == "violated":
        return (f"{samplers}: the lower end from an explicit pair of neighbouring datasets (Chua et al. 2024) exceeds "
                "the reported epsilon")
    return f"{samplers}: the reported epsilon lies between the explicit-pair lower end and the {name} upper end"


def _as_poisson(claim: Claim, tolerance: Fraction) -> dict[str, Any] | None:
    """For a run that did not sample by Poisson with add/remove: ε(δ) of the same run had it done so (what a
    Poisson accountant reports for it), for contrast."""
    if all(p.default for p in claim.phases):
        return None
    phases = [Phase(p.q, p.sigma, p.steps) for p in claim.phases]
    result = bracket(phases, delta=claim.delta, tolerance=tolerance)
    return {"epsilon": _interval(result.lower, result.upper) if result.upper is not None else
            {"lower": decimal_text(result.lower, DIGITS, "down"), "upper": None},
            "note": "the same q, sigma and steps under Poisson sampling with add/remove neighbours, for contrast"}


def _audit_pld(claim: Claim, tolerance: Fraction) -> dict[str, Any]:
    state = {"tolerance": Fraction(tolerance), "tightened": 0}

    def tighten(best: Bracket) -> Fraction | None:
        """A tighter tolerance while the bracket contains the claim (at most MAX_TIGHTENING times), else None."""
        if (pld_verdict(best.lower, best.upper, claim.epsilon) != "inconclusive" or best.upper is None
                or state["tightened"] >= MAX_TIGHTENING or best.upper <= 0):
            return None
        gap = max(abs(claim.epsilon - best.lower), abs(best.upper - claim.epsilon))
        tighter = max(min(state["tolerance"] / 10, gap / best.upper / 2), TIGHTEST)
        if gap == 0 or tighter >= state["tolerance"]:
            return None
        state["tolerance"], state["tightened"] = tighter, state["tightened"] + 1
        return tighter

    result = bracket(claim.phases, delta=claim.delta, tolerance=tolerance, tighten=tighten)
    verdict, tightened, tolerance = pld_verdict(result.lower, result.upper, claim.epsilon), state["tightened"], \
        state["tolerance"]
    # the random-allocation orders behind the upper end, if they decided it (a per-epoch bracket's proof)
    allocation_order = getattr(result.proof, "upper_order", None)
    add_order = getattr(result.proof, "upper_add_order", None)
    at = delta_bracket(result.curves, claim.epsilon)
    upper = result.upper
    if verdict == "holds":
        argument = (f"proven epsilon({fraction_text(claim.delta)}) <= {decimal_text(upper, DIGITS, 'up')} <= "
                    f"reported {claim.epsilon_text}: the run is ({claim.epsilon_text}, {fraction_text(claim.delta)})-DP")
    elif verdict == "violated":
        argument = (f"proven delta({claim.epsilon_text}) >= {decimal_text(at.lower, 6, 'down')} > "
                    f"reported {fraction_text(claim.delta)}: the stated mechanism is not "
                    f"({claim.epsilon_text}, {fraction_text(claim.delta)})-DP")
    else:
        argument = "the proven epsilon bracket contains the reported epsilon"
    assumption = _assumption(result, verdict, allocation_order, add_order)
    return {
        "verdict": verdict,
        "argument": argument if assumption is None else f"{argument}; {assumption}",
        **({} if assumption is None else {"assumption": assumption, "as_poisson": _as_poisson(claim, tolerance)}),
        "epsilon": _interval(result.lower, upper) if upper is not None else {
            "lower": decimal_text(result.lower, DIGITS, "down"), "upper": None},
        "delta_at_reported_epsilon": {"lower": decimal_text(at.lower, 6, "down"), "upper": decimal_text(at.upper, 6, "up")},
        "margin": None if upper is None else decimal_text(claim.epsilon - upper, 6, "down"),
        "tightened": tightened,
        "certificate": certificate_of(result, delta=claim.delta, tolerance=tolerance),
    }


def audit_claim(claim: Claim, dps: int = DPS, rtol: Fraction = RTOL,
                tolerance: Fraction = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """The sealed audit report of one claim (see the module docstring): with the settings it was computed with, so
    that :func:`rdp_verify.audit.check.check_audit_report` can repeat it."""
    rdp = _audit_rdp(claim, dps, rtol) if "rdp" in claim.accountants else None
    pld = _audit_pld(claim, tolerance) if "pld" in claim.accountants else None
    if pld is not None and pld["certificate"]["verdict"] == "inconsistent":
        pld["verdict"] = "inconclusive"
        pld["argument"] = "the privacy-curve certificate is 'inconsistent': its cross-check disagrees"
    if pld is not None and pld["verdict"] in ("holds", "violated"):
        verdict, decided = pld["verdict"], {"accountant": "pld", "argument": pld["argument"]}
    elif rdp is not None and rdp["verdict"] == "holds":
        verdict = "holds"
        decided = {"accountant": "rdp", "argument": f"proven RDP epsilon <= {rdp['epsilon']['upper']} "
                   f"({rdp['conversion']}, order {rdp['optimal_order']}) <= reported {claim.epsilon_text}"}
    elif pld is None and rdp is not None and rdp["verdict"] == "unsupported":
        verdict = "unsupported"
        decided = {"accountant": "rdp", "argument": f"proven RDP epsilon >= {rdp['epsilon']['lower']} > reported "
                   f"{claim.epsilon_text}, over all orders and the audited conversions"}
    else:
        verdict, decided = "inconclusive", {"accountant": None, "argument": "no accountant decided the claim"}
    return seal({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "claim": claim.to_json(),
        "assumptions": _assumptions(claim),
        "verdict": verdict,
        "decided_by": decided,
        "accountants": {"rdp": rdp, "pld": pld},
        "note": UNSUPPORTED_NOTE,
        "settings": {"dps": dps, "relative_tolerance": fraction_text(Fraction(rtol)),
                     "tolerance": fraction_text(Fraction(tolerance))},
        "software": {"rdp_verify": __version__},
    }, SCHEMA)


def _assumptions(claim: Claim) -> dict[str, str]:
    if all(p.default for p in claim.phases):
        return {**ASSUMPTIONS, "composition": "adaptive composition over the run's steps (RDP: Mironov 2017, "
                "Prop. 1; PLD: product of dominating pairs, Zhu, Dong, Wang 2022, Thm 10)"}
    return ASSUMPTIONS_BY_FAMILY[run_family(claim.phases)]


def _run_text(claim: dict[str, Any]) -> str:
    parts = [(f"q = {p['q']}" if "sampler" not in p else
              f"{p['sampler']} (batch {p.get('batch_size', '?')} of {p.get('dataset_size', '?')}), {p['neighbours']}")
             + f", sigma = {p['sigma']}, steps = {p['steps']}"
             + ("" if p["steps_from"] == "given" else f" [{p['steps_from']}]") for p in claim["phases"]]
    return "; ".join(parts) + f"; delta = {claim['delta']}"


def summary(report: dict[str, Any]) -> str:
    """A few human-readable lines for one audit report."""
    claim = report["claim"]
    lines = [f"claim {claim['id']}: {_run_text(claim)}; reported epsilon = {claim['epsilon']}"]
    rdp, pld = report["accountants"]["rdp"], report["accountants"]["pld"]
    if rdp is not None:
        for name, c in rdp["conversions"].items():
            e = c["epsilon"]
            lines.append(f"  rdp {name}: best epsilon over all real alpha in [{e['lower']}, {e['upper']}] "
                         f"(alpha = {c['optimal_order']}): {c['verdict']}, margin {c['margin']}")
            ol = c["order_list"]
            if ol is not None:
                lines.append(f"    order list {ol['name']} ({ol['count']} orders): epsilon {ol['epsilon']['upper']} "
                             f"at alpha = {ol['best_order']}, prints as {ol['printed']} (reported {claim['epsilon']})")
            lines += [f"    note: {n}" for n in c["notes"]]
    if pld is not None:
        e, d = pld["epsilon"], pld["delta_at_reported_epsilon"]
        lines.append(f"  pld: epsilon in [{e['lower']}, {e['upper']}]; delta at the reported epsilon in "
                     f"[{d['lower']}, {d['upper']}]: {pld['verdict']}"
                     + ("" if pld["margin"] is None else f", margin {pld['margin']}"))
        if pld.get("as_poisson") is not None:
            a = pld["as_poisson"]["epsilon"]
            lines.append(f"    as if Poisson sampling with add/remove neighbours: epsilon in [{a['lower']}, {a['upper']}]")
            lines.append(f"    why: {pld['assumption']}")
    decided = report["decided_by"]
    lines.append(f"verdict: {report['verdict']}" + (f" ({decided['accountant']}: {decided['argument']})"
                                                    if decided["accountant"] else ""))
    if report["verdict"] == "unsupported":
        lines.append(f"  ({UNSUPPORTED_NOTE})")
    return "\n".join(lines)


def report_table(reports: list[dict[str, Any]]) -> str:
    """A Markdown table, one row per claim and accountant (RDP: per conversion), and a count of verdicts."""
    head = ["claim", "delta", "reported ε", "accountant", "ε proven in", "α*", "ε on the order list → printed",
            "verdict"]
    rows = [head, ["---"] * len(head)]
    for r in reports:
        claim = r["claim"]
        rdp, pld = r["accountants"]["rdp"], r["accountants"]["pld"]
        for name, c in (rdp["conversions"].items() if rdp else []):
            ol = c["order_list"]
            listed = "—" if ol is None else (
                f"{decimal_text(Fraction(ol['epsilon']['upper']), 6, 'up')} (α = {ol['best_order']}) → {ol['printed']}"
                + (" ✓" if ol["reproduces_reported"] else ""))
            e = c["epsilon"]
            rows.append([claim["id"], claim["delta"], claim["epsilon"], f"rdp {name}",
                         f"[{decimal_text(Fraction(e['lower']), 6, 'down')}, {decimal_text(Fraction(e['upper']), 6, 'up')}]",
                         c["optimal_order"], listed, c["verdict"]])
        if pld is not None:
            e = pld["epsilon"]
            upper = "∞" if e["upper"] is None else decimal_text(Fraction(e["upper"]), 6, "up")
            rows.append([claim["id"], claim["delta"], claim["epsilon"], "pld",
                         f"[{decimal_text(Fraction(e['lower']), 6, 'down')}, {upper}]", "—", "—", pld["verdict"]])
    counts = {v: sum(r["verdict"] == v for r in reports) for v in ("holds", "violated", "unsupported", "inconclusive")}
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.append("")
    lines.append(f"{len(reports)} claim(s): " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return "\n".join(lines)
