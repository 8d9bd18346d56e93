"""Independent references for privacy curves, written separately from rdp_verify.curves.

* :func:`step_curve` -- one SGM step's hockey-stick curve H(x) = ∫ (p − x·q)_+ dz by mpmath quadrature of
  the densities (no Gaussian CDF closed form), for the remove pair (μ, μ0) or the add pair (μ0, μ);
* :func:`step_delta` -- max over the two directions at x = e^ε;
* :func:`two_step_delta` -- two identical steps: E_{z ~ P}[H(e^{ε − L(z)})], nested quadrature;
* :func:`gaussian_delta` -- the Gaussian mechanism's exact curve (Balle & Wang 2018, Theorem 8);
* :func:`mixture_delta` -- a mixture of Gaussians' hockey-stick δ(ε) by quadrature split at the one root of the
  monotone log ratio (both directions);
* :func:`chua_epsilon` -- Chua et al.'s composed per-epoch maximum statistic (NeurIPS 2024, Section 3) in double
  precision with numpy/scipy FFT convolution: the lower end of shuffled / balls-in-bins runs as they compute it
  (also run by benchmarks/bench_shuffle_lower.py).
"""

from fractions import Fraction

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def _mp(x):
    if isinstance(x, mp.mpf):
        return x
    x = Fraction(x)
    return mp.mpf(x.numerator) / x.denominator


def _densities(q, sigma):
    q, s = _mp(q), _mp(sigma)
    mu0 = lambda z: mp.npdf(z, 0, s)  # noqa: E731
    mu = lambda z: (1 - q) * mp.npdf(z, 0, s) + q * mp.npdf(z, 1, s)  # noqa: E731
    return mu0, mu


def step_curve(q, sigma, x, direction="remove"):
    """∫ (p(z) − x·q(z))_+ dz for the direction's pair, by quadrature (x ≥ 0)."""
    mu0, mu = _densities(q, sigma)
    p, qq = (mu, mu0) if direction == "remove" else (mu0, mu)
    f = lambda z: max(p(z) - x * qq(z), 0)  # noqa: E731
    # the likelihood ratio is monotone: the positive part is a half-line; find its end by bisection
    g = lambda z: p(z) - x * qq(z)  # noqa: E731
    lo, hi = mp.mpf(-60) * _mp(sigma) - 5, mp.mpf(60) * _mp(sigma) + 5
    if direction == "remove":
        if g(hi) <= 0:
            return mp.mpf(0)
        if g(lo) > 0:
            return mp.quad(g, [-mp.inf, 0, 1, mp.inf])
        a, b = lo, hi  # g < 0 at a, > 0 at b
    else:
        if g(lo) <= 0:
            return mp.mpf(0)
        if g(hi) > 0:
            return mp.quad(g, [-mp.inf, 0, 1, mp.inf])
        a, b = hi, lo
    for _ in range(200):
        m = (a + b) / 2
        if g(m) > 0:
            b = m
        else:
            a = m
    z = (a + b) / 2
    s = _mp(sigma)
    if direction == "remove":
        return mp.quad(f, [z, z + s, z + 4 * s, z + 12 * s, mp.inf])
    return mp.quad(f, [-mp.inf, z - 12 * s, z - 4 * s, z - s, z])


def step_delta(q, sigma, epsilon):
    x = mp.exp(_mp(epsilon))
    return max(step_curve(q, sigma, x, "remove"), step_curve(q, sigma, x, "add"))


def two_step_delta(q, sigma, epsilon):
    """δ of two identical steps: E_{z~P}[H_dir(e^{ε − L(z)})] with H by the closed form of one step."""
    qm, s = _mp(q), _mp(sigma)
    mu0, mu = _densities(q, sigma)

    def curve(x):  # the remove pair's curve in closed form (a different route from step_curve)
        t = x - 1 + qm
        if t <= 0:
            return 1 - x
        z = mp.mpf(1) / 2 + s ** 2 * mp.log(t / qm)
        return qm * mp.ncdf(-(z - 1) / s) - t * mp.ncdf(-z / s)

    log_w = lambda z: mp.log(mu(z) / mu0(z))  # noqa: E731

    def z_at(loss):  # log w(z) = loss, w = 1 − q + q·e^{(2z−1)/(2σ²)} increasing; None below log(1 − q)
        t = mp.exp(loss) - 1 + qm
        return None if t <= 0 else mp.mpf(1) / 2 + s ** 2 * mp.log(t / qm)

    def pieces(kink):  # H is smooth but not analytic where its argument crosses 1 − q: split the integral there
        points = [-6 * s, mp.mpf(0), mp.mpf(1), 6 * s + 1] + ([] if kink is None else [kink])
        return [-mp.inf] + sorted(points) + [mp.inf]

    eps = _mp(epsilon)
    remove = mp.quad(lambda z: mu(z) * curve(mp.exp(eps - log_w(z))), pieces(z_at(eps - mp.log(1 - qm))))

    def add_curve(x):  # perspective: H_add(x) = 1 − x + x·H_remove(1/x)
        return 1 - x + x * curve(1 / x)

    add = mp.quad(lambda z: mu0(z) * add_curve(mp.exp(eps + log_w(z))), pieces(z_at(-mp.log(1 - qm) - eps)))
    return max(remove, add)


def gaussian_delta(epsilon, mu):
    """Balle & Wang 2018, Theorem 8: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    eps, mu = _mp(epsilon), mp.mpf(mu)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def gaussian_epsilon(delta, mu):
    """The root ε ≥ 0 of gaussian_delta(ε, μ) = δ (0 if δ(0) ≤ δ)."""
    d = _mp(delta)
    if gaussian_delta(0, mu) <= d:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(200)  # gaussian_delta is decreasing in ε: bisect
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_delta(mid, mu) > d else (lo, mid)
    return (lo + hi) / 2


def contains(lower, upper, value, slack=0):
    """lower − slack ≤ value ≤ upper + slack, comparing exact Fractions with an mpf."""
    return _mp(lower) - slack <= value <= _mp(upper) + slack


def step_curve_closed(q, sigma, x, direction="remove"):
    """One step's curve from the Gaussian-CDF closed form (faster than :func:`step_curve`), any x ≥ 0."""
    qm, s, x = _mp(q), _mp(sigma), mp.mpf(x)
    if direction == "add":
        return 1 - x + x * step_curve_closed(q, sigma, 1 / x) if x > 0 else mp.mpf(1)
    t = x - 1 + qm
    if t <= 0:
        return 1 - x
    z = mp.mpf(1) / 2 + s ** 2 * mp.log(t / qm)
    return qm * mp.ncdf(-(z - 1) / s) - t * mp.ncdf(-z / s)


def replace_curve(q, sigma, x):
    """The replace-one pair's curve ∫ (p − x·q)_+ dz by quadrature, p = (1 − q)N(0, σ²) + qN(1, σ²) and
    q = (1 − q)N(0, σ²) + qN(−1, σ²) (no Gaussian CDF, no root formula: the crossing by bisection)."""
    qm, s, x = _mp(q), _mp(sigma), mp.mpf(x)
    p = lambda z: (1 - qm) * mp.npdf(z, 0, s) + qm * mp.npdf(z, 1, s)  # noqa: E731
    r = lambda z: (1 - qm) * mp.npdf(z, 0, s) + qm * mp.npdf(z, -1, s)  # noqa: E731
    g = lambda z: p(z) - x * r(z)  # noqa: E731  increasing sign change: the ratio p/r is monotone in z
    a, b = -60 * s - 5, 60 * s + 5
    if g(b) <= 0:
        return mp.mpf(0)
    for _ in range(200):
        m = (a + b) / 2
        a, b = (a, m) if g(m) > 0 else (m, b)
    z = (a + b) / 2
    return mp.quad(g, [z, z + s, z + 4 * s, z + 12 * s, mp.inf])


def max_densities(m, sigma, t, z):
    """The densities of an epoch's maximum, d/dτ Φ(τ/σ)^{t−1}Φ((τ − m)/σ), at τ = σz (per unit of z)."""
    from scipy.special import log_ndtr

    log_phi = -z * z / 2 - np.log(np.sqrt(2 * np.pi))
    shifted = z - m / sigma
    return (np.exp(np.log(t - 1) + log_phi + (t - 2) * log_ndtr(z) + log_ndtr(shifted))
            + np.exp((t - 1) * log_ndtr(z) - shifted * shifted / 2 - np.log(np.sqrt(2 * np.pi))))


def chua_epsilon(m, m_other, sigma, t, epochs, delta, h=5e-4):
    """ε(δ) of the E-fold product of the pair of laws of the epoch maximum (Chua et al., NeurIPS 2024, Section 3),
    independently of rdp_verify: the densities on a fine grid of z (midpoint rule, 1/1000 of σ), the losses
    log(f_m/f_m') rounded to the nearest multiple of h, composed by FFT convolution in double precision, ε by
    bisection; the larger of the two orders."""
    from scipy.signal import fftconvolve

    z = np.arange(-3, 16, 1e-3) + 5e-4
    best = 0.0
    for a, b in ((m, m_other), (m_other, m)):
        p, q = max_densities(a, sigma, t, z) * 1e-3, max_densities(b, sigma, t, z) * 1e-3
        keep = (p > 1e-300) & (q > 1e-300)
        k = np.rint(np.log(p[keep] / q[keep]) / h).astype(int)
        pmf = np.zeros(k.max() - k.min() + 1)
        np.add.at(pmf, k - k.min(), p[keep])
        out, low = pmf, k.min()
        for _ in range(epochs - 1):
            out, low = np.clip(fftconvolve(out, pmf), 0, None), low + k.min()
        loss = (low + np.arange(len(out))) * h

        def excess(eps, out=out, loss=loss):
            above = loss > eps
            return np.sum(out[above] * -np.expm1(eps - loss[above])) - delta

        lo, hi = 0.0, loss.max()
        if excess(lo) <= 0:
            continue
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        best = max(best, lo)
    return best


def mixture_delta(sigma, cs, ps, eps, direction):
    """∫ (A − e^ε B)_+ by mpmath quadrature, (A, B) = (Σ p_i N(−c_i, σ²), N(0, σ²)) or swapped, split at the one root
    of log(A/B) = ε (the ratio is monotone) found by bisection to the working precision."""
    def p(x):
        return sum(w * mp.npdf(x, -c, sigma) for c, w in zip(cs, ps))

    def q(x):
        return mp.npdf(x, 0, sigma)

    a, b = (p, q) if direction == "remove" else (q, p)
    e = mp.exp(eps)

    def gap(x):
        return mp.log(a(x)) - mp.log(b(x)) - eps

    points = [-mp.inf, mp.inf]
    lo, hi = mp.mpf(-60), mp.mpf(60)
    if gap(lo) * gap(hi) < 0:
        for _ in range(mp.mp.prec + 10):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if gap(mid) * gap(hi) > 0 else (mid, hi)
        points.insert(1, (lo + hi) / 2)
    return mp.quad(lambda x: max(a(x) - e * b(x), 0), points)
