"""What every subcommand shares: the one-line usage error, JSON output, list and --jobs parsing."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..certificates.certificate import dumps
from ..foundations.atomic import write_atomic
from ..foundations.inputs import InputError

__all__ = ["UsageError", "Parser", "emit", "split_list", "jobs", "add_run_arguments"]


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


def add_run_arguments(group: Any, steps_help: str, conventions: tuple[str, ...]) -> None:
    """The flags that describe a DP-SGD run (one phase), shared by ``audit`` and ``dp``."""
    group.add_argument("--q", help="sampling rate in (0, 1], e.g. 0.01 or 256/60000")
    group.add_argument("--batch-size", dest="batch_size", help="expected batch size; q = batch size / dataset size")
    group.add_argument("--dataset-size", dest="dataset_size", help="number of training records N")
    group.add_argument("--sigma", help="noise multiplier (noise std / clipping norm)")
    group.add_argument("--steps", help=steps_help)
    group.add_argument("--epochs", help="epochs instead of --steps: steps = epochs / q, rounded by --step-convention")
    group.add_argument("--step-convention", dest="step_convention", choices=conventions,
                       help="with --epochs: exact (default; epochs/q must be whole), ceil (TF Privacy's "
                            "compute_dp_sgd_privacy) or floor (TF Privacy's MNIST tutorials)")


def jobs(value: int) -> int:
    """A ``--jobs`` value: at least 1."""
    if value < 1:
        raise InputError(f"--jobs {value}: must be at least 1")
    return value
