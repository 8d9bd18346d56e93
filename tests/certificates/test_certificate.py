import json

import pytest

from rdp_verify.certificates.certificate import (
    check_certificate,
    content_hash,
    dumps,
    load,
    schema_errors,
    seal,
)
from rdp_verify.certificates.certify import certify
from rdp_verify.foundations.atomic import write_atomic
from rdp_verify.foundations.inputs import SGM


@pytest.fixture(scope="module")
def cert():
    return seal(certify(SGM.parse("0.01", "4", "2.5"), 30))


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


def rehashed(cert, edit):
    out = json.loads(json.dumps(cert))
    edit(out)
    out["content_hash"] = content_hash(out)
    return out


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda c: c["epsilon"].update(upper=c["epsilon"]["lower"]), "epsilon.upper"),
        (lambda c: c["epsilon"].update(lower="0"), "epsilon.relative_width"),
        (lambda c: c["theorem11"].update(condition_5=not c["theorem11"]["condition_5"]), "theorem11.condition_5"),
        (lambda c: c["corollary7"].update(holds=False), "corollary7.holds"),
        (lambda c: c.update(verdict="inconsistent"), "verdict"),
        (lambda c: c["methods"]["series"]["log_A"].update(value="0.5"), "methods.series.log_A"),
        (lambda c: c["inputs"].update(alpha="3.5"), "log_A"),
    ],
)
def test_rehashed_forgeries_are_named(cert, edit, field):
    problems = check_certificate(rehashed(cert, edit))
    assert problems and problems[0].startswith(field)


def test_schema_violation_is_named(cert):
    broken = rehashed(cert, lambda c: c["epsilon"].update(lower="one"))
    assert check_certificate(broken)[0].startswith("schema: epsilon")
