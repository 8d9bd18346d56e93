"""JSON certificates of CDP-family claims: number formatting, schema, content hash.

Same conventions as the core certificate (:mod:`rdp_verify.certificates.certificate`): inputs are
exact strings (:func:`rdp_verify.foundations.inputs.fraction_text`), computed values are decimal
strings with outward rounding (:func:`rdp_verify.foundations.decimals.decimal_text`), and
``content_hash`` is the sha256 of the canonical JSON of everything else
(:func:`rdp_verify.certificates.certificate.content_hash`). The schema is
``schemas/cdp-claim-v1.schema.json``; ``verdict`` is ``holds``, ``refuted`` (then a
``witness`` is required) or ``inconclusive`` (neither a proof nor a witness was found
within the budget; the ``proof`` field says which part is open).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import arb

from .. import __version__
from ..certificates import certificate
from ..foundations.decimals import interval_json
from ..foundations.inputs import fraction_text
from ..foundations.results import Bounded, arb_to_bounded

__all__ = ["FORMAT", "DIGITS", "interval", "ball", "exact", "seal", "schema_errors"]

FORMAT = "rdp_verify cdp claim"
DIGITS = 12


def exact(x: Fraction) -> str:
    """An exact rational as text (terminating decimal or p/q)."""
    return fraction_text(Fraction(x))


def interval(lower: Fraction, upper: Fraction, digits: int = DIGITS) -> dict[str, str]:
    """[lower, upper] rounded outward to ``digits`` significant digits."""
    return interval_json(Bounded.between(lower, upper), digits)


def ball(x: arb, digits: int = DIGITS) -> dict[str, str]:
    """An Arb ball as an outward-rounded interval."""
    b = arb_to_bounded(x)
    return interval(b.lower, b.upper, digits)


SCHEMA = "cdp-claim-v1"


def schema_errors(cert: Any) -> list[str]:
    """Schema violations as ``path: message`` against ``schemas/cdp-claim-v1.schema.json``."""
    return certificate.schema_errors(cert, SCHEMA)


def seal(body: dict[str, Any]) -> dict[str, Any]:
    """Add format, software and content hash; validate against the schema."""
    return certificate.seal({"format": FORMAT, "format_version": 1, **body, "software": {"rdp_verify": __version__}}, SCHEMA)
