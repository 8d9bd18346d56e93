"""Method 4 (rigorous): proven Arb ball enclosures of log A_α and log B_α.

Notation as in :mod:`rdp_verify.methods.quadrature`: M(γ) = ∫ μ0 w^γ dz,
w(z) = 1 − q + q·r(z), r(z) = exp((2z − 1)/(2σ²)), A_α = M(α), B_α = M(1 − α),
z1 = 1/2 + σ² ln(1/q − 1) and u(z) = (z − z1)/σ², so that w = (1 − q)(1 + e^u).

Every error is inside the ball (python-flint / Arb, Johansson 2017):

* **Rounding**: ball arithmetic throughout; q, σ, α enter as exact rationals.
* **q = 1**: M(γ) = exp((γ² − γ)/(2σ²)) exactly, so log A_α = log B_α is an
  exact rational and ε_α = α/(2σ²).
* **Integer α, A_α** (Section 3.3, Case I): the finite positive sum
  A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k}q^k (e^{(k²−k)/(2σ²)} − 1); no truncation.
* **Everything else**: ``acb.integral`` (Arb's rigorous adaptive Gauss–Legendre
  integration; Johansson, "Numerical integration in arbitrary-precision ball
  arithmetic", ICMS 2018) over a finite window [a, b], plus the two infinite
  tails bounded in closed form (the same bounds as the quadrature method,
  evaluated in ball arithmetic)::

      γ > 0: ∫_{−∞}^{a} ≤ w(a)^γ Φ(a/σ),
             ∫_{b}^{∞} ≤ (1 + (1−q)/(q r(b)))^γ q^γ e^{(γ²−γ)/(2σ²)} Φ̄((b−γ)/σ);
      γ < 0: w^γ ≤ min((1−q)^γ, (q r)^γ) and the same Gaussian tails.

  The integrator needs f analytic on the complex boxes it evaluates (the
  ``analytic`` flag). w^γ has branch points where w = 0, i.e. at
  u = iπ(2j+1); we evaluate it in the representation that is analytic on the box:
  (1−q)^γ(1 + e^u)^γ when Re u < 0 on the whole box, (q r)^γ(1 + e^{−u})^γ when
  Re u > 0 (here abs(e^{∓u}) < 1, so the principal power is analytic), and the
  principal branch of w^γ otherwise, with Arb's ``log(analytic=True)`` returning
  a non-finite ball if the box touches the cut. The exponent is written with the
  square completed around γ in the right-hand representation, which avoids the
  cancellation between −z²/(2σ²) and γ(2z − 1)/(2σ²) for large α.

A precision loop doubles the working precision until log A_α and log B_α
both have the requested relative accuracy (this is what keeps α → 1, where
log A_α → 0, at full relative precision).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from flint import acb, arb, ctx

from ..foundations.inputs import SGM
from ..foundations.results import (
    Bounded,
    MethodResult,
    MethodUnavailable,
    arb_to_bounded,
    to_arb,
)
from .arb_series import shared_context

__all__ = ["compute", "enclose", "epsilon_bounds", "epsilon_many", "partial_moment", "Enclosure", "INTEGER_SUM_MAX"]

INTEGER_SUM_MAX = 4096
FAST_PATH = True  # tests switch it off to exercise acb.integral on every order
MAX_PREC = 16384
LN2 = math.log(2)


@dataclass(frozen=True)
class Enclosure:
    """Balls for log A_α, log B_α (and ε_α) at the precision that met the target."""

    log_a: arb
    log_b: arb
    prec: int
    work: dict


class _Moment:
    """The integrand μ0(z) w(z)^γ in Arb and the closed-form pieces around it."""

    def __init__(self, sgm: SGM, gamma: Fraction):
        self.unit = sgm.q == 1
        self.gamma_exact = gamma
        self.q = to_arb(sgm.q)
        self.sigma = to_arb(sgm.sigma)
        self.s2 = to_arb(sgm.sigma * sgm.sigma)
        self.g = to_arb(gamma)
        self.lognorm = -(self.sigma.log() + (2 * arb.pi()).log() / 2)
        self.logq = self.q.log()
        self.log1mq = None if self.unit else (1 - self.q).log()
        self.z1 = None if self.unit else arb(0.5) + self.s2 * (self.log1mq - self.logq)
        # exponent offset of the right-hand representation: (γ² − γ)/(2σ²) + γ log q
        self.k_right = to_arb((gamma * gamma - gamma) / (2 * sgm.sigma * sgm.sigma)) + self.g * self.logq
        self.evaluations = 0

    # -- real-line pieces ----------------------------------------------------------
    def log_w(self, x: arb) -> arb:
        t = (2 * x - 1) / (2 * self.s2)
        if self.unit:
            return t
        return (1 - self.q + self.q * t.exp()).log()

    def log_f(self, x: arb) -> arb:
        """log μ0(x) + γ log w(x) without the normalisation 1/(σ√2π)."""
        return -(x * x) / (2 * self.s2) + self.g * self.log_w(x)

    def _log_phi(self, x: arb, upper: bool) -> arb:
        """log Φ̄(x/σ) (upper tail) or log Φ(x/σ) (lower tail)."""
        arg = x / (self.sigma * arb(2).sqrt())
        return _log_half_erfc(arg if upper else -arg)

    def log_tail_pair(self, a: arb, b: arb) -> tuple[arb, arb]:
        """Upper bounds (balls whose upper ends bound them) of log ∫_{−∞}^a and log ∫_b^∞."""
        g = self.g
        gauss = lambda x, upper: self.k_right + self._log_phi(x - g, upper)  # noqa: E731
        if self.gamma_exact > 0:
            left = g * self.log_w(a) + self._log_phi(a, upper=False)
            right = gauss(b, True)
            if not self.unit:
                right += g * ((1 - self.q) / (self.q * ((2 * b - 1) / (2 * self.s2)).exp())).log1p()
        else:
            left, right = gauss(a, False), gauss(b, True)
            if not self.unit:
                left = _min_upper(left, g * self.log1mq + self._log_phi(a, upper=False))
                right = _min_upper(right, g * self.log1mq + self._log_phi(b, upper=True))
        return left + self.lognorm, right + self.lognorm

    def log_lower_bound(self, centres: list[arb]) -> arb:
        """Proven lower bound of log M(γ): 2δ · min of the integrand on [c − δ, c + δ]."""
        delta = min(self.sigma, self.s2 / (1 + abs(self.g)))
        best = None
        for c in centres:
            lo, hi = c - delta, c + delta
            far = max(abs(lo), abs(hi))
            end = lo if self.gamma_exact > 0 else hi
            val = (2 * delta).log() - far * far / (2 * self.s2) + self.lognorm + self.g * self.log_w(end)
            best = val if best is None else max(best, val)
        return best

    def peak_guesses(self) -> list[float]:
        """Float guesses of the integrand's peaks: fixed points of z = γ·λ(z)."""
        g = float(self.gamma_exact)
        if self.unit:
            return [g]
        z1, s2 = float(self.z1.mid()), float(self.s2.mid())

        def lam(z: float) -> float:  # q r/w, a logistic function of u
            u = (z - z1) / s2
            return 1 / (1 + math.exp(-u)) if u > -700 else 0.0

        guesses = [0.0, g]
        if g > 0:  # z ↦ γλ(z) is increasing: iterating from 0 and γ reaches the extreme fixed points
            for z in (0.0, g):
                for _ in range(60):
                    z = g * lam(z)
                guesses.append(z)
        else:  # decreasing (iteration would oscillate): the single root of γλ(z) − z in (γ, 0)
            lo, hi = g, 0.0
            for _ in range(200):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if g * lam(mid) - mid > 0 else (lo, mid)
            guesses.append((lo + hi) / 2)
        return guesses

    # -- the complex integrand, analytic flag honoured ---------------------------
    def integrand(self, shift: arb):
        g, s2 = self.g, self.s2
        k_right = self.k_right - shift
        k_left = None if self.unit else g * self.log1mq - shift

        def f(z: acb, analytic: bool) -> acb:
            self.evaluations += 1
            if self.unit:
                return (-((z - g) ** 2) / (2 * s2) + k_right).exp()
            u = (z - self.z1) / s2
            if u.real < 0:  # |e^u| < 1 on the box: principal power of 1 + e^u is analytic
                return (-(z * z) / (2 * s2) + k_left + g * (1 + u.exp()).log(analytic=analytic)).exp()
            if u.real > 0:  # |e^−u| < 1 on the box
                return (-((z - g) ** 2) / (2 * s2) + k_right + g * (1 + (-u).exp()).log(analytic=analytic)).exp()
            w = (1 - self.q) + self.q * ((2 * z - 1) / (2 * s2)).exp()
            return (-(z * z) / (2 * s2) - shift + g * w.log(analytic=analytic)).exp()

        return f

    # -- the enclosure by integration --------------------------------------------------
    def integrate(self, prec: int, lower: arb | None = None, upper: arb | None = None) -> tuple[arb, arb, dict]:
        """∫ μ0 w^γ over [lower, upper] (default ℝ) as (offset, total): e^offset · total.

        ``acb.integral`` on a finite window [a, b] ∩ [lower, upper]; what lies
        outside the window is bounded by the closed-form tails and enters
        ``total`` as the interval [0, tail]. The absolute goal is 2^−prec times a
        proven lower bound of the whole moment M(γ).
        """
        centres = [_exact(c) for c in self.peak_guesses()]
        log_lb = self.log_lower_bound(centres)
        log_tol = float(log_lb.lower()) - prec * LN2 - 4  # absolute goal on M, in log

        lo_c, hi_c = min(centres), max(centres)
        width = 8.0
        while True:
            a, b = _exact(lo_c - width * self.sigma), _exact(hi_c + width * self.sigma)
            left, right = self.log_tail_pair(a, b)
            if float(_log_add(left, right).upper()) < log_tol:
                break
            width *= 1.5
            if width > 1e5:
                raise MethodUnavailable("no finite window makes the tails negligible")
        if lower is not None and lower >= a:
            a, left = lower, None  # nothing left of the window
        if upper is not None and upper <= b:
            b, right = upper, None
        tails = [t for t in (left, right) if t is not None]

        inner = centres + ([] if self.unit else [_exact(self.z1)])
        points = [a, b] if a < b else []
        points += [c for c in inner if a < c < b and c not in points]
        points.sort(key=lambda x: float(x.mid()))
        shift = _exact(max(self.log_f(c) for c in points + centres))
        offset = self.lognorm + shift  # moment = e^offset · ∫ exp(log f − shift)
        seg_tol = arb(log_tol - math.log(max(len(points) - 1, 1))).exp() / offset.exp()

        f = self.integrand(shift)
        total = arb(0)
        for lo, hi in zip(points[:-1], points[1:]):
            piece = acb.integral(f, lo, hi, rel_tol=arb(2) ** (-prec), abs_tol=seg_tol,
                                 eval_limit=200_000, depth_limit=4000)
            if not piece.is_finite():
                raise MethodUnavailable(f"acb.integral did not converge on [{float(lo.mid()):g}, {float(hi.mid()):g}]")
            total += piece.real
        tail = (_log_sum(tails) - offset).exp().upper() if tails else arb(0)
        total = total + arb(tail / 2, tail / 2)  # the tails lie in [0, tail]
        work = {
            "scheme": "acb.integral on a window + proven tail bounds",
            "window": [a.mid().str(8, radius=False), b.mid().str(8, radius=False)],
            "subintervals": max(len(points) - 1, 0),
            "evaluations": self.evaluations,
            "relative_tail_bound": (_log_sum(tails) - log_lb).exp().upper().str(3, radius=False) if tails else "0",
        }
        return offset, total, work

    def log_moment_by_integration(self, prec: int) -> tuple[arb, dict]:
        offset, total, work = self.integrate(prec)
        if not total > 0:
            raise MethodUnavailable("integral enclosure does not exclude zero")
        return offset + total.log(), work


def _exact(x) -> arb:
    """An exact dyadic ball near x (used for window ends and breakpoints)."""
    if isinstance(x, arb):
        x = float(x.mid())
    return arb(x)


def _log_half_erfc(x: arb) -> arb:
    """log(erfc(x)/2), evaluated at the exact ends of the ball x.

    Arb's erfc loses all relative accuracy for large *inexact* arguments (the
    ball then contains 0); erfc is decreasing, so erfc(x) lies between the
    values at the two exact endpoints, each of which Arb computes accurately.
    """
    return (x.upper().erfc().union(x.lower().erfc()) / 2).log()


def _log_sum(terms: list[arb]) -> arb:
    out = terms[0]
    for t in terms[1:]:
        out = _log_add(out, t)
    return out


def _min_upper(x: arb, y: arb) -> arb:
    return x if x.upper() < y.upper() else y


def _log_add(x: arb, y: arb) -> arb:
    m = max(x.mid(), y.mid())
    return m + ((x - m).exp() + (y - m).exp()).log()


def _log_moment(sgm: SGM, gamma: Fraction, prec: int) -> tuple[arb, dict]:
    """Ball for log M(γ), choosing the scheme described in the module docstring."""
    if sgm.q == 1:
        return to_arb((gamma * gamma - gamma) / (2 * sgm.sigma * sgm.sigma)), {"scheme": "closed form (q = 1)"}
    if gamma > 1:  # A_α: the per-(q, σ) shared tables of arb_series
        shared = shared_context(sgm.q, sgm.sigma, prec)
        if gamma.denominator == 1 and gamma <= INTEGER_SUM_MAX:
            return shared.log_a_integer(int(gamma)), {"scheme": "finite binomial sum", "terms": int(gamma) - 1}
        if FAST_PATH:
            fast = shared.log_a(gamma)
            if fast is not None:
                return fast, {"scheme": "series | Gauss-Legendre band | series, shared per (q, sigma)"}
    return _Moment(sgm, gamma).log_moment_by_integration(prec)


def enclose(sgm: SGM, dps: int) -> Enclosure:
    """Balls for log A_α and log B_α with relative accuracy ≥ 10^−dps."""
    target = math.ceil(dps * math.log2(10)) + 4
    prec = target + 40
    saved = ctx.prec
    try:
        for _ in range(8):
            ctx.prec = prec
            log_a, work_a = _log_moment(sgm, sgm.alpha, prec)
            log_b, work_b = _log_moment(sgm, 1 - sgm.alpha, prec)
            accuracy = min(_rel_bits(log_a), _rel_bits(log_b))
            if accuracy >= target:
                return Enclosure(log_a, log_b, prec, {"precision_bits": prec, "A": work_a, "B": work_b})
            prec = _next_prec(prec, target, accuracy)
            if prec > MAX_PREC:
                break
    finally:
        ctx.prec = saved
    raise MethodUnavailable(f"rigorous enclosure did not reach {dps} digits within {MAX_PREC} bits")


def _next_prec(prec: int, target: int, accuracy: int) -> int:
    """Working precision for the next attempt: add the missing bits, at most doubling.

    A ball with no relative accuracy at all (it contains 0, or is infinite when a
    lower bound underflowed) reports a hugely negative accuracy that says nothing
    about how many bits are missing, so the step is capped at doubling.
    """
    return prec + min(max(target - accuracy, 0), prec) + 32


def _rel_bits(x: arb) -> int:
    if x.is_exact():
        return 1 << 30
    return x.rel_accuracy_bits()


def compute(sgm: SGM, dps: int) -> MethodResult:
    """The rigorous method as a :class:`MethodResult` (``bound_kind='proven'``)."""
    enc = enclose(sgm, dps)
    return MethodResult(
        method="rigorous",
        bound_kind="proven",
        log_a=arb_to_bounded(enc.log_a),
        log_b=arb_to_bounded(enc.log_b),
        work=enc.work,
        notes=("Arb ball arithmetic: rounding, quadrature, tails and truncation all enclosed",),
    )


def epsilon_bounds(sgm: SGM, dps: int = 30) -> Bounded:
    """Proven interval for ε_α = log max(A_α, B_α)/(α − 1), as exact rationals."""
    enc = enclose(sgm, dps)
    la, lb = arb_to_bounded(enc.log_a), arb_to_bounded(enc.log_b)
    inv = 1 / (sgm.alpha - 1)
    lo, hi = max(la.lower, lb.lower) * inv, max(la.upper, lb.upper) * inv
    return Bounded.between(lo, hi)


def partial_moment(sgm: SGM, gamma: Fraction, lower: Fraction | None, upper: Fraction | None, dps: int = 30) -> Bounded:
    """Proven enclosure of ∫_lower^upper μ0(z) w(z)^γ dz (None = ∓∞), as exact rationals.

    The absolute accuracy is 10^−dps relative to the whole moment M(γ); useful for
    the pieces A_α^(1), A_α^(2) of Lemmas 9 and 10.
    """
    saved = ctx.prec
    try:
        ctx.prec = math.ceil(dps * math.log2(10)) + 40
        m = _Moment(sgm, gamma)
        offset, total, _ = m.integrate(ctx.prec, None if lower is None else to_arb(lower),
                                       None if upper is None else to_arb(upper))
        return arb_to_bounded(offset.exp() * total)
    finally:
        ctx.prec = saved


def epsilon_many(q: Fraction, sigma: Fraction, alphas: list[Fraction], dps: int = 30) -> list[Bounded]:
    """Proven ε_α for many orders at one (q, σ), from A_α alone.

    Corollary 7 (A_α ≥ B_α for every α ≥ 1, Mironov–Talwar–Zhang 2019, via
    Theorem 5) gives ε_α = log A_α/(α − 1), so B_α is not computed here (it is
    in :func:`enclose`, which every certificate uses, and the certificates check
    Corollary 7 numerically). Orders share the per-(q, σ) tables of
    :mod:`rdp_verify.methods.arb_series`; each order's precision is raised until ε_α has
    relative accuracy 10^−dps.
    """
    target = math.ceil(dps * math.log2(10)) + 4
    out = []
    saved = ctx.prec
    try:
        for alpha in alphas:
            sgm = SGM(q, sigma, alpha)
            prec = target + 40
            while True:
                ctx.prec = prec
                log_a, _ = _log_moment(sgm, alpha, prec)
                accuracy = _rel_bits(log_a)
                if accuracy >= target:
                    break
                prec = _next_prec(prec, target, accuracy)
                if prec > MAX_PREC:
                    raise MethodUnavailable(f"alpha={alpha}: no {dps}-digit enclosure within {MAX_PREC} bits")
            out.append(arb_to_bounded(log_a).scaled(1 / (alpha - 1)))
    finally:
        ctx.prec = saved
    return out
