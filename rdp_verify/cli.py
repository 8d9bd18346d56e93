"""The ``rdp-verify`` command line.

Exit codes everywhere: 0 success (certified / confirmed / holds), 1 a claim
failed or the methods disagree, 2 bad input (one line on stderr, no file
written). Output files are written atomically: a failed or interrupted run
leaves no partial file behind.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence

from tqdm import tqdm

from . import __version__
from .atomic import write_atomic
from .certificate import CertificateError, check_certificate, dumps, load, seal
from .certify import certify
from .inputs import SGM, InputError, parse_alphas, parse_dps, parse_q, parse_sigma

__all__ = ["main", "UsageError", "progress_map", "emit"]

# Further subcommands live in their own modules, each with ``register(subparsers)``.
COMMAND_MODULES: tuple[str, ...] = ("compare", "tightness", "golden", "audit", "cdp_cli")


class UsageError(Exception):
    """Bad input detected by a command (exit 2, one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise UsageError(message)


def progress_map(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int, desc: str) -> list[Any]:
    """fn over items in order, on ``jobs`` processes, with a progress bar after a moment."""
    bar = tqdm(total=len(items), desc=desc, unit="pt", delay=1.0, file=sys.stderr, disable=len(items) < 2 or not sys.stderr.isatty(), leave=False)
    try:
        if jobs <= 1:
            out = []
            for item in items:
                out.append(fn(item))
                bar.update()
            return out
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            out = []
            for result in pool.map(fn, items):
                out.append(result)
                bar.update()
            return out
    finally:
        bar.close()


def emit(obj: Any, out: str | None) -> None:
    """Print JSON to stdout, or write it atomically to ``out``."""
    text = dumps(obj)
    if out is None:
        sys.stdout.write(text)
    else:
        write_atomic(out, text)


def _certify_point(args: tuple[str, str, str, int]) -> dict[str, Any]:
    q, sigma, alpha, dps = args
    return seal(certify(SGM(parse_q(q), parse_sigma(sigma), parse_alphas(alpha)[0]), dps))


def split_list(text: str, name: str) -> list[str]:
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"{name} list {text!r} has an empty entry")
    return parts


def cmd_certify(ns: argparse.Namespace) -> int:
    dps = parse_dps(ns.dps)
    qs = split_list(ns.q, "q")
    sigmas = split_list(ns.sigma, "sigma")
    for q in qs:
        parse_q(q)
    for s in sigmas:
        parse_sigma(s)
    alphas = split_list(ns.alpha, "alpha")
    parse_alphas(ns.alpha)  # validates every order and refuses repeats
    if ns.jobs < 1:
        raise InputError(f"--jobs {ns.jobs}: must be at least 1")
    points = [(q, s, a, dps) for q, s, a in itertools.product(qs, sigmas, alphas)]
    certs = progress_map(_certify_point, points, ns.jobs, "certifying")
    emit(certs[0] if len(certs) == 1 else certs, ns.out)
    bad = [c for c in certs if c["verdict"] != "certified"]
    if ns.out is not None:
        print(f"wrote {len(certs)} certificate(s) to {ns.out}: "
              f"{len(certs) - len(bad)} certified, {len(bad)} inconsistent", file=sys.stderr)
    return 1 if bad else 0


def cmd_check(ns: argparse.Namespace) -> int:
    try:
        data = load(ns.file)
    except CertificateError as exc:
        raise UsageError(str(exc)) from None
    certs = data if isinstance(data, list) else [data]
    if not certs:
        raise UsageError(f"{ns.file} holds an empty list")
    failures = []
    for i, cert in enumerate(progress_map(check_certificate, certs, ns.jobs, "checking")):
        label = f"[{i}] " if isinstance(data, list) else ""
        failures += [f"{label}{problem}" for problem in cert]
    if failures:
        for line in failures:
            print(f"{ns.file}: FAILED {line}")
        return 1
    print(f"{ns.file}: confirmed ({len(certs)} certificate{'s' if len(certs) > 1 else ''}: "
          "schema, content hash and every recomputed claim)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rdp-verify",
        description=(
            "Certified Rényi-DP of the Sampled Gaussian Mechanism (DP-SGD's noise-and-subsample step).\n"
            "For sampling rate q, noise multiplier sigma and order alpha, computes\n"
            "epsilon_alpha = log(max(A_alpha, B_alpha))/(alpha - 1) four independent ways\n"
            "(quadrature, series, symbolic, Arb ball arithmetic), cross-checks them and\n"
            "writes a JSON certificate. Numbers are read exactly: 0.1 means 1/10."
        ),
        epilog="Exit codes: 0 ok, 1 a claim failed or methods disagree, 2 bad input.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rdp-verify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "certify",
        help="certify epsilon_alpha of SGM(q, sigma) at one or more orders",
        description=(
            "Compute A_alpha, B_alpha and epsilon_alpha of one SGM step and print a JSON certificate.\n"
            "Several values (comma-separated) in --q, --sigma or --alpha make a grid and print a\n"
            "JSON array, one certificate per point, in the order q, sigma, alpha."
        ),
        epilog="Example: rdp-verify certify --q 0.01 --sigma 4 --alpha 32",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--q", required=True, help="sampling rate in (0, 1], e.g. 0.01 or 1/256 (comma list allowed)")
    p.add_argument("--sigma", required=True, help="noise multiplier > 0, e.g. 1.1 (comma list allowed)")
    p.add_argument("--alpha", required=True, help="Rényi order(s) > 1, e.g. 32 or 1.5,2,32")
    p.add_argument("--dps", default="30", help="decimal digits of precision (default 30)")
    p.add_argument("--out", metavar="FILE", help="write the JSON to FILE (atomically) instead of stdout")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for many points (default 1)")
    p.set_defaults(func=cmd_certify)

    p = sub.add_parser(
        "check",
        help="validate a certificate file and recompute every claim",
        description=(
            "Validate FILE (one certificate or a JSON array) against the shipped JSON Schema,\n"
            "verify its content hash, recompute it from its inputs and confirm every claim,\n"
            "or name the first field that fails."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.set_defaults(func=cmd_check)

    for name in COMMAND_MODULES:
        importlib.import_module(f".{name}", __package__).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
        return ns.func(ns)
    except (UsageError, InputError) as exc:
        print(f"rdp-verify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rdp-verify: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
