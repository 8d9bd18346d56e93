"""What every subcommand shares: the one-line usage error, JSON output, list, --jobs and --cluster parsing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..audit.claims import parse_run
from ..certificates.certificate import dumps
from ..foundations.atomic import write_atomic
from ..foundations.cluster import INSTALL, ClusterSpec
from ..foundations.inputs import InputError, Phase
from ..foundations.parallel import Pool

__all__ = ["UsageError", "Parser", "emit", "check_out", "split_list", "jobs", "add_run_arguments", "PHASE_FLAGS",
           "flag", "run_from_flags", "add_parallel_arguments", "workers"]


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


def check_out(out: str | None) -> None:
    """Refuse an ``--out FILE`` whose directory does not exist, before any work is done."""
    if out is not None and not Path(out).parent.is_dir():
        raise InputError(f"--out {out}: directory {Path(out).parent} does not exist")


def split_list(text: str, name: str) -> list[str]:
    """The entries of a comma list; an empty entry is refused."""
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"{name} list {text!r} has an empty entry")
    return parts


PHASE_FLAGS = ("q", "batch_size", "dataset_size", "sigma", "steps", "epochs", "step_convention")


def flag(field: str) -> str:
    """The command-line flag of a run field: ``batch_size`` → ``--batch-size``."""
    return "--" + field.replace("_", "-")


def run_from_flags(fields: dict[str, Any]) -> list[tuple[Phase, str]]:
    """:func:`~rdp_verify.audit.claims.parse_run` of the run flags, its errors naming flags, not fields."""
    try:
        return parse_run(fields)
    except InputError as exc:
        message = str(exc).replace("missing field ", "missing ")
        for f in PHASE_FLAGS:
            message = message.replace(f"'{f}'", flag(f))
        raise InputError(message) from None


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


def add_parallel_arguments(p: Any, what: str) -> None:
    """``--jobs N`` and ``--cluster ADDRESS``: where a command computes ``what`` (read back by :func:`workers`)."""
    p.add_argument("--jobs", type=int, help=f"worker processes for {what} (default 1)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help=f"compute {what} on Dask instead: local:N starts N worker processes here, "
                        f"tcp://HOST:PORT uses a running scheduler (needs {INSTALL})")


def workers(ns: argparse.Namespace) -> Pool:
    """The :class:`~rdp_verify.foundations.parallel.Pool` that ``--jobs`` / ``--cluster`` ask for, validated.

    Nothing is started yet: a pool opens its processes or its cluster on first use.
    """
    if ns.cluster is not None:
        if ns.jobs is not None:
            raise UsageError("give --jobs or --cluster, not both")
        return Pool(cluster=ClusterSpec.parse(ns.cluster))
    return Pool(jobs(1 if ns.jobs is None else ns.jobs))
