"""The peer adapters call what rdp_verify/reference/peers.py says they call, and fail clearly when missing."""

import ast
import math
import subprocess
import sys

import pytest
from oracles import binomial_log_a
from scipy import special

from rdp_verify.foundations.inputs import InputError
from rdp_verify.reference import peers


def peer(name):
    try:
        return peers.load(name)
    except peers.PeerUnavailable as exc:
        pytest.skip(str(exc))


def oracle_eps(q, sigma, alpha):
    """ε_α at integer α from the independent mpmath binomial sum of tests/oracles.py."""
    return float(binomial_log_a(q, sigma, alpha) / (alpha - 1))


@pytest.mark.parametrize("name", list(peers.PEERS))
@pytest.mark.parametrize("q, sigma, alpha", [("0.01", "2.5", 5), ("0.1", "1", 32), ("0.5", "100", 2)])
def test_integer_orders_match_an_independent_binomial_sum(name, q, sigma, alpha):
    # every peer evaluates the Section 3.3 Case I sum exactly at integer α (autodp via
    # Zhu & Wang's Theorem 6, which is that sum for the Gaussian mechanism)
    value = peer(name)(float(q), float(sigma), float(alpha))
    assert value == pytest.approx(oracle_eps(q, sigma, alpha), rel=1e-12)


def test_autodp_interpolates_the_cgf_between_integer_orders():
    # peers.py: autodp's fractional orders interpolate (α − 1)ε_α linearly between
    # ⌊α⌋ and ⌈α⌉ (rdp_acct.py, subsample_func); check against the oracle's ends.
    rdp = peer("autodp")
    q, sigma, alpha = "0.01", "1", 18.25
    cgf_lo, cgf_hi = (float(binomial_log_a(q, sigma, k)) for k in (18, 19))
    expected = (0.75 * cgf_lo + 0.25 * cgf_hi) / (alpha - 1)
    assert rdp(0.01, 1.0, alpha) == pytest.approx(expected, rel=1e-12)


def test_opacus_nan_comes_from_binomial_overflow():
    # The listed defect "NaN for integer orders past about 1030": scipy.special.binom
    # overflows to inf at binom(1030, 515) (> 1.8e308), and Opacus adds two inf logs.
    rdp = peer("opacus_rdp")
    assert special.binom(1029, 514) < math.inf and special.binom(1030, 515) == math.inf
    assert rdp(0.01, 1.0, 1029.0) == pytest.approx(oracle_eps("0.01", "1", 1029), rel=1e-12)
    assert math.isnan(rdp(0.01, 1.0, 1030.0))


def test_prv_accountant_shares_opacus_series():
    # both carry TF-Privacy's signed eq. (12) series: the same negative value
    a, b = peer("opacus_rdp")(0.5, 100.0, 64.5), peer("prv_accountant")(0.5, 100.0, 64.5)
    assert a == b < 0


def test_opacus_is_loaded_without_torch():
    peer("opacus_rdp")  # skips when not installed
    code = ("import sys; from rdp_verify.reference import peers; v = peers.load('opacus_rdp')(0.01, 4.0, 32.0); "
            "print(v, 'torch' in sys.modules, 'opacus' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert float(out[0]) == pytest.approx(oracle_eps("0.01", "4", 32), rel=1e-12)
    assert out[1:] == ["False", "False"]


def test_opacus_rdp_module_imports_only_numpy_and_scipy():
    # what makes the standalone load possible; a future Opacus importing torch here fails this
    try:
        path = peers.opacus_rdp_path()
    except peers.PeerUnavailable as exc:
        pytest.skip(str(exc))
    tree = ast.parse(path.read_text())
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    roots |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0}
    assert not any(isinstance(node, ast.ImportFrom) and node.level > 0 for node in ast.walk(tree))
    assert roots <= {"math", "warnings", "typing", "numpy", "scipy"}


def test_missing_library_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting.rdp.rdp_privacy_accountant", None)  # import fails
    with pytest.raises(peers.PeerUnavailable, match=r"dp_accounting is not installed: pip install"):
        peers._LOADERS["dp_accounting_rdp"]()
    monkeypatch.setattr(peers.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(peers.PeerUnavailable, match=r"opacus is not installed: pip install --no-deps opacus==1.6.0"):
        peers.opacus_rdp_path()


def test_unknown_peer():
    with pytest.raises(InputError, match="unknown peer 'tf_privacy'"):
        peers.load("tf_privacy")


def test_values_are_floats_and_warnings_are_silenced(recwarn):
    value = peer("dp_accounting_rdp")(0.1, 1.0, 1.1)  # non-converging series: inf, logged by absl
    assert value == math.inf and isinstance(value, float)
    assert peer("opacus_rdp").__name__ == "opacus_rdp"
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
