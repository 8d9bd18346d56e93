"""Partitioned golden datasets: the rows of golden.build, chunks that survive a kill, tampering found."""

import hashlib
import json

import pytest

from rdp_verify.foundations.inputs import InputError
from rdp_verify.reference import dataset, golden
from rdp_verify.reference.grid import Grid

GRID = {"q": ["0.1", "0.2"], "sigma": ["0.5", "1"], "alpha": ["1.5", "2", "4"], "chunk_size": 5}  # 12 points, 3 chunks


def grid_file(tmp_path, **fields):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps({"format": "rdp_verify golden grid", "version": 1, **GRID, **fields}))
    return path


def run(spec, out, workers=1):
    return list(dataset.build(dataset.plan(spec, out), workers))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A clean serial run: the directory, its manifest bytes and its chunk bytes."""
    out = tmp_path_factory.mktemp("clean") / "ds"
    spec = dataset.read_grid(grid_file(tmp_path_factory.mktemp("g")))
    run(spec, out)
    return spec, out, (out / "manifest.json").read_bytes(), {p.name: p.read_bytes() for p in out.glob("chunk-*")}


def test_chunks_reassemble_to_what_golden_build_gives(reference, monkeypatch):
    spec, out, manifest, chunks = reference
    assert sorted(chunks) == ["chunk-00000.csv", "chunk-00001.csv", "chunk-00002.csv"]
    rows = "".join(text.decode().split("\n", 1)[1] for _, text in sorted(chunks.items()))
    monkeypatch.setattr(golden, "GRID", Grid.parse(GRID["q"], GRID["sigma"], GRID["alpha"]))
    assert golden.header() + rows == golden.build()
    m = json.loads(manifest)
    assert (m["points"], m["chunk_count"], m["grid"]) == (12, 3, GRID)
    assert [(c["start"], c["stop"], c["rows"]) for c in m["chunks"]] == [(0, 5, 5), (5, 10, 5), (10, 12, 2)]
    assert all(c["sha256"] == hashlib.sha256(chunks[c["file"]]).hexdigest() for c in m["chunks"])
    assert dataset.verify(out, sample=1000) == (spec, [])  # every point, once


def test_a_killed_run_resumes_to_the_same_manifest(reference, tmp_path):
    spec, _, manifest, chunks = reference
    out = tmp_path / "ds"
    done = dataset.build(dataset.plan(spec, out), 1)
    next(done)  # the first chunk is written, then the run is "killed"
    done.close()
    (out / ".chunk-00001.csv.abc.tmp").write_text("half a chunk")  # what a kill inside write_atomic leaves
    partial = json.loads((out / "manifest.json").read_text())
    assert [c["index"] for c in partial["chunks"]] == [0]
    assert dataset.verify(out)[1] == ["2 of 3 chunks not computed yet (chunk-00001.csv, …): rerun the command that "
                                      "made the dataset to resume"]
    p = dataset.plan(spec, out)
    assert (sorted(p.kept), p.todo, p.problems) == ([0], [1, 2], [])
    assert list(dataset.build(p, 1)) == [1, 2]
    assert (out / "manifest.json").read_bytes() == manifest
    assert {f.name: f.read_bytes() for f in out.iterdir()} == {"manifest.json": manifest, **chunks}


def test_corrupt_and_missing_chunks_are_recomputed_and_the_rest_kept(reference, tmp_path):
    spec, _, manifest, chunks = reference
    out = tmp_path / "ds"
    run(spec, out)
    (out / "chunk-00001.csv").write_bytes(chunks["chunk-00001.csv"].replace(b"0.1,", b"0.2,", 1))
    (out / "chunk-00002.csv").unlink()
    p = dataset.plan(spec, out)
    assert (sorted(p.kept), p.todo) == ([0], [1, 2])
    assert p.problems == ["chunk-00001.csv: SHA-256 differs from the manifest (corrupt or modified)",
                          "chunk-00002.csv: missing"]
    run(spec, out)
    assert (out / "manifest.json").read_bytes() == manifest


def test_tampering_is_found(reference, tmp_path):
    spec, _, manifest, chunks = reference
    out = tmp_path / "ds"
    run(spec, out)
    chunk = out / "chunk-00002.csv"
    text = chunk.read_text()
    last = text[-2]  # the last digit of the last interval end
    chunk.write_text(text[:-2] + ("1" if last == "0" else "0") + "\n")
    assert dataset.verify(out)[1] == ["chunk-00002.csv: SHA-256 differs from the manifest (corrupt or modified)"]
    # a forger who also rewrites the hash is caught only by recomputing the row
    m = json.loads(manifest)
    m["chunks"][2]["sha256"] = hashlib.sha256(chunk.read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(m))
    assert dataset.verify(out)[1] == []
    assert dataset.verify(out, sample=12)[1] == ["chunk-00002.csv: row of point 11 differs from its recomputation"]
    # rows of other points, even with a matching hash, are not this grid's chunk
    chunk.write_bytes(chunks["chunk-00001.csv"])
    m["chunks"][2]["sha256"] = hashlib.sha256(chunks["chunk-00001.csv"]).hexdigest()
    (out / "manifest.json").write_text(json.dumps(m))
    assert dataset.verify(out)[1] == ["chunk-00002.csv: its rows are not the points [10, 12) of the grid"]


def test_another_grid_or_a_foreign_directory_is_never_resumed(reference, tmp_path):
    spec, out, _, _ = reference
    other = dataset.read_grid(grid_file(tmp_path, chunk_size=4))
    with pytest.raises(InputError, match="another grid"):
        dataset.plan(other, out)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty and holds no manifest.json"):
        dataset.plan(spec, tmp_path)
    with pytest.raises(InputError, match="not a directory"):
        dataset.plan(spec, tmp_path / "notes.txt")


def test_canonical_grid_texts_and_default_chunk_size(tmp_path):
    spec = dataset.read_grid(grid_file(tmp_path, q=["0.10", "2e-1"], alpha=["1.50", "2", "4"]))
    assert spec.to_json() == GRID
    path = tmp_path / "default.json"
    path.write_text(json.dumps({"format": "rdp_verify golden grid", "version": 1, "q": ["0.1"], "sigma": ["1"],
                                "alpha": ["2"]}))
    assert dataset.read_grid(path).chunk_size == dataset.DEFAULT_CHUNK_SIZE == 100


@pytest.mark.parametrize("fields, message", [
    ({"format": "something"}, "not a grid file"),
    ({"version": 2}, "not a grid file"),
    ({"extra": 1}, "unknown field 'extra'"),
    ({"q": []}, "'q' must be a non-empty list of decimal strings"),
    ({"sigma": [1, 2]}, "'sigma' must be a non-empty list of decimal strings"),
    ({"alpha": "2"}, "'alpha' must be a non-empty list"),
    ({"q": ["0.1", "1/10"]}, "'q' repeats a value"),
    ({"q": ["1.5"]}, "q"),
    ({"alpha": ["1"]}, "alpha"),
    ({"chunk_size": 0}, "'chunk_size' must be a whole number >= 1"),
    ({"chunk_size": 2.5}, "'chunk_size' must be a whole number >= 1"),
    ({"chunk_size": True}, "'chunk_size' must be a whole number >= 1"),
])
def test_bad_grid_files(tmp_path, fields, message):
    with pytest.raises(InputError, match=message) as exc:
        dataset.read_grid(grid_file(tmp_path, **fields))
    assert "\n" not in str(exc.value) and "grid.json" in str(exc.value)


def test_unreadable_grid_files(tmp_path):
    with pytest.raises(InputError, match="grid file .*: no such file"):
        dataset.read_grid(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="grid file .* is not JSON"):
        dataset.read_grid(tmp_path / "bad.json")
