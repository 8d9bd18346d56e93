"""Sealed certificates of a run's (ε, δ): the proven bracket, how it was proven, and an independent check.

:func:`certify_run` brackets ε(δ) (or δ(ε)) with :func:`rdp_verify.curves.accountant.bracket`,
cross-checks it against the independent estimate of :mod:`rdp_verify.curves.crosscheck` at one ε,
and seals the result (schema ``privacy-curve-v1``, content hash as for every certificate). The
verdict is ``certified`` only if the estimate ± its error meets the proven bracket there; otherwise
``inconsistent`` and the command exits 1: rdp_verify never prints an (ε, δ) whose two computations
disagree. :func:`check_run_certificate` recomputes the bracket with the recorded settings (the
computation is deterministic: exact integers) and confirms every claim.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from .. import __version__
from ..certificates.certificate import integrity_errors, seal
from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError, Phase, fraction_text, parse_q, parse_rational, parse_run_sigma
from .accountant import DEFAULT_TOLERANCE, Bracket, Settings, bracket, delta_bracket
from .crosscheck import Estimate, estimate_delta

__all__ = ["FORMAT", "SCHEMA", "certify_run", "certificate_of", "check_run_certificate", "DIGITS"]

FORMAT = "rdp_verify privacy curve"
FORMAT_VERSION = 1
SCHEMA = "privacy-curve-v1"
DIGITS = 12  # significant digits of printed bounds, rounded outward

ASSUMPTIONS = {
    "sampling": "Poisson sampling with rate q in every step (each record joins each batch independently)",
    "neighbours": "add/remove-one: both directions, (mu, mu0) and (mu0, mu), are bracketed and the larger is reported",
    "sensitivity": "l2-sensitivity 1; sigma is the noise multiplier (noise std / clipping norm)",
    "composition": ("adaptive composition of the steps: the product of the dominating pairs dominates it "
                    "(Zhu, Dong, Wang 2022, Theorem 10)"),
}

PROOFS = {
    "upper": ("Connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022): per step, the pair whose curve "
              "interpolates the exact hockey-stick curve (Gaussian CDFs in Arb) at the grid dominates the step; "
              "tail mass beyond the grid goes to loss +infinity. Composed by exact integer convolution, masses "
              "rounded up and mass cut off moved to +infinity, so every delta read off is an upper bound; "
              "epsilon_upper is verified by evaluating delta there."),
    "lower": ("Lowered chords: per step, a convex piecewise-linear curve below the exact one (each cell verified in "
              "Arb by a Taylor or tangent bound, kinks proven convex, the trivial curve (1 - x)_+ as floor) is the "
              "curve of a pair the step dominates (Blackwell). Composed by exact integer convolution, masses "
              "rounded down and mass cut off dropped, so every delta read off is a lower bound; below "
              "epsilon_lower the true curve is proven above delta."),
    "directions": "delta(epsilon) = max over the add and remove directions; both are bracketed",
}


def _interval(lower: Fraction, upper: Fraction | None) -> dict[str, str | None]:
    return {"lower": decimal_text(lower, DIGITS, "down"),
            "upper": None if upper is None else decimal_text(upper, DIGITS, "up")}


def _phases_json(phases: Sequence[Phase]) -> list[dict[str, Any]]:
    return [{"q": fraction_text(p.q), "sigma": fraction_text(p.sigma), "steps": p.steps} for p in phases]


def _check_point(result: Bracket, delta: Fraction | None, epsilon: Fraction | None) -> Fraction:
    """Where to cross-check: the given ε, or a short decimal in the middle of the ε bracket."""
    if epsilon is not None:
        return epsilon
    if result.upper is None:
        return result.lower
    mid = (result.lower + result.upper) / 2
    for digits in range(3, 40):
        x = Fraction(decimal_text(mid, digits))
        if result.lower <= x <= result.upper:
            return x
    return mid


def _cross_check(result: Bracket, point: Fraction, given_epsilon: bool) -> dict[str, Any]:
    at = result if given_epsilon else delta_bracket(result.curves, point)  # the proven δ bracket at the point
    est: Estimate = estimate_delta(result.curves.phases, point)
    consistent = est.lower <= at.upper and at.lower <= est.upper
    # a check can only fail if the estimate's error is small against δ itself
    informative = est.error <= max(at.upper, Fraction(0)) / 10
    return {
        "method": est.method,
        "bound_kind": "estimate",
        "epsilon": fraction_text(point),
        "estimate": {"value": decimal_text(est.value, DIGITS), "error_bound": decimal_text(est.error, 3, "up")},
        "proven_delta": _interval(at.lower, at.upper),
        "consistent": consistent,
        "informative": informative,
        "details": {k: (str(v) if not isinstance(v, (int, float, str)) else v) for k, v in est.details.items()},
    }


def _settings_json(s: Settings) -> dict[str, Any]:
    return s.to_json()


def certify_run(phases: Sequence[Phase], *, delta: Fraction | None = None, epsilon: Fraction | None = None,
                tolerance: Fraction = DEFAULT_TOLERANCE, settings: Settings | None = None) -> dict[str, Any]:
    """The sealed certificate of ε(δ) (given ``delta``) or δ(ε) (given ``epsilon``) for the run."""
    result = bracket(phases, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings)
    return certificate_of(result, delta=delta, epsilon=epsilon, tolerance=tolerance)


def certificate_of(result: Bracket, *, delta: Fraction | None = None, epsilon: Fraction | None = None,
                   tolerance: Fraction = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """Cross-check a computed bracket and seal it (see :func:`certify_run`)."""
    point = _check_point(result, delta, epsilon)
    cross = _cross_check(result, point, given_epsilon=epsilon is not None)
    quantity = "epsilon" if delta is not None else "delta"
    width = result.relative_width()
    cert = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": "adaptive composition of the Sampled Gaussian Mechanism SG_{q,sigma} over the steps of a run",
        "inputs": {"phases": _phases_json(result.curves.phases),
                   **({"delta": fraction_text(delta)} if delta is not None else {"epsilon": fraction_text(epsilon)}),
                   "tolerance": fraction_text(Fraction(tolerance))},
        "assumptions": ASSUMPTIONS,
        "settings": _settings_json(result.curves.settings),
        quantity: {**_interval(result.lower, result.upper),
                   "relative_width": None if width is None else decimal_text(width, 3, "up"),
                   "tolerance_met": width is not None and width <= Fraction(tolerance)},
        "directions": {d: _interval(lo, up) for d, (lo, up) in sorted(result.by_direction.items())},
        "proofs": PROOFS,
        "cross_check": cross,
        "work": {"grid_points_per_step": [s.grid.size for s in result.curves.steps],
                 "composed_length": max(p.length for p in result.curves.plds.values()),
                 "refinements": [{"grid_step": fraction_text(r["grid_step"]),
                                  "relative_width": decimal_text(Fraction(r["relative_width"]), 3, "up")
                                  if r["relative_width"] != float("inf") else None}
                                 for r in result.refinements]},
        "verdict": "certified" if cross["consistent"] else "inconsistent",
        "software": {"rdp_verify": __version__},
    }
    return seal(cert, SCHEMA)


def _fraction(text: str | None) -> Fraction | None:
    return None if text is None else Fraction(text)


def check_run_certificate(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (recomputed and contained)."""
    broken = integrity_errors(cert, SCHEMA)
    if broken:
        return broken
    inp = cert["inputs"]
    try:
        phases = [Phase(parse_q(p["q"]), parse_run_sigma(p["sigma"]), p["steps"]) for p in inp["phases"]]
        s = cert["settings"]
        settings = Settings(parse_rational(s["grid_step"], "grid_step"), s["fixed_point_bits"],
                            parse_rational(s["truncation_allowance"], "truncation_allowance"),
                            parse_rational(s["single_step_tail"], "single_step_tail"))
        delta = parse_rational(inp["delta"], "delta") if "delta" in inp else None
        epsilon = parse_rational(inp["epsilon"], "epsilon") if "epsilon" in inp else None
        tolerance = parse_rational(inp["tolerance"], "tolerance")
    except (InputError, KeyError, TypeError) as exc:
        return [f"inputs: {exc}"]
    fresh = certify_run(phases, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings)
    problems = []
    quantity = "epsilon" if delta is not None else "delta"
    claim, new = cert[quantity], fresh[quantity]
    if Fraction(claim["lower"]) > Fraction(new["lower"]):
        problems.append(f"{quantity}.lower: not confirmed by recomputation")
    if claim["upper"] is not None and (new["upper"] is None or Fraction(new["upper"]) > Fraction(claim["upper"])):
        problems.append(f"{quantity}.upper: not confirmed by recomputation")
    for d, interval in cert["directions"].items():
        fresh_d = fresh["directions"].get(d)
        if fresh_d is None or Fraction(interval["lower"]) > Fraction(fresh_d["lower"]) or (
                interval["upper"] is not None and Fraction(fresh_d["upper"]) > Fraction(interval["upper"])):
            problems.append(f"directions.{d}: not confirmed by recomputation")
    for key in ("verdict",):
        if cert[key] != fresh[key]:
            problems.append(f"{key}: not confirmed by recomputation")
    if cert["cross_check"]["consistent"] != fresh["cross_check"]["consistent"]:
        problems.append("cross_check.consistent: not confirmed by recomputation")
    return problems
