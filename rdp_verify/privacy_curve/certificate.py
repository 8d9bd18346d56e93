"""Proven (ε, δ) of an event tree, and its sealed certificate (format ``rdp_verify event privacy curve`` v1).

:func:`event_bracket` resolves the tree (:mod:`rdp_verify.privacy_curve.table`) and brackets its privacy curve:
a run of the Gaussian family alone is bracketed exactly as ``rdp-verify dp`` brackets its phases (its certificate
is then the privacy-curve certificate of :mod:`rdp_verify.curves.certificate`, unchanged); a run with other
mechanisms composes their proven PLDs (:mod:`rdp_verify.mechanisms`: losses rounded up for the upper end, down
for the lower end; Laplace's connect-the-dots and lowered-chord pairs; the uses of randomized response as one exact
law rounded once) with the SGM steps' discrete pairs on one grid (:func:`rdp_verify.curves.accountant.bracket`
with ``leaves``); the certificate's ``proofs`` name the discretisations used. δ(ε) is the larger of the two directions' curves, each the composition of the factors'
dominating (resp. dominated) PLDs: Zhu, Dong, Wang 2022 (AISTATS), Theorem 10 for adaptive composition;
Meiser & Mohammadi 2018 (CCS) / Koskela, Jälkö, Honkela 2020 (AISTATS) for the rounding of losses.

**The certificate** records the tree (``inputs.event``, the JSON of :func:`rdp_verify.events.read.to_json`), the
relation, the grid settings, the proven bracket per direction and the proofs by component. Its cross-check is
independent where one exists: a run that is one mechanism used once is held against that mechanism's exact δ at
the check point (the Neyman–Pearson region in Arb, :meth:`~rdp_verify.mechanisms.base.Mechanism.hockey_stick`,
which never uses a grid; for truncated sampling, whose exact δ lies between a dominated and a dominating pair, the
enclosure between their exact δ, named by the leaf's ``cross_check_method``), and a composition of finite-outcome
mechanisms alone (randomized response) against its
exact δ by enumerating the composed outcome counts (:mod:`rdp_verify.mechanisms.finite_composition`, up to
:data:`~rdp_verify.mechanisms.finite_composition.MAX_TERMS` count vectors); otherwise the cross-check says it has
none, and the verdict follows the proof alone.
:func:`check_event_certificate` recomputes every field from the recorded tree and settings (refusing settings
beyond the commands' limits before any work); nothing is compared within a tolerance.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import arb, ctx

from .. import __version__
from ..certificates.certificate import check_against, seal
from ..certificates.fields import FieldPolicy
from ..curves.accountant import (
    DEFAULT_TOLERANCE,
    DIRECTIONS,
    Bracket,
    Progress,
    Settings,
    bracket,
    delta_bracket,
    folded,
    total_steps,
)
from ..curves.certificate import (
    DIGITS,
    INFORMATIVE,
    _bracket_json,
    _check_point,
    _derived,
    _judged,
    check_limits,
    interval_text,
    settings_json,
    verdict_of,
)
from ..curves.gaussian import is_gaussian_run
from ..curves.per_epoch import is_per_epoch_run
from ..events.flatten import components
from ..events.model import DpEvent, NeighboringRelation
from ..events.read import from_named_tuple_json, render, to_json
from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError, Refused, check_alpha, check_tolerance, fraction_text, parse_rational
from ..mechanisms.finite_composition import MAX_TERMS, composed_delta, outcome_count
from ..pld.rounding import MAX_POINTS
from .table import Run, resolve

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "NotPrivate", "event_bracket", "certify_event",
           "check_event_certificate", "POLICY", "event_settings",
           "certificate_of_event", "compare_event"]

FORMAT = "rdp_verify event privacy curve"
FORMAT_VERSION = 1
SCHEMA = "event-curve-v1"
PRECISION = 256  # bits of the exact cross-check's Arb balls


class NotPrivate(InputError):
    """The run holds a non-private event (``NonPrivateDpEvent`` or a zero noise parameter): ε = ∞ at every δ < 1."""


PROOFS = {
    "composition": ("delta(epsilon) = max over the two directions of the hockey-stick divergence of the composed "
                    "dominating pairs (adaptive composition: Zhu, Dong, Wang 2022, Theorem 10); each direction "
                    "composed by exact integer convolution with directed rounding (rdp_verify.curves.compose)"),
    "sgm": ("Poisson-sampled Gaussian steps: connect-the-dots upper pairs and lowered-chord lower pairs "
            "(rdp_verify.curves.discretize; Doroshenko et al. 2022; Blackwell)"),
    "mechanisms": ("every other mechanism: its exact privacy-loss law (the CDFs of its pair in Arb) with losses "
                   "rounded up to the grid and masses up for the upper end, losses and masses rounded down for the "
                   "lower end (Meiser & Mohammadi 2018; Koskela, Jalko, Honkela 2020); the pairs of dp_accounting "
                   "0.6's PLD accountant (rdp_verify.mechanisms)"),
}
FINITE_PROOF = ("the uses of randomized response composed as one pair: the exact law of the composed loss (one atom "
                "per likelihood ratio: the coefficients of g(x)^n in exact integers where the ratios lie on a lattice "
                "b^k, else the outcome counts), its losses rounded to the grid once, up with masses up for the upper "
                "end and down with masses down for the lower end (rdp_verify.mechanisms.finite_composition."
                "SelfComposed; the rounding of the mechanisms' PLDs, applied to the composed pair)")

def _proofs(run: Run) -> dict[str, str]:
    """:data:`PROOFS`, and the proofs of the discretisations some leaves use instead of the rounding of losses."""
    extra = {}
    if any(f is not leaf for (leaf, _), (f, _) in zip(run.leaves, folded(run.leaves))):
        extra["finite compositions"] = FINITE_PROOF
    proofs = {type(leaf).proof for leaf, _ in run.leaves if getattr(type(leaf), "proof", None) is not None}
    extra.update(sorted(proofs))  # each mechanism's own (Mechanism.proof), in a fixed order
    return {**PROOFS, **extra}


def _check_relation(relation: Any) -> NeighboringRelation:
    return NeighboringRelation.of(relation)


def event_bracket(run: Run, *, delta: Fraction | None = None, epsilon: Fraction | None = None,
                  tolerance: Fraction = DEFAULT_TOLERANCE, settings: Settings | None = None,
                  progress: Progress | None = None) -> Bracket:
    """The proven bracket of ε(δ) or δ(ε) for a resolved run; :class:`NotPrivate` for a non-private one.
    ``progress`` hears how the grids go (:func:`rdp_verify.curves.accountant.bracket`); it changes nothing."""
    if run.non_private:
        raise NotPrivate(f"{render(run.event)} holds a non-private event (a NonPrivateDpEvent or a zero noise "
                         "parameter): no finite epsilon is proven (inf is exact for one applied to the whole dataset)")
    if run.empty:
        raise InputError(f"{render(run.event)} releases nothing about the data: there is no privacy loss to bound")
    return bracket(run.phases, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings,
                   leaves=run.leaves, progress=progress)


def _exact_delta(run: Run, point: Fraction) -> tuple[str, list[arb]] | None:
    """(method, a ball per direction containing its exact δ(point)) where a computation without the grid exists: one
    mechanism used once (its Neyman–Pearson region), or finite-outcome mechanisms alone, composed (their outcome
    counts enumerated, :mod:`rdp_verify.mechanisms.finite_composition`, up to its size limit); else None."""
    if run.phases or not run.leaves:
        return None
    if len(run.leaves) == 1 and run.leaves[0][1] == 1:
        leaf = run.leaves[0][0]
        method = getattr(leaf, "cross_check_method", "exact hockey-stick divergence (Neyman-Pearson region, Arb)")
        return method, [leaf.hockey_stick(point, PRECISION, d) for d in DIRECTIONS]
    masses = [leaf.finite_masses() for leaf, _ in run.leaves]
    if any(m is None for m in masses):
        return None
    parts = [(p, q, count) for (p, q), (_, count) in zip(masses, run.leaves)]
    if outcome_count(parts) > MAX_TERMS:
        return None
    return ("exact hockey-stick divergence of the composition over its outcome counts, Arb",
            [composed_delta(parts, point, PRECISION, d) for d in DIRECTIONS])


def _cross_check(run: Run, result: Bracket, point: Fraction, proven: tuple[Fraction, Fraction | None],
                 reference: Fraction) -> dict[str, Any]:
    """The exact δ where one exists (:func:`_exact_delta`), else none."""
    base = {"epsilon": fraction_text(point), "proven_delta": interval_text(*proven),
            "informative_below": decimal_text(reference * INFORMATIVE, 3, "down")}
    with ctx.workprec(PRECISION):
        found = _exact_delta(run, point)
        if found is None:
            return {"method": "none", "bound_kind": "none", **base,
                    "reason": "no computation independent of the grid exists for this composition",
                    "consistent": True, "informative": False}
        method, exact = found
        low, up = _in_unit(max(b.lower() for b in exact), "down"), _in_unit(max(b.upper() for b in exact), "up")
    value, error = (low + up) / 2, (up - low) / 2 + abs(up) * Fraction(1, 10**35)
    cross = {"method": method, "bound_kind": "proven", **base,
             "estimate": {"value": decimal_text(value, DIGITS), "error_bound": decimal_text(
                 error + abs(value - Fraction(decimal_text(value, DIGITS))), 3, "up")}}
    return {**cross, **_judged(cross)}  # from the printed numbers, as a check re-derives them


TINY = Fraction(1, 10**300)  # δ below this is written as 0 (a lower end) or TINY (an upper end): no huge exponents


def _in_unit(x: arb, rounding: str) -> Fraction:
    """An exact end ``x`` of a ball as a rational in [0, 1] (δ lies there), rounded in the given direction: an end
    that cancelled to a huge or non-finite value (e^ε·Q at a huge ε) is clamped to 1 (up) or 0 (down), one below
    :data:`TINY` to 0 (down) or TINY (up), so no number with a huge exponent is ever written out."""
    if not x.is_finite():
        return Fraction(1) if rounding == "up" else Fraction(0)
    if x >= 1:
        return Fraction(1)
    if not x > TINY_ARB:
        return Fraction(0) if rounding == "down" else TINY
    return Fraction(x.mid().str(40, radius=False))  # x is an exact point: 40 digits, the error bound adds 1e-35


TINY_ARB = arb(10) ** -300


def certificate_of_event(run: Run, result: Bracket, *, delta: Fraction | None, epsilon: Fraction | None,
                         tolerance: Fraction) -> dict[str, Any]:
    """Seal a computed bracket of a run with leaves (module docstring)."""
    point = _check_point(result, epsilon)
    proven = (result.lower, result.upper) if epsilon is not None else \
        (lambda b: (b.lower, b.upper))(delta_bracket(result.curves, point))
    reference = delta if delta is not None else proven[0]
    cross = _cross_check(run, result, point, proven, reference)
    quantity = "epsilon" if delta is not None else "delta"
    printed = _bracket_json(result.lower, result.upper, Fraction(tolerance))
    verdict, reason = verdict_of(quantity, printed, cross)
    cert = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": render(run.event),
        "inputs": {"event": to_json(run.event), "neighboring_relation": run.relation.name,
                   **({"delta": fraction_text(delta)} if delta is not None else {"epsilon": fraction_text(epsilon)}),
                   "tolerance": fraction_text(Fraction(tolerance))},
        "method": "discrete pairs",
        "settings": settings_json(result.curves),
        quantity: printed,
        "directions": {d: interval_text(lo, up) for d, (lo, up) in sorted(result.by_direction.items())},
        "components": [{"mechanism": type(leaf).__name__, "uses": count} for leaf, count in run.leaves]
        + [{"mechanism": "SampledGaussian" if p.sampler == "poisson" else f"{p.sampler} Gaussian", "uses": p.steps}
           for p in run.phases],
        "proofs": _proofs(run),
        "cross_check": cross,
        "work": {"composed_length": result.curves.longest(),
                 "refinements": [{"grid_step": fraction_text(r["grid_step"]),
                                  "relative_width": None if r["relative_width"] == float("inf")
                                  else decimal_text(Fraction(r["relative_width"]), 3, "up")}
                                 for r in result.refinements]},
        "verdict": verdict,
        "verdict_reason": reason,
        "software": {"rdp_verify": __version__},
    }
    return seal(cert, SCHEMA)


ZCDP_PROOFS = {
    "upper": ("(xi, rho)-zCDP is (alpha, xi + rho*alpha)-RDP at every order (Bun & Steinke 2016, Definition 1.1; zCDP "
              "guarantees compose by adding xi and rho, their Lemma 2.3), converted at settings.order by Balle et al. "
              "2020, Theorem 21 (Arb, rounded up)"),
    "lower": ("none: a zCDP guarantee bounds the mechanism from above only (it may release nothing), so the lower "
              "end is the trivial 0"),
}


def certificate_of_zcdp(run: Run, *, delta: Fraction | None, epsilon: Fraction | None, tolerance: Fraction,
                        order: Fraction | None = None) -> dict[str, Any]:
    """The sealed certificate of a run of zCDP guarantees (:mod:`rdp_verify.privacy_curve.zcdp`); ``order`` is a
    recorded order to re-evaluate (a check), else the search chooses one."""
    from . import zcdp

    rho, xi = run.zcdp
    if delta is not None:
        upper, alpha = zcdp.epsilon_upper(rho, xi, delta) if order is None else \
            zcdp.epsilon_at(rho, xi, delta, order)
    else:
        upper, alpha = zcdp.delta_upper(rho, xi, epsilon) if order is None else zcdp.delta_at(rho, xi, epsilon, order)
    quantity = "epsilon" if delta is not None else "delta"
    printed = _bracket_json(Fraction(0), upper, Fraction(tolerance))
    cross = {"method": "none", "bound_kind": "none", "epsilon": fraction_text(epsilon if epsilon is not None else upper),
             "proven_delta": interval_text(Fraction(0), delta if delta is not None else upper),
             "informative_below": "0", "reason": "an abstract zCDP guarantee has no exact curve to compare with",
             "consistent": True, "informative": False}
    verdict, reason = _verdict(quantity, printed, cross, "zCDP conversion")
    cert = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "mechanism": render(run.event),
        "inputs": {"event": to_json(run.event), "neighboring_relation": run.relation.name,
                   **({"delta": fraction_text(delta)} if delta is not None else {"epsilon": fraction_text(epsilon)}),
                   "tolerance": fraction_text(Fraction(tolerance))},
        "method": "zCDP conversion",
        "settings": {"order": fraction_text(alpha), "rho": fraction_text(rho), "xi": fraction_text(xi)},
        quantity: printed,
        "directions": {d: interval_text(Fraction(0), upper) for d in ("add", "remove")},
        "components": [{"mechanism": "ZCDp", "uses": sum(c.count for c in components(run.event))}],
        "proofs": ZCDP_PROOFS, "cross_check": cross,
        "work": {"composed_length": 0, "refinements": []},
        "verdict": verdict, "verdict_reason": reason, "software": {"rdp_verify": __version__},
    }
    return seal(cert, SCHEMA)


ZCDP_REASON = "no lower end: a zCDP guarantee bounds the mechanism from above only"


def _verdict(quantity: str, printed: dict[str, Any], cross: dict[str, Any], method: str) -> tuple[str, str]:
    """The verdict: as for every privacy curve (:func:`rdp_verify.curves.certificate.verdict_of`), except that a
    zCDP conversion with a finite upper end is ``partial`` for its own reason (there is no lower end to prove)."""
    if method == "zCDP conversion" and printed["upper"] is not None:
        return "partial", ZCDP_REASON
    return verdict_of(quantity, printed, cross)


def certify_event(event: DpEvent, relation: Any = None, *, delta: Fraction | None = None,
                  epsilon: Fraction | None = None, tolerance: Fraction = DEFAULT_TOLERANCE,
                  settings: Settings | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """The sealed certificate of a run with other mechanisms than the SGM family (a Gaussian-family run gets the
    privacy-curve certificate of :mod:`rdp_verify.curves.certificate` from ``rdp-verify dp``). ``progress``: see
    :func:`event_bracket`, then ``{"stage": "cross-check"}`` before the certificate's cross-check."""
    run = resolve(event, relation)
    if run.zcdp is not None:
        return certificate_of_zcdp(run, delta=delta, epsilon=epsilon, tolerance=tolerance)
    result = event_bracket(run, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings,
                           progress=progress)
    if progress is not None:
        progress({"stage": "cross-check"})
    return certificate_of_event(run, result, delta=delta, epsilon=epsilon, tolerance=tolerance)


# -- re-verification ---------------------------------------------------------------------------------

NOT_VERIFIED = ("software.rdp_verify", "work.refinements.**")
POLICY = FieldPolicy(
    verified=("format", "format_version", "mechanism", "inputs.**", "method", "settings.**", "epsilon.lower",
              "epsilon.upper", "delta.lower", "delta.upper", "directions.*.*", "components.**", "proofs.*",
              "cross_check.method", "cross_check.bound_kind", "cross_check.epsilon", "cross_check.proven_delta.*",
              "cross_check.informative_below", "cross_check.reason", "cross_check.estimate.*",
              "work.composed_length", "content_hash"),
    derived=("epsilon.relative_width", "epsilon.tolerance_met", "epsilon.shortfall", "delta.relative_width",
             "delta.tolerance_met", "delta.shortfall", "cross_check.consistent", "cross_check.informative",
             "verdict", "verdict_reason"),
    not_verified=NOT_VERIFIED,
)


def event_settings(run: Run, s: dict[str, Any], tolerance: Fraction) -> Settings:
    """The recorded grid settings, refused before any work when beyond what the commands choose (the SGM steps'
    limits of :func:`rdp_verify.curves.certificate.check_limits`, the tail shared over every use, and each
    mechanism's grid at most :data:`~rdp_verify.pld.rounding.MAX_POINTS`)."""
    settings = check_limits(run.phases, s, tolerance, steps=total_steps(run.phases, run.leaves))
    for leaf, _ in run.leaves:  # a leaf's grid spans at least its loss scale in each direction
        if leaf.loss_scale() / settings.grid_step > MAX_POINTS:
            raise Refused(f"settings: grid_step={s['grid_step']} makes a grid beyond {MAX_POINTS} points for "
                          f"{type(leaf).__name__}: beyond the largest work the commands do (docs/certificates.md)")
    return settings


def recompute(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate recomputed from the recorded tree, relation and settings."""
    inp = cert["inputs"]
    event = from_named_tuple_json(inp["event"])
    run = resolve(event, inp["neighboring_relation"])
    if run.zcdp is not None:
        delta = parse_rational(inp["delta"], "delta") if "delta" in inp else None
        epsilon = parse_rational(inp["epsilon"], "epsilon") if "epsilon" in inp else None
        order = parse_rational(cert["settings"]["order"], "order")
        return certificate_of_zcdp(run, delta=delta, epsilon=epsilon,
                                   tolerance=check_tolerance(parse_rational(inp["tolerance"], "tolerance")),
                                   order=check_alpha(order, "settings.order"))
    if run.non_private or run.empty:
        raise InputError("inputs: the recorded event is not a run of mechanisms with a privacy curve")
    if not run.leaves and (is_gaussian_run(run.phases) or is_per_epoch_run(run.phases)):  # no grid: dp's format
        raise InputError("inputs: the recorded event is a run bracketed in closed form or by per-epoch bounds, whose "
                         "certificate is rdp-verify dp's (rdp_verify privacy curve), not an event privacy curve")
    # (steps of the Poisson-sampled Gaussian alone are one: the drop-in accountant writes them under REPLACE_SPECIAL)
    delta = parse_rational(inp["delta"], "delta") if "delta" in inp else None
    epsilon = parse_rational(inp["epsilon"], "epsilon") if "epsilon" in inp else None
    tolerance = check_tolerance(parse_rational(inp["tolerance"], "tolerance"))
    settings = event_settings(run, cert["settings"], tolerance)
    result = event_bracket(run, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings)
    return certificate_of_event(run, result, delta=delta, epsilon=epsilon, tolerance=tolerance)


def compare_event(claimed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    problems = POLICY.compare(claimed, fresh)
    if problems:
        return problems
    quantity = "epsilon" if "delta" in claimed["inputs"] else "delta"
    for key, value in _derived(claimed[quantity], Fraction(claimed["inputs"]["tolerance"])).items():
        if claimed[quantity][key] != value:
            problems.append(f"{quantity}.{key}: not derived from the certificate's own ends")
    cross = claimed["cross_check"]  # consistent and informative follow from its estimate and proven delta
    judged = {"consistent": True, "informative": False} if cross["method"] == "none" else _judged(cross)
    for key, value in judged.items():
        if cross[key] != value:
            problems.append(f"cross_check.{key}: not derived from the certificate's estimate and proven delta")
    verdict, reason = _verdict(quantity, claimed[quantity], cross, claimed["method"])
    if claimed["verdict"] != verdict:
        problems.append(f"verdict: {verdict} by the certificate's bracket and cross-check")
    if claimed["verdict_reason"] != reason:
        problems.append("verdict_reason: not the reason for the certificate's verdict")
    return problems


def check_event_certificate(cert: Any) -> list[str]:
    """``field: reason`` lines, empty when every field but :data:`NOT_VERIFIED` was recomputed and confirmed."""
    return check_against(cert, SCHEMA, recompute, compare_event)
