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
  the envelope only makes a ``bug`` verdict harder: it stays proven.

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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

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
           "METHODS", "ASSUMPTION", "check_chain"]

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

    def _inverse_exact(self, y: Fraction) -> Fraction:
        """f′⁻¹(y) = inf{x : f′(x) ≤ y} for a rational y, exactly."""
        if y >= self.ys[0]:
            return Fraction(0)
        k = next(k for k in range(1, len(self.ys)) if self.ys[k] <= y)
        x1, y1, x2, y2 = self.xs[k - 1], self.ys[k - 1], self.xs[k], self.ys[k]
        return x1 + (y1 - y) * (x2 - x1) / (y1 - y2)

    def inverse_arb(self, t: arb) -> arb:
        # nondecreasing in t: the values at the ball's two ends enclose it (exact rationals, then a ball)
        lo, hi = self._inverse_exact(1 - upper_end(t)), self._inverse_exact(1 - lower_end(t))
        return to_arb(lo).union(to_arb(hi))

    def inverse_float(self, t: np.ndarray) -> np.ndarray:
        y = 1 - np.asarray(t, dtype=float)
        # f′ decreasing where positive: x as a function of y, by interpolation on the reversed vertices
        return np.where(y >= self._yf[0], 0.0, np.interp(y, self._yf[::-1], self._xf[::-1]))


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


def audit_one_run(trade: Any | None, counts: Sequence[Any] | Guesses, *, method: str, confidence: Fraction,
                  delta: Fraction, rule: str = "any-threshold") -> dict[str, Any]:
    """A one-run audit of ``counts`` (module docstring): the proven empirical bounds, and with ``trade`` (a
    :class:`~rdp_verify.tradeoff.curve.TradeOff`) the verdict against the run: ``bug`` when some threshold
    rejects its certified guarantee at the level (``one-run``: (ε_up(δ), δ) with ε_up the proven upper end of
    the run's ε at δ; ``one-run-fdp``: the run's certified lower envelope f_low, through :func:`hull_from_envelope`),
    else ``consistent``. Every number is rounded in the direction that keeps it proven (ε and μ down, p-values up)."""
    from ..curves.accountant import epsilon_bracket
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
        report["gaussian_epsilon_lower"] = _text(gaussian_epsilon_lower(mu.value, delta)) if mu and delta > 0 else None
    if trade is None:
        report["verdict"] = None
        return report
    proven = epsilon_bracket(trade.curves, delta)
    report["proven_epsilon"] = {"lower": _text(proven.lower), "upper": None if proven.upper is None
                                else _text(proven.upper, "up")}
    if method == "one-run":
        hit = None if proven.upper is None else one_run_rejects(g, proven.upper, delta, level)
        against = f"({_text(proven.upper, 'up') if proven.upper is not None else 'inf'}, {fraction_text(delta)})-DP"
    else:
        hull = hull_from_envelope(trade.f_lower)
        hit = fdp_run_rejects(g, level, hull)
        against = f"the certified trade-off envelope ({len(hull.xs)} vertices)"
    report["rejecting"] = _guess_json(g, hit) if hit else None
    report["verdict"] = "bug" if hit else "consistent"
    report["verdict_reason"] = (
        f"the threshold of rank {hit.index + 1} ({int(g.n_correct[hit.index])} of {int(g.n_guess[hit.index])} guesses "
        f"correct) rejects {against} at level {fraction_text(level)} (confidence "
        f"{fraction_text(confidence)}, Bonferroni): the implementation is not the mechanism it states" if hit else
        f"no threshold rejects {against} at level {fraction_text(level)}")
    return report
