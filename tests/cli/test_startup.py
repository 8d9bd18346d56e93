"""``rdp-verify --help`` and a usage error load none of the engines (issue 23: answer in at most 0.3 s).

Checked by what a fresh interpreter has imported, not by timing (benchmarks/bench_startup.py times it).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("mpmath", "numpy", "sympy", "flint", "jsonschema", "matplotlib", "dask", "distributed", "tqdm",
         "dp_accounting", "prv_accountant", "autodp", "opacus", "scipy", "gmpy2")
# Measured on Python 3.11: 190 modules after build_parser() (68 for the bare interpreter), against 944
# when the commands imported their engines at the top; the margin allows for other Python versions.
MAX_MODULES = 240


def _loaded(code: str) -> tuple[list[str], int, list[str], str]:
    """(heavy top-level packages imported, number of modules, stdout lines, stderr) after running ``code``."""
    script = (f"import json, sys\n{code}\n"
              "print(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    *printed, last = proc.stdout.splitlines()
    modules = json.loads(last)
    return sorted({m.split(".")[0] for m in modules} & set(HEAVY)), len(modules), printed, proc.stderr


def test_building_the_parser_imports_no_engine():
    heavy, count, _, _ = _loaded("import rdp_verify.cli\nrdp_verify.cli.build_parser()")
    assert heavy == []
    assert count < MAX_MODULES


def test_the_package_itself_is_light():
    heavy, count, _, _ = _loaded("import rdp_verify")
    assert heavy == [] and count < MAX_MODULES


@pytest.mark.parametrize("argv, message", [
    (["--help"], None),
    (["dp", "--help"], None),
    (["dp", "--q", "2", "--sigma", "1", "--steps", "1", "--delta", "1e-5"], "q=2 is outside (0, 1]"),
    (["dp", "--q", "0.01", "--sigma", "1", "--steps", "10"], "give exactly one of --delta"),
    (["certify", "--q", "0.01", "--sigma", "1", "--alpha", "1"], "alpha"),
    (["rdp", "--q", "0.01", "--sigma", "1", "--orders", "no_such_list"], "no_such_list"),
    (["audit", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "2", "--epsilon", "1"], "delta"),
    (["calibrate", "--q", "0.01", "--delta", "1e-5", "--target-epsilon", "1"], "give two of"),
    (["compare", "--against", "no_such_peer"], "unknown peer"),
    (["compare", "--dp", "--against", "all", "--q", "0.01"], "give all of"),
    (["golden", "--verify", "x", "--sample", "-1"], "--sample -1"),
    (["table1", "--q", "2"], "q=2"),
    (["cdp", "zcdp", "--q", "0.01", "--sigma", "1", "--rho", "-1"], "rho=-1"),
    (["certify", "--q", "0.01", "--sigma", "1", "--alpha", "2", "--out", "/proc/x.json"], "not writable"),
    (["no-such-command"], "invalid choice"),
])
def test_help_and_usage_errors_import_no_engine(argv, message):
    code = ("from rdp_verify.cli import main\n"
            f"try:\n    code = main({argv!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
            "print(code)")
    heavy, count, printed, stderr = _loaded(code)
    assert heavy == [] and count < MAX_MODULES
    if message is None:  # the help, exit 0
        assert printed[0].startswith("usage: rdp-verify") and printed[-1] == "0" and stderr == ""
    else:  # the usage error itself: one line, exit 2
        assert printed == ["2"] and stderr.startswith("rdp-verify: error: ") and len(stderr.splitlines()) == 1
        assert message in stderr, stderr
