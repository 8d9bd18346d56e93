"""Drawing a run's trade-off band: f_low ≤ f ≤ f_up on linear axes, and TPR = 1 − f against FPR on log-log axes
(the low-FPR region, where membership attacks are judged), with the Gaussian-DP curves of the μ the curve needs at α ≥ 1e-10 and of the
no-amplification μ for contrast and, optionally, an attack's confidence boxes.

Every plotted envelope point is a proven value (:class:`rdp_verify.tradeoff.envelope.Envelopes`) converted to
double precision for drawing; the certificate holds the exact numbers.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from flint import ctx

from ..foundations.figures import new_figure, run_label, save_figure
from ..foundations.results import to_arb
from .curve import TradeOff
from .envelope import gaussian_tradeoff

__all__ = ["draw", "ALPHAS"]

# α for the drawing: 10^−8 … 1 on a log ladder (four per decade) and a linear ladder
ALPHAS = sorted({Fraction(m, 10) / 10**e for e in range(1, 9) for m in (10, 18, 32, 56)}
                | {Fraction(k, 40) for k in range(1, 40)})


def _gdp(mu: Fraction, alphas: Sequence[Fraction]) -> np.ndarray:
    with ctx.workprec(64):
        m = to_arb(mu)
        return np.array([float(gaussian_tradeoff(m, to_arb(a)).mid()) for a in alphas])


def draw(trade: TradeOff, path: str | os.PathLike, boxes: Sequence[dict[str, Any]] = ()) -> Path:
    """Write the figure to ``path`` (.png, .svg or .pdf); ``boxes``: an audit's confidence boxes to mark."""
    alphas = [Fraction(0), *ALPHAS, Fraction(1)]
    bounds = [trade.f(a) for a in alphas]
    x = np.array([float(a) for a in alphas])
    low = np.array([float(lo) for lo, _ in bounds])
    up = np.array([float(u) for _, u in bounds])
    mu_grid, mu_hi = trade.mu_grid_lower(), trade.mu_upper()
    inner = alphas[1:-1]
    fig = new_figure(figsize=(11, 4.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.fill_between(x, low, up, color="tab:blue", alpha=0.35, label="proven band f_low ≤ f ≤ f_up")
    left.plot(x, low, color="tab:blue", lw=1.2, label="f_low: no attack goes below")
    left.plot(x, 1 - x, color="grey", lw=0.8, ls=":", label="β = 1 − α (perfect privacy)")
    tpr_lo, tpr_hi = 1 - up[1:-1], 1 - low[1:-1]
    xi = x[1:-1]
    right.fill_between(xi, np.maximum(tpr_lo, 1e-12), tpr_hi, color="tab:blue", alpha=0.35,
                       label="proven band of 1 − f (the largest TPR allowed)")
    right.plot(xi, tpr_hi, color="tab:blue", lw=1.2, label="TPR_up = 1 − f_low: no attack goes above")
    right.plot(xi, xi, color="grey", lw=0.8, ls=":", label="TPR = FPR (perfect privacy)")
    for mu, style, what in ((mu_grid, "--", "needed at α ≥ 1e-10"), (mu_hi, "-.", "no amplification")):
        if mu is not None and mu > 0:  # no μ upper end for a run with non-Gaussian leaves
            g = _gdp(mu, inner)
            label = f"G_μ, μ = {float(mu):.4g} ({what})"
            left.plot(xi, g, color="tab:red", lw=1, ls=style, label=label)
            right.plot(xi, np.maximum(1 - g, 1e-12), color="tab:red", lw=1, ls=style, label=label)
    for i, box in enumerate(boxes):
        fpr, fnr = float(box["fpr_upper"]), float(box["fnr_upper"])
        label = "attack: corners (FPR_U, FNR_U) of confidence boxes" if i == 0 else None
        left.plot([fpr], [fnr], "s", color="black", ms=3, label=label)
        right.plot([fpr], [1 - fnr], "s", color="black", ms=3, label=label)
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    left.set_xlabel("α: type-I error (false-positive rate)")
    left.set_ylabel("β: type-II error (false-negative rate)")
    # an event tree's other mechanisms (leaves) beside its DP-SGD phases, by name and uses
    run = "; ".join(([run_label(trade.phases)] if trade.phases else [])
                    + [f"{count} × {type(leaf).__name__}" for leaf, count in trade.leaves])
    left.set_title(f"Trade-off function of the run ({run})", fontsize=10)
    left.legend(fontsize=7.5, loc="upper right")
    left.grid(True, alpha=0.3)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlim(float(inner[0]), 1)
    right.set_xlabel("FPR")
    right.set_ylabel("TPR = 1 − f(FPR)")
    right.set_title("The low-FPR region, log-log", fontsize=10)
    right.legend(fontsize=7.5, loc="lower right")
    right.grid(True, which="major", alpha=0.3)
    return save_figure(fig, path)
