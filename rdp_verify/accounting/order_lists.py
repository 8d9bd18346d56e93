"""Fixed lists of Rényi orders used by RDP accountants, so audits line up with what a library reported.

An accountant with a fixed list reports min over its list of R(α) + c(α, δ)
(:func:`rdp_verify.accounting.rdp.epsilon_at_orders`). The libraries write the
fractional orders as binary floats (``1 + x / 10.0``); here they are the exact
decimals those floats approximate (1.1 is 11/10). ε is continuous in α, so the
difference (relative 1e-16 in α) is far below any printed digit.
"""

from __future__ import annotations

from fractions import Fraction

from ..foundations.inputs import InputError, parse_alphas

__all__ = ["ORDER_LISTS", "ORDER_LIST_SOURCES", "parse_orders"]


def _tenths() -> list[Fraction]:
    """1.1, 1.2, ..., 10.9: ``[1 + x / 10.0 for x in range(1, 100)]``."""
    return [Fraction(10 + x, 10) for x in range(1, 100)]


def _whole(lo: int, hi: int) -> list[Fraction]:
    return [Fraction(k) for k in range(lo, hi)]


ORDER_LISTS: dict[str, tuple[Fraction, ...]] = {
    "tf_privacy_compute_dp_sgd_privacy": tuple(
        [Fraction(k, 4) for k in (5, 6, 7, 8, 9, 10)] + [Fraction(k, 2) for k in (6, 7, 8, 9)]
        + _whole(5, 64) + _whole(128, 129) + _whole(256, 257) + _whole(512, 513)),
    "tf_privacy_mnist_tutorial": tuple(_tenths() + _whole(12, 64)),
    "opacus_default": tuple(_tenths() + _whole(12, 64)),
    "dp_accounting_default": tuple(_tenths() + _whole(11, 64) + [Fraction(k) for k in (128, 256, 512, 1024)]),
    "abadi2016_moments_accountant": tuple(_whole(2, 34)),
}

ORDER_LIST_SOURCES: dict[str, str] = {
    "tf_privacy_compute_dp_sgd_privacy":
        "TensorFlow Privacy, tensorflow_privacy/privacy/analysis/compute_dp_sgd_privacy_lib.py: "
        "orders = [1.25, 1.5, 1.75, 2., 2.25, 2.5, 3., 3.5, 4., 4.5] + list(range(5, 64)) + [128, 256, 512]",
    "tf_privacy_mnist_tutorial":
        "TensorFlow Privacy, tutorials/mnist_dpsgd_tutorial*.py compute_epsilon: "
        "orders = [1 + x / 10. for x in range(1, 100)] + list(range(12, 64))",
    "opacus_default":
        "Opacus 1.6, opacus/accountants/rdp.py: DEFAULT_ALPHAS = "
        "[1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))",
    "dp_accounting_default":
        "dp_accounting 0.6, dp_accounting/rdp/rdp_privacy_accountant.py: DEFAULT_RDP_ORDERS = "
        "[1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]",
    "abadi2016_moments_accountant":
        "Abadi et al. 2016, moments accountant: log moments of integer order lambda = 1..32 "
        "(GaussianMomentsAccountant, moment_orders=32), i.e. Rényi orders alpha = lambda + 1 = 2..33; "
        "delta = min_lambda exp(alpha(lambda) - lambda*eps) is the mironov2017 conversion",
}


def parse_orders(text: str) -> tuple[tuple[Fraction, ...], str | None]:
    """Orders from text: a name of :data:`ORDER_LISTS` (returned with the name) or a comma list of numbers."""
    text = text.strip()
    if text in ORDER_LISTS:
        return ORDER_LISTS[text], text
    if text[:1].isalpha():
        raise InputError(f"orders={text!r} is not a known list ({', '.join(ORDER_LISTS)}) nor numbers")
    return tuple(parse_alphas(text)), None
