"""With RDP_VERIFY_REQUIRE_PEERS=1 (as the README's test command sets) a test skipped
because a peer library is missing fails instead: the peer-defect tests must not
vanish quietly from a run that claims to cover them."""

import os

import pytest

_MISSING = ("is not installed", "could not import")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("RDP_VERIFY_REQUIRE_PEERS") != "1" or not report.skipped or call.excinfo is None:
        return
    reason = str(call.excinfo.value)
    if any(m in reason for m in _MISSING):
        report.outcome = "failed"
        report.longrepr = f"RDP_VERIFY_REQUIRE_PEERS=1 but a peer is missing: {reason}"
