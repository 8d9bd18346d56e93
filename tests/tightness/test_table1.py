import json
import math
from fractions import Fraction

import mpmath
import pytest
from oracles import binomial_log_a

from rdp_verify.certificates.theorem11 import theorem11_report
from rdp_verify.cli import main
from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import Bounded
from rdp_verify.methods import quadrature
from rdp_verify.methods.crosscheck import method_epsilon
from rdp_verify.tightness import table1


def abadi_bun_floats(q, s, a):
    """The stated conditions of Table 1 (Mironov-Talwar-Zhang 2019), transcribed in floats."""
    return (
        {"q < 1/(16 sigma)": q < 1 / (16 * s), "alpha <= 1 + sigma^2 ln(1/(q sigma))": a <= 1 + s * s * math.log(1 / (q * s)),
         "sigma >= 1": s >= 1, "alpha - 1 integer": float(a).is_integer()},
        {"q <= 1/10": q <= 0.1, "sigma >= sqrt(5)": s >= math.sqrt(5), "alpha <= sigma^2 ln(1/q) / 2": a <= s * s * math.log(1 / q) / 2},
    )


@pytest.mark.parametrize("q", ["0.001", "0.01", "0.05", "0.1", "0.3"])
@pytest.mark.parametrize("sigma", ["0.5", "1", "2.2", "2.3", "4", "10"])
@pytest.mark.parametrize("alpha", ["2", "7.5", "30", "120"])
def test_conditions_match_float_transcription(q, sigma, alpha):
    sgm = SGM.parse(q, sigma, alpha)
    abadi, bun = abadi_bun_floats(float(q), float(sigma), float(alpha))
    assert table1.conditions("abadi", sgm) == abadi  # no point of this grid sits within 1e-12 of a boundary
    assert table1.conditions("bun", sgm) == bun


@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "4", "8"), ("0.01", "4", "20"), ("0.2", "4", "4.2"), ("0.001", "10", "150"),
                                             ("0.3", "4", "2"), ("0.01", "3.9", "2")])
def test_theorem11_conditions_match_theorem11_report(q, sigma, alpha):
    sgm = SGM.parse(q, sigma, alpha)
    report = theorem11_report(sgm, Bounded(Fraction(1), Fraction(0)))  # only the condition fields are read
    expected = {"q <= 1/5": report["q_le_one_fifth"], "sigma >= 4": report["sigma_ge_4"],
                "(4)": report["condition_4"], "(5)": report["condition_5"]}
    assert table1.conditions("theorem11", sgm) == expected


def test_formulas_are_exact_rationals():
    sgm = SGM.parse("0.1", "4", "8")
    assert table1.formula("abadi", sgm) == Fraction(1, 100) * 8 / (Fraction(9, 10) * 16)
    assert table1.formula("bun", sgm) == 6 * Fraction(1, 100) * 8 / 16
    assert table1.formula("theorem11", sgm) == 2 * Fraction(1, 100) * 8 / 16
    assert table1.formula("abadi", SGM.parse("1", "4", "8")) is None


@pytest.mark.parametrize("q, sigma, alpha", [("0.001", "4", 8), ("0.01", "10", 32), ("0.1", "1", 2)])
def test_ratios_contain_the_oracle_ratio(q, sigma, alpha):
    row = table1.table1_row(SGM.parse(q, sigma, str(alpha)))
    with mpmath.workdps(60):
        eps = binomial_log_a(q, sigma, alpha) / (alpha - 1)  # independent plain binomial sum
        for name in table1.BOUNDS:
            ratio = mpmath.mpf(Fraction(row[name]["value"]).numerator) / Fraction(row[name]["value"]).denominator / eps
            lo, hi = (mpmath.mpf(Fraction(row[name]["ratio"][k]).numerator) / Fraction(row[name]["ratio"][k]).denominator
                      for k in ("lower", "upper"))
            assert lo <= ratio <= hi and hi - lo < ratio * mpmath.mpf(10) ** -15


def test_counterexamples_are_reproven_independently():
    report = table1.table1_report({"q": [Fraction(1, 100)], "sigma": [Fraction(4)], "alpha": [Fraction(2)]})
    assert [c["certified"] for c in report["counterexamples"]] == [True] * len(table1.COUNTEREXAMPLES)
    for c in report["counterexamples"]:
        sgm = SGM.parse(c["q"], c["sigma"], c["alpha"])
        eps = method_epsilon(quadrature.compute(sgm, 25), sgm.alpha)  # mpmath, not Arb
        assert eps.lower > table1.formula(c["bound"], sgm)
        assert [k for k, v in c["conditions"].items() if not v] == [c["dropped"]]


def test_a_non_counterexample_is_not_certified_and_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(table1, "COUNTEREXAMPLES", (("theorem11", "(4)", "0.01", "4", "32"),))  # bound holds there
    assert main(["table1", "--q", "0.01", "--sigma", "4", "--alpha", "2"]) == 1
    assert "NOT CERTIFIED" in capsys.readouterr().out


def test_default_grid_report(capsys):
    assert main(["table1"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "|" in ln and ln.split()[0] in ("0.001", "0.01", "0.1")]
    assert len(lines) == 36 and "Theorem 11 inside its conditions: its bound is above" in out
    # q = 0.01, sigma = 4, alpha = 2: A_2 = 1 + q^2 (e^{1/16} - 1) (README), so the Theorem 11 ratio is
    # 2 q^2 alpha / sigma^2 / log(A_2) = 3.876 to 4 digits.
    with mpmath.workdps(30):
        expected = 2 * 0.0001 * 2 / 16 / mpmath.log1p(mpmath.mpf("0.0001") * mpmath.expm1(mpmath.mpf(1) / 16))
    row = next(ln for ln in lines if ln.split()[:3] == ["0.01", "4", "2"])
    assert row.split("|")[3].split()[0] == mpmath.nstr(expected, 4)


def test_json_and_out_file(tmp_path, capsys):
    assert main(["table1", "--q", "0.01", "--sigma", "4", "--alpha", "2,8", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["alpha"] for r in report["rows"]] == ["2", "8"]
    assert report["rows"][0]["theorem11"]["conditions"] == {"q <= 1/5": True, "sigma >= 4": True, "(4)": True, "(5)": True}
    path = tmp_path / "t.json"
    assert main(["table1", "--q", "0.01", "--sigma", "4", "--alpha", "2", "--out", str(path)]) == 0
    assert json.loads(path.read_text())["rows"][0]["q"] == "0.01"


@pytest.mark.parametrize("args", [["--q", "0"], ["--q", "0.1,"], ["--sigma", "-1"], ["--alpha", "1"], ["--alpha", "2,2"], ["--dps", "5"]])
def test_bad_input_exits_2(tmp_path, capsys, args):
    path = tmp_path / "never.json"
    assert main(["table1", *args, "--out", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("rdp-verify: error:")
    assert not path.exists()


def test_certain_text_prints_only_digits_both_ends_agree_on():
    assert table1.certain_text(Fraction("1.23449"), Fraction("1.23451"), 4) == "1.2345"
    assert table1.certain_text(Fraction("1.23"), Fraction("1.23"), 4) == "1.23"
    assert table1.certain_text(Fraction(1, 3 * 10**7), Fraction(1, 3 * 10**7), 3) == "3.33e-8"
    assert table1.certain_text(Fraction(1), Fraction(1) + Fraction(1, 10**22), 4) == "1"
    assert table1.certain_text(Fraction(1), Fraction(11, 10), 4) == "[1, 1.1]"
