"""``rdp-verify certify`` and ``rdp-verify check``: one-step certificates and their re-verification."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from typing import Any

from ..foundations.inputs import SGM, parse_alphas, parse_dps, parse_q, parse_sigma
from ..foundations.parallel import progress_bar, progress_map
from .common import UsageError, add_input, add_parallel_arguments, emit, split_list, workers

__all__ = ["register"]


def _certify_point(args: tuple[str, str, str, int]) -> dict[str, Any]:
    from ..certificates.certificate import seal
    from ..certificates.certify import certify

    q, sigma, alpha, dps = args
    return seal(certify(SGM(parse_q(q), parse_sigma(sigma), parse_alphas(alpha)[0]), dps))


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
    pool = workers(ns)
    points = [(q, s, a, dps) for q, s, a in itertools.product(qs, sigmas, alphas)]
    certs = progress_map(_certify_point, points, pool, "certifying")
    emit(certs[0] if len(certs) == 1 else certs, ns.out)
    bad = [c for c in certs if c["verdict"] != "certified"]
    if ns.out is not None:
        print(f"wrote {len(certs)} certificate(s) to {ns.out}: "
              f"{len(certs) - len(bad)} certified, {len(bad)} inconsistent", file=sys.stderr)
    return 1 if bad else 0


# Formats of the project that rdp-verify check does not verify, and what to do with such a file instead (advice
# naming commands: the CLI's to give; the sealed formats check verifies are rdp_verify.certificates.formats.FORMATS).
_OTHER_FORMATS = {
    "rdp_verify golden grid": "a golden grid file: compute its rows with rdp-verify golden --grid FILE --out DIR",
    "rdp_verify golden dataset": "the manifest of a golden dataset: verify the dataset with rdp-verify golden --verify DIR",
}


def _is_rows(data: Any, keys: set[str]) -> bool:
    return isinstance(data, list) and bool(data) and all(isinstance(x, dict) and keys <= x.keys() for x in data)


def _recognised(data: Any, path: str) -> str | None:
    """What a JSON file that declares no checkable format is, if it is one of the project's other files (only to word
    the refusal: nothing is checked by its shape)."""
    from ..certificates.formats import RERUN

    if isinstance(data, dict) and isinstance(data.get("claims"), list) or _is_rows(data, {"epsilon", "delta"}):
        return f"is a claims file, not a certificate or report: audit it with rdp-verify audit --claims {path}"
    if isinstance(data, dict) and isinstance(data.get("phases"), list) or _is_rows(data, {"sigma"}) \
            and not _is_rows(data, {"peer"}):
        return f"is a phases file, not a certificate or report: use it with rdp-verify dp --phases {path}"
    if _is_rows(data, {"peer", "classification"}):
        return "holds the points of rdp-verify compare, which are not sealed: rdp-verify check cannot verify them"
    if isinstance(data, dict) and {"table", "bounds", "rows"} <= data.keys():
        return "is a report of rdp-verify table1, which is not sealed: run rdp-verify table1 again to recompute it"
    if isinstance(data, dict) and {"figure", "left", "right"} <= data.keys():
        return "holds the numbers of rdp-verify figure1, which are not sealed: run rdp-verify figure1 again"
    if isinstance(data, dict) and {"run", "canaries", "verdict"} <= data.keys() and "format" not in data:
        return f"is a canary audit report, {RERUN}"
    return None


def _kind(value: Any) -> str:
    return {dict: "a JSON object", list: "a JSON list", str: "a JSON string", bool: "a JSON boolean",
            type(None): "JSON null"}.get(type(value), "a JSON number")


def _not_checkable(data: Any, path: str) -> str | None:
    """Why the JSON ``data`` of ``path`` is not something rdp-verify check verifies (one line), or None when every
    object in it declares a registered format (a sealed certificate or report, or a forgery of one) at a version
    the format does not refuse."""
    from ..certificates.formats import by_name, names

    items = data if isinstance(data, list) else [data]
    formats = [by_name(x.get("format")) if isinstance(x, dict) else None for x in items]
    declared = [fmt is not None for fmt in formats]
    if all(declared) and all(fmt.refusal(x.get("format_version")) is None for fmt, x in zip(formats, items)):
        return None
    what = _recognised(data, path)
    if what is not None:
        return f"{path} {what}"
    known_list = "known formats: " + ", ".join(names())
    if not any(declared) and not (isinstance(data, list) and all(isinstance(x, dict) for x in data)):
        if not isinstance(data, dict):
            return f"{path} is {_kind(data)}, not an rdp_verify certificate or report, nor a list of them ({known_list})"
    for i, (item, fmt) in enumerate(zip(items, formats)):
        where = f"{path}{f' [{i}]' if isinstance(data, list) else ''}"
        if fmt is not None:
            why = fmt.refusal(item.get("format_version"))
            if why is not None:
                return f"{where} is a {fmt.name!r} file of format version {item['format_version']}, {why}"
            continue
        kind = item.get("format") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind in _OTHER_FORMATS:
            return f"{where} is {_OTHER_FORMATS[kind]}"
        why = "no \"format\" field" if not isinstance(item, dict) or "format" not in item else \
            f"its format {json.dumps(kind, ensure_ascii=False)[:60]} is not one of them"
        return f"{where} is {_kind(item)}, not an rdp_verify certificate or report ({why}; {known_list})"
    return None


def _check_any(cert: dict[str, Any]) -> list[str]:
    """Check a sealed file by the format it records (:func:`_not_checkable` has refused any other first)."""
    from ..certificates.formats import by_name

    return by_name(cert["format"]).load()[0](cert)


def _confirmed(certs: list[Any]) -> str:
    """What was verified in confirmed certificates: the count of fields recomputed and compared, then by name the
    fields of these certificates re-derived from their own fields and those only recorded (patterns no field of
    theirs matches are not named)."""
    from ..certificates.formats import by_name

    verified, derived, recorded, unclassified = 0, [], [], []
    with progress_bar(len(certs), "summarising", "cert") as bar:  # a long list takes a while here too
        for cert in certs:
            bar.update()
            policy = by_name(cert["format"]).load()[1]
            if policy is None:
                unclassified.append(cert["format"])
                continue
            verified += policy.verified_count(cert)
            derived += [p for p in policy.present(cert, policy.derived) if p not in derived]
            recorded += [p for p in policy.present(cert, policy.not_verified) if p not in recorded]
    n = len(certs)
    nouns = {by_name(c["format"]).noun for c in certs}
    noun = nouns.pop() if len(nouns) == 1 else "sealed file"
    text = f"{n} {noun}{'s' if n > 1 else ''}: schema, content hash"
    if verified:
        text += f", {verified} fields recomputed and compared"
    if derived:
        text += f"; re-derived from the certificate's own fields: {', '.join(derived)}"
    if recorded:
        text += f"; recorded, not verified: {', '.join(recorded)}"
    if unclassified:
        text += f"; claims recomputed, fields not yet listed: {', '.join(sorted(set(unclassified)))}"
    return text


class _Tally:
    """What the bar of ``check`` on a list says after each certificate as it comes (a terminal only): its index and
    verdict, and how many failed so far."""

    def __init__(self) -> None:
        self.failed = 0

    def __call__(self, i: int, problems: list[str]) -> str:
        self.failed += bool(problems)
        return f"[{i}] {'FAILED' if problems else 'confirmed'}" + (f", {self.failed} failed" if self.failed else "")


def cmd_check(ns: argparse.Namespace) -> int:
    from ..certificates.certificate import load
    from ..foundations.parallel import ticking

    with progress_bar(None, f"reading {ns.file}", bar_format="{desc} [{elapsed}]") as bar, ticking(bar):
        data = load(ns.file)  # a list of 50,000 certificates takes a while to parse: the clock moves meanwhile
    certs = data if isinstance(data, list) else [data]
    if not certs:
        raise UsageError(f"{ns.file} holds an empty list")
    refused = _not_checkable(data, ns.file)
    if refused is not None:
        raise UsageError(refused)
    failures = []
    for i, cert in enumerate(progress_map(_check_any, certs, workers(ns), "checking", "cert", _Tally())):
        label = f"[{i}] " if isinstance(data, list) else ""
        failures += [f"{label}{problem}" for problem in cert]
    if failures:
        for line in failures:
            print(f"{ns.file}: FAILED {line}")
        return 1
    print(f"{ns.file}: confirmed ({_confirmed(certs)})")
    return 0


def register(sub: Any) -> None:
    """Add ``certify`` and ``check``."""
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
    p.add_output("--out", kind="file", metavar="FILE", help="write the JSON to FILE (atomically) instead of stdout")
    add_parallel_arguments(p, "a grid's points")
    p.set_defaults(func=cmd_certify)

    p = sub.add_parser(
        "check",
        help="validate a certificate file, recompute it and compare every field",
        description=(
            "Validate FILE (one certificate or a JSON array) against the shipped JSON Schema,\n"
            "verify its content hash, recompute it from its inputs and compare every field exactly\n"
            "(those re-derived from the file's own fields and those only recorded, such as software\n"
            "versions, are named), or name each field that fails. Works for what certify, dp,\n"
            "calibrate, cdp, tradeoff, audit (claims, claims files and canaries) and rdp write with\n"
            "--json or --out."
        ),
        epilog=(
            "Exit codes: 0 confirmed, 1 a field fails (FAILED lines), 2 refused: not JSON, not one\n"
            "of these formats, beyond the readers' limits (docs/cli.md), or recorded settings asking\n"
            "for more work than the commands ever do (docs/certificates.md)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input(p, "file", metavar="FILE")
    add_parallel_arguments(p, "the certificates of a list")
    p.set_defaults(func=cmd_check)

