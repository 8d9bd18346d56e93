"""Sealed canary audit reports (``rdp-verify audit --canaries``; schema ``canary-audit-v1``) and their re-check.

A report records the run, the attack's confusion counts at every threshold (``canaries.counts``: the CSV
``threshold,tp,fp,tn,fn`` that :func:`~rdp_verify.tradeoff.canaries.parse_canaries` reads, one row per
threshold; with ``canaries.thresholds_from`` = ``scores`` when the thresholds were the observed scores, which
sets the Bonferroni level), the confidence and δ, then :func:`~rdp_verify.tradeoff.canaries.audit_canaries`'
verdict, boxes, empirical ε and the proven ε. The counts are everything the audit reads from the canary file,
so a report is re-verified without it; ``canaries.file`` and ``canaries.sha256`` (the file's name and the
SHA-256 of its bytes) say where they came from and are recorded, not verified.

:func:`check_canary_report` is :func:`~rdp_verify.certificates.certificate.integrity_errors` (schema and
hash), then :func:`canary_report` repeated from the recorded run, counts, confidence and δ (the run's curve
composed on the grid the audit chooses, exact integers and Arb; each Clopper–Pearson bound proven in Arb),
which must equal the report field for field. Counts whose thresholds are said to be the observed scores must
be the cumulative counts of one list of scores (thresholds decreasing, members and non-members the same at
each), else the report is refused.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from fractions import Fraction
from typing import Any, Callable, Sequence

from .. import __version__
from ..certificates.certificate import check_against, seal
from ..certificates.fields import FieldPolicy
from ..curves.accountant import check_run
from ..foundations.inputs import InputError, parse_delta, parse_rational
from ..foundations.run import Phase
from .canaries import Counts, audit_canaries, parse_canaries
from .curve import TradeOff, tradeoff

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "POLICY", "canary_report", "counts_csv", "check_canary_report",
           "recompute"]

FORMAT = "rdp_verify canary audit"
FORMAT_VERSION = 1
SCHEMA = "canary-audit-v1"


def counts_csv(counts: Sequence[Counts]) -> str:
    """The counts as the CSV ``threshold,tp,fp,tn,fn`` (one row per threshold) that parse_canaries reads back."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("threshold", "tp", "fp", "tn", "fn"))
    writer.writerows((c.threshold, c.tp, c.fp, c.tn, c.fn) for c in counts)
    return out.getvalue()


def canary_report(phases: Sequence[Phase], counts: Sequence[Counts], *, confidence: Fraction, delta: Fraction,
                  file: str | None = None, sha256: str | None = None,
                  mapper: Callable[..., Any] = map) -> tuple[TradeOff, dict[str, Any]]:
    """The run's certified trade-off curve (composed for the smallest false-positive rate the counts can show)
    and the sealed report of the attack's counts against it (module docstring)."""
    run = check_run(phases)
    smallest = Fraction(1, max(c.non_members for c in counts))
    trade = tradeoff(run, fprs=[smallest], mapper=mapper)
    audit = audit_canaries(trade, counts, confidence=confidence, delta=delta)
    report = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run": [p.to_json() for p in run],
        "canaries": {"file": file, "sha256": sha256,
                     "thresholds_from": "scores" if counts[0].from_scores else "counts", "counts": counts_csv(counts)},
        **audit,
        "software": {"rdp_verify": __version__},
    }
    return trade, seal(report, SCHEMA)


POLICY = FieldPolicy(
    verified=("format", "format_version", "run.**", "canaries.thresholds_from", "canaries.counts", "verdict",
              "verdict_reason", "confidence", "thresholds", "bonferroni_level", "assumption", "below_curve",
              "below_curve.*.*", "strongest", "strongest.*", "delta", "empirical_epsilon_lower", "proven_epsilon.*",
              "auditing_gap", "content_hash"),
    not_verified=("canaries.file", "canaries.sha256", "software.*"),
)


def _from_scores(counts: list[Counts]) -> list[Counts]:
    """The counts marked as read off observed scores, refused unless they are the cumulative counts of one list."""
    first = counts[0]
    for before, c in zip([None, *counts], counts):
        if (c.members, c.non_members) != (first.members, first.non_members):
            raise InputError("canaries.counts: with thresholds from scores, every row has the same members and "
                             "non-members")
        if before is not None and not (Fraction(c.threshold) < Fraction(before.threshold)
                                       and (c.tp, c.fp) >= (before.tp, before.fp) and c.tp + c.fp > before.tp + before.fp):
            raise InputError("canaries.counts: with thresholds from scores, thresholds decrease and counts grow")
    if counts[-1].fn or counts[-1].tn:
        raise InputError("canaries.counts: with thresholds from scores, the lowest score predicts every canary a member")
    return [replace(c, from_scores=True) for c in counts]


def recompute(report: dict[str, Any]) -> dict[str, Any]:
    """The report :func:`canary_report` writes for the recorded run, counts, confidence and δ (raises InputError
    on bad inputs)."""
    canaries = report["canaries"]
    counts = parse_canaries(canaries["counts"])
    if canaries["thresholds_from"] == "scores":
        for c in counts:
            parse_rational(c.threshold, "canaries.counts: threshold")
        counts = _from_scores(counts)
    return canary_report([Phase.from_json(p) for p in report["run"]], counts,
                         confidence=parse_rational(report["confidence"], "confidence"),
                         delta=parse_delta(report["delta"]), file=canaries["file"], sha256=canaries["sha256"])[1]


def check_canary_report(report: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (module docstring)."""
    return check_against(report, SCHEMA, recompute, POLICY.compare)
