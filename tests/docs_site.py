"""The documentation site, built with the very ``sphinx-build`` command the README gives.

tests/conftest.py builds it once per test run (the ``docs_build`` fixture), for
tests/test_docs.py (the build is warning-free) and tests/test_docs_math.py (its formulas typeset);
under pytest-xdist the workers share that one build (``build_once``).
"""

from __future__ import annotations

import fcntl
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_build_command() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    commands = [line for block in blocks for line in block.splitlines() if line.startswith("sphinx-build")]
    assert len(commands) == 1, "the README must give exactly one sphinx-build command"
    return shlex.split(commands[0])


@dataclass(frozen=True)
class Build:
    html: Path
    returncode: int
    stderr: str


def build(out: Path) -> Build:
    """Run the README's command with the output directory moved outside the checkout."""
    argv = readme_build_command()
    argv[-1] = str(out)
    proc = subprocess.run([sys.executable, "-m", "sphinx", *argv[1:]], cwd=ROOT, capture_output=True, text=True)
    return Build(out, proc.returncode, proc.stderr)


def build_once(folder: Path) -> Build:
    """The build in ``folder``, made by the first caller and read back by every later one.

    pytest-xdist's workers each hold their own session, so a session-scoped fixture would build the site once
    per worker that needs it (about 25 s of CPU each). They share ``folder`` instead: the first to take the
    lock builds the site into ``folder / "html"`` and records the outcome; the others wait on the lock and
    read the outcome, so every worker checks the same build.
    """
    folder.mkdir(parents=True, exist_ok=True)
    outcome = folder / "build.json"
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not outcome.exists():
            done = build(folder / "html")
            outcome.write_text(json.dumps({"returncode": done.returncode, "stderr": done.stderr}), encoding="utf-8")
        recorded = json.loads(outcome.read_text(encoding="utf-8"))
    return Build(folder / "html", recorded["returncode"], recorded["stderr"])
