"""Certificate files: content hash, JSON Schema validation, checking.

A certificate is the JSON object built by :func:`rdp_verify.certificates.certify.certify`
plus ``content_hash`` = ``"sha256:" + sha256(canonical JSON of everything
else)``, where canonical JSON is ``json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8. The shipped
schema ``schemas/certificate-v1.schema.json`` fixes the keys later tools rely
on (``epsilon.lower``, ``epsilon.upper``, ``theorem11.condition_4``,
``theorem11.condition_5``, ``corollary7.holds``, ``verdict``).

:func:`check_certificate` is :func:`integrity_errors` (schema, hash), then
:func:`compare` of the certificate with :func:`recompute` (a fresh
:func:`certify` from its inputs): every field on :data:`POLICY`'s verified
list must equal the recomputation exactly (certify is deterministic at the
recorded precisions); then the derived fields must follow from the fields they
are derived from within the certificate itself (:func:`self_consistency`, an
independent re-derivation that would catch a bug in certify). ``software`` is
recorded, not verified.
"""

from __future__ import annotations

import hashlib
import json
import os
from fractions import Fraction
from functools import lru_cache
from importlib.resources import files
from itertools import combinations
from typing import Any, Callable, Iterator

import jsonschema

from ..foundations.decimals import decimal_text
from ..foundations.files import read_json
from ..foundations.inputs import (
    SGM,
    InputError,
    Refused,
    fraction_text,
    parse_alpha,
    parse_dps,
    parse_q,
    parse_sigma,
)
from .fields import FieldPolicy

__all__ = [
    "seal",
    "content_hash",
    "validate",
    "dumps",
    "load",
    "check_certificate",
    "integrity_errors",
    "POLICY",
    "recompute",
    "compare",
    "self_consistency",
]


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


def _errors(cert: Any, schema: str) -> list[str]:
    out = []
    for err in sorted(_validator(schema).iter_errors(cert), key=lambda e: list(e.absolute_path)):
        path = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        out.append(f"{path}: {err.message}")
    return out


@lru_cache(maxsize=512)
def _errors_of_text(schema: str, text: str) -> tuple[str, ...]:
    return tuple(_errors(json.loads(text), schema))


def _plain_json(obj: Any) -> bool:
    """Only what JSON text gives back unchanged: str keys, str/int/float/bool/None leaves, lists and dicts."""
    if isinstance(obj, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_plain_json(v) for v in obj)
    return obj is None or isinstance(obj, (str, int, float, bool))


def schema_errors(cert: Any, schema: str = SCHEMA) -> list[str]:
    """Human-readable schema violations, each prefixed by the JSON path. A value that is plain JSON is validated
    once per distinct text (a check of a report re-validates its embedded certificates, and forgeries of one field
    leave the others unchanged); anything else is validated as it is."""
    if not _plain_json(cert):
        return _errors(cert, schema)
    try:
        text = json.dumps(cert, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return _errors(cert, schema)
    return list(_errors_of_text(schema, text))


def validate(cert: Any, schema: str = SCHEMA) -> None:
    errors = schema_errors(cert, schema)
    if errors:
        raise jsonschema.ValidationError(errors[0])


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def load(path: str | os.PathLike) -> Any:
    """Parse a certificate file (one certificate or a JSON array of them): the shared reader
    (:func:`rdp_verify.foundations.files.read_json`: size, depth and encoding limits) refuses a file that is
    not JSON in one line (:class:`~rdp_verify.foundations.inputs.InputError`)."""
    return read_json(path, "file")


# Every field of the format (rdp_verify.certificates.fields): recomputed and compared, or recorded only. A path
# that is also a parent ("log_A", "methods.*.notes") stands for its null or empty value.
POLICY = FieldPolicy(
    verified=(
        "format", "format_version", "mechanism", "inputs.q", "inputs.sigma", "inputs.alpha", "inputs.dps",
        "assumptions.*",
        "methods.*.status", "methods.*.reason", "methods.*.bound_kind",
        "methods.*.log_A.value", "methods.*.log_A.error_bound",
        "methods.*.log_B", "methods.*.log_B.value", "methods.*.log_B.error_bound",
        "methods.*.epsilon.value", "methods.*.epsilon.error_bound",
        "methods.*.work.**", "methods.*.notes", "methods.*.notes.*",
        "cross_check.consistent", "cross_check.methods_compared", "cross_check.methods_compared.*",
        "cross_check.pairs", "cross_check.pairs.*.methods.*",
        "cross_check.pairs.*.log_A.overlap", "cross_check.pairs.*.log_A.agreement_digits",
        "cross_check.pairs.*.log_B.overlap", "cross_check.pairs.*.log_B.agreement_digits",
        "cross_check.pairs.*.epsilon_agreement_digits", "cross_check.epsilon_agreement_digits",
        "cross_check.conflicts", "cross_check.conflicts.*",
        "rigorous", "log_A", "log_A.lower", "log_A.upper", "log_B", "log_B.lower", "log_B.upper",
        "epsilon", "epsilon.lower", "epsilon.upper", "epsilon.source", "epsilon.rigorous", "epsilon.relative_width",
        "theorem11", "theorem11.statement", "theorem11.L", "theorem11.q_le_one_fifth", "theorem11.sigma_ge_4",
        "theorem11.condition_4", "theorem11.condition_4_detail.lhs", "theorem11.condition_4_detail.rhs",
        "theorem11.condition_4_detail.margin", "theorem11.condition_4_detail.decided",
        "theorem11.condition_5", "theorem11.condition_5_detail.lhs", "theorem11.condition_5_detail.rhs",
        "theorem11.condition_5_detail.margin", "theorem11.condition_5_detail.decided",
        "theorem11.all_hold", "theorem11.bound", "theorem11.bound_exact",
        "theorem11.epsilon_over_bound.lower", "theorem11.epsilon_over_bound.upper", "theorem11.epsilon_le_bound",
        "corollary7", "corollary7.statement", "corollary7.holds", "corollary7.status", "corollary7.explanation",
        "corollary7.log_gap.lower", "corollary7.log_gap.upper", "corollary7.on_proven_enclosures",
        "verdict", "content_hash",
    ),
    not_verified=("software.*",),
)


def _outward(lower: Fraction, upper: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    return Fraction(decimal_text(lower, digits, "down")), Fraction(decimal_text(upper, digits, "up"))


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


def _cross_check_derived(cert: dict[str, Any]) -> Iterator[str]:
    ok = sorted(name for name, m in cert["methods"].items() if m["status"] == "ok")
    cc = cert["cross_check"]
    if cert["rigorous"] != (cert["epsilon"] is not None and "rigorous" in ok):
        yield "rigorous: not whether methods.rigorous produced the interval"
    if cc["consistent"] != (not cc["conflicts"]):
        yield "cross_check.consistent: not whether cross_check.conflicts is empty"
    if cc["methods_compared"] != ok:
        yield "cross_check.methods_compared: not the methods with status ok"
    if [p["methods"] for p in cc["pairs"]] != [list(pair) for pair in combinations(ok, 2)]:
        yield "cross_check.pairs: not one entry per pair of cross_check.methods_compared"
    digits = [p["epsilon_agreement_digits"] for p in cc["pairs"]]
    if cc["epsilon_agreement_digits"] != (min(digits) if digits else None):
        yield "cross_check.epsilon_agreement_digits: not the minimum over cross_check.pairs"


def _epsilon_derived(cert: dict[str, Any], alpha: Fraction, digits: int) -> Iterator[str]:
    eps, log_a, log_b = cert["epsilon"], cert["log_A"], cert["log_B"]
    if not _width_matches(eps, digits - 5):
        yield "epsilon.relative_width: smaller than the relative width of [epsilon.lower, epsilon.upper]"
    if eps["rigorous"] != cert["rigorous"]:
        yield "epsilon.rigorous: not rigorous"
    if eps["source"] != ("rigorous" if cert["rigorous"] else "hull of estimate methods"):
        yield "epsilon.source: not the source rigorous says"
    # ε_α = max(log A_α, log B_α)/(α − 1): the printed ends may lie only within the outward-rounded value
    # of that formula on the printed log_A and log_B intervals
    lo, hi = _outward(max(Fraction(log_a["lower"]), Fraction(log_b["lower"])) / (alpha - 1),
                      max(Fraction(log_a["upper"]), Fraction(log_b["upper"])) / (alpha - 1), digits)
    if Fraction(eps["lower"]) < lo:
        yield "epsilon.lower: below max(log_A.lower, log_B.lower)/(alpha - 1)"
    if Fraction(eps["upper"]) > hi:
        yield "epsilon.upper: above max(log_A.upper, log_B.upper)/(alpha - 1)"


def _theorem11_derived(t: dict[str, Any], eps: dict[str, str], q: Fraction, sigma: Fraction,
                       alpha: Fraction) -> Iterator[str]:
    for k in ("4", "5"):
        d = t[f"condition_{k}_detail"]
        rhs, margin = Fraction(d["rhs"]), Fraction(d["margin"])
        if d["lhs"] != fraction_text(alpha):
            yield f"theorem11.condition_{k}_detail.lhs: not inputs.alpha"
        # both are Arb midpoints rounded to 20 significant digits: they agree to that precision
        if abs(rhs - alpha - margin) > Fraction(1, 10**19) * (abs(rhs) + abs(margin) + alpha):
            yield f"theorem11.condition_{k}_detail.rhs: rhs - lhs is not margin (to the 20 printed digits)"
        if t[f"condition_{k}"] != (d["decided"] and margin >= 0):
            yield f"theorem11.condition_{k}: not what condition_{k}_detail says"
    bound = 2 * q**2 * alpha / sigma**2
    if t["q_le_one_fifth"] != (q <= Fraction(1, 5)):
        yield "theorem11.q_le_one_fifth: not whether inputs.q <= 1/5"
    if t["sigma_ge_4"] != (sigma >= 4):
        yield "theorem11.sigma_ge_4: not whether inputs.sigma >= 4"
    if t["all_hold"] != (t["q_le_one_fifth"] and t["sigma_ge_4"] and t["condition_4"] and t["condition_5"]):
        yield "theorem11.all_hold: not the conjunction of the four conditions"
    if t["bound_exact"] != fraction_text(bound):
        yield "theorem11.bound_exact: not 2 q^2 alpha / sigma^2"
    if t["bound"] != decimal_text(bound, 25):
        yield "theorem11.bound: not bound_exact to 25 digits"
    lo, hi = _outward(Fraction(eps["lower"]) / bound, Fraction(eps["upper"]) / bound, 20)
    if Fraction(t["epsilon_over_bound"]["lower"]) < lo or Fraction(t["epsilon_over_bound"]["upper"]) > hi:
        yield "theorem11.epsilon_over_bound: not within epsilon / bound_exact"
    # the unrounded upper end lies in [epsilon.lower, epsilon.upper]: the printed ends decide unless they straddle
    forced = True if Fraction(eps["upper"]) <= bound else False if Fraction(eps["lower"]) > bound else None
    if forced is not None and t["epsilon_le_bound"] != forced:
        yield "theorem11.epsilon_le_bound: contradicts epsilon and bound_exact"


def _corollary7_derived(c: dict[str, Any], cert: dict[str, Any], q: Fraction) -> Iterator[str]:
    log_a, log_b = cert["log_A"], cert["log_B"]
    lo, hi = _outward(Fraction(log_a["lower"]) - Fraction(log_b["upper"]),
                      Fraction(log_a["upper"]) - Fraction(log_b["lower"]), 20)
    gap_lo, gap_hi = Fraction(c["log_gap"]["lower"]), Fraction(c["log_gap"]["upper"])
    if gap_lo < lo or gap_hi > hi:
        yield "corollary7.log_gap: not within log_A - log_B"
    status = ("equal" if q == 1 else "proven" if gap_lo >= 0 else "violated" if gap_hi < 0 else "unresolved")
    if c["status"] != status:
        yield "corollary7.status: not what inputs.q and log_gap say"
    if c["holds"] != (c["status"] in ("proven", "equal")):
        yield "corollary7.holds: not what corollary7.status says"
    if c["on_proven_enclosures"] != cert["rigorous"]:
        yield "corollary7.on_proven_enclosures: not rigorous"


def self_consistency(cert: dict[str, Any]) -> list[str]:
    """Derived fields re-derived from the certificate's own fields (independently of certify): ``field: reason``.

    The widths, the Theorem 11 and Corollary 7 conditions and the verdict must follow from the fields they are
    derived from, so a certificate with an edited end or margin disagrees with itself. The inputs must parse.
    """
    inp = cert["inputs"]
    q, sigma, alpha = parse_q(inp["q"]), parse_sigma(inp["sigma"]), parse_alpha(inp["alpha"])
    problems = list(_cross_check_derived(cert))
    if cert["epsilon"] is not None and cert["log_A"] is not None and cert["log_B"] is not None:
        problems += _epsilon_derived(cert, alpha, parse_dps(inp["dps"]) + 5)
        if cert["theorem11"] is not None:
            problems += _theorem11_derived(cert["theorem11"], cert["epsilon"], q, sigma, alpha)
        if cert["corollary7"] is not None:
            problems += _corollary7_derived(cert["corollary7"], cert, q)
    consistent = (cert["epsilon"] is not None and cert["cross_check"]["consistent"]
                  and (cert["corollary7"] or {}).get("status") != "violated")
    if cert["verdict"] != ("certified" if consistent else "inconsistent"):
        problems.append("verdict: not what cross_check.consistent and corollary7.status say")
    return problems


def recompute(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate :func:`certify` writes for ``cert``'s inputs (raises InputError on bad inputs)."""
    from .certify import certify  # every method, SymPy included: only this check needs them, not the sealing

    inp = cert["inputs"]
    sgm = SGM(parse_q(inp["q"]), parse_sigma(inp["sigma"]), parse_alpha(inp["alpha"]))
    return certify(sgm, parse_dps(inp["dps"]))


def compare(claimed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """``field: reason`` for each verified field of ``claimed`` that differs from its recomputation ``fresh``;
    if none does, for each derived field that does not follow from the certificate's own fields."""
    return POLICY.compare(claimed, fresh) or self_consistency(claimed)

def integrity_errors(cert: Any, schema: str = SCHEMA) -> list[str]:
    """The first schema violation, or a content hash that does not match; empty if the file is intact."""
    errors = schema_errors(cert, schema)
    if errors:
        return [f"schema: {errors[0]}"]
    if cert["content_hash"] != content_hash(cert):
        return ["content_hash: does not match the certificate's content (the file was modified)"]
    return []


def check_against(cert: Any, schema: str, recompute: Callable[[dict[str, Any]], dict[str, Any]],
                  compare: Callable[[dict[str, Any], dict[str, Any]], list[str]]) -> list[str]:
    """The check of every sealed format: :func:`integrity_errors` (schema and hash), then ``compare`` of the
    certificate with ``recompute`` of its inputs; ``field: reason`` lines, empty when confirmed.

    Two outcomes are not lines: ``recompute`` raises :class:`~rdp_verify.foundations.inputs.Refused` (before any
    work) when the recorded settings or sizes ask for more work than the commands ever do, and it propagates
    (the CLI's one-line refusal, exit 2); any other InputError is the ``inputs`` field failing (exit 1)."""
    broken = integrity_errors(cert, schema)
    if broken:
        return broken
    try:
        fresh = recompute(cert)
    except Refused:  # the file asks for work beyond the commands' limits: refused (exit 2), no field fails
        raise
    except (InputError, KeyError, TypeError) as exc:
        return [f"inputs: {exc}"]
    return compare(cert, fresh)


def check_certificate(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (:func:`check_against`)."""
    return check_against(cert, SCHEMA, recompute, compare)
