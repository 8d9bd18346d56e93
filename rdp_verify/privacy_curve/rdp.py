"""Proven Rényi DP of an event tree at a list of orders: ``rdp-verify rdp --event``.

The tree is resolved by the one table (:func:`rdp_verify.privacy_curve.table.resolve`: SGM phases and mechanism
leaves, each with its uses); every component gets a proven interval of its ε_α in each direction (remove: the
mechanism at the record against the neighbour without it, or at the special record; add: the reverse order):

=====================================================  ============================================================
component                                              ε_α, and why
=====================================================  ============================================================
Poisson-sampled Gaussian, add/remove (or               log A_α/(α − 1) enclosed in Arb (Mironov, Talwar, Zhang 2019,
``REPLACE_SPECIAL``)                                   Theorem 4; :func:`rdp_verify.methods.rigorous.epsilon_many`);
                                                       remove = that; add = log B_α/(α − 1) enclosed too when another
                                                       component's add order may decide (else [0, A's] by Corollary 7)
Poisson-sampled Gaussian, ``REPLACE_ONE``, q < 1       a bracket (below)
Gaussian (q = 1; tree aggregation: d uses)             α s²/(2σ²) exactly, s = 2 under ``REPLACE_ONE`` (Mironov 2017,
                                                       Proposition 7; :func:`rdp_verify.mechanisms.gaussian.gaussian_rdp`)
Laplace                                                Mironov 2017, Proposition 6 (:func:`~rdp_verify.mechanisms.laplace.laplace_rdp`)
discrete Laplace, discrete Gaussian                    closed forms (:mod:`rdp_verify.mechanisms.discrete_laplace`,
                                                       :mod:`rdp_verify.mechanisms.discrete_gaussian`)
randomized response                                    the finite sum in each direction (:func:`~rdp_verify.mechanisms.randomized_response.finite_rdp`)
``ZCDpEvent(ρ, ξ)``                                    upper end ξ + ρα (Bun & Steinke 2016, Definition 1.1), lower end 0:
                                                       no lower end for an abstract guarantee
``NonPrivateDpEvent`` (or zero noise)                  ∞ at every order: not private, never a number
``NoOpDpEvent``                                        nothing (0)
=====================================================  ============================================================

**Poisson-sampled Gaussian under REPLACE_ONE** (q < 1). Replacing a record x by x′ gives one step the pair
P = M(D), Q = M(D′); let R = M(D₀), D₀ the dataset without the record. Upper end: for every p > 1 with
1/p + 1/p′ = 1, Hölder's inequality under R applied to P^α Q^{1−α} = R·(P/R)^α·(R/Q)^{α−1} gives

    D_α(P ‖ Q) ≤ ((α − 1/p)/(α − 1))·D_{pα}(P ‖ R) + D_{p′(α−1)+1}(R ‖ Q)

(the weak triangle inequality, Mironov 2017, Proposition 11), and at p = 1 (the sup norm)
D_α(P ‖ Q) ≤ D_α(P ‖ R) + D_∞(R ‖ Q). (P, R) is the remove pair and (R, Q) the add pair of one SGM step (add/remove
neighbours), so D_γ(P ‖ R) ≤ ε_γ of SG(q, σ) and D_γ(R ‖ Q) ≤ ε_γ too (Corollary 7); and Q = (1 − q)R + q·(R shifted
by x′'s gradient) ≥ (1 − q)R pointwise, so D_∞(R ‖ Q) ≤ log(1/(1 − q)). The upper end is the least of these bounds
over p ∈ {1, 3/2, 2} (orders beyond the supported 10⁶ skipped; log(1/(1 − q)) rounded up in Arb). The reverse order
is bounded the same way. Lower end: x's gradient a unit vector, x′'s and every other record's 0 is a replacement
that realises the remove pair of SG(q, σ) itself, so ε_α(SG(q, σ)), in one order. The bracket is not tight (up to
a factor of 5.5 above and 4 below the antipodal pair's divergence at the parameters tested):
``rdp-verify dp --event`` brackets the privacy curve of this relation tightly through the antipodal pair of
Lebeda et al. 2024 (:mod:`rdp_verify.curves.replace_one`), whose Rényi divergence is not enclosed here; dp_accounting's
RDP accountant refuses PoissonSampledDpEvent under REPLACE_ONE.

**Composition** (Mironov 2017, Proposition 1, adaptive): ε_α adds over uses. A run's neighbouring datasets are one
pair in one order, so each direction's intervals add up, and the run's ε_α lies in [max_d Σ lower_d, max_d Σ upper_d]
over the two directions d; the lower end takes every component's worst pair realised at once (the queries of the
mechanisms are arbitrary functions of the data, as every lower end of :mod:`rdp_verify.privacy_curve` does).

**Refused by name** (:class:`~rdp_verify.events.model.UnsupportedEvent`, one line): what :func:`resolve` refuses, and
beyond it: the mixture of Gaussians (the add direction puts the mixture in the denominator: no finite sum or closed
form here), Poisson-sampled Laplace and truncated Poisson sampling with B < N (no proven Rényi bound here;
dp_accounting's RDP accountant refuses both), fixed-size batches (dp_accounting's RDP accountant uses Wang, Balle, Kasiviswanathan 2019, not re-proven here),
per-epoch samplers (an epoch's steps are not independent uses), and ZCDpEvent under sampling.

**Rounding.** Each component's value is an Arb ball from exact rational inputs (or an exact rational), its precision
raised until its relative accuracy is 10^−dps; the balls become exact rational intervals, summed exactly. Callers
round the totals outward (:func:`rdp_verify.foundations.decimals.interval_json`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from flint import arb, ctx

from ..events.flatten import components
from ..events.model import (
    ComposedDpEvent,
    DpEvent,
    NeighboringRelation,
    SelfComposedDpEvent,
    UnsupportedEvent,
    ZCDpEvent,
)
from ..foundations.inputs import ALPHA_MAX, SGM, InputError, check_alpha, check_sigma, fraction_text
from ..foundations.results import Bounded, MethodUnavailable, arb_to_bounded, to_arb
from ..mechanisms.discrete_gaussian import DiscreteGaussian
from ..mechanisms.discrete_laplace import DiscreteLaplace
from ..mechanisms.gaussian import Gaussian, gaussian_rdp
from ..mechanisms.laplace import Laplace
from ..mechanisms.randomized_response import RandomizedResponse
from ..methods.rigorous import MAX_PREC, enclose, epsilon_many
from .table import Run, resolve

__all__ = ["Part", "EventRdp", "event_rdp", "SOURCES", "PROOF"]

R = NeighboringRelation

SOURCES = {
    "sgm": "log(A_alpha)/(alpha - 1), A_alpha enclosed in Arb (Mironov-Talwar-Zhang 2019, Theorem 4 with Corollary 7)",
    "sgm-replace-one": ("lower: the remove pair of SG(q, sigma), an actual replacement; upper: the least over p in "
                        "{1, 3/2, 2} of the weak triangle inequality through the dataset without the record, "
                        "(alpha - 1/p)/(alpha - 1)*eps_{p alpha} + min(eps_{p'(alpha - 1) + 1}, log(1/(1 - q))) of "
                        "SG(q, sigma) (Mironov 2017, Proposition 11; Hoelder; p = 1: eps_alpha + log(1/(1 - q))): "
                        "not tight"),
    "gaussian": "alpha*s^2/(2*sigma^2), exact (Mironov 2017, Proposition 7)",
    "laplace": "closed form (Mironov 2017, Proposition 6), Arb",
    "discrete-laplace": "closed form of the three geometric series (rdp_verify.mechanisms.discrete_laplace), Arb",
    "discrete-gaussian": ("alpha*s^2/(2*sigma^2) + log(theta3(alpha*s, 2*pi*i*sigma^2)/theta3(0, ...))/(alpha - 1) "
                          "(Poisson summation; at most alpha*s^2/(2*sigma^2), Canonne-Kamath-Steinke 2020), Arb"),
    "randomized-response": "the finite sum over the outcomes, each direction (Renyi divergence of finite laws), Arb",
    "zcdp": ("upper end xi + rho*alpha ((xi, rho)-zCDP, Bun & Steinke 2016, Definition 1.1); no lower end for an "
             "abstract guarantee (it bounds the mechanism from above only): 0"),
}
PROOF = ("Renyi DP adds under adaptive composition (Mironov 2017, Proposition 1): each direction's component "
         "intervals, times their uses, are summed, and epsilon_alpha lies between the larger sum of lower ends and the "
         "larger sum of upper ends of the two directions; each component's interval comes from the source named in "
         "components, enclosed in Arb ball arithmetic from exact inputs; each interval is rounded outward")


@dataclass(frozen=True)
class Part:
    """One component of the run: what it is, its uses, whether its interval is ``exact`` (a ball around the true
    value), a ``bracket`` (two different arguments) or ``upper only``, and the source of its bound."""

    component: str
    uses: int
    bound: str
    source: str


@dataclass(frozen=True)
class EventRdp:
    """The RDP of a run: its parts and, per order, the proven interval of ε_α (``values``), or ``non_private``."""

    event: DpEvent
    relation: NeighboringRelation
    orders: tuple[Fraction, ...]
    parts: tuple[Part, ...] = ()
    values: tuple[Bounded, ...] = ()
    non_private: bool = False

    @property
    def upper_only(self) -> bool:
        """Every part an abstract guarantee: the lower ends are the trivial 0."""
        return bool(self.parts) and all(p.bound == "upper only" for p in self.parts)


def _target_bits(dps: int) -> int:
    return math.ceil(dps * math.log2(10)) + 4


def _rel_bits(x: arb) -> int:
    return 1 << 30 if x.is_exact() else x.rel_accuracy_bits()


def _enclosed(fn: Any, alpha: Fraction, dps: int) -> tuple[Bounded, Bounded]:
    """``fn(alpha)`` → (remove, add), exact rationals or balls at the working precision, as exact intervals: the
    precision is raised until every ball has relative accuracy 10^−dps (:data:`MAX_PREC` bits at most)."""
    target = _target_bits(dps)
    prec = target + 40
    while True:
        with ctx.workprec(prec):
            values = fn(alpha)
        balls = [v for v in values if isinstance(v, arb)]
        if all(_rel_bits(b) >= target for b in balls):
            return tuple(Bounded(Fraction(v), Fraction(0)) if isinstance(v, Fraction) else arb_to_bounded(v)
                         for v in values)
        prec = 2 * prec
        if prec > MAX_PREC:
            raise MethodUnavailable(f"alpha={fraction_text(alpha)}: no {dps}-digit enclosure within {MAX_PREC} bits")


_ZERO = Bounded(Fraction(0), Fraction(0))


def _exact(value: Fraction) -> Bounded:
    return Bounded(value, Fraction(0))


def _leaf_part(leaf: Any, count: int) -> tuple[Part, Any]:
    """(Part, fn(alpha) → (remove, add)) of a mechanism leaf, or UnsupportedEvent by name."""
    if isinstance(leaf, Gaussian):
        text = f"Gaussian(sigma={fraction_text(leaf.sigma)}, sensitivity={fraction_text(leaf.sensitivity)})"
        return Part(text, count, "exact", SOURCES["gaussian"]), leaf.rdp
    if isinstance(leaf, Laplace):
        text = f"Laplace(b={fraction_text(leaf.b)}, sensitivity={fraction_text(leaf.sensitivity)})"
        return Part(text, count, "exact", SOURCES["laplace"]), leaf.rdp
    if isinstance(leaf, DiscreteLaplace):
        text = f"DiscreteLaplace(a={fraction_text(leaf.a)}, sensitivity={leaf.sensitivity})"
        return Part(text, count, "exact", SOURCES["discrete-laplace"]), leaf.rdp
    if isinstance(leaf, DiscreteGaussian):
        text = f"DiscreteGaussian(sigma={fraction_text(leaf.sigma)}, sensitivity={leaf.sensitivity})"
        return Part(text, count, "exact", SOURCES["discrete-gaussian"]), leaf.rdp
    if isinstance(leaf, RandomizedResponse):
        text = (f"RandomizedResponse(p={fraction_text(leaf.noise_parameter)}, k={leaf.num_buckets}, "
                f"{leaf.neighbours})")
        return Part(text, count, "exact", SOURCES["randomized-response"]), leaf.rdp
    raise UnsupportedEvent(getattr(leaf, "no_rdp", None) or f"{type(leaf).__name__} has no proven Renyi DP here")


_PER_EPOCH = {"shuffle": "ShuffledDpEvent", "balls-in-bins": "BallsInBinsDpEvent"}
HOLDER = (Fraction(3, 2), Fraction(2))  # Hölder exponents p > 1 of the replace-one upper end (p = 1 always tried)


def _phase_parts(run: Run, orders: Sequence[Fraction], dps: int,
                 add_order: bool) -> list[tuple[Part, list[tuple[Bounded, Bounded]]]]:
    """Each distinct SGM phase of the run (uses summed), with the (remove, add) interval of all its uses per order;
    ``add_order``: enclose the add order log B_α/(α − 1) too (else it is [0, the remove order's upper end])."""
    uses: dict[tuple[Fraction, Fraction, str], int] = {}
    for p in run.phases:
        if p.sampler in _PER_EPOCH:
            raise UnsupportedEvent(f"{_PER_EPOCH[p.sampler]} has no Renyi DP composition here (the steps of an epoch "
                                   "are not independent uses; rdp-verify dp --event bounds its privacy curve)")
        if p.sampler == "fixed":
            raise UnsupportedEvent("SampledWithoutReplacementDpEvent has no proven Renyi DP here (dp_accounting's RDP "
                                   "accountant uses the bound of Wang, Balle, Kasiviswanathan 2019, not re-proven "
                                   "here; rdp-verify dp --event brackets its privacy curve)")
        key = (p.q, p.sigma, p.neighbours)
        uses[key] = uses.get(key, 0) + p.steps
    out = []
    for (q, sigma, neighbours), steps in uses.items():
        replace_one = neighbours == "replace-one"
        if q == 1:  # the Gaussian mechanism: sensitivity 2 under replace-one (curves.replace_one)
            s = Fraction(2) if replace_one else Fraction(1)
            part = Part(f"Gaussian(sigma={fraction_text(sigma)}, sensitivity={s})", steps, "exact", SOURCES["gaussian"])
            out.append((part, [(_exact(steps * gaussian_rdp(sigma, s, a)),) * 2 for a in orders]))
            continue
        check_sigma(sigma, "noise_multiplier")  # the domain of the RDP methods
        text = f"SampledGaussian(q={fraction_text(q)}, sigma={fraction_text(sigma)})"
        eps = epsilon_many(q, sigma, list(orders), dps)
        if not replace_one:
            if add_order:  # another component's add order may decide: B_α enclosed as well (methods.rigorous.enclose)
                adds = [arb_to_bounded(enclose(SGM(q, sigma, a), dps).log_b).scaled(1 / (a - 1)) for a in orders]
            else:
                adds = [Bounded.between(Fraction(0), e.upper) for e in eps]
            out.append((Part(text, steps, "exact", SOURCES["sgm"]),
                        [(e.scaled(Fraction(steps)), b.scaled(Fraction(steps))) for e, b in zip(eps, adds)]))
            continue
        with ctx.workprec(_target_bits(dps) + 64):  # D_∞(R ‖ Q) ≤ log(1/(1 − q)), rounded up
            log_inv = arb_to_bounded(-(1 - to_arb(q)).log()).upper
        candidates = {Fraction(1): [e.upper + log_inv for e in eps]}  # p = 1: D_α(P ‖ R) + D_∞(R ‖ Q)
        for p in HOLDER:
            conj = p / (p - 1)
            first, second = [p * a for a in orders], [conj * (a - 1) + 1 for a in orders]
            usable = [i for i, (x, y) in enumerate(zip(first, second)) if max(x, y) <= ALPHA_MAX]
            ex = epsilon_many(q, sigma, [first[i] for i in usable], dps) if usable else []
            ey = epsilon_many(q, sigma, [second[i] for i in usable], dps) if usable else []
            bound: list[Fraction | None] = [None] * len(orders)
            for i, x, y in zip(usable, ex, ey):
                a = orders[i]
                bound[i] = (a - 1 / p) / (a - 1) * x.upper + min(y.upper, log_inv)
            candidates[p] = bound
        rows = []
        for i, e in enumerate(eps):
            upper = steps * min(c[i] for c in candidates.values() if c[i] is not None)
            rows.append((Bounded.between(steps * e.lower, upper), Bounded.between(Fraction(0), upper)))
        out.append((Part(text + " replace-one", steps, "bracket", SOURCES["sgm-replace-one"]), rows))
    return out


def event_rdp(event: DpEvent, relation: Any, orders: Sequence[Fraction], dps: int) -> EventRdp:
    """The proven ε_α of ``event`` under ``relation`` (default ``ADD_OR_REMOVE_ONE``) at each order (module
    docstring); ``non_private`` when it holds a non-private event; UnsupportedEvent / InputError (one line) for a
    refusal; MethodUnavailable when an order cannot be enclosed."""
    relation = NeighboringRelation.of(relation)
    orders = tuple(check_alpha(Fraction(a)) for a in orders)
    if not orders:
        raise InputError("the order list is empty")
    parts = components(event)
    zcdp = [c for c in parts if isinstance(c.mechanism, ZCDpEvent)]
    if any(c.wrapper is not None for c in zcdp):
        wrapped = next(c for c in zcdp if c.wrapper is not None)
        raise UnsupportedEvent(f"{wrapped.wrapper.name} of a ZCDpEvent is not supported: no amplification by sampling "
                               "is proven here for an abstract guarantee")
    rest = [c for c in parts if not isinstance(c.mechanism, ZCDpEvent)]
    if not zcdp:
        run = resolve(event, relation)
    elif rest:
        run = resolve(ComposedDpEvent([SelfComposedDpEvent(c.event, c.count) for c in rest]), relation)
    else:
        run = Run(event, relation)
    if run.non_private:
        return EventRdp(event, relation, orders, non_private=True)

    found = _phase_parts(run, orders, dps, add_order=any(not leaf.is_symmetric() for leaf, _ in run.leaves))
    for leaf, count in run.leaves:
        part, fn = _leaf_part(leaf, count)
        found.append((part, [tuple(b.scaled(Fraction(count)) for b in _enclosed(fn, a, dps)) for a in orders]))
    if zcdp:  # (ξ, ρ) add over the uses (Bun & Steinke 2016, Lemma 2.3): one part for all of them
        rho = sum((c.count * c.mechanism.rho for c in zcdp), Fraction(0))
        xi = sum((c.count * c.mechanism.xi for c in zcdp), Fraction(0))
        part = Part(f"ZCDp(rho={fraction_text(rho)}, xi={fraction_text(xi)})", sum(c.count for c in zcdp),
                    "upper only", SOURCES["zcdp"])
        found.append((part, [(Bounded.between(Fraction(0), xi + rho * a),) * 2 for a in orders]))
    values = []
    for i in range(len(orders)):
        ends = [(sum((rows[i][d].lower for _, rows in found), Fraction(0)),
                 sum((rows[i][d].upper for _, rows in found), Fraction(0))) for d in (0, 1)]
        values.append(Bounded.between(max(lo for lo, _ in ends), max(up for _, up in ends)))
    return EventRdp(event, relation, orders, tuple(p for p, _ in found), tuple(values))
