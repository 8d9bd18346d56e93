"""Re-verification of sealed audit reports (schema ``audit-v3``): ``rdp-verify check`` of ``audit --json``/``--out``.

An audit report records its claim (:meth:`rdp_verify.audit.claims.Claim.to_json`) and the ``settings`` it was
computed with (the digits of the RDP enclosures, the relative tolerance of the search over orders, the
tolerance of the privacy-curve bracket). :func:`check_audit_report` is
:func:`~rdp_verify.certificates.certificate.integrity_errors` (schema and hash), then :func:`compare` of the
report with :func:`recompute`, the same audit repeated from the recorded claim and settings (exact rationals,
Arb and exact-integer privacy curves: deterministic), so every verdict, bracket, margin, argument and search
count must equal the recomputation. The embedded certificates are held to their own formats: each must be
intact (its own schema and content hash), its fields are on :data:`POLICY` under their prefix, and its
format's comparison runs on it (the privacy-curve certificate's estimate within its error bounds; the core
certificate's self-consistency). ``software`` is recorded, not verified.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ..certificates.certificate import POLICY as CORE_POLICY
from ..certificates.certificate import SCHEMA as CORE_SCHEMA
from ..certificates.certificate import check_against, integrity_errors
from ..certificates.certificate import compare as compare_core
from ..certificates.fields import FieldPolicy
from ..curves.certificate import POLICY as RUN_POLICY
from ..curves.certificate import SCHEMA as RUN_SCHEMA
from ..curves.certificate import compare as compare_run
from ..foundations.inputs import InputError, parse_dps, parse_tolerance
from ..foundations.results import MethodUnavailable
from .claims import Claim
from .report import SCHEMA, audit_claim

__all__ = ["POLICY", "recompute", "compare", "check_audit_report"]

_RDP = "accountants.rdp"
_CONVERSION = f"{_RDP}.conversions.*"
_PLD = "accountants.pld"

POLICY = FieldPolicy(
    verified=(
        "format", "format_version", "claim.**", "assumptions.*", "verdict", "decided_by.accountant",
        "decided_by.argument", "note", "settings.*", "content_hash",
        _RDP, *(f"{_RDP}.{k}" for k in ("verdict", "conversion", "epsilon.*", "margin", "optimal_order")),
        *(f"{_CONVERSION}.{k}" for k in ("verdict", "epsilon.*", "margin", "optimal_order", "search.*",
                                         "delta_at_reported_epsilon.*", "order_list", "order_list.*",
                                         "order_list.epsilon.*", "notes", "notes.*")),
        _PLD, *(f"{_PLD}.{k}" for k in ("verdict", "argument", "assumption", "as_poisson", "as_poisson.epsilon.*",
                                        "as_poisson.note", "epsilon.*", "delta_at_reported_epsilon.*", "margin",
                                        "tightened")),
    ),
    not_verified=("software.*",),
) + CORE_POLICY.under(f"{_CONVERSION}.certificates.*") + RUN_POLICY.under(f"{_PLD}.certificate")


def recompute(report: dict[str, Any]) -> dict[str, Any]:
    """The report :func:`~rdp_verify.audit.report.audit_claim` writes for the recorded claim and settings
    (raises InputError on bad inputs)."""
    settings = report["settings"]
    claim = Claim.from_json(report["claim"])
    try:
        return audit_claim(claim, parse_dps(settings["dps"]),
                           parse_tolerance(settings["relative_tolerance"], "settings.relative_tolerance"),
                           parse_tolerance(settings["tolerance"], "settings.tolerance"))
    except MethodUnavailable as exc:  # a genuine report was computed, so its inputs were not these
        raise InputError(f"the recorded claim cannot be audited: {exc}") from None


def _embedded(report: dict[str, Any]) -> Iterator[tuple[str, Any, str, Callable[[Any, Any], list[str]]]]:
    """Each embedded certificate: its path, itself, its schema and its format's comparison."""
    def field(obj: Any, key: str) -> Any:  # robust to any JSON: the schema is consulted separately
        return obj.get(key) if isinstance(obj, dict) else None

    accountants = field(report, "accountants")
    conversions = field(field(accountants, "rdp"), "conversions")
    for name, entry in conversions.items() if isinstance(conversions, dict) else ():
        certs = field(entry, "certificates")
        for i, cert in enumerate(certs if isinstance(certs, list) else ()):
            yield f"{_RDP}.conversions.{name}.certificates.{i}", cert, CORE_SCHEMA, compare_core
    cert = field(field(accountants, "pld"), "certificate")
    if cert is not None:
        yield f"{_PLD}.certificate", cert, RUN_SCHEMA, compare_run


def compare(claimed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """``field: reason`` for each field of ``claimed`` not confirmed by the recomputation ``fresh``: the verified
    fields must be equal; each embedded certificate must be intact and pass its own format's comparison."""
    problems = POLICY.compare(claimed, fresh)
    fresh_certs = {path: cert for path, cert, _, _ in _embedded(fresh)}
    for path, cert, schema, compare_cert in _embedded(claimed):
        broken = integrity_errors(cert, schema)
        problems += [f"{path}: {line}" for line in broken]
        if not problems and path in fresh_certs:
            problems += [f"{path}.{line}" for line in compare_cert(cert, fresh_certs[path])]
    return problems


def check_audit_report(report: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (module docstring)."""
    return check_against(report, SCHEMA, recompute, compare)
