"""Sealed tables of proven ε_α at many orders (``rdp-verify rdp --json``/``--out``; schema ``rdp-table-v2``).

The fast path is :func:`rdp_verify.methods.rigorous.epsilon_many`: one Arb enclosure of A_α per order,
sharing the per-(q, σ) tables, with ε_α = log A_α/(α − 1) by Corollary 7 of Mironov–Talwar–Zhang 2019
(A_α ≥ B_α); T steps are (α, T·ε_α)-RDP (Mironov 2017, Proposition 1). No four-method certificate is built
per order (that is ``rdp-verify certify``).

:func:`check_rdp_table` is :func:`~rdp_verify.certificates.certificate.integrity_errors` (schema, hash),
then :func:`rdp_table` of the recorded inputs (q, σ, steps, the orders, dps and the printed digits), which
must equal the table field for field: the enclosures are Arb balls at the recorded precision, rounded
outward to the recorded digits, the same on every machine. ``software`` is recorded, not verified.

**Event tables** (``rdp-verify rdp --event``; format version 3, schema ``rdp-table-v3``): the proven ε_α of a whole
event tree (:func:`rdp_verify.privacy_curve.rdp.event_rdp`: each component's interval from its named source, summed
under composition), with the tree (``inputs.event``, the JSON of :func:`rdp_verify.events.read.to_json`), its
relation and its components recorded. Tables of SG(q, σ) keep format version 2, byte for byte, and both versions are
checked: :func:`check_rdp_table` recomputes a table by its own version.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from .. import __version__
from ..accounting.order_lists import parse_orders
from ..certificates.fields import FieldPolicy
from ..foundations.decimals import interval_json
from ..foundations.inputs import InputError, fraction_text, parse_dps, parse_q, parse_sigma, parse_steps

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "EVENT_FORMAT_VERSION", "EVENT_SCHEMA", "POLICY", "PROOF", "rdp_table",
           "event_rdp_table", "check_rdp_table", "check_digits", "recompute"]

FORMAT = "rdp_verify rdp table"
FORMAT_VERSION = 2
SCHEMA = "rdp-table-v2"
EVENT_FORMAT_VERSION = 3
EVENT_SCHEMA = "rdp-table-v3"
PROOF = ("epsilon_alpha = log(A_alpha)/(alpha - 1) (Mironov-Talwar-Zhang 2019, Theorem 4 with Corollary 7: "
         "A_alpha >= B_alpha); A_alpha enclosed in Arb ball arithmetic (quadrature, tails and rounding "
         "inside the ball); T steps compose to T*epsilon_alpha (Mironov 2017, Proposition 1); "
         "each interval is rounded outward")


def check_digits(digits: int, dps: int) -> int:
    """The printed significant digits: between 1 and ``dps``."""
    if not 1 <= digits <= dps:
        raise InputError(f"--digits {digits}: must lie between 1 and --dps ({dps})")
    return digits


def rdp_table(q: Fraction, sigma: Fraction, orders: Sequence[Fraction], name: str | None, steps: int, dps: int,
              digits: int) -> dict[str, Any]:
    """The sealed table of T·ε_α at each order, rounded outward to ``digits`` significant digits (raises
    :class:`~rdp_verify.foundations.results.MethodUnavailable` when an order cannot be enclosed)."""
    check_digits(digits, dps)
    from ..certificates.certificate import seal  # jsonschema, Arb and the quadrature only when a table is computed
    from ..methods.rigorous import epsilon_many

    eps = epsilon_many(q, sigma, list(orders), dps)
    return seal({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "inputs": {"q": fraction_text(q), "sigma": fraction_text(sigma), "steps": int(steps),
                   "orders": name if name else [fraction_text(a) for a in orders], "dps": dps, "digits": digits},
        "proof": PROOF,
        "rows": [{"alpha": fraction_text(a), "epsilon": interval_json(e.scaled(steps), digits)}
                 for a, e in zip(orders, eps)],
        "software": {"rdp_verify": __version__},
    }, SCHEMA)


def event_rdp_table(event: Any, relation: Any, orders: Sequence[Fraction], name: str | None, dps: int,
                    digits: int) -> dict[str, Any]:
    """The sealed table (format version 3) of the proven ε_α of an event tree at each order, rounded outward to
    ``digits`` significant digits. Raises UnsupportedEvent / InputError (refusals, one line), MethodUnavailable
    (an order not enclosed), and :class:`NotPrivate` for a run holding a non-private event (ε_α = ∞: no table)."""
    check_digits(digits, dps)
    from ..certificates.certificate import seal
    from ..events.read import render, to_json
    from ..privacy_curve.rdp import PROOF as EVENT_PROOF
    from ..privacy_curve.rdp import event_rdp

    result = event_rdp(event, relation, orders, dps)
    if result.non_private:
        raise NotPrivate(f"{render(event)} holds a non-private event (a NonPrivateDpEvent or a zero noise parameter)")
    return seal({
        "format": FORMAT,
        "format_version": EVENT_FORMAT_VERSION,
        "mechanism": render(event),
        "inputs": {"event": to_json(event), "neighboring_relation": result.relation.name,
                   "orders": name if name else [fraction_text(a) for a in orders], "dps": dps, "digits": digits},
        "components": [{"component": p.component, "uses": p.uses, "bound": p.bound, "source": p.source}
                       for p in result.parts],
        "proof": EVENT_PROOF,
        "rows": [{"alpha": fraction_text(a), "epsilon": interval_json(e, digits)}
                 for a, e in zip(result.orders, result.values)],
        "software": {"rdp_verify": __version__},
    }, EVENT_SCHEMA)


class NotPrivate(InputError):
    """The run holds a non-private event: ε_α = ∞ at every order, never a number (no table is written)."""


POLICY = FieldPolicy(  # both versions: a pattern no field of a version matches is not counted for it
    verified=("format", "format_version", "mechanism", "inputs.**", "components.**", "proof", "rows.*.alpha",
              "rows.*.epsilon.lower", "rows.*.epsilon.upper", "content_hash"),
    not_verified=("software.*",),
)


def _orders(inp: dict[str, Any]) -> tuple[Sequence[Fraction], str | None]:
    listed = inp["orders"]
    orders, name = parse_orders(listed if isinstance(listed, str) else ",".join(listed))
    if isinstance(listed, str) and name is None:
        raise InputError(f"orders {listed!r}: a list name, or the orders as a list")
    if not isinstance(inp["digits"], int) or isinstance(inp["digits"], bool):
        raise InputError("digits: not a whole number")
    return orders, name


def recompute(table: dict[str, Any]) -> dict[str, Any]:
    """The table :func:`rdp_table` (version 2) or :func:`event_rdp_table` (version 3) writes for ``table``'s inputs
    (raises InputError on bad inputs)."""
    inp = table["inputs"]
    orders, name = _orders(inp)
    if table["format_version"] == EVENT_FORMAT_VERSION:
        from ..events.read import from_named_tuple_json

        return event_rdp_table(from_named_tuple_json(inp["event"]), inp["neighboring_relation"], orders, name,
                               parse_dps(str(inp["dps"])), inp["digits"])
    return rdp_table(parse_q(inp["q"]), parse_sigma(inp["sigma"]), orders, name, parse_steps(str(inp["steps"])),
                     parse_dps(str(inp["dps"])), inp["digits"])


def check_rdp_table(table: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (module docstring). A table declaring
    format version 3 is checked against the event schema, anything else against version 2's."""
    from ..certificates.certificate import check_against

    event = isinstance(table, dict) and table.get("format_version") == EVENT_FORMAT_VERSION
    return check_against(table, EVENT_SCHEMA if event else SCHEMA, recompute, POLICY.compare)
