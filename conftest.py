"""Every example in README.md and docs/*.md is a test (Sybil), so the documentation cannot lie.

* ```` ```console ```` blocks: each ``$ command`` (continued after a trailing backslash or on
  ``> `` lines) runs in
  bash, in a fresh directory holding copies of ``examples/``, ``certificates/`` and ``benchmarks/``, with
  stdout and stderr merged as a terminal shows them. The lines after it are the expected
  output, compared with :mod:`doctest`'s checker: ``...`` is the elision marker (any text,
  also several lines), trailing blanks are ignored. Blocks are self-contained, so examples
  can run in any order and on any xdist worker. ``rdp-verify`` in those commands is the installed
  console script run by a fork server that imported the package once per worker
  (tests/console_server.py: the same script, output and exit status, without 0.5-1.5 s of imports
  per command; ``RDP_VERIFY_DOCS_FORKSERVER=0`` runs the script directly).
* ```` ```python ```` blocks: each block is one test with a fresh namespace; a block starting
  with ``>>>`` is a doctest (``...`` elides output there too).

Other fences (``sh`` for installation, ``text``, ``json``) are shown, not run: the README's
two ``sh`` commands are what ``.ci/run`` executes.
"""

from __future__ import annotations

import doctest
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sybil import Sybil
from sybil.parsers.myst import CodeBlockParser

ROOT = Path(__file__).resolve().parent
TIMEOUT = 600  # seconds per command: examples are kept short, this only stops a hang
_CHECKER = doctest.OutputChecker()
_FLAGS = doctest.ELLIPSIS


def commands(source: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block.

    A command is a ``$ `` line plus the lines that continue it, as a terminal shows them: after a
    trailing backslash, or with bash's ``> `` continuation prompt (a quoted string over several lines).
    """
    pairs: list[tuple[str, list[str]]] = []
    continuing = False
    for line in source.splitlines():
        if continuing or (pairs and not pairs[-1][1] and line.startswith("> ")):
            text = line if continuing else line[2:]
            pairs[-1] = (pairs[-1][0] + "\n" + text, pairs[-1][1])
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            pairs.append((line[2:], []))
            continuing = line.endswith("\\")
        elif pairs:
            pairs[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"console block does not start with '$ ': {line!r}")
    return [(cmd, "\n".join(out)) for cmd, out in pairs]


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"


def console_env(launcher: bool = True) -> dict[str, str]:
    """The examples' environment: this interpreter's scripts first on PATH, preceded by the fork
    server's ``rdp-verify`` launcher when ``launcher`` and the server runs."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "100", "PATH": path}
    bin_dir = _fork_server(env) if launcher else None
    if bin_dir:
        env["PATH"] = f"{bin_dir}{os.pathsep}{path}"
    return env


_SERVER: dict[str, object] = {}


def _fork_server(env: dict[str, str]) -> str | None:
    """Start this worker's fork server once; the folder holding its launcher, or None to run the script."""
    if "bin" not in _SERVER:
        _SERVER["bin"] = None
        script = Path(sys.executable).parent / "rdp-verify"
        if (os.environ.get("RDP_VERIFY_DOCS_FORKSERVER", "1") == "0" or not script.exists() or os.name != "posix"
                or " " in sys.executable or len(sys.executable) > 120):  # the launcher's #! line must hold it
            return None
        home = Path(tempfile.mkdtemp(prefix="rdp-verify-fork-"))
        sock = str(home / "socket")
        proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "console_server.py"), sock, str(script)],
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        _SERVER["process"] = proc  # its stdin closes when this worker exits, and the server stops
        if proc.stdout.readline().strip() != "ready":  # it exited: an import failed or started a thread
            shutil.rmtree(home, ignore_errors=True)
            return None
        (home / "bin").mkdir()
        launcher = home / "bin" / "rdp-verify"
        launcher.write_text(f"#!{sys.executable} -IS\nimport sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
                            f"import console_server\nconsole_server.launch({sock!r})\n")
        launcher.chmod(0o755)
        _SERVER["bin"] = str(home / "bin")
    return _SERVER["bin"]


def run_console(example) -> str | None:
    with tempfile.TemporaryDirectory(prefix="rdp-verify-doc-") as work:
        for folder in ("examples", "certificates", "benchmarks"):
            shutil.copytree(ROOT / folder, Path(work) / folder)
        env = console_env()
        for cmd, expected in commands(example.parsed):
            proc = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
            want, got = _normal(expected), _normal(proc.stdout)
            if not _CHECKER.check_output(want, got, _FLAGS):
                return (f"$ {cmd}\n(exit {proc.returncode})\n"
                        + _CHECKER.output_difference(doctest.Example(cmd, want), got, _FLAGS))
    return None


def run_python(example) -> str | None:
    """One Python block as a whole, in a fresh namespace: a doctest if it starts with ``>>>``."""
    source, name = example.parsed, f"{example.path}:{example.line}"
    if not source.lstrip().startswith(">>>"):
        exec(compile(source, name, "exec"), {"__name__": "__doc_example__"})
        return None
    test = doctest.DocTestParser().get_doctest(source, {"__name__": "__doc_example__"}, name, str(example.path),
                                               example.line)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    runner.run(test, out=report.append, clear_globs=True)
    return "".join(report) if runner.failures else None


pytest_collect_file = Sybil(
    parsers=[CodeBlockParser(language="console", evaluator=run_console),
             CodeBlockParser(language="python", evaluator=run_python)],
    patterns=["README.md", "docs/*.md"],
    path=str(ROOT),
).pytest()
