"""What a reported privacy claim of a DP-SGD run is, and how one is read (CLI flags, JSON, CSV).

A claim is: the run -- one or more phases, each with a sampling rate q (or a
batch size and dataset size, q = batch/N: Poisson sampling, Definition 3 of
Mironov–Talwar–Zhang 2019), a noise multiplier σ and a number of steps (or
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

import csv
import json
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from ..accounting.options import CONVERSIONS
from ..accounting.order_lists import parse_orders
from ..foundations.inputs import (
    InputError,
    Phase,
    check_sigma,
    fraction_text,
    parse_delta,
    parse_epsilon,
    parse_q,
    parse_rational,
    parse_run_sigma,
    parse_steps,
    parse_whole,
)

__all__ = ["Claim", "parse_claim", "parse_run", "read_claims", "load_phases", "STEP_CONVENTIONS", "CLAIM_FIELDS",
           "PHASE_FIELDS", "ACCOUNTANTS"]

STEP_CONVENTIONS = ("exact", "ceil", "floor")
ACCOUNTANTS = ("rdp", "pld", "all")
PHASE_FIELDS = ("q", "batch_size", "dataset_size", "sigma", "steps", "epochs", "step_convention")
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
            "phases": [{"q": fraction_text(p.q), "sigma": fraction_text(p.sigma), "steps": p.steps, "steps_from": s}
                       for p, s in zip(self.phases, self.steps_from)],
            "delta": fraction_text(self.delta),
            "epsilon": self.epsilon_text,
            "conversions": list(self.conversions),
            "orders": self.orders_name if self.orders_name else
            (None if self.orders is None else [fraction_text(a) for a in self.orders]),
            "accountants": list(self.accountants),
        }


def _text(fields: Mapping[str, Any], key: str) -> str | None:
    value = fields.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise InputError(f"{key} must be a number or text, got {type(value).__name__}")
    return value.strip()


def _required(fields: Mapping[str, Any], key: str) -> str:
    value = _text(fields, key)
    if value is None:
        raise InputError(f"missing field {key!r}")
    return value


def _sampling_rate(fields: Mapping[str, Any]) -> tuple[Fraction, str]:
    q, batch, n = (_text(fields, k) for k in ("q", "batch_size", "dataset_size"))
    if q is not None:
        if batch is not None or n is not None:
            raise InputError("give q, or batch_size with dataset_size, not both")
        return parse_q(q), ""
    if batch is None or n is None:
        raise InputError("missing field 'q' (or 'batch_size' and 'dataset_size')")
    b, size = parse_whole(batch, "batch_size"), parse_whole(n, "dataset_size")
    if b > size:
        raise InputError(f"batch_size={b} exceeds dataset_size={size}")
    return parse_q(f"{b}/{size}"), f"q = {b}/{size}; "


def _steps(fields: Mapping[str, Any], q: Fraction) -> tuple[int, str]:
    steps, epochs, convention = (_text(fields, k) for k in ("steps", "epochs", "step_convention"))
    if steps is not None:
        if epochs is not None:
            raise InputError("give steps or epochs, not both")
        if convention is not None:
            raise InputError("step_convention applies only with epochs")
        return parse_steps(steps), "given"
    if epochs is None:
        raise InputError("missing field 'steps' (or 'epochs')")
    e = parse_rational(epochs, "epochs")
    if e <= 0:
        raise InputError(f"epochs={epochs} must be positive")
    convention = convention or "exact"
    if convention not in STEP_CONVENTIONS:
        raise InputError(f"step_convention={convention!r} is not one of {', '.join(STEP_CONVENTIONS)}")
    raw = e / q
    if convention == "exact" and raw.denominator != 1:
        raise InputError(f"epochs/q = {fraction_text(raw)} is not a whole number of steps: "
                         "state 'step_convention' ceil or floor")
    n = math.ceil(raw) if convention == "ceil" else math.floor(raw)
    if n < 1:
        raise InputError(f"{convention}(epochs/q) = {n}: steps must be at least 1")
    return n, f"{convention}({fraction_text(e)} epochs / q) = {convention}({fraction_text(raw)}) = {n}"


def _phase(fields: Mapping[str, Any]) -> tuple[Phase, str]:
    q, q_from = _sampling_rate(fields)
    sigma = parse_run_sigma(_required(fields, "sigma"))
    steps, steps_from = _steps(fields, q)
    return Phase(q, sigma, steps), q_from + steps_from


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
    text = _text({"orders": value}, "orders")
    return (None, None) if text is None else parse_orders(text)


def parse_run(fields: Mapping[str, Any]) -> list[tuple[Phase, str]]:
    """The run's phases, each with how its step count was derived: a ``phases`` list or top-level fields."""
    phases_in = fields.get("phases")
    if phases_in is None:
        return [_phase(fields)]
    if any(_text(fields, k) is not None for k in PHASE_FIELDS):
        raise InputError("give the run either as 'phases' or by top-level q, sigma, steps, not both")
    if not isinstance(phases_in, list) or not phases_in or not all(isinstance(p, dict) for p in phases_in):
        raise InputError("phases must be a non-empty list of objects")
    for p in phases_in:
        extra = sorted(set(p) - set(PHASE_FIELDS))
        if extra:
            raise InputError(f"unknown phase field {extra[0]!r} (known: {', '.join(PHASE_FIELDS)})")
    return [_phase(p) for p in phases_in]


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
    delta_text, eps_text = _required(fields, "delta"), _required(fields, "epsilon")
    delta, epsilon = parse_delta(delta_text), parse_epsilon(eps_text)
    accountants = _accountants(_text(fields, "accountant"))
    if "rdp" in accountants:  # its narrower sigma range, refused before anything is computed
        for phase, _ in parsed:
            check_sigma(phase.sigma)
    orders, orders_name = _orders(fields.get("orders"))
    return Claim(
        id=_text(fields, "id") or default_id,
        phases=tuple(p for p, _ in parsed),
        steps_from=tuple(s for _, s in parsed),
        delta=delta,
        epsilon=epsilon,
        epsilon_text=eps_text,
        conversions=_conversions(_text(fields, "conversion")),
        orders=orders,
        orders_name=orders_name,
        source=_text(fields, "source"),
        accountants=accountants,
    )


def _load_rows(path: Path, key: str = "claims") -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        if any(None in row for row in rows):
            raise InputError(f"{path}: a row has more cells than the header")
        return [{key.strip(): value for key, value in row.items()} for row in rows]
    try:  # numbers stay text, so 1e-5 is read exactly
        data = json.loads(text, parse_float=str, parse_int=str)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is neither CSV (by its .csv name) nor JSON: {exc.msg} at line {exc.lineno}") from None
    rows = data.get(key) if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON list of {key} or an object with a '{key}' list")
    return rows


def read_claims(path: str | Path) -> list[Claim]:
    """Every claim of a JSON or CSV claims file; the first bad one raises :class:`InputError`."""
    path = Path(path)
    rows = _load_rows(path)
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


def load_phases(path: str | Path) -> list[tuple[Phase, str]]:
    """The phases of a run from a JSON file: a list of phase objects, or ``{"phases": [...]}``."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        raise InputError(f"{path}: a phases file is JSON (a list of phase objects)")
    rows = _load_rows(path, "phases")
    try:
        return parse_run({"phases": rows})
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
