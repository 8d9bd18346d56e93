"""Table 1 of Mironov–Talwar–Zhang 2019: the exact ε_α against each closed-form bound.

For SG_{q,σ} (Poisson sampling, add/remove-one neighbours, ℓ2-sensitivity 1)
the proven ε_α (:func:`rdp_verify.methods.rigorous.epsilon_bounds`) is compared with
the three closed forms of Table 1, each with its stated conditions decided
exactly (rational comparisons, or Arb with a precision loop for those with
logarithms):

* **Abadi et al. 2016** (Table 1, row 1): q²α/((1 − q)σ²) + O(q³α³/σ³) for
  q → 0, under q < 1/(16σ) and α ≤ 1 + σ² ln(1/(qσ)). Their Lemma 3 is
  stated for σ ≥ 1 and a positive integer λ = α − 1; both are checked too.
  It is an asymptotic statement: we compare the leading term alone, which
  is *not* a bound (the O(·) term is dropped), and show where it falls below ε_α.
* **Bun et al. 2018** (Table 1, row 3): 6q²α/σ² under q ≤ 1/10, σ ≥ √5,
  α ≤ σ² ln(1/q)/2 — for a **fixed-size** sample of qN records and
  neighbours that differ in the *value* of one record (replace-one). That is
  a different mechanism and neighbouring relation from the Poisson SGM
  computed here, so the comparison is for scale only and never a test of
  their theorem.
* **Theorem 11** (this paper): 2q²α/σ² under q ≤ 1/5, σ ≥ 4 and conditions
  (4), (5), whose margins (:mod:`rdp_verify.certificates.theorem11`) are decided in Arb by
  :func:`rdp_verify.tightness.figure1.condition_signs`.

Each ratio bound/ε_α is a proven interval [bound/ε_upper, bound/ε_lower].
``COUNTEREXAMPLES`` are points where a formula fails once a condition is
dropped; each run re-proves them (ε_lower > formula, every other condition
decided to hold, the dropped one decided to fail).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..certificates.theorem11 import closed_form_bound
from ..foundations.decimals import decimal_text, interval_json
from ..foundations.inputs import SGM, fraction_text
from ..foundations.results import Bounded, to_arb
from ..methods.rigorous import epsilon_bounds
from .figure1 import certified_sign, condition_signs

__all__ = ["DEFAULT_GRID", "COUNTEREXAMPLES", "BOUNDS", "conditions", "formula", "table1_row", "table1_report", "table1_text", "certain_text", "SHORT"]

DEFAULT_GRID: dict[str, list[Fraction]] = {
    "q": [Fraction(1, 1000), Fraction(1, 100), Fraction(1, 10)],
    "sigma": [Fraction(1), Fraction(4), Fraction(10)],
    "alpha": [Fraction(2), Fraction(8), Fraction(32), Fraction(128)],
}

BOUNDS: dict[str, dict[str, str]] = {
    "abadi": {
        "formula": "q^2 alpha / ((1 - q) sigma^2)",
        "source": "Abadi et al. 2016 (Table 1, row 1; their Lemma 3)",
        "conditions": "q < 1/(16 sigma), alpha <= 1 + sigma^2 ln(1/(q sigma)); Lemma 3 also: sigma >= 1, integer alpha - 1",
        "caveat": "asymptotic for q -> 0: the O(q^3 alpha^3 / sigma^3) term is dropped here, so this is not a bound",
        "mechanism": "Poisson sampling, add/remove-one (the same mechanism as ours)",
    },
    "bun": {
        "formula": "6 q^2 alpha / sigma^2",
        "source": "Bun et al. 2018 (Table 1, row 3)",
        "conditions": "q <= 1/10, sigma >= sqrt(5), alpha <= sigma^2 ln(1/q) / 2",
        "caveat": "a bound for a different mechanism: compared with the Poisson epsilon for scale only",
        "mechanism": "fixed-size sample of q N records; neighbours differ in the value of one record (replace-one)",
    },
    "theorem11": {
        "formula": "2 q^2 alpha / sigma^2",
        "source": "Mironov-Talwar-Zhang 2019, Theorem 11",
        "conditions": "q <= 1/5, sigma >= 4, (4) and (5)",
        "caveat": "",
        "mechanism": "Poisson sampling, add/remove-one (the same mechanism as ours)",
    },
}

#: Counterexamples re-proven on every run, each as (bound, what is dropped, q, σ, α).
COUNTEREXAMPLES: tuple[tuple[str, str, str, str, str], ...] = (
    ("theorem11", "(4)", "0.0001", "4", "400"),
    ("theorem11", "sigma >= 4", "0.001", "0.5", "1.5"),
    ("abadi", "sigma >= 1", "0.001", "0.5", "2"),  # Table 1 itself does not list sigma >= 1
    ("abadi", "alpha <= 1 + sigma^2 ln(1/(q sigma))", "0.01", "4", "200"),
)

#: Short labels of the conditions for the text table.
SHORT = {
    "q < 1/(16 sigma)": "q", "alpha <= 1 + sigma^2 ln(1/(q sigma))": "a", "sigma >= 1": "s", "alpha - 1 integer": "int",
    "q <= 1/10": "q", "sigma >= sqrt(5)": "s", "alpha <= sigma^2 ln(1/q) / 2": "a",
    "q <= 1/5": "q", "sigma >= 4": "s", "(4)": "4", "(5)": "5",
}


def _le_log(lhs: Fraction, scale: Fraction, arg: Fraction, offset: Fraction = Fraction(0)) -> bool | None:
    """Proven truth of lhs ≤ offset + scale·ln(arg) (None: undecided)."""
    return certified_sign(lambda: to_arb(offset) + to_arb(scale) * to_arb(arg).log() - to_arb(lhs))


def conditions(name: str, sgm: SGM) -> dict[str, bool | None]:
    """Each stated condition of bound ``name`` at sgm: True/False decided exactly, None undecided."""
    q, s, a = sgm.q, sgm.sigma, sgm.alpha
    if name == "abadi":
        return {
            "q < 1/(16 sigma)": q < 1 / (16 * s),
            "alpha <= 1 + sigma^2 ln(1/(q sigma))": _le_log(a, s * s, 1 / (q * s), Fraction(1)),
            "sigma >= 1": s >= 1,
            "alpha - 1 integer": a.denominator == 1,
        }
    if name == "bun":
        return {
            "q <= 1/10": q <= Fraction(1, 10),
            "sigma >= sqrt(5)": s * s >= 5,
            "alpha <= sigma^2 ln(1/q) / 2": _le_log(a, s * s / 2, 1 / q),
        }
    c4, c5 = condition_signs(sgm)  # the margins of rdp_verify.certificates.theorem11, decided in Arb
    return {"q <= 1/5": q <= Fraction(1, 5), "sigma >= 4": s >= 4, "(4)": c4, "(5)": c5}


def formula(name: str, sgm: SGM) -> Fraction | None:
    """The bound's closed form (an exact rational; None where undefined: Abadi's at q = 1)."""
    q, s, a = sgm.q, sgm.sigma, sgm.alpha
    if name == "abadi":
        return None if q == 1 else q * q * a / ((1 - q) * s * s)
    if name == "bun":
        return 6 * q * q * a / (s * s)
    return closed_form_bound(sgm)


def _all(values: Sequence[bool | None]) -> bool | None:
    if all(v is True for v in values):
        return True
    return False if False in values else None


def _compare(value: Fraction | None, eps: Bounded) -> dict[str, Any]:
    if value is None:
        return {"value": None, "ratio": None, "status": "undefined"}
    ratio = Bounded((value / eps.upper + value / eps.lower) / 2, (value / eps.lower - value / eps.upper) / 2)
    status = "above exact (proven)" if eps.upper <= value else "below exact (proven)" if eps.lower > value else "undecided"
    return {"value": fraction_text(value), "ratio": interval_json(ratio, 20), "status": status}


def table1_row(sgm: SGM, dps: int = 20) -> dict[str, Any]:
    """One grid point: proven ε_α, and per bound its value, conditions, ratio and status."""
    eps = epsilon_bounds(sgm, dps)
    row: dict[str, Any] = {**sgm.texts(), "epsilon": interval_json(eps, dps)}
    for name in BOUNDS:
        conds = conditions(name, sgm)
        row[name] = {**_compare(formula(name, sgm), eps), "conditions": conds, "conditions_hold": _all(list(conds.values()))}
    return row


def _counterexample(entry: tuple[str, str, str, str, str], dps: int) -> dict[str, Any]:
    name, dropped, *point = entry
    sgm = SGM.parse(*point)
    eps = epsilon_bounds(sgm, dps)
    value = formula(name, sgm)
    conds = conditions(name, sgm)
    # the dropped condition, and only it, is proven to fail
    shape_ok = [k for k, v in conds.items() if v is not True] == [dropped] and conds[dropped] is False
    return {
        "bound": name,
        "dropped": dropped,
        **sgm.texts(),
        "conditions": conds,
        "epsilon": interval_json(eps, dps),
        "formula": fraction_text(value) if value is not None else None,
        "certified": bool(shape_ok and value is not None and eps.lower > value),
    }


def table1_report(grid: dict[str, Sequence[Fraction]] = DEFAULT_GRID, dps: int = 20,
                  row_fn: Callable[[SGM, int], dict[str, Any]] = table1_row) -> dict[str, Any]:
    """Rows on grid (q × σ × α), the counterexamples, and any refutation of Theorem 11."""
    rows = [row_fn(SGM(q, s, a), dps) for q in grid["q"] for s in grid["sigma"] for a in grid["alpha"]]
    refuted = [r for r in rows if r["theorem11"]["conditions_hold"] and r["theorem11"]["status"] == "below exact (proven)"]
    return {
        "table": "Table 1 of Mironov, Talwar, Zhang (2019) against the exact epsilon_alpha",
        "mechanism": "Sampled Gaussian Mechanism: Poisson sampling, add/remove-one neighbours, l2-sensitivity 1",
        "epsilon": f"proven Arb enclosure at {dps} digits (rdp_verify.rigorous.epsilon_bounds)",
        "bounds": BOUNDS,
        "rows": rows,
        "counterexamples": [_counterexample(c, dps) for c in COUNTEREXAMPLES],
        "theorem11_refuted_inside_conditions": refuted,
    }


def certain_text(lo: Fraction, hi: Fraction, digits: int) -> str:
    """A value known to lie in [lo, hi], to the first ``digits`` significant digits both ends round to.

    If lo and hi round (to nearest) to the same string, so does every number
    between them: the string is the correctly rounded value. Otherwise more
    digits are tried, up to 20, then the interval itself is printed. Values
    outside [0.001, 1e5) are written in scientific notation.
    """
    for d in range(digits, 21):
        a, b = decimal_text(lo, d), decimal_text(hi, d)
        if a == b:
            return _compact(a, d)
    return f"[{decimal_text(lo, 20, 'down')}, {decimal_text(hi, 20, 'up')}]"


def _compact(text: str, digits: int) -> str:
    x = Decimal(text)  # exact: no rounding happens below, only re-spelling
    if x == 0 or Decimal("0.001") <= abs(x) < Decimal(10) ** 5:
        return text
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent)}"


def _ratio_cell(entry: dict[str, Any]) -> str:
    if entry["ratio"] is None:
        return "-"
    text = certain_text(Fraction(entry["ratio"]["lower"]), Fraction(entry["ratio"]["upper"]), 4)
    return ("<1 " if entry["status"] == "below exact (proven)" else "") + text


def _cond_cell(entry: dict[str, Any]) -> str:
    failed = [SHORT[k] for k, v in entry["conditions"].items() if v is not True]
    return "yes" if not failed else "no:" + ",".join(failed)


_COLUMNS = (("abadi", "Abadi"), ("bun", "Bun"), ("theorem11", "Thm 11"))


def table1_text(report: dict[str, Any]) -> str:
    """The report as a plain-text table (what ``rdp-verify table1`` prints)."""
    lines = [
        report["table"],
        f"({report['mechanism']}; epsilon: {report['epsilon']})",
        "",
    ]
    for name, b in report["bounds"].items():
        lines.append(f"  {name:<9} {b['formula']:<30} {b['source']}")
        lines.append(f"  {'':<9} conditions: {b['conditions']}")
        lines.append(f"  {'':<9} mechanism: {b['mechanism']}")
        if b["caveat"]:
            lines.append(f"  {'':<9} NOTE: {b['caveat']}")
    lines += [
        "",
        "ratio = bound/epsilon, a proven interval printed to the digits both of its ends round to; '<1': the formula is",
        "proven below the exact epsilon. cond: 'yes' if every stated condition holds (decided exactly), else the failing",
        "ones: q, s (sigma), a (alpha), int (integer alpha - 1), 4 and 5 (Theorem 11's conditions (4), (5)).",
        "",
    ]
    header = f"{'q':>6} {'sigma':>5} {'alpha':>5} {'epsilon':>11}" + "".join(
        f" | {label + ' ratio':>14} {'cond':<8}" for _, label in _COLUMNS)
    lines += [header, "-" * len(header)]
    for r in report["rows"]:
        eps = certain_text(Fraction(r["epsilon"]["lower"]), Fraction(r["epsilon"]["upper"]), 6)
        cells = "".join(f" | {_ratio_cell(r[n]):>14} {_cond_cell(r[n]):<8}" for n, _ in _COLUMNS)
        lines.append(f"{r['q']:>6} {r['sigma']:>5} {r['alpha']:>5} {eps:>11}" + cells)
    lines += ["", "Certified counterexamples (proven: epsilon_lower > formula; the dropped condition alone fails):"]
    for c in report["counterexamples"]:
        eps = certain_text(Fraction(c["epsilon"]["lower"]), Fraction(c["epsilon"]["upper"]), 6)
        value = Fraction(c["formula"])
        verdict = "certified" if c["certified"] else "NOT CERTIFIED"
        lines.append(f"  {c['bound']} without {c['dropped']}: q={c['q']} sigma={c['sigma']} alpha={c['alpha']}: "
                     f"epsilon = {eps} > formula = {certain_text(value, value, 6)} [{verdict}]")
    refuted = report["theorem11_refuted_inside_conditions"]
    lines += ["", "Theorem 11 inside its conditions: " + (
        "its bound is above the exact epsilon at every row" if not refuted else f"REFUTED at {len(refuted)} row(s)")]
    return "\n".join(lines) + "\n"
