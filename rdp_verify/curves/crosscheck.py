"""An independent estimate of δ(ε) for a run, to cross-check the proven bracket (mpmath, not a proof).

Nothing here is shared with the bracket's computation (Arb curves, lattice PLDs, integer
convolution). Three methods, chosen by the run:

* **q = 1 for every phase** (the Gaussian mechanism): the closed form of Balle & Wang 2018
  (Theorem 8), δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) with μ² = Σ T_i/σ_i². Error: mpmath's
  rounding at the working precision.
* **one step in all**: δ(ε) = ∫ (p(z) − e^ε q(z))_+ dz over the densities of the remove and the add
  pair (the set where p > e^ε q is a half-line, the likelihood ratio being monotone), by mpmath
  quadrature. Error: mpmath's estimate.
* **two steps in all**: δ(ε) = E_{z ~ P_1}[H_2(e^{ε − L_1(z)})], the second step's curve (closed form
  from Φ) at the first step's loss, by mpmath quadrature over z.
* **otherwise, the Laplace (Bromwich) inversion**: for Re u = c > 0,
  ∫ e^{−uℓ}(1 − e^{ε−ℓ})_+ dℓ = e^{−uε}/(u(u + 1)), so inverting the two-sided Laplace transform
  under the expectation,

      δ_dir(ε) = E_P[(1 − e^{ε − L})_+] = (1/π)·∫_0^∞ Re[ M(c + is)·e^{−(c+is)ε} / ((c + is)(1 + c + is)) ] ds,

  with M(u) = E_P[e^{uL}] = Π_i M_i(u)^{T_i} the moment generating function of the composed
  privacy loss (Zhu, Dong, Wang 2022 use the same transform pair with the characteristic
  function). One step's M_i(u) = E_{μ0}[w^{1+u}] (remove) or E_{μ0}[w^{−u}] (add), with
  w = 1 − q + q·e^{(2z−1)/(2σ²)}: Rényi moments at complex order. c is the saddle point (it
  minimises the integrand's bound M(c)e^{−cε}/(c(1 + c)), the Chernoff/RDP bound). Both integrals
  use composite Gauss–Legendre rules in double precision, every magnitude carried as a logarithm;
  each is computed at two resolutions and the error estimate is their difference (times 10), plus
  the integral of the integrand's modulus over [S, 2S] for what lies beyond the cut S. Double
  precision suffices: the T-th power multiplies the relative error of M by T ≤ 1e6.

Every error here is an *estimate*; the result is labelled so. Its use is
:func:`rdp_verify.curves.certificate.certify_curve`: if the estimate ± error misses the proven
bracket, the certificate is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import mpmath
import numpy as np

from ..foundations.inputs import Phase
from ..foundations.results import Bounded, mpf_to_fraction, to_mpf

__all__ = ["Estimate", "estimate_delta"]

DPS = 30


@dataclass(frozen=True)
class Estimate(Bounded):
    """δ(ε) ≈ value ± error (an *estimate*, not a proof), by ``method``."""

    method: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _to_fraction(x: Any) -> Fraction:
    return mpf_to_fraction(mpmath.mpf(x))


def _gaussian(phases: Sequence[Phase], epsilon: Fraction) -> Estimate:
    mu = mpmath.sqrt(sum(p.steps / to_mpf(p.sigma) ** 2 for p in phases))
    eps = to_mpf(epsilon)
    value = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
    error = abs(value) * mpmath.mpf(10) ** (5 - DPS) + mpmath.mpf(10) ** (-DPS)
    return Estimate(_to_fraction(value), _to_fraction(error), "closed form (Balle & Wang 2018, Theorem 8)",
                    {"mu": mpmath.nstr(mu, 15)})


class _Step:
    """Densities and log-likelihood ratio of one SGM step in mpmath."""

    def __init__(self, q: Fraction, sigma: Fraction):
        self.q, self.sigma = to_mpf(q), to_mpf(sigma)
        self.s2 = self.sigma ** 2
        self.norm = 1 / (self.sigma * mpmath.sqrt(2 * mpmath.pi))
        self.z1 = mpmath.mpf(1) / 2 + self.s2 * mpmath.log(1 / self.q - 1) if q < 1 else mpmath.mpf(0)

    def mu0(self, z: Any) -> Any:
        return self.norm * mpmath.exp(-z * z / (2 * self.s2))

    def log_w(self, z: Any) -> Any:
        r = (2 * z - 1) / (2 * self.s2)
        if self.q == 1:
            return r
        if r < 0:
            return mpmath.log1p(-self.q + self.q * mpmath.exp(r))
        return mpmath.log(self.q) + r + mpmath.log1p((1 - self.q) / self.q * mpmath.exp(-r))

    def z_of(self, x: Any) -> Any:
        """The z where w(z) = x (w increasing), or None when x ≤ 1 − q."""
        t = x - 1 + self.q
        if t <= 0:
            return None
        return mpmath.mpf(1) / 2 + self.s2 * mpmath.log(t / self.q)



def _curve(st: "_Step", x: Any, direction: str) -> Any:
    """One step's hockey-stick curve H_dir(x), x ≥ 0, in closed form (mpmath's ncdf)."""
    if direction == "add":  # the perspective of the remove curve
        return 1 - x + x * _curve(st, 1 / x, "remove") if x > 0 else mpmath.mpf(1)
    z = st.z_of(x)
    if z is None:
        return 1 - x
    t = x - 1 + st.q
    return st.q * mpmath.ncdf(-(z - 1) / st.sigma) - t * mpmath.ncdf(-z / st.sigma)


def _two_steps(phases: Sequence[Phase], epsilon: Fraction) -> Estimate:
    """δ_dir(ε) = E_{z ~ P_1}[H_{2,dir}(e^{ε − L_1(z)})]: the second step's curve at the first step's loss."""
    first, second = [p for p in phases for _ in range(p.steps)]
    s1, s2 = _Step(first.q, first.sigma), _Step(second.q, second.sigma)
    eps = to_mpf(epsilon)
    values, errors = [], []
    for direction in ("remove", "add"):
        if direction == "remove":  # P_1 = μ, L_1 = log w
            f = lambda z: s1.mu0(z) * mpmath.exp(s1.log_w(z)) * _curve(s2, mpmath.exp(eps - s1.log_w(z)), direction)  # noqa: E731
        else:  # P_1 = μ0, L_1 = −log w
            f = lambda z: s1.mu0(z) * _curve(s2, mpmath.exp(eps + s1.log_w(z)), direction)  # noqa: E731
        pts = sorted({mpmath.mpf(0), mpmath.mpf(1), s1.z1})
        v, e = mpmath.quad(f, [-mpmath.inf, pts[0] - 8 * s1.sigma] + pts + [pts[-1] + 8 * s1.sigma, mpmath.inf],
                           error=True)
        values.append(v)
        errors.append(e + abs(v) * mpmath.mpf(10) ** (8 - DPS))
    lo = max(v - e for v, e in zip(values, errors))
    hi = max(v + e for v, e in zip(values, errors))
    return Estimate(_to_fraction((lo + hi) / 2), _to_fraction((hi - lo) / 2),
                    "quadrature over the first step of the second step's closed-form curve (two steps)",
                    {"direction": ("remove", "add")[int(values[1] > values[0])]})


def _single_step(phase: Phase, epsilon: Fraction) -> Estimate:
    st = _Step(phase.q, phase.sigma)
    x = mpmath.exp(to_mpf(epsilon))
    values, errors = [], []
    # remove: p = μ, q = μ0, p > x·q ⟺ w(z) > x ⟺ z > z_x
    mu = lambda z: st.mu0(z) * mpmath.exp(st.log_w(z))  # noqa: E731  μ = μ0·w
    for direction in ("remove", "add"):
        if direction == "remove":
            zx = st.z_of(x)
            f = lambda z: mu(z) - x * st.mu0(z)  # noqa: E731
            lo = zx if zx is not None else -mpmath.inf
            pieces = [lo, mpmath.inf] if zx is None else [zx, zx + 4 * st.sigma, zx + 16 * st.sigma, mpmath.inf]
        else:  # add: p = μ0, q = μ, p > x·q ⟺ w(z) < 1/x ⟺ z < z_{1/x}
            zx = st.z_of(1 / x)
            if zx is None:
                values.append(mpmath.mpf(0))
                errors.append(mpmath.mpf(0))
                continue
            f = lambda z: st.mu0(z) - x * mu(z)  # noqa: E731
            pieces = [-mpmath.inf, zx - 16 * st.sigma, zx - 4 * st.sigma, zx]
        v, e = mpmath.quad(f, pieces, error=True)
        values.append(v)
        errors.append(e)
    best = max(range(2), key=lambda i: values[i])
    return Estimate(_to_fraction(values[best]), _to_fraction(errors[best] + abs(values[best]) * mpmath.mpf(10) ** (8 - DPS)),
                    "quadrature of (p - e^epsilon q)_+ over the densities (one step)",
                    {"direction": ("remove", "add")[best]})


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(24)
S_MAX = 256.0  # largest cut of the s-integral; beyond it the tail estimate carries the error
CHUNK = 2**21  # complex exponentials evaluated at once (memory: 32 MiB)
WORK = 4 * 10**7  # complex exponentials per direction at most: a smaller cut then widens the error honestly


def _rule(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre nodes and weights on consecutive panels."""
    half = np.diff(edges) / 2
    mids = (edges[:-1] + edges[1:]) / 2
    return (mids[:, None] + half[:, None] * _NODES).ravel(), (half[:, None] * _WEIGHTS).ravel()


class _Moments:
    """log M(u) of one step for many complex u: Σ_k W_k·exp(γ·ℓ_k) on a fixed composite rule in z.

    Panels are at most σ/4 wide and short enough that e^{i·s·log w(z)} turns by at most π/2 on each
    (d log w/dz = q·e^r/(σ²w) ≤ 1/σ², far smaller left of z1), for every s up to ``s_max``.
    """

    def __init__(self, q: Fraction, sigma: Fraction, direction: str, c: float, s_max: float, fine: bool):
        qf, sf = float(q), float(sigma)
        self.direction = direction
        centre = 1 + c if direction == "remove" else -c
        z1 = 0.5 + sf * sf * np.log(1 / qf - 1) if qf < 1 else 0.0
        a, b = min(0.0, centre, z1) - 14 * sf, max(0.0, centre, z1) + 14 * sf
        edges = [a]
        while edges[-1] < b:
            z = edges[-1] + sf / 4  # the slope of log w is increasing: take it at the panel's right end
            r = (2 * z - 1) / (2 * sf * sf)
            logit = r + (np.log(qf / (1 - qf)) if qf < 1 else 50.0)  # slope = σ^−2·logistic(r + log(q/(1 − q)))
            slope = 0.5 * (1 + np.tanh(logit / 2)) / (sf * sf)
            edges.append(edges[-1] + min(sf / 4, (np.pi / 2) / (1e-300 + s_max * slope)))
        edges = np.array(edges)
        if fine:
            edges = np.sort(np.concatenate([edges, (edges[:-1] + edges[1:]) / 2]))
        z, w = _rule(edges)
        r = (2 * z - 1) / (2 * sf * sf)
        if qf == 1:
            self.log_w = r
        else:
            low = np.log1p(qf * np.expm1(np.minimum(r, 0)))
            high = np.log(qf) + r + np.log1p((1 - qf) / qf * np.exp(-np.maximum(r, 0)))  # r ≥ 0 branch
            self.log_w = np.where(r < 0, low, high)
        self.log_weight = np.log(w) - z * z / (2 * sf * sf) - np.log(sf * np.sqrt(2 * np.pi))

    def log_m(self, u: np.ndarray) -> np.ndarray:
        gamma = (1 + u) if self.direction == "remove" else -u
        out = np.empty(len(u), dtype=complex)
        step = max(1, CHUNK // len(self.log_w))
        for i in range(0, len(u), step):
            exponent = self.log_weight[None, :] + gamma[i:i + step, None] * self.log_w[None, :]
            top = exponent.real.max(axis=1, keepdims=True)
            out[i:i + step] = top[:, 0] + np.log(np.exp(exponent - top).sum(axis=1))
        return out


def _log_mgf(phases: Sequence[Phase], direction: str, u: np.ndarray, c: float, s_max: float,
             fine: bool) -> np.ndarray:
    total = np.zeros(len(u), dtype=complex)
    for p in phases:
        total += p.steps * _Moments(p.q, p.sigma, direction, c, s_max, fine).log_m(u)
    return total


def _bromwich(phases: Sequence[Phase], epsilon: Fraction, direction: str) -> tuple[float, float, dict[str, Any]]:
    eps = float(epsilon)

    def log_bound(c: float) -> float:  # log(M(c)·e^{−cε}/(c(1 + c)))
        return float(_log_mgf(phases, direction, np.array([c + 0j]), c, 0.0, False).real[0]
                     - c * eps - np.log(c * (1 + c)))

    # the saddle point: a coarse scan of log c, then golden-section refinement
    grid = np.exp(np.linspace(np.log(1e-4), np.log(1e3), 29))
    i = int(np.argmin([log_bound(g) for g in grid]))
    a, b = np.log(grid[max(i - 1, 0)]), np.log(grid[min(i + 1, len(grid) - 1)])
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(20):
        x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
        if log_bound(np.exp(x1)) < log_bound(np.exp(x2)):
            b = x2
        else:
            a = x1
    c = float(np.exp((a + b) / 2))
    log_peak = log_bound(c)

    def integrand(s: np.ndarray, s_max: float, fine: bool) -> np.ndarray:
        u = c + 1j * s
        log_g = _log_mgf(phases, direction, u, c, s_max, fine) - u * eps - np.log(u * (1 + u))
        return np.exp(log_g - log_peak)  # scaled by the bound's peak: values of order 1 and below

    size = 1.0
    while size < S_MAX and abs(integrand(np.array([size]), size, False)[0]) > 1e-13:
        nodes = sum(len(_Moments(p.q, p.sigma, direction, c, 4 * size, False).log_w) for p in phases)
        if nodes * 24 * (16 + 32 + 16 + 6) > WORK:  # the rules below at twice this cut would cost too much
            break
        size *= 2
    results = []
    for panels in (16, 32):  # the same z-rule, the s-rule at two resolutions
        s, w = _rule(np.linspace(0.0, size, panels + 1))
        results.append(float((w * integrand(s, size, False).real).sum()))
    probe = np.array([0.0, size / 2, size])  # the z-rule's own error: refine it at three points
    z_error = float(np.abs(integrand(probe, size, True) - integrand(probe, size, False)).max()) * size
    s, w = _rule(np.linspace(size, 2 * size, 17))
    tail = float((w * np.abs(integrand(s, 2 * size, False))).sum())
    scale = np.exp(log_peak) / np.pi
    value = results[1] * scale
    error = (10 * abs(results[1] - results[0]) + 10 * z_error + tail + 1e-12 * max(1.0, abs(results[1]))) * scale
    return value, error, {"saddle_point": round(c, 6), "cut": size}


def estimate_delta(phases: Sequence[Phase], epsilon: Fraction) -> Estimate:
    """An estimate of the run's δ(ε) = max over the two directions, with its estimated error."""
    with mpmath.workdps(DPS):
        if all(p.q == 1 for p in phases):
            return _gaussian(phases, epsilon)
        if sum(p.steps for p in phases) == 1:
            return _single_step(phases[0], epsilon)
        if sum(p.steps for p in phases) == 2:
            return _two_steps(phases, epsilon)
    # the add direction's loss is at most Σ T_i·log(1/(1 − q_i)): beyond it δ_add(ε) = 0 exactly
    top = sum(p.steps * -mpmath.log1p(-to_mpf(p.q)) for p in phases) if all(p.q < 1 for p in phases) else mpmath.inf
    results = {d: (0.0, 0.0, {}) if d == "add" and to_mpf(epsilon) >= top else _bromwich(phases, epsilon, d)
               for d in ("remove", "add")}
    # δ = max over directions: enclose the max of the two estimated intervals
    lo = max(v - e for v, e, _ in results.values())
    hi = max(v + e for v, e, _ in results.values())
    best = max(results, key=lambda d: results[d][0])
    return Estimate(Fraction((lo + hi) / 2), Fraction((hi - lo) / 2),
                    "Laplace inversion of the moment generating function (double-precision Gauss-Legendre)",
                    {"direction": best, **results[best][2]})
