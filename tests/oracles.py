"""Independent reference computations for the tests (plain mpmath, no package maths)."""

from __future__ import annotations

from fractions import Fraction

import mpmath

from rdp_verify.foundations.inputs import SGM


def mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def binomial_log_a(q: str, sigma: str, alpha: int, dps: int = 80) -> mpmath.mpf:
    """log A_α for integer α, summed directly from Section 3.3 Case I at high precision.

    Written independently of the package (plain binomial sum, no excess trick),
    used as a reference value.
    """
    sgm = SGM.parse(q, sigma, str(alpha))
    with mpmath.workdps(dps):
        qq, s2 = mp(sgm.q), mp(sgm.sigma) ** 2
        total = mpmath.fsum(
            mpmath.binomial(alpha, k) * (1 - qq) ** (alpha - k) * qq**k * mpmath.exp((k * k - k) / (2 * s2))
            for k in range(alpha + 1)
        )
        return mpmath.log(total)
