from fractions import Fraction

from rdp_verify.certificates import certify as certify_module
from rdp_verify.certificates.certify import certify
from rdp_verify.cli import main
from rdp_verify.foundations.inputs import SGM
from rdp_verify.foundations.results import Bounded, MethodResult
from rdp_verify.methods.crosscheck import agreement_digits, cross_check


def result(name, a, b, err=Fraction(1, 10**20)):
    return MethodResult(name, "estimate", Bounded(Fraction(a), err), None if b is None else Bounded(Fraction(b), err))


def test_agreement_digits():
    x = Bounded(Fraction(1), Fraction(0))
    assert agreement_digits(x, Bounded(Fraction(1) + Fraction(1, 10**12), Fraction(0))) == 12.0
    assert agreement_digits(x, x) == 1000.0


def test_disagreement_is_reported():
    check = cross_check({"one": result("one", 1, 1), "two": result("two", 2, 1)}, Fraction(2))
    assert not check["consistent"]
    assert "log_A" in check["conflicts"][0]


def test_single_method_cannot_certify():
    assert not cross_check({"one": result("one", 1, 1)}, Fraction(2))["consistent"]


def test_wrong_method_makes_certificate_inconsistent(monkeypatch, capsys):
    # Break the series method by a relative 1e-20 on log A: far above every error bound.
    real = certify_module.ESTIMATE_METHODS["series"]

    def broken(sgm, dps):
        r = real(sgm, dps)
        shifted = Bounded(r.log_a.value * (1 + Fraction(1, 10**20)), r.log_a.error)
        return MethodResult(r.method, r.bound_kind, shifted, r.log_b, r.work, r.notes)

    monkeypatch.setitem(certify_module.ESTIMATE_METHODS, "series", broken)
    cert = certify(SGM.parse("0.01", "4", "1.5"), 30)
    assert cert["verdict"] == "inconsistent"
    assert any("series" in c for c in cert["cross_check"]["conflicts"])
    assert main(["certify", "--q", "0.01", "--sigma", "4", "--alpha", "1.5"]) == 1
    assert '"verdict": "inconsistent"' in capsys.readouterr().out
