"""The golden event file: its rows are right, regenerate byte for byte, and ship with the package.

Independent references: the Gaussian mechanism's closed form (Balle & Wang 2018, Theorem 8; tests/curve_oracles.py)
for a self-composed Gaussian; for one Laplace release of scale b, ε(δ) = 1/b + 2·log(1 − δ) exactly (its
hockey-stick curve is δ(ε) = 1 − e^{(ε − 1/b)/2} below 1/b); for randomized response whose true-to-other
probability ratio is e (dp_accounting's test parameters), ε(δ) ≤ 1 at every δ; for three uses of randomized
response (p = 1/2, k = 4, REPLACE_ONE), 3·log 5 − 1e-4 < ε(1e-5) ≤ 3·log 5 (tests/privacy_curve/test_peer_defects.py).
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import pytest
from curve_oracles import gaussian_epsilon

from rdp_verify.events.read import from_named_tuple_json, to_json
from rdp_verify.reference import golden_events
from rdp_verify.reference.dp_compare import default_event_targets

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "certificates" / f"golden-events-v{golden_events.FORMAT_VERSION}.csv"
PACKAGED = ROOT / "rdp_verify" / "reference" / "data" / FILE.name
PINNED_V1 = ROOT / "certificates" / "golden-events-v1.csv"  # version 1, kept as it was
ROWS = golden_events.parse_rows(FILE.read_text(encoding="utf-8"))
# cheap rows (well under a second each) regenerated in the default run: one per family of mechanism
DEFAULT = {("laplace_eps_1", "1e-5"), ("discrete_laplace_basic", "1e-3"), ("rr_3_uses_replace_one", "1e-5"),
           ("gaussian_basic", "1e-8"), ("rr_binary_replace_special", "1e-8")}


def data_lines():
    return FILE.read_text(encoding="utf-8").splitlines(keepends=True)[golden_events.header().count("\n"):]


def rows_of(case):
    return [r for r in ROWS if r.case == case]


def test_header_columns_and_order():
    assert FILE.read_text(encoding="utf-8").startswith(golden_events.header())
    assert [(r.case, r.delta) for r in ROWS] == [(c, Fraction(d)) for c, d in golden_events.points()]
    assert all(line.count(",") > len(golden_events.COLUMNS) - 1 for line in data_lines())  # the JSON cell: quoted
    assert len(data_lines()) == len(ROWS) == len(golden_events.CASES) * len(golden_events.DELTAS)
    assert 15 <= len(golden_events.CASES) <= 25


def test_rows_hold_the_trees_and_relations_of_the_cases():
    cases = {c.name: c for c in golden_events.CASES}
    for r in ROWS:
        assert (r.event, r.relation, r.source) == (cases[r.case].event, cases[r.case].relation, cases[r.case].source)
    line = data_lines()[0]  # the event cell is the compact JSON of to_json, read back exactly
    cell = json.loads(line[line.index('"{'):].strip()[1:-1].replace('""', '"'))
    assert cell == to_json(ROWS[0].event) and from_named_tuple_json(cell) == ROWS[0].event


def test_every_family_of_the_issue_is_there():
    names = {type(leaf).__name__ for c in golden_events.CASES for leaf in _leaves(c)}
    assert {"Laplace", "SampledLaplace", "DiscreteLaplace", "MixtureOfGaussians", "RandomizedResponse",
            "Gaussian"} <= names
    classes = json.dumps([to_json(c.event) for c in golden_events.CASES])
    assert "SingleEpochTreeAggregationDpEvent" in classes
    mixed = golden_events._BY_NAME["dpsgd_and_laplace"]
    assert {"LaplaceDpEvent", "PoissonSampledDpEvent"} <= set(json.dumps(to_json(mixed.event)).split('"'))


def _leaves(case):
    from rdp_verify.privacy_curve.table import resolve
    return [leaf for leaf, _ in resolve(case.event, case.relation).leaves]


@pytest.mark.parametrize("index", [
    pytest.param(i, marks=() if point in DEFAULT else pytest.mark.slow, id=f"{point[0]}@{point[1]}")
    for i, point in enumerate(golden_events.points())])
def test_rows_regenerate_byte_for_byte(index):
    assert golden_events.row(golden_events.points()[index]) == data_lines()[index]


def test_version_2_keeps_version_1s_rows_or_rebrackets_them():
    """Version 2 composes the uses of randomized response as one exact law rounded to the grid once
    (rdp_verify.mechanisms.finite_composition.SelfComposed) and discretises Laplace by connect-the-dots and lowered
    chords (second order in h; rdp_verify.mechanisms.laplace.LaplaceCurve). The rows of the self-composed randomized
    response narrowed inside version 1's brackets, around the exact ε of the composition; the Laplace rows are
    bracketed again (on a coarser first grid: each meets the tolerance, and meets version 1's bracket, both being
    proven); every other row is version 1's byte for byte."""
    from rdp_verify.mechanisms.finite_composition import composed_epsilon
    from rdp_verify.mechanisms.randomized_response import RandomizedResponse

    old_text = PINNED_V1.read_text(encoding="utf-8")
    old_lines = [line for line in old_text.splitlines(keepends=True) if not line.startswith("#")][1:]
    old = golden_events.parse_rows(old_text)
    changed = {ROWS[i].case for i, (a, b) in enumerate(zip(old_lines, data_lines())) if a != b}
    assert len(old_lines) == len(data_lines())
    assert changed == {"rr_3_uses_replace_one", "laplace_eps_1", "laplace_eps_0.01", "laplace_eps_100",
                       "laplace_repetition", "laplace_basic", "dpsgd_and_laplace"}
    p, q = RandomizedResponse(Fraction(1, 2), 4).masses()
    for before, after in zip(old, ROWS):
        if after.case == "rr_3_uses_replace_one":
            ends = [composed_epsilon([(p, q, 3)], after.delta, 128, d) for d in ("remove", "add")]
            assert before.lower <= after.lower <= max(lo for lo, _ in ends)
            assert max(up for _, up in ends) <= after.upper <= before.upper
            assert after.upper - after.lower < (before.upper - before.lower) / 2
        elif after.case in changed:
            assert max(before.lower, after.lower) <= min(before.upper, after.upper)
            assert after.upper - after.lower <= golden_events.TOLERANCE * after.upper


def test_brackets_are_ordered_and_narrow():
    for r in ROWS:
        assert 0 < r.lower <= r.upper
        assert (r.upper - r.lower) / r.upper <= golden_events.TOLERANCE


def test_gaussian_rows_contain_the_closed_form():
    for r in rows_of("gaussian_basic"):  # 3 x Gaussian(σ): μ = √3/σ
        mu = math.sqrt(3) / float(r.event.event.noise_multiplier)
        exact = gaussian_epsilon(r.delta, mu)
        assert r.lower <= Fraction(mp.nstr(exact, 30)) <= r.upper


@pytest.mark.parametrize("case", ["laplace_eps_1", "laplace_eps_0.01", "laplace_eps_100"])
def test_laplace_rows_contain_the_exact_epsilon(case):
    for r in rows_of(case):
        with mp.workdps(50):
            exact = 1 / mp.mpf(str(r.event.noise_multiplier)) + 2 * mp.log(1 - mp.mpf(r.delta.numerator) /
                                                                          r.delta.denominator)
            assert r.lower <= Fraction(mp.nstr(exact, 40)) <= r.upper


def test_randomized_response_rows_with_ratio_e_are_at_most_1():
    for case in ("rr_replace_one_eps_1", "rr_replace_special_eps_1", "rr_binary_replace_special"):
        for r in rows_of(case):
            assert r.lower <= 1 and r.upper >= r.lower  # ε(δ) ≤ ε(0) = 1 (up to the float parameter's rounding)
            assert r.upper - 1 <= Fraction(1, 10**3)


def test_three_randomized_responses_are_near_3_log_5():
    r = next(r for r in rows_of("rr_3_uses_replace_one") if r.delta == Fraction(1, 10**5))
    assert r.lower <= 3 * math.log(5) and r.upper >= 3 * math.log(5) - 1e-4


def test_packaged_copy_is_the_file():
    assert PACKAGED.is_symlink() and PACKAGED.resolve() == FILE.resolve()
    assert len(default_event_targets()) == len(ROWS)


def test_cli_writes_the_same_rows(tmp_path, monkeypatch, capsys):
    from rdp_verify.cli import main
    cheap = tuple(c for c in golden_events.CASES if c.name in ("laplace_eps_1", "rr_3_uses_replace_one"))
    monkeypatch.setattr(golden_events, "CASES", cheap)
    out = tmp_path / "g.csv"
    assert main(["golden", "--events", "--out", str(out), "--jobs", "2"]) == 0
    assert f"wrote {len(cheap) * len(golden_events.DELTAS)} rows" in capsys.readouterr().err
    rows = out.read_text(encoding="utf-8").splitlines(keepends=True)[golden_events.header().count("\n"):]
    assert set(rows) <= set(data_lines()) and len(rows) == len(cheap) * len(golden_events.DELTAS)
    assert main(["golden", "--events", "--dp"]) == 2
    assert main(["golden", "--events", "--verify", str(tmp_path)]) == 2


def test_a_row_whose_event_repeats_a_key_is_refused():
    # the event cell is JSON read through the shared reader: a repeated key is ambiguous (issue 39, item 2)
    from rdp_verify.foundations.inputs import InputError

    row = ('x,test,ADD_OR_REMOVE_ONE,1/100000,1,2,'
           '"{""name"":""LaplaceDpEvent"",""noise_multiplier"":""1"",""noise_multiplier"":""100""}"\n')
    with pytest.raises(InputError, match="golden row x repeats the key 'noise_multiplier'"):
        golden_events.parse_rows(",".join(golden_events.COLUMNS) + "\n" + row)
