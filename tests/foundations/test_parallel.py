"""The one map over workers: same results in the same order serially, on processes and on Dask."""

import math
import os
import subprocess
import sys

import pytest

from rdp_verify.foundations.cluster import ClusterError, ClusterSpec
from rdp_verify.foundations.parallel import MAX_BATCH, Pool, batch_size, progress_map

ITEMS = list(range(150))
EXPECTED = [math.factorial(n) for n in ITEMS]


def test_batch_size_balances_and_is_bounded():
    assert batch_size(8, 2) == 1  # few points: one per task
    assert batch_size(160, 2) == 10  # 8 tasks per worker
    assert batch_size(20_000, 2) == MAX_BATCH  # many points: bounded tasks
    assert batch_size(0, 4) == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_processes_keep_the_order(jobs):
    assert progress_map(math.factorial, ITEMS, jobs, "x") == EXPECTED
    completed = list(Pool(jobs).completed(math.factorial, ITEMS, "x", batch=7))
    assert sorted(completed) == list(enumerate(EXPECTED))


def test_two_worker_local_cluster_serves_several_maps_in_order():
    pool = Pool(cluster=ClusterSpec.parse("local:2"))
    with pool:
        assert pool.workers == 2
        assert pool.map(math.factorial, ITEMS, "x") == EXPECTED
        assert progress_map(math.factorial, ITEMS[:3], pool, "x") == EXPECTED[:3]
        with pytest.raises(ValueError, match="negative"):  # a task's error reaches the caller as itself
            pool.map(math.factorial, [3, -1, 4], "x")
        assert pool.map(math.factorial, [5], "x") == [120]  # and the cluster still works


def _square_or_die_once(args):
    x, marker = args
    if x == 3 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)  # the worker process dies in the middle of a task
    return x * x


def test_a_lost_worker_is_replaced_and_its_points_recomputed(tmp_path):
    marker = str(tmp_path / "died")
    items = [(x, marker) for x in range(8)]
    assert Pool(cluster=ClusterSpec.parse("local:2")).map(_square_or_die_once, items, "x") == [x * x for x in range(8)]
    assert os.path.exists(marker)


@pytest.mark.parametrize("text, workers, address", [
    ("local:1", 1, None), ("local:12", 12, None),
    ("tcp://127.0.0.1:8786", None, "tcp://127.0.0.1:8786"), ("tcp://scheduler.example.org:1", None,
                                                              "tcp://scheduler.example.org:1"),
    ("tcp://[::1]:8786", None, "tcp://[::1]:8786"),
])
def test_cluster_addresses(text, workers, address):
    spec = ClusterSpec.parse(text)
    assert (spec.workers, spec.address) == (workers, address)


@pytest.mark.parametrize("text", ["local", "local:", "local:0", "local:-1", "local:2x", "LOCAL:2", "tcp://host",
                                  "tcp://host:0", "tcp://host:65536", "tcp://:8786", "http://host:8786",
                                  "host:8786", "", " local:2"])
def test_bad_cluster_addresses(text):
    with pytest.raises(ClusterError) as exc:
        ClusterSpec.parse(text)
    assert "\n" not in str(exc.value) and "--cluster" in str(exc.value)


def test_dask_is_imported_only_for_a_cluster():
    code = ("import sys; import rdp_verify.cli, rdp_verify.foundations.parallel as p; "
            "assert p.progress_map(abs, [-1, 2], 2, 'x') == [1, 2]; "
            "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"

