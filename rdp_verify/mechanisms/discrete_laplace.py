"""The discrete Laplace mechanism f(D) + DLap(a) on ℤ with integer sensitivity s: a symmetric pair.

**Pair** (dp_accounting 0.6, ``pld/privacy_loss_mechanism.py``: ``AdditiveNoisePrivacyLoss`` lines
246-251, REMOVE: μ_upper(x) = μ(x + s), μ_lower(x) = μ(x); ``DiscreteLaplacePrivacyLoss`` lines
1434-1501, pmf μ(x) = tanh(a/2)·e^{−aabs(x)}, and ``_privacy_loss_without_subsampling_remove`` line 1571):

    P(x) = μ(x + s),   Q(x) = μ(x)   (x ∈ ℤ),   L(x) = a·(abs(x) − abs(x + s)),

non-increasing in x, with the finitely many values a·(s − 2j), j = 0, …, s: L = as on x ≤ −s, −as on
x ≥ 0, −a(2x + s) in between. The cuts are half-integers: {L > ℓ} = {x ≤ ⌈y⌉ − 1} and
{L ≥ ℓ} = {x ≤ ⌊y⌋} with y = −(ℓ/a + s)/2 for −as ≤ ℓ ≤ as (exact rationals), and the CDF of DLap is
geometric: F(n) = e^{an}/(1 + e^{−a}) for n ≤ 0, 1 − e^{−a(n+1)}/(1 + e^{−a}) for n ≥ 0. Under Q, −L has
the law of L under P (reflect x ↦ −x − s): one PLD for both directions.

**Curve** (sum over the loss atoms, exact): with P_j, Q_j the masses of the atom L_j,

    δ(ε) = Σ_{L_j > ε} (P_j − e^ε·Q_j),

P = 1/(1 + e^{−a}), Q = e^{−as}/(1 + e^{−a}) at L = as (x ≤ −s); the mirror image at L = −as (x ≥ 0);
P = tanh(a/2)·e^{−a(x+s)}, Q = tanh(a/2)·e^{ax} at x = −s + 1, …, −1.

**Events.** dp_accounting's ``DiscreteLaplaceDpEvent(noise_parameter a, sensitivity s)`` under
ADD_OR_REMOVE_ONE and REPLACE_SPECIAL (``pld_privacy_accountant.py`` lines 117-139,
``from_discrete_laplace_mechanism(parameter=a, sensitivity=s)``); REPLACE_ONE is refused there.

**Rounding**: :mod:`rdp_verify.pld.rounding`; the losses are exact rationals, so an atom lands
exactly on its rounded grid point, and the loss is bounded: nothing is cut.

**Rényi DP** (:func:`discrete_laplace_rdp`, derived here): for α > 1, Σ_x P(x)^α Q(x)^{1−α} =
tanh(a/2)·Σ_{x∈ℤ} e^{−a(α·abs(x + s) + (1 − α)·abs(x))} splits into three geometric series: x ≥ 0 gives
e^{−aαs}/(1 − e^{−a}), x ≤ −s gives e^{a(α−1)s}/(1 − e^{−a}), and x = −j (0 < j < s) gives e^{−aαs}·e^{a(2α−1)j}.
Factoring out e^{a(α−1)s} (write c = a(2α − 1)):

    ε_α = as + log T/(α − 1),   T = (1 + e^{−cs})/(1 + e^{−a}) + tanh(a/2)·(−expm1(−c(s − 1)))/expm1(c),

every term bounded (T ≤ 1, so ε_α ≤ as, the pure-DP bound), s − 1 terms of the middle sum in closed form. At s = 1
the middle term vanishes. Both orders are equal (the pair is symmetric). Evaluated in Arb from exact rationals; the
ball contains ε_α. (The tests hold it against mpmath sums over ℤ.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from flint import arb, ctx

from ..foundations.results import to_arb
from ..pld.rounding import ABOVE, BELOW, Cut, MonotonePair, exact_cut
from .base import Mechanism, check_direction, check_positive, check_whole

__all__ = ["DiscreteLaplace", "DiscreteLaplacePair", "discrete_laplace_rdp", "dlap_cdf"]


def dlap_cdf(x: arb, centre: int, a: Fraction) -> arb:
    """A ball containing P(X ≤ x) for X ~ DLap(a) + centre at the exact point x."""
    n = int(x.floor().unique_fmpz()) - centre
    e = (-to_arb(a)).exp()
    if n <= 0:
        return (to_arb(a) * n).exp() / (1 + e)
    return 1 - (-to_arb(a) * (n + 1)).exp() / (1 + e)


def discrete_laplace_rdp(a: Fraction, sensitivity: int, alpha: Fraction) -> arb:
    """A ball (at the working precision) containing the Rényi divergence of order α > 1 of DLap(a) − s from DLap(a),
    either order (module docstring's closed form)."""
    a, s, alpha = Fraction(a), int(sensitivity), Fraction(alpha)
    c = to_arb(a * (2 * alpha - 1))
    t = (1 + (-c * s).exp()) / (1 + (-to_arb(a)).exp())
    if s > 1:
        t += (to_arb(a) / 2).tanh() * -(-c * (s - 1)).expm1() / c.expm1()
    return to_arb(a * s) + t.log() / to_arb(alpha - 1)


class DiscreteLaplacePair(MonotonePair):
    """P = DLap(a) − s, Q = DLap(a) on ℤ (module docstring)."""

    def __init__(self, a: Fraction, sensitivity: int):
        self.a, self.s = a, sensitivity

    def p_cdf(self, x: arb) -> arb:
        return dlap_cdf(x, -self.s, self.a)

    def q_cdf(self, x: arb) -> arb:
        return dlap_cdf(x, 0, self.a)

    def cut(self, level: Fraction, strict: bool) -> Cut:
        top = self.a * self.s
        if level > top or (strict and level == top):
            return BELOW, BELOW
        if level < -top or (not strict and level == -top):
            return ABOVE, ABOVE
        y = -(level / self.a + self.s) / 2
        m = math.ceil(y) - 1 if strict else math.floor(y)
        return exact_cut(Fraction(2 * m + 1, 2))


@dataclass(frozen=True)
class DiscreteLaplace(Mechanism):
    """DLap noise with parameter ``a`` (dp_accounting's ``noise_parameter``, exact > 0) and integer
    ``sensitivity`` ≥ 1."""

    a: Fraction
    sensitivity: int = 1
    symmetric: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", check_positive(self.a, "a"))
        check_whole(self.sensitivity, "sensitivity", 1)

    def pair(self) -> DiscreteLaplacePair:
        return DiscreteLaplacePair(self.a, self.sensitivity)

    def loss_scale(self) -> Fraction:
        return self.a * self.sensitivity

    def loss_range(self) -> tuple[Fraction, Fraction]:
        """The loss lies in [−as, as]."""
        return -self.a * self.sensitivity, self.a * self.sensitivity

    def atoms(self) -> list[tuple[Fraction, arb, arb]]:
        """(loss, P-mass ball, Q-mass ball) of every loss atom (call under a working precision)."""
        a, s = to_arb(self.a), self.sensitivity
        norm = 1 + (-a).exp()
        z = (1 - (-a).exp()) / norm  # tanh(a/2)
        out = [(self.a * s, 1 / norm, (-a * s).exp() / norm), (-self.a * s, (-a * s).exp() / norm, 1 / norm)]
        out += [(-self.a * (2 * x + s), z * (-a * (x + s)).exp(), z * (a * x).exp()) for x in range(-s + 1, 0)]
        return out

    def delta_exact(self, epsilon: Fraction, prec: int, direction: str = "remove") -> arb:
        """A ball containing δ(ε), summed over the loss atoms (module docstring), both directions (symmetric)."""
        check_direction(direction)
        epsilon = Fraction(epsilon)
        with ctx.workprec(prec):
            x = to_arb(epsilon).exp()
            return sum((p - x * q for loss, p, q in self.atoms() if loss > epsilon), arb(0))

    def rdp(self, alpha: Fraction) -> tuple[arb, arb]:
        """(remove, add) Rényi divergences of order α, balls at the working precision (:func:`discrete_laplace_rdp`)."""
        eps = discrete_laplace_rdp(self.a, self.sensitivity, alpha)
        return eps, eps
