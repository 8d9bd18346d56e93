"""The documentation site, built with the very ``sphinx-build`` command the README gives.

tests/conftest.py builds it once per test session (the ``docs_build`` fixture), for
tests/test_docs.py (the build is warning-free) and tests/test_docs_math.py (its formulas typeset).
"""

from __future__ import annotations

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
