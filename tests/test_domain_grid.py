"""Issue 3 acceptance: the hard-regime grid is certified rigorously.

Grid: q ∈ {1e−6, 1e−4, 0.01, 0.1, 0.5, 0.9, 0.99} × σ ∈ {0.3, 0.5, 1, 2, 4, 10, 100} ×
α ∈ {1.01, 1.5, 2, 3.5, 8, 32, 64.5, 256, 1024}. Every point must carry a proven
enclosure (``rigorous: true``) of relative width below 1e−25 at the default 30
digits, and the other methods must agree with it (verdict ``certified``).
"""

import itertools
from fractions import Fraction

import pytest

from rdp_verify.certify import certify
from rdp_verify.inputs import SGM

GRID = list(
    itertools.product(
        ["1e-6", "1e-4", "0.01", "0.1", "0.5", "0.9", "0.99"],
        ["0.3", "0.5", "1", "2", "4", "10", "100"],
        ["1.01", "1.5", "2", "3.5", "8", "32", "64.5", "256", "1024"],
    )
)


@pytest.mark.parametrize("q, sigma, alpha", GRID)
def test_grid_point_certified_rigorously(q, sigma, alpha):
    cert = certify(SGM.parse(q, sigma, alpha), 30)
    assert cert["verdict"] == "certified", cert["cross_check"]["conflicts"]
    assert cert["rigorous"] and cert["epsilon"]["rigorous"]
    assert Fraction(cert["epsilon"]["relative_width"]) < Fraction(1, 10**25)
    proven = cert["methods"]["rigorous"]
    assert proven["status"] == "ok" and proven["bound_kind"] == "proven"
    for name in ("quadrature", "series"):
        assert cert["methods"][name]["status"] == "ok", cert["methods"][name]
