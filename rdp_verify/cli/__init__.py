"""The ``rdp-verify`` command line: argument parsing and output only, one module per command.

Exit codes everywhere: 0 success (certified / confirmed / holds), 1 a claim
failed or the methods disagree, 2 bad input (one line on stderr, no file
written); ``dp`` and ``rdp`` also return 3 partial (a proven end is vacuous: the
run is not private, or only an upper end is known). Every output path is checked
before the command runs (:func:`rdp_verify.cli.common.check_outputs`), and output
files are written atomically: a failed or interrupted run leaves no partial file behind.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from typing import Any, Sequence

from .. import __version__
from ..foundations.inputs import InputError
from .common import Parser, UsageError, check_outputs

__all__ = ["main", "build_parser", "COMMAND_MODULES"]

# Each module has ``register(subparsers)``; the order is the order of ``rdp-verify --help``.
COMMAND_MODULES: tuple[str, ...] = ("certify", "rdp", "dp", "tradeoff", "calibrate", "audit", "compare", "golden", "tightness", "cdp")


def build_parser() -> argparse.ArgumentParser:
    """The whole ``rdp-verify`` parser (also what the documentation's CLI reference is generated from)."""
    parser = Parser(
        prog="rdp-verify",
        description=(
            "Certified Rényi-DP of the Sampled Gaussian Mechanism (DP-SGD's noise-and-subsample step).\n"
            "For sampling rate q, noise multiplier sigma and order alpha, computes\n"
            "epsilon_alpha = log(max(A_alpha, B_alpha))/(alpha - 1) four independent ways\n"
            "(quadrature, series, symbolic, Arb ball arithmetic), cross-checks them and\n"
            "writes a JSON certificate. Numbers are read exactly: 0.1 means 1/10."
        ),
        epilog=("Exit codes: 0 ok, 1 a claim failed or methods disagree, 2 bad input, 3 partial (dp, rdp:\n"
                "a proven end is vacuous, e.g. the run is not private), 130 interrupted (Ctrl-C: one line, no\n"
                "partial file). COMMAND --help has the details."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rdp-verify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f".{name}", __package__).register(sub)
    return parser


def _interrupt_once(signum: int, frame: Any) -> None:
    """SIGINT: ``KeyboardInterrupt`` the first time, then ignored, so that a second Ctrl-C (or a terminal's and a
    wrapper's copies of one, a few milliseconds apart) cannot interrupt the clean-up of the first (it raised inside
    ``concurrent.futures``' lock handling: a chained traceback and exit 1)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    own = threading.current_thread() is threading.main_thread()  # only the main thread may set handlers
    previous = signal.signal(signal.SIGINT, _interrupt_once) if own else None
    try:  # Ctrl-C anywhere, workers included (rdp_verify.foundations.parallel): one line, exit 130
        ns = build_parser().parse_args(argv)
        check_outputs(ns)
        return ns.func(ns)
    except (UsageError, InputError) as exc:
        print(f"rdp-verify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rdp-verify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped early (e.g. | head): quietly, no traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    finally:
        if own and previous is not None:  # None: a handler not set from Python, left as it was
            signal.signal(signal.SIGINT, previous)

