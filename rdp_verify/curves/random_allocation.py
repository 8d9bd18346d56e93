"""A proven upper bound for balls-in-bins (random allocation) through Rényi DP: amplification the
no-amplification bound of :mod:`rdp_verify.curves.per_epoch` leaves out.

**The pair.** One epoch of a balls-in-bins phase (Chua et al. 2025; Feldman and Shenfeld, "Privacy
Amplification by Random Allocation", 2025, arXiv 2502.08202: random 1-out-of-t allocation) puts the
differing record in one uniformly random step j of the epoch's t = N/b. Under add/remove neighbours
read as zero-out (the record replaced by one with gradient 0; :mod:`~rdp_verify.curves.per_epoch`),
condition on the other records' allocation (the same in both datasets, independent of the data) and
write z_s = Y_s − f_s(Y_{<s}) for step s's output minus everything but the record's contribution
g_s = g_s(Y_{<s}), ‖g_s‖ ≤ 1 (adaptive). Without the record z_s ~ N(0, σ²I) independently (law Q);
with it (law P) the likelihood ratio is

    P/Q = (1/t)·Σ_j L_j,   L_j = exp((⟨g_j, z_j⟩ − ‖g_j‖²/2)/σ²).

**Remove direction, integer α ≥ 2** (the closed form of Feldman and Shenfeld 2025, Section 6: their
RDP analysis of random allocation with Gaussian noise, the sum over partitions of α that their package
``random-allocation`` 1.0.5 evaluates, ``direct.allocation_RDP_remove``, citing "Corollary 6.2"; the
proof here is self-contained). By the multinomial theorem,

    E_Q[(P/Q)^α] = t^{−α}·Σ_{k_1+…+k_t=α} α!/(k_1!…k_t!)·E_Q[Π_j L_j^{k_j}],

and conditioning on the past from the last step backwards, E[L_j^k | Y_{<j}] = e^{k(k−1)‖g_j‖²/(2σ²)}
≤ e^{k(k−1)/(2σ²)} (k(k − 1) ≥ 0 for integers), with equality for g_j = e_j: the non-adaptive pair
P* = (1/t)·Σ_j N(e_j, σ²I_t), Q* = N(0, σ²I_t) is the worst case, and

    M_α = E_{Q*}[(P*/Q*)^α] = t^{−α}·α!·[x^α] C(x)^t,   C(x) = Σ_{k=0}^{α} e^{k(k−1)/(2σ²)}·x^k/k!,

which grouped by the multiset {k_j} is the sum over partitions λ of α into at most t parts,
t^{−α}·Σ_λ (t)_{ℓ(λ)}/Π_v m_v(λ)!·α!/Π_i λ_i!·e^{Σ_i λ_i(λ_i−1)/(2σ²)} (the form of Feldman and
Shenfeld). D_α(P‖Q) ≤ log(M_α)/(α − 1). Mixing over the others' allocation does not increase
E_Q[(P/Q)^α] (joint convexity of this f-divergence), so the bound holds for the real epoch.

**Add direction** (proven here; the argument behind the add-direction bound of Feldman and Shenfeld's
package, ``direct.allocation_epsilon_direct_add``: a Gaussian at noise σ√t plus (1 − 1/t)/(2σ²)). By the
arithmetic-geometric mean inequality P/Q ≥ Π_j L_j^{1/t}, and Π_j L_j^{1/t} = (G/Q)·e^{−(1/t − 1/t²)Σ_j‖g_j‖²/(2σ²)}
≥ (G/Q)·e^{−c}, c = (1 − 1/t)/(2σ²), where G is the adaptive Gaussian process with means g_j/t
(Σ_j ‖g_j/t‖² ≤ 1/t). So the add-direction loss log(Q/P) is at most log(Q/G) + c pointwise, in every epoch;
over the run H_{e^ε}(Q_run‖P_run) ≤ H_{e^{ε−C}}(Q_run‖G_run), C = Σ_i E_i·c_i, and G_run is dominated by the
Gaussian mechanism with μ_add² = Σ_i E_i/(t_iσ_i²) (Dong, Roth, Su 2022, Corollary 3.3): δ_add(ε) ≤
δ_{μ_add}(ε − C), ε_add(δ) ≤ C + ε_{μ_add}(δ), the closed form of :mod:`rdp_verify.curves.gaussian`. (A
shuffled or replace-one phase enters both directions unamplified: μ² += E_iΔ²/σ_i², RDP += E_i·αΔ²/(2σ_i²).)
The shift C grows with the epochs: this direction, not the remove one, decides from about 4 epochs at
t = 100, σ = 0.6, δ = 1e-5.

**The run.** A phase of E_i epochs begun (⌈T_i/t_i⌉; a partial epoch is a post-processing of a full
one) is (α, E_i·D_α)-RDP in the remove direction (Mironov 2017, Proposition 1: adaptive composition adds
for each ordered pair of datasets), R(α) → (ε, δ) by the project's proven conversion
(:func:`rdp_verify.accounting.rdp.epsilon_from_rdp` and :func:`~rdp_verify.accounting.rdp.delta_from_rdp`,
Balle, Barthe, Gaboardi, Hsu, Sato 2020, Theorem 21) at the integer orders of :data:`ORDERS` (any order
gives a proven bound; the best is kept and a certificate records it). The run's bound is the larger of
the two directions (each ordered pair of neighbouring datasets is one of them).

**Rounding.** M_α is enclosed in Arb: C's coefficients are balls, C^t is formed by repeated squaring
of polynomials truncated at degree α (all coefficients positive: no cancellation), the logarithm and
the division by α − 1 are ball operations, and the upper end of every ball is taken (pessimistic for
an upper bound); the add direction's closed form and the conversion round up. Cost: O(α²·log t) ball
multiplications per order (the truncated products), about 0.1 s for all of :data:`ORDERS` at t = 100.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

from flint import arb, arb_poly, ctx

from ..accounting.rdp import delta_from_rdp, epsilon_from_rdp
from ..foundations.results import Bounded, arb_to_bounded, to_arb
from ..foundations.run import Phase
from .gaussian import GaussianCurve

__all__ = ["ORDERS", "CONVERSION", "applies", "remove_moment", "remove_rdp", "run_rdp", "add_shift",
           "add_mu_squared", "AllocationBound"]

ORDERS = tuple(range(2, 65)) + (80, 96, 128, 192, 256)  # the integer orders tried (a certificate records one)
CONVERSION = "balle2020"  # rdp_verify.accounting.rdp: Balle et al. 2020, Theorem 21
PREC = 192


def applies(phases: Sequence[Phase]) -> bool:
    """Some phase allocates balls into bins under add/remove (zero-out) neighbours: the case amplified here."""
    return any(_allocated(p) for p in phases)


def _allocated(p: Phase) -> bool:
    return p.sampler == "balls-in-bins" and p.neighbours == "add-remove"


@lru_cache(maxsize=4096)
def remove_moment(t: int, sigma: Fraction, alpha: int) -> arb:
    """A ball containing M_α = t^{−α}·α!·[x^α] C(x)^t (module docstring), at :data:`PREC` bits."""
    if not (isinstance(alpha, int) and alpha >= 2 and t >= 1):
        raise ValueError("remove_moment needs an integer order alpha >= 2 and t >= 1")
    with ctx.workprec(PREC):
        half = to_arb(1 / (2 * Fraction(sigma) ** 2))
        base = arb_poly([(half * (k * (k - 1))).exp() / arb.fac_ui(k) for k in range(alpha + 1)])
        power, n = arb_poly([1]), t
        while n:
            if n & 1:
                power = (power * base).truncate(alpha + 1)
            n >>= 1
            if n:
                base = (base * base).truncate(alpha + 1)
        coeffs = power.coeffs()
        top = coeffs[alpha] if len(coeffs) > alpha else arb(0)
        return top * arb.fac_ui(alpha) / arb(t) ** alpha


def remove_rdp(t: int, sigma: Fraction, alpha: int) -> Fraction:
    """Upper end of log(M_α)/(α − 1) ≥ D_α(P‖Q), an exact rational rounded up."""
    with ctx.workprec(PREC):
        return arb_to_bounded(remove_moment(t, Fraction(sigma), alpha).log() / (alpha - 1)).upper


@lru_cache(maxsize=4096)
def _epoch_rdp(p: Phase, alpha: int) -> Fraction:
    """One epoch of phase p at order α in the remove direction, rounded up: random allocation's closed form, or
    (shuffle, replace-one) the Gaussian mechanism's α·Δ²/(2σ²)."""
    if _allocated(p):
        return remove_rdp(p.batches_per_epoch, p.sigma, alpha)
    sensitivity = 2 if p.neighbours == "replace-one" else 1
    return Fraction(alpha) * sensitivity**2 / (2 * p.sigma**2)


def run_rdp(phases: Sequence[Phase], alpha: int) -> Fraction:
    """R(α) = Σ_i E_i·D_α,i (remove direction), E_i the epochs phase i begins (Mironov 2017, Proposition 1)."""
    return sum((p.epochs[1] * _epoch_rdp(p, alpha) for p in phases), Fraction(0))


def add_shift(phases: Sequence[Phase]) -> Fraction:
    """C = Σ_i E_i·(1 − 1/t_i)/(2σ_i²) over the balls-in-bins phases (module docstring), exact."""
    return sum((p.epochs[1] * (1 - Fraction(1, p.batches_per_epoch)) / (2 * p.sigma**2)
                for p in phases if _allocated(p)), Fraction(0))


def add_mu_squared(phases: Sequence[Phase]) -> Fraction:
    """μ_add² = Σ_i E_i/(t_iσ_i²) (balls-in-bins) + E_iΔ²/σ_i² (the other phases), exact."""
    def part(p: Phase) -> Fraction:
        if _allocated(p):
            return Fraction(p.epochs[1], p.batches_per_epoch) / p.sigma**2
        return p.epochs[1] * (4 if p.neighbours == "replace-one" else 1) / p.sigma**2
    return sum((part(p) for p in phases), Fraction(0))


@dataclass(frozen=True)
class _Gaussian(GaussianCurve):
    """The Gaussian mechanism's closed form at a given μ² (not derived from phases)."""

    mu2: Fraction = Fraction(0)

    @property
    def mu_squared(self) -> Fraction:
        return self.mu2


@dataclass(frozen=True)
class AllocationBound:
    """The upper bound of a per-epoch run with a balls-in-bins add/remove phase (module docstring): the larger
    of the remove direction (Rényi DP at an integer order) and the add direction (a shifted Gaussian)."""

    phases: tuple[Phase, ...]

    @property
    def add_curve(self) -> GaussianCurve:
        return _Gaussian((), add_mu_squared(self.phases))

    def remove_epsilon(self, delta: Fraction, order: int) -> Fraction:
        r = run_rdp(self.phases, order)
        return max(epsilon_from_rdp(Bounded.between(r, r), Fraction(order), Fraction(delta), CONVERSION).upper,
                   Fraction(0))

    def remove_delta(self, epsilon: Fraction, order: int) -> Fraction:
        r = run_rdp(self.phases, order)
        return min(delta_from_rdp(Bounded.between(r, r), Fraction(order), Fraction(epsilon), CONVERSION).upper,
                   Fraction(1))

    def add_epsilon(self, delta: Fraction) -> Fraction:
        """C + ε_{μ_add}(δ), rounded up."""
        return add_shift(self.phases) + self.add_curve.epsilon_bounds(Fraction(delta))[1]

    def add_delta(self, epsilon: Fraction) -> Fraction:
        """δ_{μ_add}(ε − C), rounded up."""
        return min(self.add_curve.delta_bounds(Fraction(epsilon) - add_shift(self.phases))[1], Fraction(1))

    def epsilon(self, delta: Fraction, order: int | None = None) -> tuple[int, Fraction]:
        """(remove order, proven ε(δ)): the best order of :data:`ORDERS`, or ``order`` (a certificate's)."""
        orders = ORDERS if order is None else (order,)
        best = min(((a, self.remove_epsilon(delta, a)) for a in orders), key=lambda v: (v[1], v[0]))
        return best[0], max(best[1], self.add_epsilon(delta))

    def delta(self, epsilon: Fraction, order: int | None = None) -> tuple[int, Fraction]:
        """(remove order, proven δ(ε)), as :meth:`epsilon`."""
        orders = ORDERS if order is None else (order,)
        best = min(((a, self.remove_delta(epsilon, a)) for a in orders), key=lambda v: (v[1], v[0]))
        return best[0], max(best[1], self.add_delta(epsilon))
