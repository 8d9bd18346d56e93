"""The regression oracle for other accountants: peers (float64 libraries), ``compare``, the golden
vectors, and :func:`check` for other projects' test suites.

    from rdp_verify.reference import check
    check(my_rdp, rtol=1e-9)   # my_rdp(q, sigma, alpha) -> float: the RDP of one step

    from rdp_verify.reference import check_dp
    check_dp(my_epsilon, rtol=1e-3)   # my_epsilon(q, sigma, steps, delta) -> float: a run's epsilon

Imports the certificates, the methods and the foundations.
"""

from .checks import DpReport, Report, check, check_dp, golden_dp_rows, golden_rows

__all__ = ["check", "Report", "golden_rows", "check_dp", "DpReport", "golden_dp_rows"]
