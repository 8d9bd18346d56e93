"""Dask clusters for grids: ``--cluster local:N`` or ``--cluster tcp://HOST:PORT``.

``local:N`` starts a Dask ``LocalCluster`` of N worker processes (one thread each) on this machine
and stops it afterwards; ``tcp://HOST:PORT`` connects to a running scheduler (``dask scheduler``,
with workers started by ``dask worker tcp://HOST:PORT``) and leaves it running. A scheduler that
cannot be reached, or has no worker, within :data:`CONNECT_TIMEOUT` seconds is an error.

Dask (the ``distributed`` package) is optional, ``pip install 'rdp_verify[cluster]'``, and imported
only when a cluster is opened: ``import rdp_verify`` and every run without ``--cluster`` never load
it. Which tasks run where is :mod:`rdp_verify.foundations.parallel`'s business; this module only
parses the address, connects, submits and reports completions, and holds :func:`sigint_held`, under which both
start their workers so that a terminal's Ctrl-C reaches the command alone (a cluster closed on it stops quietly).
"""

from __future__ import annotations

import logging
import re
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .inputs import InputError

__all__ = ["INSTALL", "CONNECT_TIMEOUT", "ClusterError", "ClusterSpec", "Cluster", "sigint_held"]

INSTALL = "pip install 'rdp_verify[cluster]'"
CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler, and again for its first worker

_LOCAL = re.compile(r"local:([0-9]+)")
_TCP = re.compile(r"tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]+)")


class ClusterError(InputError):
    """``--cluster`` cannot be used: a bad address, Dask not installed, or no scheduler (exit 2, one line)."""


@dataclass(frozen=True)
class ClusterSpec:
    """Where a Dask cluster is: ``workers`` local processes, or a scheduler's ``address``."""

    text: str
    workers: int | None = None
    address: str | None = None

    @classmethod
    def parse(cls, text: str) -> "ClusterSpec":
        """``local:N`` (N ≥ 1) or ``tcp://HOST:PORT`` (1 ≤ PORT ≤ 65535); anything else is refused."""
        if m := _LOCAL.fullmatch(text):
            if int(m[1]) < 1:
                raise ClusterError(f"--cluster {text}: a local cluster needs at least 1 worker")
            return cls(text, workers=int(m[1]))
        if (m := _TCP.fullmatch(text)) and 1 <= int(m[2]) <= 65535:
            return cls(text, address=text)
        raise ClusterError(f"--cluster {text!r}: expected local:N (N worker processes on this machine) "
                           "or tcp://HOST:PORT (a running Dask scheduler)")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask, which is not installed: {INSTALL}") from None
    return distributed


@contextmanager
def sigint_held(reraise: bool = True) -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back while the block runs; at its end act on one that came (``reraise``: Python's
    handler raises ``KeyboardInterrupt``) or drop it.

    SIGINT is blocked in this thread meanwhile, and threads and processes started inside the block inherit that
    mask: a worker started here never sees a terminal's Ctrl-C, not even while the interpreter starts (when no
    handler of its own could catch it yet). A signal that reaches another thread meanwhile is only recorded.
    Outside the main thread (where Python handles signals) the block runs as it is; a process that ignores
    SIGINT goes on ignoring it.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    came: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    handled = callable(previous)  # Python's handler (or a caller's); not when SIGINT is ignored or left to the system
    if handled:
        signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a pending SIGINT is delivered (and recorded) here
        if handled:
            signal.signal(signal.SIGINT, previous)
    if came and reraise:
        previous(signal.SIGINT, None)


class Cluster:
    """An open connection to a Dask cluster (the local cluster it started, if any, is stopped by :meth:`close`).

    ``timeout`` (default :data:`CONNECT_TIMEOUT`) bounds the wait for a remote scheduler and its first worker.
    """

    def __init__(self, spec: ClusterSpec, timeout: float | None = None):
        timeout = CONNECT_TIMEOUT if timeout is None else timeout
        self._distributed = _distributed()
        self._local: Any = None
        self.client: Any = None
        try:
            if spec.address is None:
                from multiprocessing import resource_tracker

                # Ctrl-C held back while the workers start: they inherit SIGINT blocked (a terminal sends it to
                # them too), and a cluster half started is never left to an exit handler; it comes after. The
                # resource tracker first: the thread that starts it has SIGINT unblocked afterwards, and Dask
                # would start it from the thread that then starts the workers
                resource_tracker.ensure_running()
                with sigint_held():
                    self._local = self._distributed.LocalCluster(  # no dashboard; HTTP routes on a free local port
                        n_workers=spec.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                        # a task's failure reaches the client as its exception; the workers' own log lines (a
                        # heartbeat failing while the cluster shuts down under load) would only interleave with
                        # the output
                        silence_logs=logging.CRITICAL)
                    self.client = self._distributed.Client(self._local, set_as_default=False)
            else:
                self.client = self._distributed.Client(spec.address, timeout=timeout, set_as_default=False)
                self.client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            self.close()
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise ClusterError(f"--cluster {spec.text}: no Dask scheduler with a worker within "
                               f"{timeout:g} s ({reason})") from None
        except BaseException:  # Ctrl-C while starting (raised as the start ends): stop what was started, quietly
            self.close(abort=True)
            raise

    @property
    def workers(self) -> int:
        """The number of worker processes connected now."""
        return max(1, len(self.client.nthreads()))

    def submit(self, task: Callable[[Any], Any], args: Sequence[Any]) -> list[Any]:
        """One future per argument: ``task(arg)`` on some worker."""
        return self.client.map(task, list(args), pure=False)

    def as_completed(self, futures: Sequence[Any]) -> Iterator[Any]:
        """The futures in the order they finish."""
        return iter(self._distributed.as_completed(futures, loop=self.client.loop))

    def cancel(self, futures: Sequence[Any]) -> None:
        """Stop the futures that have not finished."""
        pending = [f for f in futures if not f.done()]
        if pending:
            self.client.cancel(pending)

    def close(self, abort: bool = False) -> None:
        """Disconnect; a cluster started here is shut down with its workers. With ``abort`` (an interrupt, an
        error) quietly: the tasks still running are cancelled and nothing Dask logs while it stops is shown."""
        quiet = _Quiet() if abort else None
        try:
            with sigint_held(reraise=not abort):  # a second Ctrl-C does not leave a cluster half stopped
                if self.client is not None:
                    self.client.close()
                if self._local is not None:
                    self._local.close()
        finally:
            if quiet is not None:
                quiet.restore()


class _Quiet:
    """Dask's loggers (and the event loops' below them) silenced until :meth:`restore`."""

    NAMES = ("distributed", "dask", "tornado", "asyncio")

    def __init__(self) -> None:
        self._levels = {name: logging.getLogger(name).level for name in self.NAMES}
        for name in self.NAMES:
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)

    def restore(self) -> None:
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)
