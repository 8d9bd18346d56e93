"""The field lists of a certificate format and the comparison every check uses."""

import pytest

from rdp_verify.certificates.fields import FieldPolicy, leaf_paths, matches

POLICY = FieldPolicy(verified=("a.*.x", "b", "b.**", "c", "content_hash"), not_verified=("software.*",))
CERT = {"a": [{"x": "1"}, {"x": True}], "b": {"k": [], "m": {"n": None}}, "c": 1.5,
        "software": {"python": "3"}, "content_hash": "sha256:0"}


def test_leaf_paths_are_scalars_nulls_and_empty_containers_in_document_order():
    assert leaf_paths(CERT) == {"a.0.x": "1", "a.1.x": True, "b.k": [], "b.m.n": None, "c": 1.5,
                                "software.python": "3", "content_hash": "sha256:0"}


@pytest.mark.parametrize("pattern, path, expected", [
    ("a.*.x", "a.0.x", True),
    ("a.*.x", "a.0.y", False),
    ("a.*.x", "a.0", False),
    ("a.*", "a.0.x", False),
    ("b.**", "b", True),  # ** also covers the subtree's root (null, or an empty object)
    ("b.**", "b.m.n", True),
    ("b.**", "bb.m", False),
    ("software.*", "software.python", True),
])
def test_patterns(pattern, path, expected):
    assert matches(pattern, path) is expected


def test_a_partition_has_every_leaf_in_exactly_one_list():
    assert POLICY.partition_errors(CERT) == []
    assert POLICY.verified_count(CERT) == 6
    assert POLICY.partition_errors({**CERT, "d": 1}) == ["d"]  # in neither list
    both = POLICY + FieldPolicy(verified=(), not_verified=("c",))
    assert both.partition_errors(CERT) == ["c"]  # in both


def test_under_prefixes_an_embedded_certificate():
    inner = FieldPolicy(verified=("x",), not_verified=("software.*",)).under("point.certificate")
    assert inner == FieldPolicy(verified=("point.certificate.x",), not_verified=("point.certificate.software.*",))


def test_compare_names_each_differing_verified_field():
    assert POLICY.compare(CERT, CERT) == []
    fresh = {**CERT, "a": [{"x": "2"}, {"x": 1}], "c": 1.5}
    # "1" vs "2", and true vs 1: equal in Python, not in JSON
    assert POLICY.compare(CERT, fresh) == ['a.0.x: claimed "1", recomputed "2"', "a.1.x: claimed true, recomputed 1"]


def test_compare_ignores_recorded_fields_and_content_hashes():
    fresh = {**CERT, "software": {"python": "4"}, "content_hash": "sha256:1"}
    assert POLICY.compare(CERT, fresh) == []


def test_compare_reports_the_shallowest_difference_once():
    fresh = {**CERT, "b": None}
    assert POLICY.compare(CERT, fresh) == ["b: claimed an object, recomputed null"]
    assert POLICY.compare(fresh, CERT) == ["b: claimed null, recomputed an object"]
    assert POLICY.compare({**CERT, "b": {"k": ["x"], "m": {}}}, CERT) == [
        "b.k: claimed a list of 1, recomputed []", "b.m: claimed {}, recomputed an object"]


def test_an_unlisted_field_is_reported_from_either_side():
    assert POLICY.compare({**CERT, "a": None}, CERT) == ["a: not a field of this certificate format"]
    assert POLICY.compare({**CERT, "e": "x"}, CERT) == ["e: not a field of this certificate format"]
    assert POLICY.compare(CERT, {**CERT, "e": "x"}) == [
        "e: recomputed, but in no field list (a gap in rdp_verify's field policy)"]
