"""The golden dataset: its rows are right, regenerate bit for bit, and ship with the package."""

from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from oracles import binomial_log_a, mp

from rdp_verify.cli import main
from rdp_verify.foundations.inputs import SGM
from rdp_verify.reference import golden
from rdp_verify.reference.compare import Grid

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "certificates" / "golden-v1.csv"


def lines():
    return FILE.read_text(encoding="utf-8").splitlines(keepends=True)


def rows():
    """(SGM, lower, upper) for every data row of the file."""
    out = []
    for line in lines()[golden.header().count("\n"):]:
        q, s, a, lo, hi = line.rstrip("\n").split(",")
        out.append((SGM.parse(q, s, a), Fraction(lo), Fraction(hi)))
    return out


def test_header_and_grid_order():
    text = FILE.read_text(encoding="utf-8")
    assert text.startswith(golden.header())
    assert "Regenerate bit for bit: rdp-verify golden --out certificates/golden-v1.csv" in golden.header()
    assert [sgm for sgm, _, _ in rows()] == golden.GRID.points()
    assert len(rows()) == 9 * 8 * 23 and FILE.stat().st_size < 2_000_000


def test_a_slice_regenerates_bit_for_bit():
    # every 22nd row (77 of 1656): every q, sigma and alpha of the grid and every (q, sigma) pair among them; the whole
    # file regenerates in docs/library-authors.md's slow example
    data = lines()[golden.header().count("\n"):]
    points = golden.GRID.points()
    for i in list(range(0, len(points), 22)) + [len(points) - 1]:
        assert golden.row(points[i]) == data[i], f"row {i} ({points[i].texts()}) changed"


def test_cli_writes_the_same_rows_in_order_with_jobs(tmp_path, monkeypatch, capsys):
    full = golden.GRID.points()
    small = Grid(golden.GRID.q[5:7], golden.GRID.sigma[:2], golden.GRID.alpha[3:5])
    monkeypatch.setattr(golden, "GRID", small)
    out = tmp_path / "g.csv"
    assert main(["golden", "--out", str(out), "--jobs", "2"]) == 0
    assert "wrote 8 rows" in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert text.startswith(golden.header()) and "#   q:     0.1 0.2\n" in text
    data = lines()[golden.header().count("\n"):]
    expected = [data[full.index(p)] for p in small.points()]
    assert text.splitlines(keepends=True)[golden.header().count("\n"):] == expected


def test_bad_jobs(capsys, tmp_path):
    assert main(["golden", "--jobs", "0", "--out", str(tmp_path / "g.csv")]) == 2
    assert "--jobs 0" in capsys.readouterr().err and not (tmp_path / "g.csv").exists()


def test_intervals_are_narrow_and_ordered():
    for sgm, lo, hi in rows():
        assert 0 < lo <= hi and hi - lo <= hi * Fraction(1, 10**23), sgm.texts()


def test_q_one_rows_contain_the_gaussian_mechanism_value():
    # q = 1 is the Gaussian mechanism: ε_α = α/(2σ²) exactly (Mironov 2017, Prop. 7)
    checked = 0
    for sgm, lo, hi in rows():
        if sgm.q == 1:
            assert lo <= sgm.alpha / (2 * sgm.sigma**2) <= hi
            checked += 1
    assert checked == 8 * 23


@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "2.5", 32), ("0.5", "0.5", 2), ("0.000001", "1", 64),
                                             ("0.2", "100", 2048), ("0.1", "5", 256)])
def test_integer_rows_match_an_independent_binomial_sum(q, sigma, alpha):
    [(lo, hi)] = [(lo, hi) for sgm, lo, hi in rows() if sgm == SGM.parse(q, sigma, str(alpha))]
    with mpmath.workdps(80):
        eps = binomial_log_a(q, sigma, alpha, dps=80) / (alpha - 1)
        assert mp(lo) <= eps <= mp(hi)


def test_packaged_copy_is_the_certificate():
    # rdp_verify/reference/data/golden-v1.csv is a symlink to certificates/golden-v1.csv; building
    # a wheel or sdist copies the target's bytes (checked with setuptools 65)
    packaged = ROOT / "rdp_verify" / "reference" / "data" / "golden-v1.csv"
    assert packaged.read_bytes() == FILE.read_bytes()
