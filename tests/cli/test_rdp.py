"""``rdp-verify rdp``: proven ε_α intervals at many orders, against an independent binomial sum."""

import json
from fractions import Fraction

import mpmath
import pytest

from rdp_verify.accounting.order_lists import ORDER_LISTS
from rdp_verify.cli import main
from tests.oracles import binomial_log_a


def run(capsys, *argv):
    code = main(["rdp", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_contains_the_binomial_sum(capsys):
    code, out, err = run(capsys, "--q", "0.01", "--sigma", "1.1", "--orders", "2,8,32,256", "--steps", "3")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "proven RDP of SG(q = 0.01, sigma = 1.1), 3 steps, 4 orders:"
    for line, alpha in zip(lines[2:6], (2, 8, 32, 256)):
        shown, lower, upper = line.split()
        exact = 3 * binomial_log_a("0.01", "1.1", alpha) / (alpha - 1)  # Section 3.3 Case I, 80 digits
        assert shown == str(alpha)
        assert mpmath.mpf(lower) <= exact <= mpmath.mpf(upper)
        assert Fraction(upper) - Fraction(lower) <= Fraction(2, 10**11) * Fraction(upper)  # 12 digits, outward
    assert "Corollary" in out and "Proposition 1" in out


def test_named_list_and_json(capsys, tmp_path):
    path = tmp_path / "rdp.json"
    code, out, _ = run(capsys, "--q", "256/60000", "--sigma", "1.1", "--orders", "dp_accounting_default",
                       "--json", "--out", str(path))
    data = json.loads(out)
    assert code == 0 and json.loads(path.read_text()) == data
    assert data["inputs"]["orders"] == "dp_accounting_default" and data["inputs"]["q"] == "8/1875"
    assert [Fraction(r["alpha"]) for r in data["rows"]] == list(ORDER_LISTS["dp_accounting_default"])
    at2 = next(r for r in data["rows"] if r["alpha"] == "2")["epsilon"]
    exact = binomial_log_a("256/60000", "1.1", 2)
    assert mpmath.mpf(at2["lower"]) <= exact <= mpmath.mpf(at2["upper"])


@pytest.mark.parametrize("argv, message", [
    (["--q", "0.01", "--sigma", "1", "--orders", "foo"], "is not a known list"),
    (["--q", "0.01", "--sigma", "1", "--orders", "2,2"], "repeats an order"),
    (["--q", "0.01", "--sigma", "1", "--orders", "1"], "greater than 1"),
    (["--q", "1.5", "--sigma", "1", "--orders", "2"], "q=1.5"),
    (["--q", "0.01", "--sigma", "nan", "--orders", "2"], "sigma"),
    (["--q", "0.01", "--sigma", "1", "--orders", "2", "--steps", "1.5"], "whole number"),
    (["--q", "0.01", "--sigma", "1", "--orders", "2", "--steps", "0"], "whole number"),
    (["--q", "0.01", "--sigma", "1", "--orders", "2", "--digits", "40"], "--digits 40"),
])
def test_bad_input_one_line_exit_2_nothing_written(capsys, tmp_path, argv, message):
    out_file = tmp_path / "x.json"
    code, out, err = run(capsys, *argv, "--out", str(out_file))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert not out_file.exists()
