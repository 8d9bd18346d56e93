"""--cluster on the grid commands, and partitioned golden datasets from the command line."""

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rdp_verify.cli import main
from rdp_verify.foundations import cluster

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "examples" / "grid-small.json"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir())}


# slow: a golden dataset on local:2 is covered by docs/cluster.md:103, the same command with its line compared, then
# verified and every row found in golden-v1.csv (tests/test_docs.py), and the manifest's independence of the workers by
# test_a_killed_run_resumes_to_the_identical_dataset (default run)
@pytest.mark.slow
def test_golden_dataset_on_two_local_workers_equals_serial_and_verifies(tmp_path, capsys):
    assert run(capsys, "golden", "--grid", SMALL, "--out", tmp_path / "serial")[0] == 0
    code, out, err = run(capsys, "golden", "--grid", SMALL, "--out", tmp_path / "dask", "--cluster", "local:2")
    assert code == 0 and out == "" and "72 rows in 6 chunks (6 computed, 0 kept)" in err
    assert files(tmp_path / "dask") == files(tmp_path / "serial")
    code, out, err = run(capsys, "golden", "--verify", tmp_path / "dask", "--sample", "3")
    assert code == 0 and out.endswith("confirmed (72 rows in 6 chunks: manifest, SHA-256 and grid points of every "
                                      "chunk, 3 rows recomputed)\n")


def test_certify_grid_on_a_running_scheduler_equals_serial(capsys):
    # one worker process (each one started costs about 2.3 CPU-s of imports) and a grid of two points
    distributed = pytest.importorskip("distributed")
    args = ["certify", "--q", "0.01,0.1", "--sigma", "1", "--alpha", "2", "--dps", "15"]
    code, serial, _ = run(capsys, *args)
    assert code == 0 and len(json.loads(serial)) == 2
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as scheduler:
        assert scheduler.scheduler_address.startswith("tcp://")
        assert run(capsys, *args, "--cluster", scheduler.scheduler_address)[:2] == (0, serial)


def test_dp_phases_on_two_processes_give_the_serial_certificate(capsys):
    args = ["dp", "--q", "0.1,0.2", "--sigma", "1,2", "--steps", "10,5", "--delta", "1e-5", "--tolerance", "0.1",
            "--json"]  # q = 0.1 and 0.2: 1.1 CPU-s serially (q = 0.01 and 0.02: 1.6)
    code, serial, _ = run(capsys, *args)
    assert code == 0 and json.loads(serial)["verdict"] == "certified"
    assert run(capsys, *args, "--jobs", "2")[:2] == (0, serial)


def test_a_killed_run_resumes_to_the_identical_dataset(tmp_path, capsys):
    grid = json.loads(SMALL.read_text())
    grid.update(alpha=["1.5", "2", "3", "4", "8", "16", "32", "64", "128", "256"], chunk_size=2)  # 60 chunks
    (tmp_path / "grid.json").write_text(json.dumps(grid))
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "rdp_verify.cli", "golden", "--grid", tmp_path / "grid.json",
                             "--out", killed], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if json.loads((killed / "manifest.json").read_text())["chunks"]:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.005)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    listed = len(json.loads((killed / "manifest.json").read_text())["chunks"])
    assert 1 <= listed < 60
    code, out, err = run(capsys, "golden", "--verify", killed)
    assert code == 1 and f"{60 - listed} of 60 chunks not computed yet" in out
    code, _, err = run(capsys, "golden", "--grid", tmp_path / "grid.json", "--out", killed, "--jobs", "2")
    assert code == 0 and f"resuming {killed}: {listed} of 60 chunks verified" in err
    assert run(capsys, "golden", "--grid", tmp_path / "grid.json", "--out", tmp_path / "clean")[0] == 0
    assert files(killed) == files(tmp_path / "clean")


def test_a_tampered_chunk_fails_verify_naming_it_and_is_recomputed(tmp_path, capsys):
    out = tmp_path / "ds"
    assert run(capsys, "golden", "--grid", SMALL, "--out", out)[0] == 0
    clean = files(out)
    chunk = out / "chunk-00003.csv"
    chunk.write_text(chunk.read_text().replace("0.01,", "0.02,", 1))
    code, stdout, err = run(capsys, "golden", "--verify", out)
    assert (code, err) == (1, "")
    assert stdout == f"{out}: FAILED chunk-00003.csv: SHA-256 differs from the manifest (corrupt or modified)\n"
    code, _, err = run(capsys, "golden", "--grid", SMALL, "--out", out)
    assert code == 0 and "chunk-00003.csv: SHA-256 differs from the manifest (corrupt or modified): recomputing" in err
    assert "5 of 6 chunks verified, 1 to compute" in err and files(out) == clean


@pytest.mark.parametrize("argv", [
    ["certify", "--q", "0.01", "--sigma", "1", "--alpha", "2", "--out", "{tmp}/c.json"],
    ["golden", "--out", "{tmp}/g.csv"],
    ["golden", "--grid", str(SMALL), "--out", "{tmp}/ds"],
    ["audit", "--claims", str(ROOT / "examples" / "claims.json"), "--out", "{tmp}/a.json"],
    ["dp", "--q", "0.01,0.02", "--sigma", "1", "--steps", "10", "--delta", "1e-5", "--out", "{tmp}/d.json"],
    ["figure1", "--out", "{tmp}/fig"],
])
@pytest.mark.parametrize("extra, message", [
    (["--cluster", "local:0"], "--cluster local:0: a local cluster needs at least 1 worker"),
    (["--cluster", "tcp://host"], "--cluster 'tcp://host': expected local:N"),
    (["--cluster", "local:2", "--jobs", "2"], "give --jobs or --cluster, not both"),
    (["--jobs", "0"], "--jobs 0: must be at least 1"),
])
def test_bad_workers_exit_2_with_one_line_and_nothing_written(tmp_path, capsys, argv, extra, message):
    code, out, err = run(capsys, *[a.format(tmp=tmp_path) for a in argv], *extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []


def test_unreachable_scheduler_exits_2_and_writes_nothing(tmp_path, capsys, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    code, out, err = run(capsys, "golden", "--grid", SMALL, "--out", tmp_path / "ds", "--cluster",
                         f"tcp://127.0.0.1:{port}")
    assert code == 2 and err.count("\n") == 1 and f"--cluster tcp://127.0.0.1:{port}: no Dask scheduler" in err
    assert list(tmp_path.iterdir()) == []


def test_without_dask_cluster_gives_the_install_line(tmp_path):
    code = ("import sys; sys.modules['distributed'] = None\n"
            "from rdp_verify.cli import main\n"
            f"sys.exit(main(['certify', '--q', '0.01', '--sigma', '1', '--alpha', '2', '--out', {str(tmp_path / 'c')!r},"
            " '--cluster', 'local:2']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("rdp-verify: error: --cluster needs Dask, which is not installed: "
                           "pip install 'rdp_verify[cluster]'\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["--grid", str(SMALL)], "--grid needs --out DIR"),
    (["--verify", "x", "--out", "y"], "--verify DIR takes neither --grid nor --out"),
    (["--sample", "3"], "--sample goes with --verify"),
    (["--verify", "{tmp}", "--sample", "-1"], "--sample -1: must be at least 0"),
    (["--verify", "{tmp}"], "manifest.json: no such file"),
])
def test_dataset_usage_errors(tmp_path, capsys, argv, message):
    code, out, err = run(capsys, "golden", *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and err.count("\n") == 1 and message in err and list(tmp_path.iterdir()) == []

