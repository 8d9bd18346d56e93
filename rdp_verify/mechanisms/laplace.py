"""The Laplace mechanism f(D) + Lap(b) with sensitivity s: a symmetric pair, exact δ in closed form.

**Pair** (dp_accounting 0.6, ``pld/privacy_loss_mechanism.py``: ``AdditiveNoisePrivacyLoss`` lines
246-251, REMOVE: μ_upper(x) = μ(x + s), μ_lower(x) = μ(x); ``LaplacePrivacyLoss`` lines 847-907, density
e^{−abs(x)/b}/(2b), and ``_privacy_loss_without_subsampling_remove`` line 988):

    P = Lap(−s, b),   Q = Lap(0, b),   L(x) = (abs(x) − abs(x + s))/b,   ε₀ = s/b,

non-increasing in x: L = ε₀ for x ≤ −s (P-mass 1/2), L = −ε₀ for x ≥ 0 (P-mass e^{−ε₀}/2), and
L = −(2x + s)/b in between, a continuous part with P-density e^{(ℓ − ε₀)/2}/4 in ℓ. The cuts are
rational: {L > ℓ} = {x < −(bℓ + s)/2} for −ε₀ ≤ ℓ < ε₀, empty for ℓ ≥ ε₀, everything for ℓ < −ε₀
({L ≥ ℓ} likewise with the ends ε₀ and −ε₀ moved to the other side). Under Q, −L has the law of L under
P: one PLD for both directions.

**Curve** (e.g. Koskela, Jälkö, Honkela 2020, Section 6; it follows from Neyman–Pearson with the cut
above): for −ε₀ ≤ ε ≤ ε₀

    δ(ε) = 1 − e^{(ε − ε₀)/2},

δ(ε) = 0 for ε ≥ ε₀ and δ(ε) = 1 − e^ε for ε ≤ −ε₀.

**Events.** dp_accounting's ``LaplaceDpEvent(noise_multiplier)`` is ``Laplace(noise_multiplier, 1)``
under ADD_OR_REMOVE_ONE and REPLACE_SPECIAL (``pld_privacy_accountant.py`` lines 95-116:
``from_laplace_mechanism(parameter=noise_multiplier)``, sensitivity 1 by default); REPLACE_ONE is refused
there and is not modelled here either.

**Discretisation** (:meth:`Laplace.discretized`): not the rounding of losses of :mod:`rdp_verify.pld.rounding`
(first order in h: every use's loss moves by up to h) but the pairs the SGM steps get
(:func:`rdp_verify.pld.pairs.curve_pairs`): the dominating pair interpolates the curve
H(x) = δ(log x) = 1 − e^{−ε₀/2}·√x (between the kinks e^{±ε₀}) at the grid points x_k = e^{kh} (connect the dots,
Doroshenko et al. 2022, PoPETs), the dominated pair lowers each chord by what the curvature H'' = e^{−ε₀/2}/(4x^{3/2})
or the tangents allow and takes a verified convex hull (:class:`LaplaceCurve`); both are second order in h. Where ε₀ is
a multiple of h the kinks are grid points and both pairs are exact there (the atoms keep their losses: a run of
leaves only takes such steps, :func:`rdp_verify.curves.accountant.aligned` with :meth:`Laplace.grid_unit`); otherwise a
kink falls inside a cell, held by the tangent bounds alone (first order at the atoms, still proven). The loss is
bounded: the grid spans [−ε₀, ε₀] and one cell beyond, nothing is cut. Poisson-sampled Laplace
(:mod:`rdp_verify.mechanisms.sampled_laplace`) still rounds its losses.

**Rényi DP** (:func:`laplace_rdp`; Mironov 2017, *Rényi Differential Privacy*, Proposition 6, with ε₀ = s/b): for
α > 1, both orders (the pair is symmetric),

    ε_α = (1/(α − 1))·log( α/(2α − 1)·e^{(α−1)ε₀} + (α − 1)/(2α − 1)·e^{−αε₀} )
        = ε₀ + log1p( (α − 1)·expm1(−(2α − 1)ε₀)/(2α − 1) )/(α − 1),

the second form (factor e^{(α−1)ε₀} out) free of the cancellation of log S near S = 1 as α → 1. Evaluated in Arb
from exact rationals: the ball contains ε_α.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from flint import arb, ctx, fmpq

from ..foundations.inputs import InputError
from ..foundations.results import to_arb
from ..pld.compose import PLD
from ..pld.grid import Grid, precision
from ..pld.pairs import curve_pairs
from ..pld.rounding import ABOVE, BELOW, MAX_POINTS, Cut, MonotonePair, exact_cut
from .base import Mechanism, check_direction, check_positive

__all__ = ["Laplace", "LaplaceCurve", "LaplacePair", "laplace_cdf", "laplace_rdp", "PROOF"]


def laplace_cdf(x: arb, centre: Fraction, b: Fraction) -> arb:
    """A ball containing the CDF of Lap(centre, b) at the exact point x: e^{d}/2 for d = (x − centre)/b ≤ 0,
    1 − e^{−d}/2 for d ≥ 0 (both formulas where the sign of d is undecided: they agree at d = 0)."""
    d = (x - to_arb(centre)) / to_arb(b)
    left, right = None, None
    if not d > 0:
        left = d.exp() / 2
    if not d < 0:
        right = 1 - (-d).exp() / 2
    if left is None:
        return right
    return left if right is None else left.union(right)


def laplace_rdp(epsilon0: Fraction, alpha: Fraction) -> arb:
    """A ball (at the working precision) containing the Rényi divergence of order α > 1 of Lap(−s, b) from Lap(0, b),
    ε₀ = s/b, either order: Mironov 2017, Proposition 6, in the cancellation-free form of the module docstring."""
    a, e0 = Fraction(alpha), Fraction(epsilon0)
    x = to_arb(a - 1) * (-to_arb(e0 * (2 * a - 1))).expm1() / to_arb(2 * a - 1)
    return to_arb(e0) + x.log1p() / to_arb(a - 1)


class LaplacePair(MonotonePair):
    """P = Lap(−s, b), Q = Lap(0, b) (module docstring)."""

    def __init__(self, b: Fraction, sensitivity: Fraction):
        self.b, self.s = b, sensitivity

    def p_cdf(self, x: arb) -> arb:
        return laplace_cdf(x, -self.s, self.b)

    def q_cdf(self, x: arb) -> arb:
        return laplace_cdf(x, Fraction(0), self.b)

    def cut(self, level: Fraction, strict: bool) -> Cut:
        top = self.s / self.b
        if level > top or (strict and level == top):
            return BELOW, BELOW
        if level < -top or (not strict and level == -top):
            return ABOVE, ABOVE
        return exact_cut(-(self.b * level + self.s) / 2)

    def survival(self, direction: str, level: Fraction, strict: bool) -> arb:
        return self.survivals(direction, level, range(1, 2), strict)[0]

    def survivals(self, direction: str, h: Fraction, ks: range, strict: bool) -> list[arb]:
        """P(L > ℓ) (``strict``) or P(L ≥ ℓ) at ℓ = k·h in closed form: 0 above ε₀ (from ε₀ on if strict), 1 below
        −ε₀ (from −ε₀ down if not strict), 1 − e^{(ℓ − ε₀)/2}/2 between (the atom 1/2 at ε₀, the continuous part and
        the atom e^{−ε₀}/2 at −ε₀: module docstring). The same in both directions (−L under Q has the law of L under
        P). The cases are decided in exact integers; one exponential of an exact rational per level."""
        e0 = self.s / self.b
        en, ed, hn, hd = e0.numerator, e0.denominator, h.numerator, h.denominator
        top, den = en * hd, 2 * hd * ed  # ℓ − ε₀ = (k·hn·ed − top)/(hd·ed)
        out = []
        for k in ks:
            kk = k * hn * ed
            if kk > top or (strict and kk == top):
                out.append(arb(0))
            elif kk < -top or (not strict and kk == -top):
                out.append(arb(1))
            else:
                out.append(1 - arb(fmpq(kk - top, den)).exp() / 2)
        return out


class LaplaceCurve:
    """The curve H(x) = δ(log x) = E_Q[(dP/dQ − x)_+] of the Laplace pair (module docstring) on the grid x_k = e^{kh},
    for the dominating and dominated pairs of :func:`rdp_verify.pld.pairs.curve_pairs`: with c = e^{−ε₀/2},

        H(x) = 1 − x (x ≤ e^{−ε₀}),   1 − c·√x (e^{−ε₀} ≤ x ≤ e^{ε₀}),   0 (x ≥ e^{ε₀}),

    G(x) = H(x) − (1 − x) = √x·(√x − c) in the middle, H' = −c/(2√x), G' = H' + 1, and H'' = c/(4x^{3/2}) between the
    kinks e^{±ε₀} (the atoms at ±ε₀), 0 outside. The piece of a grid point is decided exactly (kh against ±ε₀,
    rationals). At a kink (kh = ±ε₀) the value is the side piece's (exact there: H is continuous) and the slope the
    union of both one-sided slopes: its lower end is ≤ the right derivative and its upper end ≥ the left
    one, so the tangent bounds of both adjacent cells stay valid (H is convex). A cell with a kink strictly inside
    gets curvature +∞ (only its tangent bounds then hold the lowered chord below H)."""

    q_exact = Fraction(1)  # t = x − (1 − q_exact) = x, unused

    def __init__(self, epsilon0: Fraction, h: Fraction, prec: int):
        self.prec = prec
        ratio = Fraction(epsilon0) / Fraction(h)  # kh against ±ε₀ is k·den against ±num: whole numbers
        self.num, self.den = ratio.numerator, ratio.denominator
        with ctx.workprec(prec):
            self.c = (-to_arb(epsilon0) / 2).exp()

    def _pieces(self, k: int) -> tuple[int, ...]:
        """The pieces (0: left, 1: middle, 2: right) whose closed interval holds the loss kh."""
        x = k * self.den
        if x < -self.num:
            return (0,)
        if x == -self.num:
            return (0, 1)
        if x < self.num:
            return (1,)
        return (1, 2) if x == self.num else (2,)

    def values(self, x: arb, g_side: bool, t: arb | None = None, k: int | None = None) -> tuple[arb, arb]:
        """(G(x), G'(x)) if ``g_side`` else (H(x), H'(x)) at the grid point x = e^{kh} (``k`` needed)."""
        if k is None:
            raise ValueError("LaplaceCurve.values needs the grid index k")
        with ctx.workprec(self.prec):
            value = slope = None
            for piece in self._pieces(k):
                if piece == 0:
                    v, d = (arb(0), arb(0)) if g_side else (1 - x, arb(-1))
                elif piece == 1:
                    root = x.sqrt()
                    v = root * (root - self.c) if g_side else 1 - self.c * root
                    d = -self.c / (2 * root) + (1 if g_side else 0)
                else:
                    v, d = (x - 1, arb(1)) if g_side else (arb(0), arb(0))
                # at a kink the side piece's value is exact (and the middle formula's equal to it)
                value, slope = (v, d) if value is None else (value if piece == 1 else v, slope.union(d))
            return value, slope

    def curvature_bound(self, x_lo: arb, x_hi: arb, ks: tuple[int, int] | None = None) -> arb:
        """An exact upper bound of sup H'' on the open cell (x_lo, x_hi) between the grid points of indices ``ks``:
        0 on a side piece, c/(4·x_lo^{3/2}) within the middle (H'' decreases), +∞ with a kink strictly inside."""
        if ks is None:
            raise ValueError("LaplaceCurve.curvature_bound needs the grid indices")
        lo, hi = ks[0] * self.den, ks[1] * self.den
        with ctx.workprec(self.prec):
            if hi <= -self.num or lo >= self.num:
                return arb(0)
            if lo >= -self.num and hi <= self.num:
                return (self.c / (4 * x_lo * x_lo.sqrt())).upper()
            return arb.pos_inf()


# what a certificate of a run with Laplace names as its discretisation's proof (the text is sealed: keep it verbatim)
PROOF = ("Laplace: connect-the-dots dominating pairs and lowered-chord dominated pairs of its curve "
         "H(x) = 1 - e^(-eps0/2)*sqrt(x) between its kinks e^(-eps0), e^(eps0) (rdp_verify.mechanisms.laplace."
         "LaplaceCurve and rdp_verify.curves.discretize; Doroshenko et al. 2022; Blackwell), second order in "
         "the grid step, instead of rounded losses")


@dataclass(frozen=True)
class Laplace(Mechanism):
    """The Laplace mechanism with noise scale ``b`` (dp_accounting's ``parameter`` / ``noise_multiplier``) and
    sensitivity ``sensitivity`` (exact, > 0)."""

    b: Fraction
    sensitivity: Fraction = Fraction(1)
    symmetric: ClassVar[bool] = True
    order: ClassVar[int] = 2  # its pairs' error is second order in h (:meth:`discretized`)
    proof: ClassVar[tuple[str, str]] = ("laplace", PROOF)

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", check_positive(self.b, "b"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))

    @property
    def epsilon0(self) -> Fraction:
        """ε₀ = s/b, the largest loss (the mechanism is (ε₀, 0)-DP)."""
        return self.sensitivity / self.b

    def pair(self) -> LaplacePair:
        return LaplacePair(self.b, self.sensitivity)

    def loss_scale(self) -> Fraction:
        return self.epsilon0

    def discretized(self, direction: str, h: Fraction, bits: int, tail: Fraction) -> tuple[PLD, PLD]:
        """(upper, lower) on h·ℤ: the connect-the-dots dominating pair and the lowered-chord dominated pair of the
        curve (:class:`LaplaceCurve`; :func:`rdp_verify.pld.pairs.curve_pairs`, Doroshenko et al. 2022),
        second order in h, instead of rounding every loss (first order). The grid spans [−ε₀, ε₀] and one cell
        beyond each end, where H is linear: nothing is cut (``tail`` unused). Both directions are this PLD (the pair
        is symmetric)."""
        check_direction(direction)
        e0 = self.epsilon0
        k_hi = -((-e0) // h) + 1  # ⌈ε₀/h⌉ + 1
        grid = Grid(h, -k_hi, k_hi)
        if grid.size > MAX_POINTS:
            raise InputError(f"the grid would have {grid.size} points, beyond the {MAX_POINTS} allowed: "
                             f"take a larger grid step h")
        prec = precision(bits, h)
        curve = LaplaceCurve(e0, h, prec)
        f = curve_pairs(curve, curve, grid, list(range(-k_hi, k_hi + 1)), bits, prec)
        return (PLD.from_masses(f["remove_upper"], -k_hi, f["remove_upper_inf"], bits, h, "up"),
                PLD.from_masses(f["remove_lower"], -k_hi, 0, bits, h, "down"))

    def grid_unit(self) -> Fraction:
        """ε₀: on a grid step dividing it the atoms ±ε₀ (the curve's kinks) are grid points and both pairs are exact
        there (:meth:`discretized`); the accountant aligns a run of leaves to it
        (:func:`rdp_verify.curves.accountant.aligned`)."""
        return self.epsilon0

    def loss_range(self) -> tuple[Fraction, Fraction]:
        """The loss lies in [−ε₀, ε₀]."""
        return -self.epsilon0, self.epsilon0

    def delta_exact(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing δ(ε) in closed form (module docstring), both directions (symmetric)."""
        check_direction(direction)
        epsilon, e0 = Fraction(epsilon), self.epsilon0
        with ctx.workprec(prec):
            if epsilon >= e0:
                return arb(0)
            if epsilon <= -e0:
                return 1 - to_arb(epsilon).exp()
            return 1 - (to_arb(epsilon - e0) / 2).exp()

    def rdp(self, alpha: Fraction) -> tuple[arb, arb]:
        """(remove, add) Rényi divergences of order α, balls at the working precision (:func:`laplace_rdp`)."""
        eps = laplace_rdp(self.epsilon0, alpha)
        return eps, eps
