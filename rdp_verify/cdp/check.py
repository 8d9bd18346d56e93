"""``rdp-verify check`` for CDP claim certificates (schema ``cdp-claim-v1``).

A claim certificate records in ``inputs`` the call that made it: ``claim`` names the function of
:mod:`rdp_verify.cdp.concentrated` and the other keys are its arguments (exact strings, whole numbers, the
convention's name). :func:`check_claim` is :func:`~rdp_verify.certificates.certificate.integrity_errors`,
then :func:`compare` of the certificate with :func:`recompute`, the same call again (deterministic: exact
rationals and Arb balls at the recorded precision): every field on :data:`POLICY`'s verified list must equal
the recomputation, then :func:`self_consistency` re-derives the verdicts that follow from per-part verdicts
and each witness's λ = α − 1 from the certificate's own fields. ``software`` is recorded, not verified.
"""

from __future__ import annotations

from fractions import Fraction
from inspect import signature
from typing import Any, Callable

from ..certificates.certificate import check_against
from ..certificates.fields import FieldPolicy
from ..foundations.inputs import InputError, parse_dps, parse_q, parse_rational, parse_sigma
from . import concentrated as cc
from .certificate import SCHEMA

__all__ = ["POLICY", "check_claim", "compare", "recompute", "self_consistency"]

CLAIMS: dict[str, Callable[..., dict[str, Any]]] = {
    f.__name__: f for f in (cc.zcdp, cc.tcdp, cc.best_rho, cc.largest_omega, cc.concentrated, cc.compose, cc.dp_to_cdp)
}

# Each claim writes a few of these top-level fields; every subtree is compared whole with the recomputation.
POLICY = FieldPolicy(
    verified=("format", "format_version", "content_hash", *(f"{key}.**" for key in (
        "inputs", "claim", "mechanism", "verdict", "proof", "witness", "implies", "work", "best_rho", "best_rho_exact",
        "attained", "argmax_alpha", "largest_omega", "order_bracket", "exact", "expected_loss", "directions",
        "theorem_bound", "direct", "tight", "max_divergence", "expected_loss_reverse", "lemma_3_10_symmetric",
        "theorem_3_5_mean_bound", "mean_le_bound", "optimal_tau_squared", "parts"))),
    not_verified=("software.*",),
)


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**4:
        raise InputError(f"{name}={value!r} must be a whole number from 1 to 10000")
    return value


def _argument(name: str, value: Any, optional: bool) -> Any:
    """One recorded argument, parsed and range-checked as the command line parses it (null only if ``optional``)."""
    if value is None and not optional:
        raise InputError(f"{name} must not be null")
    if value is None or name == "convention":
        return value
    if name == "q":
        return parse_q(value)
    if name == "sigma":
        return parse_sigma(value)
    if name == "sigmas":
        if not isinstance(value, list):
            raise InputError("sigmas must be a list")
        return [parse_sigma(s) for s in value]
    if name == "dps":
        return parse_dps(value)
    if name in ("budget", "group"):
        return _whole(value, name)
    return parse_rational(value, name)


def recompute(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate the recorded call writes now (raises InputError on bad inputs)."""
    inputs = dict(cert["inputs"])
    claim = CLAIMS[inputs.pop("claim")]
    parameters = signature(claim).parameters
    try:
        signature(claim).bind(**inputs)
    except TypeError as exc:  # an argument the function does not take, or one missing
        raise InputError(f"{exc} (claim {claim.__name__})") from None
    return claim(**{name: _argument(name, value, parameters[name].default is None) for name, value in inputs.items()})


def self_consistency(cert: dict[str, Any]) -> list[str]:
    """Fields re-derived from the certificate's own fields (independently of the claim functions)."""
    problems = []
    if "parts" in cert:  # DP => CDP
        parts = [cert["parts"]["mean"], cert["parts"]["subgaussian"]]
    elif "directions" in cert:  # (mu, tau)-CDP of the SGM
        parts = [d[part] for d in cert["directions"].values() for part in ("mean", "subgaussian")]
    else:
        parts = []
    if parts:
        verdict = "refuted" if "refuted" in parts else "holds" if all(p == "holds" for p in parts) else "inconclusive"
        if cert["verdict"] != verdict:
            problems.append(f"verdict: not what the parts' verdicts say ({verdict})")
    witness = cert.get("witness", {})
    if "alpha" in witness and Fraction(witness["lambda"]) != Fraction(witness["alpha"]) - 1:
        problems.append("witness.lambda: not witness.alpha - 1")
    return problems


def compare(claimed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """``field: reason`` for each verified field of ``claimed`` that differs from its recomputation ``fresh``;
    if none does, for each field that does not follow from the certificate's own fields."""
    return POLICY.compare(claimed, fresh) or self_consistency(claimed)


def check_claim(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed
    (:func:`~rdp_verify.certificates.certificate.check_against`)."""
    return check_against(cert, SCHEMA, recompute, compare)
