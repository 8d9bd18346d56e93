"""Sealed canary audit reports (``rdp-verify audit --canaries``; schema ``canary-audit-v2``) and their re-check.

A report records the run, what the audit reads from the canary file, the confidence, δ and the level rule,
then :func:`~rdp_verify.tradeoff.canaries.audit_canaries`' verdict, boxes, empirical ε and the proven ε.
What the audit reads from the file is recorded so that a report is re-verified without it:

* counts rows (``canaries.thresholds_from`` = ``counts``): ``canaries.counts``, the CSV
  ``threshold,tp,fp,tn,fn`` that :func:`~rdp_verify.tradeoff.canaries.parse_canaries` reads, one row per threshold;
* scores (``thresholds_from`` = ``scores``): ``canaries.sequence``, the canaries' membership in decreasing
  score order, one token per distinct score: ``1`` (one member), ``0`` (one non-member) or ``(a:b)`` (a members
  and b non-members sharing that score, a + b ≥ 2). The counts at every threshold are its running sums, and
  the audit reads nothing else (the levels, bounds, verdict and ε depend on the counts only), so a million
  canaries with distinct scores take 1 MB. The score at a listed box (``score``) is recorded, not verified
  (as the file's name and hash are): the box's ``rank`` (1 for the highest score) and counts are verified.

``canaries.file`` and ``canaries.sha256`` (the file's name and the SHA-256 of its bytes) say where the counts
came from and are recorded, not verified.

:func:`check_canary_report` is :func:`~rdp_verify.certificates.certificate.integrity_errors` (schema and
hash), then :func:`canary_report` repeated from the recorded run, counts, confidence, δ and level rule (the
run's curve composed on the grid the audit chooses, exact integers and Arb; each Clopper–Pearson bound proven
in Arb), which must equal the report field for field; as fast as the audit itself (seconds at a million
canaries). Reports of format version 1 (``canary-audit-v1``, written before issue 30: every threshold's counts,
counts rows at the level γ/(2m), every box below the curve counted) are re-checked as version 1 computed
them; there, counts whose thresholds are said to be the observed scores must be the cumulative counts of one
list of scores (thresholds decreasing, members and non-members the same at each), else the report is refused.
"""

from __future__ import annotations

import csv
import io
import re
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from .. import __version__
from ..certificates.certificate import check_against, seal
from ..certificates.fields import FieldPolicy
from ..curves.accountant import check_run
from ..foundations.files import MAX_ROWS
from ..foundations.inputs import InputError, parse_delta, parse_rational
from ..foundations.run import Phase
from .canaries import LEVEL_RULES, Counts, CountTable, audit_canaries, audit_canaries_v1, parse_canaries
from .curve import TradeOff, tradeoff

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "SCHEMA_V1", "POLICY", "canary_report", "counts_csv",
           "sequence_text", "parse_sequence", "check_canary_report", "recompute"]

FORMAT = "rdp_verify canary audit"
FORMAT_VERSION = 2
SCHEMA = "canary-audit-v2"
SCHEMA_V1 = "canary-audit-v1"
_TIE = re.compile(r"\(([0-9]{1,15}):([0-9]{1,15})\)")


def counts_csv(counts: Sequence[Counts]) -> str:
    """The counts as the CSV ``threshold,tp,fp,tn,fn`` (one row per threshold) that parse_canaries reads back."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("threshold", "tp", "fp", "tn", "fn"))
    writer.writerows((c.threshold, c.tp, c.fp, c.tn, c.fn) for c in counts)
    return out.getvalue()


def sequence_text(table: CountTable) -> str:
    """The scores' thresholds as the membership sequence of the module docstring (one token per threshold)."""
    tp_step = np.diff(table.tp, prepend=0)
    fp_step = np.diff(table.fp, prepend=0)
    singles = (tp_step.astype(np.uint8) + ord("0")).tobytes().decode("ascii")  # right wherever one canary
    ties = np.flatnonzero(tp_step + fp_step != 1)
    parts, at = [], 0
    for i in ties.tolist():
        parts += [singles[at:i], f"({int(tp_step[i])}:{int(fp_step[i])})"]
        at = i + 1
    return "".join(parts) + singles[at:]


def parse_sequence(text: str) -> CountTable:
    """The counts at every threshold of a membership sequence (module docstring); refused in one line when it is
    not one (an unknown token, a tie of fewer than two canaries, no member or no non-member, more canaries
    than a canary file may hold)."""
    if not isinstance(text, str) or not text:
        raise InputError("canaries.sequence: empty (one token per distinct score is needed)")
    ties: list[tuple[int, int]] = []

    def tie(match: re.Match[str]) -> str:
        ties.append((int(match.group(1)), int(match.group(2))))
        return "t"

    singles = _TIE.sub(tie, text) if "t" not in text else "?"
    if not re.fullmatch(r"[01t]+", singles):
        raise InputError("canaries.sequence: tokens are 1, 0 or (a:b) with whole numbers a, b")
    if any(a + b < 2 for a, b in ties):
        raise InputError("canaries.sequence: a tie (a:b) holds at least two canaries")
    codes = np.frombuffer(singles.encode("ascii"), dtype=np.uint8)
    tp_step = (codes == ord("1")).astype(np.int64)
    fp_step = (codes == ord("0")).astype(np.int64)
    where = np.flatnonzero(codes == ord("t"))
    if ties:
        tp_step[where] = [a for a, _ in ties]
        fp_step[where] = [b for _, b in ties]
    tp, fp = np.cumsum(tp_step), np.cumsum(fp_step)
    members, non_members = int(tp[-1]), int(fp[-1])
    if members + non_members > MAX_ROWS:
        raise InputError(f"canaries.sequence: more than {MAX_ROWS} canaries, the most a canary file holds")
    if members == 0 or non_members == 0:
        raise InputError("canaries.sequence: the canary scores need both members and non-members")
    return CountTable(tp, fp, non_members - fp, members - tp, None, from_scores=True)


def canary_report(phases: Sequence[Phase], counts: Sequence[Counts], *, confidence: Fraction, delta: Fraction,
                  fixed_in_advance: bool = False, file: str | None = None, sha256: str | None = None,
                  mapper: Callable[..., Any] = map,
                  tick: Callable[[int], None] | None = None) -> tuple[TradeOff, dict[str, Any]]:
    """The run's certified trade-off curve (composed for the smallest false-positive rate the counts can show)
    and the sealed report of the attack's counts against it (module docstring)."""
    run = check_run(phases)
    table = CountTable.of(counts)
    if not len(table):
        raise InputError("no thresholds to audit")
    smallest = Fraction(1, int(table.non_members.max()))
    trade = tradeoff(run, fprs=[smallest], mapper=mapper)
    audit = audit_canaries(trade, table, confidence=confidence, delta=delta, fixed_in_advance=fixed_in_advance,
                           tick=tick)
    recorded = ({"thresholds_from": "scores", "sequence": sequence_text(table)} if table.from_scores else
                {"thresholds_from": "counts", "counts": counts_csv(table)})
    report = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run": [p.to_json() for p in run],
        "canaries": {"file": file, "sha256": sha256, **recorded},
        **audit,
        "software": {"rdp_verify": __version__},
    }
    return trade, seal(report, SCHEMA)


_BOX = ("rank", "threshold", "tp", "fp", "tn", "fn", "fpr_upper", "fnr_upper", "certified_fnr_lower")
POLICY = FieldPolicy(
    verified=("format", "format_version", "run.**", "canaries.thresholds_from", "canaries.counts",
              "canaries.sequence", "verdict", "verdict_reason", "confidence", "thresholds", "level_rule",
              "bonferroni_level", "assumption", "below_curve", *(f"below_curve.*.{k}" for k in _BOX), "strongest",
              *(f"strongest.{k}" for k in _BOX), "delta", "empirical_epsilon_lower", "proven_epsilon.*",
              "auditing_gap", "content_hash"),
    not_verified=("canaries.file", "canaries.sha256", "below_curve.*.score", "strongest.score", "software.*"),
)


def _from_scores_v1(counts: CountTable) -> CountTable:
    """Version 1: counts marked as read off observed scores, refused unless they are the cumulative counts of one
    list."""
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
    return counts.as_scores()


def _recompute_v1(report: dict[str, Any]) -> dict[str, Any]:
    canaries = report["canaries"]
    counts = parse_canaries(canaries["counts"])
    if canaries["thresholds_from"] == "scores":
        for c in counts:
            parse_rational(c.threshold, "canaries.counts: threshold")
        counts = _from_scores_v1(counts)
    run = check_run([Phase.from_json(p) for p in report["run"]])
    trade = tradeoff(run, fprs=[Fraction(1, max(c.non_members for c in counts))])
    audit = audit_canaries_v1(trade, counts, confidence=parse_rational(report["confidence"], "confidence"),
                              delta=parse_delta(report["delta"]))
    fresh = {"format": FORMAT, "format_version": 1, "run": [p.to_json() for p in run],
             "canaries": {"file": canaries["file"], "sha256": canaries["sha256"],
                          "thresholds_from": "scores" if counts.from_scores else "counts",
                          "counts": counts_csv(counts)},
             **audit, "software": {"rdp_verify": __version__}}
    return seal(fresh, SCHEMA_V1)


def recompute(report: dict[str, Any]) -> dict[str, Any]:
    """The report :func:`canary_report` writes for the recorded run, counts, confidence, δ and level rule (version
    1: as version 1 computed it); raises InputError on bad inputs."""
    if report.get("format_version") == 1:
        return _recompute_v1(report)
    canaries = report["canaries"]
    if canaries["thresholds_from"] == "scores":
        counts = parse_sequence(canaries["sequence"])
    else:
        counts = parse_canaries(canaries["counts"], "canaries.counts")
    rule = report["level_rule"]
    if rule not in LEVEL_RULES:
        raise InputError(f"level_rule {rule!r} is not one of {', '.join(LEVEL_RULES)}")
    return canary_report([Phase.from_json(p) for p in report["run"]], counts,
                         confidence=parse_rational(report["confidence"], "confidence"),
                         delta=parse_delta(report["delta"]), fixed_in_advance=rule == "fixed-in-advance",
                         file=canaries["file"], sha256=canaries["sha256"])[1]


def check_canary_report(report: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (module docstring)."""
    schema = SCHEMA_V1 if isinstance(report, dict) and report.get("format_version") == 1 else SCHEMA
    return check_against(report, schema, recompute, POLICY.compare)
