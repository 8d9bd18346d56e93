"""Sealed certificates of a run's trade-off curve (schema ``tradeoff-v1``) and their re-verification.

:func:`certificate_of` records the run, the grid it was composed on (the same ``settings`` as a
privacy-curve certificate), the envelopes [f_low(α), f_up(α)] at the α asked for, TPR at each FPR, the
μ bracket, the advantage and the Bayesian success bounds, every number rounded outward to 12
significant digits (:func:`rdp_verify.curves.certificate.interval_text`), with the theorem each rests on (:data:`PROOFS`).

:func:`check_tradeoff_certificate` re-verifies every field but :data:`NOT_VERIFIED`: schema and content hash,
then a recomputation from the recorded inputs and settings (exact integers and Arb: the same on every machine;
per-epoch runs re-prove their recorded tests, and their envelopes use the recorded random-allocation orders and
composed pairs, ``settings.envelope_*``: :class:`~rdp_verify.tradeoff.envelope.PerEpochEnvelope`; a certificate
without those fields, from before them, is recomputed as it was made) that must match field for field.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Sequence

from .. import __version__
from ..certificates.certificate import check_against, seal
from ..certificates.fields import FieldPolicy
from ..curves.accountant import Settings, compose_run, delta_bracket
from ..curves.certificate import (
    ASSUMPTIONS_BY_FAMILY,
    interval_text,
    mechanism_of,
    refinements_json,
    settings_from_json,
    settings_json,
)
from ..curves.certificate import (
    PROOFS as CURVE_PROOFS,
)
from ..curves.gaussian import GaussianCurve
from ..curves.options import DEFAULT_TOLERANCE
from ..curves.per_epoch import PerEpochBounds
from ..events.read import from_named_tuple_json, render, to_json
from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError, check_tolerance, fraction_text, parse_rational
from ..foundations.run import Phase, run_family
from ..privacy_curve.certificate import PROOFS as EVENT_PROOFS
from ..privacy_curve.certificate import event_settings
from ..privacy_curve.table import Run, resolve
from .curve import DEFAULT_FPRS, TradeOff, bayes_epsilons, check_prior, check_rate, tradeoff
from .envelope import LADDER, Envelopes, PerEpochEnvelope

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "POLICY", "NOT_VERIFIED", "PROOFS", "certificate_of",
           "certify_tradeoff", "check_tradeoff_certificate", "recompute", "DEFAULT_ALPHAS", "DEFAULT_PRIORS", "event_run", "check_event_run"]

# a run with mechanisms beyond the Gaussian family (an event tree's leaves): what its curve assumes
EVENT_ASSUMPTIONS = {
    "mechanisms": "every leaf of the event tree is the mechanism it names, run on the data as dp_accounting defines "
                  "it (sensitivity, noise, relation); the uses compose adaptively",
    "neighbours": "the neighbouring relation recorded in inputs.neighboring_relation",
}

FORMAT = "rdp_verify trade-off curve"
FORMAT_VERSION = 1
SCHEMA = "tradeoff-v1"
DEFAULT_ALPHAS = (Fraction(1, 10**5), Fraction(1, 10**3), Fraction(1, 100), Fraction(1, 10), Fraction(1, 2))
DEFAULT_PRIORS = (Fraction(1, 100), Fraction(1, 2))
NOT_VERIFIED = ("software.rdp_verify", "work.**")

PROOFS = {
    "envelopes": ("f(alpha) = sup over epsilon >= 0 of max(0, 1 - delta(epsilon) - e^epsilon alpha, "
                  "e^-epsilon (1 - delta(epsilon) - alpha)) (Dong, Roth, Su 2022, Propositions 2.5 and 2.12), "
                  "decreasing in delta: the dominating pairs' delta (an upper bound for every epsilon at once) give "
                  "f_lower, the dominated pairs' delta give f_upper. Each supremum is a convex problem in e^epsilon "
                  "or e^-epsilon: f_lower is the value at a chosen point (Arb, rounded pessimistically), f_upper "
                  "bounds the minimum by tangent lines with proven slope signs (rdp_verify.tradeoff.envelope)."),
    "tpr": "TPR = 1 - f(FPR): the best test's true-positive rate at a false-positive rate (Dong, Roth, Su 2022)",
    "mu": ("upper: the no-amplification Gaussian mechanism, mu0^2 = sum Delta^2 T_i / sigma_i^2 (Dong, Roth, Su 2022, "
           "Corollary 3.3). lower (how = gaussian mechanism): q = 1, mu* = mu0; (all-steps component): Poisson "
           "add/remove or per-epoch zero-out: the worst-case pair's mixture holds, with positive weight w, the "
           "component where the record entered every step, the unamplified Gaussian mechanism against the same "
           "null, so f(alpha) <= 1 - w(1 - G_mu0(alpha)) < G_mu(alpha) for small alpha and every mu < mu0: "
           "mu* = mu0; (envelope): mu(alpha) = Phi^-1(1 - alpha) - Phi^-1(f_upper(alpha)) on a quarter-decade "
           "grid of alpha: below it G_mu(alpha) > f(alpha), so the run is not mu-GDP. grid_lower: that last bound in every case "
           "(how much mu the curve needs at alpha >= 1e-10)"),
    "advantage": "max over alpha of 1 - alpha - f(alpha) = delta(0), the bracket of the privacy curve at epsilon = 0",
    "bayes": ("the best probability of guessing membership with prior pi is 1 - p + p delta(log((1 - p)/p)), "
              "p = min(pi, 1 - pi) (convex duality of f and delta, Dong, Roth, Su 2022, Proposition 2.12)"),
}


PER_EPOCH_PROOF = (
    "Shuffled and balls-in-bins runs (rdp_verify.tradeoff.envelope). f_lower = max(G_mu0, L): G_mu0 of the "
    "no-amplification Gaussian mechanism; L(alpha) = max over the epsilons of "
    "settings.envelope_lower_random_allocation of max(0, 1 - delta_up(epsilon) - e^epsilon alpha, "
    "e^-epsilon (1 - delta_up(epsilon) - alpha)), delta_up the proven random-allocation upper curve at the recorded "
    "order (Feldman & Shenfeld 2025, remove direction; add direction a shifted Gaussian), rounded up: every "
    "(epsilon, delta)-DP mechanism has f >= f_{epsilon,delta} (Dong, Roth, Su 2022, Proposition 2.5), each line's Arb "
    "ball rounded down. f_upper = min(1 - alpha, the lower convex hull of the count tests' (alpha, beta) and mirror "
    "images, F): F is the formula of f from delta on delta_low, the composed binned per-epoch maxima PLDs of "
    "settings.envelope_upper_composed (Chua et al. 2024, NeurIPS, Section 3; P-masses and losses rounded down, so "
    "delta_low <= delta at every epsilon), f decreasing in delta, the minimum bounded below by tangent lines with "
    "proven slope signs: rounded up.")
# where a ladder point records an add order: the add direction's Renyi DP of the exact pair (certificates from
# before it keep the text above)
PER_EPOCH_PROOF_RENYI_ADD = PER_EPOCH_PROOF.replace(
    "add direction a shifted Gaussian)", "add direction a shifted Gaussian, or at a recorded add_order the Renyi DP "
    "of the exact pair through the Laplace transform of the lognormal, rdp_verify.curves.random_allocation)")


def _per_epoch_proof(settings: dict[str, Any]) -> str:
    entries = settings.get("envelope_lower_random_allocation") or []
    return PER_EPOCH_PROOF_RENYI_ADD if any("add_order" in e for e in entries) else PER_EPOCH_PROOF


def _frozen(trade: TradeOff, points: Sequence[Fraction]) -> TradeOff:
    """Per-epoch runs: the trade-off at the explicit-pair tests searched once at every ε read off and for the upper
    envelope's attacks (:data:`~rdp_verify.tradeoff.envelope.LADDER`), which a certificate records (the search is a
    double-precision heuristic; a check re-proves the recorded tests). A new value: ``trade`` is not changed, so
    what its caller computed from it before or after does not depend on this call."""
    curves = trade.curves
    if not isinstance(curves, PerEpochBounds) or curves.given is not None:
        return trade
    found: list[Any] = []
    for eps in points:
        found += [t for t in delta_bracket(curves, eps).proof.given if t not in found]
    found += [t for t in curves.attack_points(LADDER)[1] if t not in found]  # the upper envelope's attacks
    frozen = replace(curves, given=tuple(found))
    return replace(trade, curves=frozen, envelopes=Envelopes(frozen, trade.envelopes.per_epoch))


def _bayes_points(priors: Sequence[Fraction]) -> list[Fraction]:
    return [e for prior in priors for e in bayes_epsilons(prior)]


def certificate_of(trade: TradeOff, *, alphas: Sequence[Fraction] = DEFAULT_ALPHAS,
                   fprs: Sequence[Fraction] = DEFAULT_FPRS, priors: Sequence[Fraction] = DEFAULT_PRIORS,
                   tolerance: Fraction | None = None, run: Run | None = None) -> dict[str, Any]:
    """The sealed certificate of a computed trade-off curve (module docstring). ``run``: the event tree the run
    was read from (``tradeoff --event``), recorded as ``inputs.event`` and ``inputs.neighboring_relation``."""
    alphas = [check_rate(a, "alpha") for a in alphas]
    fprs = [check_rate(a, "FPR") for a in fprs]
    priors = [check_prior(p) for p in priors]
    trade = _frozen(trade, [Fraction(0), *_bayes_points(priors)])
    phases = trade.phases
    method = trade.method
    # a per-epoch run's envelope settings (searched once here; none recorded: a certificate from before them)
    extra = trade.envelopes.prepare().to_json() if isinstance(trade.curves, PerEpochBounds) else {}
    envelope = []
    for a in alphas:
        low, up = trade.f(a)
        ends = interval_text(low, up)
        envelope.append({"alpha": fraction_text(a), "f_lower": ends["lower"], "f_upper": ends["upper"]})
    tpr = []
    for a in fprs:
        low, up = trade.tpr(a)
        tpr.append({"fpr": fraction_text(a), **interval_text(low, up),
                    "relative_width": decimal_text((up - low) / up, 3, "up") if up > 0 else "0"})
    if trade.leaves:  # an event tree's mechanisms beyond the Gaussian family, on the same discrete pairs
        family = run_family(phases) if phases else "add-remove"
        curve_proofs = {"upper": EVENT_PROOFS["composition"] + "; " + EVENT_PROOFS["mechanisms"],
                        "lower": EVENT_PROOFS["composition"] + "; " + EVENT_PROOFS["mechanisms"]}
    else:
        family = run_family(phases)
        curve_proofs = CURVE_PROOFS["discrete pairs (replace-one)" if method == "discrete pairs"
                                    and family == "replace-one" else method]
    event = {} if run is None else {"event": to_json(run.event), "neighboring_relation": run.relation.name}
    cert = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": mechanism_of(phases) if run is None else render(run.event),
        "inputs": {"phases": [p.to_json() for p in phases], **event, "alphas": [fraction_text(a) for a in alphas],
                   "fprs": [fraction_text(a) for a in fprs], "priors": [fraction_text(p) for p in priors],
                   **({} if tolerance is None else {"tolerance": fraction_text(Fraction(tolerance))})},
        "assumptions": ASSUMPTIONS_BY_FAMILY[family] if not trade.leaves else EVENT_ASSUMPTIONS,
        "method": method,
        "settings": {**settings_json(trade.curves), **extra},
        "envelope": envelope,
        "tpr": tpr,
        "mu": {**interval_text(trade.mu_lower(), trade.mu_upper()),
               "how": ("gaussian mechanism" if isinstance(trade.curves, GaussianCurve)
                       else "all-steps component" if trade.mu_exact
                       else "envelope, no upper end (mechanisms beyond the Gaussian family)" if trade.leaves
                       else "envelope"),
               "grid_lower": interval_text(trade.mu_grid_lower(), None)["lower"]},
        "advantage": interval_text(*trade.advantage()),
        "bayes": [{"prior": fraction_text(p), **interval_text(*trade.bayes(p))} for p in priors],
        "proofs": {**PROOFS, "upper_privacy_curve": curve_proofs["upper"], "lower_privacy_curve": curve_proofs["lower"],
                   **({"envelopes_per_epoch": _per_epoch_proof(extra)} if extra else {})},
        "work": {"refinements": refinements_json(trade.refinements)},
        "software": {"rdp_verify": __version__},
    }
    return seal(cert, SCHEMA)


def certify_tradeoff(phases: Sequence[Phase], *, alphas: Sequence[Fraction] = DEFAULT_ALPHAS,
                     fprs: Sequence[Fraction] = DEFAULT_FPRS, priors: Sequence[Fraction] = DEFAULT_PRIORS,
                     tolerance: Fraction | None = None) -> dict[str, Any]:
    """Compose the run (the grid chosen for the smallest rate asked about) and seal its trade-off curve."""
    kwargs = {} if tolerance is None else {"tolerance": Fraction(tolerance)}
    trade = tradeoff(phases, fprs=[*alphas, *fprs], **kwargs)
    return certificate_of(trade, alphas=alphas, fprs=fprs, priors=priors, tolerance=tolerance)


def event_run(event: Any, relation: Any = None) -> Run:
    """An event tree resolved for a trade-off curve (:func:`rdp_verify.privacy_curve.table.resolve`), refused
    by :func:`check_event_run` where the curve is not built."""
    return check_event_run(resolve(event, relation))


def check_event_run(run: Run) -> Run:
    """``run``, refused in one line where the trade-off curve is not built: a non-private run (f = 0: no test has
    any error bound), a run that releases nothing, an abstract zCDP guarantee (``rdp-verify dp --event`` converts
    it to (ε, δ))."""
    if run.non_private:
        raise InputError(f"{render(run.event)} holds a non-private event: its trade-off function is 0 (no membership "
                         "test is bounded), there is no curve to certify")
    if run.empty:
        raise InputError(f"{render(run.event)} releases nothing about the data: its trade-off function is 1 - alpha")
    if run.zcdp is not None:
        raise InputError(f"{render(run.event)} is an abstract zCDP guarantee: rdp-verify tradeoff needs mechanisms "
                         "(rdp-verify dp --event converts zCDP to (epsilon, delta))")
    return run


POLICY = FieldPolicy(
    verified=("format", "format_version", "mechanism", "inputs.**", "assumptions.*", "method", "settings.**",
              "envelope.**", "tpr.**", "mu.*", "advantage.*", "bayes.**", "proofs.*", "content_hash"),
    not_verified=NOT_VERIFIED,
)


def recompute(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate recomputed from ``cert``'s inputs on its recorded settings."""
    inp = cert["inputs"]
    tolerance = parse_rational(inp["tolerance"], "tolerance") if "tolerance" in inp else DEFAULT_TOLERANCE
    run = None
    if "event" in inp:  # the phases and leaves come from the recorded tree; its recorded phases are compared
        run = event_run(from_named_tuple_json(inp["event"]), inp.get("neighboring_relation"))
        phases = run.phases
    else:
        phases = tuple(Phase.from_json(p) for p in inp["phases"])
    if run is not None and run.leaves:
        settings = event_settings(run, cert["settings"], check_tolerance(tolerance))  # Refused beyond the limits
        trade = tradeoff(phases, curves=compose_run(phases, settings, leaves=run.leaves))
        return certificate_of(trade, alphas=[parse_rational(a, "alpha") for a in inp["alphas"]],
                              fprs=[parse_rational(a, "fpr") for a in inp["fprs"]],
                              priors=[parse_rational(p, "prior") for p in inp["priors"]],
                              tolerance=parse_rational(inp["tolerance"], "tolerance") if "tolerance" in inp else None,
                              run=run)
    recorded = settings_from_json(phases, cert["settings"], check_tolerance(tolerance))  # Refused beyond the limits
    envelope = PerEpochEnvelope.from_json(phases, cert["settings"]) if isinstance(recorded, PerEpochBounds) else None
    curves = compose_run(phases, recorded) if isinstance(recorded, Settings) else recorded
    trade = tradeoff(phases, curves=curves, recorded=envelope)
    fresh = certificate_of(trade, alphas=[parse_rational(a, "alpha") for a in inp["alphas"]],
                           fprs=[parse_rational(a, "fpr") for a in inp["fprs"]],
                           priors=[parse_rational(p, "prior") for p in inp["priors"]],
                           tolerance=parse_rational(inp["tolerance"], "tolerance") if "tolerance" in inp else None,
                           run=run)
    return fresh


def check_tradeoff_certificate(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (module docstring)."""
    return check_against(cert, SCHEMA, recompute, POLICY.compare)

