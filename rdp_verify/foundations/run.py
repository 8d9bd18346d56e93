"""The one model of a DP-SGD run, and its one parser (CLI flags, phases files, claims files, certificates).

A run is a list of **phases**. Each phase names its batch sampler, the neighbour relation, its noise
multiplier σ (noise std / clipping norm; every record's clipped gradient has ℓ2 norm at most 1) and
its length. Modelled on dp_accounting's ``dp_event.py`` and ``NeighboringRelation``
(:data:`DP_EVENTS`, :data:`NEIGHBOURING_RELATIONS`):

======================  ============================================================  =========================
sampler                 what a step's batch is                                        dp_accounting event
======================  ============================================================  =========================
``poisson`` (default)   each record joins independently with probability q            ``PoissonSampledDpEvent``
``fixed``               b of the N records, uniformly without replacement (q = b/N)   ``SampledWithoutReplacementDpEvent``
``shuffle``             one permutation per epoch, cut into N/b batches of b          none
``balls-in-bins``       each record in one uniformly random step of the epoch's N/b   none
======================  ============================================================  =========================

Neighbours: ``add-remove`` (one record added or removed: ``ADD_OR_REMOVE_ONE``; for the per-epoch
samplers, where inserting a record would move every later record to another batch, it is the
zero-out relation -- the record replaced by one whose gradient is 0, dp_accounting's
``REPLACE_SPECIAL`` -- which keeps N fixed) or ``replace-one`` (one record replaced by another:
``REPLACE_ONE``; the sum of clipped gradients moves by at most 2, twice the add/remove
sensitivity).

**What is bounded for which combination** (every other one is refused with :class:`InputError`, one
line naming what is missing; the proofs are in :mod:`rdp_verify.curves.replace_one` and
:mod:`rdp_verify.curves.per_epoch`):

* ``poisson`` + ``add-remove``: Mironov, Talwar, Zhang 2019; Zhu, Dong, Wang 2022, Theorem 11.
* ``poisson`` + ``replace-one``: the mixture pair ((1 − q)N(0, σ²) + qN(1, σ²), (1 − q)N(0, σ²) +
  qN(−1, σ²)) (Lebeda, Regehr, Kamath, Steinke 2024, arXiv 2405.20769; dp_accounting's ``REPLACE_ONE``).
* ``fixed`` + ``replace-one``: *not* that pair (the slot of a record left out is filled by another):
  above, the symmetrised remove curve of SG(b/N, σ/2) (advanced joint convexity, Balle, Barthe,
  Gaboardi 2018, Theorem 2); below, an actual pair of neighbouring runs.
* ``fixed`` + ``add-remove``: refused. Adding a record changes N and every batch's distribution;
  Lebeda et al. 2024 show that the worst pair of one step need not stay worst under composition,
  and no dominating pair of the composed run is proven.
* ``shuffle`` and ``balls-in-bins``, either relation: a proven upper bound without amplification
  (each record is in at most one batch per epoch: the Gaussian mechanism once per epoch) and a
  proven lower bound from an explicit pair of neighbouring datasets (:mod:`rdp_verify.curves.per_epoch`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

from .files import read_csv, read_json
from .inputs import (
    InputError,
    check_q,
    check_run_sigma,
    check_steps,
    fraction_text,
    parse_q,
    parse_rational,
    parse_run_sigma,
    parse_steps,
    parse_whole,
)

__all__ = ["Phase", "SAMPLERS", "NEIGHBOURS", "DP_EVENTS", "NEIGHBOURING_RELATIONS", "PER_EPOCH", "STEP_CONVENTIONS",
           "PHASE_FIELDS", "parse_run", "load_phases", "load_rows", "run_family", "merged", "text_field",
           "required_field"]

SAMPLERS = ("poisson", "fixed", "shuffle", "balls-in-bins")
NEIGHBOURS = ("add-remove", "replace-one")
PER_EPOCH = ("shuffle", "balls-in-bins")  # each record in exactly one batch per epoch
DP_EVENTS = {"poisson": "PoissonSampledDpEvent", "fixed": "SampledWithoutReplacementDpEvent",
             "shuffle": None, "balls-in-bins": None}
NEIGHBOURING_RELATIONS = {"add-remove": "ADD_OR_REMOVE_ONE", "replace-one": "REPLACE_ONE"}
STEP_CONVENTIONS = ("exact", "ceil", "floor")
PHASE_FIELDS = ("q", "batch_size", "dataset_size", "sigma", "steps", "epochs", "step_convention", "sampler",
                "neighbours")

_FIXED_ADD_REMOVE = ("sampler fixed with add-remove neighbours has no proven bound: adding a record changes the "
                     "dataset size and every batch, and no dominating pair of the composed run is known (Lebeda, "
                     "Regehr, Kamath, Steinke 2024); use replace-one neighbours")


@dataclass(frozen=True)
class Phase:
    """``steps`` consecutive noisy steps at noise multiplier ``sigma``, batches drawn by ``sampler``.

    ``q`` is the sampling rate (Poisson) or b/N (the other samplers, from ``batch_size`` b and
    ``dataset_size`` N, which they require). The per-epoch samplers need b to divide N (N/b batches
    per epoch). q, σ and steps must lie in the run domain (q ∈ [1e-12, 1], σ ∈ [0.05, 1e6],
    1 ≤ steps ≤ 1e6). Integer q or σ are held as Fractions.
    """

    q: Fraction
    sigma: Fraction
    steps: int
    sampler: str = "poisson"
    neighbours: str = "add-remove"
    batch_size: int | None = None
    dataset_size: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", check_q(self.q))
        object.__setattr__(self, "sigma", check_run_sigma(self.sigma))
        check_steps(self.steps)
        if self.sampler not in SAMPLERS:
            raise InputError(f"sampler={self.sampler!r} is not one of {', '.join(SAMPLERS)}")
        if self.neighbours not in NEIGHBOURS:
            raise InputError(f"neighbours={self.neighbours!r} is not one of {', '.join(NEIGHBOURS)}")
        b, n = self.batch_size, self.dataset_size
        if (b is None) != (n is None):
            raise InputError("give batch_size and dataset_size together")
        if b is not None:
            for name, v in (("batch_size", b), ("dataset_size", n)):
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise InputError(f"{name}={v!r} must be a whole number of at least 1")
            if b > n:
                raise InputError(f"batch_size={b} exceeds dataset_size={n}")
            if Fraction(b, n) != self.q:
                raise InputError(f"q={fraction_text(self.q)} is not batch_size/dataset_size = {b}/{n}")
        if self.sampler != "poisson" and b is None:
            raise InputError(f"sampler {self.sampler} needs 'batch_size' and 'dataset_size'")
        if self.sampler in PER_EPOCH and n % b:
            raise InputError(_not_a_multiple(self.sampler, n, b))
        if self.sampler == "fixed" and self.neighbours == "add-remove":
            raise InputError(_FIXED_ADD_REMOVE)

    @property
    def default(self) -> bool:
        """Poisson sampling with add/remove neighbours: the mechanism of Mironov, Talwar, Zhang 2019."""
        return self.sampler == "poisson" and self.neighbours == "add-remove"

    @property
    def batches_per_epoch(self) -> int:
        """N/b: the steps of one epoch of a per-epoch sampler."""
        assert self.batch_size is not None and self.dataset_size is not None
        return self.dataset_size // self.batch_size

    @property
    def epochs(self) -> tuple[int, int]:
        """(full epochs, epochs begun) of a per-epoch sampler: floor and ceil of steps/(N/b)."""
        t = self.batches_per_epoch
        return self.steps // t, -(-self.steps // t)

    def to_json(self) -> dict[str, Any]:
        """q, sigma, steps; the sampler, neighbours and batch sizes only where they are not the default."""
        out: dict[str, Any] = {"q": fraction_text(self.q), "sigma": fraction_text(self.sigma), "steps": self.steps}
        if not self.default:
            out.update(sampler=self.sampler, neighbours=self.neighbours)
            if self.batch_size is not None:
                out.update(batch_size=self.batch_size, dataset_size=self.dataset_size)
        return out

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> "Phase":
        """The phase :meth:`to_json` wrote (numbers as text; counts as integers)."""
        return cls(parse_q(fields["q"]), parse_run_sigma(fields["sigma"]), fields["steps"],
                   fields.get("sampler", "poisson"), fields.get("neighbours", "add-remove"),
                   fields.get("batch_size"), fields.get("dataset_size"))


def _not_a_multiple(sampler: str, n: int, b: int) -> str:
    return (f"sampler {sampler}: dataset_size={n} is not a multiple of batch_size={b} "
            "(each record in exactly one of N/b batches per epoch)")


def run_family(phases: Sequence[Phase]) -> str:
    """What bounds the run: ``add-remove`` (Poisson, the SGM pairs), ``replace-one`` (the mixture pair of
    Poisson or fixed-size batches) or ``per-epoch`` (shuffle, balls-in-bins); a mixture is refused."""
    relations = {p.neighbours for p in phases}
    if len(relations) > 1:
        raise InputError("every phase of a run must use the same neighbour relation (it defines the privacy "
                         "guarantee), got " + " and ".join(sorted(relations)))
    per_epoch = {p.sampler in PER_EPOCH for p in phases}
    if len(per_epoch) > 1:
        raise InputError("a run mixing shuffle or balls-in-bins phases with poisson or fixed phases has no proven "
                         "bound here: give them as separate runs")
    if per_epoch == {True}:
        return "per-epoch"
    return relations.pop()


def merged(phases: Sequence[Phase]) -> tuple[Phase, ...]:
    """The run with every stretch of consecutive Poisson or fixed-size phases that differ only in their length
    joined into one phase of their total length (the composition's view of the run; certificates keep the phases
    as given). Exact: their steps are independent draws of one mechanism, and T₁ adaptive steps followed by T₂ more
    are T₁ + T₂ adaptive steps (self-composition; Zhu, Dong, Wang 2022, Theorem 10 composes the dominating pairs
    step by step either way). Shuffled and balls-in-bins phases are kept as given: a phase begins a new epoch, so
    joining two phases that end mid-epoch would denote other batches."""
    out: list[Phase] = []
    for p in phases:
        last = out[-1] if out else None
        if last is not None and p.sampler not in PER_EPOCH and replace(last, steps=p.steps) == p:
            out[-1] = replace(last, steps=last.steps + p.steps)
        else:
            out.append(p)
    return tuple(out)


def text_field(fields: Mapping[str, Any], key: str) -> str | None:
    """A field's text, stripped (None if absent or blank); a non-text value is refused."""
    value = fields.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise InputError(f"{key} must be a number or text, got {type(value).__name__}")
    return value.strip()


def _choice(fields: Mapping[str, Any], key: str, options: tuple[str, ...]) -> str:
    value = text_field(fields, key) or options[0]
    if value not in options:
        raise InputError(f"{key}={value!r} is not one of {', '.join(options)}")
    return value


def _sampling(fields: Mapping[str, Any], sampler: str) -> tuple[Fraction, int | None, int | None, str]:
    q, batch, n = (text_field(fields, k) for k in ("q", "batch_size", "dataset_size"))
    if q is not None:
        if batch is not None or n is not None:
            raise InputError("give q, or batch_size with dataset_size, not both")
        if sampler != "poisson":
            raise InputError(f"sampler {sampler} needs 'batch_size' and 'dataset_size', not 'q'")
        return parse_q(q), None, None, ""
    if batch is None or n is None:
        raise InputError("missing field 'q' (or 'batch_size' and 'dataset_size')")
    b, size = parse_whole(batch, "batch_size"), parse_whole(n, "dataset_size")
    if b > size:
        raise InputError(f"batch_size={b} exceeds dataset_size={size}")
    if sampler in PER_EPOCH and size % b:  # the real reason first, before any step count is derived from b/N
        raise InputError(_not_a_multiple(sampler, size, b))
    if sampler != "poisson":  # the batch sizes are kept (and shown): no note on q
        return parse_q(f"{b}/{size}"), b, size, ""
    return parse_q(f"{b}/{size}"), None, None, f"q = {b}/{size}; "  # Poisson: b/N is the expected batch, q is kept


def _steps(fields: Mapping[str, Any], q: Fraction) -> tuple[int, str]:
    steps, epochs, convention = (text_field(fields, k) for k in ("steps", "epochs", "step_convention"))
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
    sampler = _choice(fields, "sampler", SAMPLERS)
    neighbours = _choice(fields, "neighbours", NEIGHBOURS)
    q, b, n, q_from = _sampling(fields, sampler)
    sigma = parse_run_sigma(required_field(fields, "sigma"))
    steps, steps_from = _steps(fields, q)
    return Phase(q, sigma, steps, sampler, neighbours, b, n), q_from + steps_from


def required_field(fields: Mapping[str, Any], key: str) -> str:
    value = text_field(fields, key)
    if value is None:
        raise InputError(f"missing field {key!r}")
    return value


def parse_run(fields: Mapping[str, Any]) -> list[tuple[Phase, str]]:
    """The run's phases, each with how its step count was derived: a ``phases`` list or top-level fields
    (:data:`PHASE_FIELDS`); the run is checked as a whole (:func:`run_family`)."""
    phases_in = fields.get("phases")
    if phases_in is None:
        parsed = [_phase(fields)]
    else:
        if any(text_field(fields, k) is not None for k in PHASE_FIELDS):
            raise InputError("give the run either as 'phases' or by top-level q, sigma, steps, not both")
        if not isinstance(phases_in, list) or not phases_in or not all(isinstance(p, dict) for p in phases_in):
            raise InputError("phases must be a non-empty list of objects")
        for p in phases_in:
            extra = sorted(set(p) - set(PHASE_FIELDS))
            if extra:
                raise InputError(f"unknown phase field {extra[0]!r} (known: {', '.join(PHASE_FIELDS)})")
        parsed = [_phase(p) for p in phases_in]
    run_family([p for p, _ in parsed])
    return parsed


def load_rows(path: Path, key: str) -> list[Any]:
    """The rows of a CSV file (by its ``.csv`` name) or a JSON list (or an object holding it under ``key``),
    read by the shared readers (:mod:`rdp_verify.foundations.files`: size, depth, encoding and shape limits);
    numbers stay text, so 1e-5 is read exactly."""
    if path.suffix.lower() == ".csv":
        return read_csv(path, f"{key} file")
    data = read_json(path, f"{key} file", numbers_as_text=True)
    rows = data.get(key) if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON list of {key} or an object with a '{key}' list")
    return rows


def load_phases(path: str | Path) -> list[tuple[Phase, str]]:
    """The phases of a run from a JSON file: a list of phase objects, or ``{"phases": [...]}``."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        raise InputError(f"{path}: a phases file is JSON (a list of phase objects)")
    rows = load_rows(path, "phases")
    try:
        return parse_run({"phases": rows})
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
