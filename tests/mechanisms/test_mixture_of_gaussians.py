"""Mixture of Gaussians: one use, both directions, against mpmath quadrature of E[(1 − e^{ε−L})_+] (no closed
form); the single-sensitivity mixture is the Gaussian. (dp_accounting's mixture PLDs take minutes at a fine grid:
no peer comparison here; the composition of PLDs is the one the other mechanisms' tests check.)"""

from fractions import Fraction

import mpmath as mp
import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.mechanisms.gaussian import Gaussian
from rdp_verify.mechanisms.mixture_of_gaussians import MixtureOfGaussians
from tests.curve_oracles import mixture_delta
from tests.mechanisms.checks import BITS, PREC, TAIL, bracket, brackets_and_shrinks, frac_mpf, holds

SLACK = Fraction(1, 10**25)
SIGMA, SENS, PROBS = Fraction(1), (Fraction(0), Fraction(1), Fraction(2)), (Fraction(81, 100), Fraction(18, 100),
                                                                            Fraction(1, 100))


def reference(eps, direction):
    """E_A[(1 − e^{ε − L})_+] = ∫ (A − e^ε B)_+ with the kink at the root of log(A/B) = ε (mpmath, independent)."""
    return mixture_delta(mp.mpf(1), [frac_mpf(c) for c in SENS], [frac_mpf(p) for p in PROBS], eps, direction)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_use_brackets_the_quadrature_and_shrinks_like_h(direction):
    m = MixtureOfGaussians(SIGMA, SENS, PROBS)
    coarse, fine = (m.plds(h, BITS, TAIL) for h in (Fraction(1, 50), Fraction(1, 100)))
    with mp.workdps(40):
        for eps in (Fraction(-1, 2), Fraction(0), Fraction(1, 2), Fraction(1)):
            ref = reference(frac_mpf(eps), direction)
            assert holds(m.hockey_stick(eps, PREC, direction), ref, m.hockey_stick(eps, PREC, direction), SLACK)
            brackets_and_shrinks(coarse, fine, direction, eps, ref, SLACK)


def test_one_sensitivity_is_the_gaussian_mechanism():
    m, g = MixtureOfGaussians(Fraction(2), (Fraction(0), Fraction(3, 2)), (Fraction(0), Fraction(1))), \
        Gaussian(Fraction(2), Fraction(3, 2))
    assert m.sensitivities == (Fraction(3, 2),) and m.is_symmetric()  # zero-probability entries dropped
    for eps in (Fraction(0), Fraction(1, 2)):
        assert holds(m.hockey_stick(eps, PREC), g.delta_exact(eps, PREC), m.hockey_stick(eps, PREC))
        lo, up = bracket(m.plds(Fraction(1, 50), BITS, TAIL), "remove", eps)
        assert holds(lo, g.delta_exact(eps, PREC), up)


@pytest.mark.parametrize("sigma, sens, probs", [
    (Fraction(0), (Fraction(1),), (Fraction(1),)),
    (float("nan"), (Fraction(1),), (Fraction(1),)),
    (Fraction(1), (Fraction(-1), Fraction(1)), (Fraction(1, 2), Fraction(1, 2))),  # negative: not monotone
    (Fraction(1), (Fraction(1),), (Fraction(1, 2),)),  # probabilities add up to 1/2
    (Fraction(1), (Fraction(0),), (Fraction(1),)),  # no positive sensitivity
    (Fraction(1), (Fraction(1), Fraction(2)), (Fraction(1),)),  # lengths differ
    (Fraction(1), (0.5,), (Fraction(1),)),  # a float
])
def test_parameters_are_validated(sigma, sens, probs):
    with pytest.raises(InputError):
        MixtureOfGaussians(sigma, sens, probs)
