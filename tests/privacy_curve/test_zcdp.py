"""zCDP runs: the upper end lies between the exact curve of a mechanism that meets the guarantee with equality
(the Gaussian mechanism, ρ = μ²/2, Balle & Wang's closed form) and Bun & Steinke's closed-form conversion."""

import math
from fractions import Fraction

import mpmath
import pytest
from mutations import edited

from rdp_verify.events.model import ComposedDpEvent, LaplaceDpEvent, SelfComposedDpEvent, UnsupportedEvent, ZCDpEvent
from rdp_verify.privacy_curve.certificate import certify_event, check_event_certificate
from rdp_verify.privacy_curve.table import resolve
from rdp_verify.privacy_curve.zcdp import delta_upper, epsilon_upper


def _gaussian_delta(mu: float, eps: float) -> float:
    """δ(ε) of the Gaussian mechanism of parameter μ (Balle & Wang 2018, Theorem 8), 50 digits."""
    with mpmath.workdps(50):
        mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
        return float(mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))


@pytest.mark.parametrize("rho, delta", [(Fraction(1, 100), Fraction(1, 10**5)), (Fraction(1, 2), Fraction(1, 10**3)),
                                        (Fraction(5), Fraction(1, 10**10))])
def test_the_upper_end_is_between_the_gaussian_mechanism_and_bun_steinke(rho, delta):
    eps, alpha = epsilon_upper(rho, Fraction(0), delta)
    assert _gaussian_delta(math.sqrt(2 * rho), float(eps)) <= float(delta)  # the Gaussian mechanism is ρ-zCDP
    assert float(eps) <= float(rho) + 2 * math.sqrt(float(rho) * math.log(1 / float(delta)))
    back, _ = delta_upper(rho, Fraction(0), eps)
    assert back <= delta * (1 + Fraction(1, 10**6))  # the reverse conversion agrees at the search's orders


def test_xi_and_counts_add():
    run = resolve(ComposedDpEvent((SelfComposedDpEvent(ZCDpEvent(Fraction(1, 10), Fraction(1, 100)), 3),
                                   ZCDpEvent(Fraction(1, 5)))))
    assert run.zcdp == (Fraction(1, 2), Fraction(3, 100))


def test_certificate_has_no_lower_end_and_is_checked():
    cert = certify_event(SelfComposedDpEvent(ZCDpEvent(Fraction(1, 100)), 10), delta=Fraction(1, 10**5))
    assert cert["epsilon"]["lower"] == "0" and cert["verdict"] == "partial" and "above only" in cert["verdict_reason"]
    assert check_event_certificate(cert) == []
    forged = edited(cert, "epsilon.upper", "1.5")
    assert any(p.startswith("epsilon.upper") for p in check_event_certificate(forged))


def test_zcdp_beside_other_mechanisms_is_refused_by_name():
    with pytest.raises(UnsupportedEvent, match="ZCDpEvent is supported alone"):
        resolve(ComposedDpEvent((ZCDpEvent(Fraction(1, 10)), LaplaceDpEvent(Fraction(1)))))
