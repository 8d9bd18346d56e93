"""Compare float64 (ε, δ) accountants (peers) against proven ε(δ) brackets of whole runs.

Each peer is set only against runs of the sampler and neighbour relation it accounts
(:data:`~rdp_verify.reference.dp_peers.DP_PEERS`: Poisson add/remove for most; dp_accounting's
``REPLACE_ONE`` PLD and its RDP for fixed-size batches for the others). For each run (q, σ, T) and δ, a peer's ε (:mod:`rdp_verify.reference.dp_peers`: what the library
reports with its default settings) is set against our proven bracket [lo, hi] ∋ ε(δ)
(:func:`rdp_verify.curves.accountant.bracket`: connect-the-dots upper bound, lowered-chord lower
bound, exact composition). On the default grid the brackets are the packaged golden (ε, δ) rows
(:mod:`rdp_verify.reference.golden_dp`); on a grid of the user's they are computed (relative width
≤ 1e-3).

Classification of the peer's value x (exact rational comparison of the double x):

* ``exact``        lo ≤ x ≤ hi + e, with e the peer's own stated absolute error on ε (0.01 for the
  PRV accountants' ``eps_error``; 0 for peers that state none);
* ``conservative`` x > hi + e: over-reports ε (a true but loose guarantee; beyond what the peer says
  its error is);
* ``unsafe``       x < lo: under-reports ε, so the claim "(x, δ)-DP" is **proven false** (whatever
  error the peer states: a reported ε is used as a guarantee);
* ``failed``       inf, NaN, or the peer raised (e.g. dp_accounting's PLD returns inf and
  prv_accountant refuses below δ ≈ 1e-15).

A peer that also reports a lower value (PRV's ``eps_lower``) is checked too: ``lower_above`` marks a
lower value above our proven upper bound, i.e. the peer's own error interval misses the truth.
The CLI (``rdp-verify compare --dp``) prints a table, and writes the points as JSON (``--json``) and
a plot (``--plot``).

**Event trees.** :func:`compare_events` classifies the event peers
(:data:`~rdp_verify.reference.dp_peers.EVENT_PEERS`: dp_accounting's PLD and RDP accountants) the same way on the
golden event vectors (:func:`default_event_targets`, :mod:`rdp_verify.reference.golden_events`): each row's tree,
composed once under its neighbouring relation, against its proven bracket. A tree the peer refuses is
``unsupported`` (:data:`EVENT_CLASSES`), counted apart from the four classes: the peer makes no claim there.
:func:`event_table` prints the counts and where each class other than ``exact`` occurs, by case and δ, without the
peers' digits (which move with the NumPy and SciPy builds).
"""

from __future__ import annotations

import math
import os
import textwrap
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from importlib.resources import files
from itertools import product
from typing import Any, Sequence

from ..curves.accountant import bracket
from ..events.model import DpEvent, NeighboringRelation
from ..events.read import render, to_json
from ..foundations.decimals import decimal_text
from ..foundations.figures import new_figure, save_figure
from ..foundations.inputs import InputError, fraction_text
from ..foundations.parallel import Pool, progress_map
from ..foundations.run import Phase
from . import golden_dp, golden_events
from .dp_peers import DP_PEERS, EVENT_PEERS, PeerEpsilon, PeerRefused, load_dp, load_event_peer

__all__ = ["CLASSES", "DpPoint", "Target", "classify", "default_targets", "grid_targets", "applies", "compare_dp",
           "summary", "plot", "DATA", "EVENT_CLASSES", "EVENT_DATA", "EventTarget", "default_event_targets",
           "compare_events", "event_table", "at_an_end", "NOISE"]

CLASSES = ("exact", "conservative", "unsafe", "failed")
EVENT_CLASSES = (*CLASSES, "unsupported")  # unsupported: the peer refuses the tree (no claim made)
DATA = f"data/golden-dp-v{golden_dp.FORMAT_VERSION}.csv"  # a symlink to certificates/golden-dp-v4.csv
EVENT_DATA = f"data/golden-events-v{golden_events.FORMAT_VERSION}.csv"  # a symlink to certificates/golden-events-v2.csv
_DIGITS = 12


@dataclass(frozen=True)
class Target:
    """A run at one δ with its proven ε bracket."""

    phase: Phase
    delta: Fraction
    lower: Fraction
    upper: Fraction

    def describe(self) -> str:
        p = self.phase
        kind = "" if p.default else f" {p.sampler}/{p.neighbours}"
        return (f"q={fraction_text(p.q)} sigma={fraction_text(p.sigma)} steps={p.steps}{kind} "
                f"delta={decimal_text(self.delta, 3)}")

    def inputs_json(self) -> dict[str, Any]:
        return self.phase.to_json()

    def label(self) -> str:
        p = self.phase
        return f"{float(p.q):g}/{float(p.sigma):g}/{p.steps}/{float(self.delta):.0e}"


@dataclass(frozen=True)
class EventTarget:
    """An event tree under a neighbouring relation, at one δ, with its proven ε bracket (a golden event row)."""

    case: str
    event: DpEvent
    relation: NeighboringRelation
    delta: Fraction
    lower: Fraction
    upper: Fraction

    def describe(self) -> str:
        return f"{self.case}: {render(self.event)}; {self.relation.name} delta={decimal_text(self.delta, 3)}"

    def inputs_json(self) -> dict[str, Any]:
        return {"case": self.case, "event": to_json(self.event), "neighboring_relation": self.relation.name}

    def label(self) -> str:
        return f"{self.case}/{float(self.delta):.0e}"


@dataclass(frozen=True)
class DpPoint:
    """One peer at one target: its ε (or error), the class."""

    peer: str
    target: Target | EventTarget
    value: float | None  # None when the peer raised
    error: str | None  # the exception, as "Type: message"
    stated_error: float | None
    peer_lower: float | None
    classification: str

    @property
    def lower_above(self) -> bool:
        """The peer's own lower value exceeds our proven upper bound."""
        return (self.peer_lower is not None and math.isfinite(self.peer_lower)
                and Fraction(self.peer_lower) > self.target.upper)

    @property
    def relative_error(self) -> float | None:
        """(x − ε)/ε with ε the midpoint of our bracket; None when x is not finite."""
        if self.value is None or not math.isfinite(self.value):
            return None
        mid = (self.target.lower + self.target.upper) / 2
        return float((Fraction(self.value) - mid) / mid)

    def describe(self) -> str:
        got = self.error if self.value is None else repr(self.value)
        t = self.target
        stated = "" if self.stated_error is None else f" (stated error {self.stated_error:g})"
        rel = "" if self.relative_error is None else f", relative error {self.relative_error:+.3g}"
        low = f"; its lower value {self.peer_lower!r} is above the proven upper end" if self.lower_above else ""
        return (f"{t.describe()}: {self.peer} {got}{stated}, proven [{decimal_text(t.lower, 10, 'down')}, "
                f"{decimal_text(t.upper, 10, 'up')}]{rel}{low}")

    def to_json(self) -> dict[str, Any]:
        t = self.target
        return {
            "peer": self.peer, **t.inputs_json(), "delta": fraction_text(t.delta),
            "peer_value": None if self.value is None else repr(self.value),
            "peer_error": self.error, "peer_stated_error": self.stated_error,
            "peer_lower": None if self.peer_lower is None else repr(self.peer_lower),
            "epsilon_lower": decimal_text(t.lower, _DIGITS, "down"),
            "epsilon_upper": decimal_text(t.upper, _DIGITS, "up"),
            "relative_error": self.relative_error, "classification": self.classification,
            "lower_above_proven_upper": self.lower_above,
        }


def classify(value: float | None, lower: Fraction, upper: Fraction, stated_error: float | None = None) -> str:
    """One of :data:`CLASSES` for a peer's ε against our bracket (module docstring)."""
    if value is None or not math.isfinite(value):
        return "failed"
    x = Fraction(value)
    if x < lower:
        return "unsafe"
    if x > upper + Fraction(stated_error or 0):
        return "conservative"
    return "exact"


def default_targets() -> list[Target]:
    """The default grid: the packaged golden (ε, δ) rows, with their proven brackets."""
    text = files(__package__).joinpath(DATA).read_text(encoding="utf-8")
    return [Target(p, d, lo, hi) for p, d, lo, hi in golden_dp.parse_rows(text)]


def _target(point: tuple[Phase, Fraction]) -> Target:
    phase, delta = point
    b = bracket([phase], delta=delta)
    if b.upper is None:
        raise ArithmeticError(f"no finite upper bound for {phase} at delta={delta}")
    return Target(phase, delta, b.lower, b.upper)


def grid_targets(qs: Sequence[Fraction], sigmas: Sequence[Fraction], steps: Sequence[int],
                 deltas: Sequence[Fraction], jobs: int | Pool = 1, *, neighbours: str = "add-remove",
                 dataset_size: int | None = None) -> list[Target]:
    """Proven brackets on the product grid q × σ × T × δ (in that order), computed here: Poisson sampling, or
    with a ``dataset_size`` N fixed-size batches of q·N (which must be whole)."""
    def phase(q: Fraction, s: Fraction, t: int) -> Phase:
        if dataset_size is None:
            return Phase(q, s, t, neighbours=neighbours)
        batch = q * dataset_size
        if batch.denominator != 1:
            raise InputError(f"q={fraction_text(q)} times dataset size {dataset_size} is not a whole batch size")
        return Phase(q, s, t, "fixed", neighbours, int(batch), dataset_size)

    points = [(phase(q, s, t), d) for q, s, t, d in product(qs, sigmas, steps, deltas)]
    return progress_map(_target, points, jobs, "proven brackets")


def applies(name: str, phase: Phase) -> bool:
    """Whether the peer accounts runs of this phase's sampler and neighbour relation."""
    peer = DP_PEERS[name]
    return (peer.sampler, peer.neighbours) == (phase.sampler, phase.neighbours)


def _call(name: str, target: Target) -> tuple[PeerEpsilon | None, str | None]:
    p = target.phase
    sizes = (p.batch_size, p.dataset_size) if p.sampler == "fixed" else ()
    try:
        return load_dp(name)([(float(p.q), float(p.sigma), p.steps, *sizes)], float(target.delta)), None
    except Exception as exc:  # any failure of the peer is a finding, not a crash
        return None, f"{type(exc).__name__}: {exc}"


def _compare_target(args: tuple[Target, tuple[str, ...]]) -> list[DpPoint]:
    target, names = args
    out = []
    for name in (n for n in names if applies(n, target.phase)):
        got, error = _call(name, target)
        value = None if got is None else got.epsilon
        stated = None if got is None else got.error
        out.append(DpPoint(name, target, value, error, stated, None if got is None else got.lower,
                           classify(value, target.lower, target.upper, stated)))
    return out


def compare_dp(names: Sequence[str], targets: Sequence[Target], jobs: int | Pool = 1) -> list[DpPoint]:
    """Every peer in ``names`` at every target, on ``jobs`` processes or a Pool."""
    unknown = [n for n in names if n not in DP_PEERS]
    if unknown:
        raise ValueError(f"unknown (epsilon, delta) peer {unknown[0]!r}")
    items = [(t, tuple(names)) for t in targets]
    return [p for group in progress_map(_compare_target, items, jobs, "comparing") for p in group]


def summary(points: Sequence[DpPoint], grid: str, worst: int = 3, classes: Sequence[str] = CLASSES) -> str:
    """Counts per peer and class, then every defect found: failures, unsafe values, the worst over-reports
    (``classes``: the columns, :data:`EVENT_CLASSES` for event trees)."""
    peers = list(dict.fromkeys(p.peer for p in points))
    counts = Counter((p.peer, p.classification) for p in points)
    width = max(len(n) for n in peers + ["peer"])
    lines = [f"grid: {grid}",
             "exact: inside the proven bracket, or above it by at most the peer's stated error", "",
             f"{'peer':<{width}}  " + "  ".join(f"{c:>12}" for c in classes) + "  worst over-report"]
    for n in peers:
        rel = [p.relative_error for p in points if p.peer == n and p.relative_error is not None]
        lines.append(f"{n:<{width}}  " + "  ".join(f"{counts[n, c]:>12}" for c in classes)
                     + (f"  {max(rel):+.3g}" if rel else "  -"))
    for name in peers:
        mine = [p for p in points if p.peer == name]
        for cls in ("unsafe", "failed", "conservative", "unsupported"):
            found = [p for p in mine if p.classification == cls]
            if not found:
                continue
            lines += ["", f"{name}: {cls} at {len(found)} of {len(mine)} points"]
            if cls in ("failed", "unsupported"):
                reasons = Counter(p.error.split(". ")[0][:100] if p.error else repr(p.value) for p in found)
                lines += [f"  {k} ({v}x)" for k, v in reasons.most_common()]
                deltas = sorted({p.target.delta for p in found}, reverse=True)
                lines.append("  at delta " + ", ".join(decimal_text(d, 3) for d in deltas))
                continue
            ranked = sorted(found, key=lambda p: abs(p.relative_error or 0), reverse=True)[:worst]
            lines += [f"  {'worst' if i == 0 else '     '}: {p.describe()}" for i, p in enumerate(ranked)]
        wrong = [p for p in mine if p.lower_above]
        if wrong:
            lines += ["", f"{name}: its lower value lies above the proven upper end at {len(wrong)} "
                      f"point{'s' * (len(wrong) > 1)}"]
            lines += [f"  {p.describe()}" for p in wrong[:worst]]
    return "\n".join(lines) + "\n"


# -- event trees --------------------------------------------------------------------------------------


def default_event_targets() -> list[EventTarget]:
    """The golden event rows (:mod:`rdp_verify.reference.golden_events`), with their proven brackets."""
    text = files(__package__).joinpath(EVENT_DATA).read_text(encoding="utf-8")
    return [EventTarget(r.case, r.event, r.relation, r.delta, r.lower, r.upper)
            for r in golden_events.parse_rows(text)]


def _compare_event(args: tuple[EventTarget, tuple[str, ...]]) -> list[DpPoint]:
    target, names = args
    out = []
    for name in names:
        try:
            got, error, cls = load_event_peer(name)(target.event, target.relation, float(target.delta)), None, None
        except PeerRefused as exc:
            got, error, cls = None, f"PeerRefused: {exc}", "unsupported"
        except Exception as exc:  # any failure of the peer is a finding, not a crash
            got, error = None, f"{type(exc).__name__}: {exc}"
        value = None if got is None else got.epsilon
        out.append(DpPoint(name, target, value, error, None, None,
                           cls or classify(value, target.lower, target.upper)))
    return out


def compare_events(names: Sequence[str], targets: Sequence[EventTarget], jobs: int | Pool = 1) -> list[DpPoint]:
    """Every event peer in ``names`` (:data:`~rdp_verify.reference.dp_peers.EVENT_PEERS`) at every event target,
    classified as :func:`classify` does, or ``unsupported`` where the peer refuses the tree."""
    unknown = [n for n in names if n not in EVENT_PEERS]
    if unknown:
        raise ValueError(f"unknown event peer {unknown[0]!r}")
    items = [(t, tuple(names)) for t in targets]
    return [p for group in progress_map(_compare_event, items, jobs, "comparing") for p in group]


NOISE = Fraction(1, 10**7)  # event_table: a value this close (relative) to an end of the bracket is "at an end"
TABLE_CLASSES = ("exact", "at an end", "conservative", "unsafe", "failed", "unsupported")


def at_an_end(point: DpPoint, noise: Fraction = NOISE) -> bool:
    """The peer's finite value lies within ``noise`` (relative) of an end of the proven bracket: which side of
    that end it falls on is decided by its float rounding, which moves with the NumPy and SciPy builds."""
    if point.value is None or not math.isfinite(point.value):
        return False
    x, t = Fraction(point.value), point.target
    return any(abs(x - end) <= noise * abs(end) for end in (t.lower, t.upper))


def _table_class(point: DpPoint, noise: Fraction) -> str:
    return "at an end" if at_an_end(point, noise) else point.classification


def event_table(points: Sequence[DpPoint], noise: Fraction = NOISE) -> str:
    """Counts per peer and class, then, per peer, the cases where each class other than ``exact`` occurs, with
    their δ when not all of them. A value within ``noise`` (relative) of an end of the bracket is counted
    ``at an end`` (:func:`at_an_end`) whatever its strict class, so that the table prints no digit of a peer's
    value and does not change with the NumPy and SciPy builds."""
    peers = list(dict.fromkeys(p.peer for p in points))
    counts = Counter((p.peer, _table_class(p, noise)) for p in points)
    width = max(len(n) for n in peers + ["peer"])
    lines = [f"{'peer':<{width}}" + "".join(f"{c:>13}" for c in TABLE_CLASSES)]
    lines += [f"{n:<{width}}" + "".join(f"{counts[n, c]:>13}" for c in TABLE_CLASSES) for n in peers]
    every: dict[str, set[Fraction]] = {}
    for p in points:
        every.setdefault(p.target.case, set()).add(p.target.delta)
    for name in peers:
        for cls in TABLE_CLASSES[1:]:
            cases: dict[str, list[Fraction]] = {}
            for p in points:
                if p.peer == name and _table_class(p, noise) == cls:
                    cases.setdefault(p.target.case, []).append(p.target.delta)
            if cases:
                text = f"{name} {cls}: " + "; ".join(
                    case + ("" if set(ds) == every[case] else
                            f" (delta {', '.join(decimal_text(d, 3) for d in ds)})")
                    for case, ds in cases.items())
                lines += textwrap.wrap(text, 110, subsequent_indent="  ", break_on_hyphens=False,
                                       break_long_words=False)
    return "\n".join(lines) + "\n"


_STYLE = {"exact": ("tab:green", "o"), "conservative": ("tab:orange", "^"),
          "unsafe": ("tab:red", "v"), "failed": ("tab:purple", "x")}


def plot(points: Sequence[DpPoint], path: str | os.PathLike) -> None:
    """Signed relative error (peer − ε)/ε of every peer at every target; failures drawn on the top edge."""
    peers = list(dict.fromkeys(p.peer for p in points))
    targets = list(dict.fromkeys(p.target for p in points))
    index = {t: i for i, t in enumerate(targets)}
    finite = [abs(p.relative_error) for p in points if p.relative_error is not None]
    top = 10 ** math.ceil(math.log10(max(finite + [1.0]) * 10))
    fig = new_figure(figsize=(10, 1.9 * len(peers) + 1.2))
    axes = fig.subplots(len(peers), 1, sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], peers):
        for cls in CLASSES:
            sel = [p for p in points if p.peer == name and p.classification == cls]
            if sel:
                color, marker = _STYLE[cls]
                ax.scatter([index[p.target] for p in sel],
                           [top if p.relative_error is None else p.relative_error for p in sel],
                           s=14, c=color, marker=marker, label=f"{cls} ({len(sel)})", linewidths=0.8)
        ax.set_yscale("symlog", linthresh=1e-4)
        ax.set_ylim(-top * 1.5, top * 1.5)
        ax.set_yticks([-1, -1e-2, -1e-4, 0, 1e-4, 1e-2, 1] + ([top] if top > 1 else []))
        ax.minorticks_off()
        ax.axhline(0, color="0.6", lw=0.5)
        ax.set_ylabel("(peer − ε)/ε", fontsize=8)
        ax.set_title(name, fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="lower left", ncol=4)
        ax.grid(True, which="major", lw=0.3)
    axes[-1, 0].set_xticks(range(len(targets)))
    axes[-1, 0].set_xticklabels([t.label() for t in targets], rotation=90, fontsize=6)
    axes[-1, 0].set_xlabel("run: q / sigma / steps / delta" if isinstance(targets[0], Target) else "case / delta")
    fig.tight_layout()
    save_figure(fig, path)
