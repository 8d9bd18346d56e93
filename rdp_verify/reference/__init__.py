"""The regression oracle for other accountants: peers (float64 libraries), ``compare``, the golden
vectors, and :func:`check` for other projects' test suites.

    from rdp_verify.reference import check
    check(my_rdp, rtol=1e-9)   # my_rdp(q, sigma, alpha) -> float: the RDP of one step

    from rdp_verify.reference import check_dp
    check_dp(my_epsilon, rtol=1e-3)   # my_epsilon(q, sigma, steps, delta) -> float: a run's epsilon

Imports the certificates, the methods and the foundations.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check", "Report", "golden_rows", "check_dp", "DpReport", "golden_dp_rows"]


def __getattr__(name: str) -> Any:
    """The names of :mod:`rdp_verify.reference.checks`, imported on first use (PEP 562).

    Importing a light submodule (``peers``, ``golden``) must not load the engines: the command
    line's parser reads those at start-up.
    """
    if name in __all__:
        from . import checks

        return getattr(checks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
