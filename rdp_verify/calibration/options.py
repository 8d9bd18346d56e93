"""Calibration's named choices and defaults, importable without the engines.

The command line's parser reads them for its choices and help texts at start-up, before any
engine is loaded; :mod:`rdp_verify.calibration.solve` uses these same objects.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["ACCOUNTANTS", "DEFAULT_TOLERANCE"]

ACCOUNTANTS = ("pld", "rdp")
DEFAULT_TOLERANCE = Fraction(1, 10**4)  # the finest rung of the ladder
