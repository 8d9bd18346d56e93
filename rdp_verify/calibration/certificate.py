"""Sealed calibration certificates (schema ``calibration-v1``) and their re-check.

A certificate records the problem, the grid and the supported range searched, the answer's proof
(ε ≤ E) and the neighbour's proof (ε > E) or its ``undecided`` bracket -- no neighbour when the
answer is the range's best end --, the monotonicity argument that makes the answer the grid's
optimum (:mod:`rdp_verify.calibration.solve`), and the search trace. Under the ``pld`` accountant
each of the two points embeds a full sealed privacy-curve certificate (settings, proofs and the
independent cross-check of :mod:`rdp_verify.curves.certificate`); a point whose cross-check
disagrees makes the verdict ``inconsistent`` (exit 1). Under ``rdp`` each point records the best
order and the proven bracket of :func:`~rdp_verify.accounting.optimal_order.optimal_epsilon`.

:func:`check_calibration` re-verifies everything that is claimed: seal and schema, the grid
neighbourhood of the two values within the stated range, the embedded certificates (recomputed),
and the inequalities against the target.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .. import __version__
from ..accounting.optimal_order import optimal_epsilon
from ..certificates.certificate import integrity_errors, seal
from ..curves.certificate import FORMAT as RUN_FORMAT
from ..curves.certificate import certificate_of, check_run_certificate
from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError, fraction_text, parse_rational
from .solve import CONVERSION, DIGITS, Calibration, Evaluation, Problem

__all__ = ["FORMAT", "SCHEMA", "certificate", "check_calibration", "problem_of"]

FORMAT = "rdp_verify calibration"
FORMAT_VERSION = 1
SCHEMA = "calibration-v1"

MONOTONICITY = (
    "epsilon(delta) is non-increasing in sigma and non-decreasing in q and in steps: one step's pairs are "
    "post-processings of each other (add N(0, s'^2 - s^2) noise; keep the output with probability q/q' else "
    "resample N(0, s^2); drop the last outputs), and hockey-stick and Renyi divergences satisfy data processing "
    "(van Erven & Harremoes 2014, Theorem 9). So if the neighbouring grid value exceeds the target, every grid "
    "value beyond it does too.")
ACCOUNTANT_TEXT = {
    "pld": "proven two-sided privacy-curve bracket (rdp_verify.curves; Zhu, Dong, Wang 2022, Theorems 10-11)",
    "rdp": (f"best RDP bound over all real orders alpha > 1 with the {CONVERSION} conversion (Balle et al. 2020, "
            "Theorem 21); 'exceeds' means no order proves epsilon <= target, not that the run is not private"),
}


def _point(problem: Problem, ev: Evaluation) -> dict[str, Any]:
    out = {"value": fraction_text(ev.value), "decision": ev.decision,
           "epsilon": {"lower": ev.lower, "upper": ev.upper}, "tolerance": fraction_text(ev.tolerance)}
    if problem.accountant == "pld":
        out["certificate"] = certificate_of(ev.result, delta=problem.delta, tolerance=ev.tolerance)
    else:
        out["order"] = fraction_text(ev.result.order)
    return out


def _inputs(problem: Problem) -> dict[str, Any]:
    given = {k: (fraction_text(Fraction(v)) if k != "steps" else v)
             for k, v in (("q", problem.q), ("sigma", problem.sigma), ("steps", problem.steps)) if v is not None}
    return {"solve_for": problem.unknown, "target_epsilon": fraction_text(problem.target_epsilon),
            "delta": fraction_text(problem.delta), **given, "accountant": problem.accountant,
            "digits": problem.digits, "tolerance": fraction_text(problem.tolerance)}


def _consistent(point: dict[str, Any] | None) -> bool:
    return point is None or "certificate" not in point or point["certificate"]["verdict"] == "certified"


def certificate(cal: Calibration) -> dict[str, Any]:
    """The sealed certificate of a calibration."""
    p = cal.problem
    answer = _point(p, cal.answer)
    neighbour = None if cal.neighbour is None else _point(p, cal.neighbour)
    verdict = cal.verdict if _consistent(answer) and _consistent(neighbour) else "inconsistent"
    cert = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": "adaptive composition of the Sampled Gaussian Mechanism SG_{q,sigma}, steps times "
                     "(Poisson sampling, add/remove-one, l2-sensitivity 1)",
        "inputs": _inputs(p),
        "grid": p.grid.describe(),
        "range": {"lower": fraction_text(p.range[0]), "upper": fraction_text(p.range[1])},
        "accountant": ACCOUNTANT_TEXT[p.accountant],
        "monotonicity": MONOTONICITY,
        "answer": answer,
        "neighbour": neighbour,
        "search": [{"value": fraction_text(e.value), "decision": e.decision,
                    "epsilon": {"lower": e.lower, "upper": e.upper}, "tolerance": fraction_text(e.tolerance)}
                   for e in cal.evaluations],
        "verdict": verdict,
        "software": {"rdp_verify": __version__},
    }
    return seal(cert, SCHEMA)


def problem_of(inputs: dict[str, Any]) -> Problem:
    """The :class:`Problem` a certificate's ``inputs`` describe."""
    def opt(key: str) -> Fraction | None:
        return parse_rational(inputs[key], key) if key in inputs else None

    steps = inputs.get("steps")
    return Problem(inputs["solve_for"], parse_rational(inputs["target_epsilon"], "target_epsilon"),
                   parse_rational(inputs["delta"], "delta"), q=opt("q"), sigma=opt("sigma"),
                   steps=steps, accountant=inputs["accountant"], digits=inputs["digits"],
                   tolerance=parse_rational(inputs["tolerance"], "tolerance"))


def _check_point(problem: Problem, name: str, point: dict[str, Any]) -> list[str]:
    value = Fraction(point["value"])
    lo, up = point["epsilon"]["lower"], point["epsilon"]["upper"]
    e = problem.target_epsilon
    problems = []
    if point["decision"] == "meets" and not (up is not None and Fraction(up) <= e):
        problems.append(f"{name}.decision: the upper bound does not meet the target")
    if point["decision"] == "exceeds" and not Fraction(lo) > e:
        problems.append(f"{name}.decision: the lower bound does not exceed the target")
    if problem.accountant == "pld":
        cert = point.get("certificate")
        if not isinstance(cert, dict) or cert.get("format") != RUN_FORMAT:
            return problems + [f"{name}.certificate: missing"]
        problems += [f"{name}.certificate.{x}" for x in check_run_certificate(cert)]
        inp = cert["inputs"]
        run = problem.phase(value)
        expected = [{"q": fraction_text(run.q), "sigma": fraction_text(run.sigma), "steps": run.steps}]
        if inp["phases"] != expected or Fraction(inp.get("delta", "-1")) != problem.delta:
            problems.append(f"{name}.certificate: certifies a different run or delta")
        proven = cert["epsilon"]  # the claim must follow from it: lo ≤ proven lower, up ≥ proven upper
        if Fraction(lo) > Fraction(proven["lower"]) or (
                up is not None and (proven["upper"] is None or Fraction(up) < Fraction(proven["upper"]))):
            problems.append(f"{name}.epsilon: not what the embedded certificate proves")
    else:
        fresh = optimal_epsilon([problem.phase(value)], problem.delta, CONVERSION,
                                rtol=parse_rational(point["tolerance"], "tolerance"))
        if decimal_text(fresh.epsilon.lower, DIGITS, "down") != lo or decimal_text(fresh.epsilon.upper, DIGITS, "up") != up:
            problems.append(f"{name}.epsilon: not confirmed by recomputation")
    return problems


def _best_end(problem: Problem, low: Fraction, high: Fraction) -> Fraction:
    """The grid value at the range's best end: the smallest σ, or the largest steps or q."""
    grid = problem.grid
    return grid.value(grid.index_at_or_above(low) if problem.unknown == "sigma" else grid.index_at_or_below(high))


def check_calibration(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed."""
    broken = integrity_errors(cert, SCHEMA)
    if broken:
        return broken
    try:
        problem = problem_of(cert["inputs"])
        low, high = (parse_rational(cert["range"][end], f"range.{end}") for end in ("lower", "upper"))
    except (InputError, KeyError, TypeError) as exc:
        return [f"inputs: {exc}"]
    supported = problem.range
    if not supported[0] <= low <= high <= supported[1]:
        return ["range: not within the supported range of the unknown"]
    answer, neighbour = cert["answer"], cert["neighbour"]
    problems = []
    grid = problem.grid
    value = Fraction(answer["value"])
    n = grid.index_at_or_below(value)
    if grid.value(n) != value or not low <= value <= high:
        return ["answer.value: not on the stated grid within the stated range"]
    if answer["decision"] != "meets":
        problems.append("answer.decision: the answer must meet the target")
    problems += _check_point(problem, "answer", answer)
    if neighbour is not None:
        beyond = grid.value(n - 1 if problem.unknown == "sigma" else n + 1)
        if Fraction(neighbour["value"]) != beyond or not low <= beyond <= high:
            problems.append("neighbour.value: not the next grid value beyond the answer within the stated range")
        else:
            problems += _check_point(problem, "neighbour", neighbour)
    elif value != _best_end(problem, low, high):
        problems.append("neighbour: missing, yet the answer is not at the best end of the stated range")
    decided = neighbour is None or neighbour["decision"] == "exceeds"
    if cert["verdict"] == "calibrated" and not decided:
        problems.append("verdict: calibrated without a proof for the neighbour")
    return problems
