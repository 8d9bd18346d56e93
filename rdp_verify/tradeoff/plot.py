"""Drawing a run's trade-off band: f_low ≤ f ≤ f_up on linear axes, and TPR = 1 − f against FPR on log-log axes
(the low-FPR region, where membership attacks are judged), with the Gaussian-DP curves of the μ the curve needs at α ≥ 1e-10 and of the
no-amplification μ for contrast and, optionally, an attack: the corners (FPR_U, FNR_U) of its confidence boxes
(``audit --canaries``), or the curves a one-run audit refutes (``--method one-run | one-run-fdp``: G_μ for the
printed μ, f_{ε,δ} for the printed ε; without a run, these alone).

Boxes below the curve are consecutive thresholds, often a pixel apart: markers that would overlap in either
panel (within a marker's size, measured on the drawn axes) are grouped (:func:`overlapping`), each group is
labelled ×k beside its marker, and the legend counts every box and the groups, so that no box is lost in one dot.

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

__all__ = ["draw", "ALPHAS", "overlapping", "refuted_curve"]

# α for the drawing: 10^−8 … 1 on a log ladder (four per decade) and a linear ladder
ALPHAS = sorted({Fraction(m, 10) / 10**e for e in range(1, 9) for m in (10, 18, 32, 56)}
                | {Fraction(k, 40) for k in range(1, 40)})


def _gdp(mu: Fraction, alphas: Sequence[Fraction]) -> np.ndarray:
    with ctx.workprec(64):
        m = to_arb(mu)
        return np.array([float(gaussian_tradeoff(m, to_arb(a)).mid()) for a in alphas])


def refuted_curve(kind: str, value: Fraction, delta: Fraction | None, alphas: Sequence[Fraction]) -> np.ndarray:
    """β of a refuted trade-off function at ``alphas``: G_μ (``kind`` "gdp", μ = ``value``) or f_{ε,δ}
    (``kind`` "eps": max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)})."""
    if kind == "gdp":
        return _gdp(value, alphas)
    a = np.array([float(x) for x in alphas])
    e, d = float(value), float(delta or 0)
    return np.maximum(0.0, np.maximum(1 - d - np.exp(min(e, 700.0)) * a, np.exp(-e) * (1 - d - a)))


def overlapping(points: Sequence[tuple[float, float]], spans: Sequence[tuple[str, float, float]],
                size: float = 0.015) -> list[list[int]]:
    """Groups of the indices of ``points`` (FPR, FNR) whose markers overlap on some panel: ``spans`` gives each
    panel's axes as (scale, low, high) for x then y, twice (left panel, right panel, whose y is TPR = 1 − FNR);
    two markers overlap on a panel when they are within ``size`` of the axes' extent on both of its axes."""
    def coords(p: tuple[float, float]) -> list[float]:
        out = []
        for (scale, low, high), value in zip(spans, (p[0], p[1], p[0], 1 - p[1])):
            if scale == "log":
                value, low, high = (np.log10(max(v, 1e-300)) for v in (value, low, high))
            out.append((value - low) / (high - low) if high > low else 0.0)
        return out

    c = [coords(p) for p in points]
    parent = list(range(len(points)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(points)):
        for j in range(i):
            if any(abs(c[i][k] - c[j][k]) < size and abs(c[i][k + 1] - c[j][k + 1]) < size for k in (0, 2)):
                parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(points)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def draw(trade: TradeOff | None, path: str | os.PathLike, boxes: Sequence[dict[str, Any]] = (), *,
         strongest: dict[str, Any] | None = None, boxes_label: str = "confidence boxes", more: bool = False,
         refuted: Sequence[tuple[str, Fraction, Fraction | None]] = (), title: str | None = None) -> Path:
    """Write the figure to ``path`` (.png, .svg or .pdf). ``boxes``: confidence boxes to mark by their corners
    (FPR_U, FNR_U), counted in the legend as ``boxes_label`` (``more``: the list stops at the audit's limit, "at
    least"); ``strongest``: the box of the largest empirical ε, marked apart; ``refuted``: curves an attack
    refutes, ("gdp", μ, None) or ("eps", ε, δ). ``trade`` None: no run, only the refuted curves."""
    alphas = [Fraction(0), *ALPHAS, Fraction(1)]
    x = np.array([float(a) for a in alphas])
    inner = alphas[1:-1]
    xi = x[1:-1]
    fig = new_figure(figsize=(11, 4.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    if trade is not None:
        bounds = [trade.f(a) for a in alphas]
        low = np.array([float(lo) for lo, _ in bounds])
        up = np.array([float(u) for _, u in bounds])
        mu_grid, mu_hi = trade.mu_grid_lower(), trade.mu_upper()
        left.fill_between(x, low, up, color="tab:blue", alpha=0.35, label="proven band f_low ≤ f ≤ f_up")
        left.plot(x, low, color="tab:blue", lw=1.2, label="f_low: no attack goes below")
        tpr_lo, tpr_hi = 1 - up[1:-1], 1 - low[1:-1]
        right.fill_between(xi, np.maximum(tpr_lo, 1e-12), tpr_hi, color="tab:blue", alpha=0.35,
                           label="proven band of 1 − f (the largest TPR allowed)")
        right.plot(xi, tpr_hi, color="tab:blue", lw=1.2, label="TPR_up = 1 − f_low: no attack goes above")
        for mu, style, what in ((mu_grid, "--", "needed at α ≥ 1e-10"), (mu_hi, "-.", "no amplification")):
            if mu is not None and mu > 0:  # no μ upper end for a run with non-Gaussian leaves
                g = _gdp(mu, inner)
                label = f"G_μ, μ = {float(mu):.4g} ({what})"
                left.plot(xi, g, color="tab:red", lw=1, ls=style, label=label)
                right.plot(xi, np.maximum(1 - g, 1e-12), color="tab:red", lw=1, ls=style, label=label)
    left.plot(x, 1 - x, color="grey", lw=0.8, ls=":", label="β = 1 − α (perfect privacy)")
    right.plot(xi, xi, color="grey", lw=0.8, ls=":", label="TPR = FPR (perfect privacy)")
    for kind, value, delta in refuted:
        g = refuted_curve(kind, value, delta, inner)
        label = (f"G_μ, μ = {float(value):.6g}: refuted by the attack (not μ-GDP)" if kind == "gdp" else
                 f"f_ε,δ, ε = {float(value):.6g}, δ = {float(delta or 0):.3g}: refuted (not (ε, δ)-DP)")
        color, style = ("tab:green", (0, (5, 2))) if kind == "gdp" else ("tab:purple", (0, (1, 1.5)))
        left.plot(xi, g, color=color, lw=1.3, ls=style, label=label)
        right.plot(xi, np.maximum(1 - g, 1e-12), color=color, lw=1.3, ls=style, label=label)
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlim(float(inner[0]), 1)
    corners = [(float(b["fpr_upper"]), float(b["fnr_upper"])) for b in boxes]
    marked = corners + ([] if strongest is None else [(float(strongest["fpr_upper"]), float(strongest["fnr_upper"]))])
    if marked:  # the right panel's y-axis fixed to hold every marker, so that overlaps are judged as drawn
        low, high = right.get_ylim()
        right.set_ylim(min(low, *(max(1 - f, 1e-12) / 1.5 for _, f in marked)), max(high, 1.0))
    if corners:
        spans = [("linear", 0.0, 1.0), ("linear", 0.0, 1.0), ("log", *right.get_xlim()), ("log", *right.get_ylim())]
        groups = overlapping(corners, spans)
        n = len(corners)
        label = (f"{'at least ' if more else ''}{n} {boxes_label}:\ncorner (FPR_U, FNR_U) of each"
                 + (f"; {n} in {len(groups)} marker(s), ×k: k boxes" if len(groups) < n else ""))
        for i, group in enumerate(groups):
            fpr, fnr = corners[group[0]]
            for ax, y in ((left, fnr), (right, max(1 - fnr, 1e-12))):
                ax.plot([fpr], [y], "s", color="black", ms=3.5, label=label if i == 0 else None)
                if len(group) > 1:
                    ax.annotate(f"×{len(group)}", (fpr, y), xytext=(4, 3), textcoords="offset points", fontsize=7)
    if strongest is not None:
        fpr, fnr = float(strongest["fpr_upper"]), float(strongest["fnr_upper"])
        where = strongest.get("rank")
        label = "largest empirical ε" + (f" (rank {where})" if where is not None else "") + ": its box's corner"
        left.plot([fpr], [fnr], "*", color="tab:orange", ms=9, mec="black", mew=0.5, label=label)
        right.plot([fpr], [max(1 - fnr, 1e-12)], "*", color="tab:orange", ms=9, mec="black", mew=0.5, label=label)
    left.set_xlabel("α: type-I error (false-positive rate)")
    left.set_ylabel("β: type-II error (false-negative rate)")
    if title is None:
        if trade is None:
            title = "Trade-off functions the attack refutes (no run given)"
        else:  # an event tree's other mechanisms (leaves) beside its DP-SGD phases, by name and uses
            run = "; ".join(([run_label(trade.phases)] if trade.phases else [])
                            + [f"{count} × {type(leaf).__name__}" for leaf, count in trade.leaves])
            title = f"Trade-off function of the run ({run})"
    left.set_title(title, fontsize=10)
    left.legend(fontsize=7.5, loc="upper right")
    left.grid(True, alpha=0.3)
    right.set_xlabel("FPR")
    right.set_ylabel("TPR = 1 − f(FPR)")
    right.set_title("The low-FPR region, log-log", fontsize=10)
    right.legend(fontsize=7.5, loc="lower right")
    right.grid(True, which="major", alpha=0.3)
    return save_figure(fig, path)
