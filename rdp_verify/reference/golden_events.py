"""Golden event vectors: proven ε(δ) brackets of dp_accounting event trees, as CSV.

Each row is ``case,source,neighboring_relation,delta,epsilon_lower,epsilon_upper,event``: a case name, the
dp_accounting test it comes from, the neighbouring relation (dp_accounting's ``NeighboringRelation`` name), δ, an
interval that provably contains ε(δ) of the run, and the run itself as the JSON of
:func:`rdp_verify.events.read.to_json` (compact, one CSV cell, quoted as CSV quotes; ``parse_json`` then
:func:`~rdp_verify.events.read.from_named_tuple_json` reads it back, numbers as exact text). The interval is
:func:`rdp_verify.privacy_curve.certificate.event_bracket` of :func:`rdp_verify.privacy_curve.table.resolve` at
relative tolerance :data:`TOLERANCE` (each mechanism's proven privacy-loss distribution, losses and masses rounded
up for the upper end and down for the lower end, composed exactly with the SGM steps' discrete pairs on one
grid; docs/events.md), rounded outward to :data:`DIGITS` significant digits.

:data:`CASES` are the event trees of dp_accounting 0.6's own tests (``pld/pld_privacy_accountant_test.py`` and
``rdp/rdp_privacy_accountant_test.py``) that the event table brackets, with the test's parameters (a parameter the
test computes as a float, such as ``4 / (3 + math.exp(1))``, is written as that double's shortest decimal); where
a test's run would take more than a few seconds to bracket, or is non-private as written, a cheaper or private
member of the same family stands in and its ``source`` says ``after``. Plus two runs of docs/events.md: three
uses of randomized response (which dp_accounting's PLD accountant counts as one) and a DP-SGD run followed by a
Laplace release. The computation is exact integer arithmetic plus Arb balls at fixed precision, and the grids
depend only on the widths found, so ``rdp-verify golden --events --out certificates/golden-events-v2.csv``
regenerates the file byte for byte (about a minute on one core; ``--jobs`` spreads the rows). The package
reads it as ``rdp_verify/reference/data/golden-events-v2.csv``, a symlink to it. Version 2 composes the uses of
randomized response as one exact law rounded once (:class:`rdp_verify.mechanisms.finite_composition.SelfComposed`:
``rr_3_uses_replace_one`` narrowed inside version 1's brackets) and discretises Laplace by connect-the-dots and
lowered chords (:class:`rdp_verify.mechanisms.laplace.LaplaceCurve`: its rows bracketed again on a coarser first grid,
each meeting version 1's); every other row is version 1's byte for byte. The file of version 1 stays as it was
(:func:`parse_rows` reads it).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .. import __version__
from ..events.model import (
    ComposedDpEvent,
    DiscreteLaplaceDpEvent,
    DpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    MixtureOfGaussiansDpEvent,
    NeighboringRelation,
    PoissonSampledDpEvent,
    RandomizedResponseDpEvent,
    SelfComposedDpEvent,
    SingleEpochTreeAggregationDpEvent,
)
from ..events.read import from_named_tuple_json, render, to_json
from ..foundations.decimals import decimal_text
from ..foundations.files import parse_json
from ..foundations.inputs import fraction_text, parse_rational
from ..foundations.parallel import Pool, progress_map

__all__ = ["FORMAT_VERSION", "CASES", "DELTAS", "TOLERANCE", "DIGITS", "COLUMNS", "COMMAND", "Case", "EventRow",
           "points", "header", "row", "build", "parse_rows"]

FORMAT_VERSION = 2
TOLERANCE = Fraction(1, 1000)
DIGITS = 12
COLUMNS = ("case", "source", "neighboring_relation", "delta", "epsilon_lower", "epsilon_upper", "event")
COMMAND = f"rdp-verify golden --events --out certificates/golden-events-v{FORMAT_VERSION}.csv"
DELTAS: tuple[str, ...] = ("1e-3", "1e-5", "1e-8")

R = NeighboringRelation
ADD, ONE, SPECIAL = R.ADD_OR_REMOVE_ONE, R.REPLACE_ONE, R.REPLACE_SPECIAL
_PLD, _RDP = "pld_privacy_accountant_test", "rdp_privacy_accountant_test"


@dataclass(frozen=True)
class Case:
    """One event tree of the file: its name, where it comes from, the tree and its neighbouring relation."""

    name: str
    source: str
    event: DpEvent
    relation: NeighboringRelation


def _self(event: DpEvent, count: int) -> DpEvent:
    return SelfComposedDpEvent(event, count)


def _sampled(q: str, event: DpEvent) -> DpEvent:
    return PoissonSampledDpEvent(q, event)


_MIXTURE = MixtureOfGaussiansDpEvent(2, [0, 2, 3], ["0.33", "0.34", "0.33"])
_TREE = SingleEpochTreeAggregationDpEvent

CASES: tuple[Case, ...] = (
    # the Gaussian family
    Case("gaussian_basic", f"{_PLD}.test_gaussian_basic", _self(GaussianDpEvent("1.7320508075688772"), 3), ADD),
    Case("sampled_gaussian", f"{_PLD}.test_self_composed_subsampled_gaussian",
         _self(_sampled("0.2", GaussianDpEvent("0.5")), 3), ADD),
    Case("sampled_gaussian_and_gaussian", f"{_PLD}.test_supports_gaussian",
         ComposedDpEvent([_sampled("0.1", GaussianDpEvent(1)), GaussianDpEvent(2)]), SPECIAL),
    # Laplace, once and composed
    Case("laplace_eps_1", f"{_RDP}.test_laplace(medium_eps)", LaplaceDpEvent(1), ADD),
    Case("laplace_eps_0.01", f"{_RDP}.test_laplace(small_eps)", LaplaceDpEvent(100), ADD),
    Case("laplace_eps_100", f"{_RDP}.test_laplace(large_eps)", LaplaceDpEvent("0.01"), ADD),
    Case("laplace_repetition", f"{_RDP}.test_laplace(repetition)", _self(LaplaceDpEvent(1), 100), ADD),
    Case("laplace_basic", f"{_PLD}.test_laplace_basic",
         ComposedDpEvent([_self(LaplaceDpEvent(1), 3), _self(LaplaceDpEvent(2), 2)]), ADD),
    Case("sampled_laplace", f"{_PLD}.test_poisson_subsampled_laplace",
         _self(_sampled("0.2", LaplaceDpEvent("0.5")), 3), ADD),
    # discrete Laplace, mixtures of Gaussians
    Case("discrete_laplace_basic", f"{_PLD}.test_discrete_laplace_basic",
         ComposedDpEvent([_self(DiscreteLaplaceDpEvent(1, 1), 3), _self(DiscreteLaplaceDpEvent("0.5", 1), 2)]), ADD),
    Case("mixture_of_gaussians", f"after {_PLD}.test_mixture_of_gaussians_basic (its second mixture, once)",
         _MIXTURE, ADD),
    # randomized response
    Case("rr_replace_one_eps_1", f"{_PLD}.test_randomized_response(REPLACE_ONE, 4/(3+e), 4)",
         RandomizedResponseDpEvent("0.6995108181084378", 4), ONE),
    Case("rr_replace_special_eps_1", f"{_PLD}.test_randomized_response(REPLACE_SPECIAL, (4-e)/3, 4)",
         RandomizedResponseDpEvent("0.4272393905136516", 4), SPECIAL),
    Case("rr_binary_replace_special", f"{_PLD}.test_randomized_response(REPLACE_SPECIAL, 1/e, 2)",
         RandomizedResponseDpEvent("0.36787944117144233", 2), SPECIAL),
    Case("rr_10_buckets_replace_one", f"{_RDP}.test_compute_rdp_randomized_response_replace_one(small_eps)",
         RandomizedResponseDpEvent("0.3", 10), ONE),
    Case("rr_20_buckets_replace_special", f"{_RDP}.test_compute_rdp_randomized_response_replace_special(medium_eps)",
         RandomizedResponseDpEvent("0.05", 20), SPECIAL),
    Case("rr_3_uses_replace_one", "docs/events.md (dp_accounting's PLD accountant counts one use)",
         _self(RandomizedResponseDpEvent("0.5", 4), 3), ONE),
    Case("sampled_gaussian_and_rr_replace_one", f"{_PLD}.test_supports_subsampled_gaussian_and_rr_composition",
         ComposedDpEvent([_sampled("0.1", GaussianDpEvent(1)), RandomizedResponseDpEvent("0.1", 3)]), ONE),
    Case("sampled_gaussian_and_rr_replace_special", f"{_PLD}.test_supports_subsampled_gaussian_and_rr_composition",
         ComposedDpEvent([_sampled("0.1", GaussianDpEvent(1)), RandomizedResponseDpEvent("0.1", 3)]), SPECIAL),
    # tree aggregation (DP-FTRL)
    Case("tree_eps_20", f"{_RDP}.test_compute_eps_tree(eps20)", _TREE("1.13", 1600), SPECIAL),
    Case("tree_eps_2", f"{_RDP}.test_compute_eps_tree(eps2)", _TREE("8.83", 1600), SPECIAL),
    Case("trees_restart", f"after {_RDP}.test_compose_tree_rdp(restart2) (noise multiplier 1.13, not 0.1)",
         ComposedDpEvent([_TREE("1.13", 800), _TREE("1.13", 800)]), SPECIAL),
    Case("tree_single_epoch_multi", f"after {_RDP}.test_single_epoch_multi_tree_rdp (noise multiplier 1, not 0.1)",
         _TREE(1, [10, 40, 30, 20]), SPECIAL),
    # a DP-SGD run and a Laplace release
    Case("dpsgd_and_laplace", "docs/events.md (100 DP-SGD steps, then a Laplace release)",
         ComposedDpEvent([_self(_sampled("0.01", GaussianDpEvent(1)), 100), LaplaceDpEvent(10)]), ADD),
)
_BY_NAME = {c.name: c for c in CASES}
assert len(_BY_NAME) == len(CASES), "case names are unique"

Point = tuple[str, str]  # (case name, delta as written)


@dataclass(frozen=True)
class EventRow:
    """A data row read back: the case, its tree and relation, δ and the proven ε bracket."""

    case: str
    source: str
    event: DpEvent
    relation: NeighboringRelation
    delta: Fraction
    lower: Fraction
    upper: Fraction


def points() -> list[Point]:
    """Every row's (case, δ) in file order: the cases of :data:`CASES` in turn, each at every δ of :data:`DELTAS`."""
    return [(c.name, d) for c in CASES for d in DELTAS]


def event_text(event: DpEvent) -> str:
    """The event cell: compact JSON of :func:`~rdp_verify.events.read.to_json`, fields in dp_accounting's order."""
    return json.dumps(to_json(event), separators=(",", ":"), ensure_ascii=True)


def _csv_line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


def header() -> str:
    """The comment block and the column line (everything before the first row)."""
    lines = [
        f"# rdp_verify golden event vectors, format version {FORMAT_VERSION}",
        "# Each row: a dp_accounting event tree (column `event`: the JSON of rdp_verify.events.read.to_json, numbers",
        "# as exact text; classes and fields named as dp_accounting's DpEvent.to_named_tuple() names them), its",
        "# neighboring relation, delta and a PROVEN interval epsilon_lower <= epsilon(delta) <= epsilon_upper for the",
        "# run, under the pairs of dp_accounting 0.6's PLD accountant (tree aggregation: its RDP accountant's;",
        "# docs/events.md). Cases: the trees of dp_accounting's own tests (pld/pld_privacy_accountant_test.py,",
        "# rdp/rdp_privacy_accountant_test.py; `source` names the test) that rdp_verify brackets, and two runs of",
        "# docs/events.md.",
        f"# Proven bracket (rdp_verify.privacy_curve.certificate.event_bracket, relative tolerance "
        f"{fraction_text(TOLERANCE)}), rounded outward to {DIGITS} significant digits.",
        "# Runs:",
    ]
    lines += [f"#   {c.name}: {render(c.event)}; {c.relation.name}" for c in CASES]
    lines += [f"# each at delta: {' '.join(DELTAS)}",
              f"# Made by rdp_verify {__version__}. Regenerate byte for byte: {COMMAND}",
              ",".join(COLUMNS)]
    return "\n".join(lines) + "\n"


def bracket_of(case: Case, delta: Fraction, tolerance: Fraction = TOLERANCE) -> Any:
    """The proven bracket of ε(δ) of one case (:func:`~rdp_verify.privacy_curve.certificate.event_bracket`)."""
    from ..privacy_curve.certificate import event_bracket  # here: the command line's parser reads this module
    from ..privacy_curve.table import resolve

    return event_bracket(resolve(case.event, case.relation), delta=delta, tolerance=tolerance)


def row(point: Point) -> str:
    """One CSV line: the case, its relation, δ, the outward-rounded proven ε bracket and the tree."""
    name, d = point
    case = _BY_NAME[name]
    b = bracket_of(case, parse_rational(d, "delta"))
    if b.upper is None:
        raise ArithmeticError(f"no finite upper bound for {name} at delta={d}: change the cases")
    return _csv_line([name, case.source, case.relation.name, d, decimal_text(b.lower, DIGITS, "down"),
                      decimal_text(b.upper, DIGITS, "up"), event_text(case.event)])


def build(jobs: int | Pool = 1) -> str:
    """The whole file as text (rows in :func:`points` order, whatever ``jobs`` is)."""
    return header() + "".join(progress_map(row, points(), jobs, "golden event rows", "row"))


def parse_rows(text: str) -> list[EventRow]:
    """Every data row of a golden event file's text, the tree read back from its JSON."""
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    records = list(csv.reader(lines))
    if not records or tuple(records[0]) != COLUMNS:
        raise ValueError(f"a golden event file starts with the columns {','.join(COLUMNS)}")
    out = []
    for name, source, relation, d, lo, hi, event in records[1:]:
        out.append(EventRow(name, source, from_named_tuple_json(parse_json(event, f"the event of golden row {name}")), NeighboringRelation.of(relation),
                            parse_rational(d, "delta"), Fraction(lo), Fraction(hi)))
    return out
