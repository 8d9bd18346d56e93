"""Adapters for the float64 RDP accountants that rdp_verify is used to test.

Each peer is exposed as one function ``rdp(q, sigma, alpha) -> float``: the
Rényi-DP ε_α of ONE step of the Poisson-subsampled Gaussian mechanism, the
quantity of Theorem 4 of Mironov, Talwar, Zhang (2019),
ε_α = log max(A_α, B_α)/(α − 1), as the peer computes it. The libraries are
optional (``pip install rdp_verify[peers]``) and imported only when a peer is
first used; a missing one raises :class:`PeerUnavailable` naming the pip
command. Peers see IEEE doubles: callers convert the exact q, σ, α to the
nearest double first (a relative change below 1.2e-16).

Each peer is named after its library and, where a library has several accountants, the
accountant (``dp_accounting_rdp``, ``opacus_rdp``): the same names as the (ε, δ) peers of
:mod:`rdp_verify.reference.dp_peers`, so one accountant has one name everywhere.

What each adapter calls (read from the libraries' source):

``dp_accounting_rdp`` (dp-accounting 0.6)
    ``rdp.rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, σ, [α])``,
    the function ``RdpAccountant`` composes for a ``PoissonSampledDpEvent`` of a
    ``GaussianDpEvent``. Integer α: the Section 3.3 Case I binomial sum for A_α.
    Fractional α: the two eq. (12) series, with every term added in absolute
    value (over-reports) and ``inf`` after 1000 terms without convergence.
``opacus_rdp`` (opacus 1.6)
    ``opacus/accountants/analysis/rdp.py``: ``compute_rdp(q=, noise_multiplier=,
    steps=1, orders=[α])``. Integer α: the Case I sum with ``scipy.special.binom``
    (overflows, giving NaN, from α = 1030). Fractional α: the eq. (12) series
    with signed terms, stopped once both terms' logs drop below −30 (absolute, not
    relative): for large σ and α·ln(1/(1 − q)) > 30 that happens at the first term,
    and log A_α ≈ α·ln(1 − q) < 0 comes back.
    That module imports only math, warnings, typing, numpy and scipy, so it is
    loaded as a standalone file: the ``opacus`` package itself (whose
    ``__init__`` imports torch) is located with ``importlib.util.find_spec``,
    which does not execute it. Install without torch:
    ``pip install --no-deps opacus==1.6.0``.
``autodp`` (0.2.3)
    ``mechanism_zoo.NoisySGD_Mechanism(prob=q, sigma=σ, niter=1).get_RDP(α)``:
    ``ExactGaussianMechanism`` amplified by ``AmplificationBySampling`` (Poisson,
    ``improved_bound_flag=True``), i.e. Zhu & Wang (ICML 2019) Theorem 6, which is
    exact for the Gaussian mechanism at integer α (it is the Case I sum). At
    fractional α it interpolates the cumulant generating function (α − 1)ε_α
    linearly between ⌊α⌋ and ⌈α⌉, and on (1, 2] it returns ε_2: upper bounds
    (log A_α is convex in α), so ``conservative`` is expected there.
``prv_accountant`` (0.2)
    ``privacy_random_variables.PoissonSubsampledGaussianMechanism(q, σ).rdp(α)``,
    TF-Privacy's older RDP code (the same series as Opacus). prv_accountant's own
    ε(δ) comes from the privacy loss distribution; this RDP is what it uses to
    bound the PRV's domain.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..foundations.inputs import InputError

__all__ = ["PEERS", "INSTALL", "Peer", "PeerUnavailable", "load"]

RdpFunction = Callable[[float, float, float], float]


class PeerUnavailable(RuntimeError):
    """The peer library is not installed (the message names the pip command)."""


# the pip command that provides each library
INSTALL: dict[str, str] = {
    "dp_accounting": "pip install 'rdp_verify[peers]'  (or: pip install dp-accounting)",
    "opacus": "pip install --no-deps opacus==1.6.0  (torch is not needed)",
    "autodp": "pip install 'rdp_verify[peers]'  (or: pip install autodp)",
    "prv_accountant": "pip install 'rdp_verify[peers]'  (or: pip install prv-accountant)",
}


@dataclass(frozen=True)
class Peer:
    name: str
    library: str  # the package it comes from, a key of INSTALL
    calls: str  # the library function the adapter evaluates

    @property
    def install(self) -> str:
        """The pip command that provides it."""
        return INSTALL[self.library]


PEERS: dict[str, Peer] = {
    p.name: p
    for p in (
        Peer("dp_accounting_rdp", "dp_accounting",
             "dp_accounting.rdp.rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian"),
        Peer("opacus_rdp", "opacus", "opacus/accountants/analysis/rdp.py compute_rdp, loaded without importing torch"),
        Peer("autodp", "autodp", "autodp.mechanism_zoo.NoisySGD_Mechanism(prob, sigma, niter=1).get_RDP"),
        Peer("prv_accountant", "prv_accountant", "prv_accountant PoissonSubsampledGaussianMechanism(q, sigma).rdp"),
    )
}


def _import(library: str, module: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == module.split(".")[0]:
            raise PeerUnavailable(f"{library} is not installed: {INSTALL[library]}") from None
        raise PeerUnavailable(f"{library} cannot be imported ({exc}): {INSTALL[library]}") from None


def _dp_accounting() -> RdpFunction:
    mod = _import("dp_accounting", "dp_accounting.rdp.rdp_privacy_accountant")

    def rdp(q: float, sigma: float, alpha: float) -> float:
        return mod._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0]

    return rdp


def opacus_rdp_path() -> Path:
    """Path of Opacus's accountants/analysis/rdp.py, found without importing opacus."""
    spec = importlib.util.find_spec("opacus")  # locates the package; runs no opacus code
    if spec is None or not spec.submodule_search_locations:
        raise PeerUnavailable(f"opacus is not installed: {INSTALL['opacus']}")
    path = Path(list(spec.submodule_search_locations)[0]) / "accountants" / "analysis" / "rdp.py"
    if not path.is_file():
        raise PeerUnavailable(f"opacus is installed but has no {path}: {INSTALL['opacus']}")
    return path


def _opacus() -> RdpFunction:
    name = "rdp_verify._opacus_rdp"  # a private name: never shadows a real ``opacus``
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, opacus_rdp_path())
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except ImportError as exc:  # a future Opacus whose rdp.py imports torch
            raise PeerUnavailable(f"opacus's rdp.py needs {exc.name}: install it, or {INSTALL['opacus']}") from None
        sys.modules[name] = mod

    def rdp(q: float, sigma: float, alpha: float) -> float:
        return mod.compute_rdp(q=q, noise_multiplier=sigma, steps=1, orders=[alpha])[0]

    return rdp


def _autodp() -> RdpFunction:
    zoo = _import("autodp", "autodp.mechanism_zoo")

    @lru_cache(maxsize=64)  # one mechanism per (q, σ): its integer-order table is built once
    def mechanism(q: float, sigma: float):
        return zoo.NoisySGD_Mechanism(prob=q, sigma=sigma, niter=1)

    def rdp(q: float, sigma: float, alpha: float) -> float:
        return mechanism(q, sigma).get_RDP(alpha)

    return rdp


def _prv_accountant() -> RdpFunction:
    mod = _import("prv_accountant", "prv_accountant.privacy_random_variables")

    def rdp(q: float, sigma: float, alpha: float) -> float:
        return mod.PoissonSubsampledGaussianMechanism(q, sigma).rdp(alpha)

    return rdp


_LOADERS: dict[str, Callable[[], RdpFunction]] = {
    "dp_accounting_rdp": _dp_accounting,
    "opacus_rdp": _opacus,
    "autodp": _autodp,
    "prv_accountant": _prv_accountant,
}


def _quiet(name: str, fn: RdpFunction) -> RdpFunction:
    """fn as a float, without its numeric warnings and absl log lines.

    NaN, inf and non-convergence are what the comparison reports; the peers'
    own RuntimeWarnings (and dp_accounting's absl warning per non-converging
    order) would only bury that report on stderr.
    """
    absl = logging.getLogger("absl")

    def rdp(q: float, sigma: float, alpha: float) -> float:
        level = absl.level
        absl.setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return float(fn(q, sigma, alpha))
        finally:
            absl.setLevel(level)

    rdp.__name__ = rdp.__qualname__ = name  # reports name the peer, not this wrapper
    return rdp


@lru_cache(maxsize=None)
def load(name: str) -> RdpFunction:
    """The peer's ``rdp(q, sigma, alpha)`` for one step; imports the library on first use.

    Raises :class:`PeerUnavailable` (not installed) or :class:`~rdp_verify.foundations.inputs.InputError` (unknown name).
    """
    if name not in _LOADERS:
        raise InputError(f"unknown peer {name!r}: choose from {', '.join(PEERS)}")
    return _quiet(name, _LOADERS[name]())
