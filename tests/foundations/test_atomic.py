import os
import stat

import pytest

from rdp_verify.foundations.atomic import write_atomic


def test_writes_text_and_bytes_with_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.json", "ε = 1\n")
        write_atomic(tmp_path / "b.png", b"\x89PNG")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == "ε = 1\n"
    assert (tmp_path / "b.png").read_bytes() == b"\x89PNG"
    for name in ("a.json", "b.png"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
    assert sorted(os.listdir(tmp_path)) == ["a.json", "b.png"]


def test_failure_midway_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


def test_rejects_non_text():
    with pytest.raises(TypeError):
        write_atomic("unused.json", 12345)
