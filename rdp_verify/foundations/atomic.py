"""Atomic file output: a reader never sees a half-written file, and a failed write leaves none."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (UTF-8 text or bytes) to ``path`` via a temporary sibling and a rename.

    The temporary file lives in the target's directory so ``os.replace`` is atomic;
    it gets the permissions an ordinary ``open(path, "w")`` would (0666 minus the
    umask) rather than mkstemp's 0600, and is removed if anything fails.
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
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
