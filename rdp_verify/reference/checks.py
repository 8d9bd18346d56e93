"""Test another RDP implementation against the golden vectors, from its own test suite.

    from rdp_verify import reference

    def test_my_accountant_matches_rdp_verify():
        reference.check(my_rdp, rtol=1e-9)   # my_rdp(q, sigma, alpha) -> float, one step

:func:`check` evaluates ``fn(q, sigma, alpha)`` at every row of the packaged
golden dataset (``certificates/golden-v1.csv``, see :mod:`rdp_verify.reference.golden`):
proven intervals [lo, hi] ∋ ε_α = log max(A_α, B_α)/(α − 1), the RDP of one step
of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019,
Theorem 4). ``fn`` receives the doubles nearest to the exact q, σ, α of the row.
Each value is classified as in :mod:`rdp_verify.reference.compare`, with tolerance
τ = rtol·abs(ε) + atol·(α + 1)/(α − 1): atol·(α + 1) is the error allowed in
log A_α = (α − 1)ε_α, which a double-precision accountant cannot get below many
ulps of 1.0 (so where ε_α is tiny, any value within τ of it passes; pass atol=0 to
demand the relative accuracy rtol everywhere):

* below lo − τ (``unsafe``: under-reports, a privacy claim built on it is false),
  NaN, −inf or an exception: always a failure;
* above hi + τ (``conservative``) or +inf: a failure unless
  ``allow_conservative=True`` (an over-report, or the vacuous bound +inf, is still
  a true RDP guarantee, only a loose one).

A failure raises ``AssertionError`` naming how many rows failed and the worst
ones; otherwise :func:`check` returns a :class:`Report`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib.resources import files
from typing import Callable

from ..foundations.inputs import SGM, parse_alpha, parse_q, parse_sigma
from ..foundations.results import Bounded
from .compare import ATOL_LOG_A, CLASSES, RTOL, Point, call_peer, classify, peer_number
from .dp_compare import CLASSES as DP_CLASSES
from .dp_compare import DpPoint, Target, default_targets
from .dp_compare import classify as classify_dp
from .golden import COLUMNS, FORMAT_VERSION

__all__ = ["Report", "check", "golden_rows", "DATA", "DpReport", "check_dp", "golden_dp_rows"]

DATA = f"data/golden-v{FORMAT_VERSION}.csv"  # in the package: a symlink to certificates/golden-v1.csv
_SHOW = 10  # failing rows printed in the assertion message


@lru_cache(maxsize=1)
def golden_rows() -> tuple[tuple[SGM, Bounded], ...]:
    """The packaged golden rows as exact (inputs, proven interval) pairs."""
    text = files(__package__).joinpath(DATA).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    if not lines or tuple(lines[0].split(",")) != COLUMNS:
        raise ValueError(f"rdp_verify/reference/{DATA} does not start with the columns {','.join(COLUMNS)}")
    rows = []
    for line in lines[1:]:
        q, sigma, alpha, lower, upper = line.split(",")
        lo, hi = Fraction(lower), Fraction(upper)
        rows.append((SGM(parse_q(q), parse_sigma(sigma), parse_alpha(alpha)), Bounded.between(lo, hi)))
    return tuple(rows)


@dataclass(frozen=True)
class Report:
    """What :func:`check` found: rows checked, counts per class, the worst relative error."""

    name: str
    checked: int
    counts: dict[str, int]
    failures: tuple[Point, ...]
    max_relative_error: float  # largest |(fn − ε)/ε| over finite values

    def __str__(self) -> str:
        counts = ", ".join(f"{self.counts.get(c, 0)} {c}" for c in CLASSES)
        return (f"{self.name}: {self.checked} golden rows: {counts}; "
                f"max |relative error| {self.max_relative_error:.3g}")


@dataclass(frozen=True)
class DpReport:
    """What :func:`check_dp` found: rows checked, counts per class, the worst relative error."""

    name: str
    checked: int
    counts: dict[str, int]
    failures: tuple[DpPoint, ...]
    max_relative_error: float  # largest |(fn − ε)/ε| over finite values (ε: the bracket's midpoint)

    def __str__(self) -> str:
        counts = ", ".join(f"{self.counts.get(c, 0)} {c}" for c in DP_CLASSES)
        return (f"{self.name}: {self.checked} golden (epsilon, delta) rows: {counts}; "
                f"max |relative error| {self.max_relative_error:.3g}")


def _fails(p: Point, allow_conservative: bool) -> bool:
    if p.classification == "unsafe":
        return True
    if p.classification == "conservative" or p.value == math.inf:
        return not allow_conservative
    return p.classification == "non-finite"  # NaN, −inf or an exception


def check(fn: Callable[[float, float, float], float], rtol: float = float(RTOL), *,
          atol: float = float(ATOL_LOG_A), allow_conservative: bool = False,
          select: Callable[[SGM], bool] | None = None) -> Report:
    """Assert that ``fn(q, sigma, alpha)`` matches the certified ε_α on the golden rows.

    ``rtol`` is relative to ε_α, ``atol`` per term on log A_α (module docstring);
    ``select(sgm)`` restricts the rows (``sgm.q``, ``sgm.sigma``, ``sgm.alpha`` are
    exact Fractions; e.g. ``lambda p: p.integer_order``). Raises AssertionError on
    any failing row, ValueError for a negative tolerance or an empty selection.
    """
    if not (rtol >= 0 and atol >= 0):
        raise ValueError(f"rtol={rtol} and atol={atol} must be non-negative numbers")
    rows = [(sgm, eps) for sgm, eps in golden_rows() if select is None or select(sgm)]
    if not rows:
        raise ValueError("select() kept no golden rows: nothing would be checked")
    name = getattr(fn, "__name__", None) or repr(fn)
    r, a = Fraction(rtol), Fraction(atol)
    points = []
    for sgm, eps in rows:
        value, error = call_peer(fn, sgm)
        points.append(Point(name, sgm, value, error, eps, classify(value, eps, sgm.alpha, r, a)))
    failures = tuple(p for p in points if _fails(p, allow_conservative))
    report = Report(
        name=name,
        checked=len(points),
        counts=dict(Counter(p.classification for p in points)),
        failures=failures,
        max_relative_error=max((p.severity for p in points if p.relative_error is not None), default=0.0),
    )
    if failures:
        worst = sorted(failures, key=lambda p: (p.classification != "unsafe", -p.severity))[:_SHOW]
        kinds = Counter(p.classification for p in failures)
        raise AssertionError(
            f"{name} disagrees with rdp_verify's certified epsilon at {len(failures)} of {len(points)} golden rows "
            f"(rtol={rtol:g}, atol={atol:g}, allow_conservative={allow_conservative}): "
            + ", ".join(f"{n} {c}" for c, n in sorted(kinds.items()))
            + "\n" + "\n".join(f"  {p.classification}: {p.describe()}" for p in worst)
            + ("\n  ..." if len(failures) > _SHOW else "")
        )
    return report


def golden_dp_rows() -> tuple[Target, ...]:
    """The packaged golden (ε, δ) rows: each run at δ with its proven ε bracket."""
    return tuple(default_targets())


def check_dp(fn: Callable[[float, float, int, float], float], *, rtol: float = 0.0,
             allow_conservative: bool = False, select: Callable[[Target], bool] | None = None,
             neighbours: str = "add-remove") -> DpReport:
    """Assert that ``fn(q, sigma, steps, delta)`` (a run's ε) agrees with the golden (ε, δ) brackets.

    Each packaged row (:mod:`rdp_verify.reference.golden_dp`) of Poisson sampling with ``neighbours``
    (``add-remove``, or ``replace-one``: dp_accounting's ``REPLACE_ONE``) gives a run of ``steps``
    Poisson-subsampled Gaussian steps and a proven bracket [lo, hi] ∋ ε(δ); ``fn`` receives the
    doubles nearest to q, σ, δ. A value is ``unsafe`` below lo (the claim (x, δ)-DP is false:
    always a failure), ``failed`` if inf, NaN or it raised (always a failure), ``conservative``
    above hi·(1 + rtol) (a failure unless ``allow_conservative``), else ``exact``. ``select(target)``
    restricts the rows (``target.phase.q``, ``.sigma``, ``.steps`` and ``target.delta`` are exact).
    Raises AssertionError listing the worst failing rows; returns a :class:`DpReport` otherwise.
    """
    if not rtol >= 0:
        raise ValueError(f"rtol={rtol} must be a non-negative number")
    rows = [t for t in golden_dp_rows() if t.phase.sampler == "poisson" and t.phase.neighbours == neighbours
            and (select is None or select(t))]
    if not rows:
        raise ValueError("select() kept no golden (epsilon, delta) rows: nothing would be checked")
    name = getattr(fn, "__name__", None) or repr(fn)
    points = []
    for t in rows:
        try:
            value, error = peer_number(fn(float(t.phase.q), float(t.phase.sigma), t.phase.steps, float(t.delta))), None
        except Exception as exc:  # a raise is a finding, reported with the row
            value, error = None, f"{type(exc).__name__}: {exc}"
        slack = float(t.upper * Fraction(rtol)) if rtol else None
        points.append(DpPoint(name, t, value, error, slack, None, classify_dp(value, t.lower, t.upper, slack)))
    failures = tuple(p for p in points if p.classification in ("unsafe", "failed")
                     or (p.classification == "conservative" and not allow_conservative))
    report = DpReport(name, len(points), dict(Counter(p.classification for p in points)), failures,
                      max((abs(p.relative_error) for p in points if p.relative_error is not None), default=0.0))
    if failures:
        worst = sorted(failures, key=lambda p: (p.classification != "unsafe", -abs(p.relative_error or math.inf)))
        kinds = Counter(p.classification for p in failures)
        raise AssertionError(
            f"{name} disagrees with rdp_verify's proven epsilon(delta) at {len(failures)} of {len(points)} golden rows "
            f"(rtol={rtol:g}, allow_conservative={allow_conservative}): "
            + ", ".join(f"{n} {c}" for c, n in sorted(kinds.items()))
            + "\n" + "\n".join(f"  {p.classification}: {p.describe()}" for p in worst[:_SHOW])
            + ("\n  ..." if len(failures) > _SHOW else ""))
    return report
