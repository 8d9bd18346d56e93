"""Sealed RDP tables of event trees (format version 3): written, re-verified by recomputation, every field checked, a
tampered table refused; tables of SG(q, σ) keep version 2 and are still checked."""

import json
from fractions import Fraction

import pytest
from mutations import assert_every_field_checked, edited

from rdp_verify.audit import rdp_table as table_module
from rdp_verify.certificates.certificate import content_hash, schema_errors
from rdp_verify.events import model as m
from rdp_verify.events.model import UnsupportedEvent
from rdp_verify.events.read import to_json

F = Fraction
TREE = m.ComposedDpEvent([m.SelfComposedDpEvent(m.PoissonSampledDpEvent(F(1, 100), m.GaussianDpEvent(1)), 200),
                          m.SelfComposedDpEvent(m.LaplaceDpEvent(20), 3), m.ZCDpEvent(F(1, 1000))])
ORDERS = [F(2), F(8), F(65, 2)]


@pytest.fixture(scope="module")
def table():
    return table_module.event_rdp_table(TREE, None, ORDERS, None, 20, 12)


def test_an_event_table_is_sealed_and_confirmed(table):
    assert table["format_version"] == 3 and schema_errors(table, table_module.EVENT_SCHEMA) == []
    assert table["content_hash"] == content_hash(table)
    assert table["inputs"]["event"] == to_json(TREE) and table["inputs"]["neighboring_relation"] == "ADD_OR_REMOVE_ONE"
    assert [(c["component"], c["uses"], c["bound"]) for c in table["components"]] == [
        ("SampledGaussian(q=0.01, sigma=1)", 200, "exact"), ("Laplace(b=20, sensitivity=1)", 3, "exact"),
        ("ZCDp(rho=0.001, xi=0)", 1, "upper only")]
    assert [r["alpha"] for r in table["rows"]] == ["2", "8", "32.5"]
    assert table_module.check_rdp_table(table) == []


def test_every_field_of_an_event_table_is_recomputed(table):
    caught = assert_every_field_checked(table, table_module.recompute(table), table_module.POLICY,
                                        table_module.POLICY.compare, table_module.EVENT_SCHEMA)
    assert caught >= 2 * (3 + 4 * 3 + 2 * 3)


@pytest.mark.parametrize("path, value, named", [
    ("rows.1.epsilon.upper", "0.2", "rows.1.epsilon.upper"),  # a smaller claim, resealed
    ("inputs.event.events.1.event.noise_multiplier", "10", "rows.0.epsilon"),  # another tree: every row differs
    ("inputs.neighboring_relation", "REPLACE_ONE", "inputs"),  # Laplace is refused under REPLACE_ONE
    ("components.2.bound", "exact", "components.2.bound"),
])
def test_a_tampered_table_is_refused(table, path, value, named):
    forged = edited(table, path, value)  # resealed: the content hash matches, the recomputation does not
    problems = table_module.check_rdp_table(forged)
    assert any(p.startswith(named) for p in problems), problems


def test_a_table_edited_without_its_seal_fails_the_hash(table):
    forged = json.loads(json.dumps(table))
    forged["rows"][0]["epsilon"]["upper"] = "0.01"
    assert table_module.check_rdp_table(forged) == [
        "content_hash: does not match the certificate's content (the file was modified)"]


def test_the_versions_do_not_mix(table):
    as_v2 = edited(table, "format_version", 2)  # an event table declaring version 2 fails version 2's schema
    assert table_module.check_rdp_table(as_v2)[0].startswith("schema: ")
    sgm = table_module.rdp_table(F(1, 100), F(1), ORDERS, None, 200, 20, 12)
    assert sgm["format_version"] == 2 and table_module.check_rdp_table(sgm) == []
    assert table_module.check_rdp_table(edited(sgm, "format_version", 3))[0].startswith("schema: ")


def test_non_private_and_refused_trees_write_no_table():
    with pytest.raises(table_module.NotPrivate, match="holds a non-private event"):
        table_module.event_rdp_table(m.ComposedDpEvent([TREE, m.NonPrivateDpEvent()]), None, ORDERS, None, 20, 12)
    with pytest.raises(UnsupportedEvent, match="MixtureOfGaussiansDpEvent"):
        table_module.event_rdp_table(m.MixtureOfGaussiansDpEvent(1, [1], [1]), None, ORDERS, None, 20, 12)
