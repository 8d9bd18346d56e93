"""The one table: which proof brackets each event of a run.

A run is an event tree (:mod:`rdp_verify.events`) under a neighbouring relation. :func:`resolve` flattens it
(:func:`~rdp_verify.events.flatten.components`) and sends every component to the argument that brackets it:

=====================================================  ==========================================================
component                                              proof
=====================================================  ==========================================================
Gaussian family only (``GaussianDpEvent``, Poisson or  the run's phases (:func:`~rdp_verify.events.flatten.to_phases`)
fixed-size sampled Gaussian, shuffled, balls-in-bins)  and :func:`rdp_verify.curves.accountant.bracket` as before:
                                                       closed form, discrete pairs or per-epoch bounds
``PoissonSampledDpEvent(q, GaussianDpEvent)``          an SGM phase (:mod:`rdp_verify.curves.discretize`)
``SampledWithoutReplacementDpEvent(Gaussian)``         a fixed-size phase, ``REPLACE_ONE`` only
``GaussianDpEvent(σ)``                                 :class:`~rdp_verify.mechanisms.gaussian.Gaussian`, sensitivity 1
                                                       (2 under ``REPLACE_ONE``, as dp_accounting's PLD reads it)
``SingleEpochTreeAggregationDpEvent(σ, steps)``        the Gaussian mechanism with μ² = d/σ², d = ⌈log2(max steps + 1)⌉
                                                       (Kairouz et al. 2021, arXiv 2103.00039, Appendix D; dp_accounting's
                                                       RDP accountant): d uses of Gaussian(σ), exactly (Gaussian pairs
                                                       compose to the Gaussian pair of the summed μ²)
``LaplaceDpEvent(b)``                                  :class:`~rdp_verify.mechanisms.laplace.Laplace`, sensitivity 1
``PoissonSampledDpEvent(q, LaplaceDpEvent(b))``        :class:`~rdp_verify.mechanisms.sampled_laplace.SampledLaplace`
``DiscreteLaplaceDpEvent(a, s)``                       :class:`~rdp_verify.mechanisms.discrete_laplace.DiscreteLaplace`
``DiscreteGaussianDpEvent(σ, s)`` (our extension)      :class:`~rdp_verify.mechanisms.discrete_gaussian.DiscreteGaussian`
``MixtureOfGaussiansDpEvent``                          :class:`~rdp_verify.mechanisms.mixture_of_gaussians.MixtureOfGaussians`
``TruncatedSubsampledGaussianDpEvent(N, q, B, σ)``     :class:`~rdp_verify.mechanisms.truncated_sampled_gaussian.TruncatedSampledGaussian`
                                                       (a mixture of two sampled-Gaussian pairs, every relation); with
                                                       B ≥ N (never truncated) the Poisson-sampled Gaussian's phase
``RandomizedResponseDpEvent(p, k)``                    :class:`~rdp_verify.mechanisms.randomized_response.RandomizedResponse`,
                                                       ``REPLACE_ONE`` / ``REPLACE_SPECIAL`` only (as dp_accounting)
``NonPrivateDpEvent`` (or a zero noise parameter)      not private: ε = ∞ at every δ < 1, never a number
=====================================================  ==========================================================

Relations follow dp_accounting 0.6's PLD accountant (``pld_privacy_accountant._maybe_compose``): Laplace, discrete
Laplace (and the discrete Gaussian, as its discrete sibling), mixtures and sampled Laplace under ``ADD_OR_REMOVE_ONE`` or ``REPLACE_SPECIAL`` (refused under
``REPLACE_ONE``, as there), randomized response under ``REPLACE_ONE`` or ``REPLACE_SPECIAL``, tree aggregation under
``REPLACE_SPECIAL`` (as its RDP accountant), truncated Poisson sampling under all three. ``REPLACE_SPECIAL`` (a record replaced by a special record, e.g. the zero
record, relative to which the sensitivity is measured; arXiv 2103.00039, Definition 1.1) has the add/remove pairs of
every mechanism here: both orders of (mechanism at the record, mechanism at the special record) are bracketed.
A run of ``ZCDpEvent`` alone is its summed (ξ, ρ) (:mod:`rdp_verify.privacy_curve.zcdp`: an upper end only).
Refused by name: ``ZCDpEvent`` beside other mechanisms (an abstract guarantee has no privacy-loss distribution),
``RepeatAndSelectDpEvent``,
``SampledWithReplacementDpEvent``, sampling of anything but the Gaussian (fixed-size) or the Gaussian and Laplace
(Poisson), per-epoch samplers mixed with other mechanisms, and ``UnsupportedDpEvent``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..events.flatten import Component, components, to_phases
from ..events.model import (
    BallsInBinsDpEvent,
    DiscreteGaussianDpEvent,
    DiscreteLaplaceDpEvent,
    DpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    MixtureOfGaussiansDpEvent,
    NeighboringRelation,
    PoissonSampledDpEvent,
    RandomizedResponseDpEvent,
    SampledWithoutReplacementDpEvent,
    ShuffledDpEvent,
    SingleEpochTreeAggregationDpEvent,
    TruncatedSubsampledGaussianDpEvent,
    UnsupportedEvent,
    ZCDpEvent,
)
from ..foundations.inputs import check_q, check_run_sigma
from ..foundations.run import Phase
from ..mechanisms.base import Mechanism
from ..mechanisms.discrete_gaussian import DiscreteGaussian
from ..mechanisms.discrete_laplace import DiscreteLaplace
from ..mechanisms.gaussian import Gaussian
from ..mechanisms.laplace import Laplace
from ..mechanisms.mixture_of_gaussians import MixtureOfGaussians
from ..mechanisms.randomized_response import RandomizedResponse
from ..mechanisms.sampled_laplace import SampledLaplace
from ..mechanisms.truncated_sampled_gaussian import TruncatedSampledGaussian

__all__ = ["Run", "resolve", "supported"]

R = NeighboringRelation
GAUSSIAN_FAMILY = (GaussianDpEvent, PoissonSampledDpEvent, SampledWithoutReplacementDpEvent, ShuffledDpEvent,
                   BallsInBinsDpEvent)
ADDITIVE = (R.ADD_OR_REMOVE_ONE, R.REPLACE_SPECIAL)  # the relations of the additive-noise mechanisms


@dataclass(frozen=True)
class Run:
    """A run resolved: its phases (the SGM family) and leaves (other mechanisms, each with its number of uses), or
    ``non_private`` (ε = ∞). ``event`` and ``relation`` are the run as given."""

    event: DpEvent
    relation: NeighboringRelation
    phases: tuple[Phase, ...] = ()
    leaves: tuple[tuple[Mechanism, int], ...] = ()
    non_private: bool = False
    zcdp: tuple[Fraction, Fraction] | None = None  # (ρ, ξ) summed over a run of ZCDpEvents only

    @property
    def empty(self) -> bool:
        return not (self.phases or self.leaves or self.non_private or self.zcdp)


def _need(relation: NeighboringRelation, allowed: tuple[NeighboringRelation, ...], name: str) -> None:
    if relation not in allowed:
        raise UnsupportedEvent(f"{name} needs neighboring_relation {' or '.join(r.name for r in allowed)} (as "
                               f"dp_accounting's accountants define it), not {relation.name}")


def _zero_noise(mechanism: DpEvent) -> bool:
    """A noise parameter of 0 releases the data itself (dp_accounting: a non-private event)."""
    if isinstance(mechanism, TruncatedSubsampledGaussianDpEvent) and mechanism.sampling_probability == 0:
        return False  # no record is ever sampled: the noise does not matter (dp_accounting's accountant skips it)
    for name in ("noise_multiplier", "noise_parameter", "standard_deviation"):
        value = getattr(mechanism, name, None)
        if value is not None and value == 0:
            return not (isinstance(mechanism, RandomizedResponseDpEvent) and mechanism.num_buckets == 1)
    return False


def tree_depth(step_counts: Any) -> int:
    """d = ⌈log2(max steps + 1)⌉: the nodes of a binary tree over the steps that one record's gradient enters."""
    counts = step_counts if isinstance(step_counts, (tuple, list)) else (step_counts,)
    return math.ceil(math.log2(max(counts) + 1)) if max(counts) > 0 else 0


def _leaf(c: Component, relation: NeighboringRelation) -> tuple[Phase | None, tuple[Mechanism, int] | None]:
    """One component's phase or leaf (module docstring), or UnsupportedEvent."""
    wrapper, m = c.wrapper, c.mechanism
    if isinstance(wrapper, PoissonSampledDpEvent):
        q = wrapper.sampling_probability
        if isinstance(m, GaussianDpEvent):
            if relation == R.REPLACE_SPECIAL:
                return Phase(q, check_run_sigma(m.noise_multiplier, "noise_multiplier"), c.count), None
            _need(relation, (R.ADD_OR_REMOVE_ONE, R.REPLACE_ONE), "PoissonSampledDpEvent")
            neighbours = "add-remove" if relation == R.ADD_OR_REMOVE_ONE else "replace-one"
            return Phase(q, check_run_sigma(m.noise_multiplier, "noise_multiplier"), c.count,
                         neighbours=neighbours), None
        if isinstance(m, LaplaceDpEvent):
            _need(relation, ADDITIVE, "PoissonSampledDpEvent of a LaplaceDpEvent")
            return None, (SampledLaplace(m.noise_multiplier, q), c.count)
        raise UnsupportedEvent(f"{m.name} under Poisson sampling: only GaussianDpEvent and LaplaceDpEvent are "
                               "supported")
    if isinstance(wrapper, SampledWithoutReplacementDpEvent):
        if not isinstance(m, GaussianDpEvent):
            raise UnsupportedEvent(f"{m.name} on fixed-size batches: only GaussianDpEvent is supported")
        _need(relation, (R.REPLACE_ONE,), "SampledWithoutReplacementDpEvent")
        n, b = wrapper.source_dataset_size, wrapper.sample_size
        return Phase(Fraction(b, n), check_run_sigma(m.noise_multiplier, "noise_multiplier"), c.count, "fixed",
                     "replace-one", b, n), None
    if wrapper is not None:
        raise UnsupportedEvent(f"{wrapper.name} is not supported beside other mechanisms (per-epoch samplers are "
                               "bracketed per epoch; sampling with replacement has no proven bound here)")
    if isinstance(m, GaussianDpEvent):
        return None, (Gaussian(m.noise_multiplier, Fraction(2) if relation == R.REPLACE_ONE else Fraction(1)),
                      c.count)
    if isinstance(m, SingleEpochTreeAggregationDpEvent):
        _need(relation, (R.REPLACE_SPECIAL,), "SingleEpochTreeAggregationDpEvent")
        depth = tree_depth(m.step_counts)
        return None, ((Gaussian(m.noise_multiplier), c.count * depth) if depth else None)
    if isinstance(m, LaplaceDpEvent):
        _need(relation, ADDITIVE, "LaplaceDpEvent")
        return None, (Laplace(m.noise_multiplier), c.count)
    if isinstance(m, DiscreteLaplaceDpEvent):
        _need(relation, ADDITIVE, "DiscreteLaplaceDpEvent")
        if m.sensitivity == 0:
            return None, None  # the same law on both datasets: releases nothing
        return None, (DiscreteLaplace(m.noise_parameter, m.sensitivity), c.count)
    if isinstance(m, DiscreteGaussianDpEvent):
        _need(relation, ADDITIVE, "DiscreteGaussianDpEvent")
        if m.sensitivity == 0:
            return None, None
        return None, (DiscreteGaussian(m.sigma, m.sensitivity), c.count)
    if isinstance(m, MixtureOfGaussiansDpEvent):
        _need(relation, ADDITIVE, "MixtureOfGaussiansDpEvent")
        if all(s == 0 for s in m.sensitivities):
            return None, None  # the same law on both datasets: releases nothing
        return None, (MixtureOfGaussians(m.standard_deviation, tuple(m.sensitivities), tuple(m.sampling_probs)),
                      c.count)
    if isinstance(m, TruncatedSubsampledGaussianDpEvent):
        return _truncated(m, c.count, relation)
    if isinstance(m, RandomizedResponseDpEvent):
        _need(relation, (R.REPLACE_ONE, R.REPLACE_SPECIAL), "RandomizedResponseDpEvent")
        if m.num_buckets == 1:
            return None, None  # one bucket: the output is constant
        neighbours = "replace-one" if relation == R.REPLACE_ONE else "replace-special"
        return None, (RandomizedResponse(m.noise_parameter, m.num_buckets, neighbours), c.count)
    reasons = {"ZCDpEvent": "an abstract zCDP guarantee has no privacy-loss distribution to compose (alone, "
                            "rdp-verify cdp converts it)",
               "RepeatAndSelectDpEvent": "a random number of repetitions is not a composition: no proven bound here",
               "UnsupportedDpEvent": "dp_accounting's own marker of an event nobody can account for"}
    raise UnsupportedEvent(f"{m.name} is not supported: {reasons.get(m.name, 'no proven bound for it')}")


def _truncated(m: TruncatedSubsampledGaussianDpEvent, count: int,
               relation: NeighboringRelation) -> tuple[Phase | None, tuple[Mechanism, int] | None]:
    """Truncated Poisson sampling: nothing at q = 0; the Poisson-sampled Gaussian's phase when no batch can be
    truncated (B ≥ N: at most N records on either side); else the mixture leaf
    (:mod:`rdp_verify.mechanisms.truncated_sampled_gaussian`), dataset_size the size of the dataset holding the
    record (under ADD_OR_REMOVE_ONE the larger neighbour, as dp_accounting reads it)."""
    if m.sampling_probability == 0:
        return None, None  # releases nothing about the data (whatever the noise: dp_accounting skips it too)
    q, sigma = check_q(m.sampling_probability, "sampling_probability"), check_run_sigma(m.noise_multiplier,
                                                                                          "noise_multiplier")
    neighbours = {R.ADD_OR_REMOVE_ONE: "add-remove", R.REPLACE_ONE: "replace-one"}.get(relation, "replace-special")
    if m.truncated_batch_size >= m.dataset_size:
        return Phase(q, sigma, count,
                     neighbours="replace-one" if neighbours == "replace-one" else "add-remove"), None
    return None, (TruncatedSampledGaussian(m.dataset_size, q, m.truncated_batch_size, sigma, neighbours), count)


def _merged(leaves: list[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...]:
    """Consecutive uses of the same mechanism as one (n + m uses)."""
    out: list[tuple[Mechanism, int]] = []
    for leaf, count in leaves:
        if out and out[-1][0] == leaf:
            out[-1] = (leaf, out[-1][1] + count)
        else:
            out.append((leaf, count))
    return tuple(out)


def resolve(event: DpEvent, relation: Any = None) -> Run:
    """The run of ``event`` under ``relation`` (default ``ADD_OR_REMOVE_ONE``): module docstring's table, or
    :class:`~rdp_verify.events.model.UnsupportedEvent` / InputError (one line)."""
    relation = NeighboringRelation.of(relation)
    parts = components(event)
    if any(c.non_private or _zero_noise(c.mechanism) for c in parts):
        return Run(event, relation, non_private=True)
    zcdp = [c for c in parts if isinstance(c.mechanism, ZCDpEvent)]
    if zcdp:  # zCDP composes by adding ρ and ξ (Bun & Steinke 2016, Lemma 2.3); it has no PLD to compose with others
        if len(zcdp) < len(parts) or any(c.wrapper is not None for c in zcdp):
            raise UnsupportedEvent("ZCDpEvent is supported alone (a run of zCDP guarantees): an abstract guarantee "
                                   "has no privacy-loss distribution to compose with other mechanisms")
        return Run(event, relation, zcdp=(sum((c.count * c.mechanism.rho for c in zcdp), Fraction(0)),
                                          sum((c.count * c.mechanism.xi for c in zcdp), Fraction(0))))
    if parts and all(isinstance(c.event, GAUSSIAN_FAMILY) and isinstance(c.mechanism, GaussianDpEvent)
                     for c in parts) and relation != R.REPLACE_SPECIAL:
        return Run(event, relation, phases=tuple(to_phases(event, relation)))  # today's runs, unchanged
    phases, leaves = [], []
    for c in parts:
        phase, leaf = _leaf(c, relation)
        if phase is not None:
            phases.append(phase)
        if leaf is not None:
            leaves.append(leaf)
    return Run(event, relation, tuple(phases), _merged(leaves))


def supported(event: DpEvent, relation: Any = None) -> bool:
    """Whether :func:`resolve` accepts the event (a refusal is False; nothing is computed)."""
    try:
        resolve(event, relation)
    except UnsupportedEvent:
        return False
    return True
