"""Drawing a run's privacy curve: the proven band δ_lower(ε) ≤ δ(ε) ≤ δ_upper(ε) and the RDP curve for contrast.

The band is read off the composed discrete PLDs (:mod:`rdp_verify.pld.compose`) in double
precision, for drawing only (the proven numbers are in the certificate), or off the closed form and
the per-epoch bounds (:mod:`rdp_verify.curves.per_epoch`, at fewer points: each is a search); the RDP
curve is the best ε over all real orders under Balle et al.'s conversion at a ladder of δ, each a
proven upper bound (:func:`rdp_verify.accounting.optimal_order.optimal_epsilon`), drawn for Poisson
add/remove runs only (the RDP accountant is the Sampled Gaussian Mechanism's).
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..accounting.optimal_order import optimal_epsilon
from ..foundations.figures import new_figure, run_label, save_figure
from ..pld.compose import PLD
from .accountant import Curves
from .gaussian import GaussianCurve
from .per_epoch import PerEpochBounds

__all__ = ["curve_values", "rdp_points", "draw"]


def _float_masses(p: PLD) -> tuple[np.ndarray, np.ndarray, float]:
    scale = 2.0 ** -p.bits
    masses = np.array([float(int(c)) for c in p.coeffs.coeffs()]) * scale
    shift = sum(c * float(np.log(float(anchor))) for anchor, c in p.shift)  # Σ c·log A
    losses = shift + (p.offset + np.arange(len(masses))) * float(p.h)
    return losses, masses, float(p.inf) * scale


Drawn = Curves | GaussianCurve | PerEpochBounds


def curve_values(curves: Drawn, epsilons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(δ_lower, δ_upper) at each ε, maximised over directions, in double precision (for drawing)."""
    if isinstance(curves, PerEpochBounds):  # two proofs: the closed form above, the best test at each ε below
        fresh = PerEpochBounds(curves.phases)  # not the tests a certificate froze for its own δ
        pairs = [fresh.delta_bounds(Fraction(float(e))) for e in epsilons]
        return np.array([float(lo) for lo, _ in pairs]), np.array([float(up) for _, up in pairs])
    if isinstance(curves, GaussianCurve):  # the closed form: one curve
        values = np.array([float(curves.delta_bounds(Fraction(float(e)))[1]) for e in epsilons])
        return values, values
    out = {}
    for bound in ("lower", "upper"):
        best = np.zeros(len(epsilons))
        for direction in ("remove", "add"):
            losses, masses, inf = _float_masses(curves.pld(direction, bound))
            values = np.array([(masses * np.clip(-np.expm1(e - losses), 0, None)).sum() + inf for e in epsilons])
            best = np.maximum(best, values)
        out[bound] = best
    return out["lower"], out["upper"]


def rdp_points(curves: Drawn, deltas: list[Fraction]) -> list[tuple[float, float]]:
    """(ε, δ) from RDP accounting: the proven upper end of the best ε over all orders (Balle et al. 2020)."""
    return [(float(optimal_epsilon(curves.phases, d, "balle2020").epsilon.upper), float(d)) for d in deltas]


def _epsilon_range(curves: Drawn, floor: float, start: float) -> float:
    """The first ε of a doubling ladder from ``start`` at which δ_upper is below ``floor`` (at most 1e12)."""
    eps = start
    while eps < 1e12 and curve_values(curves, np.array([eps]))[1][0] >= floor:
        eps *= 2
    return eps


def _width_scale(ax: Any, width: np.ndarray) -> None:
    """The width panel's y axis, with at least three tick labels whatever the range: log over three decades or more
    (a label per decade), log labelled at 1, 2 and 5 times each power of ten over one to three decades, linear below
    one (a shuffled run's width stays in [0.83, 1]: a log axis would carry one label)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    positive = width[np.isfinite(width) & (width > 0)]
    decades = float(np.log10(positive.max() / positive.min())) if len(positive) else 0.0
    if decades < 1:
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6, min_n_ticks=3))
        return
    ax.set_yscale("log")
    if decades < 3:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def draw(curves: Drawn, path: str | os.PathLike,
         point: tuple[Fraction, Fraction, Fraction] | None = None, with_rdp: bool = True) -> Path:
    """Write the figure to ``path`` (.png, .svg or .pdf). ``point``: (δ, ε_lower, ε_upper) to mark."""
    gaussian = isinstance(curves, (GaussianCurve, PerEpochBounds))
    with_rdp = with_rdp and all(p.default for p in curves.phases)
    # down to where the truncation allowance (mass moved to +∞) would dominate δ_upper
    floor = 1e-40 if gaussian else max(float(curves.settings.truncation) * 10, 1e-300)
    start = float(point[2]) / 4 if point and point[2] > 0 else 1e-3
    points = 60 if isinstance(curves, PerEpochBounds) else 400
    eps = np.linspace(0.0, _epsilon_range(curves, floor, start), points)
    lower, upper = curve_values(curves, eps)
    deltas = [Fraction(1, 10**k) for k in range(1, 40) if 10.0 ** -k >= floor]
    fig = new_figure(figsize=(11, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.fill_between(eps, np.maximum(lower, floor), np.maximum(upper, floor), color="tab:blue", alpha=0.35,
                      label="proven band: δ_lower(ε) ≤ δ(ε) ≤ δ_upper(ε) (PLD)")
    left.plot(eps, np.maximum(upper, floor), color="tab:blue", lw=1.2)
    left.plot(eps, np.maximum(lower, floor), color="tab:blue", lw=0.8, ls=":")
    if with_rdp:
        pts = rdp_points(curves, deltas)
        left.plot([p[0] for p in pts], [p[1] for p in pts], "o--", color="tab:red", ms=3.5, lw=1.2,
                  label="RDP accounting (best order, Balle et al. 2020): an upper bound")
    if point:
        d, e_lo, e_hi = point
        left.errorbar([float((e_lo + e_hi) / 2)], [float(d)], xerr=[[float((e_hi - e_lo) / 2)]] * 2, fmt="s",
                      color="black", ms=4, label=f"certified ε at δ = {float(d):g}: [{float(e_lo):.6g}, {float(e_hi):.6g}]")
    left.set_yscale("log")
    left.set_ylim(floor, 1.5)
    left.set_xlabel("ε")
    left.set_ylabel("δ(ε)")
    run = run_label(curves.phases)
    left.set_title(f"Privacy curve of the run ({run})", fontsize=10)
    left.legend(fontsize=8, loc="upper right")
    left.grid(True, which="major", alpha=0.3)
    positive = upper > 0
    width = np.where(positive, (upper - lower) / np.where(positive, upper, 1), np.nan)
    right.plot(eps, width, color="tab:blue")
    _width_scale(right, width)
    right.set_xlabel("ε")
    right.set_ylabel("(δ_upper − δ_lower) / δ_upper")
    how = ("per-epoch bounds" if isinstance(curves, PerEpochBounds)
           else "closed form in Arb" if gaussian else f"grid step h = {float(curves.settings.grid_step):g}")
    right.set_title(f"Width of the proven band ({how})", fontsize=10)
    right.grid(True, which="major", alpha=0.3)
    return save_figure(fig, path)
