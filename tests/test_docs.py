"""The documentation builds with warnings as errors, with the very command the README gives.

(The examples inside the README and docs/*.md are run separately, one test each: conftest.py.
The build itself is shared with tests/test_docs_math.py: the ``docs_build`` fixture, tests/conftest.py.)
"""

from docs_site import readme_build_command


def test_readme_build_command_treats_warnings_as_errors():
    argv = readme_build_command()
    assert "-W" in argv and argv[-2:] == ["docs", "docs/_build/html"]


def test_docs_build_without_warnings(docs_build):
    assert docs_build.returncode == 0, docs_build.stderr[-3000:]
    html = (docs_build.html / "api.html").read_text(encoding="utf-8")
    assert 'class="py function"' in html and "epsilon_bounds" in html  # autodoc rendered, not literal text
    cli = (docs_build.html / "cli.html").read_text(encoding="utf-8")
    assert all(f">{command}<" in cli for command in ("certify", "check", "audit", "compare", "golden", "cdp"))
