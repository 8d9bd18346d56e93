"""What a reported privacy claim of a DP-SGD run is, and how one is read (CLI flags, JSON, CSV).

A claim is: the run -- one or more phases (:mod:`rdp_verify.foundations.run`: the one run model and
parser), each with its batch sampler and neighbour relation (default Poisson sampling with
add/remove-one neighbours, Definition 3 of Mironov–Talwar–Zhang 2019), a sampling rate q (or a
batch size and dataset size, q = batch/N), a noise multiplier σ and a number of steps (or
epochs with a stated step convention) -- plus the reported (ε, δ), the
conversions to audit under, and optionally the order list the authors' library
used. Every number is read exactly from its text (JSON numbers too).

Step conventions for ``epochs`` (steps = epochs/q = epochs·N/batch before rounding):

* ``exact`` (default) -- epochs/q must be a whole number, else the claim is refused;
* ``ceil`` -- TF Privacy's ``compute_dp_sgd_privacy``: ``int(math.ceil(epochs * n / batch_size))``;
* ``floor`` -- TF Privacy's MNIST tutorials: ``epochs * 60000 // batch_size``.

Bad input raises :class:`rdp_verify.foundations.inputs.InputError` with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from ..accounting.options import CONVERSIONS
from ..accounting.order_lists import parse_orders
from ..foundations.inputs import InputError, check_sigma, fraction_text, parse_delta, parse_epsilon
from ..foundations.run import (
    PHASE_FIELDS,
    STEP_CONVENTIONS,
    Phase,
    load_phases,
    load_rows,
    parse_run,
    required_field,
    run_family,
    text_field,
)

__all__ = ["Claim", "parse_claim", "parse_run", "read_claims", "load_phases", "STEP_CONVENTIONS", "CLAIM_FIELDS",
           "PHASE_FIELDS", "ACCOUNTANTS"]

ACCOUNTANTS = ("rdp", "pld", "all")
CLAIM_FIELDS = ("id", "source", "notes", "phases", *PHASE_FIELDS, "delta", "epsilon", "conversion", "orders",
                "accountant")


@dataclass(frozen=True)
class Claim:
    """A reported (ε, δ) for a run, with everything needed to audit it."""

    id: str
    phases: tuple[Phase, ...]
    steps_from: tuple[str, ...]  # how each phase's step count was obtained
    delta: Fraction
    epsilon: Fraction
    epsilon_text: str  # as printed by the authors: fixes the digits to reproduce
    conversions: tuple[str, ...]
    orders: tuple[Fraction, ...] | None
    orders_name: str | None
    source: str | None
    accountants: tuple[str, ...] = ("rdp", "pld")  # which accountants audit the claim

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "phases": [{**p.to_json(), "steps_from": s} for p, s in zip(self.phases, self.steps_from)],
            "delta": fraction_text(self.delta),
            "epsilon": self.epsilon_text,
            "conversions": list(self.conversions),
            "orders": self.orders_name if self.orders_name else
            (None if self.orders is None else [fraction_text(a) for a in self.orders]),
            "accountants": list(self.accountants),
        }

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> "Claim":
        """The claim :meth:`to_json` wrote, validated as a claims file's claim is (InputError otherwise)."""
        phases = tuple(Phase.from_json({k: v for k, v in p.items() if k != "steps_from"}) for p in fields["phases"])
        run_family(phases)
        accountants, conversions = tuple(fields["accountants"]), tuple(fields["conversions"])
        if not accountants or not set(accountants) <= {"rdp", "pld"}:
            raise InputError(f"accountants {list(accountants)}: not some of rdp, pld")
        if not conversions or not set(conversions) <= set(CONVERSIONS):
            raise InputError(f"conversions {list(conversions)}: not some of {', '.join(CONVERSIONS)}")
        if "rdp" in accountants:
            if not all(p.default for p in phases):
                raise InputError("accountant rdp covers Poisson sampling with add-remove neighbours only")
            for phase in phases:
                check_sigma(phase.sigma)
        orders, orders_name = _orders(fields["orders"])
        claim = cls(text_field(fields, "id") or "", phases, tuple(p["steps_from"] for p in fields["phases"]),
                    parse_delta(fields["delta"]), parse_epsilon(fields["epsilon"]), fields["epsilon"], conversions,
                    orders, orders_name, text_field(fields, "source"), accountants)
        if claim.to_json() != fields:
            raise InputError("claim: not the fields of a claim as an audit report records them")
        return claim


def _conversions(text: str | None) -> tuple[str, ...]:
    if text is None or text == "both":
        return CONVERSIONS
    if text not in CONVERSIONS:
        raise InputError(f"conversion={text!r} is not one of {', '.join(CONVERSIONS)} or both")
    return (text,)


def _orders(value: Any) -> tuple[tuple[Fraction, ...] | None, str | None]:
    if isinstance(value, list):
        if not value:
            raise InputError("orders is an empty list: give orders, a list name, or leave the field out")
        if not all(isinstance(v, str) for v in value):
            raise InputError("orders must be a list of numbers")
        value = ",".join(value)
    text = text_field({"orders": value}, "orders")
    return (None, None) if text is None else parse_orders(text)


def _accountants(text: str | None) -> tuple[str, ...]:
    if text is None or text == "all":
        return ("rdp", "pld")
    if text not in ACCOUNTANTS:
        raise InputError(f"accountant={text!r} is not one of {', '.join(ACCOUNTANTS)}")
    return (text,)


def parse_claim(fields: Mapping[str, Any], default_id: str) -> Claim:
    """A :class:`Claim` from text fields (the keys of :data:`CLAIM_FIELDS`)."""
    unknown = sorted(set(fields) - set(CLAIM_FIELDS))
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r} (known: {', '.join(CLAIM_FIELDS)})")
    parsed = parse_run(fields)
    delta_text, eps_text = required_field(fields, "delta"), required_field(fields, "epsilon")
    delta, epsilon = parse_delta(delta_text), parse_epsilon(eps_text)
    accountant = text_field(fields, "accountant")
    accountants = _accountants(accountant)
    if not all(p.default for p, _ in parsed):  # RDP here is the SGM's: Poisson sampling, add/remove
        if accountant == "rdp":
            raise InputError("accountant rdp covers Poisson sampling with add-remove neighbours only; "
                             "this run's sampler or neighbours need accountant pld")
        accountants = ("pld",)
    if "rdp" in accountants:  # its narrower sigma range, refused before anything is computed
        for phase, _ in parsed:
            check_sigma(phase.sigma)
    orders, orders_name = _orders(fields.get("orders"))
    return Claim(
        id=text_field(fields, "id") or default_id,
        phases=tuple(p for p, _ in parsed),
        steps_from=tuple(s for _, s in parsed),
        delta=delta,
        epsilon=epsilon,
        epsilon_text=eps_text,
        conversions=_conversions(text_field(fields, "conversion")),
        orders=orders,
        orders_name=orders_name,
        source=text_field(fields, "source"),
        accountants=accountants,
    )


def read_claims(path: str | Path) -> list[Claim]:
    """Every claim of a JSON or CSV claims file; the first bad one raises :class:`InputError`."""
    path = Path(path)
    rows = load_rows(path, "claims")
    if not rows:
        raise InputError(f"{path} holds no claims")
    claims = []
    for i, row in enumerate(rows, 1):
        label = row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else None
        where = f"{path}: claim {i}" + (f" ({label})" if label else "")
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected an object with the claim's fields")
        try:
            claims.append(parse_claim(row, default_id=f"#{i}"))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return claims
