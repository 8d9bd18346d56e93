"""The RDP accounting's named choices and defaults, importable without python-flint.

The command line's parser reads them for its choices and help texts at start-up, before any
engine is loaded; :mod:`rdp_verify.accounting.rdp` uses these same objects.
"""

from __future__ import annotations

__all__ = ["CONVERSIONS", "DPS"]

CONVERSIONS = ("mironov2017", "balle2020")
DPS = 20  # digits of each RDP enclosure: the audited ε needs a few digits, not 30
