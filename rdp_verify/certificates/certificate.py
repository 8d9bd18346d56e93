"""Certificate files: content hash, JSON Schema validation, checking.

A certificate is the JSON object built by :func:`rdp_verify.certificates.certify.certify`
plus ``content_hash`` = ``"sha256:" + sha256(canonical JSON of everything
else)``, where canonical JSON is ``json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8. The shipped
schema ``schemas/certificate-v1.schema.json`` fixes the keys later tools rely
on (``epsilon.lower``, ``epsilon.upper``, ``theorem11.condition_4``,
``theorem11.condition_5``, ``corollary7.holds``, ``verdict``).

:func:`check_certificate` validates the schema, the hash, then recomputes the
certificate from its inputs and confirms each claim, naming the first field
that fails.
"""

from __future__ import annotations

import hashlib
import json
import os
from fractions import Fraction
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Iterable

import jsonschema

from ..foundations.inputs import (
    SGM,
    InputError,
    parse_alpha,
    parse_dps,
    parse_q,
    parse_sigma,
)
from .certify import certify

__all__ = [
    "seal",
    "content_hash",
    "validate",
    "dumps",
    "load",
    "check_certificate",
    "CertificateError",
    "integrity_errors",
]


class CertificateError(ValueError):
    """A certificate file cannot be read as JSON at all (CLI exit 2)."""


def canonical_bytes(cert: dict[str, Any]) -> bytes:
    body = {k: v for k, v in cert.items() if k != "content_hash"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def content_hash(cert: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(cert)).hexdigest()


SCHEMA = "certificate-v1"  # the core certificate; others ship beside it in rdp_verify/schemas/


def seal(cert: dict[str, Any], schema: str = SCHEMA) -> dict[str, Any]:
    """Return the certificate with its content hash, validated against ``schemas/<schema>.schema.json``."""
    sealed = {**cert, "content_hash": content_hash(cert)}
    validate(sealed, schema)
    return sealed


@lru_cache(maxsize=None)
def _validator(schema: str) -> jsonschema.protocols.Validator:
    doc = json.loads(files(__package__).joinpath(f"schemas/{schema}.schema.json").read_text("utf-8"))
    cls = jsonschema.validators.validator_for(doc)
    cls.check_schema(doc)
    return cls(doc)


def schema_errors(cert: Any, schema: str = SCHEMA) -> list[str]:
    """Human-readable schema violations, each prefixed by the JSON path."""
    out = []
    for err in sorted(_validator(schema).iter_errors(cert), key=lambda e: list(e.absolute_path)):
        path = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        out.append(f"{path}: {err.message}")
    return out


def validate(cert: Any, schema: str = SCHEMA) -> None:
    errors = schema_errors(cert, schema)
    if errors:
        raise jsonschema.ValidationError(errors[0])


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def load(path: str | os.PathLike) -> Any:
    """Parse a certificate file (one certificate or a JSON array of them)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CertificateError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CertificateError(f"{path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CertificateError(f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from None


def _contains(claim: dict[str, str], computed: dict[str, str]) -> bool:
    return Fraction(claim["lower"]) <= Fraction(computed["lower"]) and Fraction(computed["upper"]) <= Fraction(claim["upper"])


def _overlaps(claim: dict[str, str] | None, computed: dict[str, str] | None) -> bool:
    if claim is None or computed is None:
        return claim is computed
    c, e = Fraction(claim["value"]), Fraction(claim["error_bound"])
    d, f = Fraction(computed["value"]), Fraction(computed["error_bound"])
    return abs(c - d) <= e + f


def _width_matches(eps: dict[str, str], dps: int) -> bool:
    """The printed interval is no wider than its own ``relative_width`` says.

    The ends are rounded outward to dps + 5 digits, which may add up to
    2·10^−(dps+4) to the relative width.
    """
    lo, hi = Fraction(eps["lower"]), Fraction(eps["upper"])
    mid = (lo + hi) / 2
    if mid == 0:
        return lo == hi
    return (hi - lo) / abs(mid) <= Fraction(eps["relative_width"]) + Fraction(4, 10 ** (dps + 4))


def _compare(claim: dict[str, Any], fresh: dict[str, Any]) -> Iterable[str]:
    """Names of fields whose claim the recomputation does not confirm."""
    if claim["epsilon"] is not None and not _width_matches(claim["epsilon"], claim["inputs"]["dps"]):
        yield "epsilon.relative_width"
    for key in ("verdict", "rigorous"):
        if claim[key] != fresh[key]:
            yield key
    for key in ("log_A", "log_B", "epsilon"):
        if (claim[key] is None) != (fresh[key] is None):
            yield key
        elif claim[key] is not None:
            if not _contains(claim[key], fresh[key]):
                lo_ok = Fraction(claim[key]["lower"]) <= Fraction(fresh[key]["lower"])
                yield f"{key}.{'upper' if lo_ok else 'lower'}"
    for name, fresh_method in fresh["methods"].items():
        old = claim["methods"][name]
        if old["status"] != fresh_method["status"]:
            yield f"methods.{name}.status"
            continue
        if old["status"] == "ok":
            for key in ("log_A", "log_B", "epsilon"):
                if not _overlaps(old[key], fresh_method[key]):
                    yield f"methods.{name}.{key}"
    if claim["theorem11"] is not None and fresh["theorem11"] is not None:
        for key in ("q_le_one_fifth", "sigma_ge_4", "condition_4", "condition_5", "all_hold",
                    "bound_exact", "epsilon_le_bound"):
            if claim["theorem11"][key] != fresh["theorem11"][key]:
                yield f"theorem11.{key}"
    if claim["corollary7"] is not None and fresh["corollary7"] is not None:
        for key in ("holds", "status"):
            if claim["corollary7"][key] != fresh["corollary7"][key]:
                yield f"corollary7.{key}"
    if claim["cross_check"]["consistent"] != fresh["cross_check"]["consistent"]:
        yield "cross_check.consistent"


def integrity_errors(cert: Any, schema: str = SCHEMA) -> list[str]:
    """The first schema violation, or a content hash that does not match; empty if the file is intact."""
    errors = schema_errors(cert, schema)
    if errors:
        return [f"schema: {errors[0]}"]
    if cert["content_hash"] != content_hash(cert):
        return ["content_hash: does not match the certificate's content (the file was modified)"]
    return []


def check_certificate(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed."""
    broken = integrity_errors(cert)
    if broken:
        return broken
    inp = cert["inputs"]
    try:
        sgm = SGM(parse_q(inp["q"]), parse_sigma(inp["sigma"]), parse_alpha(inp["alpha"]))
        dps = parse_dps(inp["dps"])
    except InputError as exc:
        return [f"inputs: {exc}"]
    fresh = certify(sgm, dps)
    return [f"{field}: not confirmed by recomputation" for field in _compare(cert, fresh)]
