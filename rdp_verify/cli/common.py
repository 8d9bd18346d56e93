"""What every subcommand shares: the one-line usage error, output flags and JSON output, list, --jobs and
--cluster parsing.

Start-up: this module and every command module import only light modules at their top (argparse,
exact parsing, the packages' ``options`` constants); each command imports its engines (mpmath,
python-flint, NumPy, SymPy, jsonschema, matplotlib, tqdm, Dask, the peers) when it runs, so that
``--help`` and a usage error answer at once.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..foundations.atomic import check_writable, write_atomic
from ..foundations.cluster import INSTALL, ClusterSpec
from ..foundations.figures import FORMATS, require_matplotlib
from ..foundations.inputs import InputError
from ..foundations.parallel import Pool
from ..foundations.run import NEIGHBOURS, PHASE_FIELDS, SAMPLERS, Phase, parse_run

__all__ = ["UsageError", "Parser", "Output", "Input", "add_input", "OUTPUT_KINDS", "check_outputs", "emit", "show", "split_list", "jobs",
           "add_run_arguments", "PHASE_FLAGS", "flag", "run_from_flags", "add_parallel_arguments", "workers",
           "add_certificate_outputs"]

OUTPUT_KINDS = ("file", "plot", "directory", "plot-directory")


class UsageError(Exception):
    """Bad input detected by a command (exit 2, one line)."""


@dataclass(frozen=True)
class Output:
    """A flag naming a path a command writes: checked by :func:`check_outputs` before the command runs."""

    option: str  # the flag, as error messages name it
    dest: str
    kind: str | Callable[[argparse.Namespace], str]  # one of OUTPUT_KINDS, or how the other flags decide it
    stdout: bool = False  # "-" means standard output


@dataclass(frozen=True)
class Input:
    """A flag naming a file (or directory) a command reads: no output of the command may name it
    (:func:`check_outputs`)."""

    option: str  # the flag, as error messages name it
    dest: str
    many: bool = False  # a comma list of paths


def add_input(container: Any, *flags: str, many: bool = False, **kwargs: Any) -> argparse.Action:
    """``add_argument`` on a parser or an argument group (they share their defaults) for a path the command
    reads, recorded (in the ``inputs`` default) so that :func:`check_outputs` refuses an output onto it."""
    action = container.add_argument(*flags, **kwargs)
    option = flags[0] if flags[0].startswith("-") else (action.metavar or flags[0].upper())
    container.set_defaults(inputs=(*(container.get_default("inputs") or ()), Input(option, action.dest, many)))
    return action


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same resolved path (``./x``, ``../d/x`` and symbolic links
    count), or, when both exist, the same inode (hard links)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): different files
        return False


class Parser(argparse.ArgumentParser):
    """argparse with its errors turned into :class:`UsageError` (one line, exit 2), output flags, and negative
    numbers in every spelling the toolkit reads (``-1e-5``, ``-1/3``) taken as values, so that the command
    says why the value is refused rather than "expected one argument"."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse's own pattern knows only -5 and -.5; no flag of rdp-verify starts with a digit
        self._negative_number_matcher = re.compile(r"^-(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$|^-\d+/\d+$")

    def error(self, message: str) -> None:
        raise UsageError(message)

    def add_output(self, *flags: str, kind: str | Callable[[argparse.Namespace], str], stdout: bool = False,
                   **kwargs: Any) -> argparse.Action:
        """``add_argument`` for a path the command writes, recorded (in the ``outputs`` default) for
        :func:`check_outputs`. ``kind``: ``file``, ``plot`` (a figure: .png, .svg or .pdf), ``directory``
        (made if missing), ``plot-directory`` (one that will hold figures), or a function of the parsed
        arguments giving one of them."""
        if isinstance(kind, str) and kind not in OUTPUT_KINDS:
            raise ValueError(f"output kind {kind!r}: one of {', '.join(OUTPUT_KINDS)}")
        action = self.add_argument(*flags, **kwargs)
        self.set_defaults(outputs=(*(self.get_default("outputs") or ()), Output(flags[0], action.dest, kind, stdout)))
        return action


def check_outputs(ns: argparse.Namespace) -> None:
    """Refuse every output path of the parsed command that could not be written, or that names one of the
    command's inputs, before the command runs.

    The one check of outputs (:func:`rdp_verify.foundations.atomic.check_writable`): a command that
    would fail writing after a long computation fails here, in one line, having computed and written
    nothing; and no output replaces a file the command reads (``audit --canaries c.csv --out c.csv`` would
    replace the canaries by the report) or another of its outputs (``--out x.png --plot x.png``).
    """
    inputs = []
    for inp in getattr(ns, "inputs", ()):
        value = getattr(ns, inp.dest, None)
        if value is not None:
            inputs += [(inp.option, p.strip()) for p in (value.split(",") if inp.many else [value]) if p.strip()]
    written: list[tuple[str, str]] = []
    for out in getattr(ns, "outputs", ()):
        path = getattr(ns, out.dest)
        if path is None or (out.stdout and path == "-"):
            continue
        for option, source in inputs:
            if _same_file(path, source):
                raise UsageError(f"{out.option} {path} names the input of {option} ({source}): refused, it would "
                                 "replace what the command reads")
        for option, other in written:
            if _same_file(path, other):
                raise UsageError(f"{out.option} {path} names the output of {option} ({other}) too: refused, one "
                                 "would replace the other")
        written.append((out.option, path))
        kind = out.kind(ns) if callable(out.kind) else out.kind
        check_writable(path, out.option, directory=kind.endswith("directory"),
                       suffixes=FORMATS if kind == "plot" else ())
        if kind.startswith("plot"):
            require_matplotlib(out.option)


def emit(obj: Any, out: str | None) -> None:
    """Print JSON to stdout, or write it atomically to ``out``."""
    from ..certificates.certificate import dumps

    text = dumps(obj)
    if out is None:
        sys.stdout.write(text)
    else:
        write_atomic(out, text)


def show(ns: Any, obj: Any, summary: Callable[[], str]) -> None:
    """A command's result: written to ``--out`` (atomically) when given, then printed as JSON with ``--json``, else
    as the human-readable ``summary()``."""
    if ns.out is not None:
        emit(obj, ns.out)
    if ns.json:
        emit(obj, None)
    else:
        print(summary())


def split_list(text: str, name: str) -> list[str]:
    """The entries of a comma list; an empty entry is refused."""
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"{name} list {text!r} has an empty entry")
    return parts


PHASE_FLAGS = PHASE_FIELDS


def flag(field: str) -> str:
    """The command-line flag of a run field: ``batch_size`` → ``--batch-size``."""
    return "--" + field.replace("_", "-")


def run_from_flags(fields: dict[str, Any]) -> list[tuple[Phase, str]]:
    """:func:`~rdp_verify.foundations.run.parse_run` of the run flags, its errors naming flags, not fields."""
    try:
        return parse_run(fields)
    except InputError as exc:
        message = str(exc).replace("missing field ", "missing ")
        for f in PHASE_FLAGS:
            message = message.replace(f"'{f}'", flag(f))
        raise InputError(message) from None


def add_run_arguments(group: Any, steps_help: str, conventions: tuple[str, ...]) -> None:
    """The flags that describe a DP-SGD run (:data:`~rdp_verify.foundations.run.PHASE_FIELDS`), shared by
    ``audit``, ``dp`` and ``calibrate``."""
    group.add_argument("--sampler", help=f"how batches are drawn: {', '.join(SAMPLERS)} (default poisson; the "
                       "others need --batch-size and --dataset-size)")
    group.add_argument("--neighbours", help=f"neighbouring datasets: {', '.join(NEIGHBOURS)} (default add-remove)")
    group.add_argument("--q", help="sampling rate in (0, 1], e.g. 0.01 or 256/60000 (Poisson sampling)")
    group.add_argument("--batch-size", dest="batch_size",
                       help="batch size (expected, for Poisson); q = batch size / dataset size")
    group.add_argument("--dataset-size", dest="dataset_size", help="number of training records N")
    group.add_argument("--sigma", help="noise multiplier (noise std / clipping norm)")
    group.add_argument("--steps", help=steps_help)
    group.add_argument("--epochs", help="epochs instead of --steps: steps = epochs / q, rounded by --step-convention")
    group.add_argument("--step-convention", dest="step_convention", choices=conventions,
                       help="with --epochs: exact (default; epochs/q must be whole), ceil (TF Privacy's "
                            "compute_dp_sgd_privacy) or floor (TF Privacy's MNIST tutorials)")


def add_certificate_outputs(p: Any, plot_help: str) -> None:
    """``--json``, ``--out FILE`` and ``--plot FILE``: a command that seals one certificate and can draw it."""
    p.add_argument("--json", action="store_true", help="print the sealed certificate instead of the summary")
    p.add_output("--out", kind="file", metavar="FILE", help="also write the certificate to FILE (atomically)")
    p.add_output("--plot", kind="plot", metavar="FILE", help=f"{plot_help} (.png, .svg, .pdf)")


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
