"""Issue 2 acceptance: the independent methods agree over the whole test grid.

Grid: q ∈ {1e−6, 0.01, 0.5, 0.99, 1} × σ ∈ {0.5, 1, 4, 100} ×
α ∈ {1.001, 1.5, 2, 2.5, 32, 256}. Every certificate must be ``certified``
(all pairwise intervals overlap, Corollary 7 not violated), every applicable
method must produce a value, and ε_α must agree to at least 25 digits.
"""

import pytest
from grids import covering_params

from rdp_verify.certificates.certify import certify
from rdp_verify.foundations.inputs import SGM

# The default run keeps two orders per (q, sigma) pair, so every q and every sigma meets all six orders (40 of
# the 120 points); -m slow runs all.
GRID = covering_params(["1e-6", "0.01", "0.5", "0.99", "1"], ["0.5", "1", "4", "100"],
                       ["1.001", "1.5", "2", "2.5", "32", "256"], per_pair=1)


@pytest.mark.parametrize("q, sigma, alpha", GRID)
def test_methods_agree(q, sigma, alpha):
    sgm = SGM.parse(q, sigma, alpha)
    cert = certify(sgm, 30)
    assert cert["verdict"] == "certified", cert["cross_check"]["conflicts"]
    expected = {"quadrature", "series", "rigorous"} | ({"symbolic"} if sgm.integer_order and sgm.alpha <= 64 else set())
    assert set(cert["cross_check"]["methods_compared"]) == expected
    assert cert["cross_check"]["epsilon_agreement_digits"] >= 25
    assert cert["rigorous"] and cert["corollary7"]["holds"]
    lower, upper = (float(cert["epsilon"][k]) for k in ("lower", "upper"))
    assert 0 < lower <= upper
