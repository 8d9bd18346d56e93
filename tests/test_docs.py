"""The documentation builds with warnings as errors, with the very command the README gives.

(The examples inside the README and docs/*.md are run separately, one test each: conftest.py.)
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_build_command() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    commands = [line for block in blocks for line in block.splitlines() if line.startswith("sphinx-build")]
    assert len(commands) == 1, "the README must give exactly one sphinx-build command"
    return shlex.split(commands[0])


def test_readme_build_command_treats_warnings_as_errors():
    argv = readme_build_command()
    assert "-W" in argv and argv[-2:] == ["docs", "docs/_build/html"]


def test_docs_build_without_warnings(tmp_path):
    argv = readme_build_command()
    argv[-1] = str(tmp_path / "html")  # same command, output outside the checkout
    proc = subprocess.run([sys.executable, "-m", "sphinx", *argv[1:]], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    assert 'class="py function"' in html and "epsilon_bounds" in html  # autodoc rendered, not literal text
    cli = (tmp_path / "html" / "cli.html").read_text(encoding="utf-8")
    assert all(f">{command}<" in cli for command in ("certify", "check", "audit", "compare", "golden", "cdp"))
