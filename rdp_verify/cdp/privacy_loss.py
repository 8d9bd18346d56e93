"""The privacy-loss random variable of the Gaussian mechanism and of the SGM, proven.

**Definition.** For adjacent S, S' the privacy loss at an outcome z is
c(z) = log P_S(z)/P_S'(z), with z ~ M(S) (Mironov–Talwar–Zhang 2019, eq. (13);
Dwork–Rothblum 2016, Definition 3.1). Its moment generating function is

    M_λ = E_{z~M(S)}[e^{λ c(z)}] = E_{z~M(S')}[(P_S/P_S')^{λ+1}] = exp(λ · D_{λ+1}(M(S) ‖ M(S'))),

which is eq. (14) of MTZ19. (The paper prints D_{λ+1}(M(S') ‖ M(S)); the middle
expression, the paper's own second line, is the order (P_S/P_S') under M(S'), i.e.
D_{λ+1}(M(S) ‖ M(S')) by Definition 1. Adjacency is symmetric, so every check below
covers both directions and the slip does not change any verdict.)

**SGM.** With μ0 = N(0, σ²), μ = (1 − q)μ0 + qN(1, σ²) and w = μ/μ0 (Section 3),
one log-convex function carries everything: K(γ) = log E_{μ0}[w^γ], K(0) = K(1) = 0,
K(α) = log A_α and K(1 − α) = log B_α (Theorem 4). The two directions are

* ``"mu||mu0"``: L = log w(Z), Z ~ μ.   log E[e^{λL}] = K(1 + λ),  E[L] = K'(1) = KL(μ‖μ0);
* ``"mu0||mu"``: L = −log w(Z), Z ~ μ0. log E[e^{λL}] = K(−λ),     E[L] = −K'(0) = KL(μ0‖μ).

K(γ) is enclosed by :func:`rdp_verify.methods.rigorous.enclose` (γ ∉ [0, 1]) and
:func:`rdp_verify.methods.rigorous.partial_moment` (γ ∈ (0, 1)), both Arb ball arithmetic.
q = 1 is the Gaussian mechanism: K(γ) = γ(γ − 1)/(2σ²) exactly, and L ~ N(1/(2σ²), 1/σ²)
in both directions (DR16 Theorem 3.2, with τ = Δ/σ; σ here is the noise multiplier
σ_noise/Δ, so a sensitivity Δ enters as σ/Δ, see :func:`gaussian`).

**KL.** K is convex, so its chords sandwich the slopes at 0 and 1: for h ∈ (0, 1),

    −K(1 − h)/h ≤ KL(μ‖μ0) ≤ K(1 + h)/h,      −K(h)/h ≤ KL(μ0‖μ) ≤ K(−h)/h,

i.e. D_{1−h} ≤ KL ≤ D_{1+h} (monotonicity of Rényi divergence in the order, van Erven
and Harremoës 2014, Theorem 3). The width is about h·Var(L); we take h = 10^−dps.

**Distribution.** log w is increasing in z (w = 1 − q + q·exp((2z − 1)/(2σ²))), so the
CDF of each loss is a closed form in Φ, enclosed in Arb by :meth:`SGMLoss.cdf`.

**Analytic bounds** used for the tails of the CDP checks (each a short proof):

* K(γ) ≥ γ log q + γ(γ − 1)/(2σ²) for γ ≥ 0 (w ≥ q r with r = μ1/μ0, E_{μ0}[r^γ] = e^{γ(γ−1)/(2σ²)});
* K(γ) ≤ γ log(1 − q) for γ ≤ 0 (w ≥ 1 − q, and w^γ is decreasing in w);
* for γ ≥ 1 and any t > 0 (convexity of x^γ, weights 1/(1+t), t/(1+t)):
  A_γ ≤ (1 + t)^{γ−1} q^γ e^{γ(γ−1)/(2σ²)} + (1 + 1/t)^{γ−1} (1 − q)^γ;
* curvature, :func:`curvature_bound`: K''(γ) = Var_{ν_γ}(log w) for the tilted law
  ν_γ ∝ μ0 w^γ, bounded by the Brascamp–Lieb inequality (1976, Theorem 4.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from flint import arb, ctx

from ..foundations.inputs import SGM, InputError
from ..foundations.normal import phi
from ..foundations.results import Bounded, arb_to_bounded, to_arb
from ..methods.rigorous import enclose, partial_moment

__all__ = [
    "Direction",
    "DIRECTIONS",
    "SGMLoss",
    "gaussian",
    "curvature_bound",
    "to_arb",
    "log_bounded",
    "PARTIAL_DPS_MAX",
]

Direction = Literal["mu||mu0", "mu0||mu"]
DIRECTIONS: tuple[Direction, Direction] = ("mu||mu0", "mu0||mu")
PARTIAL_DPS_MAX = 300


def log_bounded(x: Bounded) -> Bounded:
    """Proven enclosure of log x for a positive interval x."""
    if x.lower <= 0:
        raise ArithmeticError("logarithm of an interval that is not positive")
    return arb_to_bounded((to_arb(x.value) + to_arb(x.error) * arb(0, 1)).log())


def _prec(dps: int) -> int:
    return math.ceil(dps * math.log2(10)) + 40


@dataclass
class SGMLoss:
    """The privacy loss of SG_{q,σ} (ℓ2-sensitivity 1) with proven moments, cached by γ.

    ``dps`` is the relative accuracy 10^−dps asked of each K(γ) enclosure.
    """

    q: Fraction
    sigma: Fraction
    dps: int = 20
    calls: int = 0  # enclosures computed so far (the unit of work of the searches)
    _cache: dict[Fraction, Bounded] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.q, Fraction) and isinstance(self.sigma, Fraction)):
            raise InputError("q and sigma must be exact Fractions (a float or int would leak into exact formulas)")
        if not (0 < self.q <= 1 and self.sigma > 0):
            raise InputError("need 0 < q <= 1 and sigma > 0")

    @property
    def gaussian(self) -> bool:
        return self.q == 1

    @property
    def s2(self) -> Fraction:
        return self.sigma * self.sigma

    # -- K(γ) = log E_{μ0}[w^γ] -----------------------------------------------------
    def k(self, gamma: Fraction) -> Bounded:
        """Proven enclosure of K(γ); exact for q = 1 and for γ ∈ {0, 1}."""
        gamma = Fraction(gamma)
        if self.gaussian or gamma in (0, 1):
            return Bounded(gamma * (gamma - 1) / (2 * self.s2), Fraction(0))
        if gamma not in self._cache:
            self.calls += 1
            if 0 < gamma < 1:
                self._cache[gamma] = self._k_inside(gamma)
            else:
                alpha = gamma if gamma > 1 else 1 - gamma
                enc = enclose(SGM(self.q, self.sigma, alpha), self.dps)
                self._cache[alpha] = arb_to_bounded(enc.log_a)
                self._cache[1 - alpha] = arb_to_bounded(enc.log_b)
        return self._cache[gamma]

    def _k_inside(self, gamma: Fraction) -> Bounded:
        """K(γ) for 0 < γ < 1 from the proven integral M(γ) = ∫ μ0 w^γ (≈ 1, so K ≈ M − 1).

        partial_moment is accurate to 10^−d absolutely; d grows until K has 10^−dps
        relative accuracy (K can be 1e-25 for tiny q).
        """
        carrier = SGM(self.q, self.sigma, Fraction(2))  # only q and σ are used
        digits = self.dps + 5
        while True:
            with ctx.workprec(_prec(digits)):
                value = log_bounded(partial_moment(carrier, gamma, None, None, digits))
            if value.upper < 0 and value.error <= abs(value.value) * Fraction(1, 10**self.dps):
                return value
            if digits >= PARTIAL_DPS_MAX:
                return value
            short = 0 if value.upper >= 0 else math.ceil(math.log10(value.error / abs(value.value))) + self.dps
            digits = min(PARTIAL_DPS_MAX, digits + max(short, 10) + 5)

    # -- divergences, MGF (eq. (14)), KL ----------------------------------------------
    def divergence(self, alpha: Fraction, direction: Direction) -> Bounded:
        """D_α(μ‖μ0) = K(α)/(α−1) or D_α(μ0‖μ) = K(1−α)/(α−1), α > 1."""
        if alpha <= 1:
            raise InputError("Rényi order must exceed 1")
        k = self.k(alpha) if direction == "mu||mu0" else self.k(1 - alpha)
        return k.scaled(1 / (alpha - 1))

    def epsilon(self, alpha: Fraction) -> Bounded:
        """ε_α = max of the two directions (Theorem 4): the RDP of one step at order α."""
        a, b = (self.divergence(alpha, d) for d in DIRECTIONS)
        lo, hi = max(a.lower, b.lower), max(a.upper, b.upper)
        return Bounded.between(lo, hi)

    def log_mgf(self, direction: Direction, lam: Fraction) -> Bounded:
        """log M_λ = log E[e^{λL}] = λ·D_{λ+1} for λ > 0 (eq. (14)); any real λ."""
        return self.k(1 + lam) if direction == "mu||mu0" else self.k(-lam)

    def centre(self, direction: Direction) -> Fraction:
        """The γ at which K is tangent to the loss mean: 1 for μ‖μ0, 0 for μ0‖μ."""
        return Fraction(1) if direction == "mu||mu0" else Fraction(0)

    def slope(self, direction: Direction) -> Bounded:
        """K'(c) at the centre c: KL(μ‖μ0) for μ‖μ0, −KL(μ0‖μ) for μ0‖μ (chord sandwich)."""
        if self.gaussian:
            return Bounded((2 * self.centre(direction) - 1) / (2 * self.s2), Fraction(0))
        h = Fraction(1, 10**self.dps)
        c = self.centre(direction)
        right = self.k(c + h).scaled(1 / h)  # chord to the right: ≥ K'(c)
        left = self.k(c - h).scaled(-1 / h)  # chord to the left: ≤ K'(c)
        lo, hi = left.lower, right.upper
        return Bounded.between(lo, hi)

    def mean(self, direction: Direction) -> Bounded:
        """E[L] = KL divergence of the direction (DR16 Definition 3.1)."""
        s = self.slope(direction)
        return s if direction == "mu||mu0" else Bounded(-s.value, s.error)

    # -- distribution ---------------------------------------------------------------
    def cdf(self, direction: Direction, ell: Fraction) -> arb:
        """Pr[L ≤ ℓ] in closed form (Arb ball).

        μ‖μ0: support (log(1−q), ∞); Pr = (1−q)Φ(z/σ) + qΦ((z−1)/σ) with
        z = 1/2 + σ² log((e^ℓ − 1 + q)/q), the point where log w(z) = ℓ.
        μ0‖μ: support (−∞, −log(1−q)); Pr = Φ̄(z'/σ) with z' the point where log w = −ℓ.
        q = 1: Φ((ℓ − 1/(2σ²))·σ) in both directions.
        """
        with ctx.workprec(_prec(self.dps)):
            sigma, s2, q = to_arb(self.sigma), to_arb(self.s2), to_arb(self.q)
            ell_a = to_arb(Fraction(ell))
            if self.gaussian:
                return phi((ell_a - 1 / (2 * s2)) * sigma)
            target = ell_a if direction == "mu||mu0" else -ell_a  # the value of log w
            excess = target.exp() - (1 - q)  # > 0 iff log w reaches the target
            if excess <= 0:  # log w > log(1−q) never equals it: Pr = 0 (μ‖μ0) or 1 (μ0‖μ)
                return arb(0) if direction == "mu||mu0" else arb(1)
            if not excess > 0:
                raise ArithmeticError("cannot decide whether ℓ is inside the support; raise dps")
            z = arb(0.5) + s2 * (excess / q).log()
            if direction == "mu||mu0":
                return (1 - q) * phi(z / sigma) + q * phi((z - 1) / sigma)
            return 1 - phi(z / sigma)


def gaussian(sigma: Fraction, sensitivity: Fraction = Fraction(1), dps: int = 20) -> SGMLoss:
    """The Gaussian mechanism N(f(x), σ²) with ℓ2-sensitivity Δ: the SGM with q = 1 and σ/Δ.

    Its loss is exactly N(τ²/2, τ²) with τ = Δ/σ (DR16 Theorem 3.2).
    """
    if sensitivity <= 0:
        raise InputError("sensitivity must be positive")
    return SGMLoss(Fraction(1), Fraction(sigma) / Fraction(sensitivity), dps)


def curvature_bound(q: Fraction, sigma: Fraction, lo: Fraction, hi: Fraction) -> Fraction | None:
    """A proven upper bound of sup K''(γ) over γ ∈ [lo, hi], or None where none is available.

    K''(γ) = Var_{ν_γ}(log w) with ν_γ ∝ μ0 w^γ ∝ e^{−V}. Writing u = (z − z1)/σ² and
    λ(z) = q r/w = 1/(1 + e^{−u}): (log w)' = λ/σ² and (log w)'' = λ(1−λ)/σ⁴ ∈ [0, 1/(4σ⁴)],
    so V'' = 1/σ² − γλ(1−λ)/σ⁴ ≥ κ := 1/σ² − max(γ, 0)/(4σ⁴). When κ > 0 the
    Brascamp–Lieb inequality Var(f) ≤ E[f'²/V''] gives K''(γ) ≤ E_{ν_γ}[λ²]/(σ⁴κ), and

        E_{ν_γ}[λ²] = q² E_{μ0}[r² w^{γ−2}]/M(γ) ≤ min(1, q² e^{1/σ²} (1−q)^{γ−2} / M(γ))

    (μ0 r² = e^{1/σ²} N(2, σ²); w ≥ 1 − q with γ ≤ 2), where M(γ) ≥ 1 outside (0, 1)
    (Jensen) and M(γ) ≥ (1 − q)^γ inside. q = 1: K'' = 1/σ² exactly.
    """
    s2 = sigma * sigma
    if q == 1:
        return 1 / s2
    denom = s2 - max(hi, Fraction(0)) / 4  # σ⁴κ at the worst γ
    if denom <= 0:
        return None
    ratio = Fraction(1)
    if hi <= 2:
        with ctx.workprec(128):
            m_low = (1 - to_arb(q)) ** to_arb(min(hi, Fraction(1))) if lo < 1 and hi > 0 else arb(1)
            bound = to_arb(q) ** 2 * (1 / to_arb(s2)).exp() * (1 - to_arb(q)) ** to_arb(lo - 2) / m_low
            upper = arb_to_bounded(bound).upper
        ratio = min(ratio, upper)
    return ratio / denom
