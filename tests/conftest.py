"""Skips that must not pass quietly, and the documentation site built once per session.

With RDP_VERIFY_REQUIRE_PEERS=1 (as the README's test command sets) a test skipped
because a peer library is missing fails instead: the peer-defect tests must not
vanish quietly from a run that claims to cover them. Likewise RDP_VERIFY_REQUIRE_BROWSER=1
(as .ci/run sets) turns the skip of tests/test_docs_math.py on a machine without Chromium
into a failure. The documentation site is built once per run, shared by pytest-xdist's workers."""

import os

import docs_site
import pytest

# variable: (what the run is missing, the skip reasons that mean it)
_REQUIRED = {
    "RDP_VERIFY_REQUIRE_PEERS": ("a peer", ("is not installed", "could not import")),
    "RDP_VERIFY_REQUIRE_BROWSER": ("the browser", ("no Chromium browser",)),
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or call.excinfo is None:
        return
    reason = str(call.excinfo.value)
    for variable, (what, markers) in _REQUIRED.items():
        if os.environ.get(variable) == "1" and any(m in reason for m in markers):
            report.outcome = "failed"
            report.longrepr = f"{variable}=1 but {what} is missing: {reason}"
            return


@pytest.fixture(scope="session")
def docs_build(tmp_path_factory):
    """The documentation site, built once per run with the README's sphinx-build command: under pytest-xdist
    in the folder all workers of the run share (the parent of each worker's own temporary folder)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return docs_site.build(tmp_path_factory.mktemp("docs") / "html")
    return docs_site.build_once(tmp_path_factory.getbasetemp().parent / "docs")
