"""A fork server for the docs' console examples: ``rdp-verify`` without paying its imports each time.

The docs run about 130 ``rdp-verify`` commands in bash; each fresh interpreter spends 0.5-1.5 s of CPU
importing NumPy, mpmath, python-flint, SymPy, jsonschema and the package before doing any work, a
tenth of the whole suite. Here one process per test worker imports all of that once (:func:`serve`), and
the ``rdp-verify`` that bash finds first on the examples' ``PATH`` is a small launcher (:func:`launch`)
that hands its argument list, working directory, environment and its three standard file descriptors
to the server over a Unix socket. The server forks; the child takes over those descriptors and runs the
installed console script itself (``runpy.run_path``, as ``__main__``), and its exit status becomes the
launcher's. Pipes, redirections, ``$?`` and ``PIPESTATUS`` in the examples are bash's as before; what
is skipped is only interpreter start-up and the imports, and a forked child starts with the same empty
caches as a new process, since the server computes nothing.

tests/test_docs.py checks that a command gives byte-identical output and exit status through the
launcher and through the installed script. ``RDP_VERIFY_DOCS_FORKSERVER=0`` turns the server off.
The server stops when its standard input (a pipe from the test worker) closes. It refuses to start (and the examples run the installed script) when an import left a thread
running, since forking a threaded process is unsafe.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys

_HEADER = struct.Struct("!I")


def launch(path: str) -> None:
    """The ``rdp-verify`` that bash runs: ask the server at ``path`` to run ``sys.argv`` here."""
    request = json.dumps({"args": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    data = _HEADER.pack(len(request)) + request
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        sent = socket.send_fds(conn, [data], [0, 1, 2])
        conn.sendall(data[sent:])
        status = b""
        while len(status) < 4:
            chunk = conn.recv(4 - len(status))
            if not chunk:
                sys.stderr.write("rdp-verify (docs fork server): the server closed the connection\n")
                os._exit(1)
            status += chunk
    code = struct.unpack("!i", status)[0]
    os._exit(code if code >= 0 else 128 - code)  # killed by signal n: 128 + n, as bash reports it


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ConnectionError("incomplete request")
        data += chunk
    return json.loads(data[_HEADER.size:]), fds


def _run(script: str) -> int:
    """Run the console script as ``python script`` would, and return the process's exit status."""
    import atexit
    import runpy
    import traceback
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 — the interpreter prints any uncaught exception and exits 1
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 — e.g. a closed pipe; the interpreter's exit status would be 120
            code = code or 120
    return code


def _handle(conn: socket.socket, script: str) -> None:
    """In a child of the server: run one request in a grandchild and report its exit status."""
    request, fds = _receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [script, *request["args"]]
        os._exit(_run(script))
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    conn.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))


def serve(path: str, script: str) -> None:
    """Import everything the console script uses, then fork one child per connection on ``path``."""
    import importlib
    import pkgutil
    import select
    import shutil
    import signal
    import threading

    import rdp_verify
    for module in pkgutil.walk_packages(rdp_verify.__path__, "rdp_verify."):
        if not module.name.endswith(".__main__"):  # that one would run the command-line interface
            importlib.import_module(module.name)
    for name in ("sympy", "mpmath", "flint", "numpy", "jsonschema", "tqdm", "multiprocessing.synchronize", "scipy.stats",
                 "dp_accounting", "prv_accountant", "autodp.rdp_acct"):  # not jax: it starts threads
        try:
            importlib.import_module(name)
        except ImportError:  # an optional peer that is not installed: the command imports (or refuses) itself
            pass
    if threading.active_count() != 1:
        sys.exit(f"an import started a thread ({threading.enumerate()}): not forking")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the handlers are reaped by the kernel
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in ready:  # end of file: the test worker that started this server has exited
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)  # the socket and the launcher
            return
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the handler waits for its own child
            try:
                _handle(conn, script)
            finally:
                os._exit(0)
        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
