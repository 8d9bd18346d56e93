"""DP ⇒ CDP (Dwork–Rothblum 2016, Theorem 3.5) on finite antipodal pairs, in Arb.

An ε-DP mechanism is (ε(e^ε − 1)/2, ε)-CDP. The proof has two parts, each checked here
on explicit distributions:

* the mean: KL(P‖Q) ≤ ε(e^ε − 1)/2 (Lemma 3.8, via antipodal pairs, Definition 3.4,
  whose KL is symmetric, Lemma 3.10);
* subgaussianity: the centred loss lies in an interval of length ≤ 2ε, so by
  Hoeffding's lemma (Lemma 3.6) it is ε-subgaussian.

The family checked is the antipodal pair with a "no-information" outcome of mass r:

    P = (e^ε·s, s, r),  Q = (s, e^ε·s, r),  s = (1 − r)/(1 + e^ε),

whose privacy loss is ε, −ε, 0 with probabilities e^ε·s, s, r (Definition 3.4).
r = 0 is ε-DP randomized response (report the true bit with probability e^ε/(1 + e^ε)).
For a two-point loss (r = 0) the *optimal* subgaussian standard is known in closed form
(Buldygin & Moskvichova 2013, Theorem 2.1; Kearns & Saul 1998): a Bernoulli(p) is
σ²-subgaussian exactly for σ² ≥ (1 − 2p)/(2 log((1 − p)/p)) (1/4 at p = 1/2), so the
randomized-response loss, taking ±ε, has τ_opt² = (2ε)²·tanh(ε/2)/(2ε) = 2ε·tanh(ε/2),
which is twice its mean ε·tanh(ε/2): randomized response is exactly (τ²/2, τ)-CDP with
τ = τ_opt, like the Gaussian mechanism.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx

from ..foundations.results import to_arb

__all__ = ["Antipodal", "antipodal", "theorem35_mean_bound", "centred_log_mgf", "subgaussian_witness", "PREC"]

PREC = 256


@dataclass(frozen=True)
class Antipodal:
    """The antipodal pair above: exact inputs, Arb probabilities (at ``PREC`` bits)."""

    epsilon: Fraction
    stay: Fraction
    p: tuple[arb, arb, arb]
    q: tuple[arb, arb, arb]

    @property
    def losses(self) -> tuple[arb, arb, arb]:
        """log P_i/Q_i = (ε, −ε, 0), exact by construction."""
        e = to_arb(self.epsilon)
        return (e, -e, arb(0))

    def mean(self) -> arb:
        """KL(P‖Q) = E_P[L] = ε(e^ε − 1)s (and = KL(Q‖P) by Lemma 3.10)."""
        return sum((pi * li for pi, li in zip(self.p, self.losses)), arb(0))

    def mean_reverse(self) -> arb:
        """KL(Q‖P) = E_Q[−L], computed separately as a check of Lemma 3.10."""
        return sum((qi * (-li) for qi, li in zip(self.q, self.losses)), arb(0))

    def optimal_tau_squared(self) -> arb | None:
        """τ_opt² = 2ε·tanh(ε/2) for the two-point loss (r = 0); None for r > 0."""
        if self.stay != 0:
            return None
        e = to_arb(self.epsilon)
        return 2 * e * (e / 2).tanh()


def antipodal(epsilon: Fraction, stay: Fraction = Fraction(0)) -> Antipodal:
    """The pair of the module docstring; ε > 0 and 0 ≤ r < 1 exact."""
    if epsilon <= 0 or not 0 <= stay < 1:
        raise ValueError("need epsilon > 0 and 0 <= stay < 1")
    with ctx.workprec(PREC):
        e = to_arb(epsilon).exp()
        s = (1 - to_arb(stay)) / (1 + e)
        r = to_arb(stay)
        return Antipodal(epsilon, stay, (e * s, s, r), (s, e * s, r))


def theorem35_mean_bound(epsilon: Fraction) -> arb:
    """ε(e^ε − 1)/2, Theorem 3.5's bound on the expected privacy loss (Lemma 3.8)."""
    with ctx.workprec(PREC):
        e = to_arb(epsilon)
        return e * e.expm1() / 2


def centred_log_mgf(pair: Antipodal, lam: Fraction) -> arb:
    """log E_P[e^{λ(L − E L)}] for the loss under P (Arb)."""
    with ctx.workprec(PREC):
        m, la = pair.mean(), to_arb(lam)
        return sum((pi * (la * (li - m)).exp() for pi, li in zip(pair.p, pair.losses)), arb(0)).log()


def subgaussian_witness(pair: Antipodal, tau: Fraction) -> tuple[Fraction, arb] | None:
    """Among λ = ±2^k/8 (abs(k) ≤ 16), the one with the largest proven excess
    log E[e^{λ(L−EL)}] − λ²τ²/2 > 0, or None if no λ there has a proven excess."""
    best = None
    with ctx.workprec(PREC):
        for k in range(-16, 17):
            for lam in (Fraction(2) ** k / 8, -Fraction(2) ** k / 8):
                excess = centred_log_mgf(pair, lam) - to_arb(lam * lam * tau * tau / 2)
                if excess > 0 and (best is None or excess.lower() > best[1].lower()):
                    best = (lam, excess)
    return best
