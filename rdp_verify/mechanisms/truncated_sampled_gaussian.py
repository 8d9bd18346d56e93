"""The Gaussian mechanism on a truncated Poisson sample: dp_accounting's ``TruncatedSubsampledGaussianDpEvent``.

**Mechanism** (dp_accounting 0.6, ``dp_event.py``; Ganesh 2025, arXiv 2508.15089, "Tighter privacy analysis for
truncated Poisson sampling"): each record of the dataset is sampled independently with probability q; when more
than B (``truncated_batch_size``) records are sampled, a uniformly random subset of B of them is kept; the output
is the sum of the kept records' gradients (ℓ2 norm at most 1) plus N(0, σ²I). ``dataset_size`` N counts the records
of the dataset that holds the record in question: under REPLACE_ONE and REPLACE_SPECIAL both neighbours have N
records, under ADD_OR_REMOVE_ONE the larger neighbour has N and the other N − 1 (dp_accounting's reading:
``from_truncated_subsampled_gaussian_mechanism`` draws the other records from Bin(N − 1, q)). M = N − 1 is the
number of other records and K ~ Bin(M, q) how many of them are sampled.

**The dominating pair.** With p = P(K ≤ B − 1), t = P(K ≥ B) = 1 − p and

    γ = B·P(Bin(N, q) ≥ B + 1)/(t·N) = q·E[B/(K + 1) | K ≥ B],

write SG(γ, s) for the pair ((1 − γ)·N(0, σ²) + γ·N(−s, σ²), N(0, σ²)) (the remove pair of the
Poisson-subsampled Gaussian with shift s; the add pair is the swap), R(q) for
((1 − q)·N(0, σ²) + q·N(−1, σ²), (1 − q)·N(0, σ²) + q·N(1, σ²)) (the replace-one pair of
:mod:`rdp_verify.curves.replace_one`), and S*(γ) for the symmetrised SG(γ, 2): the symmetric pair whose curve is
H*(x) = H_x(SG(γ, 2)) for x ≥ 1 and H_x of the swapped pair for x < 1 (the fixed-size replace-one curve of
:mod:`rdp_verify.curves.replace_one`). **Theorem** (proven below; the same decomposition and the same constants t,
γ as dp_accounting 0.6's construction and the paper's Section 3, whose text we could not consult: every step is
proven here, none is taken from it). For every pair of neighbouring datasets, D with the record r and D′ without
it (or with r′ in its place) and every x ≥ 0, in both orders,

    H_x(M(D) ‖ M(D′)) ≤ p·H_x(A₁) + t·H_x(A₂),

with (A₁, A₂) = (SG(q, 1), SG(γ, 2)) under ADD_OR_REMOVE_ONE (the swapped pairs for the swapped order),
(SG(q, 1), S*(γ)) under REPLACE_SPECIAL and (R(q), S*(γ)) under REPLACE_ONE. The right side is the hockey-stick
divergence of the disjoint union p·A₁ ⊕ t·A₂, whose privacy-loss distribution is the mixture p·PLD(A₁) + t·PLD(A₂)
(dp_accounting's ``compute_mixture``): a dominating pair of one use, hence of any adaptive composition (Zhu, Dong,
Wang 2022, Theorem 10).

*Proof.* (1) Coupling. r's coin is independent of the others'. If r is not sampled, both datasets give the same
law. If it is and K ≤ B − 1, nothing is truncated: the outputs are s + g(r) + Z and s + g(r′) + Z for the same sum
s of the sampled others (g(r′) = 0 for the special record, and no r′ under add/remove). If it is and K ≥ B, K + 1
records compete for B places: r is kept with probability B/(K + 1), and given K the kept others are a uniformly
random (B − 1)-subset T of the M others when r is kept, and a uniformly random B-subset, T ∪ {y} with y uniform
outside T, when it is not -- the batch of D′ in both cases (r′ takes r's coin under REPLACE). Neither law depends
on K, so over K ≥ B the record is kept with probability E[B/(K + 1) | K ≥ B] = γ/q, by
q·C(M, k)q^k(1 − q)^{M−k}/(k + 1) = C(N, k + 1)q^{k+1}(1 − q)^{M−k}/N summed over k ≥ B. Hence, Z ~ N(0, σ²I),

    M(D) = p·E_S[(1 − q)·N(s) + q·N(s + g(r))] + t·E_{T,y}[(1 − γ)·N(s_T + g(y)) + γ·N(s_T + g(r))],

and M(D′) the same with r′ in place of r (under add/remove: N(s) and N(s_T + g(y))): the same weights p, t and
the same mixing laws of S (given K ≤ B − 1) and (T, y) on both sides. (2) H_x is jointly convex ((a, b) ↦
(a − xb)_+ is sublinear), so H_x(M(D) ‖ M(D′)) ≤ p·sup H_x(first brackets) + t·sup H_x(second brackets).
(3) A first bracket is a translate of ((1 − q)N(0) + qN(g), N(0)), ‖g‖ ≤ 1 (REPLACE_SPECIAL too: the special
record adds 0), a post-processing of SG(q, 1) in both orders: z ↦ −g·z + W, W ~ N(0, σ²(I − ggᵀ)) independent,
takes N(0, σ²) to N(0, σ²I) and N(−1, σ²) to N(g, σ²I), both laws of the pair at once. Under REPLACE_ONE it is
((1 − q)N(0) + qN(g), (1 − q)N(0) + qN(g′)), ‖g‖, ‖g′‖ ≤ 1, dominated by R(q): Lebeda, Regehr, Kamath, Steinke
2024 (arXiv 2405.20769), the statement :mod:`rdp_verify.curves.replace_one` relies on for replace-one Poisson steps
and dp_accounting uses for REPLACE_ONE -- the one cited, not re-proven, step. (4) A second bracket under
add/remove is a translate of ((1 − γ)N(0) + γN(g(r) − g(y)), N(0)), shift of norm ≤ 2: SG(γ, 2) in both orders,
as in (3). Under REPLACE_ONE and REPLACE_SPECIAL it is ((1 − γ)R + γP₁, (1 − γ)R + γQ₁) with R = N(g(y)),
P₁ = N(g(r)), Q₁ = N(g(r′)), all three means in the unit ball around s_T: the pair of one fixed-size replace-one
step, which advanced joint convexity (Balle, Barthe, Gaboardi 2018, Theorem 2) and joint convexity bound by H* in
both orders (:mod:`rdp_verify.curves.replace_one`, proven there). ∎

**dp_accounting's constants** are these (t = ``binom.sf(B − 1, N − 1, q)``, γ = ``binom.sf(B, N, q)·B/(t·N)``):
nothing to correct once N is read as the size of the dataset holding the record. Its second component is
``from_gaussian_mechanism(σ/2, sampling_prob=γ, REPLACE_ONE)``, i.e. ((1 − γ)N(0) + γN(−2), (1 − γ)N(0) + γN(2))
in units of σ: one pair for every relation, its two mixtures' moving means 4 apart where a displaced record moves
the sum by at most 2 -- the "(slightly loose)" of its comment, valid through Lebeda et al.'s antipodal statement at
radius 2 (not needed here). It is wider than SG(γ, 2) and S*(γ): dp_accounting's ε is found above our proven upper
end where the truncation term matters (tests/mechanisms/test_truncated_sampled_gaussian.py).

**The dominated pair** (the lower end) is an actual pair of neighbouring datasets: every other record's gradient
0, g(r) = −e₁ (g(r′) = +e₁ under REPLACE_ONE; the special record 0). The output is g(r)·[r kept] + Z and r is kept
with probability

    π = q·p + B·P(Bin(N, q) ≥ B + 1)/N = E[min(Bin(N, q), B)]/N   (by symmetry among the N records),

so the pair is SG(π, 1) (both orders) or R(π) under REPLACE_ONE, exactly: the run's curve is at least the
composition of this pair (the same datasets at every use).

**Exact numbers.** p, t and P(Bin(N, q) ≥ B + 1) are finite sums with q = a/b rational:
b^n·P(Bin(n, q) ≤ k − 1) = (b − a)^{n−k+1}·Σ_{j<k} C(n, j)a^j(b − a)^{k−1−j}, summed in integers (gmpy2), Horner in
b − a, over the shorter side (the upper tail likewise); n ≤ :data:`MAX_DATASET` and the work bounded by
:data:`MAX_TAIL_WORK` (refused in one line beyond).

**Rounding directions.** The upper pair's δ grows with each weight (a PLD's δ has non-negative coefficients in its
masses: :mod:`rdp_verify.pld.compose`) and with γ (SG(γ′, s) for γ′ < γ is the mixture
(1 − γ′/γ)·(Q, Q) + (γ′/γ)·SG(γ, s), on both sides, and H_x(Q ‖ Q) = (1 − x)_+ is the least any pair has, so joint
convexity gives H_x(SG(γ′, s)) ≤ H_x(SG(γ, s)) in both orders, hence for S* too); the lower pair's δ grows with π the
same way (for R(π) too). So p, t and γ are rounded up and π down, to dyadic rationals of ``bits`` + 64 bits (kept
exact when their denominators are that short), never through floats. Each pair is then discretised as a run's SGM
steps are (:func:`rdp_verify.curves.discretize.discretize`): the components' connect-the-dots dominating pairs on
the lattice h·ℤ (the fixed-size pair's symmetrised curve for S*), their masses rounded up and mixed in integers with
the weights (every mass rounded up again), and the realised pair's lowered-chord dominated pair, masses rounded
down. Both are second order in the grid step h.

**Error.** The two ends bracket different pairs: the gap is what the proof gives away (the batch's truncation made
visible, a displaced record counted as a shift of 2) and what the lower instance leaves out (the displacement),
large when truncation is frequent (t near 1), small when it is rare; it vanishes with t (t = 0 is the
Poisson-subsampled Gaussian: both pairs are SG(q, 1)). The grid adds O(h²). A run with such a leaf stops refining
once a finer grid no longer narrows its bracket (``structural``). :meth:`TruncatedSampledGaussian.hockey_stick`
encloses the exact δ of one use between the two pairs' exact δ, from this module's own pairs in Arb
(Neyman–Pearson per component; S*: the remove curve of SG(γ, 2) for ε ≥ 0, the add curve for ε < 0).

**Events.** ``TruncatedSubsampledGaussianDpEvent(N, q, B, σ)`` (:mod:`rdp_verify.privacy_curve.table`), under
every relation, as dp_accounting 0.6's PLD accountant (``pld_privacy_accountant.py``, which passes the relation to
the first component only); when B ≥ N nothing can be truncated and the table sends it to the Poisson-sampled
Gaussian's phase, q = 0 releases nothing and σ = 0 nothing private.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import gmpy2
import mpmath
from flint import arb, ctx, fmpz, fmpz_poly

from ..curves.discretize import StepPLD, grid_range, loss_scale
from ..curves.discretize import discretize as step_discretize
from ..foundations.inputs import InputError
from ..foundations.normal import phi
from ..foundations.results import to_arb
from ..pld.compose import PLD, _rescale, trim
from ..pld.grid import Grid
from ..pld.rounding import Cut, MonotonePair, PoissonSampled, ball_cut, hockey_stick
from .base import Mechanism, check_direction, check_grid, check_positive, check_probability, check_whole
from .gaussian import GaussianPair

__all__ = ["TruncatedSampledGaussian", "ReplacePair", "SymmetrisedPair", "binomial_tail", "tail_work", "NEIGHBOURS",
           "MAX_DATASET", "MAX_TAIL_WORK", "PROOF", "CROSS_CHECK_METHOD"]

NEIGHBOURS = ("add-remove", "replace-one", "replace-special")
MAX_DATASET = 10**6  # records: the exact binomial tails' integers have about N·log2(b) bits
MAX_TAIL_WORK = 10**11  # (shorter side of a tail)² · log2(b): about 10 s of integer arithmetic
GUARD = 64  # bits beyond the fixed point's of every rounded weight and rate

PROOF = ("truncated Poisson sampling (TruncatedSubsampledGaussianDpEvent): one use is dominated by the mixture "
         "p*A1 + t*A2, p = P(Bin(N-1, q) <= B-1), t = 1 - p, gamma = B*P(Bin(N, q) >= B+1)/(t*N) (exact binomial "
         "tails; the weights and gamma rounded up), A1 the Poisson-subsampled Gaussian SG(q, 1) (REPLACE_ONE: the "
         "replace-one pair, Lebeda et al. 2024), A2 SG(gamma, 2) (ADD_OR_REMOVE_ONE) or its symmetrisation "
         "(REPLACE_ONE, REPLACE_SPECIAL: advanced joint convexity, Balle, Barthe, Gaboardi 2018, Theorem 2), proven by "
         "coupling and joint convexity in rdp_verify.mechanisms.truncated_sampled_gaussian (dp_accounting 0.6's "
         "decomposition, arXiv 2508.15089, with a tighter second pair); the lower end is the realised pair SG(pi, 1) "
         "(REPLACE_ONE: the replace-one pair at pi), pi = E[min(Bin(N, q), B)]/N rounded down; both discretised as "
         "the SGM steps (connect-the-dots upper pairs mixed with masses rounded up, lowered-chord lower pairs)")
CROSS_CHECK_METHOD = ("hockey-stick divergence enclosed between the dominated and the dominating pair's exact ones "
                      "(Neyman-Pearson regions, Arb)")


# -- exact binomial tails -------------------------------------------------------------------------------------------


def _shorter(n: int, k: int) -> int:
    return min(k, n - k + 1)


def tail_work(n: int, q: Fraction, k: int) -> int:
    """The cost of :func:`binomial_tail` in bit operations, roughly: (terms)²·log2(b)."""
    terms = max(0, _shorter(n, k)) if 0 < k <= n else 0
    return terms * terms * max(1, Fraction(q).denominator.bit_length())


def binomial_tail(n: int, q: Fraction, k: int) -> Any:
    """P(Bin(n, q) ≥ k) exactly, a ``gmpy2.mpq`` (module docstring: the shorter side, Horner in b − a)."""
    q = Fraction(q)
    if k <= 0:
        return gmpy2.mpq(1)
    if k > n:
        return gmpy2.mpq(0)
    a, b = gmpy2.mpz(q.numerator), gmpy2.mpz(q.denominator)
    c = b - a
    den = b ** n
    if k <= n - k + 1:  # the lower side j < k: Σ C(n, j) a^j c^{n−j} = c^{n−k+1} Σ C(n, j) a^j c^{k−1−j}
        s, term = gmpy2.mpz(0), gmpy2.mpz(1)  # term = C(n, j) a^j
        for j in range(k):
            s = s * c + term
            term = term * (n - j) * a // (j + 1)
        return gmpy2.mpq(den - c ** (n - k + 1) * s, den)
    # the upper side j ≥ k: Σ C(n, j) a^j c^{n−j} = a^k Σ_{i=0}^{n−k} C(n, n−i) a^{n−k−i} c^i (i = n − j), Horner in a
    s, term = gmpy2.mpz(0), gmpy2.mpz(1)  # term = C(n, i) c^i
    for i in range(n - k + 1):
        s = s * a + term
        term = term * (n - i) * c // (i + 1)
    return gmpy2.mpq(a ** k * s, den)


@lru_cache(maxsize=32)
def _constants(n: int, q: Fraction, b: int) -> tuple[Any, Any, Any, Any]:
    """(p, t, γ, π) exactly (``gmpy2.mpq``; γ = 0 when t = 0): module docstring."""
    t = binomial_tail(n - 1, q, b)
    above = binomial_tail(n, q, b + 1)  # P(Bin(N, q) ≥ B + 1)
    p = 1 - t
    gamma = above * b / (t * n) if t else gmpy2.mpq(0)
    pi = gmpy2.mpq(q.numerator, q.denominator) * p + above * b / n
    return p, t, gamma, pi


def _rounded(x: Any, bits: int, direction: str) -> Fraction:
    """x ≥ 0 (an ``mpq``) as a Fraction: exact when its denominator has at most ``bits`` bits, else the dyadic
    rational with ``bits`` bits after the point rounded up or down."""
    num, den = int(x.numerator), int(x.denominator)
    if den.bit_length() <= bits:
        return Fraction(num, den)
    scaled = num << bits
    k = -(-scaled // den) if direction == "up" else scaled // den
    return Fraction(k, 1 << bits)


# -- the pairs ------------------------------------------------------------------------------------------------------


class ReplacePair(MonotonePair):
    """P = (1 − q)·N(0, σ²) + q·N(−s, σ²), Q = (1 − q)·N(0, σ²) + q·N(s, σ²): with u = e^{−sx/σ²} and
    c = e^{−s²/(2σ²)}, Λ = dP/dQ = (a + qcu)/(a + qc/u) (a = 1 − q), increasing in u, so the loss is decreasing in x
    and Λ > X ⟺ x < −(σ²/s)·log u_X, u_X the positive root of qcu² + a(1 − X)u − Xqc = 0 (the closed form of
    :mod:`rdp_verify.curves.replace_one`, cancellation-free on both sides of X = 1), an Arb ball. Symmetric: the
    mirror x ↦ −x swaps P and Q."""

    continuous_loss = True

    def __init__(self, sigma: Fraction, sensitivity: Fraction, q: Fraction):
        self.sigma, self.s, self.q = Fraction(sigma), Fraction(sensitivity), Fraction(q)

    def _cdf(self, x: arb, sign: int) -> arb:
        q, sigma = to_arb(self.q), to_arb(self.sigma)
        return (1 - q) * phi(x / sigma) + q * phi((x + sign * to_arb(self.s)) / sigma)

    def p_cdf(self, x: arb) -> arb:
        return self._cdf(x, 1)

    def q_cdf(self, x: arb) -> arb:
        return self._cdf(x, -1)

    def cut(self, level: Fraction, strict: bool) -> Cut:
        sigma, s, q = to_arb(self.sigma), to_arb(self.s), to_arb(self.q)
        a, big_x = 1 - q, to_arb(level).exp()
        qc = q * (-(s * s) / (2 * sigma * sigma)).exp()
        root = (a * a * (big_x - 1) ** 2 + 4 * big_x * qc * qc).sqrt()
        u = (a * (big_x - 1) + root) / (2 * qc) if level >= 0 else 2 * big_x * qc / (a * (1 - big_x) + root)
        return ball_cut(-(sigma * sigma / s) * u.log())


class SymmetrisedPair:
    """S*: the symmetric pair whose curve is H*(x) = H_x(P‖Q) for x ≥ 1 and H_x(Q‖P) for x < 1, for an inner pair
    (P, Q) (SG(γ, 2): module docstring), known here by its δ only (its discrete pairs are those of
    :mod:`rdp_verify.curves.replace_one`'s symmetrised curve)."""

    def __init__(self, inner: MonotonePair):
        self.inner = inner

    def delta(self, epsilon: Fraction) -> arb:
        """A ball containing H*(e^ε), either direction (call under a working precision)."""
        return hockey_stick(self.inner, "remove" if epsilon >= 0 else "add", epsilon)


# -- the mechanism ---------------------------------------------------------------------------------------------


def _upper_grid(pair: str, q: Fraction, sigma: Fraction, h: Fraction, tail: Fraction) -> Grid:
    """The SGM steps' grid of a component (:func:`rdp_verify.curves.discretize.grid_range`) on the lattice h·ℤ, so
    that components can be mixed: an anchored grid (σ ≪ 1) is replaced by the lattice from the last point below
    1 − q (where the remove curve is linear: connect-the-dots exact, no mass at −∞) to the first above its top.
    Connect-the-dots dominates on any grid straddling x = 1; the range only decides the tail sent to +∞."""
    g = grid_range(q, sigma, h, tail, pair)
    if g.anchor == 1:
        return g
    with mpmath.workdps(30):  # a deterministic heuristic, as grid_range's
        hm = mpmath.mpf(h.numerator) / h.denominator
        top = int(mpmath.ceil(g.k_hi + mpmath.log(mpmath.mpf(g.anchor.numerator) / g.anchor.denominator) / hm))
        bottom = int(mpmath.floor(mpmath.log1p(-mpmath.mpf(q.numerator) / q.denominator) / hm)) - 1
    return Grid(h, min(bottom, -1), max(top, 1))


def _step_pld(step: StepPLD, direction: str, bound: str) -> PLD:
    """One direction and bound of an SGM step's discrete pairs as a PLD on log(anchor) + h·ℤ (the remove masses at
    k_lo…k_hi, the add masses mirrored: as the run's steps, :mod:`rdp_verify.curves.accountant`)."""
    g, rounding = step.grid, "up" if bound == "upper" else "down"
    shift = ((g.anchor, 1),) if g.anchor != 1 else ()
    if direction == "remove":
        masses = step.remove_upper if bound == "upper" else step.remove_lower
        return PLD.from_masses(masses, g.k_lo, step.remove_upper_inf if bound == "upper" else 0, step.bits, g.h,
                               rounding, shift)
    masses = step.add_upper if bound == "upper" else step.add_lower
    return PLD.from_masses(list(reversed(masses)), -g.k_hi, step.add_upper_inf if bound == "upper" else 0,
                           step.bits, g.h, rounding, tuple((a, -c) for a, c in shift))


def _mixed(parts: list[tuple[Fraction, PLD]], bits: int) -> PLD:
    """Σ w_i·PLD_i for upper PLDs on one lattice h·ℤ, each weight dyadic with at most ``bits`` + GUARD bits after the
    point or with a short denominator: Σ_i ⌈w_i·2^W⌉·M_i in integers, every mass then divided by 2^W rounding up
    (W = bits + GUARD); masses and weights only go up."""
    w_bits = bits + GUARD
    low = min(p.offset for _, p in parts)
    total, inf = fmpz_poly([]), 0
    for w, p in parts:
        scaled = w * (1 << w_bits)
        whole = -(-scaled.numerator // scaled.denominator)  # ⌈w·2^W⌉ ≥ w·2^W
        total += p.coeffs.left_shift(p.offset - low) * fmpz(whole)
        inf += whole * p.inf
    first = parts[0][1]
    return trim(PLD(_rescale(total, w_bits, "up"), low, -(-inf >> w_bits), first.bits, first.h, "up"))


@lru_cache(maxsize=64)
def _spread(pair: str, q: Fraction, sigma: Fraction) -> float:
    """The standard deviation of a component's loss (:func:`rdp_verify.curves.discretize.loss_scale`, a heuristic)."""
    return loss_scale(q, sigma, Fraction(1, 10**15), pair)[1]


@dataclass(frozen=True)
class TruncatedSampledGaussian(Mechanism):
    """Truncated Poisson sampling (rate ``q``, at most ``batch`` records kept of ``dataset_size``) of the Gaussian
    mechanism with noise multiplier ``sigma``, under ``neighbours`` (:data:`NEIGHBOURS`): module docstring."""

    dataset_size: int
    q: Fraction
    batch: int
    sigma: Fraction
    neighbours: str = "add-remove"
    symmetric: ClassVar[bool] = False
    cross_check_method: ClassVar[str] = CROSS_CHECK_METHOD  # what hockey_stick encloses (the certificate names it)
    proof: ClassVar[tuple[str, str]] = ("truncated sampling", PROOF)
    no_rdp: ClassVar[str] = ("TruncatedSubsampledGaussianDpEvent has no proven Renyi DP here (dp_accounting's RDP "
                             "accountant refuses it too; rdp-verify dp --event brackets its privacy curve)")
    order: ClassVar[int] = 2  # connect-the-dots and lowered chords: the width shrinks like h² (curves.accountant.Leaf)

    def __post_init__(self) -> None:
        n = check_whole(self.dataset_size, "dataset_size", 1)
        b = check_whole(self.batch, "truncated_batch_size", 1)
        q = check_probability(self.q, "sampling_probability", closed=True)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "sigma", check_positive(self.sigma, "noise_multiplier"))
        if self.neighbours not in NEIGHBOURS:
            raise InputError(f"neighbours={self.neighbours!r} must be one of {', '.join(NEIGHBOURS)}")
        if n > MAX_DATASET:
            raise InputError(f"dataset_size={n} is beyond the {MAX_DATASET} records whose binomial tails are computed "
                             "exactly here")
        work = max(tail_work(n - 1, q, b), tail_work(n, q, b + 1))
        if work > MAX_TAIL_WORK:
            raise InputError(f"dataset_size={n}, truncated_batch_size={b}, sampling_probability={q}: the exact "
                             f"binomial tails would take about {work:.1e} bit operations, beyond the {MAX_TAIL_WORK:.0e} "
                             "done here (a shorter denominator of the sampling probability helps)")

    # the exact constants

    def constants(self) -> tuple[Any, Any, Any, Any]:
        """(p, t, γ, π) exactly, as ``gmpy2.mpq`` (module docstring)."""
        return _constants(self.dataset_size, self.q, self.batch)

    def truncation_probability(self) -> Fraction:
        """t = P(Bin(N − 1, q) ≥ B) exactly (its denominator may be long)."""
        t = self.constants()[1]
        return Fraction(int(t.numerator), int(t.denominator))

    @property
    def structural(self) -> bool:
        """Whether the two ends bracket different pairs (t > 0): their gap is no grid's, so the run's refinement
        stops once a finer grid no longer narrows the bracket (:func:`rdp_verify.curves.accountant.bracket`)."""
        return bool(self.constants()[1])

    # the components: as the SGM steps' discrete pairs (curves.discretize) and as exact pairs (the cross-check)

    def components(self, bits: int) -> list[tuple[Fraction, str, Fraction, Fraction]]:
        """[(weight rounded up, SGM pair name, rate, σ)] of the dominating mixture, γ rounded up (``bits`` + GUARD
        bits): ``sgm`` (q, σ) is SG(q, 1), ``sgm`` (γ, σ/2) is SG(γ, 2) (the same pair, rescaled), ``replace-one``
        is R(q), ``fixed-replace-one`` (γ, σ) has S*(γ) for its upper pair (:mod:`rdp_verify.curves.discretize`)."""
        p, t, gamma, _ = self.constants()
        r = bits + GUARD
        out = []
        if p:
            out.append((_rounded(p, r, "up"), "replace-one" if self.neighbours == "replace-one" else "sgm", self.q,
                        self.sigma))
        if t:
            g = _rounded(gamma, r, "up")
            out.append((_rounded(t, r, "up"), "sgm", g, self.sigma / 2) if self.neighbours == "add-remove"
                       else (_rounded(t, r, "up"), "fixed-replace-one", g, self.sigma))
        return out

    def lower_rate(self, bits: int) -> Fraction:
        """π rounded down (``bits`` + GUARD bits): the realised pair is SG(π, 1), or R(π) under REPLACE_ONE."""
        return _rounded(self.constants()[3], bits + GUARD, "down")

    def _lower_name(self) -> str:
        return "replace-one" if self.neighbours == "replace-one" else "sgm"

    def exact_pairs(self, bits: int) -> tuple[list[tuple[Fraction, MonotonePair]], MonotonePair]:
        """The same pairs as :meth:`components` and :meth:`lower_rate`, as this module's own Arb pairs (their exact δ
        by Neyman–Pearson, independent of :mod:`rdp_verify.curves`): ([(weight, pair)], realised pair)."""
        uppers: list[tuple[Fraction, MonotonePair]] = []
        for w, name, rate, sigma in self.components(bits):
            if name == "replace-one":
                uppers.append((w, ReplacePair(sigma, Fraction(1), rate)))
            elif name == "sgm":  # SG(rate, 1) at σ, or SG(rate, 1) at σ/2 = SG(rate, 2) at σ
                shift = Fraction(1) if sigma == self.sigma else Fraction(2)
                uppers.append((w, PoissonSampled(GaussianPair(self.sigma, shift), rate)))
            else:
                uppers.append((w, SymmetrisedPair(PoissonSampled(GaussianPair(sigma, Fraction(2)), rate))))
        pi = self.lower_rate(bits)
        lower = ReplacePair(self.sigma, Fraction(1), pi) if self.neighbours == "replace-one" else \
            PoissonSampled(GaussianPair(self.sigma, Fraction(1)), pi)
        return uppers, lower

    def pair(self) -> MonotonePair:
        """The realised pair of neighbouring datasets behind the lower end (module docstring), π rounded down to 192
        bits: the mechanism's own pair for those datasets, not a dominating one."""
        return self.exact_pairs(128)[1]

    def is_symmetric(self) -> bool:
        return self.neighbours == "replace-one"  # R(q), S*(γ) and R(π) are all symmetric

    def loss_scale(self) -> Fraction:
        """√(Σ w_i·s_i²) over the components, s_i the standard deviation of a component's loss
        (:func:`rdp_verify.curves.discretize.loss_scale`, a heuristic in mpmath), as a rational of 20 bits."""
        var = sum(float(w) * _spread(name, rate, sigma) ** 2 for w, name, rate, sigma in self.components(0))
        return Fraction(max(var, 1e-300) ** 0.5).limit_denominator(1 << 20) or Fraction(1, 1 << 20)

    def plds(self, h: Fraction, bits: int, tail: Fraction) -> dict[tuple[str, str], PLD]:
        """Both directions' (upper, lower) PLDs from one discretisation of each pair (:meth:`discretized`)."""
        h, bits, tail = check_grid(h, bits, tail)
        steps = self._steps(h, bits, tail)
        out: dict[tuple[str, str], PLD] = {}
        for direction in ("remove", "add"):
            if direction == "add" and self.is_symmetric():
                out["add", "upper"], out["add", "lower"] = out["remove", "upper"], out["remove", "lower"]
            else:
                out[direction, "upper"], out[direction, "lower"] = self._direction(steps, direction, bits)
        return out

    def discretized(self, direction: str, h: Fraction, bits: int, tail: Fraction) -> tuple[PLD, PLD]:
        """(upper, lower) of one direction on h·ℤ: the components' connect-the-dots PLDs mixed with their weights
        (:func:`_mixed`), the realised pair's lowered chords (:func:`rdp_verify.curves.discretize.discretize`, as a
        run's SGM steps, budget 10·tail)."""
        return self._direction(self._steps(h, bits, tail), check_direction(direction), bits)

    @staticmethod
    def _direction(steps: tuple[list[tuple[Fraction, StepPLD]], StepPLD], direction: str,
                   bits: int) -> tuple[PLD, PLD]:
        uppers = [(w, _step_pld(step, direction, "upper")) for w, step in steps[0]]
        return _mixed(uppers, bits), _step_pld(steps[1], direction, "lower")

    def _steps(self, h: Fraction, bits: int, tail: Fraction) -> tuple[list[tuple[Fraction, StepPLD]], StepPLD]:
        """The components' and the realised pair's discretisations (both directions at once)."""
        budget = 10 * tail
        uppers = [(w, step_discretize(rate, sigma, _upper_grid(name, rate, sigma, h, tail), bits, budget=budget,
                                      pair=name))
                  for w, name, rate, sigma in self.components(bits)]
        name, pi = self._lower_name(), self.lower_rate(bits)
        lower = step_discretize(pi, self.sigma, grid_range(pi, self.sigma, h, tail, name), bits, budget=budget,
                                pair=name)
        return uppers, lower

    def hockey_stick(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing the direction's exact δ(ε) of one use: from the realised pair's exact δ (below) to the
        dominating mixture's (above), each by Neyman–Pearson in Arb on this module's pairs (module docstring)."""
        check_direction(direction)
        epsilon = Fraction(epsilon)
        uppers, lower = self.exact_pairs(prec)
        with ctx.workprec(prec):
            top = arb(0)
            for w, pair in uppers:
                part = pair.delta(epsilon) if isinstance(pair, SymmetrisedPair) else \
                    hockey_stick(pair, direction, epsilon)
                top += to_arb(w) * part
            bottom = hockey_stick(lower, direction, epsilon)
            return arb(bottom.lower()).union(arb(top.upper()))

