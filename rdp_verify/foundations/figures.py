"""Matplotlib figures without pyplot, written atomically: the one way every plot is saved.

A :class:`matplotlib.figure.Figure` built directly (not through ``pyplot``) chooses and
changes no global backend; ``savefig`` renders it with the Agg canvas (PNG) or the
vector backends (SVG, PDF). :func:`save_figure` picks the format from the file suffix and
writes through :func:`rdp_verify.foundations.atomic.write_atomic`, so a failed run leaves
no partial image. SVG output carries no date, so it is reproducible byte for byte.
"""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .inputs import InputError

__all__ = ["FORMATS", "new_figure", "save_figure", "check_plot_path"]

FORMATS = (".png", ".svg", ".pdf")


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


def check_plot_path(option: str, text: str) -> None:
    """Refuse, before a long computation, a plot file that could not be written."""
    path = Path(text)
    if not path.parent.is_dir():
        raise InputError(f"{option} {text}: directory {path.parent} does not exist")
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"{option} {text}: the file name must end in .png, .svg or .pdf")
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(f"{option} needs matplotlib: pip install 'rdp_verify[plot]'")
