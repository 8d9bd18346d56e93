"""The privacy-curve accountant's supported range and defaults, importable without python-flint.

The command line's parser reads them for its help texts at start-up, before any engine is
loaded; :mod:`rdp_verify.curves.accountant` uses these same objects.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["MAX_STEPS", "DELTA_MIN", "DEFAULT_TOLERANCE"]

from ..foundations.inputs import DELTA_MIN, MAX_STEPS  # the limits every accountant shares

DEFAULT_TOLERANCE = Fraction(1, 1000)
