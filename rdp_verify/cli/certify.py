"""``rdp-verify certify`` and ``rdp-verify check``: one-step certificates and their re-verification."""

from __future__ import annotations

import argparse
import itertools
import sys
from typing import Any, Callable

from ..foundations.inputs import SGM, parse_alphas, parse_dps, parse_q, parse_sigma
from ..foundations.parallel import progress_map
from .common import UsageError, add_parallel_arguments, emit, split_list, workers

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


def _checks() -> dict[str, tuple[Callable[[Any], list[str]], Any]]:
    """Every sealed format check accepts: its check and its field lists (imported on first use: start-up stays light)."""
    from ..calibration.certificate import FORMAT as CALIBRATION_FORMAT
    from ..calibration.certificate import POLICY as CALIBRATION_POLICY
    from ..calibration.certificate import check_calibration
    from ..cdp.certificate import FORMAT as CDP_FORMAT
    from ..cdp.check import POLICY as CDP_POLICY
    from ..cdp.check import check_claim
    from ..certificates.certificate import POLICY, check_certificate
    from ..certificates.certify import FORMAT
    from ..curves.certificate import FORMAT as RUN_FORMAT
    from ..curves.certificate import POLICY as RUN_POLICY
    from ..curves.certificate import check_run_certificate
    from ..tradeoff.certificate import FORMAT as TRADEOFF_FORMAT
    from ..tradeoff.certificate import POLICY as TRADEOFF_POLICY
    from ..tradeoff.certificate import check_tradeoff_certificate

    return {FORMAT: (check_certificate, POLICY), CALIBRATION_FORMAT: (check_calibration, CALIBRATION_POLICY),
            CDP_FORMAT: (check_claim, CDP_POLICY), RUN_FORMAT: (check_run_certificate, RUN_POLICY),
            TRADEOFF_FORMAT: (check_tradeoff_certificate, TRADEOFF_POLICY)}


def _format(cert: Any) -> str:
    """The format of a certificate by its ``format`` field; anything else is checked (and refused) as the core one."""
    from ..certificates.certify import FORMAT

    kind = cert.get("format") if isinstance(cert, dict) else None
    return kind if kind in _checks() else FORMAT


def _check_any(cert: Any) -> list[str]:
    """Check a certificate of any kind rdp_verify writes."""
    return _checks()[_format(cert)][0](cert)


def _confirmed(certs: list[Any]) -> str:
    """What was verified in confirmed certificates: counts of verified fields and the fields only recorded."""
    verified, recorded, unclassified = 0, [], []
    for cert in certs:
        policy = _checks()[_format(cert)][1]
        if policy is None:
            unclassified.append(cert["format"])
            continue
        verified += policy.verified_count(cert)
        recorded += [p for p in policy.not_verified if p not in recorded]
    n = len(certs)
    text = f"{n} certificate{'s' if n > 1 else ''}: schema, content hash"
    if verified:
        text += f", {verified} fields recomputed and compared"
    if recorded:
        text += f"; recorded, not verified: {', '.join(recorded)}"
    if unclassified:
        text += f"; claims recomputed, fields not yet listed: {', '.join(sorted(set(unclassified)))}"
    return text


def cmd_check(ns: argparse.Namespace) -> int:
    from ..certificates.certificate import CertificateError, load

    try:
        data = load(ns.file)
    except CertificateError as exc:
        raise UsageError(str(exc)) from None
    certs = data if isinstance(data, list) else [data]
    if not certs:
        raise UsageError(f"{ns.file} holds an empty list")
    failures = []
    for i, cert in enumerate(progress_map(_check_any, certs, workers(ns), "checking")):
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
            "verify its content hash, recompute it from its inputs and compare every field\n"
            "(those only recorded, such as software versions, are listed), or name each field\n"
            "that fails. Works for the certificates of certify, dp, calibrate and cdp."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE")
    add_parallel_arguments(p, "the certificates of a list")
    p.set_defaults(func=cmd_check)

