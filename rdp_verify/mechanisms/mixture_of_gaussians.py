"""The mixture-of-Gaussians mechanism: Gaussian noise N(0, σ²) with a random sensitivity c_i w.p. p_i.

**Pair** (dp_accounting 0.6, ``pld/privacy_loss_mechanism.py``, ``MixtureGaussianPrivacyLoss`` lines
2020-2160: REMOVE μ_upper(x) = Σ_i p_i·μ(x + c_i), μ_lower(x) = μ(x); ADD μ_upper = μ,
μ_lower(x) = Σ_i p_i·μ(x − c_i)):

    remove:  P = Σ_i p_i·N(−c_i, σ²),   Q = N(0, σ²),
    add:     P = N(0, σ²),   Q = Σ_i p_i·N(c_i, σ²)   (reflected x ↦ −x: the remove pair swapped),

    L(x) = log Σ_i p_i·e^{−c_i(2x + c_i)/(2σ²)},   L′(x) = −(1/σ²)·Σ_i p_i c_i e^{…} / Σ_i p_i e^{…} < 0,

strictly decreasing when every c_i ≥ 0 and some c_i > 0 with p_i > 0 (the mechanism's own requirement,
lines 2125-2130; a negative sensitivity is refused: the loss is then not monotone and the cut argument
of :mod:`rdp_verify.pld.rounding` does not apply). L decreases from +∞ to log p₀ (p₀ = Σ_{c_i = 0}
p_i; −∞ if there is none), so {L > ℓ} = {x < t(ℓ)} with t(ℓ) the root of L(t) = ℓ for ℓ > log p₀, and
everything for ℓ ≤ log p₀. The root has no closed form: it is bracketed by a safeguarded Newton
iteration on Arb midpoints and verified in Arb (L(a) > ℓ > L(b) proven), and the cell probabilities
are bounded over the bracket (outward for upper bounds, inward for lower ones). Both directions
differ unless one sensitivity carries all the probability (the Gaussian mechanism).

**Curve**: no closed form; :meth:`MixtureOfGaussians.hockey_stick` encloses δ(ε) by Neyman–Pearson at
the bracketed root (P(X < t) − e^ε·Q(X < t)).

**Events.** dp_accounting's ``MixtureOfGaussiansDpEvent(standard_deviation, sensitivities,
sampling_probs)`` under ADD_OR_REMOVE_ONE and REPLACE_SPECIAL (``pld_privacy_accountant.py`` lines
140-165, ``from_mixture_gaussian_mechanism``, which keeps REMOVE and ADD PLDs,
``privacy_loss_distribution.py`` lines 1060-1120). Probabilities here must add up to 1 exactly;
zero-probability entries are dropped, as dp_accounting does.

**Rounding**: :mod:`rdp_verify.pld.rounding`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, Sequence

from flint import arb, ctx

from ..foundations.inputs import InputError, short_text
from ..foundations.normal import phi
from ..foundations.results import to_arb
from ..pld.rounding import ABOVE, BELOW, Cut, MonotonePair
from .base import Mechanism, _exact, check_positive

__all__ = ["MixtureOfGaussians", "MixturePair"]

_MAX_ITERATIONS = 400


def _point(x: arb) -> arb:
    return arb(x.mid())


class MixturePair(MonotonePair):
    """P = Σ p_i N(−c_i, σ²), Q = N(0, σ²) (module docstring); roots cached per level."""

    continuous_loss = True

    def __init__(self, sigma: Fraction, sensitivities: Sequence[Fraction], probs: Sequence[Fraction]):
        self.sigma, self.c, self.p = sigma, tuple(sensitivities), tuple(probs)
        self.p0 = sum((p for c, p in zip(self.c, self.p) if c == 0), Fraction(0))
        self.cache: dict[Fraction, Cut] = {}
        self.last: arb | None = None
        self.balls: tuple | None = None
        self.recent: tuple | None = None  # (precision, x, loss(x)) of the last exact point evaluated

    def _constants(self) -> tuple[arb, list[tuple[arb, arb]]]:
        """(σ, [(c_i, p_i)]) as balls at the current precision (computed once per precision)."""
        if self.balls is None or self.balls[0] != ctx.prec:
            self.balls = (ctx.prec, to_arb(self.sigma), [(to_arb(c), to_arb(p)) for c, p in zip(self.c, self.p)])
        return self.balls[1], self.balls[2]

    def p_cdf(self, x: arb) -> arb:
        s, terms = self._constants()
        return sum((p * phi((x + c) / s) for c, p in terms), arb(0))

    def q_cdf(self, x: arb) -> arb:
        s, _ = self._constants()
        return phi(x / s)

    def loss(self, x: arb) -> tuple[arb, arb]:
        """Balls for L(x) and L′(x) (the last exact point's kept: the root search asks for it again)."""
        recent = self.recent
        if recent is not None and recent[0] == ctx.prec and recent[1] == x:  # == : both exact and equal
            return recent[2]
        out = self._loss(x)
        if x.is_exact():
            self.recent = (ctx.prec, x, out)
        return out

    def _loss(self, x: arb) -> tuple[arb, arb]:
        s, terms = self._constants()
        two_var = 2 * s * s
        weights = [(c, p * (-(c * (2 * x + c)) / two_var).exp()) for c, p in terms]
        total = sum((w for _, w in weights), arb(0))
        slope = -2 * sum((c * w for c, w in weights), arb(0)) / (two_var * total)
        return total.log(), slope

    def _guess(self, level: arb) -> arb:
        if self.last is not None:
            return self.last
        c, p = max(zip(self.c, self.p))
        s2 = to_arb(self.sigma) ** 2
        return _point(-s2 * (level - to_arb(p).log()) / to_arb(c) - to_arb(c) / 2)

    def _sign(self, x: arb, level: arb) -> int:
        """+1 if L(x) > level proven, −1 if L(x) < level proven, 0 if undecided."""
        d = self.loss(x)[0] - level
        return 1 if d > 0 else (-1 if d < 0 else 0)

    def _bracket(self, level: arb) -> Cut:
        """Exact points a < b with L(a) > level > L(b), b − a tiny (module docstring)."""
        x = self._guess(level)
        tol = _point((to_arb(self.sigma) + x.abs_upper()) * arb(2) ** -(ctx.prec - 24))  # far below 2^−bits
        sign = self._sign(x, level)
        step = _point(to_arb(self.sigma))
        a = b = None
        if sign >= 0:
            a = x if sign > 0 else None
            y = x
            while True:  # walk right until L < level
                y = _point(y + step)
                s = self._sign(y, level)
                if s < 0:
                    b = y
                    break
                if s > 0:
                    a = y
                step = _point(step * 2)
            if a is None:
                a = _point(x - step)
                while self._sign(a, level) <= 0:
                    a = _point(a - step)
                    step = _point(step * 2)
        else:
            b = x
            y = x
            while True:
                y = _point(y - step)
                s = self._sign(y, level)
                if s > 0:
                    a = y
                    break
                if s < 0:
                    b = y
                step = _point(step * 2)
        x = _point((a + b) / 2)
        for _ in range(_MAX_ITERATIONS):
            if not b - a > tol:
                break
            value, slope = self.loss(x)
            newton = _point(x - _point(value - level) / _point(slope)) if slope < 0 else None
            if newton is None or not (a < newton < b):
                newton = _point((a + b) / 2)
            if (newton - x).abs_upper() < tol:  # close in: a bracket of width 2·tol around the Newton point
                lo, hi = _point(newton - tol), _point(newton + tol)
                if a < lo and self._sign(lo, level) > 0:
                    a = lo
                if hi < b and self._sign(hi, level) < 0:
                    b = hi
            s = self._sign(newton, level)
            if s > 0:
                a = newton
            elif s < 0:
                b = newton
            else:  # undecided: the root is within rounding of newton
                lo, hi = _point(newton - tol), _point(newton + tol)
                if self._sign(lo, level) > 0 and self._sign(hi, level) < 0:
                    a, b = lo, hi
                    break
            x = newton if a <= newton <= b else _point((a + b) / 2)
        self.last = _point((a + b) / 2)
        return a, b

    def cut(self, level: Fraction, strict: bool) -> Cut:
        if level not in self.cache:
            lv = to_arb(level)
            if self.p0 > 0:
                margin = lv.exp() - to_arb(self.p0) if level else to_arb(1 - self.p0)
                if margin <= 0:
                    self.cache[level] = (ABOVE, ABOVE)
                    return self.cache[level]
                if not margin > 0:  # ℓ within rounding of log p₀: the root may be anywhere to the right
                    self.cache[level] = (BELOW, ABOVE)
                    return self.cache[level]
            self.cache[level] = self._bracket(lv)
        return self.cache[level]


@dataclass(frozen=True)
class MixtureOfGaussians(Mechanism):
    """Gaussian noise of standard deviation ``sigma`` with sensitivity ``sensitivities[i]`` with probability
    ``sampling_probs[i]`` (exact rationals; sensitivities ≥ 0, one positive; probabilities adding up to 1)."""

    sigma: Fraction
    sensitivities: tuple[Fraction, ...]
    sampling_probs: tuple[Fraction, ...]
    no_rdp: ClassVar[str] = ("MixtureOfGaussiansDpEvent has no proven Renyi DP here (the add direction puts the "
                             "mixture in the denominator: no finite sum or closed form; rdp-verify dp --event brackets "
                             "its privacy curve)")

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        c = tuple(_exact(x, "sensitivities") for x in self.sensitivities)
        p = tuple(_exact(x, "sampling_probs") for x in self.sampling_probs)
        if len(c) != len(p) or not c:
            raise InputError(f"sensitivities and sampling_probs must have the same positive length, got {len(c)} "
                             f"and {len(p)}")
        if any(x < 0 for x in c):
            raise InputError(f"sensitivities={[short_text(x) for x in c]} contains a negative value: the loss "
                             f"would not be monotone (not supported)")
        if any(x < 0 or x > 1 for x in p):
            raise InputError(f"sampling_probs={[short_text(x) for x in p]} must lie in [0, 1]")
        if sum(p) != 1:
            raise InputError(f"sampling_probs add up to {short_text(sum(p))}, not exactly 1")
        kept = [(x, y) for x, y in zip(c, p) if y > 0]
        if not any(x > 0 for x, _ in kept):
            raise InputError("sensitivities: at least one positive sensitivity with positive probability is needed")
        object.__setattr__(self, "sensitivities", tuple(x for x, _ in kept))
        object.__setattr__(self, "sampling_probs", tuple(y for _, y in kept))

    def is_symmetric(self) -> bool:
        return len(self.sensitivities) == 1  # the Gaussian mechanism

    def pair(self) -> MixturePair:
        return MixturePair(self.sigma, self.sensitivities, self.sampling_probs)

    def loss_scale(self) -> Fraction:
        """(Σ p_i c_i)/σ: the mean sensitivity over σ (a heuristic)."""
        return sum((c * p for c, p in zip(self.sensitivities, self.sampling_probs)), Fraction(0)) / self.sigma
