import json
from fractions import Fraction

import pytest
from mutations import assert_every_field_checked, edited, perturbed

from rdp_verify.certificates.certificate import (
    POLICY,
    SCHEMA,
    check_certificate,
    compare,
    dumps,
    load,
    recompute,
    schema_errors,
    seal,
    self_consistency,
)
from rdp_verify.certificates.certify import certify
from rdp_verify.certificates.fields import leaf_paths
from rdp_verify.foundations.atomic import write_atomic
from rdp_verify.foundations.inputs import SGM, fraction_text


@pytest.fixture(scope="module")
def cert():
    return seal(certify(SGM.parse("0.01", "4", "2.5"), 30))


@pytest.fixture(scope="module")
def cert32():  # an integer order: the symbolic method runs (without log B)
    return seal(certify(SGM(Fraction(1, 100), Fraction(4), Fraction(32)), 30))


def test_schema_and_keys(cert):
    assert schema_errors(cert) == []
    for key in ("lower", "upper"):
        assert float(cert["epsilon"][key]) > 0
    assert isinstance(cert["theorem11"]["condition_4"], bool)
    assert isinstance(cert["theorem11"]["condition_5"], bool)
    assert isinstance(cert["corollary7"]["holds"], bool)
    assert cert["verdict"] == "certified"
    assert cert["inputs"] == {"q": "0.01", "sigma": "4", "alpha": "2.5", "dps": 30}


def test_round_trip_confirms(cert, tmp_path):
    path = tmp_path / "c.json"
    write_atomic(path, dumps(cert))
    assert load(path) == cert
    assert check_certificate(load(path)) == []


def test_hash_detects_any_edit(cert):
    tampered = json.loads(json.dumps(cert))
    tampered["epsilon"]["upper"] = tampered["epsilon"]["lower"]
    assert check_certificate(tampered)[0].startswith("content_hash")


@pytest.mark.parametrize("name", ["cert", "cert32"])
def test_every_field_is_recomputed_or_listed_as_recorded(request, name):
    c = request.getfixturevalue(name)
    assert [p for p in leaf_paths(c) if not POLICY.is_verified(p)] == [f"software.{k}" for k in c["software"]]
    assert assert_every_field_checked(c, recompute(c), POLICY, compare, SCHEMA) > 150


def test_forged_inputs_are_recomputed(cert):
    # an edited input changes the recomputation: every field it changes is named
    for path in ("inputs.q", "inputs.sigma", "inputs.alpha", "inputs.dps"):
        for value in perturbed(leaf_paths(cert)[path]):
            assert check_certificate(edited(cert, path, value)), f"{path} = {value!r}"


def test_a_loosened_bound_is_named_and_disagrees_with_its_width(cert):
    # still a true bound, but not what the inputs give, and wider than the certificate's own relative_width
    loose = edited(cert, "epsilon.upper", fraction_text(2 * Fraction(cert["epsilon"]["upper"])))
    assert check_certificate(loose)[0].startswith("epsilon.upper: claimed ")
    assert "epsilon.relative_width: smaller than the relative width of [epsilon.lower, epsilon.upper]" in \
        self_consistency(loose)


def test_a_field_the_format_does_not_have_is_not_confirmed(cert):
    extra = edited({**cert, "cross_check": {**cert["cross_check"], "note": "x"}}, "cross_check.note", "trust me")
    assert check_certificate(extra) == ["cross_check.note: not a field of this certificate format"]


def _shift(text, by):
    return fraction_text(Fraction(text) + by)


@pytest.mark.parametrize("path, value, field", [
    ("epsilon.lower", "0", "epsilon.relative_width"),
    ("epsilon.rigorous", False, "epsilon.rigorous"),
    ("rigorous", False, "rigorous"),
    ("theorem11.condition_4_detail.lhs", "3", "theorem11.condition_4_detail.lhs"),
    ("theorem11.condition_5_detail.rhs", lambda c: _shift(c, Fraction(1, 10**12)), "theorem11.condition_5_detail.rhs"),
    ("theorem11.condition_5", lambda c: not c, "theorem11.condition_5"),
    ("theorem11.all_hold", lambda c: not c, "theorem11.all_hold"),
    ("theorem11.sigma_ge_4", False, "theorem11.sigma_ge_4"),
    ("theorem11.bound_exact", "0.0004", "theorem11.bound_exact"),
    ("theorem11.epsilon_le_bound", False, "theorem11.epsilon_le_bound"),
    ("corollary7.holds", False, "corollary7.holds"),
    ("corollary7.status", "unresolved", "corollary7.status"),
    ("corollary7.log_gap.upper", "1", "corollary7.log_gap"),
    ("cross_check.consistent", False, "cross_check.consistent"),
    ("cross_check.epsilon_agreement_digits", 3.5, "cross_check.epsilon_agreement_digits"),
    ("cross_check.methods_compared.0", "series", "cross_check.methods_compared"),
    ("log_A.lower", lambda c: _shift(c, Fraction(1, 1000)), "epsilon.lower"),
    ("verdict", "inconsistent", "verdict"),
])
def test_derived_fields_are_re_derived_from_the_certificate_itself(cert, path, value, field):
    # self_consistency alone (check runs it once every field equals the recomputation): catches a bug in certify
    assert self_consistency(cert) == []
    new = value(leaf_paths(cert)[path]) if callable(value) else value
    assert any(line.startswith(field + ":") for line in self_consistency(edited(cert, path, new)))


def test_schema_violation_is_named(cert):
    broken = edited(cert, "epsilon.lower", "one")
    assert check_certificate(broken)[0].startswith("schema: epsilon")
