"""The shared readers (rdp_verify.foundations.files) and every command that reads a file: hostile structure is
refused in one line, exit 2, whatever command reads it (issue 27, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdp_verify.cli import main
from rdp_verify.foundations import files
from rdp_verify.foundations.files import parse_csv, parse_json, read_json, read_text
from rdp_verify.foundations.inputs import InputError

# every reader of a user's file, as the command line calls it: (name, argv with FILE in place of the path)
READERS = {
    "check": ["check", "FILE"],
    "dp --phases": ["dp", "--phases", "FILE", "--delta", "1e-5"],
    "tradeoff --phases": ["tradeoff", "--phases", "FILE"],
    "audit --claims": ["audit", "--claims", "FILE"],
    "golden --grid": ["golden", "--grid", "FILE", "--out", "OUTDIR"],
    "audit --canaries": ["audit", "--canaries", "FILE", "--q", "1", "--sigma", "1", "--steps", "1"],
}
JSON_READERS = [r for r in READERS if r != "audit --canaries"]


def run_reader(tmp_path: Path, reader: str, content: bytes, capsys, suffix: str | None = None) -> tuple[int, str]:
    suffix = suffix or (".csv" if reader == "audit --canaries" else ".json")
    path = tmp_path / f"input{suffix}"
    path.write_bytes(content)
    argv = [str(path) if a == "FILE" else str(tmp_path / "out") if a == "OUTDIR" else a for a in READERS[reader]]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, err


def assert_refused(code: int, err: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rdp-verify: error: "), err
    assert "Traceback" not in err


DEEP = {
    "arrays": b"[" * 100_000,
    "objects": b'{"a":' * 100_000,
    "closed arrays": b"[" * 5_000 + b"]" * 5_000,
}


@pytest.mark.parametrize("reader", JSON_READERS)
@pytest.mark.parametrize("kind", DEEP)
def test_deep_nesting_is_refused_in_one_line(tmp_path, capsys, reader, kind):
    # before: RecursionError, a traceback and exit 1 ("a field fails" for check)
    code, err = run_reader(tmp_path, reader, DEEP[kind], capsys)
    assert_refused(code, err)
    assert "deep" in err


BROKEN = {
    "truncated": b'{"phases": [{"q": "0.01", "sigma": "1", "st',
    "not utf-8": b"\xff\xfe\x00[\x00",
    "NaN": b'[{"q": NaN, "sigma": 1, "steps": 1}]',
    "Infinity": b'{"format": "rdp_verify certificate", "x": Infinity}',
    "a 5000-digit integer": b"[" + b"9" * 5000 + b"]",
    "empty": b"",
    "a directory's worth of nothing": b"   \n  ",
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", BROKEN)
def test_broken_files_are_refused_in_one_line(tmp_path, capsys, reader, kind):
    code, err = run_reader(tmp_path, reader, BROKEN[kind], capsys)
    assert_refused(code, err)


MISTYPED = {
    "a number": 5,
    "a string": "phases",
    "a list of numbers": [1, 2, 3],
    "null fields": [{"q": None, "sigma": None, "steps": None}],
    "nested lists as values": [{"q": [["0.01"]], "sigma": {"x": 1}, "steps": True}],
    "an object of the wrong kind": {"phases": {"q": "0.01"}},
    "an unknown format": {"format": "some other tool", "value": 1},
    "an empty object": {},
}


@pytest.mark.parametrize("reader", JSON_READERS)
@pytest.mark.parametrize("kind", MISTYPED)
def test_mistyped_files_are_refused_in_one_line(tmp_path, capsys, reader, kind):
    code, err = run_reader(tmp_path, reader, json.dumps(MISTYPED[kind]).encode(), capsys)
    assert_refused(code, err)


@pytest.mark.parametrize("reader", READERS)
def test_files_beyond_the_size_limit_are_refused_before_reading(tmp_path, capsys, monkeypatch, reader):
    monkeypatch.setattr(files, "MAX_BYTES", 1000)
    code, err = run_reader(tmp_path, reader, b"[" + b" " * 2000 + b"]", capsys)
    assert_refused(code, err)
    assert "larger than" in err


@pytest.mark.parametrize("reader", READERS)
def test_a_missing_file_and_a_directory_are_named(tmp_path, capsys, reader):
    argv = [str(tmp_path / "nope.json") if a == "FILE" else str(tmp_path / "out") if a == "OUTDIR" else a
            for a in READERS[reader]]
    assert_refused(main(argv), capsys.readouterr().err)
    (tmp_path / "d.json").mkdir()
    argv = [str(tmp_path / "d.json") if a == "FILE" else str(tmp_path / "out") if a == "OUTDIR" else a
            for a in READERS[reader]]
    code, err = main(argv), capsys.readouterr().err
    assert_refused(code, err)
    assert "directory" in err


@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(
    st.binary(max_size=200),
    st.text(alphabet='[]{}",:0123456789.e-nultrsfaNIy \n\\', max_size=200).map(str.encode),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                 max_leaves=10).map(lambda v: json.dumps(v).encode()),
))
def test_any_content_is_refused_in_one_line(tmp_path, capsys, reader, content):
    """Random bytes, bracket soup and random JSON values: never a traceback, always one line and exit 2."""
    code, err = run_reader(tmp_path, reader, content, capsys)
    assert_refused(code, err)


# -- the readers themselves ------------------------------------------------------------------------------

def test_a_byte_order_mark_is_read_as_nothing(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": "1e-5"}')
    assert read_text(path, "file") == '{"a": "1e-5"}'
    assert read_json(path, "file") == {"a": "1e-5"}
    assert parse_csv("\ufeffscore,member\n1,1\n", "canaries") == [{"score": "1", "member": "1"}]


def test_numbers_as_text_keep_their_exact_spelling():
    assert parse_json('[1e-5, 0.1, 7]', "x", numbers_as_text=True) == ["1e-5", "0.1", "7"]


def test_strings_holding_brackets_do_not_count_as_depth():
    deep_text = json.dumps({"note": "[" * 10_000 + '"\\"{{{'})
    assert parse_json(deep_text, "x")["note"].startswith("[[[")


def test_the_depth_limit_is_exact():
    assert parse_json("[" * files.MAX_DEPTH + "]" * files.MAX_DEPTH, "x") is not None
    with pytest.raises(InputError, match=f"{files.MAX_DEPTH + 1} deep"):
        parse_json("[" * (files.MAX_DEPTH + 1) + "]" * (files.MAX_DEPTH + 1), "x")


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,2,3\n", "3 cells, the header 2"),
    ("a,b\n1\n", "1 cells, the header 2"),
    ("a,a\n1,2\n", "repeated"),
    ("a,\n1,2\n", "empty"),
    ("", "empty"),
])
def test_csv_shape_is_checked(text, message):
    with pytest.raises(InputError, match=message):
        parse_csv(text, "f")


def test_blank_csv_lines_are_skipped_and_cells_stripped():
    assert parse_csv("a, b\n\n 1 ,2\n,\n", "f") == [{"a": "1", "b": "2"}]


def test_the_row_limit(monkeypatch):
    monkeypatch.setattr(files, "MAX_ROWS", 2)
    assert len(parse_csv("a\n1\n2\n", "f")) == 2
    with pytest.raises(InputError, match="more than 2 rows"):
        parse_csv("a\n1\n2\n3\n", "f")


@pytest.mark.parametrize("content", [DEEP["arrays"], BROKEN["truncated"], b"\xff\xfe", b'{"format": 1}'])
def test_a_hostile_manifest_is_refused_in_one_line(tmp_path, capsys, content):
    (tmp_path / "manifest.json").write_bytes(content)
    assert_refused(main(["golden", "--verify", str(tmp_path)]), capsys.readouterr().err)


# -- repeated keys (issue 39, item 2) ----------------------------------------------------------------------

EVENT_READERS = {f"{c} --event": [c, "--event", "FILE", *more] for c, more in
                 (("dp", ["--delta", "1e-5"]), ("rdp", ["--orders", "2"]), ("tradeoff", []),
                  ("calibrate", ["--target-epsilon", "1", "--delta", "1e-5"]),
                  ("audit", ["--delta", "1e-5", "--epsilon", "1"]))}


@pytest.mark.parametrize("reader", [*JSON_READERS, *EVENT_READERS])
def test_a_repeated_key_is_refused_naming_the_key_and_the_file(tmp_path, capsys, monkeypatch, reader):
    # before: Python's parser kept the last value silently, so each reader saw another object than a person does
    monkeypatch.setitem(READERS, reader, READERS.get(reader) or EVENT_READERS[reader])
    code, err = run_reader(tmp_path, reader, b'[{"sigma": "1", "x": {"sigma": "1", "sigma": "100"}}]', capsys)
    assert_refused(code, err)
    assert "repeats the key 'sigma'" in err and str(tmp_path / "input.json") in err, err


def test_repeated_keys_are_refused_at_any_depth_and_distinct_keys_kept():
    with pytest.raises(InputError, match="repeats the key 'b'"):
        parse_json('{"a": [{"b": 1, "c": 2, "b": 1}]}', "text")
    assert parse_json('{"a": {"b": 1}, "b": {"a": 2}}', "text") == {"a": {"b": 1}, "b": {"a": 2}}


def test_an_event_file_with_a_repeated_noise_multiplier_computes_nothing(tmp_path, capsys):
    # the issue's file: before, computed silently with b = 100 (the last value), exit 0
    path = tmp_path / "e.json"
    path.write_text('{"name": "LaplaceDpEvent", "noise_multiplier": "1", "noise_multiplier": "100"}')
    code = main(["dp", "--event", str(path), "--delta", "1e-5"])
    out, err = capsys.readouterr()
    assert_refused(code, err)
    assert out == "" and "repeats the key 'noise_multiplier'" in err


def test_check_refuses_a_certificate_that_repeats_a_key_before_anything_else(tmp_path, capsys):
    # before: 'confirmed' (exit 0): the hash is computed over the parsed object, which kept the second (true)
    # value, while a person reading the file sees the first, a claim nothing verified
    cert = tmp_path / "cert.json"
    assert main(["certify", "--q", "0.01", "--sigma", "4", "--alpha", "32", "--dps", "20", "--out", str(cert)]) == 0
    capsys.readouterr()
    text = cert.read_text()
    upper = json.loads(text)["epsilon"]["upper"]
    forged = text.replace(f'"upper": "{upper}"', f'"upper": "0.5",\n    "upper": "{upper}"', 1)
    assert forged != text
    cert.write_text(forged)
    code = main(["check", str(cert)])
    out, err = capsys.readouterr()
    assert_refused(code, err)
    assert out == "" and "repeats the key 'upper'" in err and str(cert) in err
    cert.write_text(text)
    assert main(["check", str(cert)]) == 0
