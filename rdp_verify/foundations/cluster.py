"""Dask clusters for grids: ``--cluster local:N`` or ``--cluster tcp://HOST:PORT``.

``local:N`` starts a Dask ``LocalCluster`` of N worker processes (one thread each) on this machine
and stops it afterwards; ``tcp://HOST:PORT`` connects to a running scheduler (``dask scheduler``,
with workers started by ``dask worker tcp://HOST:PORT``) and leaves it running. A scheduler that
cannot be reached, or has no worker, within :data:`CONNECT_TIMEOUT` seconds is an error.

Dask (the ``distributed`` package) is optional, ``pip install 'rdp_verify[cluster]'``, and imported
only when a cluster is opened: ``import rdp_verify`` and every run without ``--cluster`` never load
it. Which tasks run where is :mod:`rdp_verify.foundations.parallel`'s business; this module only
parses the address, connects, submits and reports completions.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .inputs import InputError

__all__ = ["INSTALL", "CONNECT_TIMEOUT", "ClusterError", "ClusterSpec", "Cluster"]

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
                self._local = self._distributed.LocalCluster(  # no dashboard; its HTTP routes on a free local port
                    n_workers=spec.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    # a task's failure reaches the client as its exception; the workers' own log lines (a heartbeat
                    # failing while the cluster shuts down under load) would only interleave with the output
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

    def close(self) -> None:
        """Disconnect; a cluster started here is shut down with its workers."""
        if self.client is not None:
            self.client.close()
        if self._local is not None:
            self._local.close()
