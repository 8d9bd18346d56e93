"""Sealed calibration certificates (schema ``calibration-v1``) and their re-check.

A certificate records the problem, the grid and the supported range searched, the answer's proof
(ε ≤ E) and the neighbour's proof (ε > E) or its ``undecided`` bracket -- no neighbour when the
answer is the range's best end --, the monotonicity argument that makes the answer the grid's
optimum (:mod:`rdp_verify.calibration.solve`), and the search trace. Under the ``pld`` accountant
each of the two points embeds a full sealed privacy-curve certificate (settings, proofs and the
independent cross-check of :mod:`rdp_verify.curves.certificate`); a point whose cross-check
disagrees makes the verdict ``inconsistent`` (exit 1). Under ``rdp`` each point records the best
order and the proven bracket of :func:`~rdp_verify.accounting.optimal_order.optimal_epsilon`.

:func:`check_calibration` is :func:`~rdp_verify.certificates.certificate.integrity_errors` (seal and
schema), then :func:`compare` of the certificate with :func:`recompute`, a fresh calibration of its
inputs (deterministic: exact rationals, Arb, exact-integer privacy curves): every field on
:data:`POLICY`'s verified list, the search trace and the embedded certificates included, must equal the
recomputation; then :func:`self_consistency` re-derives the decisions, the grid neighbourhood, the
embedded certificates' runs and brackets, and the verdict from the certificate's own fields.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .. import __version__
from ..certificates.certificate import check_against, integrity_errors, seal
from ..certificates.fields import FieldPolicy
from ..curves.certificate import POLICY as RUN_POLICY
from ..curves.certificate import SCHEMA as RUN_SCHEMA
from ..curves.certificate import certificate_of
from ..curves.certificate import compare as compare_run
from ..events.read import from_named_tuple_json, render, to_json
from ..foundations.inputs import fraction_text, parse_rational
from ..privacy_curve.certificate import POLICY as EVENT_POLICY
from ..privacy_curve.certificate import SCHEMA as EVENT_SCHEMA
from ..privacy_curve.certificate import certificate_of_event, compare_event
from .solve import CONVERSION, Calibration, Evaluation, Problem, calibrate, event_text

__all__ = ["FORMAT", "SCHEMA", "POLICY", "certificate", "check_calibration", "compare", "problem_of", "recompute",
           "self_consistency"]

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


_POINT = ("value", "decision", "epsilon.lower", "epsilon.upper", "tolerance")
_BASE = FieldPolicy(
    verified=(
        "format", "format_version", "mechanism",
        *(f"inputs.{key}" for key in ("solve_for", "target_epsilon", "delta", "q", "sigma", "steps", "sampler",
                                      "neighbours", "batch_size", "dataset_size", "accountant", "digits", "tolerance",
                                      "event.**", "neighboring_relation")),
        "grid", "range.lower", "range.upper", "accountant", "monotonicity",
        "answer", *(f"answer.{key}" for key in _POINT), "answer.order",
        "neighbour", *(f"neighbour.{key}" for key in _POINT), "neighbour.order",
        *(f"search.*.{key}" for key in _POINT),
        "content_hash",
    ),
    # re-derived by self_consistency from the points and their certificates' verdicts (themselves re-derived
    # from their recorded estimates): never compared with a fresh estimate's verdict
    derived=("verdict",),
    not_verified=("software.*",),
)
POLICY = _BASE + RUN_POLICY.under("answer.certificate") + RUN_POLICY.under("neighbour.certificate")
# calibrate --event with mechanisms beside the steps: each point embeds an event privacy-curve certificate
EVENT_POINTS_POLICY = _BASE + EVENT_POLICY.under("answer.certificate") + EVENT_POLICY.under("neighbour.certificate")


def _with_leaves(problem: Problem) -> bool:
    return problem.has_leaves


def _policy(problem: Problem) -> FieldPolicy:
    return EVENT_POINTS_POLICY if _with_leaves(problem) else POLICY


def _point(problem: Problem, ev: Evaluation) -> dict[str, Any]:
    out = {"value": fraction_text(ev.value), "decision": ev.decision,
           "epsilon": {"lower": ev.lower, "upper": ev.upper}, "tolerance": fraction_text(ev.tolerance)}
    if _with_leaves(problem):  # the tree at this sigma, with its other mechanisms
        out["certificate"] = certificate_of_event(problem.run_at(ev.value), ev.result, delta=problem.delta,
                                                  epsilon=None, tolerance=ev.tolerance)
    elif problem.accountant == "pld":
        out["certificate"] = certificate_of(ev.result, delta=problem.delta, tolerance=ev.tolerance)
    else:
        out["order"] = fraction_text(ev.result.order)
    return out


def _inputs(problem: Problem) -> dict[str, Any]:
    given = {k: (fraction_text(Fraction(v)) if k != "steps" else v)
             for k, v in (("q", problem.q), ("sigma", problem.sigma), ("steps", problem.steps)) if v is not None}
    kind = {} if (problem.sampler, problem.neighbours) == ("poisson", "add-remove") else {
        "sampler": problem.sampler, "neighbours": problem.neighbours,
        **({} if problem.batch_size is None else {"batch_size": problem.batch_size, "dataset_size": problem.dataset_size})}
    tree = {} if problem.event is None else {"event": problem.event_json,
                                             "neighboring_relation": problem.relation}
    return {"solve_for": problem.unknown, "target_epsilon": fraction_text(problem.target_epsilon),
            "delta": fraction_text(problem.delta), **given, **kind, **tree, "accountant": problem.accountant,
            "digits": problem.digits, "tolerance": fraction_text(problem.tolerance)}


def _consistent(point: dict[str, Any] | None) -> bool:
    return point is None or "certificate" not in point or point["certificate"]["verdict"] != "inconsistent"


def certificate(cal: Calibration) -> dict[str, Any]:
    """The sealed certificate of a calibration."""
    p = cal.problem
    answer = _point(p, cal.answer)
    neighbour = None if cal.neighbour is None else _point(p, cal.neighbour)
    verdict = cal.verdict if _consistent(answer) and _consistent(neighbour) else "inconsistent"
    cert = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": (f"{render(from_named_tuple_json(p.event_json))}; {p.relation}; the noise multiplier of every "
                      "Gaussian mechanism replaced by the sigma solved for" if p.event is not None else
                      "adaptive composition of the Sampled Gaussian Mechanism SG_{q,sigma}, steps times "
                      "(Poisson sampling, add/remove-one, l2-sensitivity 1)"
                      if (p.sampler, p.neighbours) == ("poisson", "add-remove") else
                      f"adaptive composition of noisy clipped-gradient sums, steps times, batches drawn by {p.sampler}, "
                      f"{p.neighbours} neighbours (docs/samplers.md)"),
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
    event = None if "event" not in inputs else event_text(from_named_tuple_json(inputs["event"]))
    return Problem(inputs["solve_for"], parse_rational(inputs["target_epsilon"], "target_epsilon"),
                   parse_rational(inputs["delta"], "delta"), q=opt("q"), sigma=opt("sigma"),
                   steps=steps, accountant=inputs["accountant"], digits=inputs["digits"],
                   tolerance=parse_rational(inputs["tolerance"], "tolerance"),
                   sampler=inputs.get("sampler", "poisson"), neighbours=inputs.get("neighbours", "add-remove"),
                   batch_size=inputs.get("batch_size"), dataset_size=inputs.get("dataset_size"),
                   event=event, relation=inputs.get("neighboring_relation") if event is not None else None)


def _decision(point: dict[str, Any], target: Fraction) -> str:
    """What an evaluation's printed bracket decides against the target (as :func:`~.solve.evaluate` does)."""
    lower, upper = point["epsilon"]["lower"], point["epsilon"]["upper"]
    return ("meets" if upper is not None and Fraction(upper) <= target else
            "exceeds" if Fraction(lower) > target else "undecided")


def _embedded(problem: Problem, name: str, point: dict[str, Any]) -> list[str]:
    """The embedded privacy-curve certificate is intact and proves the point's bracket for its run."""
    cert = point["certificate"]
    if _with_leaves(problem):
        problems = [f"{name}.certificate: {line}" for line in integrity_errors(cert, EVENT_SCHEMA)]
        expected = {"event": to_json(problem.event_at(Fraction(point["value"]))),
                    "neighboring_relation": problem.relation,
                    "delta": fraction_text(problem.delta), "tolerance": point["tolerance"]}
    else:
        problems = [f"{name}.certificate: {line}" for line in integrity_errors(cert, RUN_SCHEMA)]
        phases, _ = problem.parts_at(Fraction(point["value"]))
        expected = {"phases": [p.to_json() for p in phases],
                    "delta": fraction_text(problem.delta), "tolerance": point["tolerance"]}
    if cert["inputs"] != expected:
        problems.append(f"{name}.certificate.inputs: not the run, delta and tolerance of {name}")
    if {k: cert["epsilon"][k] for k in ("lower", "upper")} != point["epsilon"]:
        problems.append(f"{name}.epsilon: not the bracket {name}.certificate proves")
    return problems


def _best_end(problem: Problem, low: Fraction, high: Fraction) -> Fraction:
    """The grid value at the range's best end: the smallest σ, or the largest steps or q."""
    grid = problem.grid
    return grid.value(grid.index_at_or_above(low) if problem.unknown == "sigma" else grid.index_at_or_below(high))


def self_consistency(cert: dict[str, Any]) -> list[str]:
    """The certificate's claims re-derived from its own fields (independently of calibrate): ``field: reason``.

    Each decision follows from its bracket and the target; the answer meets the target on the stated grid and
    the neighbour is the next grid value beyond it (or the answer is the best end of the supported range); both are
    evaluations of the search; an embedded certificate is intact and proves its point's bracket for that run;
    the verdict follows from all of these. The inputs must be valid.
    """
    problem = problem_of(cert["inputs"])
    target = problem.target_epsilon
    problems = [f"search.{i}.decision: not what search.{i}.epsilon says against the target"
                for i, e in enumerate(cert["search"]) if e["decision"] != _decision(e, target)]
    answer, neighbour = cert["answer"], cert["neighbour"]
    for name, point in (("answer", answer), ("neighbour", neighbour)):
        if point is None:
            continue
        if point["decision"] != _decision(point, target):
            problems.append(f"{name}.decision: not what {name}.epsilon says against the target")
        if {k: point[k] for k in ("value", "decision", "epsilon", "tolerance")} not in cert["search"]:
            problems.append(f"{name}: not one of the search's evaluations")
        if problem.accountant == "pld":
            problems += _embedded(problem, name, point)
    low, high = (Fraction(cert["range"][end]) for end in ("lower", "upper"))
    if (low, high) != problem.range:
        problems.append("range: not the supported range of the unknown")
    grid, value = problem.grid, Fraction(answer["value"])
    n = grid.index_at_or_below(value)
    if grid.value(n) != value or not low <= value <= high:
        problems.append("answer.value: not on the stated grid within the stated range")
    if answer["decision"] != "meets":
        problems.append("answer.decision: the answer must meet the target")
    if neighbour is not None:
        beyond = grid.value(n - 1 if problem.unknown == "sigma" else n + 1)
        if Fraction(neighbour["value"]) != beyond or not low <= beyond <= high:
            problems.append("neighbour.value: not the next grid value beyond the answer within the stated range")
    elif value != _best_end(problem, low, high):
        problems.append("neighbour: missing, yet the answer is not at the best end of the stated range")
    proven = all(_consistent(p) for p in (answer, neighbour))
    expected = ("inconsistent" if not proven else
                "calibrated" if neighbour is None or neighbour["decision"] == "exceeds" else "inconclusive")
    if cert["verdict"] != expected:
        problems.append(f"verdict: {expected} by the answer, the neighbour and their certificates")
    return problems


def recompute(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate of a fresh calibration of ``cert``'s inputs (raises InputError on bad inputs)."""
    return certificate(calibrate(problem_of(cert["inputs"])))


def compare(claimed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """``field: reason`` for each verified field of ``claimed`` that differs from its recomputation ``fresh``;
    if none does, for each claim that does not follow from the certificate's own fields."""
    problem = problem_of(fresh["inputs"])
    problems = _policy(problem).compare(claimed, fresh)
    embedded = compare_event if _with_leaves(problem) else compare_run
    for name in ("answer", "neighbour"):  # the embedded certificates' own derived fields (verdicts, widths)
        mine, theirs = claimed.get(name), fresh.get(name)
        if not problems and isinstance(mine, dict) and isinstance(theirs, dict) and "certificate" in mine:
            problems += [f"{name}.certificate.{line}" for line in embedded(mine["certificate"], theirs["certificate"])]
    return problems or self_consistency(claimed)


def check_calibration(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed
    (:func:`~rdp_verify.certificates.certificate.check_against`)."""
    return check_against(cert, SCHEMA, recompute, compare)
