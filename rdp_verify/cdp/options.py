"""The CDP family's named choices, importable without python-flint.

The command line's parser reads them for its choices at start-up, before any engine is
loaded; :mod:`rdp_verify.cdp.concentrated` uses these same objects.
"""

from __future__ import annotations

__all__ = ["CONVENTIONS"]

# what (rho, omega)-tCDP quantifies over, by convention name
CONVENTIONS = {
    "mtz19": "MTZ19 Definition 12: lambda in (0, omega), i.e. Renyi orders alpha in (1, omega + 1)",
    "bdrs18": "Bun-Dwork-Rothblum-Steinke 2018 Definition 1: Renyi orders alpha in (1, omega)",
}
