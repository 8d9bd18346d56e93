"""Compare float64 RDP accountants (peers) against certified intervals.

For each grid point (q, σ, α) the peer's one-step ε_α (see :mod:`rdp_verify.reference.peers`)
is set against our proven interval [lo, hi] ∋ ε_α = log max(A_α, B_α)/(α − 1)
(Theorem 4 of Mironov, Talwar, Zhang 2019), from
:func:`rdp_verify.methods.rigorous.epsilon_bounds` at :data:`DPS` digits. The peer sees
q, σ, α rounded to the nearest double (relative change < 1.2e-16, far below the
tolerance); the interval is for the exact decimal inputs.

Classification of the peer's value x (exact rational comparison of the double x):

* ``exact``        lo − τ ≤ x ≤ hi + τ,
* ``conservative`` x > hi + τ: over-reports ε_α (a true but loose bound),
* ``unsafe``       x < lo − τ, or x < lo/2 whatever τ (so 0 and every negative
  value, since ε_α > 0): under-reports ε_α, so a privacy claim built on it would be
  false,
* ``non-finite``   NaN, ±inf, or the peer raised,

with the float tolerance

    τ = rtol·max(abs(lo), abs(hi)) + atol·(α + 1)/(α − 1),   rtol = 1e-9, atol = 1e-13.

The second term allows an absolute error of atol·(α + 1) in log A_α = (α − 1)ε_α,
the quantity a double-precision accountant actually sums: 1e-13 (about 450 ulps
of 1.0) for each of the α + 1 terms of the Section 3.3 Case I sum. A_α ≈ 1 + small,
so even a correct double computation of log A_α errs by ulps of 1.0, a large
relative error when ε_α is tiny: dp_accounting's exact integer-order sum errs by
up to 2e-12 in log A_α on the default grid (α = 2048, allowance 2e-10), and
Opacus's series, cut off once a term falls below e^−30, by up to 1.7e-13 at
α ≤ 1.5 (allowance ≥ 2e-13). The consequence: where ε_α is below about
atol·(α + 1)/(α − 1) (e.g. q = 1e-4, σ = 100, α = 1.01: ε_α = 5e-13), a value
within τ of ε_α counts as exact although its relative error can be large, up to
a factor of two below: the absolute allowance forgives rounding, not a value less
than half the true one (nor 0 or a negative value, which are always unsafe). The
defects this module exists to find are orders of magnitude beyond τ.

The CLI (``rdp-verify compare``) prints a summary table, and optionally writes the
points as JSON (``--json``) and a plot of the relative error (``--plot``).
"""

from __future__ import annotations

import itertools
import math
import numbers
import os
from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..foundations.decimals import decimal_text
from ..foundations.figures import new_figure, save_figure
from ..foundations.inputs import SGM, fraction_text
from ..foundations.parallel import Pool, progress_map
from ..foundations.results import Bounded
from ..methods.rigorous import epsilon_bounds
from .grid import Grid
from .peers import load

__all__ = [
    "CLASSES", "RTOL", "ATOL_LOG_A", "DPS", "DEFAULT_GRID", "Point",
    "tolerance", "classify", "call_peer", "compare", "summary", "plot",
]

CLASSES = ("exact", "conservative", "unsafe", "non-finite")
RTOL = Fraction(1, 10**9)
ATOL_LOG_A = Fraction(1, 10**13)  # per term of the α + 1 term sum for log A_α
DPS = 15  # digits of our interval: its width is ~1e-15 relative, far inside τ
_DIGITS = 17  # printed digits of the interval ends (outward-rounded)


# The default grid is regular, with no value placed at a known defect (q = 0.4 and
# σ = 12 of the Opacus report are not on it): q over decades up to 0.5; σ on a
# 1-2.5-5 ladder from 0.5 to 100; α with fine fractional steps near 1, every 0.5 from
# 2 to 100, and powers of 2 and 1.5 times powers of 2 from 128 to 2048.
DEFAULT_GRID = Grid.parse(
    q=["1e-4", "1e-3", "0.01", "0.1", "0.5"],
    sigma=["0.5", "1", "2.5", "5", "10", "25", "50", "100"],
    alpha=["1.01", "1.1", "1.2", "1.3", "1.4", "1.5"]
    + [fraction_text(Fraction(k, 2)) for k in range(4, 201)]
    + [str(m << k) for k in range(6, 11) for m in (2, 3) if m << k <= 2048],
)


@dataclass(frozen=True)
class Point:
    """One peer at one grid point: its value (or error), our interval, the class."""

    peer: str
    sgm: SGM
    value: float | None  # None when the peer raised
    error: str | None  # the exception, as "Type: message"
    epsilon: Bounded
    classification: str

    @property
    def relative_error(self) -> float | None:
        """(x − ε)/ε with ε the midpoint of our interval; None when x is not finite."""
        if self.value is None or not math.isfinite(self.value):
            return None
        return float((Fraction(self.value) - self.epsilon.value) / self.epsilon.value)

    @property
    def severity(self) -> float:
        """abs(relative error), +inf when the value is not finite: for ranking the worst points."""
        return math.inf if self.relative_error is None else abs(self.relative_error)

    def describe(self) -> str:
        """One line: inputs, the peer's value (or error), our interval, relative error."""
        got = self.error if self.value is None else repr(self.value)
        rel = "" if self.relative_error is None else f", relative error {self.relative_error:+.3g}"
        return (f"q={fraction_text(self.sgm.q)} sigma={fraction_text(self.sgm.sigma)} "
                f"alpha={fraction_text(self.sgm.alpha)}: {self.peer} {got}, certified "
                f"[{decimal_text(self.epsilon.lower, 10, 'down')}, {decimal_text(self.epsilon.upper, 10, 'up')}]{rel}")

    def to_json(self) -> dict[str, Any]:
        return {
            "peer": self.peer,
            **self.sgm.texts(),
            "peer_value": None if self.value is None else repr(self.value),
            "peer_error": self.error,
            "epsilon_lower": decimal_text(self.epsilon.lower, _DIGITS, "down"),
            "epsilon_upper": decimal_text(self.epsilon.upper, _DIGITS, "up"),
            "relative_error": self.relative_error,
            "classification": self.classification,
        }


def tolerance(epsilon: Bounded, alpha: Fraction, rtol: Fraction = RTOL, atol: Fraction = ATOL_LOG_A) -> Fraction:
    """τ = rtol·max(abs(lo), abs(hi)) + atol·(α + 1)/(α − 1): atol·(α + 1) bounds the error in log A_α = (α − 1)ε_α."""
    return rtol * max(abs(epsilon.lower), abs(epsilon.upper)) + atol * (alpha + 1) / (alpha - 1)


def classify(value: float | None, epsilon: Bounded, alpha: Fraction,
             rtol: Fraction = RTOL, atol: Fraction = ATOL_LOG_A) -> str:
    """One of :data:`CLASSES` for a peer's value against our interval (module docstring)."""
    if value is None or not math.isfinite(value):
        return "non-finite"
    x, tau = Fraction(value), tolerance(epsilon, alpha, rtol, atol)
    if x < epsilon.lower - tau or x < epsilon.lower / 2:  # ε_α > 0: τ never excuses 0 or a sign error
        return "unsafe"
    if x > epsilon.upper + tau:
        return "conservative"
    return "exact"


def peer_number(value: Any) -> float:
    """A peer's answer as a float, if it is a real number (int, float, NumPy's scalars); a string such as
    "0.1", a bool, None or an array is a TypeError (graded ``failed``, never read as a number)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"returned {type(value).__name__} {value!r:.40}, not a real number")
    return float(value)


def call_peer(fn: Callable[[float, float, float], float], sgm: SGM) -> tuple[float | None, str | None]:
    """fn at the doubles nearest to q, σ, α: (value, None), or (None, error text) if it raised or returned
    something other than a real number (:func:`peer_number`)."""
    try:
        return peer_number(fn(float(sgm.q), float(sgm.sigma), float(sgm.alpha))), None
    except Exception as exc:  # any failure of the peer is a finding, not a crash
        return None, f"{type(exc).__name__}: {exc}"


def _compare_point(args: tuple[SGM, tuple[str, ...]]) -> list[Point]:
    sgm, names = args
    eps = epsilon_bounds(sgm, DPS)
    out = []
    for name in names:
        value, error = call_peer(load(name), sgm)
        out.append(Point(name, sgm, value, error, eps, classify(value, eps, sgm.alpha)))
    return out


def compare(names: Sequence[str], grid: Grid, jobs: int | Pool = 1) -> list[Point]:
    """Every peer in ``names`` at every grid point (our interval computed once per point), on ``jobs``
    processes or a :class:`~rdp_verify.foundations.parallel.Pool`."""
    items = [(sgm, tuple(names)) for sgm in grid.points()]
    return [p for group in progress_map(_compare_point, items, jobs, "comparing") for p in group]


# -- the summary table ---------------------------------------------------------------

def _list_text(values: Sequence[Fraction]) -> str:
    """Sorted values, with arithmetic runs of 4 or more written 'a, b, …, z'."""
    vals = sorted(set(values))
    parts, i = [], 0
    while i < len(vals):
        j = i + 1
        if j < len(vals):
            step = vals[j] - vals[i]
            while j + 1 < len(vals) and vals[j + 1] - vals[j] == step:
                j += 1
        if j - i >= 3:
            parts.append(f"{fraction_text(vals[i])}, {fraction_text(vals[i + 1])}, …, {fraction_text(vals[j])}")
            i = j + 1
        else:
            parts.append(fraction_text(vals[i]))
            i += 1
    return ", ".join(parts)


def _pairs_text(pairs: Sequence[tuple[Fraction, Fraction]]) -> str:
    return "{" + ", ".join(f"({fraction_text(q)}, {fraction_text(s)})" for q, s in sorted(pairs)) + "}"


def _where(points: Sequence[Point], grid: Grid, groups: int) -> list[str]:
    """Lines 'alpha ∈ {...} at (q, σ) ...', merging (q, σ) pairs with the same orders.

    The ``groups`` largest groups are shown; the JSON report lists every point.
    """
    orders: dict[tuple[Fraction, Fraction], list[Fraction]] = defaultdict(list)
    for p in points:
        orders[p.sgm.q, p.sgm.sigma].append(p.sgm.alpha)
    by_set: dict[tuple[Fraction, ...], list[tuple[Fraction, Fraction]]] = defaultdict(list)
    for pair, alphas in orders.items():
        by_set[tuple(sorted(alphas))].append(pair)
    everywhere = set(itertools.product(grid.q, grid.sigma))
    lines = []
    ranked = sorted(by_set.items(), key=lambda kv: (-len(kv[1]) * len(kv[0]), kv[1]))
    for alphas, pairs in ranked[:groups]:
        qs, ss = sorted({q for q, _ in pairs}), sorted({s for _, s in pairs})
        if set(pairs) == everywhere:
            at = "every (q, sigma) of the grid"
        elif len(pairs) == len(qs) * len(ss):  # the pairs form a product
            at = f"q ∈ {{{_list_text(qs)}}} × sigma ∈ {{{_list_text(ss)}}}"
        elif 2 * len(pairs) > len(everywhere):
            at = f"every (q, sigma) but {_pairs_text(sorted(everywhere - set(pairs)))}"
        else:
            at = f"(q, sigma) ∈ {_pairs_text(pairs)}"
        lines.append(f"alpha ∈ {{{_list_text(alphas)}}} at {at}")
    if len(ranked) > groups:
        rest = sum(len(a) * len(p) for a, p in ranked[groups:])
        lines.append(f"… and {rest} more points in {len(ranked) - groups} further (q, sigma) groups (--json lists all)")
    return lines


def summary(points: Sequence[Point], grid: Grid, groups: int = 6, worst: int = 3) -> str:
    """Counts per peer and class, where each non-exact class occurs, and its worst points."""
    peers = list(dict.fromkeys(p.peer for p in points))
    counts = Counter((p.peer, p.classification) for p in points)
    width = max(len(n) for n in peers + ["peer"])
    lines = [
        f"grid: {grid.describe()}",
        f"tolerance: tau = {float(RTOL):g}*|epsilon| + {float(ATOL_LOG_A):g}*(alpha + 1)/(alpha - 1)",
        "",
        f"{'peer':<{width}}  " + "  ".join(f"{c:>12}" for c in CLASSES),
    ]
    lines += [f"{n:<{width}}  " + "  ".join(f"{counts[n, c]:>12}" for c in CLASSES) for n in peers]
    for name in peers:
        for cls in CLASSES[1:]:
            found = [p for p in points if p.peer == name and p.classification == cls]
            if not found:
                continue
            lines += ["", f"{name}: {cls} at {len(found)} point{'s' * (len(found) > 1)}"]
            lines += [f"  {line}" for line in _where(found, grid, groups)]
            ranked = sorted(found, key=lambda p: p.severity, reverse=True)[:worst]
            lines += [f"  {'worst' if i == 0 else '     '}: {p.describe()}" for i, p in enumerate(ranked)]
    return "\n".join(lines) + "\n"


# -- the plot ----------------------------------------------------------------------------

_STYLE = {"exact": ("tab:green", "."), "conservative": ("tab:orange", "^"),
          "unsafe": ("tab:red", "v"), "non-finite": ("tab:purple", "x")}


def plot(points: Sequence[Point], path: str | os.PathLike) -> None:
    """Signed relative error (peer − ε)/ε against α − 1, one panel per peer; PNG/SVG/PDF by suffix.

    Non-finite values are drawn on the top edge of the panel.
    """
    peers = list(dict.fromkeys(p.peer for p in points))
    finite = [abs(p.relative_error) for p in points if p.relative_error is not None]
    top = 10 ** math.ceil(math.log10(max(finite + [1.0]) * 10))
    fig = new_figure(figsize=(9, 2.8 * len(peers) + 0.6))
    axes = fig.subplots(len(peers), 1, sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], peers):
        mine = [p for p in points if p.peer == name]
        for cls in CLASSES:
            sel = [p for p in mine if p.classification == cls]
            if not sel:
                continue
            x = [float(p.sgm.alpha - 1) for p in sel]
            y = [top if p.relative_error is None else p.relative_error for p in sel]
            color, marker = _STYLE[cls]
            ax.scatter(x, y, s=9, c=color, marker=marker, label=f"{cls} ({len(sel)})", linewidths=0.8)
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=float(RTOL))
        ax.set_ylim(-top * 1.5, top * 1.5)
        ax.axhline(0, color="0.6", lw=0.5)
        ax.set_ylabel("(peer − ε)/ε")
        ax.set_title(f"{name}: signed relative error over the grid (non-finite drawn at the top)", fontsize=9)
        ax.legend(fontsize=7, loc="lower left", markerscale=1.5)
        ax.grid(True, which="major", lw=0.3)
    axes[-1, 0].set_xlabel("α − 1")
    fig.text(0.01, 0.005, f"exact: within τ = {float(RTOL):g}·ε + {float(ATOL_LOG_A):g}·(α + 1)/(α − 1) of the certified "
             "interval; where ε is tiny the absolute part admits large relative errors", fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    save_figure(fig, path)
