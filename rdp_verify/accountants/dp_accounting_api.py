"""A certified accountant with the interface of dp_accounting's ``PrivacyAccountant``.

dp_accounting (Google, ``dp_accounting/privacy_accountant.py``, version 0.6) describes a training
run by ``DpEvent`` objects and asks an accountant to ``compose`` them, then ``get_epsilon(δ)`` or
``get_delta(ε)``. :class:`CertifiedPldAccountant` accepts the events a DP-SGD run is made of:

* ``PoissonSampledDpEvent(sampling_probability=q, event=GaussianDpEvent(noise_multiplier=σ))``:
  one step of the Sampled Gaussian Mechanism SG(q, σ);
* ``GaussianDpEvent(σ)``: one step with q = 1;
* ``SampledWithoutReplacementDpEvent(source_dataset_size=N, sample_size=b, event=GaussianDpEvent(σ))``:
  one step on a uniformly drawn batch of b of the N records, under ``REPLACE_ONE`` only (under
  add/remove no bound is proven: :mod:`rdp_verify.foundations.run`);
* ``SelfComposedDpEvent(event, count)`` and ``ComposedDpEvent([events])`` of these, and
  ``NoOpDpEvent`` (nothing); a Poisson event with q = 0 releases nothing about the data and
  is composed as nothing.

and, through the event tree (:mod:`rdp_verify.privacy_curve.table`), every other mechanism with a proven bracket:
``LaplaceDpEvent``, ``DiscreteLaplaceDpEvent``, ``RandomizedResponseDpEvent``, ``MixtureOfGaussiansDpEvent``,
a Poisson-sampled Laplace, ``SingleEpochTreeAggregationDpEvent``, ``TruncatedSubsampledGaussianDpEvent`` (a
Poisson-sampled Gaussian step when truncated_batch_size ≥ dataset_size: no batch can be truncated), in any
composition with the DP-SGD steps (answered by :func:`rdp_verify.privacy_curve.certificate.certify_event`).
``NonPrivateDpEvent`` (or a zero noise parameter) is accepted and answered honestly: ``get_epsilon`` is inf,
``get_delta`` 1. What has no proven bracket (``ZCDpEvent`` in a tree, repeated mechanisms, sampling with
replacement, ...) is not supported: ``supports`` says False and ``compose`` raises ``UnsupportedEventError``.

**Neighbouring relations.** ``ADD_OR_REMOVE_ONE`` (the default; both directions) and ``REPLACE_ONE``.
Under ``REPLACE_ONE`` σ is read as dp_accounting's PLD accountant reads it: every record's contribution
has norm at most 1 and the noise is σ times that, so replacing a record moves the sum by up to 2
(its ``GaussianDpEvent(2.0)`` under ``REPLACE_ONE`` gives ε(1e-5) = 4.38, the Gaussian mechanism at
sensitivity 2). dp_accounting's *RDP* accountant reads the same events with half that sensitivity
(``GaussianDpEvent(2.0)`` → 2.17; ``SampledWithoutReplacementDpEvent`` "relative to the l2-sensitivity
of the function"): pass it σ/2 for the same mechanism.

The answers are proven (:mod:`rdp_verify.accountants.ledger`): ``get_epsilon(δ)`` is the upper end
of a proven ε(δ) bracket of the run's privacy curve rounded up to a double, ``get_delta(ε)`` the
same for δ(ε). :meth:`CertifiedPldAccountant.certificate` returns the sealed proof of the latest
answer. dp_accounting itself is never imported by this module: events are recognised by their
class names and fields (so ``import rdp_verify.accountants`` works without it); it is imported
only to build ``ledger`` and to raise dp_accounting's own ``UnsupportedEventError``, which exist
only when its events are in use.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

from ..curves.accountant import DEFAULT_TOLERANCE
from ..events.flatten import TRUNCATED
from ..foundations.decimals import float_rounded
from ..foundations.inputs import InputError, check_delta, check_epsilon, check_q, check_run_sigma, check_tolerance
from ..foundations.run import Phase
from .ledger import Ledger, checked, exact_number

__all__ = ["CertifiedPldAccountant", "UnsupportedEventError"]

_RELATIONS = {"ADD_OR_REMOVE_ONE": "add-remove", "REPLACE_ONE": "replace-one", "REPLACE_SPECIAL": "replace-special"}


class UnsupportedEventError(Exception):
    """An event this accountant cannot account for (raised as dp_accounting's own class when it is installed)."""


def _unsupported(message: str) -> Exception:
    try:
        from dp_accounting.privacy_accountant import UnsupportedEventError as TheirError
    except ImportError:
        return UnsupportedEventError(message)
    return TheirError(message)


def _name(event: Any) -> str:
    return type(event).__name__


class CertifiedPldAccountant:
    """dp_accounting's ``PrivacyAccountant`` interface, answering with proven bounds; once dp_accounting is
    imported, a registered subclass of its ``PrivacyAccountant`` (``isinstance`` holds, :func:`_register`).

    >>> from dp_accounting import dp_event
    >>> acc = CertifiedPldAccountant()
    >>> step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    >>> eps = acc.compose(step, 1000).get_epsilon(1e-5)   # a proven upper bound, rounded up
    >>> acc.certificate()["verdict"]
    'certified'
    """

    def __init__(self, neighboring_relation: Any = None, *, tolerance: Fraction | str = DEFAULT_TOLERANCE):
        _register()
        relation = getattr(neighboring_relation, "name", neighboring_relation)
        if relation not in (None, *_RELATIONS):
            raise InputError(f"neighboring_relation={neighboring_relation}: one of {', '.join(_RELATIONS)} is "
                             "supported")
        self._relation = neighboring_relation
        self._neighbours = _RELATIONS.get(relation, "add-remove")
        self._ledger = Ledger(checked(check_tolerance, tolerance, "tolerance"))
        self._events: list[tuple[Any, int]] = []
        self._tree: list[Any] = []  # the run as rdp_verify events (rdp_verify.events), one per compose
        self._kinds: frozenset[str] = frozenset()  # what the run holds (_kinds): which mixtures are refused
        self._steps = 0  # composed factors so far (the run domain's limit)
        self._mixed = False  # the run has more than the SGM family: answered through the event tree
        self._resolved_run: tuple[int, Any] | None = None  # (len(_tree), the resolved run) of the latest answer

    @property
    def neighboring_relation(self) -> Any:
        """The relation given, by default ``NeighboringRelation.ADD_OR_REMOVE_ONE`` (the text
        "ADD_OR_REMOVE_ONE" without dp_accounting)."""
        if self._relation is not None:
            return self._relation
        try:
            from dp_accounting.privacy_accountant import NeighboringRelation
        except ImportError:
            return "ADD_OR_REMOVE_ONE"
        return NeighboringRelation.ADD_OR_REMOVE_ONE

    def _phases(self, event: Any, count: int) -> list[Phase]:
        """The phases the event stands for, or ``_unsupported`` raised."""
        name = _name(event)
        if name == "NoOpDpEvent" or (count == 0 and name != "SelfComposedDpEvent"):
            return []
        if name == "GaussianDpEvent":
            return [Phase(Fraction(1), self._sigma(event), count, neighbours=self._neighbours)]
        if name == "PoissonSampledDpEvent":
            q = getattr(event, "sampling_probability", None)
            if _name(event.event) != "GaussianDpEvent":
                raise _unsupported(f"{_name(event.event)} under Poisson sampling: only GaussianDpEvent is supported")
            if exact_number(q, "sampling_probability") == 0:  # releases nothing about the data
                return []
            return [Phase(checked(check_q, q, "sampling_probability"), self._sigma(event.event), count,
                          neighbours=self._neighbours)]
        if name == "TruncatedSubsampledGaussianDpEvent":  # a phase only when no batch can be truncated (B ≥ N)
            n = self._count(getattr(event, "dataset_size", None))
            b = self._count(getattr(event, "truncated_batch_size", None))
            q = getattr(event, "sampling_probability", None)
            if exact_number(q, "sampling_probability") == 0:
                return []
            if b < n:
                raise _unsupported(TRUNCATED)
            return [Phase(checked(check_q, q, "sampling_probability"), self._sigma(event), count,
                          neighbours=self._neighbours)]
        if name == "SampledWithoutReplacementDpEvent":
            if _name(event.event) != "GaussianDpEvent":
                raise _unsupported(f"{_name(event.event)} on fixed-size batches: only GaussianDpEvent is supported")
            if self._neighbours != "replace-one":
                raise _unsupported("SampledWithoutReplacementDpEvent needs neighboring_relation REPLACE_ONE (under "
                                   "add/remove no bound for fixed-size batches is proven)")
            n = self._count(getattr(event, "source_dataset_size", None))
            b = self._count(getattr(event, "sample_size", None))
            if b == 0:
                return []
            if not 0 < b <= n:
                raise _unsupported(f"sample_size={b} must lie in [0, source_dataset_size={n}]")
            return [Phase(Fraction(b, n), self._sigma(event.event), count, "fixed", "replace-one", b, n)]
        if name == "SelfComposedDpEvent":
            return self._phases(event.event, count * self._count(event.count))
        if name == "ComposedDpEvent":
            return [p for e in event.events for p in self._phases(e, count)]
        raise _unsupported(f"{name} is not supported (a DP-SGD run is Poisson-sampled Gaussian steps)")

    @staticmethod
    def _sigma(event: Any) -> Fraction:
        return checked(check_run_sigma, getattr(event, "noise_multiplier", None), "noise_multiplier")

    @staticmethod
    def _count(count: Any) -> int:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _unsupported(f"count={count!r} must be a non-negative integer")
        return count

    def supports(self, event: Any) -> bool:
        """Whether :meth:`compose` would accept ``event`` once (nothing is composed)."""
        try:
            self._part(event, 1)
        except Exception as exc:
            if _name(exc) == "UnsupportedEventError":
                return False
            raise
        return True

    def _checked(self, event: Any, count: int) -> list[Phase]:
        """The event's phases after the ledger's checks (domain, total steps), or ``_unsupported``."""
        try:
            phases = [p for p in self._phases(event, count) if p.steps > 0]
            Ledger(phases=list(self._ledger.phases)).extend(phases)
        except InputError as exc:
            raise _unsupported(str(exc)) from None
        return phases

    def _part(self, event: Any, count: int) -> tuple[Any, frozenset[str], int]:
        """(``count`` x ``event`` as an rdp_verify event, what it holds, its composed factors), checked alone by the
        one table and against the run so far, or ``_unsupported``. Costs O(size of the event), not of the run."""
        from ..curves.accountant import total_steps
        from ..events.model import SelfComposedDpEvent
        from ..events.read import from_dp_accounting
        from ..foundations.inputs import check_steps
        from ..privacy_curve.table import resolve

        relation = getattr(self._relation, "name", self._relation)
        try:
            new = SelfComposedDpEvent(from_dp_accounting(event), count)
            part = resolve(new, relation)
            kinds = _kinds(part) | self._kinds
            if "zcdp" in kinds and len(kinds) > 1:
                raise InputError("ZCDpEvent is supported alone (a run of zCDP guarantees): an abstract guarantee has no "
                                 "privacy-loss distribution to compose with other mechanisms")
            if "per-epoch" in kinds and kinds & {"leaves", "zcdp"}:
                raise InputError("shuffled or balls-in-bins phases are bracketed per epoch and cannot be composed "
                                 "with other mechanisms")
            steps = total_steps(part.phases, part.leaves)
            if steps:
                check_steps(self._steps + steps, "steps")
        except InputError as exc:
            raise _unsupported(str(exc)) from None
        return new, kinds, steps

    def _run(self) -> Any:
        """The whole run resolved by the one table (once per composed state)."""
        from ..events.model import ComposedDpEvent
        from ..privacy_curve.table import resolve

        if self._resolved_run is None or self._resolved_run[0] != len(self._tree):
            relation = getattr(self._relation, "name", self._relation)
            self._resolved_run = (len(self._tree), resolve(ComposedDpEvent(tuple(self._tree)), relation))
        return self._resolved_run[1]

    def compose(self, event: Any, count: int = 1) -> "CertifiedPldAccountant":
        """Account for ``count`` applications of ``event``; returns self (calls chain)."""
        count = self._count(count)
        phases, first = None, None
        if not self._mixed and self._neighbours != "replace-special":  # the SGM family: the ledger's phases
            try:
                phases = self._checked(event, count)
            except Exception as exc:
                if _name(exc) != "UnsupportedEventError":
                    raise
                first = exc
        try:
            new, kinds, steps = self._part(event, count)
        except Exception as exc:
            if _name(exc) == "UnsupportedEventError" and first is not None:
                raise first from None  # the SGM family's own message
            raise
        if phases is not None:
            self._ledger.extend(phases)
        else:  # beyond the SGM family: the event tree and the one table answer from now on
            self._mixed = True
        self._tree.append(new)
        self._kinds, self._steps = kinds, self._steps + steps
        self._events.append((event, count))
        return self

    @property
    def ledger(self) -> Any:
        """The composed events as one dp_accounting ``DpEvent`` (needs dp_accounting, as the events do)."""
        from dp_accounting import dp_event_builder

        builder = dp_event_builder.DpEventBuilder()
        for event, count in self._events:
            builder.compose(event, count)
        return builder.build()

    @property
    def phases(self) -> list[Any]:
        """The run as exact phases (:class:`~rdp_verify.foundations.run.Phase`), consecutive equal steps merged."""
        return list(self._ledger.phases)

    def _event_answer(self, key: str, value: Fraction) -> Fraction | None:
        """The proven upper end for a run beyond the SGM family (None: no finite one), its certificate kept."""
        from ..privacy_curve.certificate import certify_event

        run = self._run()
        cert = certify_event(run.event, run.relation, tolerance=self._ledger.tolerance, **{key: value})
        if cert["verdict"] == "inconsistent":
            raise ArithmeticError(f"the proven bracket and the exact cross-check disagree for {key} = {value}: "
                                  "refusing to return a number (please report this run)")
        self._ledger.last = cert
        upper = cert["epsilon" if key == "delta" else "delta"]["upper"]
        return None if upper is None else Fraction(upper)

    def get_epsilon(self, target_delta: float) -> float:
        """A proven upper bound on ε at ``target_delta``, rounded up to a double (inf for a non-private run)."""
        delta = checked(check_delta, target_delta, "target_delta")
        if not self._mixed:
            return self._ledger.epsilon(delta)
        if self._run().non_private:
            return math.inf
        upper = self._event_answer("delta", delta)
        return math.inf if upper is None else float_rounded(upper, "up")

    def get_delta(self, target_epsilon: float) -> float:
        """A proven upper bound on δ at ``target_epsilon``, rounded up to a double (1 for a non-private run)."""
        epsilon = checked(check_epsilon, target_epsilon, "target_epsilon")
        if not self._mixed:
            return self._ledger.delta(epsilon)
        if self._run().non_private:
            return 1.0
        return min(float_rounded(self._event_answer("epsilon", epsilon), "up"), 1.0)

    def certificate(self) -> dict[str, Any]:
        """The sealed certificate of the latest ``get_epsilon``/``get_delta`` (``rdp-verify check`` re-verifies it)."""
        return self._ledger.certificate()


def _kinds(run: Any) -> frozenset[str]:
    """What a resolved run holds: ``sgm`` or ``per-epoch`` phases, ``leaves``, ``zcdp``, ``non-private``."""
    kinds = set()
    if run.phases:
        kinds.add("per-epoch" if any(p.sampler in ("shuffle", "balls-in-bins") for p in run.phases) else "sgm")
    if run.leaves:
        kinds.add("leaves")
    if run.zcdp is not None:
        kinds.add("zcdp")
    if run.non_private:
        kinds.add("non-private")
    return frozenset(kinds)


def _register() -> None:
    """Register :class:`CertifiedPldAccountant` as a virtual subclass of dp_accounting's abstract
    ``PrivacyAccountant`` (``abc.ABCMeta.register``), if dp_accounting has been imported: called when this
    module is imported and when an accountant is made, so code that checks ``isinstance(acc,
    PrivacyAccountant)`` accepts it, and dp_accounting is still never imported here."""
    module = sys.modules.get("dp_accounting.privacy_accountant")
    if module is not None and not issubclass(CertifiedPldAccountant, module.PrivacyAccountant):
        module.PrivacyAccountant.register(CertifiedPldAccountant)


_register()
