"""Calibration's named choices and defaults, importable without the engines.

The command line's parser reads them for its choices and help texts at start-up, before any
engine is loaded; :mod:`rdp_verify.calibration.solve` uses these same objects.
"""

from __future__ import annotations

from fractions import Fraction

from ..foundations.inputs import MAX_STEPS, Q_MIN, RUN_SIGMA_MAX, RUN_SIGMA_MIN, SIGMA_MAX, SIGMA_MIN

__all__ = ["ACCOUNTANTS", "DEFAULT_TOLERANCE", "domain"]

ACCOUNTANTS = ("pld", "rdp")
DEFAULT_TOLERANCE = Fraction(1, 10**4)  # the finest rung of the ladder
_SIGMA_RANGE = {"pld": (RUN_SIGMA_MIN, RUN_SIGMA_MAX), "rdp": (SIGMA_MIN, SIGMA_MAX)}


def domain(unknown: str, accountant: str) -> tuple[Fraction, Fraction]:
    """The supported range of the unknown under the accountant: σ ∈ [0.05, 1e6] (``pld``, the run domain of
    :class:`~rdp_verify.foundations.run.Phase`) or [0.1, 1e4] (``rdp``); steps ∈ [1, 1e6]; q ∈ [1e-12, 1]."""
    if unknown == "sigma":
        return _SIGMA_RANGE[accountant]
    return (Fraction(1), Fraction(MAX_STEPS)) if unknown == "steps" else (Q_MIN, Fraction(1))
