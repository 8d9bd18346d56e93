"""Proven bounds for samplers that put each record in exactly one batch per epoch: shuffling, balls-in-bins.

A phase of ``shuffle`` draws a fresh uniformly random permutation of the N records every epoch and
cuts it into t = N/b batches of b; ``balls-in-bins`` (random allocation: Chua, Ghazi, Kamath, Kumar,
Manurangsi, Sinha, Zhang, AISTATS 2025, arXiv 2412.16802; Feldman and Shenfeld 2025, arXiv
2502.08202) puts each record into one uniformly random step of the epoch's t, independently. No
amplification-by-sampling theorem for either is certified here, so the bracket is two separate proofs:

**Upper bound: no amplification.** In each epoch the differing record's gradient enters exactly one
step (under add/remove it is read as *zero-out*: the record is replaced by one with gradient 0, so N
and every other record's batch stay put; under replace-one it is replaced in its own position).
Conditioned on the permutation or allocation (the same in both datasets, and independent of the data),
an epoch is the adaptive composition of steps in which only one sees the record, with ℓ2 sensitivity Δ
(1 zero-out, 2 replace-one): a Gaussian mechanism N(0, σ²) vs N(Δ, σ²), and the other steps are
identical in both. Epoch after epoch this composes to the Gaussian mechanism with
μ² = Σ_i E_i·Δ²/σ_i² (E_i the epochs phase i begins, ⌈T_i/t_i⌉; Dong, Roth, Su 2022, Corollary 3.3),
and mixing over the permutations (the same mixture on both sides) cannot increase the hockey-stick
divergence (joint convexity). Its curve is the closed form of :mod:`rdp_verify.curves.gaussian`
(Balle & Wang 2018, Theorem 8). This holds for *any* sampler in which each record joins at most one
batch per epoch, persistent shuffling included.

**Lower bound: an explicit pair of neighbouring datasets** (after Chua, Ghazi, Kamath, Kumar,
Manurangsi, Sinha, Zhang, "How Private are DP-SGD Implementations?", ICML 2024, arXiv 2403.17673,
Section 4, and their multi-epoch follow-up, NeurIPS 2024, arXiv 2411.04205). A one-parameter model
with the linear loss ℓ(θ; x) = θ·g_x has constant gradients, so DP-SGD's iterates reveal each step's
noisy gradient sum Y_s exactly. Let every other record have gradient c ∈ [−1, 1] and the differing
record g = 1 (against g' = 0, zero-out; against g' = −1, replace-one). In one epoch of phase i its
step j is uniform on the t_i steps (shuffle and balls-in-bins alike), and after subtracting the known
b·c from every step, Y ∈ ℝ^{t_i} is N(m·e_j, σ_i²I) with m = g − c in one dataset and m' = g' − c in
the other (c = −1 with zero-out is the pair Chua et al. use: shifts 2 and 1, so the differing step
stands out in both). That needs the other steps' sums known, which shuffling's fixed batch size gives;
balls-in-bins batches have random sizes, so there c = 0 (the others then add nothing whatever the sizes).
The epoch's maximum M = max_s Y_s has the exact CDF
F_m(τ) = Φ(τ/σ)^{t−1}·Φ((τ − m)/σ), and the number C of the E full epochs (⌊T_i/t_i⌋; a fresh
permutation each epoch makes them independent) with M > τ is Binomial(E, 1 − F_m(τ)). C is a
post-processing of the run's output (as is dropping every other phase), so for any τ and k,

    δ(ε) ≥ P(C ≥ k) − e^ε·P'(C ≥ k)   and   δ(ε) ≥ P'(C < k) − e^ε·P(C < k)

(the two orders of the pair; P, P' the laws under m and under m'), and
ε(δ) ≥ log((P(C ≥ k) − δ)/P'(C ≥ k)) whenever P(C ≥ k) > δ (likewise for the other order).
Binomial tails are regularized incomplete beta functions, P(C ≥ k) = I_p(k, E − k + 1), enclosed
by Arb (python-flint ``beta_lower``) with p from erfc, so each bound is proven; c, τ and k are chosen
by a double-precision search (a heuristic: any choice gives a true bound) and recorded.

The lower bound assumes a fresh permutation (or allocation) each epoch, that each phase starts a new
epoch, that every iterate is released, and that the update scales the noisy sum by a known constant
(an implementation dividing by the realised, random size of a balls-in-bins batch is another
mechanism). Both ends are for the zero-out relation when the run says add-remove: a zero-out pair
is two add/remove steps apart, so the lower end refutes a claim made for zero-out neighbours (the
relation for which Poisson add/remove accounting gives the same numbers, as dp_accounting's
``REPLACE_SPECIAL``), not one for add/remove proper, which a fixed batch size leaves undefined.
Nothing here is tight: the bracket says how far apart the two proofs are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, Sequence

from flint import arb, ctx

from ..foundations.inputs import InputError, fraction_text
from ..foundations.normal import phi
from ..foundations.results import arb_to_bounded, lower_end, to_arb
from ..foundations.run import Phase
from ..pld.compose import PLD, Budget, bits_for, compose, delta_at, products_needed, verified_root
from .gaussian import GaussianCurve
from .random_allocation import SEARCH, AllocationBound, applies

__all__ = ["PerEpochBounds", "is_per_epoch_run", "Test", "Composed", "composed_pld"]

_PREC = 256
_TAUS = 161  # thresholds tried by the search (a heuristic: any τ gives a proven bound)
_KEEP = 8  # candidates per order proven in Arb


def is_per_epoch_run(phases: Sequence[Phase]) -> bool:
    """Every phase shuffles or allocates balls into bins (each record in exactly one batch per epoch)."""
    return all(p.sampler in ("shuffle", "balls-in-bins") for p in phases)


@dataclass(frozen=True)
class Test:
    """One lower-bound test: phase ``phase``'s count of epochs whose maximum exceeds ``threshold``,
    compared with ``count``; ``order`` "forward" rejects for C ≥ k, "reverse" (the pair's other order) for C < k."""

    phase: int
    order: str
    threshold: Fraction
    count: int
    others: Fraction  # c: every other record's gradient

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "others_gradient": fraction_text(self.others), "order": self.order,
                "threshold": fraction_text(self.threshold), "count": self.count}


def _upper_phases(phases: Sequence[Phase]) -> tuple[Phase, ...]:
    """The no-amplification bound as a q = 1 run: one full-batch step per epoch begun, same σ and neighbours."""
    return tuple(Phase(Fraction(1), p.sigma, p.epochs[1], neighbours=p.neighbours) for p in phases)


def _exceed(p: Phase, m: Fraction, tau: arb) -> arb:
    """1 − F_m(τ) = P(max_s Y_s > τ), Y = N(m·e_j, σ²I) in ℝ^t (module docstring)."""
    s, t = to_arb(p.sigma), p.batches_per_epoch
    cdf = phi(tau / s) ** (t - 1) * phi((tau - to_arb(m)) / s)
    return 1 - cdf


def _at_least(prob: arb, epochs: int, k: int) -> arb:
    """P(Binomial(E, p) ≥ k) = I_p(k, E − k + 1) (1 for k ≤ 0, 0 for k > E)."""
    if k <= 0:
        return arb(1)
    if k > epochs:
        return arb(0)
    return prob.beta_lower(k, epochs - k + 1, regularized=True)


def _below(prob: arb, epochs: int, k: int) -> arb:
    """P(Binomial(E, p) < k) = I_{1−p}(E − k + 1, k) (0 for k ≤ 0, 1 for k > E)."""
    if k <= 0:
        return arb(0)
    if k > epochs:
        return arb(1)
    return (1 - prob).beta_lower(epochs - k + 1, k, regularized=True)


def _shifts(p: Phase, c: Fraction) -> tuple[Fraction, Fraction]:
    """(m, m'): the differing step's mean in the two datasets, others at gradient c: (1 − c, −c) zero-out,
    (1 − c, −1 − c) replace-one."""
    return 1 - c, (-1 if p.neighbours == "replace-one" else 0) - c


_OTHERS = tuple(Fraction(c, 4) for c in range(-4, 5))  # the other records' gradients tried by the search (shuffle)


def _others(p: Phase) -> tuple[Fraction, ...]:
    """The other records' gradients c a test may use: any in [−1, 1] for shuffling (every batch has exactly b
    records, so the others' sum b·c is known), only 0 for balls-in-bins (random batch sizes)."""
    return _OTHERS if p.sampler == "shuffle" else (Fraction(0),)


@lru_cache(maxsize=4096)
def _masses(p: Phase, test: Test) -> tuple[arb, arb]:
    """(A, B) of a test: the rejection region's probability under the first and the second of the ordered pair
    (balls at the working precision of every caller, _PREC; cached: a certificate proves each test at many ε)."""
    epochs = p.epochs[0]
    if test.others not in _others(p) and not (p.sampler == "shuffle" and -1 <= test.others <= 1):
        raise InputError(f"others_gradient={test.others} is not a valid choice for sampler {p.sampler}")
    tau = to_arb(test.threshold)
    m1, m0 = _shifts(p, test.others)
    p1, p0 = _exceed(p, m1, tau), _exceed(p, m0, tau)
    if test.order == "forward":
        return _at_least(p1, epochs, test.count), _at_least(p0, epochs, test.count)
    return _below(p0, epochs, test.count), _below(p1, epochs, test.count)


def _log_binomial_tails(p: float, epochs: int) -> tuple[list[float], list[float]]:
    """log P(C ≥ k) and log P(C < k) for k = 0 … E + 1, C ~ Binomial(E, p), in double precision."""
    lp, lq = (math.log(p) if p > 0 else -math.inf), (math.log1p(-p) if p < 1 else -math.inf)
    logs = [math.lgamma(epochs + 1) - math.lgamma(c + 1) - math.lgamma(epochs - c + 1)
            + (c * lp if c else 0.0) + ((epochs - c) * lq if epochs - c else 0.0) for c in range(epochs + 1)]

    def logsumexp(a: float, b: float) -> float:
        if a == -math.inf:
            return b
        if b == -math.inf:
            return a
        m = max(a, b)
        return m + math.log(math.exp(a - m) + math.exp(b - m))

    upper = [-math.inf] * (epochs + 2)
    for c in range(epochs, -1, -1):
        upper[c] = logsumexp(upper[c + 1], logs[c])
    lower = [-math.inf] * (epochs + 2)
    for c in range(epochs + 1):
        lower[c + 1] = logsumexp(lower[c], logs[c])
    return upper, lower


def _search(p: Phase, index: int, delta: float | None, epsilon: float | None) -> list[Test]:
    """Candidate tests maximising the lower bound of ε(δ) (``delta``) or of δ(ε) (``epsilon``) for one phase, by a
    double-precision search over τ and k (a heuristic; the bound of every candidate is then proven in Arb)."""
    from statistics import NormalDist

    epochs, t, s = p.epochs[0], p.batches_per_epoch, float(p.sigma)
    if epochs < 1:
        return []
    norm = NormalDist()
    top = 2 + s * (math.sqrt(2 * math.log(t + 1)) + 8)
    scored: list[tuple[float, Test]] = []
    for c, i in ((c, i) for c in _others(p) for i in range(_TAUS)):
        tau = -2 - s * 4 + (top + 2 + s * 4) * i / (_TAUS - 1)
        tau_exact = Fraction(f"{tau:.4g}")

        def exceed(m: Fraction) -> float:
            return 1 - norm.cdf(float(tau_exact) / s) ** (t - 1) * norm.cdf((float(tau_exact) - float(m)) / s)

        m1, m0 = _shifts(p, c)
        p1, p0 = exceed(m1), exceed(m0)
        if not 0 < p0 < 1 or not 0 < p1 < 1:
            continue
        up1, low1 = _log_binomial_tails(p1, epochs)
        up0, low0 = _log_binomial_tails(p0, epochs)
        for order, a_tail, b_tail, ks in (("forward", up1, up0, range(1, epochs + 1)),
                                          ("reverse", low0, low1, range(1, epochs + 1))):
            for k in ks:
                la, lb = a_tail[k], b_tail[k]
                if delta is not None:
                    if la <= math.log(delta) or lb == -math.inf:
                        continue
                    score = math.log(math.exp(la) - delta) - lb
                else:
                    score = math.exp(la) - math.exp(epsilon + lb) if lb > -700 else math.exp(la)
                scored.append((score, Test(index, order, tau_exact, k, c)))
    # a few of the best per order: double precision may misjudge a difference of two nearly equal tails,
    # and each candidate's bound is then proven (or found vacuous) in Arb
    return [test for order in ("forward", "reverse")
            for _, test in sorted((st for st in scored if st[1].order == order), key=lambda st: -st[0])[:_KEEP]]


# -- the composed law of each epoch's maximum (Chua et al., NeurIPS 2024) ------------------------------------

_BIN_WIDTH = Fraction(1, 64)  # bins of an epoch's maximum, in units of σ (a finer one gains < 10^-4: the tests)
_LOSS_STEP = Fraction(1, 4096)  # h: every epoch's loss is rounded down by less than h
_COARSE = (Fraction(1, 8), Fraction(1, 64))  # bin width and loss step of the search over c and the order
_CUT = 2**24  # mass a composition may cut, in units of 2^-bits: about 2^-40 of δ's scale (compose.bits_for)
_DELTA_BITS = 192  # fixed-point bits of δ(ε) queries (ε(δ) queries: compose.bits_for(δ))
_LIMITS = {"edges": 8192, "grid_step": Fraction(1, 2**16), "bits": (64, 288)}  # beyond any run's own (check)


@dataclass(frozen=True)
class Composed:
    """The composed-maximum lower bound's settings: the ordered pair (``order`` "forward": the differing record's
    gradient 1 first; "reverse": g' first) with every other record's gradient ``others``, each phase's epoch
    maximum binned at the edges τ_j = σ_i·(lowest + j·width), j < ``edges``, losses on the grid
    ``grid_step``·ℤ, masses in units of 2^−``bits`` (module docstring of :func:`composed_pld`)."""

    order: str
    others: Fraction
    lowest: Fraction
    width: Fraction
    edges: int
    grid_step: Fraction
    bits: int

    def to_json(self) -> dict[str, Any]:
        return {"order": self.order, "others_gradient": fraction_text(self.others),
                "lowest_edge": fraction_text(self.lowest), "bin_width": fraction_text(self.width),
                "edges": self.edges, "grid_step": fraction_text(self.grid_step), "fixed_point_bits": self.bits}

    def checked(self, phases: Sequence[Phase]) -> "Composed":
        """These settings, or InputError when they do not fit the run or ask for more work than any run does."""
        low, high = _LIMITS["bits"]
        if not (self.order in ("forward", "reverse") and self.width > 0 and 2 <= self.edges <= _LIMITS["edges"]
                and self.grid_step >= _LIMITS["grid_step"] and low <= self.bits <= high):
            raise InputError("settings: lower_composed asks for more work than any run (edges, grid_step, bits) "
                             "or is malformed")
        if any(self.others not in _others(p) and not (p.sampler == "shuffle" and -1 <= self.others <= 1)
               for p in phases):
            raise InputError(f"others_gradient={self.others} is not a valid choice for every phase's sampler")
        return self


@lru_cache(maxsize=256)  # the same edges serve every query of a run (a plot asks at 60 values of ε)
def _edge_range(phases: tuple[Phase, ...], c: Fraction, width: Fraction, bits: int) -> tuple[Fraction, Fraction, int]:
    """(lowest, width, edges): bin edges in units of σ on the ``width`` lattice covering every phase's maximum under
    both datasets but for tails below 2^−bits (union bounds; mpmath; a heuristic: any edges give a proven bound)."""
    import mpmath

    with mpmath.workdps(20):
        tiny, z_lo, z_hi = mpmath.mpf(2) ** -bits, mpmath.inf, -mpmath.inf
        for p in phases:
            s, t = mpmath.mpf(p.sigma.numerator) / p.sigma.denominator, p.batches_per_epoch
            for m in _shifts(p, c):
                shift = mpmath.mpf(m.numerator) / m.denominator / s
                # P(M ≤ σz) ≤ Φ(z)^(t−1)·Φ(z − m/σ), P(M > σz) ≤ (t − 1)Φ̄(z) + Φ̄(z − m/σ), both monotone in z
                low = _bisect(lambda z: mpmath.ncdf(z) ** (t - 1) * mpmath.ncdf(z - shift) <= tiny, -80, 80)
                high = _bisect(lambda z: (t - 1) * mpmath.ncdf(-z) + mpmath.ncdf(shift - z) > tiny, -80, 80)
                z_lo, z_hi = min(z_lo, low), max(z_hi, high)
        first = int(mpmath.floor(z_lo / (mpmath.mpf(width.numerator) / width.denominator)))
        last = int(mpmath.ceil(z_hi / (mpmath.mpf(width.numerator) / width.denominator)))
    return first * width, width, last - first + 1


def _bisect(true_below: Any, a: float, b: float) -> Any:
    """The switch point of a predicate true at ``a`` and false at ``b`` (48 halvings: from a width of 160 to
    below 10^-12, far inside the bins' lattice)."""
    for _ in range(48):
        mid = (a + b) / 2
        a, b = (mid, b) if true_below(mid) else (a, mid)
    return (a + b) / 2


@lru_cache(maxsize=64)
def composed_pld(phases: tuple[Phase, ...], comp: Composed) -> PLD | None:
    """The privacy-loss distribution of the E_i full epochs of every phase, each epoch's maximum binned: a
    lower-bound PLD (:mod:`rdp_verify.pld.compose`, rounding "down"); None when no phase has a full epoch.

    Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Scalable DP-SGD: Shuffling vs. Poisson
    Subsampling" (NeurIPS 2024, arXiv 2411.04205, Section 3) bound shuffled DP-SGD from below by the
    hockey-stick divergence of the composed laws of the epochs' maxima. Here: in each full epoch the binned
    maximum B (the cell of M among the edges) is a post-processing of that epoch's output, and under either
    dataset the epochs are independent (a fresh permutation or allocation each), so the E-fold product of the
    binned one-epoch pair is a post-processing of the run's output and its hockey-stick divergence (1) of
    compose.py, δ(ε) = Σ_o p(o)·(1 − e^{ε − ℓ(o)})_+ over composed outcomes o with loss ℓ = Σ of the epochs'
    ℓ_j = log(p_j/q_j), is a lower bound of the run's δ(ε) (data processing inequality for the hockey-stick
    divergence; Dong, Roth, Su 2022, Lemma 2.9 for trade-off functions). Each cell's masses
    p_j = F_m(τ_{j+1}) − F_m(τ_j) and q_j (F_m of the module docstring, exact) are Arb balls; (1) is
    increasing in every P-mass and every loss, so **rounding down** keeps it a lower bound: the P-mass to
    ⌊2^bits·lower(p_j)⌋, the loss to the grid point below lower(log lower(p_j) − log upper(q_j)) (a cell whose
    p_j is not proven positive is dropped). The composition (exact integer convolution, products rounded
    down, mass cut off dropped: compose.py's lower-bound contract) then only lowers (1) further, and its
    losses are sums of rounded-down losses. The order "reverse" swaps the pair (p_j ↔ q_j): both orders of
    neighbouring datasets bound δ(ε) from below.
    """
    parts, scale = [], arb(2) ** comp.bits
    with ctx.workprec(comp.bits + 128):
        h = to_arb(comp.grid_step)
        for p in phases:
            if p.epochs[0] < 1:
                continue
            s, t = to_arb(p.sigma), p.batches_per_epoch
            m1, m0 = _shifts(p, comp.others)
            if comp.order == "reverse":
                m1, m0 = m0, m1
            taus = [s * to_arb(comp.lowest + j * comp.width) for j in range(comp.edges)]

            def cells(m: Fraction) -> list[arb]:
                cdf = [arb(0)] + [phi(tau / s) ** (t - 1) * phi((tau - to_arb(m)) / s) for tau in taus] + [arb(1)]
                return [b - a for a, b in zip(cdf, cdf[1:])]

            masses: dict[int, int] = {}
            for pj, qj in zip(cells(m1), cells(m0)):
                if not pj.lower() > 0:
                    continue
                loss = (arb(pj.lower()).log() - arb(qj.upper()).log()).lower()
                k = int((arb(loss) / h).lower().floor().unique_fmpz())
                masses[k] = masses.get(k, 0) + int((arb(pj.lower()) * scale).lower().floor().unique_fmpz())
            first = min(masses)
            parts.append((PLD.from_masses([masses.get(k, 0) for k in range(first, max(masses) + 1)], first, 0,
                                          comp.bits, comp.grid_step, "down"), p.epochs[0]))
    if not parts:
        return None
    epochs = [e for _, e in parts]
    return compose(parts, Budget(_CUT, sum(epochs), products_needed(epochs)))


def _composed_delta(phases: tuple[Phase, ...], comp: Composed, epsilon: Fraction) -> Fraction:
    """A proven lower bound of δ(ε): (1) of :func:`composed_pld`'s PLD at ε, its ball's lower end."""
    pld = composed_pld(phases, comp)
    if pld is None:
        return Fraction(0)
    return max(Fraction(0), lower_end(delta_at(pld, epsilon, comp.bits + 64)))


def _composed_epsilon(phases: tuple[Phase, ...], comp: Composed, delta: Fraction) -> Fraction:
    """A proven lower bound of ε(δ): an ε at which :func:`_composed_delta` is proven above δ (0 if none)."""
    pld = composed_pld(phases, comp)
    if pld is None:
        return Fraction(0)
    with ctx.workprec(comp.bits + 64):
        return verified_root(pld, delta, comp.bits + 64, "lower")


def _choose(phases: tuple[Phase, ...], delta: Fraction | None, epsilon: Fraction | None) -> Composed:
    """The composed bound's settings for a query: the order and the others' gradient c that do best at the coarse
    bins and grid :data:`_COARSE` (the same proven computation, cheaper: a heuristic, any choice is a bound),
    then the fine bins :data:`_BIN_WIDTH` and grid :data:`_LOSS_STEP`."""
    bits = _DELTA_BITS if delta is None else bits_for(delta)
    choices = [c for c in _OTHERS if all(c in _others(p) for p in phases)]
    best: tuple[Fraction, str, Fraction] | None = None
    width, step = _COARSE
    for c in choices:
        for order in ("forward", "reverse"):
            comp = Composed(order, c, *_edge_range(phases, c, width, bits), step, bits)
            value = _composed_epsilon(phases, comp, delta) if delta is not None else \
                _composed_delta(phases, comp, epsilon)
            if best is None or value > best[0]:
                best = (value, order, c)
    _, order, c = best
    return Composed(order, c, *_edge_range(phases, c, _BIN_WIDTH, bits), _LOSS_STEP, bits)


@dataclass(frozen=True)
class PerEpochBounds:
    """The proven bracket of a shuffled or balls-in-bins run (module docstring): ``upper`` is the
    no-amplification Gaussian (a :class:`GaussianCurve`); the lower bounds come from :class:`Test` s.

    A frozen value: a bound computed from it never changes it. Without ``given`` the tests are searched at
    each point; :meth:`delta_proof` and :meth:`epsilon_proof` return, beside the bound, the bounds *at* the
    tests, composed bound and random-allocation orders that gave it (``given`` set), which is what a
    certificate records and re-checks."""

    phases: tuple[Phase, ...]
    given: tuple[Test, ...] | None = None  # tests to use instead of searching (a certificate's, re-checked)
    given_composed: Composed | None = None  # with ``given``: the composed bound to use (None: none)
    upper_order: int | None = None  # with ``given``: the random-allocation order recorded (None: no amplification)
    # with ``given`` and ``upper_order``: random allocation's add-direction order recorded (None: the shifted Gaussian)
    upper_add_order: Fraction | None = None

    @cached_property
    def upper(self) -> GaussianCurve:
        return GaussianCurve(_upper_phases(self.phases))

    @cached_property
    def allocation(self) -> AllocationBound | None:
        """Balls-in-bins under zero-out: min with random allocation's bound (rdp_verify.curves.random_allocation)."""
        return AllocationBound(self.phases) if applies(self.phases) else None

    def _upper_end(self, kind: str, x: Fraction) -> tuple[Fraction, int | None, Fraction | None]:
        """The smaller proven upper end of δ(x) (``kind`` "delta") or ε(x): no amplification, or random allocation
        (searched, or at the recorded :attr:`upper_order` and :attr:`upper_add_order` when re-checking ``given``
        tests); with the random-allocation orders that decided it (None, None: no amplification did)."""
        gauss = self.upper.delta_bounds(x)[1] if kind == "delta" else self.upper.epsilon_bounds(x)[1]
        if self.allocation is None or (self.given is not None and self.upper_order is None):
            return gauss, None, None
        add = self.upper_add_order if self.given is not None else SEARCH
        find = self.allocation.delta_orders if kind == "delta" else self.allocation.epsilon_orders
        order, add_order, value = find(x, self.upper_order, add)
        if value < gauss:
            return value, order, add_order
        return gauss, None, None

    @property
    def mu_squared(self) -> Fraction:
        return self.upper.mu_squared

    def _composed_for(self, delta: Fraction | None, epsilon: Fraction | None) -> Composed | None:
        if self.given is not None:
            return self.given_composed
        return _choose(self.phases, delta, epsilon) if any(p.epochs[0] >= 1 for p in self.phases) else None

    def _candidates(self, delta: Fraction | None, epsilon: Fraction | None) -> list[tuple[Phase, Test]]:
        if self.given is not None:
            return [(self.phases[t.phase], t) for t in self.given]
        out = []
        for i, p in enumerate(self.phases):
            for test in _search(p, i, None if delta is None else float(delta),
                                None if epsilon is None else float(epsilon)):
                out.append((p, test))
        return out

    def _proof(self, used: list[Test], composed: Composed | None, order: int | None,
               add_order: Fraction | None) -> PerEpochBounds:
        return replace(self, given=tuple(used), given_composed=composed, upper_order=order, upper_add_order=add_order)

    def delta_proof(self, epsilon: Fraction) -> tuple[Fraction, Fraction, PerEpochBounds]:
        """Proven [δ_lower, δ_upper] at ε: the larger of the composed maxima's δ (:func:`composed_pld`) and the best
        test's P(A) − e^ε·P'(A) (Arb, lower ends), and the Gaussian; with the bounds at what gave them."""
        upper, order, add_order = self._upper_end("delta", epsilon)
        chosen = self._candidates(None, epsilon)
        lower, used = Fraction(0), []
        with ctx.workprec(_PREC):
            x = to_arb(Fraction(epsilon)).exp()
            for p, test in chosen:
                a, b = _masses(p, test)
                value = arb_to_bounded(a - x * b).lower
                if value > lower:
                    lower, used = value, [test]
        composed = self._composed_for(None, epsilon)
        if composed is not None:
            lower = max(lower, _composed_delta(self.phases, composed, epsilon))
        return min(lower, upper), upper, self._proof(used, composed, order, add_order)

    def delta_bounds(self, epsilon: Fraction) -> tuple[Fraction, Fraction]:
        """:meth:`delta_proof`'s bounds alone."""
        return self.delta_proof(epsilon)[:2]

    def attack_points(self, epsilons: Sequence[Fraction]) -> tuple[list[tuple[Fraction, Fraction]], tuple[Test, ...]]:
        """Points (α, β) with f(α) ≤ β proven, f the run's trade-off function, and the tests behind them: each test (the recorded ones, or
        those searched at each ε) is an attack whose region has probability B under one dataset of the pair
        and A under the other, so type-I error B and type-II error 1 − A; α = B rounded up and β = 1 − A
        rounded up keep f(α) ≤ β (f is decreasing)."""
        chosen = list(self._candidates(None, Fraction(0))) if self.given is not None else [
            c for eps in epsilons for c in self._candidates(None, eps)]
        points = []
        with ctx.workprec(_PREC):
            for p, test in chosen:
                a, b = _masses(p, test)
                alpha, beta = arb_to_bounded(b).upper, 1 - arb_to_bounded(a).lower
                if 0 <= alpha <= 1 and 0 <= beta <= 1:
                    points.append((alpha, beta))
        return points, tuple(t for _, t in chosen)

    def epsilon_proof(self, delta: Fraction) -> tuple[Fraction, Fraction, PerEpochBounds]:
        """Proven [ε_lower, ε_upper] at δ: the larger of the composed maxima's ε (:func:`composed_pld`) and the
        best test's log((P(A) − δ)/P'(A)) (Arb, lower ends; 0 if none exceeds δ), and the Gaussian's ε; with the
        bounds at what gave them."""
        upper, order, add_order = self._upper_end("epsilon", delta)
        chosen = self._candidates(delta, None)
        lower, used = Fraction(0), []
        with ctx.workprec(_PREC):
            d = to_arb(Fraction(delta))
            for p, test in chosen:
                a, b = _masses(p, test)
                if not (a - d > 0 and b > 0):
                    continue
                value = arb_to_bounded(((a - d) / b).log()).lower
                if value > lower:
                    lower, used = value, [test]
        composed = self._composed_for(delta, None)
        if composed is not None:
            lower = max(lower, _composed_epsilon(self.phases, composed, delta))
        if lower > upper:
            raise ArithmeticError("the shuffle lower bound exceeds the no-amplification upper bound: a bug")
        return lower, upper, self._proof(used, composed, order, add_order)

    def epsilon_bounds(self, delta: Fraction) -> tuple[Fraction, Fraction]:
        """:meth:`epsilon_proof`'s bounds alone."""
        return self.epsilon_proof(delta)[:2]
