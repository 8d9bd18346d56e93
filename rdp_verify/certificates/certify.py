"""Run every method on SG_{q,σ} at order α, cross-check, and build the certificate.

The certified interval for ε_α = log max(A_α, B_α)/(α − 1) comes from the
rigorous (Arb) enclosure when it exists (``rigorous: true``); otherwise from
the hull of the estimate methods' intervals (``rigorous: false``). The estimate
methods run at ``dps + 15`` working digits and are re-run with more digits when
their error bound misses the requested relative accuracy 10^−dps (cancellation
in log A_α when A_α is close to 1, e.g. α → 1 or tiny q).
"""

from __future__ import annotations

import math
import platform
from fractions import Fraction
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable

from .. import __version__
from ..foundations.decimals import decimal_text, interval_json
from ..foundations.inputs import SGM
from ..foundations.results import Bounded, MethodResult, MethodUnavailable
from ..methods import quadrature, rigorous, series, symbolic
from ..methods.crosscheck import cross_check, method_epsilon
from .theorem11 import corollary7_report, theorem11_report

__all__ = ["certify", "run_methods", "FORMAT", "FORMAT_VERSION", "ASSUMPTIONS"]

FORMAT = "rdp_verify certificate"
FORMAT_VERSION = 1
GUARD_DIGITS = 15
MAX_WORK_DIGITS = 600

ESTIMATE_METHODS: dict[str, Callable[[SGM, int], MethodResult]] = {
    "quadrature": quadrature.compute,
    "series": series.compute,
    "symbolic": symbolic.compute,
}

ASSUMPTIONS = {
    "sampling": "Poisson: each record enters the batch independently with probability q (Definition 3)",
    "neighbouring": "add/remove one record (S' = S ∪ {x}); both directions covered by A_alpha and B_alpha (Theorem 4)",
    "sensitivity": "l2-sensitivity 1: sigma is the noise multiplier (noise std / sensitivity)",
    "epsilon": "epsilon_alpha = log(max(A_alpha, B_alpha)) / (alpha - 1), Rényi DP of one SGM step",
}


def _digits_short(x: Bounded | None, dps: int) -> int:
    """How many more digits x needs for relative accuracy 10^−dps (≤ 0: none)."""
    if x is None or x.error == 0:
        return 0
    if x.value == 0:
        return dps
    have = -math.log10(x.error / abs(x.value))
    return math.ceil(dps + 1 - have)


def _run_estimate(fn: Callable[[SGM, int], MethodResult], sgm: SGM, dps: int) -> MethodResult:
    work = dps + GUARD_DIGITS
    while True:
        result = fn(sgm, work)
        short = max(_digits_short(result.log_a, dps), _digits_short(result.log_b, dps))
        if short <= 0 or work >= MAX_WORK_DIGITS:
            return result
        work = min(MAX_WORK_DIGITS, work + short + 5)


def run_methods(sgm: SGM, dps: int, methods: tuple[str, ...] | None = None) -> tuple[dict[str, MethodResult], dict[str, str]]:
    """Run the methods; return (results, reasons for those without a result)."""
    wanted = methods or (*ESTIMATE_METHODS, "rigorous")
    results: dict[str, MethodResult] = {}
    missing: dict[str, str] = {}
    for name in wanted:
        try:
            if name == "rigorous":
                results[name] = rigorous.compute(sgm, dps)
            else:
                results[name] = _run_estimate(ESTIMATE_METHODS[name], sgm, dps)
        except MethodUnavailable as exc:
            missing[name] = f"not applicable: {exc}"
        except (ArithmeticError, ValueError) as exc:  # a numerical failure, recorded honestly
            missing[name] = f"failed: {type(exc).__name__}: {exc}"
    return results, missing


def _software() -> dict[str, str]:
    out = {"rdp_verify": __version__, "python": platform.python_version()}
    for dist in ("mpmath", "sympy", "python-flint"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover - all are dependencies
            out[dist] = "unknown"
    return out


def _bounded_json(x: Bounded | None, digits: int) -> dict[str, str] | None:
    """value rounded to nearest; the bound absorbs that rounding and is rounded up."""
    if x is None:
        return None
    text = decimal_text(x.value, digits)
    error = x.error + abs(Fraction(text) - x.value)
    return {"value": text, "error_bound": decimal_text(error, 3, "up") if error else "0"}


def _hull(values: list[Bounded]) -> Bounded:
    lo = min(v.lower for v in values)
    hi = max(v.upper for v in values)
    return Bounded.between(lo, hi)


def certify(sgm: SGM, dps: int = 30) -> dict[str, Any]:
    """The certificate (a JSON-ready dict, without its content hash)."""
    results, missing = run_methods(sgm, dps)
    check = cross_check(results, sgm.alpha)
    digits = dps + 5
    methods_json: dict[str, Any] = {}
    for name in (*ESTIMATE_METHODS, "rigorous"):
        if name in results:
            r = results[name]
            methods_json[name] = {
                "status": "ok",
                "bound_kind": r.bound_kind,
                "log_A": _bounded_json(r.log_a, digits + 5),
                "log_B": _bounded_json(r.log_b, digits + 5),
                "epsilon": _bounded_json(method_epsilon(r, sgm.alpha), digits + 5),
                "work": r.work,
                "notes": list(r.notes),
            }
        else:
            methods_json[name] = {"status": "unavailable", "reason": missing[name]}

    proven = "rigorous" in results
    if proven:
        chosen = results["rigorous"]
        log_a, log_b = chosen.log_a, chosen.log_b
        assert log_b is not None
    else:
        log_a = _hull([r.log_a for r in results.values()]) if results else None
        bs = [r.log_b for r in results.values() if r.log_b is not None]
        log_b = _hull(bs) if bs else None

    inv = 1 / (sgm.alpha - 1)
    cert: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": "Sampled Gaussian Mechanism SG_{q,sigma} (Mironov, Talwar, Zhang 2019, Definition 3)",
        "inputs": {**sgm.texts(), "dps": dps},
        "assumptions": ASSUMPTIONS,
        "methods": methods_json,
        "cross_check": check,
    }
    if log_a is None or log_b is None:
        cert.update(
            {
                "rigorous": False,
                "log_A": None,
                "log_B": None,
                "epsilon": None,
                "theorem11": None,
                "corollary7": None,
                "verdict": "inconsistent",
            }
        )
    else:
        lo = max(log_a.lower, log_b.lower) * inv
        hi = max(log_a.upper, log_b.upper) * inv
        epsilon = Bounded.between(lo, hi)
        cor7 = corollary7_report(sgm, log_a, log_b, proven)
        consistent = check["consistent"] and cor7["status"] != "violated"
        cert.update(
            {
                "rigorous": proven,
                "log_A": interval_json(log_a, digits),
                "log_B": interval_json(log_b, digits),
                "epsilon": {
                    **interval_json(epsilon, digits),
                    "source": "rigorous" if proven else "hull of estimate methods",
                    "rigorous": proven,
                    "relative_width": decimal_text(epsilon.error * 2 / epsilon.value, 3, "up")
                    if epsilon.value
                    else "0",
                },
                "theorem11": theorem11_report(sgm, epsilon),
                "corollary7": cor7,
                "verdict": "certified" if consistent else "inconsistent",
            }
        )
    cert["software"] = _software()
    return cert
