"""The hockey-stick curves of one step under replace-one neighbours, in Arb ball arithmetic.

**Poisson sampling: the dominating pair.** Every record's clipped gradient has ℓ2 norm at most 1 and the noise is
N(0, σ²I) (σ the noise multiplier). Replacing one record x by x' moves the sum of the batch by
g(x) − g(x'), of norm at most 2 (twice the add/remove sensitivity: the convention behind
dp_accounting's ``NeighboringRelation.REPLACE_ONE``, and where a factor 2 has gone missing before,
google/differential-privacy #378). The replaced record's slot is in the batch with the same
probability q in both datasets -- q under Poisson sampling, b/N for a uniformly drawn batch of b
of N records -- and everything else is a common mixture, so one step is dominated by the pair with
a mixture on **both** sides:

    P = (1 − q)·N(0, σ²) + q·N(1, σ²),    Q = (1 − q)·N(0, σ²) + q·N(−1, σ²).

What is proven here, and what is cited. Joint convexity over the other records (the same mixture in
both datasets) and translation reduce one step to ((1 − q)N(0) + qN(g), (1 − q)N(0) + qN(g')) with
‖g‖, ‖g'‖ ≤ 1; the map z ↦ Az + N(0, σ²(I − AAᵀ)), for a contraction A taking two unit vectors at the
angle of g, g' to them, post-processes both mixtures at once, so the worst case is two unit vectors
at some angle (the cases g' = 0 and g = 0, the remove and add pairs, are dominated by the same test
sets). That the antipodal angle (g = −g', the pair above) is the worst is the statement of Lebeda,
Regehr, Kamath, Steinke 2024 (arXiv 2405.20769) for Poisson subsampling under substitution, and the pair
dp_accounting's PLD accountant uses for ``REPLACE_ONE``; it is relied on, not re-proven here (an
independent two-dimensional quadrature at σ ∈ {0.5, 1, 2}, q ∈ {0.02, 0.2, 0.6}, x ∈ [0.3, 40] and
angles from π/2 to 0.95π found no excess above 1e-12). Zhu, Dong, Wang 2022 (Section 5) treat
subsampling under substitution in general; from the sensitivity-2 base pair their theorem gives the
weaker remove pair of SG(q, σ/2).

The same pair dominates every step, whatever came before, so it dominates the adaptive
composition (Zhu, Dong, Wang 2022, Theorem 10). It is symmetric: the mirror z ↦ −z swaps P and Q
and sends the likelihood ratio Λ to 1/Λ, so both directions have the same curve (the add
direction of :mod:`rdp_verify.curves.discretize` is the mirror image). At q = 1 it is the Gaussian
mechanism with sensitivity 2.

**Fixed-size batches (b of N, uniformly without replacement), replace-one.** Here the mixture pair
above is *not* valid (Lebeda, Regehr, Kamath, Steinke 2024): when the replaced record is out of the
batch, another record takes its place, so the common part differs. Condition on the b − 1 other
records drawn and on the record y that fills the slot when x is out: one step's ordered pair is then
(P', Q') = ((1 − γ)R + γP₁, (1 − γ)R + γQ₁) with γ = b/N, R = N(g(y), σ²I), P₁ = N(g(x), σ²I),
Q₁ = N(g(x'), σ²I), all three means in the unit ball. For x' = 1 + γ(x − 1) ≥ 1 the advanced joint
convexity of Balle, Barthe, Gaboardi 2018 (Theorem 2) gives
H_{x'}(P'‖Q') = γ·H_x(P₁‖(1 − β)R + βQ₁) (β = x'/x), and joint convexity bounds it by
γ·H_x(N(2, σ²)‖N(0, σ²)) = H_{x'}(μ₂‖μ₀) for the remove pair (μ₂, μ₀) = ((1 − γ)N(0, σ²) + γN(2, σ²),
N(0, σ²)) of SG(γ, σ/2) (the sensitivity-2 Sampled Gaussian, rescaled); R = Q₁ attains it. The
reversed order is bounded the same way, so for x < 1 (H_x(A‖B) = 1 − x + x·H_{1/x}(B‖A)) every ordered
pair has H ≤ H*(x), where

    H*(x) = H(x) for x ≥ 1,   H*(x) = 1 − x + x·H(1/x) for x < 1   (H the remove curve of SG(γ, σ/2)),

is convex (the slopes at 1 increase since P(Λ > 1) + Q(Λ > 1) ≤ 1), H*(0) = 1: the curve of a symmetric
pair that dominates every step whatever the adversary chooses, and so the adaptive composition
(Zhu, Dong, Wang 2022, Theorem 10): the **upper** bound. The **lower** bound is an actual pair of
neighbouring runs: every other record's gradient −e, x's gradient e and x' = −e (or the reverse order)
realises the remove pair (μ₂, μ₀) of SG(γ, σ/2) in every step (or its add pair): the larger of the two
composed SGM curves. The two can differ -- the order of the worst pair may change from step to step
under composition, the pitfall of Lebeda et al. -- and the bracket says by how much.

**The curve of the Poisson pair.** With a = 1 − q, c = e^{−1/(2σ²)} and u = e^{z/σ²}, the likelihood ratio is
Λ(z) = (a + qcu)/(a + qc/u), increasing from 0 to ∞, and Λ = x at
u_x = (a(x − 1) + √(a²(x − 1)² + 4xq²c²))/(2qc) (the positive root of qcu² + a(1 − x)u − xqc = 0;
for x < 1 the equivalent 2xqc/(a(1 − x) + √(…)), without cancellation), z_x = σ²·log u_x. Then

    H(x)  = P(Λ > x) − x·Q(Λ > x) = a(1 − x)Φ̄(z_x/σ) + q(Φ̄((z_x − 1)/σ) − x·Φ̄((z_x + 1)/σ)),
    G(x)  = H(x) − (1 − x) = x·Q(Λ < x) − P(Λ < x) = q(x·Φ((z_x + 1)/σ) − Φ((z_x − 1)/σ)) − a(1 − x)Φ(z_x/σ),
    H'(x) = −Q(Λ > x),   G'(x) = Q(Λ < x),
    H''(x) = f_Q(z_x)/Λ'(z_x),  f_Q(z) = (aφ(z/σ) + qφ((z + 1)/σ))/σ,  Λ'(z) = qc(a(u + 1/u) + 2qc)/(σ²(a + qc/u)²).

Every value is an Arb ball at the working precision plus 2·log2(1/q) guard bits (near x = 1 the
two terms of G cancel to about q of their size); q and σ enter as exact rationals, so every ball
contains the exact value. The bound on H'' over a cell is H'' evaluated on balls of z covering the
cell (z_x is increasing): Arb's enclosure of the function's range there (no unimodality argument needed).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
from flint import arb, ctx

from ..foundations.normal import phi, phi_bar
from ..foundations.results import to_arb
from .single_step import StepCurve

__all__ = ["ReplaceOneCurve", "SymmetrisedCurve", "replace_tail", "replace_loss_scale"]

_DPS = 30  # mpmath digits of the grid heuristics: the same on every machine
_SPREAD_DPS = 15  # digits of the loss's standard deviation (a first step size)
_PIECES, _MAX_PIECES = 4, 64  # parts of a cell bounded separately (Arb's enclosure of a range widens with the ball)


class ReplaceOneCurve:
    """H, G, H' and bounds on H'' of the replace-one pair (module docstring), at ``prec`` bits."""

    def __init__(self, q: Fraction, sigma: Fraction, prec: int):
        self.q_exact = q
        self.prec = prec + 2 * max(0, q.denominator.bit_length() - q.numerator.bit_length() + 1)
        with ctx.workprec(self.prec):
            self.q = to_arb(q)
            self.a = to_arb(1 - q)
            self.sigma = to_arb(sigma)
            self.s2 = to_arb(sigma * sigma)
            self.qc = self.q * (-1 / (2 * self.s2)).exp()
            self.norm = 1 / (2 * arb.pi()).sqrt()

    def _u(self, x: arb) -> arb:
        """u_x = e^{z_x/σ²}, the root of qcu² + a(1 − x)u − xqc = 0 (module docstring)."""
        d = self.a * (x - 1)
        root = (d * d + 4 * x * self.qc * self.qc).sqrt()
        if x >= 1:
            return (d + root) / (2 * self.qc)
        if x < 1:
            return 2 * x * self.qc / (root - d)
        # a ball straddling 1: both forms are valid, the first has no division by a small number there
        return (d + root) / (2 * self.qc)

    def values(self, x: arb, g_side: bool, t: Any = None, k: int | None = None) -> tuple[arb, arb]:
        """(G(x), G'(x)) if ``g_side`` else (H(x), H'(x)) (``t`` is unused: Λ has no atom-free gap here)."""
        with ctx.workprec(self.prec):
            u = self._u(x)
            z = self.s2 * u.log()
            zs, zm, zp = z / self.sigma, (z - 1) / self.sigma, (z + 1) / self.sigma
            if g_side:
                below = self.a * phi(zs) + self.q * phi(zp)
                value = self.q * (x * phi(zp) - phi(zm)) - self.a * (1 - x) * phi(zs)
                return value, below
            above = self.a * phi_bar(zs) + self.q * phi_bar(zp)
            value = self.a * (1 - x) * phi_bar(zs) + self.q * (phi_bar(zm) - x * phi_bar(zp))
            return value, -above

    def slope(self, x: arb) -> arb:
        """H'(x) = −Q(Λ > x)."""
        return self.values(x, g_side=False)[1]

    def _curvature(self, z: arb) -> arb:
        """H'' at the point z_x = z (a ball of z gives a ball enclosing H'' over it)."""
        u = (z / self.s2).exp()
        density = self.norm * (self.a * (-(z * z) / (2 * self.s2)).exp()
                               + self.q * (-((z + 1) * (z + 1)) / (2 * self.s2)).exp()) / self.sigma
        den = self.a + self.qc / u
        growth = self.qc * (self.a * (u + 1 / u) + 2 * self.qc) / (self.s2 * den * den)
        return density / growth

    def curvature_bound(self, x_lo: arb, x_hi: arb, ks: tuple[int, int] | None = None) -> arb:
        """An exact upper bound (an Arb point) of sup H'' over [x_lo, x_hi].

        z_x increases with x, so the cell is z ∈ [z(x_lo), z(x_hi)] (ends enclosed at their outer sides);
        H'' is evaluated on balls covering equal parts of that range, each at most σ/4 wide (at least
        :data:`_PIECES`, at most :data:`_MAX_PIECES` parts), and the largest upper end is the bound (Arb
        encloses the range of the expression over each ball).
        """
        with ctx.workprec(self.prec):
            z_lo = (self.s2 * self._u(x_lo.lower()).log()).lower()
            z_hi = (self.s2 * self._u(x_hi.upper()).log()).upper()
            span = ((z_hi - z_lo) / (self.sigma / 4)).upper()
            pieces = _MAX_PIECES if not span < _MAX_PIECES else max(_PIECES, int(span.ceil().unique_fmpz()))
            bound = arb(0)
            for i in range(pieces):
                a = z_lo + (z_hi - z_lo) * i / pieces
                b = z_lo + (z_hi - z_lo) * (i + 1) / pieces
                piece = self._curvature(a.lower().union(b.upper())).upper()
                if not piece.is_finite():
                    raise ArithmeticError("curvature bound is not finite; raise the precision")
                bound = max(bound, piece)
            return bound


class SymmetrisedCurve:
    """H* of a fixed-size step under replace-one (module docstring): the remove curve H of SG(γ, σ/2) for
    x ≥ 1 and its perspective 1 − x + x·H(1/x) for x < 1, with the interface of :class:`StepCurve`."""

    def __init__(self, q: Fraction, sigma: Fraction, prec: int):
        self.base = StepCurve(q, sigma / 2, prec)
        self.q_exact, self.prec = q, prec

    def values(self, x: arb, g_side: bool, t: Any = None, k: int | None = None) -> tuple[arb, arb]:
        """(G*(x), G*'(x)) = (x·H(1/x), H(1/x) − H'(1/x)/x) for x ≤ 1 (``g_side``); (H(x), H'(x)) for x > 1."""
        with ctx.workprec(self.prec):
            if not g_side:
                return self.base.values(x, g_side=False)
            value, slope = self.base.values(1 / x, g_side=False)
            return x * value, value - slope / x

    def slope(self, x: arb) -> arb:
        """H*'(x): H'(x) for x ≥ 1, G*'(x) − 1 for x < 1."""
        with ctx.workprec(self.prec):
            if x >= 1:
                return self.base.slope(x)
            return self.values(x, g_side=True)[1] - 1

    def curvature_bound(self, x_lo: arb, x_hi: arb, ks: tuple[int, int] | None = None) -> arb:
        """sup H*'' over [x_lo, x_hi] (a cell on one side of 1): H'' there, or H''(1/x)/x³ ≤ sup H''/x_lo³."""
        with ctx.workprec(self.prec):
            if x_lo >= 1:
                return self.base.curvature_bound(x_lo, x_hi)
            if not x_hi <= 1:
                raise ArithmeticError("a cell of the symmetrised curve straddles x = 1")
            lo = x_lo.lower()
            return (self.base.curvature_bound(1 / x_hi, 1 / lo) / (lo * lo * lo)).upper()


# -- the grid's heuristics (mpmath at a fixed precision: the same grid on every machine; never a bound) ----------

def _mp(x: Fraction) -> Any:
    return mpmath.mpf(x.numerator) / x.denominator


def _z_of_loss(q: Fraction, sigma: Fraction, loss: Any) -> Any:
    """z with log Λ(z) = loss (mpmath)."""
    a, s2 = 1 - _mp(q), _mp(sigma) ** 2
    qc = _mp(q) * mpmath.exp(-1 / (2 * s2))
    x = mpmath.exp(loss)
    d = a * (x - 1)
    root = mpmath.sqrt(d * d + 4 * x * qc * qc)
    u = (d + root) / (2 * qc) if x >= 1 else 2 * x * qc / (root - d)
    return s2 * mpmath.log(u)


def replace_tail(q: Fraction, sigma: Fraction, loss: Any) -> Any:
    """P(log Λ > loss) = Q(log Λ < −loss) (the symmetry of the pair), in mpmath."""
    z = _z_of_loss(q, sigma, loss)
    s, qm = _mp(sigma), _mp(q)
    return (1 - qm) * mpmath.ncdf(-z / s) + qm * mpmath.ncdf(-(z - 1) / s)


def replace_loss_scale(q: Fraction, sigma: Fraction, tail: Fraction) -> tuple[float, float]:
    """(width, spread) of one step's loss: the range [−L, L] outside which each direction has mass at most
    ``tail``, and the loss's standard deviation under P (a heuristic for the first grid step)."""
    with mpmath.workdps(_DPS):
        limit = _mp(tail)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while replace_tail(q, sigma, hi) > limit:
            lo, hi = hi, 2 * hi
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if replace_tail(q, sigma, mid) > limit else (lo, mid)
        s, qm = _mp(sigma), _mp(q)

        def log_w(z: Any) -> Any:
            return mpmath.log1p(qm * mpmath.expm1((2 * z - 1) / (2 * s * s)))

        def loss(z: Any) -> Any:
            return log_w(z) - log_w(-z)

        density = lambda z: mpmath.npdf(z, 0, s) * mpmath.exp(log_w(z))  # noqa: E731  P = μ0·w
        cut = [-mpmath.inf, -8 * s, 0, 1, 1 + 8 * s, mpmath.inf]
        with mpmath.workdps(_SPREAD_DPS):  # a step size needs a few digits (as curves.discretize.loss_scale)
            m1 = mpmath.quad(lambda z: density(z) * loss(z), cut)
            m2 = mpmath.quad(lambda z: density(z) * loss(z) ** 2, cut)
            return float(2 * hi), float(mpmath.sqrt(max(m2 - m1 * m1, 0)))
