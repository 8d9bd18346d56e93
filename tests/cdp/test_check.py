"""``rdp-verify check`` of CDP claim certificates: the recorded call is repeated and every field compared."""

from fractions import Fraction as F

import pytest
from mutations import assert_every_field_checked, edited, perturbed

from rdp_verify.cdp import concentrated as cc
from rdp_verify.cdp.certificate import SCHEMA
from rdp_verify.cdp.check import POLICY, check_claim, compare, recompute, self_consistency
from rdp_verify.certificates.fields import leaf_paths

Q, SIGMA = F(1, 100), F(1)

CLAIMS = {  # one certificate of each claim and verdict branch, each a fraction of a second
    "zcdp holds": lambda: cc.zcdp(Q, SIGMA, F(1, 2), delta=F(1, 10**5)),
    "zcdp refuted": lambda: cc.zcdp(Q, SIGMA, F(1, 1000)),
    "tcdp": lambda: cc.tcdp(Q, SIGMA, F(1, 1000), F(5)),
    "best rho": lambda: cc.best_rho(Q, SIGMA),
    "best rho tcdp": lambda: cc.best_rho(Q, SIGMA, F(2), budget=40, tol=F(1, 100)),
    "largest omega": lambda: cc.largest_omega(Q, SIGMA, F(1, 1000)),
    "concentrated gaussian": lambda: cc.concentrated(F(1), F(2), F(1, 8), F(1, 2), delta=F(1, 10**5)),
    "concentrated sgm": lambda: cc.concentrated(Q, F(2), F(1, 8), F(1, 2)),
    "compose": lambda: cc.compose([F(1), F(2), F(3)]),
    "dp holds": lambda: cc.dp_to_cdp(F(1)),
    "dp refuted": lambda: cc.dp_to_cdp(F(1), tau=F(1, 2)),
}


@pytest.fixture(scope="module", params=list(CLAIMS))
def cert(request):
    return CLAIMS[request.param]()


def test_every_field_is_recomputed_or_listed_as_recorded(cert):
    assert check_claim(cert) == [] and self_consistency(cert) == []
    assert [p for p in leaf_paths(cert) if not POLICY.is_verified(p)] == ["software.rdp_verify"]
    assert assert_every_field_checked(cert, recompute(cert), POLICY, compare, SCHEMA) > 20


@pytest.mark.parametrize("name, unchanged", [
    ("zcdp holds", ["inputs.dps"]),
    ("tcdp", ["inputs.dps", "inputs.budget"]),
    ("compose", []),
    ("dp refuted", []),
])
def test_forged_inputs_are_recomputed(name, unchanged):
    # one more digit of working precision, or a larger budget than the sweep needed, changes no printed claim:
    # such a certificate is exactly what the edited call writes
    cert = CLAIMS[name]()
    missed = [path for path, original in leaf_paths(cert).items() if path.startswith("inputs.")
              for value in perturbed(original) if not check_claim(edited(cert, path, value))]
    assert missed == unchanged


@pytest.mark.parametrize("inputs, problem", [
    ({"claim": "zcdp", "q": "0.01", "sigma": "1", "rho": "0.5", "xi": "0", "delta": None, "dps": 20, "extra": "1"},
     "inputs: got an unexpected keyword argument 'extra' (claim zcdp)"),
    ({"claim": "zcdp", "q": "0.01", "sigma": "1", "xi": "0", "delta": None, "dps": 20},
     "inputs: missing a required argument: 'rho' (claim zcdp)"),
    ({"claim": "zcdp", "q": "0.01", "sigma": "1", "rho": None, "xi": "0", "delta": None, "dps": 20},
     "inputs: rho must not be null"),
    ({"claim": "zcdp", "q": "0.01", "sigma": "1", "rho": "0.5", "xi": "0", "delta": "2", "dps": 20},
     "inputs: delta=2 must lie strictly between 0 and 1"),
    ({"claim": "tcdp", "q": "0.01", "sigma": "1", "rho": "0.5", "omega": "5", "convention": "mtz19", "dps": 20,
      "budget": 0}, "inputs: budget=0 must be a whole number from 1 to 10000"),
])
def test_bad_inputs_are_named(inputs, problem):
    assert check_claim(edited(CLAIMS["zcdp holds"](), "inputs", inputs)) == [problem]


def test_verdicts_are_re_derived_from_the_parts():
    cert = CLAIMS["dp refuted"]()
    assert "verdict: not what the parts' verdicts say (refuted)" in self_consistency(edited(cert, "verdict", "holds"))
    witness = CLAIMS["zcdp refuted"]()
    assert self_consistency(edited(witness, "witness.lambda", "11")) == ["witness.lambda: not witness.alpha - 1"]
