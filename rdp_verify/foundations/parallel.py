"""Order-preserving parallel map with a progress bar: the one way grids are spread over workers.

A :class:`Pool` runs a function over a grid's points in this process (``jobs=1``), on ``jobs``
local processes, or on a Dask cluster (:mod:`rdp_verify.foundations.cluster`). The results do
not depend on which, nor on the number of workers, and come back in the order of the points:
``fn`` must be a picklable top-level function, and is deterministic.

Points travel to the workers in batches (:func:`batch_size`): Dask spends about a millisecond
of scheduling on every task, so one task per point would cost more than many points do. Within
one worker process the points run one at a time even if the worker has several threads, because
mpmath's and Arb's working precision are process-wide settings.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from functools import partial
from typing import Any, Callable, Iterator, Sequence

from .cluster import Cluster, ClusterSpec

__all__ = ["MAX_BATCH", "TASKS_PER_WORKER", "Pool", "batch_size", "progress_map"]

MAX_BATCH = 64  # points per task at most: keeps the progress bar moving and a lost task cheap
TASKS_PER_WORKER = 8  # tasks per worker at least, when there are enough points: load balance

_ONE_AT_A_TIME = threading.Lock()


def batch_size(points: int, workers: int) -> int:
    """Points per task: about :data:`TASKS_PER_WORKER` tasks per worker, at most :data:`MAX_BATCH` points."""
    return max(1, min(MAX_BATCH, -(-points // (workers * TASKS_PER_WORKER))))


def _run_batch(fn: Callable[[Any], Any], batch: tuple[int, Sequence[Any]]) -> tuple[int, list[Any]]:
    """(start, [fn(x) for x in the batch's items]) on a worker, one batch at a time per process."""
    start, items = batch
    with _ONE_AT_A_TIME:
        return start, [fn(x) for x in items]


class _Processes:
    """A local process pool with the submit / as_completed / cancel / close interface of :class:`Cluster`."""

    def __init__(self, jobs: int):
        self.workers = jobs
        self._executor = ProcessPoolExecutor(max_workers=jobs)

    def submit(self, task: Callable[[Any], Any], args: Sequence[Any]) -> list[Future]:
        return [self._executor.submit(task, a) for a in args]

    def as_completed(self, futures: Sequence[Future]) -> Iterator[Future]:
        return as_completed(futures)

    def cancel(self, futures: Sequence[Future]) -> None:
        for f in futures:
            f.cancel()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


class Pool:
    """Where a grid is computed: this process (``jobs`` = 1), ``jobs`` processes, or a Dask ``cluster``.

    Used in a ``with`` block, the processes or the cluster connection are opened once and serve
    every map inside it (a command that maps several times starts one cluster); outside a
    ``with`` block each map opens and closes its own.
    """

    def __init__(self, jobs: int = 1, cluster: ClusterSpec | None = None):
        self.jobs = jobs
        self.cluster = cluster
        self._backend: _Processes | Cluster | None = None

    @property
    def serial(self) -> bool:
        """True when the points are computed in this process, one after another."""
        return self.cluster is None and self.jobs <= 1

    @property
    def workers(self) -> int:
        """How many workers compute points: ``jobs``, or an open cluster's workers (else N of local:N, 1 of an address)."""
        if self._backend is not None:
            return self._backend.workers
        return self.jobs if self.cluster is None else self.cluster.workers or 1

    def __enter__(self) -> "Pool":
        if self._backend is None and not self.serial:
            self._backend = _Processes(self.jobs) if self.cluster is None else Cluster(self.cluster)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close()

    def completed(self, fn: Callable[[Any], Any], items: Sequence[Any], desc: str,
                  batch: int | None = None, unit: str = "pt") -> Iterator[tuple[int, Any]]:
        """``(i, fn(items[i]))`` for every i, as each finishes, with a progress bar on a terminal.

        ``batch`` items go to a worker per task (default :func:`batch_size`). The bar (stderr,
        after one second, counting ``unit``) appears only when stderr is a terminal and there are
        at least two items.
        """
        if self._backend is None and not self.serial:
            with self:
                yield from self.completed(fn, items, desc, batch, unit)
            return
        from tqdm import tqdm  # here, not at import: the command line starts without it

        bar = tqdm(total=len(items), desc=desc, unit=unit, delay=1.0, file=sys.stderr,
                   disable=len(items) < 2 or not sys.stderr.isatty(), leave=False)
        try:
            if self._backend is None:
                for i, item in enumerate(items):
                    yield i, fn(item)
                    bar.update()
                return
            size = batch or batch_size(len(items), self._backend.workers)
            batches = [(start, items[start:start + size]) for start in range(0, len(items), size)]
            futures = self._backend.submit(partial(_run_batch, fn), batches)
            try:
                for future in self._backend.as_completed(futures):
                    start, results = future.result()
                    for k, result in enumerate(results):
                        yield start + k, result
                    bar.update(len(results))
            finally:
                self._backend.cancel(futures)
        finally:
            bar.close()

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], desc: str) -> list[Any]:
        """``[fn(x) for x in items]``, in order, whatever the pool."""
        out: list[Any] = [None] * len(items)
        for i, result in self.completed(fn, items, desc):
            out[i] = result
        return out


def progress_map(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int | Pool, desc: str) -> list[Any]:
    """``[fn(x) for x in items]`` on ``jobs`` processes (or on a :class:`Pool`), in order, with a progress bar.

    The result does not depend on ``jobs`` or the pool: see :meth:`Pool.map`.
    """
    return (jobs if isinstance(jobs, Pool) else Pool(jobs)).map(fn, items, desc)
