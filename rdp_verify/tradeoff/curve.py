"""The trade-off curve of a run and the figures derived from it, each a proven interval.

:func:`tradeoff` composes the run as ``rdp-verify dp`` does (the grid refined until the ε bracket at a
reference δ meets the tolerance; the reference δ is a thousandth of the smallest false-positive rate asked
about, so the dominating pairs' mass at +∞ stays far below every TPR reported) and returns a
:class:`TradeOff`, whose envelopes (:class:`rdp_verify.tradeoff.envelope.Envelopes`) give:

* **TPR at FPR**: the bracket [1 − f_up, 1 − f_low] of 1 − f(FPR) (Dong, Roth, Su 2022, Section 2.1). f is
  the symmetric trade-off function of the run's privacy curve (both directions), so f ≤ T(D', D) for every
  pair of neighbouring datasets and either order: no membership attack has a true-positive rate above
  1 − f_low at that false-positive rate. The lower end bounds the guarantee, not an attack: no proof about
  this run can promise a TPR below 1 − f_up (a particular attack's best TPR may be smaller);
* **advantage**: max_α (1 − α − f(α)) = δ(0) (the line of slope −1 supports f at the optimum; the total
  variation distance), bracketed by :func:`rdp_verify.curves.accountant.delta_bracket` at ε = 0;
* **Bayesian success** of guessing membership for a prior π, the best π·TPR + (1 − π)·(1 − FPR) the
  guarantee allows: 1 − p + p·δ(log((1 − p)/p)) with p = min(π, 1 − π) (convex duality of f and δ,
  Proposition 2.12 there, with f's symmetry for π > 1/2); δ is decreasing, so its bracket at the two
  rational ends of a ball around log((1 − p)/p) encloses it (the upper end bounds every attack, the lower
  end the guarantee, as for TPR);
* **the μ bracket** of the Gaussian-DP parameter μ* = inf{μ : f ≥ G_μ} (the run is μ-GDP exactly for
  μ ≥ μ*; Dong, Roth, Su 2022, Definition 2.7):

  - upper end: the no-amplification μ₀² = Σ Δ²T_i/σ_i² (every step is at most the Gaussian mechanism of
    sensitivity Δ; Corollary 3.3 there composes them);
  - lower end, **μ* = μ₀ exactly** for Poisson add/remove runs (every q > 0) and for shuffled and
    balls-in-bins runs under zero-out: the worst-case pair's "with the record" distribution is a mixture
    over which steps saw the record, and the component where it entered every step (Poisson: weight
    Π q_i^{T_i}; per epoch: one fixed position per epoch, weight Π t_i^{−E_i}, on the explicit pair of
    :mod:`rdp_verify.curves.per_epoch`) is the unamplified Gaussian mechanism against the same null
    N(0, σ²I). The Neyman–Pearson test of that component has type-I error α and, on the mixture, type-II
    error at most 1 − w·(1 − G_μ₀(α)), w the weight. For μ < μ₀, (1 − G_μ₀(α))/(1 − G_μ(α)) → ∞ as α → 0
    (Gaussian tails), so f(α) ≤ 1 − w(1 − G_μ₀(α)) < G_μ(α) for small α: the run is not μ-GDP. (So the
    central-limit μ that dp_accounting's ``get_gdp_parameter_estimate`` reports, "not guaranteed to be an
    upper or lower bound", is below μ* for any subsampled run.)
    Where μ* = μ₀ comes from the far tail (α far below any measurable rate), :meth:`TradeOff.mu_grid_lower`
    says how much of it the curve needs at α ≥ 1e-10 already (below).
  - lower end otherwise (replace-one, fixed-size batches): for any α, μ(α) = Φ⁻¹(1 − α) − Φ⁻¹(f_up(α))
    has G_μ(α) > f_up(α) ≥ f(α) for every μ < μ(α), so the run is not μ-GDP; the largest μ(α) over
    :data:`MU_ALPHAS` (α = 1/2 and a quarter-decade grid down to 1e-10), rounded down.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from flint import ctx

from ..curves.accountant import Curves, Mapper, bracket, delta_bracket, method_of
from ..curves.gaussian import GaussianCurve
from ..curves.options import DEFAULT_TOLERANCE
from ..curves.per_epoch import PerEpochBounds
from ..foundations.inputs import DELTA_MIN, InputError
from ..foundations.normal import inverse_phi
from ..foundations.results import lower_end, to_arb, upper_end
from ..foundations.run import Phase
from .envelope import Envelopes, PerEpochEnvelope, check_rate

__all__ = ["TradeOff", "tradeoff", "reference_delta", "DEFAULT_FPRS", "MU_ALPHAS", "check_rate", "check_prior",
           "bayes_epsilons"]

DEFAULT_FPRS = (Fraction(1, 10**5), Fraction(1, 10**3), Fraction(1, 100), Fraction(1, 10))
# α = 1/2 and m·10^−e (m = 1, 1.8, 3.2, 5.6; e = 1..10): about a quarter of a decade apart, down to 1e-10
MU_ALPHAS = (Fraction(1, 2),) + tuple(Fraction(m, 10) / 10**e for e in range(1, 11) for m in (56, 32, 18, 10))


def check_prior(value: Fraction) -> Fraction:
    """A prior probability of membership must lie in (0, 1)."""
    value = Fraction(value)
    if not 0 < value < 1:
        raise InputError(f"prior {value} must lie strictly between 0 and 1")
    return value


def reference_delta(fprs: Sequence[Fraction]) -> Fraction:
    """The δ whose ε bracket sets the grid: a thousandth of the smallest positive rate asked about (at most
    1e-8, at least the supported floor), so that the mass at +∞ is far below every TPR read off."""
    positive = [Fraction(a) for a in fprs if a > 0]
    smallest = min(positive, default=Fraction(1, 10**5))
    return max(min(smallest / 1000, Fraction(1, 10**8)), DELTA_MIN)


def bayes_epsilons(prior: Fraction) -> tuple[Fraction, Fraction]:
    """Rationals ε₋ ≤ log((1 − p)/p) ≤ ε₊ (p = min(π, 1 − π)), the ends of a 128-bit ball; both 0 at π = 1/2."""
    p = min(check_prior(prior), 1 - Fraction(prior))
    if p == Fraction(1, 2):
        return Fraction(0), Fraction(0)
    with ctx.workprec(128):
        log_odds = to_arb((1 - p) / p).log()
        return max(lower_end(log_odds), Fraction(0)), upper_end(log_odds)


@dataclass(frozen=True)
class TradeOff:
    """A run's proven trade-off envelopes and the figures derived from them (module docstring)."""

    phases: tuple[Phase, ...]
    curves: Curves | GaussianCurve | PerEpochBounds
    refinements: list[dict[str, Any]]
    envelopes: Envelopes

    @property
    def method(self) -> str:
        return method_of(self.curves)

    @property
    def leaves(self) -> tuple[tuple[Any, int], ...]:
        """Mechanisms beyond the Gaussian family composed with the phases (an event tree's leaves), with their uses."""
        return tuple(self.curves.leaves) if isinstance(self.curves, Curves) else ()

    def f(self, alpha: Fraction) -> tuple[Fraction, Fraction]:
        """Proven [f_low(α), f_up(α)]: no attack has type-II error below f_low at type-I error α."""
        return self.envelopes.bounds(check_rate(alpha, "alpha"))

    def f_lower(self, alpha: Fraction) -> Fraction:
        """f_low(α) alone (half the work of :meth:`f`)."""
        return self.envelopes.lower(check_rate(alpha, "alpha"))

    def tpr(self, fpr: Fraction) -> tuple[Fraction, Fraction]:
        """Proven [TPR_low, TPR_up] of the best test at false-positive rate ``fpr``: TPR = 1 − f(FPR)."""
        low, up = self.f(check_rate(fpr, "FPR"))
        return 1 - up, 1 - low

    def advantage(self) -> tuple[Fraction, Fraction | None]:
        """Proven bracket of max_α (1 − α − f(α)) = δ(0)."""
        b = delta_bracket(self.curves, Fraction(0))
        return b.lower, b.upper

    def bayes(self, prior: Fraction) -> tuple[Fraction, Fraction]:
        """Proven bracket of the best probability of guessing membership correctly, with prior ``prior``."""
        p = min(check_prior(prior), 1 - Fraction(prior))
        at_least, at_most = bayes_epsilons(prior)
        low = delta_bracket(self.curves, at_most).lower  # δ is decreasing: δ(log odds) ≥ δ_low(upper end)
        up = delta_bracket(self.curves, at_least).upper
        up = Fraction(1) if up is None else up
        return 1 - p + p * low, 1 - p + p * up

    def _mu_squared(self) -> Fraction:
        """μ₀² = Σ Δ²T_i/σ_i² (per epoch: Σ ⌈T_i/t_i⌉Δ²/σ_i²), exactly."""
        mu_squared = self.envelopes.mu_squared
        return GaussianCurve(self.phases).mu_squared if mu_squared is None else mu_squared

    def mu_upper(self) -> Fraction | None:
        """A proven upper end of μ* (module docstring): the no-amplification μ₀, rounded up; None for a run with
        leaves beyond the Gaussian family (μ₀ bounds the Gaussian steps only; no upper end is claimed)."""
        if self.leaves:
            return None
        with ctx.workprec(128):
            return upper_end(to_arb(self._mu_squared()).sqrt())

    @property
    def mu_exact(self) -> bool:
        """μ* is the no-amplification μ₀ (module docstring): q = 1, Poisson add/remove, or per-epoch zero-out."""
        if self.leaves:
            return False
        return all(p.neighbours == "add-remove" and p.sampler in ("poisson", "shuffle", "balls-in-bins")
                   for p in self.phases) or isinstance(self.curves, GaussianCurve)

    def mu_lower(self) -> Fraction:
        """A proven lower end of μ* (module docstring): μ₀ rounded down where μ* = μ₀ is proven, else the largest
        Φ⁻¹(1 − α) − Φ⁻¹(f_up(α)) over :data:`MU_ALPHAS`, rounded down."""
        if self.mu_exact:
            with ctx.workprec(128):
                return lower_end(to_arb(self._mu_squared()).sqrt())
        return self.mu_grid_lower()

    def mu_grid_lower(self) -> Fraction:
        """The largest Φ⁻¹(1 − α) − Φ⁻¹(f_up(α)) over :data:`MU_ALPHAS`, rounded down: below it, G_μ lies above f
        at some α ≥ 1e-10 (proven), so even restricted to those α the run is not μ-GDP."""
        best = Fraction(0)
        for alpha in MU_ALPHAS:
            up = self.f(alpha)[1]
            if not 0 < up < 1 - alpha:
                continue
            with ctx.workprec(128):
                mu = inverse_phi(1 - to_arb(alpha)) - inverse_phi(to_arb(up))
                if mu.is_finite():
                    best = max(best, lower_end(mu))
        return best


def tradeoff(phases: Sequence[Phase], *, fprs: Sequence[Fraction] = DEFAULT_FPRS,
             tolerance: Fraction = DEFAULT_TOLERANCE, curves: Curves | None = None, mapper: Mapper = map,
             recorded: PerEpochEnvelope | None = None, leaves: Sequence[tuple[Any, int]] = ()) -> TradeOff:
    """The proven trade-off curve of a run (module docstring). ``curves`` (a composed run, as a certificate's
    recorded settings give) skips the grid search; ``recorded`` (a certificate's) fixes a per-epoch run's
    envelope settings instead of searching them. ``leaves``: other mechanisms composed with the phases (an event
    tree's, :func:`rdp_verify.privacy_curve.table.resolve`), on the same discrete pairs; such a run's envelopes are
    read off the composed pairs as for any discrete-pairs run, and its μ has the grid lower end only."""
    fprs = [check_rate(a, "FPR") for a in fprs]
    if curves is None:
        result = bracket(phases, delta=reference_delta(fprs), tolerance=tolerance, mapper=mapper, leaves=leaves)
        curves, refinements = result.curves, result.refinements
    else:
        refinements = []
    return TradeOff(tuple(curves.phases), curves, refinements, Envelopes(curves, recorded))
