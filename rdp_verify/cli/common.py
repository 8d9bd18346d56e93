"""What every subcommand shares: the one-line usage error, JSON output, list and --jobs parsing."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..certificates.certificate import dumps
from ..foundations.atomic import write_atomic
from ..foundations.inputs import InputError

__all__ = ["UsageError", "Parser", "emit", "split_list", "jobs"]


class UsageError(Exception):
    """Bad input detected by a command (exit 2, one line)."""


class Parser(argparse.ArgumentParser):
    """argparse with its errors turned into :class:`UsageError` (one line, exit 2)."""

    def error(self, message: str) -> None:
        raise UsageError(message)


def emit(obj: Any, out: str | None) -> None:
    """Print JSON to stdout, or write it atomically to ``out``."""
    text = dumps(obj)
    if out is None:
        sys.stdout.write(text)
    else:
        write_atomic(out, text)


def split_list(text: str, name: str) -> list[str]:
    """The entries of a comma list; an empty entry is refused."""
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"{name} list {text!r} has an empty entry")
    return parts


def jobs(value: int) -> int:
    """A ``--jobs`` value: at least 1."""
    if value < 1:
        raise InputError(f"--jobs {value}: must be at least 1")
    return value
