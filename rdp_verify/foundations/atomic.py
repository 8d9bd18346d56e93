"""Atomic file output: a reader never sees a half-written file, and a failed write leaves none.

:func:`check_writable` refuses, before a long computation, an output that :func:`write_atomic`
could not write after it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Sequence

from .inputs import InputError

__all__ = ["write_atomic", "check_writable"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (UTF-8 text or bytes) to ``path`` via a temporary sibling and a rename.

    The temporary file lives in the target's directory so ``os.replace`` is atomic;
    it gets the permissions of the file it replaces, else those an ordinary ``open(path, "w")`` would
    (0666 minus the umask) rather than mkstemp's 0600, and is removed if anything fails.
    """
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"write_atomic needs str or bytes, not {type(data).__name__}")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        # a replaced file keeps its permissions; a new one gets those of open(path, "w")
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def check_writable(path: str | os.PathLike, option: str, directory: bool = False,
                   suffixes: Sequence[str] = ()) -> None:
    """Refuse an output path that could not be written, as :class:`InputError` naming ``option`` and the path.

    A file (the default): the path is not a directory, an existing file there is one the user may
    write (a read-only file is refused, never replaced), its directory exists and a file can be
    created in it (the temporary sibling of :func:`write_atomic`), and with ``suffixes`` its name
    ends in one of them (any case). ``directory=True``: a directory to be filled with such files,
    made with its parents if missing: the path, if it exists, is a writable directory, else its
    nearest existing ancestor is one. Nothing is left behind.
    """
    where = f"{option} {os.fspath(path)}"
    try:
        _check(Path(path), where, directory, suffixes)
    except OSError as exc:  # e.g. a parent that cannot even be searched
        raise InputError(f"{where}: {exc.strerror or exc}") from None


def _check(target: Path, where: str, directory: bool, suffixes: Sequence[str]) -> None:
    if directory:
        if target.exists():
            if not target.is_dir():
                raise InputError(f"{where}: exists and is not a directory")
            _writable_directory(target, where)
        else:  # made with its parents: the nearest existing ancestor must take them
            _writable_directory(next(p for p in target.parents if p.exists()), where)
        return
    if target.is_dir():  # before the suffix: a directory named x.png is still a directory
        raise InputError(f"{where}: is a directory, not a file")
    if suffixes and target.suffix.lower() not in suffixes:
        names = ", ".join(suffixes[:-1]) + f" or {suffixes[-1]}" if len(suffixes) > 1 else suffixes[0]
        raise InputError(f"{where}: the file name must end in {names}")
    if target.exists() and not target.is_file():  # /dev/null, a pipe: a rename would replace the device itself
        raise InputError(f"{where}: exists and is not a regular file")
    if target.exists() and not _may_replace(target):
        raise InputError(f"{where}: the file is read-only: rdp_verify does not replace it")
    _writable_directory(target.parent, where)


def _may_replace(target: Path) -> bool:
    """Whether the user may write the existing file ``target``: its mode has a write bit for them (checked
    on the bits, since ``os.access`` says yes to root for any file) and ``os.access`` agrees."""
    st = target.stat()
    bits = stat.S_IWUSR if st.st_uid == os.geteuid() else stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    return bool(st.st_mode & bits) and os.access(target, os.W_OK)


def _writable_directory(directory: Path, where: str) -> None:
    """Refuse ``directory`` unless a file can be created in it, tried as :func:`write_atomic` does."""
    if not directory.exists():
        raise InputError(f"{where}: directory {directory} does not exist")
    if not directory.is_dir():
        raise InputError(f"{where}: {directory} is not a directory")
    # os.access alone is not enough: root passes it on /proc and /sys, where no file can be created
    refused = not os.access(directory, os.W_OK | os.X_OK)
    if not refused:
        try:
            fd, probe = tempfile.mkstemp(prefix=".rdp-verify-probe.", suffix=".tmp", dir=directory)
        except OSError:
            refused = True
        else:
            os.close(fd)
            os.unlink(probe)
    if refused:
        raise InputError(f"{where}: directory {directory} is not writable")
