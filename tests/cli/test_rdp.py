"""``rdp-verify rdp``: proven ε_α intervals at many orders, against an independent binomial sum."""

import json
from fractions import Fraction

import mpmath
import pytest

from rdp_verify.accounting.order_lists import ORDER_LISTS
from rdp_verify.cli import main
from tests.mechanisms.test_laplace import renyi_quadrature
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


# -- rdp --event FILE: a whole event tree ---------------------------------------------------------------------------


def event_file(tmp_path, obj, name="event.json"):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return str(path)


LAPLACE = {"class_name": "LaplaceDpEvent", "noise_multiplier": "1"}


def test_event_table_prints_components_rows_and_proof_and_check_confirms_it(capsys, tmp_path):
    out_file = tmp_path / "table.json"
    code, out, err = run(capsys, "--event", "examples/event-dpsgd-laplace.json", "--orders", "2,8",
                         "--out", str(out_file))
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[0] == ("proven RDP of 200 x PoissonSampled(q=0.01, Gaussian(sigma=1)) + 3 x Laplace(b=20); "
                        "ADD_OR_REMOVE_ONE; 2 orders:")
    assert lines[1].startswith("  200 x SampledGaussian(q=0.01, sigma=1): exact; ")
    assert any(line.startswith("  3 x Laplace(b=20, sensitivity=1): exact; closed form (Mironov 2017, Proposition 6")
               for line in lines)
    at2 = next(line for line in lines if line.startswith("2 ")).split()
    with mpmath.workdps(60):  # 200 SGM steps (Section 3.3's sum) and 3 Laplace releases (Proposition 6's integral)
        exact = 200 * binomial_log_a("0.01", "1", 2) + 3 * renyi_quadrature(Fraction(20), Fraction(2))
        assert mpmath.mpf(at2[1]) <= exact <= mpmath.mpf(at2[2])
    table = json.loads(out_file.read_text())
    assert table["format_version"] == 3 and table["rows"][0]["epsilon"] == {"lower": at2[1], "upper": at2[2]}
    code, out, _ = run(capsys, "--event", "examples/event-dpsgd-laplace.json", "--orders", "2,8", "--json")
    assert code == 0 and json.loads(out) == table
    assert main(["check", str(out_file)]) == 0
    assert "confirmed (1 RDP table" in capsys.readouterr().out


def test_zcdp_alone_has_no_lower_end_exit_3(capsys, tmp_path):
    code, out, _ = run(capsys, "--event", event_file(tmp_path, {"class_name": "ZCDpEvent", "rho": "0.5"}),
                       "--orders", "2,8")
    assert code == 3
    assert "lower: none (no lower end for an abstract guarantee: 0 is the trivial one)" in out
    assert [line.split() for line in out.splitlines() if line[:2] in ("2 ", "8 ")] == [["2", "0", "1"], ["8", "0", "4"]]


def test_non_private_is_infinite_never_a_number_exit_3_nothing_written(capsys, tmp_path):
    out_file = tmp_path / "x.json"
    tree = {"class_name": "ComposedDpEvent", "events": [LAPLACE, {"class_name": "NonPrivateDpEvent"}]}
    code, out, _ = run(capsys, "--event", event_file(tmp_path, tree), "--orders", "2", "--out", str(out_file))
    assert code == 3 and "epsilon_alpha = inf at every order: not private" in out and not out_file.exists()
    assert not [line for line in out.splitlines() if line.split()[:1] == ["2"]]  # no row: no number is printed


@pytest.mark.parametrize("event, relation, message", [
    ({"class_name": "MixtureOfGaussiansDpEvent", "standard_deviation": "1", "sensitivities": ["0", "1"],
      "sampling_probs": ["0.5", "0.5"]}, None, "MixtureOfGaussiansDpEvent has no proven Renyi DP here"),
    ({"class_name": "TruncatedSubsampledGaussianDpEvent", "dataset_size": 100, "sampling_probability": "0.1",
      "truncated_batch_size": 10, "noise_multiplier": "1"}, None, "TruncatedSubsampledGaussianDpEvent"),
    ({"class_name": "RepeatAndSelectDpEvent", "event": LAPLACE, "mean": "2", "shape": "1"}, None,
     "RepeatAndSelectDpEvent"),
    ({"class_name": "UnsupportedDpEvent"}, None, "UnsupportedDpEvent"),
    ({"class_name": "PoissonSampledDpEvent", "sampling_probability": "0.1", "event": LAPLACE}, None,
     "PoissonSampledDpEvent of a LaplaceDpEvent"),
    (LAPLACE, "REPLACE_ONE", "LaplaceDpEvent needs neighboring_relation"),
    ({"class_name": "NoSuchDpEvent"}, None, "NoSuchDpEvent"),
])
def test_refused_events_one_line_exit_2_nothing_written(capsys, tmp_path, event, relation, message):
    out_file = tmp_path / "x.json"
    argv = ["--event", event_file(tmp_path, event), "--orders", "2", "--out", str(out_file)]
    code, out, err = run(capsys, *argv, *(["--neighboring-relation", relation] if relation else []))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert not out_file.exists()


@pytest.mark.parametrize("argv, message", [
    (["--event", "examples/event-dpsgd-laplace.json", "--q", "0.01", "--orders", "2"], "--event cannot be combined"),
    (["--event", "examples/event-dpsgd-laplace.json", "--steps", "3", "--orders", "2"], "--event cannot be combined"),
    (["--q", "0.01", "--sigma", "1", "--orders", "2", "--neighboring-relation", "REPLACE_ONE"], "goes with --event"),
    (["--orders", "2"], "give --q and --sigma"),
    (["--q", "0.01", "--orders", "2"], "missing --sigma"),
    (["--event", "no-such-file.json", "--orders", "2"], "no-such-file.json"),
    (["--event", "examples/event-dpsgd-laplace.json", "--orders", "1"], "greater than 1"),
    (["--event", "examples/event-dpsgd-laplace.json", "--orders", "2", "--digits", "40"], "--digits 40"),
])
def test_event_flag_misuse_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
