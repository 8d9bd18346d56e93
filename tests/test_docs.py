"""The documentation builds with warnings as errors, with the very command the README gives.

(The examples inside the README and docs/*.md are run separately, one test each: conftest.py.
The build itself is shared with tests/test_docs_math.py: the ``docs_build`` fixture, tests/conftest.py.)

An example too long for the default run is a ```` ```text ```` block right after the MyST comment line
``% slow example``: it is shown as a terminal transcript like any ```` ```console ```` block, and run and
compared the same way (conftest.py's ``run_console``) by ``test_slow_example``, marked ``slow``. Each one
stands beside a shorter executed example showing the same thing (docs/auditors.md: the claims table of
``examples/claims-sample.json``, four of ``examples/claims.json``'s claims copied unchanged; docs/researchers.md:
the quoted rows of ``figure1``'s JSON, recomputed by the function the command calls for each row).
"""

import importlib.util
import json
import os
import subprocess
from types import SimpleNamespace

import pytest
from docs_site import ROOT, readme_build_command

SLOW_EXAMPLE = "% slow example"


def slow_examples() -> list:
    """``pytest.param(block text, id="page.md:line")`` for every text block marked as a slow example."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.startswith(SLOW_EXAMPLE):
                assert lines[i + 1] == "```text", f"{path.name}:{i + 1}: '{SLOW_EXAMPLE}' must precede a text block"
                end = lines.index("```", i + 2)
                found.append(pytest.param("\n".join(lines[i + 2:end]) + "\n", id=f"{path.name}:{i + 2}"))
    return found


def docs_examples():
    """The root conftest.py, whose ``commands`` and ``run_console`` run the documentation's console blocks."""
    spec = importlib.util.spec_from_file_location("docs_examples", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_build_command_treats_warnings_as_errors():
    argv = readme_build_command()
    assert "-W" in argv and argv[-2:] == ["docs", "docs/_build/html"]


def test_docs_build_without_warnings(docs_build):
    assert docs_build.returncode == 0, docs_build.stderr[-3000:]
    html = (docs_build.html / "api.html").read_text(encoding="utf-8")
    assert 'class="py function"' in html and "epsilon_bounds" in html  # autodoc rendered, not literal text
    cli = (docs_build.html / "cli.html").read_text(encoding="utf-8")
    assert all(f">{command}<" in cli for command in ("certify", "check", "audit", "compare", "golden", "cdp"))


def test_slow_examples_are_commands_with_their_output():
    examples = slow_examples()
    claims = "$ rdp-verify audit --claims examples/claims.json;"
    assert [e.id.split(":")[0] for e in examples if e.values[0].startswith(claims)] == ["auditors.md"]
    parse = docs_examples().commands
    for example in examples:
        pairs = parse(example.values[0])
        assert pairs and all(expected.strip() for _, expected in pairs), f"{example.id}: a command without output"


def test_the_sample_claims_are_published_claims_copied_unchanged():
    published = {c["id"]: c for c in json.loads((ROOT / "examples/claims.json").read_text(encoding="utf-8"))["claims"]}
    sample = json.loads((ROOT / "examples/claims-sample.json").read_text(encoding="utf-8"))["claims"]
    assert len(sample) == 4 and all(claim == published[claim["id"]] for claim in sample)
    order = list(published)
    assert [c["id"] for c in sample] == sorted((c["id"] for c in sample), key=order.index)  # in the file's order


@pytest.mark.slow  # e.g. the whole claims table of docs/auditors.md: 12 published claims, about 66 s of CPU
@pytest.mark.parametrize("text", slow_examples())
def test_slow_example(text):
    failure = docs_examples().run_console(SimpleNamespace(parsed=text))
    assert failure is None, failure


FORK_SERVER_COMMANDS = [
    'COLUMNS=60 rdp-verify certify --help | tail -4; echo "exit ${PIPESTATUS[0]}"',  # its own environment
    'rdp-verify dp --q 0.01 --sigma 1 --steps 100 --delta -1e-5; echo "exit $?"',  # stderr, exit 2
    # the working directory and standard input are the command's own, stdout and stderr interleave
    'rdp-verify dp --q 0.01 --sigma 4 --steps 10 --delta 1e-5 --out c.json 2>&1 && '
    'cat c.json | rdp-verify check /dev/stdin; echo "exit $?"',
]


@pytest.mark.skipif(os.environ.get("RDP_VERIFY_DOCS_FORKSERVER") == "0", reason="the fork server is turned off")
def test_the_fork_server_runs_the_installed_script_unchanged(tmp_path):
    """The docs' ``rdp-verify`` (conftest.py's fork server, tests/console_server.py) prints what the
    installed console script prints, byte for byte, with the same exit status."""
    examples = docs_examples()
    served, direct = examples.console_env(), examples.console_env(launcher=False)
    where = [subprocess.run(["bash", "-c", "command -v rdp-verify"], env=env, capture_output=True, text=True).stdout
             for env in (served, direct)]
    assert where[0] != where[1] and where[0].strip().endswith("bin/rdp-verify")  # two different programs compared
    for command in FORK_SERVER_COMMANDS:
        outputs = []
        for name, env in (("served", served), ("direct", direct)):
            (tmp_path / name).mkdir(exist_ok=True)
            proc = subprocess.run(["bash", "-c", command], cwd=tmp_path / name, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
            outputs.append((proc.returncode, proc.stdout))
        assert outputs[0] == outputs[1], command
        assert outputs[0][1].strip(), command  # the command printed something
