"""Order-preserving parallel map with a progress bar: the one way grids are spread over workers.

A :class:`Pool` runs a function over a grid's points in this process (``jobs=1``), on ``jobs``
local processes, or on a Dask cluster (:mod:`rdp_verify.foundations.cluster`). The results do
not depend on which, nor on the number of workers, and come back in the order of the points:
``fn`` must be a picklable top-level function, and is deterministic.

Points travel to the workers in batches (:func:`batch_size`): Dask spends about a millisecond
of scheduling on every task, so one task per point would cost more than many points do. Within
one worker process the points run one at a time even if the worker has several threads, because
mpmath's and Arb's working precision are process-wide settings.

**Ctrl-C.** A terminal's Ctrl-C sends SIGINT to every process of the command, workers included. The workers
never act on it (it is held back while they start, :func:`~rdp_verify.foundations.cluster.sigint_held`, so it is
blocked in them from their first instruction, and ignored besides): only this process raises ``KeyboardInterrupt``, and leaving the pool on it terminates the
workers at once, without waiting for their tasks and without a word from any of them (the command line then
prints its one line "interrupted" and exits 130).

**Progress.** :func:`progress_bar` is every command's bar: tqdm on stderr, drawn only when stderr is a terminal,
after :data:`BAR_DELAY` seconds, erased when done; :func:`ticking` redraws one while a single long step runs, so
its clock moves. Nothing reaches stdout, and nothing at all is written when stderr is not a terminal.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator, Sequence

from .cluster import Cluster, ClusterSpec, sigint_held

__all__ = ["BAR_DELAY", "MAX_BATCH", "TASKS_PER_WORKER", "Pool", "batch_size", "progress_bar", "progress_map",
           "redraw", "ticking"]

BAR_DELAY = 1.0  # seconds before a bar is drawn: quick commands never show one

MAX_BATCH = 64  # points per task at most: keeps the progress bar moving and a lost task cheap
TASKS_PER_WORKER = 8  # tasks per worker at least, when there are enough points: load balance

_ONE_AT_A_TIME = threading.Lock()


def batch_size(points: int, workers: int) -> int:
    """Points per task: about :data:`TASKS_PER_WORKER` tasks per worker, at most :data:`MAX_BATCH` points."""
    return max(1, min(MAX_BATCH, -(-points // (workers * TASKS_PER_WORKER))))


def _ignore_sigint() -> None:
    """A worker's initializer: Ctrl-C is the parent's to handle (:func:`~rdp_verify.foundations.cluster.sigint_held`
    already blocks it here)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminal() -> bool:
    """Whether stderr is a terminal (where bars are drawn)."""
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(total: int | None = None, desc: str = "", unit: str = "it", **options: Any) -> Any:
    """A tqdm bar on stderr, drawn only when stderr is a terminal, after :data:`BAR_DELAY` seconds, erased at
    the end (use it as a context manager, or ``close()`` it). ``options`` go to tqdm (``bar_format``,
    ``disable``, ...). A terminal that reports no size (a bare pseudo-terminal, ``script(1)`` without one) gets
    80 columns: tqdm would draw nothing there."""
    from tqdm import tqdm  # here, not at import: the command line starts without it

    options.setdefault("disable", not _terminal())
    if not options["disable"] and "ncols" not in options:
        try:
            columns, rows = os.get_terminal_size(sys.stderr.fileno())
        except (OSError, ValueError, AttributeError):
            columns = rows = 0
        if columns <= 0 or rows <= 0:
            options.update(ncols=80, nrows=24)
    options.setdefault("delay", BAR_DELAY)
    options.setdefault("leave", False)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, **options)


def redraw(bar: Any) -> None:
    """Draw ``bar`` now if it is shown and its delay has passed (tqdm's own ``refresh`` ignores the delay)."""
    if not bar.disable and time.time() >= bar.start_t + bar.delay:
        bar.refresh()
        # tqdm counts only the draws of update(): without this close() would not erase the bar (it was never drawn,
        # it thinks); no later than that, or update() would skip its next draw as too soon after this one
        bar.last_print_t = max(bar.last_print_t, bar.start_t + bar.delay)


@contextmanager
def ticking(bar: Any, every: float = 1.0) -> Iterator[Any]:
    """Redraw ``bar`` every ``every`` seconds (once its delay has passed) from a thread while the block runs, so
    its clock moves while a single long step computes; the bar itself is left open."""
    if getattr(bar, "disable", True):
        yield bar
        return
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(every):
            redraw(bar)

    thread = threading.Thread(target=tick, name="progress ticker", daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        stop.set()
        thread.join()


def _run_batch(fn: Callable[[Any], Any], batch: tuple[int, Sequence[Any]]) -> tuple[int, list[Any]]:
    """(start, [fn(x) for x in the batch's items]) on a worker, one batch at a time per process."""
    start, items = batch
    with _ONE_AT_A_TIME:
        return start, [fn(x) for x in items]


class _Processes:
    """A local process pool with the submit / as_completed / cancel / close interface of :class:`Cluster`."""

    def __init__(self, jobs: int):
        self.workers = jobs
        self._executor = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint)
        # Start the workers now: with fork they all start at the first submit, and here, as the pool opens, no
        # thread of ours runs yet (a progress bar's ticking thread would: forking a threaded process can deadlock
        # the child on a lock held at that moment). They inherit SIGINT blocked.
        try:
            with sigint_held():
                self._executor.submit(int)
        except BaseException:  # Ctrl-C while they started (raised as the start ends): they stop at once
            self.close(abort=True)
            raise

    def submit(self, task: Callable[[Any], Any], args: Sequence[Any]) -> list[Future]:
        with sigint_held():  # workers started later (another start method, a replacement) inherit SIGINT blocked
            return [self._executor.submit(task, a) for a in args]

    def as_completed(self, futures: Sequence[Future]) -> Iterator[Future]:
        return as_completed(futures)

    def cancel(self, futures: Sequence[Future]) -> None:
        for f in futures:
            f.cancel()

    def close(self, abort: bool = False) -> None:
        """Shut down: wait for the running tasks, or with ``abort`` (an interrupt, an error) terminate the workers."""
        if not abort:
            try:
                self._executor.shutdown(wait=True, cancel_futures=True)
                return
            except BaseException:  # Ctrl-C while waiting: terminate instead
                self.close(abort=True)
                raise
        with sigint_held(reraise=False):  # a second Ctrl-C cannot leave workers behind
            if hasattr(self._executor, "terminate_workers"):  # Python 3.14
                self._executor.terminate_workers()
                return
            for process in list((getattr(self._executor, "_processes", None) or {}).values()):
                if process.is_alive():
                    process.terminate()
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

    def __exit__(self, kind: Any, *exc: Any) -> None:
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close(abort=kind is not None)  # interrupted or failed: stop the workers, do not wait

    def completed(self, fn: Callable[[Any], Any], items: Sequence[Any], desc: str,
                  batch: int | None = None, unit: str = "pt",
                  status: Callable[[int, Any], str] | None = None) -> Iterator[tuple[int, Any]]:
        """``(i, fn(items[i]))`` for every i, as each finishes, with a progress bar on a terminal.

        ``batch`` items go to a worker per task (default :func:`batch_size`). The bar
        (:func:`progress_bar`, counting ``unit``, its clock ticking) appears only when stderr is a
        terminal and there are at least two items; ``status(i, result)``, if given, is shown after
        it for each result as it comes.
        """
        if self._backend is None and not self.serial:
            with self:
                yield from self.completed(fn, items, desc, batch, unit, status)
            return
        with progress_bar(len(items), desc, unit, disable=len(items) < 2 or not _terminal()) as bar, ticking(bar):
            def done(i: int, result: Any) -> None:
                if status is not None and not bar.disable:
                    bar.set_postfix_str(status(i, result), refresh=False)

            if self._backend is None:
                for i, item in enumerate(items):
                    result = fn(item)
                    done(i, result)
                    yield i, result
                    bar.update()
                return
            size = batch or batch_size(len(items), self._backend.workers)
            batches = [(start, items[start:start + size]) for start in range(0, len(items), size)]
            futures = self._backend.submit(partial(_run_batch, fn), batches)
            try:
                for future in self._backend.as_completed(futures):
                    start, results = future.result()
                    for k, result in enumerate(results):
                        done(start + k, result)
                        yield start + k, result
                    bar.update(len(results))
            finally:
                self._backend.cancel(futures)

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], desc: str, unit: str = "pt",
            status: Callable[[int, Any], str] | None = None) -> list[Any]:
        """``[fn(x) for x in items]``, in order, whatever the pool (``unit``, ``status``: see :meth:`completed`)."""
        out: list[Any] = [None] * len(items)
        for i, result in self.completed(fn, items, desc, unit=unit, status=status):
            out[i] = result
        return out


def progress_map(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int | Pool, desc: str, unit: str = "pt",
                 status: Callable[[int, Any], str] | None = None) -> list[Any]:
    """``[fn(x) for x in items]`` on ``jobs`` processes (or on a :class:`Pool`), in order, with a progress bar.

    The result does not depend on ``jobs`` or the pool: see :meth:`Pool.map`.
    """
    return (jobs if isinstance(jobs, Pool) else Pool(jobs)).map(fn, items, desc, unit, status)
