import importlib.util

import pytest

from rdp_verify.foundations import figures
from rdp_verify.foundations.inputs import InputError


def test_save_figure_writes_the_format_of_the_suffix(tmp_path):
    pytest.importorskip("matplotlib")
    fig = figures.new_figure(figsize=(2, 2))
    fig.subplots().plot([0, 1], [0, 1])
    for suffix, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        path = figures.save_figure(fig, tmp_path / f"f{suffix}")
        assert path.read_bytes().startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png", "f.svg"]  # no temporary left


def test_require_matplotlib_names_the_flag_and_the_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(InputError, match=r"^--plot needs matplotlib: pip install 'rdp_verify\[plot\]'$"):
        figures.require_matplotlib("--plot")
