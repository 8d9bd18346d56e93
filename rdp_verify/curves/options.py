"""The privacy-curve accountant's supported range and defaults, importable without python-flint.

The command line's parser reads them for its help texts at start-up, before any engine is
loaded; :mod:`rdp_verify.curves.accountant` uses these same objects.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["MAX_STEPS", "DELTA_MIN", "DEFAULT_TOLERANCE"]

MAX_STEPS = 10**6  # the largest total number of steps supported (and tested)
DELTA_MIN = Fraction(1, 10**40)  # the smallest δ supported
DEFAULT_TOLERANCE = Fraction(1, 1000)
