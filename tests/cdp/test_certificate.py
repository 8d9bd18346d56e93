"""CDP certificates: schema, content hash, outward rounding."""

from fractions import Fraction as F

import jsonschema
import pytest

from rdp_verify.cdp.certificate import interval, schema_errors, seal
from rdp_verify.certificates.certificate import content_hash


def body(verdict="holds", **extra):
    return {"inputs": {"claim": "zcdp"}, "claim": {"notion": "zCDP", "statement": "s", "parameters": {"rho": "0.1"}},
            "mechanism": {"name": "Gaussian", "q": "1", "sigma": "2"}, "verdict": verdict, "proof": "p", **extra}


def test_seal_adds_hash_and_validates():
    cert = seal(body())
    assert cert["content_hash"] == content_hash(cert) and schema_errors(cert) == []
    assert schema_errors({k: v for k, v in cert.items() if k != "inputs"}) == ["(top level): 'inputs' is a required property"]
    cert["verdict"] = "refuted"
    assert any("witness" in e for e in schema_errors(cert))


def test_refuted_without_witness_is_rejected():
    with pytest.raises(jsonschema.ValidationError):
        seal(body("refuted"))
    assert seal(body("refuted", witness={"alpha": "2"}))["verdict"] == "refuted"


def test_interval_rounds_outward():
    out = interval(F(1, 3), F(2, 3), 3)
    assert out == {"lower": "0.333", "upper": "0.667"}
    assert F(out["lower"]) <= F(1, 3) and F(out["upper"]) >= F(2, 3)
