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


USAGE = [
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
]


@pytest.fixture(scope="module")
def usage_runs():
    """Every argv of USAGE run by ``main`` in one fresh interpreter, in order: for each, (heavy top-level packages
    imported so far, number of modules so far, exit code, stdout, stderr). Modules only accumulate, so an engine
    one argv imports is seen at that argv (or before), and the count after each argv bounds its own count from
    above: one interpreter proves for every argv what one interpreter per argv proved (17 -> 1 start-up)."""
    code = ("import contextlib, io\n"
            "from rdp_verify.cli import main\n"
            "runs = []\n"
            f"for argv in {[argv for argv, _ in USAGE]!r}:\n"
            "    out, err = io.StringIO(), io.StringIO()\n"
            "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
            "        try:\n"
            "            code = main(argv)\n"
            "        except SystemExit as exc:\n"
            "            code = exc.code\n"
            f"    runs.append((sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}), len(sys.modules),\n"
            "                 code, out.getvalue(), err.getvalue()))\n"
            "print(json.dumps(runs))")
    (runs,) = [json.loads(line) for line in _loaded(code)[2][-1:]]
    return runs


@pytest.mark.parametrize("index", range(len(USAGE)), ids=[" ".join(argv)[:40] for argv, _ in USAGE])
def test_help_and_usage_errors_import_no_engine(usage_runs, index):
    message = USAGE[index][1]
    heavy, count, code, printed, stderr = usage_runs[index]
    assert heavy == [] and count < MAX_MODULES
    if message is None:  # the help, exit 0
        assert printed.startswith("usage: rdp-verify") and code == 0 and stderr == ""
    else:  # the usage error itself: one line, exit 2
        assert printed == "" and code == 2 and stderr.startswith("rdp-verify: error: ")
        assert len(stderr.splitlines()) == 1 and message in stderr, stderr
