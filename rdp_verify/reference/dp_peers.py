"""Adapters for the float64 (ε, δ) accountants of other libraries, evaluated on a whole DP-SGD run.

A run is a sequence of phases ``(q, sigma, steps)``: ``steps`` steps of the Poisson-subsampled
Gaussian mechanism at sampling rate q ∈ (0, 1] and noise multiplier σ > 0, neighbouring relation
add/remove-one; each peer states the sampler and relation it accounts (``DpPeer.sampler``,
``.neighbours``), and the fixed-size peer takes ``(q, sigma, steps, batch_size, dataset_size)``. ``load_dp(name)`` returns ``epsilon(phases, delta) -> PeerEpsilon``: the ε the library
reports for the composed run at δ, with the library's DEFAULT settings (what a user gets) unless
noted, so that the proven brackets of :mod:`rdp_verify.curves` can be set beside them. The adapters
see IEEE doubles: callers round exact rationals to the nearest double first.

The libraries are optional (``pip install rdp_verify[peers]``; Opacus with ``pip install --no-deps
opacus==1.6.0``) and imported on first use; a missing one raises
:class:`~rdp_verify.reference.peers.PeerUnavailable` naming the pip command. Whatever the library
raises while evaluating propagates unchanged (callers classify a raise, ``inf`` or NaN as a failure);
its RuntimeWarnings, UserWarnings and absl log lines are silenced for the call and the warning
filters and absl level are restored afterwards.

What each adapter calls (read from the installed source):

``dp_accounting_pld`` (dp-accounting 0.6)
    ``dp_accounting.pld.PLDAccountant()`` (defaults: ``neighboring_relation=ADD_OR_REMOVE_ONE``,
    ``value_discretization_interval=1e-4``), ``.compose(PoissonSampledDpEvent(q, GaussianDpEvent(σ)),
    steps)`` per phase, then ``.get_epsilon(δ)``. Each phase is
    ``privacy_loss_distribution.from_gaussian_mechanism(standard_deviation=σ, sampling_prob=q, ...)``
    with its defaults ``pessimistic_estimate=True``, ``use_connect_dots=True``,
    ``log_mass_truncation_bound=-50``, self-composed by FFT; ``get_epsilon`` is
    ``get_epsilon_for_delta`` (the max over the remove and add PMFs). A pessimistic estimate with no
    stated error bound: ``error`` is None.
``dp_accounting_rdp`` (dp-accounting 0.6)
    ``dp_accounting.rdp.RdpAccountant()`` (default orders ``DEFAULT_RDP_ORDERS``: 1.1, 1.2, ..., 10.9,
    11, ..., 63, 128, 256, 512, 1024; add/remove-one), the same events, ``.get_epsilon(δ)``, i.e.
    ``rdp_privacy_accountant.compute_epsilon(orders, rdp, δ)`` (the Balle et al. 2020 conversion,
    minimised over the orders). An upper bound; ``error`` None.
``prv_accountant`` (prv-accountant 0.2)
    ``prv_accountant.PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(sampling_probability=q,
    noise_multiplier=σ) per phase], max_self_compositions=[steps per phase], eps_error=0.01,
    delta_error=δ/1000)`` (the module ``prv_accountant/accountant.py``; these error budgets are the ones
    its deprecated ``Accountant`` and Opacus's ``PRVAccountant`` default to), then
    ``.compute_epsilon(delta=δ, num_self_compositions=[steps ...])``, which returns ``(eps_lower,
    eps_estimate, eps_upper)`` from ``DiscretePrivacyRandomVariable.compute_epsilon``: ``epsilon`` is
    ``eps_upper``, ``lower`` is ``eps_lower``, ``error`` is ``eps_error`` = 0.01 (absolute; the
    estimate's stated error). It raises ``ValueError`` ("Floating point errors will dominate") when
    the long-double epsilon times the domain size exceeds δ − δ_error.
``dp_accounting_pld_replace_one`` (dp-accounting 0.6; runs with ``replace-one`` neighbours, Poisson sampling)
    ``dp_accounting.pld.PLDAccountant(NeighboringRelation.REPLACE_ONE)`` and the same events: each phase
    is ``from_gaussian_mechanism(σ, sampling_prob=q, neighboring_relation=REPLACE_ONE)``, the pair
    (q·N(−1, σ²) + (1 − q)·N(0, σ²), q·N(1, σ²) + (1 − q)·N(0, σ²)): σ relative to one record's
    contribution, as rdp_verify reads it. ``error`` None.
``dp_accounting_rdp_fixed`` (dp-accounting 0.6; runs of ``fixed``-size batches, ``replace-one``)
    ``dp_accounting.rdp.RdpAccountant(neighboring_relation=REPLACE_ONE)``,
    ``.compose(SampledWithoutReplacementDpEvent(N, b, GaussianDpEvent(σ/2)), steps)``: that event's
    noise multiplier is relative to the sum's sensitivity (2 under replace-one; Wang, Balle,
    Kasiviswanathan 2019, Theorem 27), so σ/2 is the same mechanism. An upper bound; ``error`` None.
``opacus_rdp`` (opacus 1.6)
    ``opacus/accountants/rdp.py`` ``RDPAccountant()`` with ``history = [(σ, q, steps) per phase]``
    and ``.get_epsilon(δ)``: ``get_privacy_spent`` with ``DEFAULT_ALPHAS`` (1.1, ..., 10.9, 12, ...,
    63), which sums ``analysis/rdp.py`` ``compute_rdp(q=, noise_multiplier=, steps=, orders=)`` over
    the phases and calls ``analysis/rdp.py`` ``get_privacy_spent(orders=, rdp=, delta=)`` (the
    Balle et al. 2020 conversion). An upper bound; ``error`` None.
``opacus_prv`` (opacus 1.6)
    ``opacus/accountants/prv.py`` ``PRVAccountant()`` with ``history = [(σ, q, steps) per phase]``
    and ``.get_epsilon(δ)`` with its defaults ``eps_error=0.01``, ``delta_error=δ/1000``: it builds
    ``analysis/prv`` ``PoissonSubsampledGaussianPRV``s on a domain from ``compute_safe_domain_size``
    (which runs Opacus's ``RDPAccountant``), composes them (``compose_heterogeneous``) and returns
    ``eps_upper`` of ``DiscretePRV.compute_epsilon`` (Opacus's own port of prv_accountant, not the
    prv_accountant package). ``epsilon`` is that return value; ``lower`` is ``eps_lower`` of the same
    discrete PRV (``_get_dprv`` is observed during the call, then ``compute_epsilon`` is asked for
    the whole triple); ``error`` is ``get_epsilon``'s default ``eps_error`` (0.01).
``autodp`` (autodp 0.2.3)
    ``autodp.mechanism_zoo.NoisySGD_Mechanism(prob=q, sigma=σ, niter=steps)`` per phase (Zhu & Wang
    2019 Poisson amplification of ``ExactGaussianMechanism``, ``improved_bound_flag=True``, composed
    ``niter`` times); several phases are composed with ``transformer_zoo.Composition()(mechanisms,
    [1, ..., 1])``; then ``.get_approxDP(δ)``, which is ``converter.rdp_to_approxdp`` (the BBGHS 2019
    conversion minimised over a continuous α by Brent's method). RDP-based, hence an upper bound;
    ``error`` None.

**Event peers** (:data:`EVENT_PEERS`, :func:`load_event_peer`): dp_accounting's accountants on a whole event tree
of :mod:`rdp_verify.events` (the golden event vectors, :mod:`rdp_verify.reference.golden_events`). The tree is
rebuilt as dp_accounting's own ``DpEvent`` (same class and field names; exact numbers rounded to the nearest
double, :func:`to_dp_accounting`), composed once into a fresh accountant under the row's neighbouring relation,
and asked ``get_epsilon(δ)``. An event the accountant refuses (``UnsupportedEventError``: e.g. the PLD accountant
has no tree aggregation, the RDP accountant no discrete Laplace, mixture or sampled Laplace) raises
:class:`PeerRefused`: the peer does not claim to account it, which is not a failure.

``dp_accounting_pld`` (events)
    ``dp_accounting.pld.PLDAccountant(relation)``: its defaults, ``value_discretization_interval=1e-4`` and every
    mechanism's ``pessimistic_estimate=True``.
``dp_accounting_pld_fine`` (events)
    ``dp_accounting.pld.PLDAccountant(relation, value_discretization_interval=1e-5)``: the same, on a grid ten
    times finer.
``dp_accounting_rdp`` (events)
    ``dp_accounting.rdp.RdpAccountant(neighboring_relation=relation)`` with its default orders.

:func:`opacus_get_noise_multiplier` executes Opacus's own ``opacus/accountants/utils.py``
``get_noise_multiplier`` (its doubling and bisection loop, unchanged) with ``create_accountant`` from
Opacus's ``accountants/registry.py``, loaded in the same private tree.

Opacus without torch: the ``opacus`` package ``__init__`` imports torch, and so does
``accountants/accountant.py`` (through ``opacus.optimizers``). The files above are therefore loaded
under the private package name ``rdp_verify._opacus`` (nothing is registered as ``opacus`` in
``sys.modules``): the packages ``accountants``, ``accountants/analysis`` and ``accountants/analysis/prv``
are module objects with an empty ``__path__`` (so only the files listed in ``_OPACUS_FILES`` can run;
their relative imports resolve inside the tree), ``accountants.accountant`` is a stub whose
``IAccountant`` keeps the one thing ``RDPAccountant`` and ``PRVAccountant`` use from it (``__init__``
setting ``history = []``), and every file runs with an ``__import__`` that maps an absolute
``opacus.X`` import to the tree's ``X`` (only if already loaded) and refuses ``torch``. A future Opacus
whose layout breaks this raises :class:`PeerUnavailable` saying which file needed what.
"""

from __future__ import annotations

import abc
import builtins
import importlib
import importlib.machinery
import importlib.util
import inspect
import logging
import sys
import types
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, fields
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..foundations.inputs import InputError
from .peers import INSTALL, PeerUnavailable, _import, opacus_rdp_path

__all__ = ["DP_PEERS", "DpPeer", "PeerEpsilon", "PeerUnavailable", "load_dp", "opacus_get_noise_multiplier",
           "EVENT_PEERS", "EventPeer", "PeerRefused", "load_event_peer", "to_dp_accounting"]

Run = Sequence[tuple]  # (q, sigma, steps), or (q, sigma, steps, batch_size, dataset_size) for fixed-size batches


@dataclass(frozen=True)
class DpPeer:
    name: str
    library: str  # the package it comes from, a key of rdp_verify.reference.peers.INSTALL
    calls: str  # the library call the adapter evaluates
    stated_error: str | None  # how the peer states its own error on epsilon, or None
    sampler: str = "poisson"  # the runs it accounts (rdp_verify.foundations.run)
    neighbours: str = "add-remove"

    @property
    def install(self) -> str:
        """The pip command that provides it."""
        return INSTALL[self.library]


@dataclass(frozen=True)
class PeerEpsilon:
    epsilon: float  # what the library reports as the run's epsilon at delta (its guarantee/upper value)
    error: float | None  # the peer's own stated absolute error bound on that epsilon, None if it states none
    lower: float | None = None  # a lower value the peer also reports (prv's eps_lower), else None


EpsilonFunction = Callable[[Run, float], PeerEpsilon]

_PRV_EPS_ERROR = 0.01  # prv_accountant's eps_error here: the default of Opacus's PRVAccountant.get_epsilon

DP_PEERS: dict[str, DpPeer] = {
    p.name: p
    for p in (
        DpPeer("dp_accounting_pld", "dp_accounting",
               "dp_accounting.pld.PLDAccountant().compose(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)"
               ".get_epsilon(delta)", None),
        DpPeer("dp_accounting_rdp", "dp_accounting",
               "dp_accounting.rdp.RdpAccountant().compose(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)"
               ".get_epsilon(delta)", None),
        DpPeer("prv_accountant", "prv_accountant",
               "prv_accountant.PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(q, sigma)], eps_error=0.01, "
               "delta_error=delta/1000, max_self_compositions=[steps]).compute_epsilon(delta, [steps])[2]",
               f"eps_error={_PRV_EPS_ERROR} (absolute)"),
        DpPeer("opacus_rdp", "opacus",
               "opacus/accountants/rdp.py RDPAccountant(history=[(sigma, q, steps)]).get_epsilon(delta), torch-free",
               None),
        DpPeer("opacus_prv", "opacus",
               "opacus/accountants/prv.py PRVAccountant(history=[(sigma, q, steps)]).get_epsilon(delta), torch-free",
               f"eps_error={_PRV_EPS_ERROR} (absolute)"),
        DpPeer("autodp", "autodp",
               "autodp.mechanism_zoo.NoisySGD_Mechanism(prob=q, sigma=sigma, niter=steps).get_approxDP(delta)",
               None),
        DpPeer("dp_accounting_pld_replace_one", "dp_accounting",
               "dp_accounting.pld.PLDAccountant(REPLACE_ONE).compose(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), "
               "steps).get_epsilon(delta)", None, "poisson", "replace-one"),
        DpPeer("dp_accounting_rdp_fixed", "dp_accounting",
               "dp_accounting.rdp.RdpAccountant(neighboring_relation=REPLACE_ONE).compose(SampledWithoutReplacementDpEvent"
               "(N, b, GaussianDpEvent(sigma / 2)), steps).get_epsilon(delta)", None, "fixed", "replace-one"),
    )
}


@contextmanager
def _quiet() -> Iterator[None]:
    """No RuntimeWarning/UserWarning and no absl log line below ERROR; both restored on exit.

    A failure is what the comparison reports (raise, inf or NaN); the peers' numeric warnings and
    dp_accounting's absl warnings would only bury that report on stderr.
    """
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        absl.setLevel(level)


# ---------------------------------------------------------------- dp_accounting, prv_accountant, autodp


def _dp_accounting(kind: str) -> EpsilonFunction:
    """dp_accounting's ``pld`` or ``rdp`` accountant on Poisson add/remove runs; ``pld_replace_one`` (Poisson,
    REPLACE_ONE) or ``rdp_fixed`` (fixed-size batches, REPLACE_ONE, the event given σ/2: its noise multiplier is
    relative to the sum's sensitivity 2)."""
    dp = _import("dp_accounting", "dp_accounting")
    accountant = {"pld": dp.pld.PLDAccountant, "rdp": dp.rdp.RdpAccountant,
                  "pld_replace_one": lambda: dp.pld.PLDAccountant(dp.NeighboringRelation.REPLACE_ONE),
                  "rdp_fixed": lambda: dp.rdp.RdpAccountant(neighboring_relation=dp.NeighboringRelation.REPLACE_ONE),
                  }[kind]

    def event(q: float, sigma: float, *sizes: int) -> object:
        if kind == "rdp_fixed":
            batch, size = sizes
            return dp.SampledWithoutReplacementDpEvent(size, batch, dp.GaussianDpEvent(sigma / 2))
        return dp.PoissonSampledDpEvent(q, dp.GaussianDpEvent(sigma))

    def epsilon(phases: Run, delta: float) -> PeerEpsilon:
        acc = accountant()
        for q, sigma, steps, *sizes in phases:
            acc.compose(event(q, sigma, *sizes), steps)
        return PeerEpsilon(float(acc.get_epsilon(delta)), None)

    return epsilon


def _prv_accountant() -> EpsilonFunction:
    prv = _import("prv_accountant", "prv_accountant")

    def epsilon(phases: Run, delta: float) -> PeerEpsilon:
        steps = [n for _, _, n in phases]
        acc = prv.PRVAccountant(
            prvs=[prv.PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=sigma)
                  for q, sigma, _ in phases],
            max_self_compositions=steps, eps_error=_PRV_EPS_ERROR, delta_error=delta / 1000)
        lower, _, upper = acc.compute_epsilon(delta=delta, num_self_compositions=steps)
        return PeerEpsilon(float(upper), _PRV_EPS_ERROR, float(lower))

    return epsilon


def _autodp() -> EpsilonFunction:
    zoo = _import("autodp", "autodp.mechanism_zoo")
    transformers = _import("autodp", "autodp.transformer_zoo")

    def epsilon(phases: Run, delta: float) -> PeerEpsilon:
        mechanisms = [zoo.NoisySGD_Mechanism(prob=q, sigma=sigma, niter=steps) for q, sigma, steps in phases]
        if len(mechanisms) == 1:
            mechanism = mechanisms[0]
        else:
            mechanism = transformers.Composition()(mechanisms, [1] * len(mechanisms))
        return PeerEpsilon(float(mechanism.get_approxDP(delta)), None)

    return epsilon


# ---------------------------------------------------------------- Opacus, torch-free

_TREE = "rdp_verify._opacus"  # a private name: never shadows a real ``opacus``
_PACKAGES = ("", "accountants", "accountants.analysis", "accountants.analysis.prv")
# (module in the tree, file under opacus/), in dependency order
_OPACUS_FILES = (
    ("accountants.analysis.rdp", "accountants/analysis/rdp.py"),
    ("accountants.rdp", "accountants/rdp.py"),
    ("accountants.analysis.prv.domain", "accountants/analysis/prv/domain.py"),  # imports ...rdp.RDPAccountant
    ("accountants.analysis.prv.prvs", "accountants/analysis/prv/prvs.py"),
    ("accountants.analysis.prv.compose", "accountants/analysis/prv/compose.py"),
    ("accountants.analysis.prv", "accountants/analysis/prv/__init__.py"),
    ("accountants.prv", "accountants/prv.py"),
)
# what get_noise_multiplier needs on top: the registry behind ``from opacus.accountants import create_accountant``
_OPACUS_UTILS_FILES = (
    ("accountants.analysis.gdp", "accountants/analysis/gdp.py"),
    ("accountants.gdp", "accountants/gdp.py"),
    ("accountants.registry", "accountants/registry.py"),
    ("accountants", "accountants/__init__.py"),
    ("accountants.utils", "accountants/utils.py"),
)


class _IAccountant(abc.ABC):
    """Stand-in for ``opacus/accountants/accountant.py`` ``IAccountant`` (that module imports torch).

    ``RDPAccountant`` and ``PRVAccountant`` use only its ``__init__``; the rest of the real class
    (optimizer hook, state_dict) serves training and is not needed for accounting.
    """

    def __init__(self):
        self.history = []  # (noise_multiplier, sample_rate, steps) per phase, as in Opacus


def _tree_import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` for the files of the tree: ``opacus.X`` is the tree's ``X``, torch is refused."""
    if level == 0:
        root = name.partition(".")[0]
        if root == "torch":
            raise ImportError("the torch-free Opacus tree does not import torch", name=name)
        if root == "opacus":
            private = _TREE + name[len("opacus"):]
            if private not in sys.modules:
                raise ImportError(f"the torch-free Opacus tree does not load {name}", name=name)
            if not fromlist:
                return sys.modules[_TREE]
            name = private
    return builtins.__import__(name, globals, locals, fromlist, level)


_TREE_BUILTINS = {**vars(builtins), "__import__": _tree_import}


class _TreeLoader(importlib.machinery.SourceFileLoader):
    """Runs an Opacus file as a tree module, with :func:`_tree_import` as its ``__import__``."""

    def exec_module(self, module):
        module.__dict__["__builtins__"] = _TREE_BUILTINS
        super().exec_module(module)


def _opacus_unavailable(why: str) -> PeerUnavailable:
    return PeerUnavailable(f"opacus cannot be loaded without torch ({why}); Opacus 1.6 works: {INSTALL['opacus']}")


def _load_tree_files(root: Path, files) -> None:
    for sub, rel in files:
        name = f"{_TREE}.{sub}"
        path = root / rel
        if not path.is_file():
            raise _opacus_unavailable(f"opacus has no {rel}")
        loader = _TreeLoader(name, str(path))
        try:
            if sub in _PACKAGES:  # a package's __init__, run in the package module already in the tree
                module = sys.modules[name]
                module.__file__ = str(path)
                loader.exec_module(module)
            else:
                spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                loader.exec_module(module)
                parent, _, child = name.rpartition(".")
                setattr(sys.modules[parent], child, module)
        except ImportError as exc:
            raise _opacus_unavailable(f"its {rel} needs {exc.name or exc}") from None


def _drop_tree() -> None:
    for key in [k for k in sys.modules if k == _TREE or k.startswith(_TREE + ".")]:
        del sys.modules[key]


@lru_cache(maxsize=None)
def _opacus_tree() -> types.ModuleType:
    """The private package ``rdp_verify._opacus`` holding Opacus's RDP and PRV accountants."""
    root = opacus_rdp_path().parents[2]  # …/opacus; raises PeerUnavailable when Opacus is missing
    _drop_tree()  # a previous failed attempt
    try:
        for sub in _PACKAGES:
            name = f"{_TREE}.{sub}" if sub else _TREE
            module = types.ModuleType(name)
            module.__path__ = []  # no discovery: only the listed files run
            module.__package__ = name
            module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
            sys.modules[name] = module
            if sub:
                parent, _, child = name.rpartition(".")
                setattr(sys.modules[parent], child, module)
        stub = types.ModuleType(f"{_TREE}.accountants.accountant")
        stub.IAccountant = _IAccountant
        sys.modules[stub.__name__] = sys.modules[f"{_TREE}.accountants"].accountant = stub
        with _quiet():
            _load_tree_files(root, _OPACUS_FILES)
    except BaseException:
        _drop_tree()
        raise
    return sys.modules[_TREE]


@lru_cache(maxsize=None)
def _opacus_utils() -> types.ModuleType:
    """Opacus's ``accountants/utils.py`` in the tree (``create_accountant`` from its registry)."""
    tree = _opacus_tree()
    try:
        with _quiet():
            _load_tree_files(opacus_rdp_path().parents[2], _OPACUS_UTILS_FILES)
    except BaseException:
        for sub, _ in _OPACUS_UTILS_FILES:
            if sub not in _PACKAGES:
                sys.modules.pop(f"{_TREE}.{sub}", None)
        raise
    return tree.accountants.utils


def _opacus(kind: str) -> EpsilonFunction:
    accountants = _opacus_tree().accountants

    if kind == "rdp":
        def epsilon(phases: Run, delta: float) -> PeerEpsilon:
            acc = accountants.rdp.RDPAccountant()
            acc.history = [(sigma, q, steps) for q, sigma, steps in phases]
            return PeerEpsilon(float(acc.get_epsilon(delta)), None)

        return epsilon

    stated = inspect.signature(accountants.prv.PRVAccountant.get_epsilon).parameters["eps_error"].default

    def epsilon(phases: Run, delta: float) -> PeerEpsilon:
        acc = accountants.prv.PRVAccountant()
        acc.history = [(sigma, q, steps) for q, sigma, steps in phases]
        seen = {}
        get_dprv = acc._get_dprv

        def observed(*args, **kwargs):  # the discrete PRV get_epsilon reads eps_upper from
            seen.update(dprv=get_dprv(*args, **kwargs), kwargs=kwargs)
            return seen["dprv"]

        acc._get_dprv = observed
        upper = float(acc.get_epsilon(delta))
        lower = None
        kw = seen.get("kwargs", {})
        if "eps_error" in kw and "delta_error" in kw:
            lower = float(seen["dprv"].compute_epsilon(delta, kw["delta_error"], kw["eps_error"])[0])
        return PeerEpsilon(upper, stated, lower)

    return epsilon


_LOADERS: dict[str, Callable[[], EpsilonFunction]] = {
    "dp_accounting_pld": lambda: _dp_accounting("pld"),
    "dp_accounting_rdp": lambda: _dp_accounting("rdp"),
    "prv_accountant": _prv_accountant,
    "opacus_rdp": lambda: _opacus("rdp"),
    "opacus_prv": lambda: _opacus("prv"),
    "autodp": _autodp,
    "dp_accounting_pld_replace_one": lambda: _dp_accounting("pld_replace_one"),
    "dp_accounting_rdp_fixed": lambda: _dp_accounting("rdp_fixed"),
}


@lru_cache(maxsize=None)
def load_dp(name: str) -> EpsilonFunction:
    """The peer's ``epsilon(phases, delta) -> PeerEpsilon`` for a run; imports the library on first use.

    ``phases`` is a sequence of ``(q, sigma, steps)`` (``dp_accounting_rdp_fixed``: ``(q, sigma, steps,
    batch_size, dataset_size)``). Raises :class:`PeerUnavailable` (not installed)
    or :class:`~rdp_verify.foundations.inputs.InputError` (unknown name); the library's own exceptions
    propagate from the returned function.
    """
    if name not in _LOADERS:
        raise InputError(f"unknown (epsilon, delta) peer {name!r}: choose from {', '.join(DP_PEERS)}")
    with _quiet():
        fn = _LOADERS[name]()

    def epsilon(phases: Run, delta: float) -> PeerEpsilon:
        phases = [(float(q), float(sigma), int(steps), *map(int, sizes)) for q, sigma, steps, *sizes in phases]
        if not phases:
            raise InputError("a run needs at least one phase (q, sigma, steps)")
        with _quiet():
            return fn(phases, float(delta))

    epsilon.__name__ = epsilon.__qualname__ = name  # reports name the peer, not this wrapper
    return epsilon


def opacus_get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                                steps: int, accountant: str = "prv", **kwargs) -> float:
    """σ from Opacus's own ``opacus/accountants/utils.py`` ``get_noise_multiplier``, run torch-free.

    Opacus's loop, unchanged: σ_high = 20, 40, … until ε(σ_high) ≤ target_epsilon, then bisects
    [0, σ_high] while target_epsilon − ε(σ_high) > ``epsilon_tolerance`` (default 0.01), and returns
    σ_high, so ε(σ) ≤ target_epsilon as ``accountant`` ("rdp" or "prv") computes it. ``kwargs``
    (e.g. ``epsilon_tolerance``, ``eps_error``) go to Opacus.
    """
    utils = _opacus_utils()
    with _quiet():
        return float(utils.get_noise_multiplier(target_epsilon=target_epsilon, target_delta=target_delta,
                                                sample_rate=sample_rate, steps=steps, accountant=accountant,
                                                **kwargs))


# ---------------------------------------------------------------- event trees (dp_accounting's accountants)


class PeerRefused(Exception):
    """The peer does not account this event under this relation (dp_accounting's ``UnsupportedEventError``, or a
    class dp_accounting does not have): not a failure of the peer."""


@dataclass(frozen=True)
class EventPeer:
    name: str
    library: str
    calls: str

    @property
    def install(self) -> str:
        return INSTALL[self.library]


EVENT_PEERS: dict[str, EventPeer] = {
    p.name: p
    for p in (
        EventPeer("dp_accounting_pld", "dp_accounting",
                  "dp_accounting.pld.PLDAccountant(relation).compose(event).get_epsilon(delta)"),
        EventPeer("dp_accounting_pld_fine", "dp_accounting",
                  "dp_accounting.pld.PLDAccountant(relation, value_discretization_interval=1e-5).compose(event)"
                  ".get_epsilon(delta)"),
        EventPeer("dp_accounting_rdp", "dp_accounting",
                  "dp_accounting.rdp.RdpAccountant(neighboring_relation=relation).compose(event).get_epsilon(delta)"),
    )
}

EventEpsilon = Callable[[Any, Any, float], PeerEpsilon]


def to_dp_accounting(event: Any, dp: Any = None) -> Any:
    """dp_accounting's own ``DpEvent`` for an event of :mod:`rdp_verify.events`: the class of the same name in
    ``dp_accounting.dp_event``, fields by name, exact numbers as the nearest double, lists as lists. An rdp_verify
    extension (no such class in dp_accounting) raises :class:`PeerRefused`."""
    from ..events.model import Kind

    dp = dp if dp is not None else _import("dp_accounting", "dp_accounting")
    cls = getattr(dp.dp_event, event.name, None)
    if cls is None:
        raise PeerRefused(f"dp_accounting has no {event.name}")

    def value(v: Any, kind: Any) -> Any:
        if kind is Kind.EVENT:
            return to_dp_accounting(v, dp)
        if kind is Kind.EVENTS:
            return [to_dp_accounting(e, dp) for e in v]
        if isinstance(v, tuple):
            return [value(x, None) for x in v]
        return float(v) if isinstance(v, Fraction) else v

    return cls(**{f.name: value(getattr(event, f.name), f.metadata["kind"]) for f in fields(event)})


def _event_accountant(kind: str) -> EventEpsilon:
    dp = _import("dp_accounting", "dp_accounting")
    make = {"pld": lambda rel: dp.pld.PLDAccountant(rel),
            "pld_fine": lambda rel: dp.pld.PLDAccountant(rel, value_discretization_interval=1e-5),
            "rdp": lambda rel: dp.rdp.RdpAccountant(neighboring_relation=rel)}[kind]

    @lru_cache(maxsize=4)  # the rows of one tree at several deltas: composed once
    def composed(event: Any, relation: Any) -> Any:
        accountant = make(getattr(dp.NeighboringRelation, relation.name))
        try:
            accountant.compose(to_dp_accounting(event, dp))
        except dp.UnsupportedEventError as exc:
            raise PeerRefused(str(exc).split(" Error: ")[-1][:200]) from None
        return accountant

    def epsilon(event: Any, relation: Any, delta: float) -> PeerEpsilon:
        return PeerEpsilon(float(composed(event, relation).get_epsilon(delta)), None)

    return epsilon


_EVENT_LOADERS: dict[str, Callable[[], EventEpsilon]] = {
    "dp_accounting_pld": lambda: _event_accountant("pld"),
    "dp_accounting_pld_fine": lambda: _event_accountant("pld_fine"),
    "dp_accounting_rdp": lambda: _event_accountant("rdp"),
}


@lru_cache(maxsize=None)
def load_event_peer(name: str) -> EventEpsilon:
    """The peer's ``epsilon(event, relation, delta) -> PeerEpsilon`` for an event tree of :mod:`rdp_verify.events`
    under a :class:`~rdp_verify.events.model.NeighboringRelation`; :class:`PeerRefused` when it does not account
    the event, :class:`PeerUnavailable` when dp_accounting is missing, InputError for an unknown name."""
    if name not in _EVENT_LOADERS:
        raise InputError(f"unknown event peer {name!r}: choose from {', '.join(EVENT_PEERS)}")
    with _quiet():
        fn = _EVENT_LOADERS[name]()

    def epsilon(event: Any, relation: Any, delta: float) -> PeerEpsilon:
        with _quiet():
            return fn(event, relation, float(delta))

    epsilon.__name__ = epsilon.__qualname__ = name
    return epsilon
