"""Sealed audit reports, canary audit reports and RDP tables: ``rdp-verify check`` repeats them and names every
forged field (issue 27: everything written with --out can be checked)."""

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest
from mutations import assert_every_field_checked, edited

from rdp_verify.accounting.order_lists import ORDER_LISTS
from rdp_verify.audit import check as audit_check
from rdp_verify.audit import rdp_table as table_module
from rdp_verify.audit.claims import Claim, parse_claim
from rdp_verify.audit.report import SCHEMA as AUDIT_SCHEMA
from rdp_verify.audit.report import audit_claim
from rdp_verify.certificates.certificate import content_hash, schema_errors
from rdp_verify.foundations.inputs import InputError, fraction_text
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import canary_report as canary_module
from rdp_verify.tradeoff.canaries import parse_canaries

CLAIM = {"id": "small", "q": "0.01", "sigma": "4", "steps": "100", "delta": "1e-5", "epsilon": "0.13",
         "orders": "2,8,32,128"}
SCORES = "score,member\n" + "".join(f"{s},{m}\n" for s, m in
                                    [("0.9", 1), ("0.8", 1), ("0.8", 0), ("0.5", 1), ("0.3", 0), ("0.1", 0), ("0.1", 1)])


@pytest.fixture(scope="module")
def report():
    return audit_claim(parse_claim(CLAIM, default_id="x"))


@pytest.fixture(scope="module")
def checked(report):
    """check_audit_report(report) and the recomputation it made: the field-by-field tests compare forgeries with that
    one (each recomputation is a full audit, RDP and privacy curve)."""
    fresh = []
    recompute = audit_check.recompute
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(audit_check, "recompute", lambda r: fresh.append(recompute(r)) or fresh[-1])
        problems = audit_check.check_audit_report(report)
    assert len(fresh) == 1
    return problems, fresh[0]


@pytest.fixture(scope="module")
def canary():
    return canary_module.canary_report([Phase(Fraction(1), Fraction(2), 4)], parse_canaries(SCORES),
                                       confidence=Fraction(9, 10), delta=Fraction(1, 10**5), file="c.csv",
                                       sha256="0" * 64)[1]


@pytest.fixture(scope="module")
def table():
    return table_module.rdp_table(Fraction(1, 100), Fraction(11, 10), ORDER_LISTS["opacus_default"][:12],
                                  None, 3, 20, 12)


def test_an_audit_report_is_sealed_and_confirmed(report, checked):
    assert schema_errors(report, AUDIT_SCHEMA) == [] and report["content_hash"] == content_hash(report)
    assert report["settings"] == {"dps": 20, "relative_tolerance": "0.0001", "tolerance": "0.001"}
    # the RDP search lands between listed orders here, so the order list is recorded and checked too
    assert {c["order_list"]["name"] for c in report["accountants"]["rdp"]["conversions"].values()} == {"given"}
    assert checked[0] == []


def test_the_claim_reads_back_as_it_was_audited(report):
    claim = Claim.from_json(report["claim"])
    assert claim == parse_claim(CLAIM, default_id="x")
    with pytest.raises(InputError, match="rdp covers Poisson"):
        Claim.from_json({**report["claim"], "phases": [{"q": "1/10", "sigma": "4", "steps": 10, "sampler": "shuffle",
                                                         "neighbours": "add-remove", "batch_size": 10,
                                                         "dataset_size": 100, "steps_from": "given"}]})


def test_every_field_of_an_audit_report_is_recomputed_or_listed(report, checked):
    caught = assert_every_field_checked(report, checked[1], audit_check.POLICY,
                                        audit_check.compare, AUDIT_SCHEMA, recomputed_from=("claim.**", "settings.*"))
    assert caught > 300  # the embedded core and privacy-curve certificates' fields included


@pytest.mark.parametrize("path, value, named", [
    ("claim.epsilon", "0.05", "verdict"),  # a forged claim is audited again: it is violated
    # slow: a forged setting audited again is covered by the settings.tolerance case (default run)
    pytest.param("settings.dps", 25, "accountants.rdp.conversions.mironov2017.certificates.0.inputs.dps",
                 marks=pytest.mark.slow),
    ("settings.tolerance", "1/10", "accountants.pld"),
])
def test_forged_inputs_are_audited_again(report, path, value, named):
    problems = audit_check.check_audit_report(edited(report, path, value))
    assert any(p.startswith(named) for p in problems), problems


def test_an_embedded_certificate_edited_without_its_seal_is_named(report, checked):
    forged = edited(report, "accountants.pld.certificate.epsilon.upper", "1")
    cert = forged["accountants"]["pld"]["certificate"]
    cert["content_hash"] = report["accountants"]["pld"]["certificate"]["content_hash"]  # the old inner seal
    forged["content_hash"] = content_hash(forged)
    problems = audit_check.compare(forged, copy.deepcopy(checked[1]))
    assert "accountants.pld.certificate: content_hash: does not match the certificate's content (the file was " \
           "modified)" in problems


def test_a_canary_report_is_sealed_and_confirmed(canary):
    assert schema_errors(canary, canary_module.SCHEMA) == [] and canary["content_hash"] == content_hash(canary)
    assert canary["canaries"]["thresholds_from"] == "scores" and canary["thresholds"] == 5
    # the scores' membership, highest first, one token per distinct score: 0.9 a member; 0.8 one member and one
    # non-member; 0.5 a member; 0.3 a non-member; 0.1 one of each
    assert canary["canaries"]["sequence"] == "1(1:1)10(1:1)" and "counts" not in canary["canaries"]
    assert canary["level_rule"] == "any-threshold" and canary["bonferroni_level"] == "0.01"  # 0.1/(2 max(5, 4, 3))
    assert canary_module.check_canary_report(canary) == []


def test_every_field_of_a_canary_report_is_recomputed_or_listed(canary):
    caught = assert_every_field_checked(canary, canary_module.recompute(canary), canary_module.POLICY,
                                        canary_module.POLICY.compare, canary_module.SCHEMA,
                                        recomputed_from=("run.**", "canaries.thresholds_from", "canaries.sequence",
                                                         "confidence", "delta", "level_rule"))
    assert caught > 15


@pytest.mark.parametrize("path, value, problem", [
    ("canaries.sequence", "1(1:1)10(1:1)2", "does not match"),  # the schema's tokens
    ("canaries.sequence", "1(1:0)10(1:1)", "a tie (a:b) holds at least two canaries"),
    ("canaries.sequence", "1111", "both members and non-members"),
    ("level_rule", "fixed-in-advance", "chosen by the data"),
])
def test_a_forged_sequence_or_rule_is_refused(canary, path, value, problem):
    problems = canary_module.check_canary_report(edited(canary, path, value))
    assert len(problems) == 1 and problem in problems[0], problems


def test_forged_counts_are_audited_again(canary):
    fixed = edited(edited(canary, "canaries.thresholds_from", "counts"), "canaries.counts",
                   "threshold,tp,fp,tn,fn\n0.5,400,0,400,0\n")
    del fixed["canaries"]["sequence"]
    fixed["content_hash"] = content_hash(fixed)
    problems = canary_module.check_canary_report(fixed)
    assert any(p.startswith("verdict: claimed \"consistent\", recomputed \"bug\"") for p in problems), problems


V1 = json.loads((Path(__file__).resolve().parents[1] / "tradeoff" / "data" /
                 "canary-audit-v1-before-issue-30.json").read_text())


@pytest.mark.parametrize("i", range(len(V1)))
def test_version_1_reports_are_still_confirmed(i):
    """Reports written before issue 30 (every threshold's counts; counts rows at gamma/(2m); the count of boxes
    below the curve) are re-checked as version 1 computed them, and a forgery of one is still named."""
    report = V1[i]
    assert report["format_version"] == 1 and canary_module.check_canary_report(report) == []
    if len(report["canaries"]["counts"]) > 1000:
        return  # the forgeries below on the small ones
    other = "bug" if report["verdict"] == "consistent" else "consistent"
    assert canary_module.check_canary_report(edited(report, "verdict", other))[0].startswith("verdict: claimed")
    problems = canary_module.check_canary_report(edited(report, "delta", "0.1"))
    assert any(p.startswith("proven_epsilon") for p in problems), problems


@pytest.mark.parametrize("path, value, problem", [
    ("canaries.counts", "threshold,tp,fp,tn,fn\n0.9,1,0,3,3\n0.8,2,1,2,3\n", "the same members"),
    ("canaries.counts", "threshold,tp,fp,tn,fn\n0.9,1,0,3,3\n", "predicts every canary a member"),
    ("canaries.counts", "threshold,tp,fp,tn,fn\n0.1,1,0,3,3\n0.8,4,3,0,0\n", "thresholds decrease"),
])
def test_version_1_counts_said_to_come_from_scores_must_be_those_of_scores(path, value, problem):
    problems = canary_module.check_canary_report(edited(V1[0], path, value))
    assert len(problems) == 1 and problems[0].startswith("inputs: ") and problem in problems[0]


def test_an_rdp_table_is_sealed_and_every_field_checked(table):
    assert schema_errors(table, table_module.SCHEMA) == [] and table_module.check_rdp_table(table) == []
    assert table["inputs"]["orders"] == [fraction_text(a) for a in ORDER_LISTS["opacus_default"][:12]]
    caught = assert_every_field_checked(table, table_module.recompute(table), table_module.POLICY,
                                        table_module.POLICY.compare, table_module.SCHEMA)
    assert caught >= 2 * (2 + 3 * 12)
    problems = table_module.check_rdp_table(edited(table, "inputs.digits", 15))
    assert problems and all(p.startswith("rows.") for p in problems)
