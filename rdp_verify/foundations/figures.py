"""Matplotlib figures without pyplot, written atomically: the one way every plot is saved.

A :class:`matplotlib.figure.Figure` built directly (not through ``pyplot``) chooses and
changes no global backend; ``savefig`` renders it with the Agg canvas (PNG) or the
vector backends (SVG, PDF). :func:`save_figure` picks the format from the file suffix and
writes through :func:`rdp_verify.foundations.atomic.write_atomic`, so a failed run leaves
no partial image; a command checks the path first with
:func:`rdp_verify.foundations.atomic.check_writable` (``suffixes=FORMATS``) and
:func:`require_matplotlib`. SVG output carries no date, so it is reproducible byte for byte.
"""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .inputs import InputError

__all__ = ["FORMATS", "new_figure", "save_figure", "require_matplotlib", "run_label"]

FORMATS = (".png", ".svg", ".pdf")  # the suffixes save_figure knows


def new_figure(**kwargs: Any) -> Any:
    """A fresh :class:`matplotlib.figure.Figure` (keyword arguments as for ``Figure``)."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def save_figure(fig: Any, path: str | os.PathLike, dpi: int = 110) -> Path:
    """Render ``fig`` in the format named by ``path``'s suffix and write it atomically."""
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=dpi, metadata={"Date": None} if fmt == "svg" else None)
    write_atomic(target, buffer.getvalue())
    return target


def run_label(phases: Any) -> str:
    """A run's phases in a figure title: q, σ, T (and the sampler when not Poisson add/remove)."""
    return "; ".join(f"q = {float(p.q):.4g}, σ = {float(p.sigma):g}, T = {p.steps}"
                     + ("" if p.default else f", {p.sampler}") for p in phases)


def require_matplotlib(option: str) -> None:
    """Refuse ``option`` at once when matplotlib is missing (found without importing it)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(f"{option} needs matplotlib: pip install 'rdp_verify[plot]'")
