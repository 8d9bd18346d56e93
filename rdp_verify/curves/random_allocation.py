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

**Add direction**: the smaller of two proven bounds (each ordered pair of datasets needs one bound; the
smaller of two valid ones is valid), the order or argument used recorded by a certificate.

*The shifted Gaussian* (the argument behind the add-direction bound of Feldman and Shenfeld's package,
``direct.allocation_epsilon_direct_add``: a Gaussian at noise σ√t plus (1 − 1/t)/(2σ²)). By the
arithmetic-geometric mean inequality P/Q ≥ Π_j L_j^{1/t}, and Π_j L_j^{1/t} = (G/Q)·e^{−(1/t − 1/t²)Σ_j‖g_j‖²/(2σ²)}
≥ (G/Q)·e^{−c}, c = (1 − 1/t)/(2σ²), where G is the adaptive Gaussian process with means g_j/t
(Σ_j ‖g_j/t‖² ≤ 1/t). So the add-direction loss log(Q/P) is at most log(Q/G) + c pointwise, in every epoch;
over the run H_{e^ε}(Q_run‖P_run) ≤ H_{e^{ε−C}}(Q_run‖G_run), C = Σ_i E_i·c_i, and G_run is dominated by the
Gaussian mechanism with μ_add² = Σ_i E_i/(t_iσ_i²) (Dong, Roth, Su 2022, Corollary 3.3): δ_add(ε) ≤
δ_{μ_add}(ε − C), ε_add(δ) ≤ C + ε_{μ_add}(δ), the closed form of :mod:`rdp_verify.curves.gaussian`. (A
shuffled or replace-one phase enters both directions unamplified: μ² += E_iΔ²/σ_i², RDP += E_i·αΔ²/(2σ_i²).)
The shift C grows linearly with the epochs (the mean add-direction loss of an epoch, its KL divergence, is
about four times the Gaussian part's at t = 100, σ = 0.6), so from about 4 epochs this bound is above the
remove direction.

*Rényi DP of the exact pair* (proven here). For an order α > 1, k = α − 1,
D_α(Q‖P) = (1/k)·log E_Q[(P/Q)^{−k}] = (1/k)·log E_Q[S^{−k}], S = (1/t)·Σ_j L_j.

1. *The non-adaptive pair is the worst case.* Under Q, given the past, L_j is lognormal LN(−v_j/2, v_j) with
   v_j = ‖g_j‖²/σ² ≤ s², s = 1/σ. Let V_j(a) be the supremum, over the (adaptive, randomised) strategies of
   steps j, …, t, of E[(a + (1/t)·Σ_{i≥j} L_i)^{−k}], a ≥ 0 (V_{t+1}(a) = a^{−k}). For each strategy this is a
   convex decreasing function of a (x ↦ x^{−k} is), and the family does not depend on a, so V_j is convex and
   decreasing. Conditioning on step j's output, V_j(a) ≤ sup_{v ≤ s²} E[V_{j+1}(a + L_v/t)], L_v ~ LN(−v/2, v).
   For v < v', L_{v'} has the law of L_v·M with M ~ LN(−(v' − v)/2, v' − v) independent, E[M] = 1, so by
   conditional Jensen E[φ(a + L_{v'}/t)] ≥ E[φ(a + L_v/t)] for convex φ: the supremum is at v = s² (‖g_j‖ = 1)
   at every step. By induction, E_Q[S^{−k}] ≤ E[S^{−k}] for S the mean of t independent X_j ~ LN(−s²/2, s²):
   the pair Q* = N(0, σ²I_t), P* = (1/t)·Σ_j N(e_j, σ²I_t), which attains it. Mixing over the others'
   allocation does not increase ∫Q^α·P^{1−α} (jointly convex: the perspective of x^α), so the bound holds for
   the real epoch; epochs and phases add (Mironov 2017, Proposition 1): R_add(α) = Σ_i E_i·D_α,i.
2. *The Laplace transform.* For S > 0, S^{−k} = (1/Γ(k))·∫_0^∞ u^{k−1}e^{−uS} du, so by Tonelli and independence
   E[S^{−k}] = (1/Γ(k))·∫_0^∞ u^{k−1}·ψ(u/t)^t du, ψ(v) = E[e^{−vX}] (X ~ LN(−s²/2, s²)), the Laplace transform
   of the lognormal: decreasing, log-convex (Hölder), ψ(0) = 1.
3. *Upper ends of ψ* (:class:`LaplaceBound`). (a) The trapezoid rule: ψ(v) = ∫ w(x) dx with
   w(x) = φ(x)·exp(−v·e^{μ+sx}), μ = −s²/2, φ the standard normal density. w is entire, and for abs(b) < a with
   s·a ≤ 3/2 < π/2, abs(w(x + ib)) = φ(x)·e^{b²/2}·exp(−v·e^{μ+sx}·cos(sb)) ≤ φ(x)·e^{a²/2}, so
   ∫abs(w(x + ib)) dx ≤ M = e^{a²/2} and w → 0 uniformly in the strip. Then abs(h·Σ_{j∈ℤ} w(jh) − ψ(v)) ≤
   2M/(e^{2πa/h} − 1) (Trefethen and Weideman, "The exponentially convergent trapezoidal rule", SIAM Review
   56(3), 2014, Theorem 5.1: by Poisson summation the error is Σ_{m≠0} ŵ(2πm/h), and abs(ŵ(ξ)) ≤ M·e^{−a·abs(ξ)} by
   moving the line of integration). Here a = min(3σ/2, 8), h = 1/n with 6.28·a·n ≥ 101 + a²/2 (an error below
   e^{−100}); the nodes abs(jh) > 14 add at most 2Φ(−14) < e^{−100} (w ≤ φ, and h·φ(jh) is at most φ's integral
   over the cell of width h on the origin's side); from the first node with y = v·e^{μ+sx_j} > 150 on, the
   nodes add at most e^{−y}·h·Σ_j φ(jh) ≤ e^{−y}(1 + h/√(2π)) ≤ 2e^{−y}. (b) Markov: e^{−y} ≤ (p/(ey))^p for
   p > 0, so ψ(v) ≤ C_p·v^{−p}, C_p = (p/e)^p·E[X^{−p}] = (p/e)^p·e^{s²p(p+1)/2}, at p = j/8 next to the
   minimiser (log p + s²p = log v − s²/2); it replaces (a) for large v, where (a)'s absolute e^{−100} dominates.
4. *The integral* (:func:`add_log_integral`). [0, 2^−3]: by convexity t·log ψ(u/t) ≤ u·λ_0, λ_0 the chord's
   slope from ψ(0) = 1 to the upper end at 2^−3 (rounded up), and ∫_0^{a} u^{k−1}e^{λ_0 u} du =
   (−λ_0)^{−k}·γ(k, −λ_0 a). Each binade [2^e, 2^{e+1}] is cut into 2^3 equal cells [a, b] (dyadic: exact): on a
   cell t·log ψ(u/t) lies below its chord, so below the line ℓ through the upper ends y_a, y_b with its slope λ
   rounded up (ℓ ≥ the chord for u ≥ a), and ∫_a^b u^{k−1}e^{ℓ(u)} du = e^{y_a − λa}·(−λ)^{−k}·(γ(k, −λb) −
   γ(k, −λa)) exactly (the upper incomplete gamma past the mode; for λ ≥ 0, at most e^{ℓ(b)}(b^k − a^k)/k). The
   tail u ≥ U = 2^e: ψ(u/t)^t ≤ (C_p t^p)^t·u^{−pt}, ∫_U^∞ u^{k−1−pt} du = U^{k−pt}/(pt − k) for any p > k/t. The
   binades go up until the tail is below 2^−40 of the sum (at most 200; the tail then closes what is left).
   D_α ≤ (log(the sum) − log Γ(k))/k.

Every quantity is an Arb ball at :data:`ADD_PREC` bits, every ψ value, cell, sum, tail and the final quotient
rounded up (ψ's upper ends enter increasing functions only). Nothing is estimated: a coarser grid (``level``) or
fewer binades still give an upper bound, only a looser one. At t = 100, σ = 0.6 the result is 0.06–0.5 % above
a fine double-precision quadrature of the same integral (0.1 % at α = 2); the chords' error is second order in
the cell width. For small t and large orders the trapezoid's e^{−100} floor and the Markov bound make it loose
(t = 1: the shifted Gaussian is exact there). R_add(α) → (ε, δ) by the conversion below at the best order of
:data:`ADD_ORDERS` (α − 1 dyadic, so exact in Arb).

**The run.** A phase of E_i epochs begun (⌈T_i/t_i⌉; a partial epoch is a post-processing of a full one) is
(α, E_i·D_α)-RDP in either direction (Mironov 2017, Proposition 1: adaptive composition adds for each ordered
pair of datasets), R(α) → (ε, δ) by the project's proven conversion
(:func:`rdp_verify.accounting.rdp.epsilon_from_rdp` and :func:`~rdp_verify.accounting.rdp.delta_from_rdp`,
Balle, Barthe, Gaboardi, Hsu, Sato 2020, Theorem 21) at the integer orders of :data:`ORDERS` (remove) and the
orders of :data:`ADD_ORDERS` (add; any order gives a proven bound; the best is kept and a certificate records
it). The run's bound is the larger of the two directions (each ordered pair of neighbouring datasets is one of
them). At t = 100, σ = 0.6, δ = 10^−5 the add direction's Rényi bound is 1.03, 2.02, 2.76, 4.25 at 1, 3, 5, 10
epochs (the shifted Gaussian: 1.97, 5.21, 8.31, 15.86), so the remove direction decides all four.

**Rounding.** M_α is enclosed in Arb: C's coefficients are balls, C^t is formed by repeated squaring
of polynomials truncated at degree α (all coefficients positive: no cancellation), the logarithm and
the division by α − 1 are ball operations, and the upper end of every ball is taken (pessimistic for
an upper bound); the add direction's bounds and the conversion round up. Cost: O(α²·log t) ball
multiplications per remove order (the truncated products), about 0.1 s for all of :data:`ORDERS` at t = 100;
the add direction's ψ values (a few hundred per (t, σ), shared by all orders and cached) and incomplete gammas,
about 0.5 s for all of :data:`ADD_ORDERS` at t = 100, σ = 0.6, and skipped when the shifted Gaussian is already
below the remove direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

from flint import arb, arb_poly, ctx

from ..accounting.rdp import delta_from_rdp, epsilon_from_rdp
from ..foundations.normal import phi_bar
from ..foundations.results import Bounded, arb_to_bounded, to_arb
from ..foundations.run import Phase
from .gaussian import GaussianCurve

__all__ = ["ORDERS", "ADD_ORDERS", "SEARCH", "CONVERSION", "applies", "remove_moment", "remove_rdp", "run_rdp",
           "add_shift", "add_mu_squared", "LaplaceBound", "laplace_bound", "add_log_integral", "add_rdp",
           "run_add_rdp", "AllocationBound"]

ORDERS = tuple(range(2, 65)) + (80, 96, 128, 192, 256)  # the integer orders tried (a certificate records one)
# the orders of the add direction's Rényi DP (α − 1 dyadic, so exact in Arb; a certificate records one)
ADD_ORDERS = tuple(Fraction(x) for x in ("5/4", "3/2", "7/4", "2", "9/4", "5/2", "11/4", "3", "7/2", "4", "9/2", "5",
                                         "11/2", "6", "7", "8", "9", "10", "12", "14", "16", "20", "24", "32", "48",
                                         "64"))
SEARCH = "search"  # AllocationBound: search the add orders (a certificate's recorded order is a Fraction or None)
CONVERSION = "balle2020"  # rdp_verify.accounting.rdp: Balle et al. 2020, Theorem 21
PREC = 192
ADD_PREC = 96  # the add direction's balls (every value a sum or product of positive terms)
_DECAY = 100  # the trapezoid rule's discretisation and truncation errors are below e^−100 (absolute)
_WIDTH = 14  # nodes |x| ≤ 14: 2Φ(−14) < e^−100
_CUT = 150  # nodes with v·e^{μ+sx} > 150 are bounded together by 2e^{−v e^{μ+sx}}
_LEVEL = 3  # 2^3 cells per binade [2^e, 2^{e+1}] of u
_FIRST = -3  # the first cell is [0, 2^−3]
_MAX_BINADES = 200  # binades of u at most (beyond, the tail bound closes whatever is left)
_MAX_NODES = 4096  # trapezoid nodes at most (σ below about 0.08 needs more): no Rényi add direction there


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
    return _gaussian_rdp(p, Fraction(alpha))


def _gaussian_rdp(p: Phase, alpha: Fraction) -> Fraction:
    """α·Δ²/(2σ²): the Gaussian mechanism once per epoch, either direction (no amplification), exact."""
    sensitivity = 2 if p.neighbours == "replace-one" else 1
    return alpha * sensitivity**2 / (2 * p.sigma**2)


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


# -- the add direction's Rényi DP: the Laplace transform of the lognormal (module docstring) ---------------------

class LaplaceBound:
    """Upper ends of ψ(v) = E[e^{−vX}], X = e^W, W ~ N(−s²/2, s²), s = 1/σ (module docstring, "Add direction,
    Rényi DP"): the trapezoid rule in x = (W + s²/2)/s with step h = 1/n, its error bounded by Trefethen and
    Weideman's strip theorem, or Markov's ψ(v) ≤ C_p·v^{−p}, whichever is smaller; all in Arb, rounded up.

    ``n`` (nodes per unit of x) and ``width`` (nodes abs(x) ≤ width) default to the rule's choice; tests coarsen them.
    """

    def __init__(self, sigma: Fraction, n: int | None = None, width: int = _WIDTH):
        self.sigma = Fraction(sigma)
        self.strip = a = _strip(self.sigma)
        self.n = n if n is not None else _nodes_per_unit(self.sigma)
        self.width = width
        with ctx.workprec(ADD_PREC):
            self.s = to_arb(1 / self.sigma)
            mu = -self.s * self.s / 2
            h = arb(1) / self.n
            strip = to_arb(a)
            # |ψ − I_h| ≤ 2M/(e^{2πa/h} − 1), M = e^{a²/2} ≥ ∫|w(x + ib)|dx for |b| < a (Trefethen, Weideman 2014)
            self.discretisation = 2 * (strip * strip / 2).exp() / ((2 * arb.pi() * strip * self.n).exp() - 1)
            top = width * self.n
            # the nodes |j| > top: h·Σ φ(jh) ≤ ∫_{top·h}^∞ φ on each side, 2Φ(−width) in all (w ≤ φ)
            self.truncation = 2 * phi_bar(arb(width))  # erfc(width/√2)
            log_norm = (2 * arb.pi()).sqrt().log() - h.log()
            self.log_weights = [-(arb(j) / self.n) ** 2 / 2 - log_norm for j in range(-top, top + 1)]
            self.scales = [(mu + self.s * j / self.n).exp() for j in range(-top, top + 1)]
        self._cache: dict[tuple[Fraction, int], arb] = {}

    def trapezoid(self, v: arb) -> arb:
        """I_h's truncation plus the error bounds: an upper end of ψ(v), v ≥ 0."""
        with ctx.workprec(ADD_PREC):
            total = self.discretisation + self.truncation
            for lw, c in zip(self.log_weights, self.scales):
                x = v * c
                if x > _CUT:  # this node and the later ones: ≤ e^{−x}·h·Σ_j φ(jh) ≤ e^{−x}·(1 + h/√(2π)) ≤ 2e^{−x}
                    return total + 2 * (-x).exp()
                total += (lw - x).exp()
            return total

    def log_markov(self, v: arb) -> arb | None:
        """log of C_p·v^{−p} ≥ ψ(v), C_p = (p/e)^p·E[X^{−p}] = (p/e)^p·e^{s²p(p+1)/2} (e^{−y} ≤ (p/(ey))^p), at the
        p = j/8 next to the minimiser (log p + s²p = log v − s²/2); None for v ≤ 1."""
        if not v > 1:
            return None
        with ctx.workprec(ADD_PREC):
            log_v, s2 = v.log(), self.s * self.s
            j = _stationary(lambda j: (arb(j) / 8).log() + s2 * j / 8 - (log_v - s2 / 2), 1)

            def value(j: int) -> arb:
                p = arb(j) / 8
                return p * (p.log() - 1) + s2 * p * (p + 1) / 2 - p * log_v
            return _smallest([value(i).upper() for i in sorted({max(j - 1, 1), j})])

    def t_log(self, u: Fraction, t: int) -> arb:
        """An exact upper end of t·log ψ(u/t) (cached)."""
        key = (u, t)
        if key not in self._cache:
            with ctx.workprec(ADD_PREC):
                v = to_arb(u) / t
                log_psi = self.trapezoid(v).log()
                markov = self.log_markov(v)
                if markov is not None and markov < log_psi:
                    log_psi = markov
                self._cache[key] = (t * log_psi).upper()
        return self._cache[key]

    def log_tail(self, t: int, k: arb, e: int) -> arb:
        """log of ∫_U^∞ u^{k−1}·ψ(u/t)^t du ≤ (C_p·t^p)^t·U^{k−pt}/(pt − k), U = 2^e, p = j/8 > k/t next to the
        minimiser of the bound (ψ(v) ≤ C_p·v^{−p}, :meth:`log_markov`), an exact upper end."""
        with ctx.workprec(ADD_PREC):
            log_u, s2 = e * arb(2).log(), self.s * self.s
            log_v = log_u - arb(t).log()
            low = 1
            while not arb(low) / 8 * t > k:
                low += 1
            j = _stationary(lambda j: (arb(j) / 8).log() + s2 * j / 8 - (log_v - s2 / 2), low)

            def value(j: int) -> arb:
                p = arb(j) / 8
                return (t * (p * (p.log() - 1) + s2 * p * (p + 1) / 2 + p * arb(t).log()) + (k - p * t) * log_u
                        - (p * t - k).log())
            return _smallest([value(i).upper() for i in sorted({max(j - 1, low), j})])


def _strip(sigma: Fraction) -> Fraction:
    """The strip's half-width a = min(3σ/2, 8): s·a ≤ 3/2 < π/2."""
    return min(Fraction(3, 2) * sigma, Fraction(8))


def _nodes_per_unit(sigma: Fraction) -> int:
    """n with e^{2πa·n} ≥ e^{6.28·a·n} ≥ e^{_DECAY + 1 + a²/2}: exact rationals, no float rounding in the choice."""
    a = _strip(sigma)
    return math.ceil((_DECAY + 1 + a * a / 2) / (Fraction(628, 100) * a))


def _smallest(values: list[arb]) -> arb:
    """The smallest of exact balls (upper ends), the first on ties."""
    best = values[0]
    for v in values[1:]:
        if v < best:
            best = v
    return best


def _stationary(g, low: int) -> int:
    """The least j ≥ low with g(j) ≥ 0 proven (g increasing; found by doubling then bisection), capped at 2^15."""
    if not g(low) < 0:
        return low
    lo, hi = low, 2 * low
    while g(hi) < 0 and hi < 2**15:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if g(mid) < 0:
            lo = mid
        else:
            hi = mid
    return hi


@lru_cache(maxsize=64)
def laplace_bound(sigma: Fraction) -> LaplaceBound:
    """The shared :class:`LaplaceBound` of σ (its cache of t·log ψ serves every order and t)."""
    return LaplaceBound(Fraction(sigma))


def _cell(k: arb, a: Fraction, b: Fraction, ya: arb, yb: arb) -> arb:
    """∫_a^b u^{k−1}·e^{ℓ(u)} du for the line ℓ through (a, ya), (b, yb) with its slope rounded up (so ℓ ≥ the chord
    for u ≥ a): with z = −slope > 0, e^{ya + za}·z^{−k}·(γ(k, zb) − γ(k, za)) (incomplete gamma in Arb, the upper
    one past the mode); with slope ≥ 0, at most e^{yb}·(b^k − a^k)/k."""
    xa, xb = to_arb(a), to_arb(b)
    slope = ((yb - ya) / (xb - xa)).upper()
    if not slope < 0:
        return (ya + slope * (xb - xa)).exp() * (xb ** k - xa ** k) / k
    z = -slope
    if z * xa > k:
        part = (z * xa).gamma_upper(k) - (z * xb).gamma_upper(k)
    else:
        part = (z * xb).gamma_lower(k) - (z * xa).gamma_lower(k)
    return (ya + z * xa).exp() * z ** (-k) * part


def add_log_integral(t: int, sigma: Fraction, k: Fraction, level: int = _LEVEL, binades: int = _MAX_BINADES,
                     stop: int = 40, laplace: LaplaceBound | None = None) -> arb:
    """An exact upper end of log ∫_0^∞ u^{k−1}·ψ(u/t)^t du = log(Γ(k)·E[S^{−k}]) (module docstring): the first
    cell [0, 2^−3] by the chord from ψ(0) = 1, then 2^level cells per binade [2^e, 2^{e+1}] (log ψ convex: below its
    chords), until the tail bound beyond 2^e (:meth:`LaplaceBound.log_tail`) is below 2^−stop of the sum (looked at
    once a binade adds less than 2^−(stop+5) of it, and less than the one before), or after ``binades`` binades,
    and the tail added. ``laplace`` defaults to :func:`laplace_bound`; tests coarsen ``level``, ``binades``,
    ``stop`` (any choice is an upper bound)."""
    psi = laplace if laplace is not None else laplace_bound(Fraction(sigma))
    m = 2**level
    with ctx.workprec(ADD_PREC):
        kk = to_arb(Fraction(k))
        first = Fraction(2) ** _FIRST
        slope = (psi.t_log(first, t) / to_arb(first)).upper()  # t·log ψ(u/t) ≤ u·slope on [0, 2^−3]: convexity
        if slope < 0:
            total = ((-slope) ** (-kk) * (-slope * to_arb(first)).gamma_lower(kk)).upper()
        else:
            total = (to_arb(first) ** kk / kk).upper()
        previous, tail = None, None
        for e in range(_FIRST, _FIRST + binades):
            low = Fraction(2) ** e
            cell = arb(0)
            for i in range(m):
                a, b = low * (1 + Fraction(i, m)), low * (1 + Fraction(i + 1, m))
                cell += _cell(kk, a, b, psi.t_log(a, t), psi.t_log(b, t))
            cell = cell.upper()
            total = (total + cell).upper()
            if previous is not None and cell < previous and cell < total * arb(2) ** -(stop + 5):
                tail = psi.log_tail(t, kk, e + 1)
                if tail < total.log() - stop * arb(2).log():
                    break
                tail = None
            previous = cell
        if tail is None:  # the binades ran out: the tail from the last one's end
            tail = psi.log_tail(t, kk, _FIRST + binades)
        return (total + tail.exp()).log().upper()


@lru_cache(maxsize=4096)
def add_rdp(t: int, sigma: Fraction, alpha: Fraction) -> Fraction | None:
    """An exact rational ≥ D_α(Q‖P) of one epoch (add direction, module docstring): the upper end of
    (log ∫_0^∞ u^{k−1}ψ(u/t)^t du − log Γ(k))/k, k = α − 1 > 0 (any real order; :data:`ADD_ORDERS` are tried).
    None where ψ's rule would need more than 4096 nodes (σ below about 0.08, where the lognormal's spread makes
    this direction useless anyway): the work stays bounded, for ``check`` too."""
    k = Fraction(alpha) - 1
    if not (k > 0 and t >= 1):
        raise ValueError("add_rdp needs an order alpha > 1 and t >= 1")
    if 2 * _WIDTH * _nodes_per_unit(Fraction(sigma)) + 1 > _MAX_NODES:
        return None
    with ctx.workprec(ADD_PREC):
        kk = to_arb(k)
        return arb_to_bounded((add_log_integral(t, Fraction(sigma), k) - kk.lgamma()) / kk).upper


def _epoch_add_rdp(p: Phase, alpha: Fraction) -> Fraction | None:
    """One epoch of phase p at order α in the add direction, rounded up: :func:`add_rdp`, or (shuffle,
    replace-one) the Gaussian mechanism's α·Δ²/(2σ²)."""
    return add_rdp(p.batches_per_epoch, p.sigma, alpha) if _allocated(p) else _gaussian_rdp(p, alpha)


def run_add_rdp(phases: Sequence[Phase], alpha: Fraction) -> Fraction | None:
    """R_add(α) = Σ_i E_i·D_α,i (add direction; Mironov 2017, Proposition 1); None if a phase has none."""
    parts = [_epoch_add_rdp(p, Fraction(alpha)) for p in phases]
    if any(x is None for x in parts):
        return None
    return sum((p.epochs[1] * x for p, x in zip(phases, parts)), Fraction(0))


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
    of the remove direction (Rényi DP at an integer order) and the add direction (the smaller of the shifted
    Gaussian and the Rényi DP of the exact pair at an order of :data:`ADD_ORDERS`).

    ``order`` arguments: None searches :data:`ORDERS` (remove); ``add_order`` :data:`SEARCH` searches
    :data:`ADD_ORDERS` (and skips them when the shifted Gaussian is already below the remove direction: it cannot
    decide then), None uses the shifted Gaussian alone, an order the smaller of it and the Rényi DP at that order
    (a certificate's: the same value as the search that recorded it)."""

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

    def shifted_epsilon(self, delta: Fraction) -> Fraction:
        """Add direction, the shifted Gaussian: C + ε_{μ_add}(δ), rounded up."""
        return add_shift(self.phases) + self.add_curve.epsilon_bounds(Fraction(delta))[1]

    def shifted_delta(self, epsilon: Fraction) -> Fraction:
        """Add direction, the shifted Gaussian: δ_{μ_add}(ε − C), rounded up."""
        return min(self.add_curve.delta_bounds(Fraction(epsilon) - add_shift(self.phases))[1], Fraction(1))

    def add_rdp_epsilon(self, delta: Fraction, order: Fraction) -> Fraction | None:
        """Add direction, Rényi DP at ``order``: R_add(α) converted (Balle et al. 2020, Theorem 21), rounded up
        (None where :func:`add_rdp` has no bound)."""
        r = run_add_rdp(self.phases, order)
        if r is None:
            return None
        return max(epsilon_from_rdp(Bounded.between(r, r), Fraction(order), Fraction(delta), CONVERSION).upper,
                   Fraction(0))

    def add_rdp_delta(self, epsilon: Fraction, order: Fraction) -> Fraction | None:
        r = run_add_rdp(self.phases, order)
        if r is None:
            return None
        return min(delta_from_rdp(Bounded.between(r, r), Fraction(order), Fraction(epsilon), CONVERSION).upper,
                   Fraction(1))

    def add_epsilon(self, delta: Fraction, order: Fraction | str | None = SEARCH) -> tuple[Fraction | None, Fraction]:
        """(add order, or None for the shifted Gaussian; the proven add-direction ε(δ)): the smallest."""
        return self._add(self.shifted_epsilon, self.add_rdp_epsilon, delta, order)

    def add_delta(self, epsilon: Fraction, order: Fraction | str | None = SEARCH) -> tuple[Fraction | None, Fraction]:
        """(add order, or None for the shifted Gaussian; the proven add-direction δ(ε)): the smallest."""
        return self._add(self.shifted_delta, self.add_rdp_delta, epsilon, order)

    @staticmethod
    def _add(shifted, rdp, x: Fraction, order: Fraction | str | None) -> tuple[Fraction | None, Fraction]:
        best: tuple[Fraction | None, Fraction] = (None, shifted(x))
        for a in ADD_ORDERS if order == SEARCH else (() if order is None else (Fraction(order),)):
            value = rdp(x, a)
            if value is not None and value < best[1]:
                best = (a, value)
        return best

    def epsilon_orders(self, delta: Fraction, order: int | None = None, add_order: Fraction | str | None = SEARCH
                       ) -> tuple[int, Fraction | None, Fraction]:
        """(remove order, add order or None, proven ε(δ)) as the class docstring says."""
        orders = ORDERS if order is None else (order,)
        best = min(((a, self.remove_epsilon(delta, a)) for a in orders), key=lambda v: (v[1], v[0]))
        if add_order == SEARCH and self.shifted_epsilon(delta) <= best[1]:
            return best[0], None, best[1]
        add = self.add_epsilon(delta, add_order)
        return best[0], add[0], max(best[1], add[1])

    def delta_orders(self, epsilon: Fraction, order: int | None = None, add_order: Fraction | str | None = SEARCH
                     ) -> tuple[int, Fraction | None, Fraction]:
        """(remove order, add order or None, proven δ(ε)), as :meth:`epsilon_orders`."""
        orders = ORDERS if order is None else (order,)
        best = min(((a, self.remove_delta(epsilon, a)) for a in orders), key=lambda v: (v[1], v[0]))
        if add_order == SEARCH and self.shifted_delta(epsilon) <= best[1]:
            return best[0], None, best[1]
        add = self.add_delta(epsilon, add_order)
        return best[0], add[0], max(best[1], add[1])

    def epsilon(self, delta: Fraction, order: int | None = None) -> tuple[int, Fraction]:
        """(remove order, proven ε(δ)) with the shifted Gaussian as the add direction: the bound as it was before
        the add direction's Rényi DP (what records holding only a remove order, e.g. ``tradeoff``'s
        ``envelope_lower_random_allocation``, were computed with; :meth:`epsilon_orders` is the tighter one)."""
        found = self.epsilon_orders(delta, order, None)
        return found[0], found[2]

    def delta(self, epsilon: Fraction, order: int | None = None) -> tuple[int, Fraction]:
        """(remove order, proven δ(ε)), as :meth:`epsilon`: the shifted Gaussian as the add direction."""
        found = self.delta_orders(epsilon, order, None)
        return found[0], found[2]
