"""One-run audits: canaries included independently with probability 1/2 in ONE training run, the attack's
guesses tested against (ε, δ)-DP or against an f-DP curve, every deciding number proven.

**The experiment** (Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
arXiv 2305.08846, Section 3): m canaries, each included in the training set independently with probability
1/2 (the inclusion bits are the only secret the test uses); after training, the attack scores every canary and
guesses "member" for the k canaries scoring at or above a threshold (one-sided guesses, k₋ = 0, as
jax_privacy's ``CanaryScoreAuditor``); c of those guesses are right. The canaries may interact: the run is one
mechanism of all m bits, and DP with respect to each bit is all that is assumed.

**The (ε, δ) test** (their main theorem, the p-value algorithm of their Appendix D, which jax_privacy's
``_one_run_p_value`` transcribes): if the run is (ε, δ)-DP, the number W of correct guesses among r guesses
satisfies, for every v,

.. math::

   P[W ≥ v] ≤ β + 2mδ·\\max_{1 ≤ i ≤ v} \\frac{S_i}{i}, \\qquad β = P[B ≥ v],\\quad S_i = P[v − i ≤ B < v],
   \\quad B \\sim \\mathrm{Binomial}(r, q),\\quad q = \\frac{e^ε}{1 + e^ε}

(the maximum over every i ≥ 1 equals the one over i ≤ v: beyond v, S_i stays at P[B < v]).
:func:`one_run_p_value_upper` returns a rational at or above this bound, proven: q is an Arb ball around
e^ε/(1 + e^ε) for the exact rational ε; β = I_q(v, r − v + 1), the regularized incomplete beta function,
enclosed by Arb; the S_i are sums of Binomial probabilities enclosed term by term (the first by
log-gamma, each next one by the exact ratio e^{−ε}·j/(r − j + 1)); the sum stops once a proven geometric
bound on all the mass left below, ρ/(1 − ρ) times the last term (ρ < 1 that ratio, which only falls further
down), shows no later S_i/i can exceed the maximum so far (that bound is kept in the maximum). The upper end
of the final ball is taken: pessimistic for the attack.

**Empirical ε** (:func:`epsilon_one_run_lower`): the largest ε, rounded down to 6 significant digits, at
which some threshold's p-value upper bound is ≤ its level, proven at that ε for that threshold. A run that is
(ε′, δ)-DP is (ε, δ)-DP for every ε ≥ ε′, so rejecting (ε, δ) rejects every smaller ε: one proven point
suffices, whether or not the bound is monotone in ε.

**The f-DP test** (Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run", arXiv
2410.22235; their numerical audit ``audit_rh_with_cap``, which jax_privacy's ``_epsilon_one_run_fdp``
transcribes; the theorem number is not restated here). For a run that is f-DP, with the inverse blow-up
B⁻¹(t) = f⁻¹(1 − t) (the smallest false-positive mass that can come with true-positive mass t; f(1 − t) when
f is symmetric), start from r = τc/m, h = τ(k − c)/m and, for i = c − 1, …, 0,

.. math::

   h' = \\max(h, B^{-1}(r)),\\qquad r' = r + \\frac{i}{k − i}(h' − h).

If r + h > k/m at the end, then P[at least c correct of k guesses] < τ for every f-DP run: observing c
rejects f-DP at level τ. :func:`fdp_rejects` runs this recursion in Arb ball arithmetic (every ball contains
the exact value; B⁻¹ of a ball encloses B⁻¹ over it, B⁻¹ being nondecreasing); it stops early, exactly, when
r + h > k/m is proven (both only grow, so the final sum is larger still), or when B⁻¹(r) ≤ h is proven (then
neither changes again). "Rejects" is returned only when the final inequality is proven.

Three f are offered, each a trade-off function (convex, continuous, nonincreasing, f(α) ≤ 1 − α):

* :class:`EpsDeltaCurve`, f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}: a run is (ε, δ)-DP iff it
  is f_{ε,δ}-DP (Dong, Roth, Su 2022, Proposition 2.5), so rejecting it proves the run is not (ε, δ)-DP;
* :class:`GdpCurve` G_μ: rejecting it proves the run is not μ-GDP. jax_privacy's
  ``epsilon_one_run_fdp`` tests G_μ with μ = 1/σ, σ = ``dp_accounting.get_sigma_gaussian(ε, δ)`` (the
  Gaussian mechanism calibrated to (ε, δ)) and reports that ε. G_μ ≥ f_{ε,δ} (the calibrated mechanism is
  (ε, δ)-DP), so refuting G_μ is easier than refuting (ε, δ)-DP: jax's figure is the ε of the Gaussian
  mechanism the run is proven not to be at least as private as — a lower bound on the run's ε only if its
  curve is Gaussian. We report the proven μ lower bound and that ε beside the (ε, δ) one, labelled;
* :class:`HullCurve`, from a run's certified lower envelope f_low (:mod:`rdp_verify.tradeoff.envelope`):
  each point gives f(α_j) ≥ y_j (f_low rounded down), and f symmetric gives f(y_j) ≥ α_j when y_j > 0 (f is
  strictly decreasing where positive, so f⁻¹(y_j) ≥ α_j); f nonincreasing
  gives the step function s(α) = max{y : (x, y) a point, x ≥ α} ≤ f, and its lower convex hull f′ ≤ s ≤ f is a
  trade-off function. A run that is f-DP is f′-DP (f′ ≤ f), so the recursion run with f′ is a valid test of
  the run's certified guarantee. A weaker f (smaller) allows more correct guesses, so every rounding down of
  the envelope only makes a ``bug`` verdict harder: it stays proven. Between two rates the step function drops
  to the value at the next one (a loss of first order in the grid's step), so a run's verdict is no longer held
  against this hull but against the run's exact curve G_μ (q = 1) or the envelope of its proven (ε, δ) lines
  refined where the deciding thresholds read it (The run's curve, below; issue 39); shuffled and
  balls-in-bins runs still use this hull, with G_μ₀.

**The verdict** (:func:`audit_one_run`) is the conclusion of every test the report prints: the deciding test
against the run, and each printed empirical bound (ε; μ; for q = 1 the ε of G_μ) set against the run's proven
upper end. Any rejection of the run's guarantee makes it ``bug``, under one union bound (the function's docstring).

**The run's curve, as the verdict reads it** (:func:`deciding_rejects`). Held against any trade-off function
f′ ≤ f (f the run's, both orders of every neighbouring pair), a rejection proves the run is not f′-DP, hence not
f-DP; the closer f′ is to f, the more the test sees. The 231-vertex hull above let a file whose own G_μ line
proved μ ≥ 1.00906 pass a 1-GDP run as ``consistent`` (issue 39).

* *q = 1, the Gaussian family, exactly.* A run whose every phase has q = 1 is the Gaussian mechanism with
  μ² = Σ Δ²T_i/σ_i² exactly (:mod:`rdp_verify.curves.gaussian`), trade-off function G_μ (Dong, Roth, Su 2022,
  Definition 2.7 and Corollary 3.3). f′ = G_μ′, μ′ = :func:`gaussian_mu` (√μ² when μ² is the square of a
  rational, else the upper end of a 128-bit Arb ball): μ′ ≥ μ, and G_μ falls as μ grows, so G_μ′ ≤ G_μ.
* *Other runs: the upper envelope of (ε, δ) lines.* The run is (ε, δ(ε))-DP at every ε ≥ 0, so
  f ≥ f_{ε,δ(ε)} (Dong, Roth, Su 2022, Proposition 2.5; by their Proposition 2.12 f is the supremum of these).
  At rational ε_j take δ_j ≥ δ(ε_j), the smaller of the dominating pairs' proven upper end
  (:func:`rdp_verify.curves.accountant.delta_bracket`) and, for runs without other mechanisms, that of
  G_μ′ with μ′ ≥ μ₀ the proven no-amplification μ (:meth:`rdp_verify.tradeoff.curve.TradeOff.mu_upper`: the run
  is μ₀-GDP, so δ(ε) ≤ δ_{G_μ₀}(ε) ≤ δ_{G_μ′}(ε)), rounded **up** to 15 significant digits, and a rational
  s_j ≥ e^{ε_j} (an Arb upper end, rounded up). f_{ε,δ} falls as ε or δ grows, so f_{log s_j, δ_j} ≤ f, and
  f′(α) = max(0, max_j (1 − δ_j − s_j α), max_j (1 − δ_j − α)/s_j), a maximum of (symmetric) trade-off functions,
  is a trade-off function below f: piecewise linear with rational coefficients, its vertices computed exactly
  (:func:`lines_envelope`) and read as a :class:`HullCurve`. Each line supports the curve of δ_j, so f′ loses
  only to second order in the ladder's step (the step function of point values lost to first order).
* *Refined where the deciding thresholds lie.* The ladder is ε = j/8 from 0 until δ_j falls below a thousandth
  of the smallest argument the recursion reads (the level over m) or stops falling (at most :data:`MAX_LINES`).
  The thresholds are screened in double precision against an estimate of the curve on the ladder j/64 (log δ
  interpolated linearly between the proven points; it only chooses where to look); along the recursions of the
  best candidates, the estimate's active lines (the slope −e^{±ε} of the curve where B⁻¹ is read) give an
  ε-range, on which proven lines are added at step 1/64. The proofs use the envelope of all proven lines. On the
  1-GDP run, lines 1/8 apart already need exactly as many correct guesses to reject as G_1 itself
  (tests/tradeoff/test_verdicts.py).
* *Shuffled and balls-in-bins runs* (:class:`~rdp_verify.curves.per_epoch.PerEpochBounds`): f′ = max(G_μ′, the
  hull of their lower envelope), both below f; B⁻¹ of a maximum of trade-off functions is the maximum of their
  B⁻¹ (:class:`MaxCurve`).

**Which thresholds, which level.** Every observed score is a threshold. Under Bonferroni each test gets
level γ/m (m canaries, 1 − γ the confidence): for each guess count k = 1, …, m, "guess the canaries scoring
at or above the k-th largest score" is a fixed rule of the scores (a post-processing of the run), and each
observed threshold is one of these m rules, so the union over them has probability ≤ γ. jax_privacy divides by
the number of thresholds it keeps, the vertices of the ROC curve's convex hull, which depend on the membership
labels: no union bound covers a count chosen by the labels (on its own test, 386 vertices for 20000
canaries). Counts given per threshold fixed before the data: γ/(number of rows).

**Speed** (10⁶ canaries): the search is screened in double precision and only the deciding threshold is
proven in Arb. Screening can only miss a better threshold, never make a reported number wrong: the reported ε
(or μ, or ``bug``) is proven for the threshold named, and the union bound covers every threshold at once. The
(ε, δ) screen keeps only thresholds whose cheap proven-direction lower bound of the p-value,
max(P[B = v], 2mδ·P[B = v − 1], min(1, 2mδ/v)) (β ≥ its first term, the maximum ≥ S_1 and ≥ S_v/v =
(1 − β)/v), is at most the level times (1 + 10⁻⁶) (a margin for double-precision error), orders them by a cheap
estimate of the p-value and computes the double-precision p-value of the first 100 (200 for a verdict); ε is
searched by doubling and bisection on whether one of those rejects. The f-DP screen runs the recursion on all
thresholds at once in double precision (erfc to a relative 1.2·10⁻⁷, Φ⁻¹ to 1.2·10⁻⁹), skipping thresholds
whose precision c/k is at most the best per-canary accuracy of the curve (they cannot reject:
:func:`_fdp_first`), and keeps those whose final r + h exceeds k/m·(1 − 10⁻⁶); a search examines at larger
parameters only the thresholds that passed at the largest one so far. On 10⁶ canaries the (ε, δ) search takes
about a second, the G_μ search about half a minute (2 cores).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
from flint import arb, ctx

from ..foundations.decimals import decimal_text
from ..foundations.inputs import InputError, fraction_text
from ..foundations.results import lower_end, to_arb, upper_end
from .envelope import inverse_phi, phi

__all__ = ["one_run_p_value_upper", "one_run_p_value_float", "EpsDeltaCurve", "GdpCurve", "HullCurve",
           "fdp_rejects", "fdp_objective_float", "Guesses", "Found", "epsilon_one_run_lower",
           "epsilon_one_run_fdp_lower", "mu_one_run_fdp_lower", "one_run_rejects", "fdp_run_rejects",
           "hull_from_envelope", "gaussian_epsilon_lower", "SCREEN_MARGIN", "audit_one_run", "one_run_level",
           "METHODS", "ASSUMPTION", "check_chain",
           "MaxCurve", "DecidingCurve", "deciding_rejects", "gaussian_mu", "lines_envelope", "lines_curve", "MAX_LINES"]

_PREC = 128
SCREEN_MARGIN = 1e-6  # double-precision screens keep candidates within this relative margin of the level
_DIGITS = 6  # reported ε and μ: rounded down to this many significant digits


def _check(m: int, n_guess: int, n_correct: int) -> tuple[int, int, int]:
    m, r, v = int(m), int(n_guess), int(n_correct)
    if not (m >= 1 and 0 <= v <= r <= m):
        raise InputError(f"need 0 <= correct ({v}) <= guesses ({r}) <= canaries ({m}) and canaries >= 1")
    return m, r, v


def _check_eps_delta(eps: Fraction, delta: Fraction) -> tuple[Fraction, Fraction]:
    eps, delta = Fraction(eps), Fraction(delta)
    if eps < 0 or not 0 <= delta <= 1:
        raise InputError(f"need epsilon >= 0 and 0 <= delta <= 1 (got {eps}, {delta})")
    return eps, delta


# ---------------------------------------------------------------------------------------------------------
# the (ε, δ) test of Steinke, Nasr, Jagielski


def _log_pmf(r: int, j: int, e: arb, log_q: arb) -> arb:
    """log P[Binomial(r, q) = j] as a ball, with log(1 − q) = log q − ε."""
    return (arb(r + 1).lgamma() - arb(j + 1).lgamma() - arb(r - j + 1).lgamma()
            + j * log_q + (r - j) * (log_q - e))


def _alpha_ball(r: int, v: int, e: arb, log_q: arb) -> arb:
    """A ball whose upper end bounds max_{1 ≤ i ≤ v} S_i/i (module docstring), v ≥ 1."""
    w = (-e).exp()  # (1 − q)/q
    pmf = _log_pmf(r, v - 1, e, log_q).exp()
    total, best = arb(0), arb(0)
    for i in range(1, v + 1):
        j = v - i  # the term just added is P[B = j]
        total += pmf
        best = best.max(total / i)
        if j == 0:
            break
        rho = w * j / (r - j + 1)  # P[B = j − 1]/P[B = j]; smaller still further down
        pmf = pmf * rho
        if rho < 1:
            bound = (total + pmf / (1 - rho)) / (i + 1)  # every later S_i'/i' is at most this
            if bound < best:
                break
            if i > 64 and bound.upper() < best.upper() * (1 + arb(2) ** -100):
                return best.max(bound)
    return best


def one_run_p_value_upper(m: int, n_guess: int, n_correct: int, eps: Fraction, delta: Fraction) -> Fraction:
    """A rational at or above the one-run p-value β + 2mδ·max_i S_i/i (capped at 1), proven (module docstring)."""
    m, r, v = _check(m, n_guess, n_correct)
    eps, delta = _check_eps_delta(eps, delta)
    if v == 0:
        return Fraction(1)
    with ctx.workprec(_PREC):
        e = to_arb(eps)
        log_q = -(1 + (-e).exp()).log()
        total = log_q.exp().beta_lower(v, r - v + 1, 1)
        if delta > 0:
            total = total + _alpha_ball(r, v, e, log_q) * to_arb(2 * m * delta)
        if not total.is_finite() or total.upper() >= 1:
            return Fraction(1)
        return upper_end(total)


class _LogFactorials:
    """log k! for k = 0..n in double precision (math.lgamma, accurate to a few ulps)."""

    def __init__(self, n: int) -> None:
        self.table = np.array([math.lgamma(k + 1) for k in range(n + 1)])

    def log_pmf(self, r: np.ndarray, j: np.ndarray, log_q: float, log_1q: float) -> np.ndarray:
        jj = np.clip(j, 0, r)
        out = self.table[r] - self.table[jj] - self.table[r - jj] + jj * log_q + (r - jj) * log_1q
        return np.where((j >= 0) & (j <= r), out, -np.inf)


def _log_q(eps: float) -> tuple[float, float]:
    log_q = -math.log1p(math.exp(-eps))
    return log_q, log_q - eps


def one_run_p_value_float(m: int, n_guess: int, n_correct: int, eps: float, delta: float,
                          lf: _LogFactorials | None = None) -> float:
    """The same p-value in double precision (a screen and a cross-check, not a proof): the Binomial terms
    within 40 standard deviations (and 60 terms) of the mode or of v, the rest neglected."""
    m, r, v = _check(m, n_guess, n_correct)
    if v == 0:
        return 1.0
    lf = lf or _LogFactorials(r)
    log_q, log_1q = _log_q(eps)
    q = math.exp(log_q)
    mode, sd = r * q, math.sqrt(r * q * (1 - q))
    hi = int(min(r, max(v, mode) + 40 * sd + 60))
    lo = int(max(0, min(v - 1, mode) - 40 * sd - 60))
    j = np.arange(lo, hi + 1)
    pmf = np.exp(lf.log_pmf(np.full_like(j, r), j, log_q, log_1q))
    beta = float(pmf[j >= v].sum())
    if delta == 0:
        return min(beta, 1.0)
    below = pmf[j < v][::-1]  # P[B = v − 1], P[B = v − 2], …
    sums = np.cumsum(below)
    i = np.arange(1, len(sums) + 1)
    alpha = float(np.max(sums / i)) if len(sums) else 0.0
    return min(beta + alpha * delta * 2 * m, 1.0)


# ---------------------------------------------------------------------------------------------------------
# double-precision Φ and Φ⁻¹ (screens only; numpy has neither, scipy is not a dependency)


def _erfc(x: np.ndarray) -> np.ndarray:
    """erfc to a relative 1.2e-7 everywhere (the Chebyshev fit of Numerical Recipes, 2nd ed., Section 6.2)."""
    z = np.abs(x)
    t = 1 / (1 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    ans = t * np.exp(poly)
    return np.where(x >= 0, ans, 2 - ans)


def _phi_float(x: np.ndarray) -> np.ndarray:
    return 0.5 * _erfc(-x / math.sqrt(2))


_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)


def _inverse_phi_float(p: np.ndarray) -> np.ndarray:
    """Φ⁻¹ to a relative 1.2e-9 (P. J. Acklam's rational approximation), p in (0, 1)."""
    p = np.clip(np.asarray(p, dtype=float), 1e-300, 1 - 1e-16)
    out = np.empty_like(p)
    low, high = p < 0.02425, p > 1 - 0.02425
    mid = ~(low | high)
    q = p[mid] - 0.5
    rr = q * q
    out[mid] = ((((((_A[0] * rr + _A[1]) * rr + _A[2]) * rr + _A[3]) * rr + _A[4]) * rr + _A[5]) * q
                / (((((_B[0] * rr + _B[1]) * rr + _B[2]) * rr + _B[3]) * rr + _B[4]) * rr + 1))
    for mask, sign, pp in ((low, 1, p[low]), (high, -1, 1 - p[high])):
        q = np.sqrt(-2 * np.log(pp))
        out[mask] = sign * (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) \
            / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1)
    return out


# ---------------------------------------------------------------------------------------------------------
# trade-off functions as inverse blow-ups B⁻¹(t) = f⁻¹(1 − t)


@dataclass(frozen=True)
class EpsDeltaCurve:
    """f_{ε,δ}, symmetric: B⁻¹(t) = f(1 − t) = max{0, 1 − δ − e^ε + e^ε t, e^{−ε}(t − δ)}."""

    eps: Fraction
    delta: Fraction

    def inverse_arb(self, t: arb) -> arb:
        e = to_arb(self.eps).exp()
        d = to_arb(self.delta)
        return arb(0).max(1 - d - e + e * t).max((t - d) / e)

    def inverse_float(self, t: np.ndarray) -> np.ndarray:
        e, d = math.exp(min(float(self.eps), 700.0)), float(self.delta)
        return np.maximum(0.0, np.maximum(1 - d - e + e * t, (t - d) / e))

    def accuracy(self) -> float:
        """The best per-canary accuracy: (e^ε + δ)/(1 + e^ε), at the kink of f_{ε,δ}."""
        e = math.exp(min(float(self.eps), 700.0))
        return (e + float(self.delta)) / (1 + e)


@dataclass(frozen=True)
class GdpCurve:
    """G_μ, symmetric: B⁻¹(t) = G_μ(1 − t) = Φ(Φ⁻¹(t) − μ)."""

    mu: Fraction

    def inverse_arb(self, t: arb) -> arb:
        return phi(inverse_phi(t) - to_arb(self.mu))

    def inverse_float(self, t: np.ndarray) -> np.ndarray:
        return _phi_float(_inverse_phi_float(t) - float(self.mu))

    def accuracy(self) -> float:
        """The best per-canary accuracy: Φ(μ/2)."""
        return float(_phi_float(np.array([float(self.mu) / 2]))[0])


@dataclass(frozen=True)
class HullCurve:
    """A piecewise-linear trade-off function f′ (convex, nonincreasing, decreasing where positive) by its vertices
    (x_k, y_k), x increasing from 0 to 1; B⁻¹(t) = f′⁻¹(1 − t), exact between vertices."""

    xs: tuple[Fraction, ...]
    ys: tuple[Fraction, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_xf", np.array([float(x) for x in self.xs]))
        object.__setattr__(self, "_yf", np.array([float(y) for y in self.ys]))
        object.__setattr__(self, "_neg", [-y for y in self.ys])  # nondecreasing: bisected

    def _inverse_exact(self, y: Fraction) -> Fraction:
        """f′⁻¹(y) = inf{x : f′(x) ≤ y} for a rational y, exactly (the first vertex k with y_k ≤ y, by bisection)."""
        if y >= self.ys[0]:
            return Fraction(0)
        k = bisect_left(self._neg, -y, 1)
        x1, y1, x2, y2 = self.xs[k - 1], self.ys[k - 1], self.xs[k], self.ys[k]
        return x1 + (y1 - y) * (x2 - x1) / (y1 - y2)

    def inverse_arb(self, t: arb) -> arb:
        # a ball reaching outside [0, 1] (radii grown at too low a precision): not finite, so the recursion reports
        # itself undecided and is repeated at a higher precision (before: an IndexError, or StopIteration)
        if not (t.is_finite() and t.lower() >= 0 and t.upper() <= 1):
            return arb("nan")
        # nondecreasing in t: the values at the ball's two ends enclose it (exact rationals, then a ball)
        lo, hi = self._inverse_exact(1 - upper_end(t)), self._inverse_exact(1 - lower_end(t))
        return to_arb(lo).union(to_arb(hi))

    def inverse_float(self, t: np.ndarray) -> np.ndarray:
        y = 1 - np.asarray(t, dtype=float)
        # f′ decreasing where positive: x as a function of y, by interpolation on the reversed vertices
        return np.where(y >= self._yf[0], 0.0, np.interp(y, self._yf[::-1], self._xf[::-1]))

    def accuracy(self) -> float:
        """The best per-canary accuracy 1 − min_α (α + f′(α))/2, attained at a vertex (f′ piecewise linear)."""
        return float(1 - min(x + y for x, y in zip(self.xs, self.ys)) / 2)


Curve = EpsDeltaCurve | GdpCurve | HullCurve


def hull_from_envelope(f_lower: Callable[[Fraction], Fraction], alphas: Sequence[Fraction] | None = None) -> HullCurve:
    """The trade-off function f′ ≤ f of :class:`HullCurve`'s docstring and the module's, from a proven lower
    bound ``f_lower`` of a symmetric trade-off function f at the rates ``alphas`` (default 10^(−j/8),
    j = 0..128: 1 down to 1e-16). Values are rounded down to 15 significant digits (still lower bounds)."""
    alphas = alphas or [Fraction(decimal_text(Fraction(10 ** -(j / 8)), 12, "down")) for j in range(129)]
    points = {(Fraction(1), Fraction(0))}
    for a in alphas:
        y = Fraction(decimal_text(max(Fraction(f_lower(a)), Fraction(0)), 15, "down"))
        points.add((a, y))  # f(a) ≥ y
        if y > 0:  # and f(y) ≥ a: f = f⁻¹ (symmetric) and f(x) > f(a) ≥ y for x < a (strictly decreasing where positive)
            points.add((y, a))
    pts = sorted(points)
    corners, suffix = [], Fraction(0)
    for k in range(len(pts) - 1, -1, -1):  # s(x) = max{y : (x', y), x' ≥ x}: its lower-left corners
        suffix = max(suffix, pts[k][1])
        corners.append((pts[k - 1][0] if k else Fraction(0), suffix))
    corners.append((Fraction(1), Fraction(0)))
    hull: list[tuple[Fraction, Fraction]] = []
    for x, y in sorted(set(corners)):  # lower convex hull (Andrew's monotone chain)
        if hull and hull[-1][0] == x:
            continue  # same x: the lower point came first
        while len(hull) >= 2 and (hull[-1][0] - hull[-2][0]) * (y - hull[-2][1]) \
                <= (hull[-1][1] - hull[-2][1]) * (x - hull[-2][0]):
            hull.pop()
        hull.append((x, y))
    return HullCurve(tuple(x for x, _ in hull), tuple(y for _, y in hull))


# ---------------------------------------------------------------------------------------------------------
# the recursion of Mahloujifar, Melis, Chaudhuri


def fdp_rejects(m: int, n_guess: int, n_correct: int, level: Fraction, curve: Curve) -> bool:
    """True when the recursion (module docstring) proves r + h > k/m: at least ``n_correct`` correct of
    ``n_guess`` guesses among ``m`` canaries has probability < ``level`` under every run that is f-DP.

    Ball arithmetic overestimates this recursion's error growth (h enters r' with the factor −i/(k − i) and
    again through B⁻¹; the radii add instead of cancelling, about 4 bits a step), so the working precision
    starts at 256 bits and is quadrupled (up to 2^16 bits) while the outcome is undecided."""
    m, k, c = _check(m, n_guess, n_correct)
    level = Fraction(level)
    prec = 256
    while prec <= 1 << 16:
        decided = _fdp_ball(m, k, c, level, curve, prec)
        if decided is not None:
            return decided
        prec *= 4
    return False


def _fdp_ball(m: int, k: int, c: int, level: Fraction, curve: Curve, prec: int) -> bool | None:
    """The recursion at ``prec`` bits: True (rejection proven), False (non-rejection proven), None (undecided)."""
    with ctx.workprec(prec):
        target = to_arb(Fraction(k, m))
        r, h = to_arb(level * c / m), to_arb(level * (k - c) / m)
        for i in range(c - 1, -1, -1):
            if r + h > target:
                return True
            gv = curve.inverse_arb(r)
            if gv <= h:
                break  # proven: neither r nor h changes again
            if not gv.is_finite():
                return None
            d = (gv - h).max(arb(0))
            h, r = h + d, r + d * i / (k - i)
        total = r + h
        if total > target:
            return True
        return False if total <= target else None


def fdp_objective_float(m: int, n_guess: int, n_correct: int, level: float, curve: Curve) -> float:
    """r + h − k/m at the end of the recursion in double precision (jax_privacy's objective; positive rejects)."""
    return float(_fdp_vector(m, np.array([n_guess]), np.array([n_correct]), level, curve)[0])


def _fdp_vector(m: int, k: np.ndarray, c: np.ndarray, level: float, curve: Curve,
                max_steps: int = 20_000) -> np.ndarray:
    """The recursion on many thresholds at once in double precision: r + h − k/m at the end of each (an
    estimate; the cap on steps leaves a threshold unrejected, never wrongly rejected after a proof)."""
    k, c = np.asarray(k, dtype=np.int64), np.asarray(c, dtype=np.int64)
    r, h = level * c / m, level * (k - c) / m
    target = k / m
    i = c - 1
    active = np.flatnonzero(c > 0)
    for _ in range(max_steps):
        if not len(active):
            break
        ra, ha, ia = r[active], h[active], i[active]
        d = np.maximum(curve.inverse_float(ra) - ha, 0.0)
        ka = k[active]
        with np.errstate(divide="ignore", invalid="ignore"):
            ra = ra + d * np.where(ka > ia, ia / (ka - ia), 0.0)
        ha = ha + d
        r[active], h[active] = ra, ha
        i[active] = ia - 1
        done = (d <= 0) | (ra + ha > target[active]) | (ia - 1 < 0)
        active = active[~done]
    return r + h - target


# ---------------------------------------------------------------------------------------------------------
# thresholds, screens and searches


@dataclass(frozen=True)
class Guesses:
    """The attack's guesses at every threshold: ``n_guess[j]`` canaries guessed member at the j-th threshold
    (text ``threshold(j)``), ``n_correct[j]`` of them members; ``m`` canaries in all."""

    texts: Callable[[int], str] | Sequence[str]
    n_guess: np.ndarray
    n_correct: np.ndarray
    m: int

    def threshold(self, j: int) -> str:
        return self.texts(j) if callable(self.texts) else self.texts[j]

    @classmethod
    def from_counts(cls, counts: Sequence[Any]) -> "Guesses":
        """From confusion counts per threshold (:class:`rdp_verify.tradeoff.canaries.Counts` rows, or a table
        with columns ``tp``, ``fp``, ``tn``, ``fn``): guesses tp + fp, correct tp."""
        if hasattr(counts, "tp") and hasattr(counts, "threshold"):
            tp, fp, tn, fn = (np.asarray(getattr(counts, k), dtype=np.int64) for k in ("tp", "fp", "tn", "fn"))
            texts: Any = counts.threshold
        else:
            tp, fp, tn, fn = (np.array([getattr(c, k) for c in counts], dtype=np.int64)
                              for k in ("tp", "fp", "tn", "fn"))
            texts = tuple(c.threshold for c in counts)
        ms = np.unique(tp + fp + tn + fn)
        if len(ms) != 1:
            raise InputError("a one-run audit needs the same canaries at every threshold (tp + fp + tn + fn)")
        return cls(texts, tp + fp, tp, int(ms[0]))


@dataclass(frozen=True)
class Found:
    """A proven rejection: at parameter ``value`` (ε or μ; None for a fixed curve) the threshold ``index``
    rejects at ``level``; ``p_value`` is the proven p-value upper bound (the (ε, δ) test only)."""

    value: Fraction | None
    index: int
    level: Fraction
    p_value: Fraction | None = None


def _round_down(x: float) -> Fraction:
    return Fraction(decimal_text(Fraction(x), _DIGITS, "down")) if x > 0 else Fraction(0)


def _search(candidates: Callable[[float], list[int]], prove: Callable[[Fraction, int], Found | None],
            attempts: int = 20) -> Found | None:
    """The largest parameter (ε or μ) where the double-precision screen ``candidates`` finds a rejecting
    threshold (doubling or halving, then bisection to a relative 1e-7), rounded down to 6 digits and proven by ``prove`` on
    the screen's candidates there (at most ``attempts``); if none is proven the parameter steps down (relative
    1e-6, 1e-5, …) and the screen is asked again. The search starts at 1 and doubles or halves (the recursion
    against near-perfect privacy is the slowest to settle); None: nothing rejects at 1/1024."""
    lo, hi = 0.0, 1.0
    if candidates(1.0):
        lo, hi = 1.0, 2.0
        while candidates(hi):
            lo, hi = hi, 2 * hi
            if hi > 1e6:
                break
    else:
        while hi > 1 / 1024:
            hi /= 2
            if candidates(hi):
                lo, hi = hi, 2 * hi
                break
        else:
            return None
    while hi - lo > 1e-7 * hi:
        mid = (lo + hi) / 2
        if candidates(mid):
            lo = mid
        else:
            hi = mid
    value, step = _round_down(lo), Fraction(1, 10**6)
    while True:
        for j in candidates(float(value))[:attempts]:
            found = prove(value, j)
            if found is not None:
                return found
        if value == 0:
            return None
        value = _round_down(float(value * (1 - step))) if step < 1 else Fraction(0)
        step *= 10


class _OneRunScreen:
    """Screens of the (ε, δ) test over every threshold (module docstring)."""

    def __init__(self, g: Guesses, delta: Fraction, level: Fraction) -> None:
        self.g, self.delta, self.level = g, float(delta), float(level)
        self.lf = _LogFactorials(int(g.n_guess.max()) if len(g.n_guess) else 0)

    def p(self, j: int, eps: float) -> float:
        return one_run_p_value_float(self.g.m, int(self.g.n_guess[j]), int(self.g.n_correct[j]), eps, self.delta,
                                     self.lf)

    def passes(self, j: int, eps: float) -> bool:
        return self.p(j, eps) <= self.level * (1 + SCREEN_MARGIN)

    def lower(self, eps: float, idx: np.ndarray) -> np.ndarray:
        """max(P[B = v], 2mδ·P[B = v − 1], min(1, 2mδ/v)) ≤ p-value, at the thresholds ``idx``."""
        r, v = self.g.n_guess[idx], self.g.n_correct[idx]
        log_q, log_1q = _log_q(eps)
        two_m_delta = 2 * self.g.m * self.delta
        out = np.exp(self.lf.log_pmf(r, v, log_q, log_1q))
        out = np.maximum(out, two_m_delta * np.exp(self.lf.log_pmf(r, v - 1, log_q, log_1q)))
        return np.maximum(out, np.minimum(1.0, two_m_delta / np.maximum(v, 1)))

    def estimate(self, eps: float, idx: np.ndarray) -> np.ndarray:
        """A cheap double-precision estimate of the p-value, only to order candidates: β by its geometric upper
        bound P[B = v]/(1 − ρ), ρ = P[B = v + 1]/P[B = v] (1 when ρ ≥ 1), the maximum by its first term and by
        (1 − β)/(v − kq + √(kq(1 − q)) + 1), where the partial sums level off."""
        r, v = self.g.n_guess[idx], self.g.n_correct[idx]
        log_q, log_1q = _log_q(eps)
        pmf = np.exp(self.lf.log_pmf(r, v, log_q, log_1q))
        rho = (r - v) / (v + 1.0) * math.exp(min(eps, 700.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            beta = np.where(rho < 1, np.minimum(pmf / (1 - rho), 1.0), 1.0)
        q = math.exp(log_q)
        spread = np.maximum(v - r * q, 0.0) + np.sqrt(r * q * (1 - q)) + 1  # where the partial sums level off
        alpha = np.maximum(np.exp(self.lf.log_pmf(r, v - 1, log_q, log_1q)), (1 - beta) / np.minimum(spread, v))
        return beta + 2 * self.g.m * self.delta * alpha

    def candidates(self, eps: float) -> np.ndarray:
        """Thresholds that may reject (ε, δ): the proven-direction lower bound within the margin of the level,
        ordered by :meth:`estimate`."""
        idx = np.flatnonzero(self.g.n_correct > 0)
        low = self.lower(eps, idx)
        idx = idx[low <= self.level * (1 + SCREEN_MARGIN)]
        return idx[np.argsort(self.estimate(eps, idx), kind="stable")]

    def first(self, eps: float, limit: int = 100) -> int | None:
        """The first of the candidates (at most ``limit``) whose double-precision p-value is within the margin."""
        for j in self.candidates(eps)[:limit]:
            if self.passes(int(j), eps):
                return int(j)
        return None

    def best(self) -> tuple[float, int] | None:
        """The largest ε (double precision) at which some threshold rejects, and that threshold: doubling then
        bisection on ε, each step asking :meth:`first`. A threshold with precision v/r ≤ e^ε/(1 + e^ε) cannot
        reject (ε, δ) at a level below 1/2 (then v ≤ ⌊rq⌋, and P[B ≥ ⌊rq⌋] ≥ 1/2, a median of Binomial(r, q)
        being at least ⌊rq⌋), so the search stops below the logit of the best precision."""
        g = self.g
        if self.first(0.0) is None:
            return None
        precision = g.n_correct / np.maximum(g.n_guess, 1)
        top = float(precision.max())
        cap = math.inf if top >= 1 else math.log(top / (1 - top))
        lo, hi = 0.0, min(1.0, cap)
        while hi < cap and self.first(hi) is not None:
            lo, hi = hi, min(2 * hi, cap)
        if hi >= cap and self.first(hi) is not None:
            lo = hi
        while hi - lo > 1e-8 * max(hi, 1e-300):
            mid = (lo + hi) / 2
            if self.first(mid) is None:
                hi = mid
            else:
                lo = mid
        j = self.first(lo)
        return None if j is None else (lo, j)


def _level(level: Fraction) -> Fraction:
    level = Fraction(level)
    if not 0 < level < Fraction(1, 2):
        raise InputError(f"the level of each test, {level}, must lie in (0, 1/2)")
    return level


def epsilon_one_run_lower(g: Guesses, delta: Fraction, level: Fraction, attempts: int = 20) -> Found | None:
    """The proven empirical ε of the (ε, δ) test (module docstring): ``Found.value`` ε, rounded down to 6
    digits, with a threshold whose p-value upper bound at (ε, δ) is ≤ ``level`` (proven). None when no
    threshold rejects even ε = 0. The best threshold of the double-precision search is proven first; if the
    proof fails at the rounded ε, the screen's candidates there, then smaller ε (relative steps 1e-6, 1e-5, …)."""
    level, delta = _level(level), _check_eps_delta(0, delta)[1]
    screen = _OneRunScreen(g, delta, level)
    found = screen.best()
    if found is None:
        return None

    def prove(eps: Fraction, j: int) -> Found | None:
        p = one_run_p_value_upper(g.m, int(g.n_guess[j]), int(g.n_correct[j]), eps, delta)
        return Found(eps, j, level, p) if p <= level else None

    eps, j = found
    value, step = _round_down(eps), Fraction(1, 10**6)
    while True:
        tried = [j] + [int(k) for k in screen.candidates(float(value))[:attempts] if k != j]
        for k in tried[:attempts]:
            if screen.passes(k, float(value)) and (result := prove(value, k)) is not None:
                return result
        if value == 0:
            return None
        value = _round_down(float(value * (1 - step))) if step < 1 else Fraction(0)
        step *= 10


def one_run_rejects(g: Guesses, eps: Fraction, delta: Fraction, level: Fraction, attempts: int = 20) -> Found | None:
    """A threshold whose p-value upper bound at (ε, δ) is proven ≤ ``level`` (the run is then not (ε, δ)-DP at
    that confidence), or None: the screen's first 200 candidates, up to ``attempts`` proofs."""
    level = _level(level)
    eps, delta = _check_eps_delta(eps, delta)
    screen = _OneRunScreen(g, delta, level)
    tried = 0
    for j in screen.candidates(float(eps))[:200]:  # in the estimate's order (the screen: module docstring)
        p_float = one_run_p_value_float(g.m, int(g.n_guess[j]), int(g.n_correct[j]), float(eps), float(delta),
                                        screen.lf)
        if p_float > float(level) * (1 + SCREEN_MARGIN):
            continue
        p = one_run_p_value_upper(g.m, int(g.n_guess[j]), int(g.n_correct[j]), eps, delta)
        if p <= level:
            return Found(eps, int(j), level, p)
        tried += 1
        if tried >= attempts:
            break
    return None


def _fdp_first(g: Guesses, level: Fraction, curve: Curve, idx: np.ndarray | None = None) -> list[int]:
    """Thresholds (of ``idx``, default all) whose double-precision recursion ends within the margin of
    rejecting, best first. Thresholds with c ≤ ⌊k·a⌋, a the curve's best per-canary accuracy (ε and δ: its
    kink; G_μ: Φ(μ/2)), are skipped: an f-DP run of independent canaries, each seen through a pair with
    trade-off f, and a guesser labelling k fixed canaries by the best test, has c ~ Binomial(k, a) correct, at
    least ⌊ka⌋ with probability ≥ 1/2 > level, so no sound test rejects f there (jax_privacy's rule, with
    e^ε/(1 + e^ε) for a)."""
    idx = np.arange(len(g.n_guess)) if idx is None else idx
    if hasattr(curve, "accuracy"):
        a = curve.accuracy() * (1 - SCREEN_MARGIN)
        idx = idx[g.n_correct[idx] > np.floor(g.n_guess[idx] * a)]
    obj = _fdp_vector(g.m, g.n_guess[idx], g.n_correct[idx], float(level), curve)
    keep = np.flatnonzero(obj > -SCREEN_MARGIN * g.n_guess[idx] / g.m)
    return [int(idx[j]) for j in keep[np.argsort(-obj[keep], kind="stable")]]


def fdp_run_rejects(g: Guesses, level: Fraction, curve: Curve, attempts: int = 20) -> Found | None:
    """A threshold whose recursion against ``curve`` proves rejection at ``level`` (module docstring), or None."""
    level = _level(level)
    for j in _fdp_first(g, level, curve)[:attempts]:
        if fdp_rejects(g.m, int(g.n_guess[j]), int(g.n_correct[j]), level, curve):
            return Found(None, j, level)
    return None


def _fdp_search(g: Guesses, level: Fraction, make: Callable[[Fraction], Curve]) -> Found | None:
    """:func:`_search` over ε or μ with the recursion's screen. The screen at a larger parameter examines only
    the thresholds that passed it at the largest parameter that found any (a weaker hypothesis is harder to
    reject): this can only miss a better threshold, never make the proven answer wrong."""
    level = _level(level)
    pool: dict[str, Any] = {"value": -1.0, "idx": None}

    def candidates(x: float) -> list[int]:
        idx = pool["idx"] if x >= pool["value"] else None
        found = _fdp_first(g, level, make(Fraction(x)), idx)
        if found and x >= pool["value"]:
            pool["value"], pool["idx"] = x, np.array(sorted(found), dtype=np.int64)
        return found

    def prove(value: Fraction, j: int) -> Found | None:
        ok = fdp_rejects(g.m, int(g.n_guess[j]), int(g.n_correct[j]), level, make(value))
        return Found(value, j, level) if ok else None

    return _search(candidates, prove)


def epsilon_one_run_fdp_lower(g: Guesses, delta: Fraction, level: Fraction) -> Found | None:
    """The proven empirical ε of the f-DP test against f_{ε,δ} (the run is not (ε, δ)-DP), or None."""
    delta = _check_eps_delta(0, delta)[1]
    return _fdp_search(g, level, lambda e: EpsDeltaCurve(e, delta))


def mu_one_run_fdp_lower(g: Guesses, level: Fraction) -> Found | None:
    """The proven empirical Gaussian-DP μ of the f-DP test against G_μ (the run is not μ-GDP), or None."""
    return _fdp_search(g, level, GdpCurve)


def gaussian_epsilon_lower(mu: Fraction, delta: Fraction) -> Fraction:
    """The ε of the Gaussian mechanism G_μ at δ, rounded down (proven lower end, :mod:`rdp_verify.curves.gaussian`):
    the ε jax_privacy's ``epsilon_one_run_fdp`` reports for the μ it refutes."""
    from ..curves.gaussian import GaussianCurve as Exact
    from ..foundations.run import Phase

    if mu <= 0:
        return Fraction(0)
    return Exact((Phase(q=Fraction(1), sigma=1 / Fraction(mu), steps=1),)).epsilon_bounds(Fraction(delta))[0]


# ---------------------------------------------------------------------------------------------------------
# the run's curve, as the verdict reads it (module docstring, The run's curve)

_COARSE = Fraction(1, 8)  # the ladder's step in ε
_FINE = Fraction(1, 64)  # its step where the deciding thresholds read the curve
MAX_LINES = 2048  # ε ≤ 256 on the coarse ladder
_REFINE = 5  # candidates whose recursions choose the refined range
_DECIDING_ATTEMPTS = 20  # candidates proven
_LINE_DIGITS = 15

N = TypeVar("N", Fraction, float)


def gaussian_mu(mu_squared: Fraction) -> Fraction:
    """A rational μ′ ≥ √μ² (exactly √μ² when μ² is the square of a rational): the upper end of a 128-bit ball."""
    mu_squared = Fraction(mu_squared)
    num, den = math.isqrt(mu_squared.numerator), math.isqrt(mu_squared.denominator)
    if num * num == mu_squared.numerator and den * den == mu_squared.denominator:
        return Fraction(num, den)
    with ctx.workprec(_PREC):
        return upper_end(to_arb(mu_squared).sqrt())


def lines_envelope(lines: Sequence[tuple[N, N]]) -> list[tuple[N, N]]:
    """The vertices (α, y), α from 0 to 1, of the upper envelope on [0, 1] of the lines y = m·α + b given as (m, b)
    with m ≤ 0, one of them y = 0 (the monotone convex hull trick: exact for rationals, an estimate for floats)."""
    best: dict[N, N] = {}
    for m, b in lines:
        if m not in best or b > best[m]:
            best[m] = b
    hull: list[tuple[N, N]] = []
    for line in sorted(best.items()):  # slopes increasing: the active line's slope grows with α
        while len(hull) >= 2:
            (m1, b1), (m2, b2), (m3, b3) = hull[-2], hull[-1], line
            if (b1 - b3) * (m2 - m1) <= (b1 - b2) * (m3 - m1):  # the middle line is nowhere strictly above both
                hull.pop()
            else:
                break
        hull.append(line)
    zero = 0 * hull[0][1]
    one = zero + 1
    vertices = [(zero, max(b for _, b in hull))]
    for (m1, b1), (m2, b2) in zip(hull, hull[1:]):
        x = (b1 - b2) / (m2 - m1)  # where the next line takes over
        if zero < x < one and x > vertices[-1][0]:
            vertices.append((x, m1 * x + b1))
    vertices.append((one, max(m + b for m, b in hull)))
    return vertices


def lines_curve(lines: Sequence[tuple[Fraction, Fraction]]) -> HullCurve:
    """f′ = max(0, max_j f_{log s_j, δ_j}) for lines (s_j ≥ 1, 0 ≤ δ_j < 1), exactly, as a HullCurve (module
    docstring): f_{log s, δ}(α) = max{0, 1 − δ − sα, (1 − δ − α)/s}."""
    flat: list[tuple[Fraction, Fraction]] = [(Fraction(0), Fraction(0))]
    for s, d in lines:
        flat += [(-s, 1 - d), (-1 / s, (1 - d) / s)]
    vertices = lines_envelope(flat)
    return HullCurve(tuple(x for x, _ in vertices), tuple(y for _, y in vertices))


@dataclass(frozen=True)
class MaxCurve:
    """The maximum of trade-off functions f_1, …, f_n (a trade-off function): B⁻¹ is the maximum of theirs, since
    (max f_i)⁻¹(y) = inf{x : f_i(x) ≤ y for every i} = max_i f_i⁻¹(y) for nonincreasing f_i."""

    parts: tuple[Any, ...]

    def inverse_arb(self, t: arb) -> arb:
        out = self.parts[0].inverse_arb(t)
        for p in self.parts[1:]:
            out = out.max(p.inverse_arb(t))
        return out

    def inverse_float(self, t: np.ndarray) -> np.ndarray:
        out = self.parts[0].inverse_float(t)
        for p in self.parts[1:]:
            out = np.maximum(out, p.inverse_float(t))
        return out


@dataclass(frozen=True)
class _FloatCurve:
    """A piecewise-linear estimate of a trade-off function by its vertices (double precision: a screen, never a
    proof)."""

    xs: np.ndarray
    ys: np.ndarray

    def inverse_float(self, t: np.ndarray) -> np.ndarray:
        y = 1 - np.asarray(t, dtype=float)
        return np.where(y >= self.ys[0], 0.0, np.interp(y, self.ys[::-1], self.xs[::-1]))

    def accuracy(self) -> float:
        return float(1 - np.min(self.xs + self.ys) / 2)


class _Ladder:
    """Proven lines (s_j, δ_j) of a run at rational ε_j (module docstring, The run's curve), cached by ε."""

    def __init__(self, trade: Any) -> None:
        from ..curves.gaussian import GaussianCurve
        from ..foundations.run import Phase

        self.trade = trade
        self.lines: dict[Fraction, tuple[Fraction, Fraction] | None] = {}
        mu = trade.mu_upper()  # the run is μ₀-GDP, μ₀ ≤ mu: G_mu ≤ G_μ₀ ≤ f, so δ_{G_mu}(ε) ≥ δ(ε)
        self.gaussian = (None if mu is None or mu <= 0 else
                         GaussianCurve((Phase(q=Fraction(1), sigma=1 / mu, steps=1),)))

    def delta(self, eps: Fraction) -> Fraction | None:
        """δ_j ≥ δ(ε_j), rounded up to 15 digits (None: no bound below 1)."""
        from ..curves.accountant import delta_bracket

        up = delta_bracket(self.trade.curves, eps).upper
        if self.gaussian is not None:
            g = self.gaussian.delta_bounds(eps)[1]
            up = g if up is None else min(up, g)
        if up is None or up >= 1:
            return None
        return Fraction(decimal_text(up, _LINE_DIGITS, "up")) if up > 0 else Fraction(0)

    def line(self, eps: Fraction) -> tuple[Fraction, Fraction] | None:
        """(s, δ) with s ≥ e^ε rational (rounded up) and δ ≥ δ(ε), or None."""
        if eps not in self.lines:
            delta = self.delta(eps)
            if delta is None:
                self.lines[eps] = None
            else:
                with ctx.workprec(_PREC):
                    s = Fraction(decimal_text(upper_end(to_arb(eps).exp()), _LINE_DIGITS, "up"))
                self.lines[eps] = (max(s, Fraction(1)), delta)
        return self.lines[eps]

    def coarse(self, floor: Fraction) -> list[Fraction]:
        """ε = j/8 from 0 until δ_j ≤ floor or δ_j stops falling (at most MAX_LINES points)."""
        out: list[Fraction] = []
        last = None
        for j in range(MAX_LINES):
            eps = _COARSE * j
            line = self.line(eps)
            out.append(eps)
            if line is not None:
                if line[1] <= floor or (last is not None and line[1] >= last):
                    break
                last = line[1]
        return out

    def curve(self, epsilons: Sequence[Fraction]) -> tuple[HullCurve, int]:
        """The proven f′ of the lines at ``epsilons`` (module docstring, The run's curve) and the number of lines."""
        lines = [line for e in sorted(set(epsilons)) if (line := self.line(e)) is not None]
        return lines_curve(lines), len(lines)


def _estimate(ladder: _Ladder, coarse: Sequence[Fraction]) -> _FloatCurve:
    """The curve on the ladder j/64 with log δ interpolated linearly between the proven coarse points (a screen)."""
    known = [(float(e), line[1]) for e in coarse if (line := ladder.line(e)) is not None]
    if not known:
        return _FloatCurve(np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    eps = np.array([e for e, _ in known])
    logd = np.array([math.log(float(d)) if d > 0 else -745.0 for _, d in known])
    fine = np.arange(eps[0], eps[-1] + 1e-12, float(_FINE))
    deltas = np.exp(np.interp(fine, eps, logd))
    s = np.exp(fine)
    flat = [(0.0, 0.0)] + [(float(-a), float(1 - d)) for a, d in zip(s, deltas)] \
        + [(float(-1 / a), float((1 - d) / a)) for a, d in zip(s, deltas)]
    vertices = lines_envelope(flat)
    return _FloatCurve(np.array([x for x, _ in vertices]), np.array([y for _, y in vertices]))


def _trace(m: int, k: int, c: int, level: float, curve: _FloatCurve, max_steps: int = 20_000) -> np.ndarray:
    """The arguments t at which the double-precision recursion of one threshold reads B⁻¹ (where it decides)."""
    r, h, target, read = level * c / m, level * (k - c) / m, k / m, []
    for i in range(c - 1, max(c - 1 - max_steps, -1), -1):
        if r + h > target:
            break
        read.append(r)
        d = max(float(curve.inverse_float(np.array([r]))[0]) - h, 0.0)
        if d <= 0:
            break
        h, r = h + d, r + d * i / (k - i)
    return np.array(read)


def _active_span(estimate: _FloatCurve, reads: np.ndarray, top: Fraction) -> tuple[Fraction, Fraction] | None:
    """The ε-range (widened by a coarse step each side, within [0, top]) of the estimate's lines active where the
    recursion reads the curve: at α = B⁻¹(t) the slope of the curve is −e^ε (α small) or −e^{−ε} (α near 1)."""
    if not len(reads):
        return None
    xs, ys = estimate.xs, estimate.ys
    alpha = np.interp(1 - reads, ys[::-1], xs[::-1])
    k = np.clip(np.searchsorted(xs, alpha, side="right"), 1, len(xs) - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = -(ys[k] - ys[k - 1]) / (xs[k] - xs[k - 1])
    slope = slope[np.isfinite(slope) & (slope > 0)]
    if not len(slope):
        return None
    eps = np.abs(np.log(slope))
    lo = max(Fraction(0), (math.floor(float(eps.min()) / float(_COARSE)) - 1) * _COARSE)
    hi = min(top, (math.ceil(float(eps.max()) / float(_COARSE)) + 1) * _COARSE)
    return (lo, hi) if lo <= hi else None


@dataclass(frozen=True)
class DecidingCurve:
    """What a one-run f-DP verdict was held against: ``kind`` ``gaussian`` (G_μ′, ``mu`` = μ′, ``exact`` when
    μ′ = μ), ``lines`` (the envelope of ``lines`` proven (ε, δ) lines, ``refined`` of them added on the ladder
    j/64) or ``per-epoch`` (G_μ′ for the no-amplification μ′ and the hull of the lower envelope)."""

    kind: str
    mu: Fraction | None = None
    lines: int = 0
    refined: int = 0
    exact: bool = False

    def text(self) -> str:
        """The curve, as the verdict's line names it."""
        if self.kind == "gaussian":
            mu = f"mu = {fraction_text(self.mu)}" if self.exact else f"mu <= {decimal_text(self.mu, 6, 'up')}"
            return f"the run's exact trade-off curve G_mu, {mu} (q = 1: the Gaussian mechanism, in closed form)"
        if self.kind == "lines":
            return (f"the run's certified trade-off curve (the upper envelope of {self.lines} (epsilon, delta) lines "
                    "of its proven privacy curve, 1/8 apart in epsilon"
                    + (f", {self.refined} more 1/64 apart where the deciding thresholds read it)" if self.refined else ")"))
        return ("the run's certified trade-off curve (the larger of its lower envelope's hull"
                + ("" if self.mu is None else
                   f" and G_mu for its no-amplification mu <= {decimal_text(self.mu, 6, 'up')}")
                + ")")


def _prove(g: Guesses, level: Fraction, curve: Any, order: Sequence[int], attempts: int) -> Found | None:
    for j in list(dict.fromkeys(order))[:attempts]:
        if fdp_rejects(g.m, int(g.n_guess[j]), int(g.n_correct[j]), level, curve):
            return Found(None, int(j), level)
    return None


def deciding_rejects(trade: Any, g: Guesses, level: Fraction,
                     attempts: int = _DECIDING_ATTEMPTS) -> tuple[Found | None, DecidingCurve]:
    """A threshold whose recursion (Mahloujifar, Melis, Chaudhuri 2024) is proven to reject a trade-off function
    f′ ≤ the run's f at ``level`` (module docstring, The run's curve), or None; and what f′ was."""
    from ..curves.gaussian import GaussianCurve
    from ..curves.per_epoch import PerEpochBounds

    curves = trade.curves
    if isinstance(curves, GaussianCurve):
        mu = gaussian_mu(curves.mu_squared)
        gdp = GdpCurve(mu)
        return (_prove(g, level, gdp, _fdp_first(g, level, gdp), attempts),
                DecidingCurve("gaussian", mu=mu, exact=mu * mu == curves.mu_squared))
    if isinstance(curves, PerEpochBounds):
        mu = trade.mu_upper()
        hull = hull_from_envelope(trade.f_lower)
        curve: Any = MaxCurve((GdpCurve(mu), hull)) if mu is not None and mu > 0 else hull
        return _prove(g, level, curve, _fdp_first(g, level, curve), attempts), DecidingCurve("per-epoch", mu=mu)
    ladder = _Ladder(trade)
    coarse = ladder.coarse(level / (1000 * g.m))  # below the smallest argument the recursion reads, level/m
    estimate = _estimate(ladder, coarse)
    candidates = _fdp_first(g, level, estimate)[:attempts]
    fine: set[Fraction] = set()
    for j in candidates[:_REFINE]:
        reads = _trace(g.m, int(g.n_guess[j]), int(g.n_correct[j]), float(level), estimate)
        span = _active_span(estimate, reads, coarse[-1])
        if span is not None:
            lo, hi = span
            fine.update(lo + _FINE * i for i in range(int((hi - lo) / _FINE) + 1))
    fine -= set(coarse)
    proven, count = ladder.curve([*coarse, *fine])
    refined = sum(ladder.line(e) is not None for e in fine)
    # the proven curve's own screen first (it may rank thresholds the estimate did not), then the estimate's
    order = [*_fdp_first(g, level, proven)[:attempts], *candidates]
    return _prove(g, level, proven, order, attempts), DecidingCurve("lines", lines=count, refined=refined)


# ---------------------------------------------------------------------------------------------------------
# the audit: a report


METHODS = ("one-run", "one-run-fdp")
ASSUMPTION = ("each canary was included in the one training run independently with probability 1/2 (Steinke, "
              "Nasr, Jagielski 2023, Section 3), drawn before training and kept secret from the attack; this "
              "file cannot show it: the member labels are checked to be 0 or 1, nothing more")
_EPS_DIGITS = 6


def check_chain(g: Guesses) -> None:
    """Thresholds under the ``any-threshold`` rule must be one attack's thresholds on one list of scores: guesses
    and correct and wrong guesses all grow (or all fall) from row to row; else one line (InputError)."""
    if len(g.n_guess) < 2:
        return
    wrong = g.n_guess - g.n_correct
    for sign in (1, -1):
        if (np.all(sign * np.diff(g.n_guess) > 0) and np.all(sign * np.diff(g.n_correct) >= 0)
                and np.all(sign * np.diff(wrong) >= 0)):
            return
    raise InputError("counts rows that are not the nested thresholds of one list of scores have no level over all "
                     "thresholds: give the scores, or say --thresholds-fixed-in-advance")


def one_run_level(g: Guesses, confidence: Fraction, rule: str) -> Fraction:
    """The level of each threshold's test (module docstring): γ/m over the m possible guess counts
    (``any-threshold``: scores, or counts rows that are one list's thresholds), γ/rows (``fixed-in-advance``)."""
    gamma = 1 - Fraction(confidence)
    if rule == "fixed-in-advance":
        return gamma / len(g.n_guess)
    if rule != "any-threshold":
        raise InputError(f"unknown level rule {rule!r}")
    return gamma / g.m


def _text(x: Fraction, rounding: str = "down") -> str:
    return decimal_text(x, _EPS_DIGITS, rounding)


def _guess_json(g: Guesses, found: Found) -> dict[str, Any]:
    j = found.index
    out: dict[str, Any] = {"rank": j + 1, "threshold": g.threshold(j), "guesses": int(g.n_guess[j]),
                           "correct": int(g.n_correct[j])}
    if found.p_value is not None:
        out["p_value_upper"] = _text(found.p_value, "up")
    return out


def _run_mu(trade: Any) -> tuple[Callable[[Fraction], bool], str] | None:
    """``(exceeds, text)``: whether a μ exceeds the μ₀ the run is proven μ₀-GDP for (exact: q = 1, μ₀² = Σ Δ²T_i/σ_i²;
    else the proven upper end of :meth:`~rdp_verify.tradeoff.curve.TradeOff.mu_upper`, the no-amplification μ₀) and
    that μ₀ as text; None when no μ₀ is proven (a run with mechanisms beyond the Gaussian family)."""
    from ..curves.gaussian import GaussianCurve
    if isinstance(trade.curves, GaussianCurve):
        mu_squared = trade.curves.mu_squared
        mu = gaussian_mu(mu_squared)
        return ((lambda x: x * x > mu_squared),
                f"mu = {fraction_text(mu)}" if mu * mu == mu_squared else f"mu <= {_text(mu, 'up')}")
    mu = trade.mu_upper()
    if mu is None:
        return None
    return (lambda x: x > mu), f"mu <= {_text(mu, 'up')} (no amplification)"


def audit_one_run(trade: Any | None, counts: Sequence[Any] | Guesses, *, method: str, confidence: Fraction,
                  delta: Fraction, rule: str = "any-threshold") -> dict[str, Any]:
    """A one-run audit of ``counts`` (module docstring): the proven empirical bounds, and with ``trade`` (a
    :class:`~rdp_verify.tradeoff.curve.TradeOff`) the verdict against the run. Every number is rounded in the
    direction that keeps it proven (ε and μ down, p-values up).

    **The verdict is the conclusion of every test the report prints** (issue 39): ``bug`` when some threshold
    rejects the run's guarantee at the level, by any of

    * the deciding test: ``one-run``, the p-value of Steinke, Nasr, Jagielski 2023 at (ε_up(δ), δ), ε_up the
      proven upper end of the run's ε at δ; ``one-run-fdp``, the recursion of Mahloujifar, Melis, Chaudhuri 2024
      against the run's curve, exactly G_μ for q = 1 and otherwise the envelope of its proven (ε, δ) lines refined
      where the deciding thresholds read it (:func:`deciding_rejects`);
    * the printed empirical ε (either method) above ε_up: its threshold rejects (ε_emp, δ)-DP, and the run, being
      (ε_up, δ)-DP, is (ε_emp, δ)-DP (a larger ε; Dong, Roth, Su 2022, Proposition 2.5: f_{ε,δ} falls as ε grows);
    * the printed Gaussian-DP μ (``one-run-fdp``) above the μ₀ the run is proven μ₀-GDP for: its threshold rejects
      G_μ_emp, and G_μ₀ ≥ G_μ_emp (G_μ falls as μ grows), so the run is G_μ_emp-DP;
    * for q = 1 runs, whose curve is G_μ₀ exactly, the printed ε of G_μ_emp above ε_up (then μ_emp > μ₀: the same
      rejection; checked on its own so that the verdict never contradicts that line whatever the rounding).

    One union bound covers them all, whatever parameter (ε_emp, μ_emp) the data chose: for a guess count k, every
    hypothesis H tested here is one the run satisfies (f′ ≤ f; (ε, δ) with ε ≥ ε_up; G_μ with μ ≥ μ₀), and a test
    of H at level τ rejects only at counts c with P_H[at least c of the k guesses correct] ≤ τ. So "some test
    rejects at k" lies within "at least c* correct", c* the smallest count any of them rejects at, and that
    event has probability at most τ under the run (which satisfies the H that rejects at c*); the union over the
    guess counts costs the confidence as before. Else ``consistent``. ``rejecting`` names the threshold of the
    first test that rejects; the reason names that test."""
    from ..curves.accountant import epsilon_bracket
    from ..curves.gaussian import GaussianCurve
    from .canaries import check_confidence

    if method not in METHODS:
        raise InputError(f"unknown one-run method {method!r}: {', '.join(METHODS)}")
    confidence = check_confidence(confidence)
    delta = _check_eps_delta(0, delta)[1]
    g = counts if isinstance(counts, Guesses) else Guesses.from_counts(counts)
    if rule == "any-threshold":
        check_chain(g)
    level = one_run_level(g, confidence, rule)
    report: dict[str, Any] = {
        "method": method,
        "confidence": fraction_text(confidence),
        "thresholds": len(g.n_guess),
        "canary_count": g.m,
        "level_rule": rule,
        "level": fraction_text(level),
        "assumption": ASSUMPTION,
        "delta": fraction_text(delta),
    }
    mu = gaussian_eps = None
    if method == "one-run":
        found = epsilon_one_run_lower(g, delta, level)
        report["empirical_epsilon_lower"] = _text(found.value) if found else "0"
        report["strongest"] = _guess_json(g, found) if found else None
    else:
        found = epsilon_one_run_fdp_lower(g, delta, level)
        report["empirical_epsilon_lower"] = _text(found.value) if found else "0"
        report["strongest"] = _guess_json(g, found) if found else None
        mu = mu_one_run_fdp_lower(g, level)
        report["gdp_mu_lower"] = _text(mu.value) if mu else "0"
        gaussian_eps = gaussian_epsilon_lower(mu.value, delta) if mu and delta > 0 else None
        report["gaussian_epsilon_lower"] = None if gaussian_eps is None else _text(gaussian_eps)
    if trade is None:
        report["verdict"] = None
        return report
    proven = epsilon_bracket(trade.curves, delta)
    eps_up = None if proven.upper is None else _text(proven.upper, "up")
    report["proven_epsilon"] = {"lower": _text(proven.lower), "upper": eps_up}
    at = f"at level {fraction_text(level)} (confidence {fraction_text(confidence)}, Bonferroni)"
    tests: list[tuple[Found, str]] = []  # (threshold, what it proves) of each test that rejects, in this order
    if method == "one-run":
        against = f"({eps_up if eps_up is not None else 'inf'}, {fraction_text(delta)})-DP"
        hit = None if proven.upper is None else one_run_rejects(g, proven.upper, delta, level)
        if hit:
            tests.append((hit, f"rejects {against} {at}"))
    else:
        hit, curve = deciding_rejects(trade, g, level)
        against = curve.text()
        if hit:
            tests.append((hit, f"rejects {against} {at}"))
    if found and proven.upper is not None and found.value > proven.upper:
        emp = _text(found.value)
        tests.append((found, f"rejects ({emp}, {fraction_text(delta)})-DP {at}, the printed empirical epsilon, while "
                             f"the run is proven ({eps_up}, {fraction_text(delta)})-DP, hence ({emp}, "
                             f"{fraction_text(delta)})-DP"))
    run_mu = _run_mu(trade) if mu else None
    if mu and run_mu is not None and run_mu[0](mu.value):
        x = _text(mu.value)
        tests.append((mu, f"rejects G_mu for mu = {x} {at}, the printed Gaussian-DP bound, while the run is proven "
                          f"mu-GDP for {run_mu[1]}, hence mu-GDP for mu = {x}"))
    elif (mu and gaussian_eps is not None and proven.upper is not None and gaussian_eps > proven.upper
          and isinstance(trade.curves, GaussianCurve)):
        x, e = _text(mu.value), _text(gaussian_eps)
        tests.append((mu, f"rejects G_mu for mu = {x} {at}, whose epsilon at delta = {fraction_text(delta)} is >= {e}, "
                          f"above the run's proven epsilon <= {eps_up}: the run's curve is G_mu for its own mu "
                          "(q = 1), so its mu is below this one and it is G_mu-DP for this one"))
    report["rejecting"] = _guess_json(g, tests[0][0]) if tests else None
    report["verdict"] = "bug" if tests else "consistent"
    if tests:
        first = tests[0][0].index
        report["verdict_reason"] = (
            f"the threshold of rank {first + 1} ({int(g.n_correct[first])} of {int(g.n_guess[first])} guesses correct) "
            f"{tests[0][1]}: the implementation is not the mechanism it states")
    else:
        # as reports before issue 39 wrote it (one-run: the same text; no printed bound exceeds: else it would be bug)
        report["verdict_reason"] = f"no threshold rejects {against} at level {fraction_text(level)}"
    return report
