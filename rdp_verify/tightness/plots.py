"""Drawing Figure 1 with matplotlib (no display needed).

:func:`draw` turns the dict of :func:`rdp_verify.tightness.figure1.figure1_data` into a
two-panel :class:`matplotlib.figure.Figure`, built without pyplot (so no
global backend is chosen or changed; PNG is rendered by the Agg canvas);
:func:`save` writes it as PNG and SVG, each atomically (a temporary file in
the target directory, then a rename). Plotted positions
are the midpoints of the certified brackets (relative width ≤ 1e−4, far below
what the eye can see); the numbers themselves are in the JSON.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..foundations.figures import new_figure, save_figure

__all__ = ["draw", "save"]

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red")
_LEFT_STYLES = (  # (key in the point, label, line style, width, opacity)
    ("minimum", "min of (4), (5): Theorem 11 applies below", "-", 7.0, 0.25),
    ("condition_4", "condition (4)", (0, (2, 2)), 1.4, 1.0),
    ("condition_5", "condition (5)", "-.", 1.4, 1.0),
    ("exact", "exact: ε_α ≤ 2q²α/σ² below", "-", 2.4, 1.0),
)


def _mid(bracket: dict[str, Any]) -> float:
    lo, hi = bracket["alpha_lo"], bracket["alpha_hi"]
    if lo is None or hi is None:
        return float("nan")  # not drawn: the set is empty or reaches the end of the range
    return float((Fraction(lo) + Fraction(hi)) / 2)


def _left(ax: Any, left: list[dict[str, Any]]) -> None:
    sigmas = list(dict.fromkeys(p["sigma"] for p in left))
    q_range = sorted({p["q"] for p in left}, key=Fraction)
    for colour, sigma in zip(_COLOURS, sigmas):
        points = [p for p in left if p["sigma"] == sigma]
        qs = [float(Fraction(p["q"])) for p in points]
        for key, _, style, width, opacity in _LEFT_STYLES:
            ax.plot(qs, [_mid(p[key]) for p in points], linestyle=style, linewidth=width, color=colour,
                    alpha=opacity, marker="o" if key == "exact" else None, markersize=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sampling rate q")
    ax.set_ylabel("largest order α")
    ax.set_title("Largest α allowed: Theorem 11's conditions vs exact\nσ = " + " and ".join(sigmas) + f", q from {q_range[0]} to {q_range[-1]}")
    handles = [Line2D([], [], color="black", linestyle=s, linewidth=w, alpha=o, label=label) for _, label, s, w, o in _LEFT_STYLES]
    handles += [Line2D([], [], color=c, linewidth=4, label=f"σ = {s}") for c, s in zip(_COLOURS, sigmas)]
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    ax.grid(True, which="major", alpha=0.3)


def _right(ax: Any, right: list[dict[str, Any]]) -> None:
    labels = []
    for colour, curve in zip(_COLOURS, right):
        pts = curve["points"]
        alphas = [float(Fraction(p["alpha"])) for p in pts]
        eps = [float((Fraction(p["epsilon"]["lower"]) + Fraction(p["epsilon"]["upper"])) / 2) for p in pts]
        ax.plot(alphas, eps, color=colour, marker="o", markersize=2.5, linewidth=1.8)
        # 2q²α/σ² is linear in α: solid up to the last α allowed by Theorem 11, dashed beyond.
        slope = 2 * Fraction(curve["q"]) ** 2 / Fraction(curve["sigma"]) ** 2
        a0, a1 = Fraction(pts[0]["alpha"]), Fraction(pts[-1]["alpha"])
        end = curve["theorem11_largest_alpha"]["alpha_lo"]
        a_end = min(max(Fraction(end), a0), a1) if end is not None else a0
        ax.plot([float(a0), float(a_end)], [float(slope * a0), float(slope * a_end)], color=colour, linewidth=1.3)
        ax.plot([float(a_end), float(a1)], [float(slope * a_end), float(slope * a1)], color=colour, linewidth=1.3,
                linestyle=(0, (4, 3)))
        crossing = _mid(curve["exact_largest_alpha"])
        ax.plot([crossing], [float(slope) * crossing], marker="x", color=colour, markersize=9, markeredgewidth=2)
        labels.append(f"q = {curve['q']}, σ = {curve['sigma']}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("order α")
    ax.set_ylabel("ε_α (RDP of one SGM step)")
    ax.set_title("RDP of SG(q, σ): exact vs Theorem 11's 2q²α/σ²\n" + " and ".join(labels))
    handles = [
        Line2D([], [], color="black", marker="o", markersize=3, linewidth=1.8, label="exact ε_α (proven)"),
        Line2D([], [], color="black", linewidth=1.3, label="2q²α/σ² where Theorem 11's conditions hold"),
        Line2D([], [], color="black", linewidth=1.3, linestyle=(0, (4, 3)), label="2q²α/σ² where they fail"),
        Line2D([], [], color="black", marker="x", markersize=8, markeredgewidth=2, linestyle="none",
               label="largest α with exact ε_α ≤ 2q²α/σ²"),
    ]
    handles += [Line2D([], [], color=c, linewidth=4, label=label) for c, label in zip(_COLOURS, labels)]
    ax.legend(handles=handles, fontsize=8, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)


def draw(data: dict[str, Any]) -> Figure:
    """Both panels of Figure 1 from :func:`rdp_verify.tightness.figure1.figure1_data`."""
    fig = new_figure(figsize=(13, 5.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    _left(left, data["left"])
    _right(right, data["right"])
    return fig


def save(data: dict[str, Any], directory: str | os.PathLike, dpi: int = 110) -> list[Path]:
    """Write ``figure1.png`` and ``figure1.svg`` into ``directory`` (created if missing)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    fig = draw(data)
    return [save_figure(fig, out / f"figure1.{fmt}", dpi) for fmt in ("png", "svg")]
