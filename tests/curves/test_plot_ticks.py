"""The ``dp --plot`` figure's second panel (the proven band's relative width) carries readable tick labels."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from rdp_verify.cli import main  # noqa: E402
from rdp_verify.curves import plot  # noqa: E402
from rdp_verify.foundations.figures import new_figure  # noqa: E402


def visible_labels(ax):
    """The non-empty y tick labels (major and minor) that lie within the axis's limits, as drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(ax.figure).draw()  # the Agg canvas: what savefig renders a PNG with
    low, high = sorted(ax.get_ylim())
    ticks = [*ax.yaxis.get_major_ticks(), *ax.yaxis.get_minor_ticks()]
    return [t.label1.get_text() for t in ticks
            if t.label1.get_visible() and t.label1.get_text() and low <= t.get_loc() <= high]


def test_shuffle_plot_width_panel_has_three_tick_labels(capsys, tmp_path, monkeypatch):
    # README's shuffled run: the band's relative width stays in [0.83, 1], less than a decade
    figures = []
    save = plot.save_figure
    monkeypatch.setattr(plot, "save_figure", lambda fig, path: figures.append(fig) or save(fig, path))
    path = tmp_path / "curve.png"
    code = main(["dp", "--sampler", "shuffle", "--batch-size", "250", "--dataset-size", "60000", "--sigma", "1.3",
                 "--epochs", "3", "--delta", "1e-5", "--plot", str(path)])
    capsys.readouterr()
    assert code == 0 and path.exists() and len(figures) == 1
    left, right = figures[0].axes
    labels = visible_labels(right)
    assert len(labels) >= 3, labels


@pytest.mark.parametrize("low, high, scale", [
    (0.85, 1.0, "linear"), (0.999, 1.0, "linear"), (0.0, 0.0, "linear"),  # less than a decade (or none positive)
    (0.09, 1.0, "log"), (0.007, 0.6, "log"), (0.0011, 1.0, "log"),  # 1, 2, 5 times each power of ten
    (1e-9, 1.0, "log"), (1e-30, 1.0, "log")])  # a label per decade
def test_width_scale(low, high, scale):
    fig = new_figure()
    ax = fig.subplots()
    width = np.concatenate([np.linspace(low, high, 50), [np.nan]])
    ax.plot(np.arange(len(width)), width)
    plot._width_scale(ax, width)
    assert ax.get_yscale() == scale and len(visible_labels(ax)) >= 3
