"""The regression oracle for other accountants: peers (float64 libraries), ``compare``, the golden
vectors, and :func:`check` for other projects' test suites.

    from rdp_verify.reference import check
    check(my_rdp, rtol=1e-9)   # my_rdp(q, sigma, alpha) -> float: the RDP of one step

Imports the certificates, the methods and the foundations.
"""

from .checks import Report, check, golden_rows

__all__ = ["check", "Report", "golden_rows"]
