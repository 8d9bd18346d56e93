"""Sealed one-run audit reports (``rdp-verify audit --canaries FILE --method one-run | one-run-fdp``; schema
``one-run-audit-v2``) and their re-check.

Version 2 (issue 39): the verdict is the conclusion of every test the report prints, and a one-run-fdp verdict is
held against the run's exact curve (q = 1) or its refined (ε, δ) lines instead of a 231-vertex envelope. Version 1
reports are refused by ``check`` in one line (run the audit again): their verdict rule is gone.

A report records the run (or null: the empirical bounds alone), the attack's guesses at every threshold
(``canaries.guesses``: the CSV ``guesses,correct``, one row per threshold in threshold order, with
``canaries.canary_count`` the number m of canaries; everything :func:`~rdp_verify.tradeoff.one_run.audit_one_run`
reads), the level rule, the confidence and δ, then the audit: the proven empirical ε (and for ``one-run-fdp`` the
Gaussian-DP μ and the ε of G_μ at δ), and with a run the verdict. ``canaries.file`` and ``canaries.sha256`` say
where the guesses came from and are recorded, not verified, and so are the threshold texts of the named
thresholds (``strongest.threshold``, ``rejecting.threshold``: the score or the counts row's cell; a threshold is
identified by its ``rank``, its row in ``canaries.guesses``, which is verified).

:func:`check_one_run_report` is the schema and content hash, then :func:`one_run_report` repeated from the
recorded run, guesses, rule, confidence and δ (the run's curve composed as the audit composes it; the searches
in double precision, each reported number proven in Arb again), which must equal the report field for field.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from .. import __version__
from ..certificates.certificate import check_against, seal
from ..certificates.fields import FieldPolicy
from ..foundations.inputs import InputError, parse_delta, parse_rational
from ..foundations.run import Phase
from .one_run import Guesses, audit_one_run

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "POLICY", "one_run_report", "guesses_csv", "check_one_run_report",
           "recompute", "RUN_FPR"]

FORMAT = "rdp_verify one-run audit"
FORMAT_VERSION = 2
SCHEMA = "one-run-audit-v2"
RUN_FPR = Fraction(1, 10**10)  # the run's curve is composed for this false-positive rate (its envelope's reach)


def guesses_csv(g: Guesses) -> str:
    """The guesses as the CSV ``guesses,correct`` (one row per threshold, in the file's threshold order: row j is
    rank j) that :func:`recompute` reads."""
    rows = (f"{a},{b}" for a, b in zip(g.n_guess.tolist(), g.n_correct.tolist()))
    return "guesses,correct\n" + "\n".join(rows) + "\n"


def one_run_report(phases: Sequence[Phase] | None, counts: Sequence[Any] | Guesses, *, method: str,
                   confidence: Fraction, delta: Fraction, rule: str, thresholds_from: str,
                   file: str | None = None, sha256: str | None = None,
                   mapper: Callable[..., Any] = map) -> tuple[Any, dict[str, Any]]:
    """The run's trade-off curve (None without a run) and the sealed report of the one-run audit (module docstring)."""
    from ..curves.accountant import check_run
    from .curve import tradeoff

    g = counts if isinstance(counts, Guesses) else Guesses.from_counts(counts)
    trade = None
    run = None
    if phases is not None:
        run = check_run(phases)
        trade = tradeoff(run, fprs=[RUN_FPR], mapper=mapper)
    audit = audit_one_run(trade, g, method=method, confidence=confidence, delta=delta, rule=rule)
    report = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run": None if run is None else [p.to_json() for p in run],
        "canaries": {"file": file, "sha256": sha256, "thresholds_from": thresholds_from, "canary_count": g.m,
                     "guesses": guesses_csv(g)},
        **audit,
        "software": {"rdp_verify": __version__},
    }
    return trade, seal(report, SCHEMA)


POLICY = FieldPolicy(
    verified=("format", "format_version", "run", "run.**", "canaries.thresholds_from", "canaries.canary_count",
              "canaries.guesses", "method", "confidence", "thresholds", "canary_count", "level_rule", "level",
              "assumption", "delta", "empirical_epsilon_lower", "strongest", "strongest.rank", "strongest.guesses",
              "strongest.correct", "strongest.p_value_upper", "gdp_mu_lower", "gaussian_epsilon_lower",
              "proven_epsilon.*", "rejecting", "rejecting.rank", "rejecting.guesses", "rejecting.correct",
              "rejecting.p_value_upper", "verdict", "verdict_reason", "content_hash"),
    not_verified=("canaries.file", "canaries.sha256", "strongest.threshold", "rejecting.threshold", "software.*"),
)


def _guesses(canaries: dict[str, Any]) -> Guesses:
    text = canaries["guesses"]
    lines = text.split("\n")
    if lines[0] != "guesses,correct" or lines[-1] != "" or len(lines) < 3:
        raise InputError("canaries.guesses: the CSV guesses,correct with at least one row")
    try:
        cells = np.array([line.split(",") for line in lines[1:-1]], dtype=object)
        if cells.ndim != 2 or cells.shape[1] != 2 or not all(c.isascii() and c.isdigit() and len(c) <= 15
                                                             for c in cells.ravel()):
            raise ValueError
        n_guess, n_correct = cells[:, 0].astype(np.int64), cells[:, 1].astype(np.int64)
    except ValueError:
        raise InputError("canaries.guesses: guesses and correct are whole numbers, two a row") from None
    m = int(canaries["canary_count"])
    if not (m >= 1 and np.all(n_correct >= 0) and np.all(n_correct <= n_guess) and np.all(n_guess <= m)):
        raise InputError("canaries.guesses: need 0 <= correct <= guesses <= canary_count")
    report_texts = {e["rank"] - 1: e["threshold"] for e in (canaries.get("_named") or [])}
    return Guesses(lambda j: report_texts.get(j, f"#{j + 1}"), n_guess, n_correct, m)


def recompute(report: dict[str, Any]) -> dict[str, Any]:
    """The report :func:`one_run_report` writes for the recorded inputs (raises InputError on bad inputs)."""
    canaries = dict(report["canaries"])
    canaries["_named"] = [e for e in (report.get("strongest"), report.get("rejecting")) if isinstance(e, dict)]
    phases = None if report["run"] is None else [Phase.from_json(p) for p in report["run"]]
    return one_run_report(phases, _guesses(canaries), method=report["method"],
                          confidence=parse_rational(report["confidence"], "confidence"),
                          delta=parse_delta(report["delta"]), rule=report["level_rule"],
                          thresholds_from=canaries["thresholds_from"], file=canaries["file"],
                          sha256=canaries["sha256"])[1]


def check_one_run_report(report: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means confirmed (module docstring)."""
    return check_against(report, SCHEMA, recompute, POLICY.compare)
