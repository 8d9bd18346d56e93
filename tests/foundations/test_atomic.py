import os
import stat

import pytest

from rdp_verify.foundations.atomic import check_writable, write_atomic
from rdp_verify.foundations.inputs import InputError


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


def _listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("name, why", [
    ("dir", "--out {tmp}/dir: is a directory, not a file"),
    ("missing/x.json", "--out {tmp}/missing/x.json: directory {tmp}/missing does not exist"),
    ("file/x.json", "--out {tmp}/file/x.json: {tmp}/file is not a directory"),
])
def test_check_writable_refuses_a_file_it_could_not_write(tmp_path, name, why):
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError) as exc:
        check_writable(tmp_path / name, "--out")
    assert str(exc.value) == why.format(tmp=tmp_path)
    assert _listing(tmp_path) == ["dir", "file"]


def test_check_writable_tries_the_directory_rather_than_trusting_access():
    # root passes os.access on /proc, where no file can be created
    with pytest.raises(InputError, match=r"^--plot /proc/x.png: directory /proc is not writable$"):
        check_writable("/proc/x.png", "--plot", suffixes=(".png",))


def test_check_writable_accepts_a_writable_file_and_leaves_nothing(tmp_path):
    (tmp_path / "old.json").write_text("old")
    check_writable(tmp_path / "new.json", "--out")
    check_writable(tmp_path / "old.json", "--out")  # replaced atomically later
    assert _listing(tmp_path) == ["old.json"] and (tmp_path / "old.json").read_text() == "old"


def test_check_writable_suffixes(tmp_path):
    check_writable(tmp_path / "a.SVG", "--plot", suffixes=(".png", ".svg"))
    with pytest.raises(InputError, match=r"a\.txt: the file name must end in \.png or \.svg$"):
        check_writable(tmp_path / "a.txt", "--plot", suffixes=(".png", ".svg"))


def test_check_writable_directory(tmp_path):
    (tmp_path / "file").write_text("")
    check_writable(tmp_path, "--out", directory=True)  # exists
    check_writable(tmp_path / "new" / "deeper", "--out", directory=True)  # made with its parents later
    assert _listing(tmp_path) == ["file"]
    with pytest.raises(InputError, match="exists and is not a directory"):
        check_writable(tmp_path / "file", "--out", directory=True)
    with pytest.raises(InputError, match=f"{tmp_path / 'file'} is not a directory"):
        check_writable(tmp_path / "file" / "sub", "--out", directory=True)
    with pytest.raises(InputError, match="directory /proc is not writable"):
        check_writable("/proc/new/deeper", "--out", directory=True)


# -- issue 27, item 6 ------------------------------------------------------------------------------------

def test_a_read_only_file_is_refused_not_replaced(tmp_path):
    # before: os.replace swapped it for a new file with new permissions (root passes os.access for any file)
    target = tmp_path / "kept.json"
    target.write_text("mine")
    target.chmod(0o444)
    with pytest.raises(InputError, match="read-only"):
        check_writable(target, "--out")
    assert target.read_text() == "mine" and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "shared.json"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_device_is_never_replaced():
    # a rename onto /dev/null would replace the device itself
    with pytest.raises(InputError, match="not a regular file"):
        check_writable("/dev/null", "--out")


def test_a_directory_is_named_as_a_directory_before_its_suffix(tmp_path):
    # before: "--plot x: the file name must end in .png, .svg or .pdf" for a directory
    with pytest.raises(InputError, match="is a directory"):
        check_writable(tmp_path, "--plot", suffixes=(".png", ".svg", ".pdf"))
