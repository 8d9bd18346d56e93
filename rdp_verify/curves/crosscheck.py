"""An independent estimate of δ(ε) for a run, to cross-check the proven bracket (mpmath and numpy, not a proof).

Nothing here is shared with the bracket's computation (Arb curves, lattice PLDs, integer
convolution, the closed form in Arb). The method depends on the run:

* **q = 1 in every phase** (the Gaussian mechanism, μ² = Σ Δ²T_i/σ_i², Δ = 2 under replace-one), and
  **shuffled or balls-in-bins runs**, whose upper end is the Gaussian with T_i the epochs begun (this checks
  that end only: the lower end comes from a test whose δ is an exact finite sum): the composed privacy loss is
  N(μ²/2, μ²) under P in both directions, and δ(ε) = ∫_ε^∞ (1 − e^{ε−ℓ}) dN(μ²/2, μ²)(ℓ) by mpmath
  quadrature of the loss density (not the closed form the bracket uses).
* **one step**: δ(ε) = ∫ (p(z) − e^ε·q(z))_+ dz over the densities of the remove and the add pair, by
  quadrature on the half-line where the integrand is positive (the likelihood ratio is monotone).
* **two steps**: δ(ε) = E_{z ~ P_1}[H_2(e^{ε − L_1(z)})], the second step's curve (closed form from Φ)
  at the first step's loss, by quadrature over z, with breakpoints where the argument crosses the
  second curve's non-analytic point (x = 1 − q_2 for remove, 1/(1 − q_2) for add).
* **replace-one runs**, any number of steps: the Laplace inversion below, in the one direction (the
  pairs are symmetric), with the loss of the mixture pair (Poisson) or of the symmetrised remove pair of
  SG(q, σ/2) (fixed-size batches: its loss on L > 0, the mirror image and an atom at L = 0; the term in
  which every step sits on its atom adds nothing to δ(ε) for ε ≥ 0 and is subtracted, so that the
  integrand decays). For fixed-size batches this estimates the *upper* end's curve.
* **three steps or more**: Laplace (Bromwich) inversion through the saddle point (the
  exponentially tilted contour of Alghamdi, Gomez, Asoodeh, Calmon, Kosut, Sankar, "The Saddle-Point
  Method in Differential Privacy", ICML 2023, Section 3). For Re u = c > 0,
  ∫ e^{−uℓ}(1 − e^{ε−ℓ})_+ dℓ = e^{−uε}/(u(1 + u)), so

      δ_dir(ε) = (1/π)·∫_0^∞ Re[ M(c + is)·e^{−(c+is)ε} / ((c + is)(1 + c + is)) ] ds,

  with M(u) = E_P[e^{uL}] = Π_i M_i(u)^{T_i} the moment generating function of the composed loss;
  one step's M_i(u) = E_{μ0}[w^{1+u}] (remove) or E_{μ0}[w^{−u}] (add), w = 1 − q + q·e^{(2z−1)/(2σ²)}.
  c minimises the integrand's bound g(c) = K(c) − cε − log(c(1 + c)) (K = log M; g is convex), the
  saddle point, where the tilted loss has standard deviation σ_c = √K''(c) and the integrand decays
  on the scale 1/σ_c. The moments come from a composite Gauss–Legendre rule in z on the box
  [−40σ, 1 + 40σ], with panels short enough that e^{is·log w} turns by at most 6 radians on each. Restricting
  every step to the box changes δ by at most its mass outside, T·2Φ̄(40) ≈ T·7e-350, far below every
  supported δ (≥ 1e-40); it also keeps the moments finite and undominated by the loss's far tail
  (e^{(2z−1)/(2σ²)} is log-normal). The s-integral is a composite rule on [0, 12/σ_c] computed at two
  resolutions.

**Error bounds** (each an estimate, so the result is labelled one): for quadrature, the larger of
mpmath's tanh-sinh error estimate and its difference from Gauss–Legendre, doubled, plus the working
precision. For the inversion: 10 × the difference of the two s-resolutions; 10 × the change of the
moments under a twice finer z-rule; the tail beyond the integrated range estimated from samples of
the integrand's modulus at doubling s (each interval bounded by the larger of its two end samples), and
beyond the last sample the modulus is at most ρ·M(c)e^{−cε}/s², which integrates to ρ·M(c)e^{−cε}/S,
with ρ the larger of the last two sampled ratios of the modulus of M(c + is) to M(c) (ρ = 1 would be
rigorous, since that ratio is at most 1; where the moments cannot be
resolved at larger s, ρ = 1 is used).
Where the integrand does not decay (a loss distribution with a near-atom, as for σ ≪ 1), the
error stays large and the estimate is reported as uninformative; it never decides a verdict
then (:mod:`rdp_verify.curves.certificate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

import mpmath
import numpy as np

from ..foundations.results import Bounded, mpf_to_fraction, to_mpf
from ..foundations.run import Phase

__all__ = ["Estimate", "estimate_delta"]

DPS = 30


@dataclass(frozen=True)
class Estimate(Bounded):
    """δ(ε) ≈ value ± error (an *estimate*, not a proof), by ``method``."""

    method: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _to_fraction(x: Any) -> Fraction:
    return mpf_to_fraction(mpmath.mpf(x))


def _quad(f: Callable[[Any], Any], points: Sequence[Any]) -> tuple[Any, Any]:
    """∫ f over the consecutive pieces of ``points``: tanh-sinh, cross-checked by Gauss–Legendre."""
    value, error = mpmath.quad(f, points, error=True)
    other = mpmath.quad(f, points, method="gauss-legendre")
    return value, 2 * max(error, abs(value - other)) + abs(value) * mpmath.mpf(10) ** (5 - mpmath.mp.dps)


def _pieces(points: Sequence[Any], lo: Any, hi: Any) -> list[Any]:
    """Sorted distinct breakpoints inside [lo, hi], with the ends."""
    inside = sorted({p for p in points if lo < p < hi})
    return [lo, *inside, hi]


def _max_of(values: list[tuple[Any, Any]]) -> tuple[Any, Any, int]:
    """Enclose max_i v_i for v_i ∈ [value_i ± error_i]: (midpoint, radius, index of the largest value)."""
    lo = max(v - e for v, e in values)
    hi = max(v + e for v, e in values)
    return (lo + hi) / 2, (hi - lo) / 2, max(range(len(values)), key=lambda i: values[i][0])


# -- q = 1: the Gaussian mechanism ------------------------------------------------------------------

def _gaussian(phases: Sequence[Phase], epsilon: Fraction) -> Estimate:
    """δ(ε) of the Gaussian mechanism the run is (q = 1), or that bounds it (per-epoch samplers: each record
    in one step per epoch begun, no amplification), by quadrature of its loss density."""
    def uses(p: Phase) -> int:  # the steps in which the record is used: every step, or once per epoch begun
        if p.sampler in ("shuffle", "balls-in-bins"):
            batches = p.dataset_size // p.batch_size
            return -(-p.steps // batches)
        return p.steps

    # sensitivity 1 (add/remove) or 2 (replace-one: the sum moves by g(x) − g(x'))
    mu2 = sum(mpmath.mpf(uses(p)) * (4 if p.neighbours == "replace-one" else 1) / to_mpf(p.sigma) ** 2
              for p in phases)
    mu = mpmath.sqrt(mu2)
    eps = to_mpf(epsilon)
    lead = (eps - mu2 / 2) / mu  # where ε sits in the loss distribution N(μ²/2, μ²), in standard deviations
    scale = mu / max(1, abs(lead)) if lead > 0 else mu  # the density's decay length beyond ε

    def f(t: Any) -> Any:  # t = ℓ − ε ≥ 0
        return mpmath.npdf(eps + t, mu2 / 2, mu) * -mpmath.expm1(-t)

    marks = [mpmath.mpf(x) for x in (1, 10)] + [scale * k for k in (1, 4, 16)]
    if lead < 0:
        marks.append(-lead * mu)  # the density's peak
    value, error = _quad(f, _pieces(marks, mpmath.mpf(0), mpmath.inf))
    what = ("the no-amplification Gaussian bound: it checks the upper end" if any(uses(p) != p.steps for p in phases)
            else "Gaussian mechanism, q = 1")
    return Estimate(_to_fraction(value), _to_fraction(error),
                    f"quadrature of the composed loss density N(mu^2/2, mu^2) ({what})", {"mu": mpmath.nstr(mu, 15)})


def _add_rdp_estimates(t: int, sigma: Fraction, orders: Sequence[Fraction]) -> list[float]:
    """D_α(Q‖P) of one epoch of random allocation's pair in the add direction, (1/k)·log E[S^{−k}], k = α − 1, at
    each order, in double precision by another algorithm than the proven bound's: E[S^{−k}] =
    (1/Γ(k))·∫ e^{ky}·ψ(e^y/t)^t dy (y = log u), ψ(v) = E[e^{−vX}] by 200-node Gauss–Hermite quadrature, the
    y-integral by the trapezoid rule (step 0.01 from −40/k − 5 to where the integrand has fallen by e^{−50} past
    its peak). An estimate, not a bound: it tracks the exact Rényi divergence, a little below the proven one."""
    s = 1 / float(sigma)
    nodes, weights = np.polynomial.hermite_e.hermegauss(200)
    weights = weights / math.sqrt(2 * math.pi)
    scales = np.exp(-s * s / 2 + s * nodes)
    low = min(-40 / (float(a) - 1) - 5 for a in orders)
    y_all = low + 0.01 * np.arange(int((80 - low) / 0.01))
    with np.errstate(divide="ignore", under="ignore"):
        log_psi_all = np.log(np.exp(-np.outer(np.exp(y_all) / t, scales)) @ weights)
    out = []
    for alpha in orders:
        k = float(alpha) - 1
        first = int((-40 / k - 5 - low) / 0.01)
        y, log_psi = y_all[first:], log_psi_all[first:]
        f = k * y + t * log_psi
        peak = int(np.argmax(f))
        after = np.nonzero(f[peak:] < f[peak] - 50)[0]
        f = f[:peak + after[0]] if len(after) else f
        top = f.max()
        integral = (np.exp(f - top).sum() - (np.exp(f[0] - top) + np.exp(f[-1] - top)) / 2) * 0.01
        out.append(float((top + math.log(integral) - math.lgamma(k)) / k))
    return out


def _random_allocation(phases: Sequence[Phase], epsilon: Fraction, renyi: bool = False) -> Estimate:
    """The random-allocation upper bound (:mod:`rdp_verify.curves.random_allocation`) re-evaluated in mpmath by
    another algorithm: the remove moment by J. C. P. Miller's recurrence for the power C(x)^t (n·g_n =
    Σ_k ((t + 1)k − n)·c_k·g_{n−k}) instead of repeated squaring in Arb; the add direction by the Gaussian
    closed form and (``renyi``), where that is above the remove direction (as the bound does), the smaller of
    it and the Rényi DP of the exact pair estimated in double precision (:func:`_add_rdp_estimates`, not the
    proven quadrature); the same orders and conversion (Balle et al. 2020, Theorem 21). The add direction's
    Rényi estimate tracks the exact Rényi divergence, so it lies a little below the proven bound (0.1–0.5 % in
    the RDP)."""
    from .random_allocation import ADD_ORDERS, ORDERS

    with mpmath.workdps(60):
        eps = to_mpf(epsilon)
        alloc = [p for p in phases if p.sampler == "balls-in-bins" and p.neighbours == "add-remove"]
        others = [p for p in phases if p not in alloc]

        def remove(p: Phase, a: int) -> Any:
            t, half = p.batches_per_epoch, 1 / (2 * to_mpf(p.sigma) ** 2)
            c = [mpmath.exp(half * k * (k - 1)) / mpmath.factorial(k) for k in range(a + 1)]
            g = [mpmath.mpf(1)]
            for n in range(1, a + 1):
                g.append(mpmath.fsum(((t + 1) * k - n) * c[k] * g[n - k] for k in range(1, n + 1)) / n)
            return mpmath.log(g[a] * mpmath.factorial(a) / mpmath.mpf(t) ** a) / (a - 1)

        def converted(a: Any, r: Any) -> Any:  # log δ from RDP R at order a (Balle et al. 2020, Theorem 21)
            lam = to_mpf(Fraction(a)) - 1
            return lam * (r - eps) + lam * mpmath.log(lam / (1 + lam)) - mpmath.log1p(lam)

        def unamplified(a: Any) -> Any:
            return sum(p.epochs[1] * to_mpf(Fraction(a)) * (4 if p.neighbours == "replace-one" else 1)
                       / (2 * to_mpf(p.sigma) ** 2) for p in others)

        def log_delta(a: int) -> Any:
            return converted(a, sum(p.epochs[1] * remove(p, a) for p in alloc) + unamplified(a))

        best = min(ORDERS, key=log_delta)
        remove_delta = min(mpmath.exp(log_delta(best)), 1)
        shift = sum(p.epochs[1] * (1 - mpmath.mpf(1) / p.batches_per_epoch) / (2 * to_mpf(p.sigma) ** 2)
                    for p in alloc)
        mu = mpmath.sqrt(sum(mpmath.mpf(p.epochs[1]) / p.batches_per_epoch / to_mpf(p.sigma) ** 2 for p in alloc)
                         + sum(p.epochs[1] * (4 if p.neighbours == "replace-one" else 1) / to_mpf(p.sigma) ** 2
                               for p in others))
        e = eps - shift
        add_delta = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
        error = max(remove_delta, add_delta) * mpmath.mpf(10) ** -20
        if renyi and add_delta > remove_delta:  # the Rényi DP of the exact pair (double precision), as the bound
            rho = [[mpmath.mpf(x) for x in _add_rdp_estimates(p.batches_per_epoch, p.sigma, ADD_ORDERS)]
                   for p in alloc]
            renyi = min(min(mpmath.exp(converted(a, sum(p.epochs[1] * r[i] for p, r in zip(alloc, rho))
                                                 + unamplified(a))), 1) for i, a in enumerate(ADD_ORDERS))
            if renyi < add_delta:  # its double-precision error: about 1e-6 of E[S^-k], E·1e-6 of δ
                add_delta = renyi
                error = max(error, renyi * sum(p.epochs[1] for p in alloc) * mpmath.mpf(10) ** -6)
        value = max(remove_delta, add_delta)
    return Estimate(_to_fraction(value), _to_fraction(error),
                    "the random-allocation upper bound re-evaluated in mpmath (Miller's recurrence; it checks the "
                    "upper end)", {"remove_order": best})


# -- one step -----------------------------------------------------------------------------------------

class _Step:
    """One SGM step in mpmath: densities, the log-likelihood ratio log w(z) and its closed-form curve."""

    def __init__(self, q: Fraction, sigma: Fraction):
        self.q_exact = q
        self.q, self.sigma = to_mpf(q), to_mpf(sigma)
        self.s2 = self.sigma ** 2
        self.norm = 1 / (self.sigma * mpmath.sqrt(2 * mpmath.pi))

    def mu0(self, z: Any) -> Any:
        return self.norm * mpmath.exp(-z * z / (2 * self.s2))

    def r(self, z: Any) -> Any:
        return (2 * z - 1) / (2 * self.s2)

    def log_w(self, z: Any) -> Any:
        """log(1 − q + q·e^r) = log1p(q·expm1(r)): no cancellation for small q·e^r (mpmath has no overflow)."""
        r = self.r(z)
        if self.q_exact == 1:
            return r
        return mpmath.log1p(self.q * mpmath.expm1(r))

    def z_of_loss(self, loss: Any) -> Any:
        """The z with log w(z) = loss (w increasing), or None when loss ≤ log(1 − q)."""
        if self.q_exact == 1:
            return mpmath.mpf(1) / 2 + self.s2 * loss
        ratio = mpmath.expm1(loss) / self.q
        if ratio <= -1:
            return None
        return mpmath.mpf(1) / 2 + self.s2 * mpmath.log1p(ratio)

    def curve(self, log_x: Any, direction: str) -> Any:
        """H_dir(x) at x = e^{log_x}, from Φ, each form evaluated where it has no cancellation."""
        if direction == "add":  # H_add(x) = 1 − x + x·H_remove(1/x)
            x = mpmath.exp(log_x)
            if log_x <= 0:  # x ≤ 1: 1 − x ≥ 0 and x·H_remove(1/x) ≥ 0
                return -mpmath.expm1(log_x) + x * self.curve(-log_x, "remove")
            z = self.z_of_loss(-log_x)  # x > 1: x·G_remove(1/x) with G = H − (1 − x) ≥ 0
            if z is None:
                return mpmath.mpf(0)
            t = mpmath.expm1(-log_x) + self.q
            return x * (t * mpmath.ncdf(z / self.sigma) - self.q * mpmath.ncdf((z - 1) / self.sigma))
        z = self.z_of_loss(log_x)
        if z is None:
            return -mpmath.expm1(log_x)  # x ≤ 1 − q: H = 1 − x
        t = mpmath.expm1(log_x) + self.q
        if log_x < 0:  # H = (1 − x) + G, G = t·Φ(z/σ) − q·Φ((z − 1)/σ)
            return -mpmath.expm1(log_x) + t * mpmath.ncdf(z / self.sigma) - self.q * mpmath.ncdf((z - 1) / self.sigma)
        return self.q * mpmath.ncdf(-(z - 1) / self.sigma) - t * mpmath.ncdf(-z / self.sigma)


def _single_step(phase: Phase, epsilon: Fraction) -> Estimate:
    st = _Step(phase.q, phase.sigma)
    eps = to_mpf(epsilon)
    s, q = st.sigma, st.q
    values = []
    # remove: p = μ = μ0·w, density gap μ0·(w − x) = μ0·(q·expm1(r) − expm1(ε)), positive for z > z_x
    zx = st.z_of_loss(eps)
    f = lambda z: st.mu0(z) * (q * mpmath.expm1(st.r(z)) - mpmath.expm1(eps))  # noqa: E731
    marks = [zx + s * k for k in (mpmath.mpf(1) / 4, 1, 4, 16)] + [1 + s * k for k in (0, 4, 16)]
    values.append(_quad(f, _pieces(marks, zx, mpmath.inf)))
    # add: p = μ0, density gap μ0·(1 − x·w) = −μ0·(expm1(ε) + x·q·expm1(r)), positive for z < z_{1/x}
    zx = st.z_of_loss(-eps)
    if zx is None:
        values.append((mpmath.mpf(0), mpmath.mpf(0)))
    else:
        x = mpmath.exp(eps)
        g = lambda z: -st.mu0(z) * (mpmath.expm1(eps) + x * q * mpmath.expm1(st.r(z)))  # noqa: E731
        marks = [zx - s * k for k in (mpmath.mpf(1) / 4, 1, 4, 16)] + [s * k for k in (0, -4, -16)]
        values.append(_quad(g, _pieces(marks, -mpmath.inf, zx)))
    value, error, best = _max_of(values)
    return Estimate(_to_fraction(value), _to_fraction(error),
                    "quadrature of (p - e^epsilon q)_+ over the densities (one step)",
                    {"direction": ("remove", "add")[best]})


# -- two steps ----------------------------------------------------------------------------------------

def _two_steps(phases: Sequence[Phase], epsilon: Fraction) -> Estimate:
    """δ_dir(ε) = E_{z ~ P_1}[H_{2,dir}(e^{ε − L_1(z)})]: the second step's curve at the first step's loss."""
    first, second = [p for p in phases for _ in range(p.steps)]
    s1, s2 = _Step(first.q, first.sigma), _Step(second.q, second.sigma)
    eps = to_mpf(epsilon)
    around = [s1.sigma * k for k in (-16, -4, 0, 4, 16)] + [1 + s1.sigma * k for k in (-4, 0, 4, 16)]
    values = []
    for direction in ("remove", "add"):
        if direction == "remove":  # P_1 = μ = μ0·w, L_1 = log w; H_2 is non-analytic at x = 1 − q_2
            f = lambda z: s1.mu0(z) * mpmath.exp(s1.log_w(z)) * s2.curve(eps - s1.log_w(z), direction)  # noqa: E731
            kink = s1.z_of_loss(eps - mpmath.log1p(-s2.q)) if second.q < 1 else None
        else:  # P_1 = μ0, L_1 = −log w; H_2,add is non-analytic at x = 1/(1 − q_2)
            f = lambda z: s1.mu0(z) * s2.curve(eps + s1.log_w(z), direction)  # noqa: E731
            kink = s1.z_of_loss(-mpmath.log1p(-s2.q) - eps) if second.q < 1 else None
        marks = around + ([] if kink is None else [kink + s1.sigma * k for k in (-1, 0, 1)])
        values.append(_quad(f, _pieces(marks, -mpmath.inf, mpmath.inf)))
    value, error, best = _max_of(values)
    return Estimate(_to_fraction(value), _to_fraction(error),
                    "quadrature over the first step of the second step's closed-form curve (two steps)",
                    {"direction": ("remove", "add")[best]})


# -- three steps or more: Laplace inversion through the saddle point ----------------------------------

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(24)  # the z-rule (each panel: e^{iθ}, θ-range ≤ TURN)
_S_NODES, _S_WEIGHTS = np.polynomial.legendre.leggauss(16)  # the s-rule
TURN = 6.0  # radians e^{is·log w} may turn on one z-panel: a 24-point rule integrates it to ~1e-16
S_CUT = 12.0  # the s-integral runs at least to S_CUT/σ_c, on until the integrand is below 1e-16 of the integral
MAX_Z_NODES = 5 * 10**4  # nodes of one z-rule: larger rules (very large s) are not computed
BOX = 40  # the moments integrate z over [−40σ, 1 + 40σ]; the mass outside, ≤ 2Φ̄(40) per step, joins the error
CHUNK = 2**21  # complex exponentials evaluated at once (memory: 32 MiB)


def _rule(edges: np.ndarray, nodes: np.ndarray = _NODES, weights: np.ndarray = _WEIGHTS) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre nodes and weights on consecutive panels."""
    half = np.diff(edges) / 2
    mids = (edges[:-1] + edges[1:]) / 2
    return (mids[:, None] + half[:, None] * nodes).ravel(), (half[:, None] * weights).ravel()


class _StepMGF:
    """log M(u) = log E_P[e^{uL}] of one step's loss L, for complex u, float64, by kind:

    * ``remove`` (SG(q, σ)): L = log w(z) under P = μ0·w: nodes (log w, log μ0 + log w);
    * ``add``: L = −log w under P = μ0: nodes (−log w, log μ0);
    * ``replace`` (replace-one, Poisson): L = log w(z) − log w(−z) under P = μ0·w;
    * ``fixed`` (replace-one, fixed-size: the symmetrised remove pair of SG(q, σ/2)): the remove pair's loss
      restricted to L > 0 (z > 1/2), mirrored to −L with weight e^{−L}, and an atom at L = 0 of mass
      ``atom`` = 1 − P(L > 0) − Q(L > 0).

    Each kind is a rule of nodes (loss ℓ_k, log weight λ_k) with M(u) = Σ_k e^{λ_k + u·ℓ_k}.
    """

    def __init__(self, q: Fraction, sigma: Fraction, direction: str, drop: Fraction):
        self.kind = direction
        self._rules: dict[tuple[float, bool], tuple[np.ndarray, np.ndarray] | None] = {}
        sigma = sigma / 2 if direction == "fixed" else sigma
        self.q, self.sigma = float(q), float(sigma)
        self.gaussian = q == 1 and direction in ("remove", "add")  # log M = u(1 + u)/(2σ²) in both directions
        self.logit = math.log(self.q / (1 - self.q)) if q < 1 else math.inf
        box_kind = "add" if direction == "add" else "remove"  # P's mixture weight on μ1: 0 or q
        self.box = (-BOX * self.sigma, 1 + BOX * self.sigma) if self.gaussian else _box(q, sigma, box_kind, drop)
        if direction == "replace":  # P = μ0·w(z) and Q = μ0·w(−z): both tails of z matter
            self.box = (min(self.box[0], -self.box[1]), self.box[1])
        if direction == "fixed":
            self.box = (0.5, self.box[1])
            with mpmath.workdps(20):
                s, qm, half = to_mpf(sigma), to_mpf(q), mpmath.mpf(1) / 2
                above = qm * mpmath.ncdf(-(half - 1) / s) + (1 - qm) * mpmath.ncdf(-half / s)  # P(L > 0)
                self.atom = float(1 - above - mpmath.ncdf(-half / s))  # 1 − P(L > 0) − Q(L > 0)
        else:
            self.atom = 0.0

    def _log_w(self, z: np.ndarray) -> np.ndarray:
        """log(1 − q + q·e^r): log1p(q·expm1(r)) without cancellation, and for r > 700 (where expm1
        overflows and q·e^r dominates) log q + r + log1p((1 − q)/q·e^{−r})."""
        r = (2 * z - 1) / (2 * self.sigma ** 2)
        small = np.log1p(self.q * np.expm1(np.minimum(r, 700.0)))
        large = np.log(self.q) + r + np.log1p((1 - self.q) / self.q * np.exp(-np.maximum(r, 700.0)))
        return np.where(r <= 700.0, small, large)

    def _slope(self, z: np.ndarray | float) -> Any:
        """|dL/dz|: σ^−2·logistic(r + log(q/(1 − q))) for log w; the sum at z and −z for ``replace``."""
        def one(v: Any) -> Any:
            r = (2 * np.asarray(v) - 1) / (2 * self.sigma ** 2)
            return 0.5 * (1 + np.tanh((r + self.logit) / 2)) / self.sigma ** 2
        return one(z) + one(-np.asarray(z)) if self.kind == "replace" else one(z)

    def rule(self, s_max: float, fine: bool) -> tuple[np.ndarray, np.ndarray] | None:
        """(ℓ_k, λ_k) on the box, panels of at most σ/4 on which e^{is·ℓ} turns by at most TURN radians
        for |s| ≤ s_max; None beyond MAX_Z_NODES nodes. Built once per (s_max, fine): the saddle-point
        search alone asks for the s_max = 0 rule about 150 times."""
        key = (s_max, fine)
        if key not in self._rules:
            self._rules[key] = self._build_rule(s_max, fine)
        return self._rules[key]

    def _build_rule(self, s_max: float, fine: bool) -> tuple[np.ndarray, np.ndarray] | None:
        sig = self.sigma
        a, b = self.box
        edges = [a]
        while edges[-1] < b:
            right = min(edges[-1] + sig / 4, b)
            slope = float(max(self._slope(right), self._slope(edges[-1])))  # monotone on each side of 0
            edges.append(min(edges[-1] + min(sig / 4, TURN / (1e-300 + s_max * slope)), b))
            if len(edges) * 24 > MAX_Z_NODES:
                return None
        edges = np.array(edges)
        if fine:
            edges = np.sort(np.concatenate([edges, (edges[:-1] + edges[1:]) / 2]))
        z, w = _rule(edges)
        log_mu0 = np.log(w) - z * z / (2 * sig * sig) - np.log(sig * np.sqrt(2 * np.pi))
        log_w = self._log_w(z)
        if self.kind == "remove":
            return log_w, log_mu0 + log_w
        if self.kind == "add":
            return -log_w, log_mu0
        if self.kind == "replace":
            return log_w - self._log_w(-z), log_mu0 + log_w
        # fixed: ω(ℓ) on ℓ > 0, its mirror ω(−ℓ) = e^{−ℓ}ω(ℓ), and the atom at 0
        return (np.concatenate([log_w, -log_w, [0.0]]),
                np.concatenate([log_mu0 + log_w, log_mu0, [math.log(self.atom) if self.atom > 0 else -math.inf]]))

    def log_m(self, u: np.ndarray, c: float, s_max: float, fine: bool = False) -> np.ndarray | None:
        """log M(u) for complex u with Re u = c, |Im u| ≤ s_max (None: the z-rule would be too large)."""
        if self.gaussian:
            return u * (1 + u) / (2 * self.sigma ** 2)
        rule = self.rule(s_max, fine)
        if rule is None:
            return None
        loss, log_weight = rule
        # Re u = c for every u: the real tilt factors out, M(c + is) = e^top·Σ_k p_k·e^{is·ℓ_k}
        base = log_weight + c * loss
        top = base.max()
        p = np.exp(base - top)
        out = np.empty(len(u), dtype=complex)
        step = max(1, CHUNK // len(loss))
        for i in range(0, len(u), step):
            phase = np.outer(u.imag[i:i + step], loss)
            out[i:i + step] = np.cos(phase) @ p + 1j * (np.sin(phase) @ p)
        return top + np.log(out)

    def variance(self, c: float) -> float:
        """Var of the loss under the tilted measure at real u = c (K_i''(c))."""
        if self.gaussian:
            return 1 / self.sigma ** 2
        loss, log_weight = self.rule(0.0, False)
        e = log_weight + c * loss
        p = np.exp(e - e.max())
        p /= p.sum()
        mean = (p * loss).sum()
        return float((p * (loss - mean) ** 2).sum())


def _box(q: Fraction, sigma: Fraction, direction: str, drop: Fraction) -> tuple[float, float]:
    """[z_lo, z_hi] outside which the direction's P (μ for remove, μ0 for add) has mass at most ``drop``
    (half on each side), but no wider than [−40σ, 1 + 40σ]; by bisection in mpmath."""
    with mpmath.workdps(20):
        s, qm, half = to_mpf(sigma), to_mpf(q), to_mpf(drop) / 2
        weight = qm if direction == "remove" else 0  # μ = (1 − q)μ0 + qμ1

        def above(z: Any) -> Any:
            return (1 - weight) * mpmath.ncdf(-z / s) + weight * mpmath.ncdf(-(z - 1) / s)

        def below(z: Any) -> Any:
            return (1 - weight) * mpmath.ncdf(z / s) + weight * mpmath.ncdf((z - 1) / s)

        lo, hi = -BOX * s, 1 + BOX * s
        if below(lo) < half:
            a, b = lo, mpmath.mpf(0)
            for _ in range(80):
                a, b = ((a + b) / 2, b) if below((a + b) / 2) < half else (a, (a + b) / 2)
            lo = a
        if above(hi) < half:
            a, b = mpmath.mpf(1), hi
            for _ in range(80):
                a, b = (a, (a + b) / 2) if above((a + b) / 2) < half else ((a + b) / 2, b)
            hi = b
        return float(lo), float(hi)


class _Run:
    """K(u) = Σ T_i·log M_i(u) of the composed loss in one direction, each step's P cut to its box.

    ``direction`` "remove" or "add" (add/remove runs), or "replace" (replace-one runs: each phase's kind
    is ``replace`` for Poisson and ``fixed`` for fixed-size batches). ``atom`` = Π a_i^{T_i} is the mass
    the composed pair puts on loss 0 through the ``fixed`` steps' atoms alone (left out of M).
    """

    def __init__(self, phases: Sequence[Phase], direction: str, drop: Fraction):
        counts: dict[tuple[str, Fraction, Fraction], int] = {}
        for p in phases:
            kind = direction if direction != "replace" else ("fixed" if p.sampler == "fixed" else "replace")
            counts[(kind, p.q, p.sigma)] = counts.get((kind, p.q, p.sigma), 0) + p.steps
        total = sum(counts.values())
        self.parts = [(_StepMGF(q, s, kind, drop / total), t) for (kind, q, s), t in counts.items()]
        self.dropped = float(drop)  # ≥ Σ T_i·(mass of step i outside its box): the change of δ it causes
        atoms = [(step.atom, t) for step, t in self.parts]
        self.atom = math.prod(a ** t for a, t in atoms) if all(a > 0 for a, _ in atoms) else 0.0

    def log_m(self, u: np.ndarray, c: float, s_max: float, fine: bool = False) -> np.ndarray | None:
        total = np.zeros(len(u), dtype=complex)
        for step, t in self.parts:
            part = step.log_m(u, c, s_max, fine)
            if part is None:
                return None
            total += t * part
        return total

    def variance(self, c: float) -> float:
        return sum(t * step.variance(c) for step, t in self.parts)


def _saddle(run: _Run, eps: float) -> tuple[float, float]:
    """(c, g(c)) minimising the convex g(c) = K(c) − cε − log(c(1 + c)) over c in [1e-12, 1e24]."""
    def g(log_c: float) -> float:
        c = math.exp(log_c)
        k = run.log_m(np.array([c + 0j]), c, 0.0)
        return float(k.real[0]) - c * eps - math.log(c) - math.log1p(c)

    grid = np.linspace(math.log(1e-12), math.log(1e24), 73)
    values = [g(x) for x in grid]
    i = int(np.argmin(values))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
        if g(x1) < g(x2):
            b = x2
        else:
            a = x1
    return math.exp((a + b) / 2), g((a + b) / 2)


def _bromwich(phases: Sequence[Phase], epsilon: Fraction, direction: str,
              delta_scale: Fraction | None = None) -> tuple[float, float, dict[str, Any]]:
    """(value, error, details) of δ_dir(ε) by inversion through the saddle point (module docstring);
    ``delta_scale`` (about δ) sets how much mass the boxes may drop: at most 1e-4·delta_scale."""
    eps = float(epsilon)
    drop = Fraction(1, 10**4) * delta_scale if delta_scale is not None else Fraction(0)
    run = _Run(phases, direction, drop)
    c, log_peak = _saddle(run, eps)
    sd = math.sqrt(max(run.variance(c), 1e-300))

    def integrand(s: np.ndarray, s_max: float, fine: bool = False) -> np.ndarray | None:
        u = c + 1j * s
        k = run.log_m(u, c, s_max, fine)
        if k is None:
            return None
        # the steps' atoms at loss 0 are part of M; the all-atom term (mass run.atom at total loss 0) adds
        # nothing to δ(ε) for ε ≥ 0, and subtracting it lets the integrand decay
        rest = -u * eps - np.log(u * (1 + u)) - log_peak  # scaled by the bound's peak
        return np.exp(k + rest) - run.atom * np.exp(rest)

    # the s-integral on doubling segments [0, a], [a, 2a], ... (a = 1/σ_c) until the integrand is negligible,
    # each at two resolutions with the z-rule for its own largest s
    a = 1 / sd
    integral, s_error, z_error, lo, hi, last = 0.0, 0.0, 0.0, 0.0, a, math.inf
    while True:
        parts = []
        for panels in (4, 8):
            s, w = _rule(np.linspace(lo, hi, panels + 1), _S_NODES, _S_WEIGHTS)
            values = integrand(s, hi)
            if values is None:  # too fast an oscillation to resolve: the rest is left to the tail bound
                break
            parts.append((float((w * values.real).sum()), float(np.abs(values).max())))
        if len(parts) < 2:
            hi = lo
            break
        integral += parts[1][0]
        s_error += abs(parts[1][0] - parts[0][0])
        last = parts[1][1]
        probe = np.array([hi])
        coarse, fine = integrand(probe, hi), integrand(probe, hi, fine=True)
        z_error += (float(np.abs(fine - coarse).max()) if fine is not None else math.inf) * (hi - lo)
        if (hi >= S_CUT * a and parts[1][1] <= 1e-16 * abs(integral)) or hi > a * 2.0**64:
            break
        lo, hi = hi, 2 * hi
    cut = hi
    if cut == 0:
        return math.nan, math.inf, {"failure": "the moments oscillate too fast to integrate"}
    # the tail beyond the cut: samples at doubling s; beyond the last one, |M(c + is)| ≤ ρ·M(c) with ρ the
    # larger of the last two sampled ratios |M(c + is)|/M(c) (ρ = 1 is rigorous), so ∫_S^∞ ≤ ρ·c(1 + c)/S
    bound = c * (1 + c)  # |integrand| ≤ ρ(s)·c(1 + c)/s² in these units

    def ratio(s: float, size: float) -> float:
        return min(1.0, size * abs((c + 1j * s) * (1 + c + 1j * s)) / bound)

    tail, s, previous = 0.0, cut, last
    ratios = [ratio(cut, last)]
    while max(ratios[-2:]) * bound / s > 1e-6 * abs(integral) and s < cut * 2.0**60:
        sample = integrand(np.array([2 * s]), 2 * s)
        if sample is None:
            ratios.append(1.0)  # not resolved: fall back to the rigorous ρ = 1
            break
        size = float(abs(sample[0]))
        tail += max(previous, size) * s  # the interval [s, 2s]
        previous, s = size, 2 * s
        ratios.append(ratio(s, size))
    tail += max(ratios[-2:]) * bound / s
    scale = math.exp(log_peak) / math.pi
    rounding = 1e-13 * sum(t for _, t in run.parts) * abs(integral)
    error = (10 * s_error + 10 * z_error + tail + rounding) * scale + run.dropped
    return integral * scale, error, {"saddle_point": float(f"{c:.6g}"), "cut": float(f"{cut:.6g}")}


def estimate_delta(phases: Sequence[Phase], epsilon: Fraction, delta_scale: Fraction | None = None) -> Estimate:
    """An estimate of the run's δ(ε) = max over the two directions, with its estimated error.

    ``delta_scale``, the size of δ(ε) if known (the proven bracket's upper end), lets the inversion drop
    up to 1e-4·delta_scale of probability from each direction's far tails, counted in the error; for a
    balls-in-bins run whose proven end lies below the no-amplification and the shifted-Gaussian random-allocation
    estimates, it asks for the add direction's Rényi estimate too (:func:`_random_allocation`).
    """
    steps = sum(p.steps for p in phases)
    with mpmath.workdps(DPS):
        if all(p.q == 1 or p.sampler in ("shuffle", "balls-in-bins") for p in phases):
            gauss = _gaussian(phases, epsilon)
            if any(p.sampler == "balls-in-bins" and p.neighbours == "add-remove" for p in phases):
                best = min(gauss, _random_allocation(phases, epsilon), key=lambda e: e.value)
                # a proven end below both re-evaluations used the add direction's Rényi DP: re-evaluate that too
                # (a certificate from before it was added re-checks against the same estimate as before)
                if delta_scale is not None and delta_scale < best.value * (1 - Fraction(1, 10**6)):
                    best = min(gauss, _random_allocation(phases, epsilon, renyi=True), key=lambda e: e.value)
                return best
            return gauss
    if any(p.neighbours == "replace-one" for p in phases):  # one symmetric pair: one direction
        value, error, details = _bromwich(phases, epsilon, "replace", delta_scale)
        if not (math.isfinite(value) and math.isfinite(error)):
            return Estimate(Fraction(0), Fraction(1), "Laplace inversion through the saddle point (failed: no estimate)",
                            details)
        return Estimate(Fraction(value), Fraction(error),
                        "Laplace inversion through the saddle point (double precision)",
                        {"direction": "both (the replace-one pair is symmetric)", **details})
    with mpmath.workdps(DPS):
        if steps == 1:
            return _single_step(phases[0], epsilon)
        if steps == 2:
            return _two_steps(phases, epsilon)
        # the add direction's loss is at most Σ T_i·log(1/(1 − q_i)): beyond it δ_add(ε) = 0 exactly
        top = sum(p.steps * -mpmath.log1p(-to_mpf(p.q)) for p in phases) if all(p.q < 1 for p in phases) \
            else mpmath.inf
    if epsilon == 0:  # δ(0) is the total variation distance, the same in both directions: compute it once
        results = dict.fromkeys(("remove", "add"), _bromwich(phases, epsilon, "add", delta_scale))
    else:
        results = {d: (0.0, 0.0, {}) if d == "add" and to_mpf(epsilon) >= top else
                   _bromwich(phases, epsilon, d, delta_scale) for d in ("remove", "add")}
    if any(not math.isfinite(v) or not math.isfinite(e) for v, e, _ in results.values()):
        failure = next(r[2]["failure"] for r in results.values() if "failure" in r[2])
        return Estimate(Fraction(0), Fraction(1), "Laplace inversion through the saddle point (failed: no estimate)",
                        {"failure": failure})
    value, error, best = _max_of([results[d][:2] for d in ("remove", "add")])
    direction = ("remove", "add")[best]
    return Estimate(Fraction(value), Fraction(error), "Laplace inversion through the saddle point (double precision)",
                    {"direction": direction, **results[direction][2]})
