"""A certified accountant with the interface of Opacus's accountants (``opacus.accountants.IAccountant``).

Opacus (Meta, ``opacus/accountants/accountant.py`` and ``prv.py``, version 1.6) calls
``accountant.step(noise_multiplier=σ, sample_rate=q)`` after every optimizer step (through the hook
of :meth:`CertifiedAccountant.get_optimizer_hook_fn`) and ``accountant.get_epsilon(delta)`` when the
user asks for the privacy spent. :class:`CertifiedAccountant` keeps Opacus's ``history`` format, a
list of ``(noise_multiplier, sample_rate, num_steps)`` with consecutive equal steps merged, and its
``state_dict``/``load_state_dict`` checkpoint format; ``len(accountant)`` is ``len(history)``, as
in Opacus. Nothing here imports torch or Opacus.

``get_epsilon(delta)`` is a proven upper bound on ε(δ) of the whole run (Poisson sampling,
add/remove-one neighbours, both directions), rounded up to a double; ``certificate()`` is the
sealed proof of the latest answer (:mod:`rdp_verify.accountants.ledger`). Opacus's PRV accountant
returns the upper end of a float64 estimate with error 0.01; this one is never below the truth.
"""

from __future__ import annotations

from collections import OrderedDict
from copy import deepcopy
from fractions import Fraction
from typing import Any, Callable, Mapping

from ..curves.accountant import DEFAULT_TOLERANCE
from ..foundations.inputs import check_delta, check_epsilon, check_q, check_run_sigma, check_steps, check_tolerance
from ..foundations.run import Phase
from .ledger import Ledger, checked

__all__ = ["CertifiedAccountant"]

_FLOAT_TUNING = ("eps_error", "delta_error")  # Opacus PRV's float-accuracy knobs: our bound is proven regardless


class CertifiedAccountant:
    """Opacus's accountant protocol (``step``, ``get_epsilon``, ``history``, ``state_dict``), proven.

    >>> acc = CertifiedAccountant()
    >>> for _ in range(100):
    ...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
    >>> acc.history
    [(1.0, 0.01, 100)]
    >>> eps = acc.get_epsilon(delta=1e-5)   # a proven upper bound, rounded up
    >>> acc.certificate()["verdict"]
    'certified'
    """

    def __init__(self, *, tolerance: Fraction | str = DEFAULT_TOLERANCE):
        self.history: list[tuple[Any, Any, int]] = []
        self._tolerance = checked(check_tolerance, tolerance, "tolerance")
        self._ledger: Ledger | None = None
        self._ledger_of: list[tuple[Any, Any, int]] | None = None

    @classmethod
    def mechanism(cls) -> str:
        """The name stored in ``state_dict`` (Opacus refuses to load another mechanism's state)."""
        return "rdp_verify_certified"

    @staticmethod
    def _step(noise_multiplier: Any, sample_rate: Any) -> tuple[Fraction, Fraction]:
        """(q, σ) of a step, read exactly and validated under Opacus's argument names."""
        return checked(check_q, sample_rate, "sample_rate"), checked(check_run_sigma, noise_multiplier, "noise_multiplier")

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step (merged with the last entry if σ and q are equal, as Opacus does);
        σ and q are validated now, before they enter ``history``."""
        self._step(noise_multiplier, sample_rate)
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            sigma, q, steps = self.history[-1]
            self.history[-1] = (sigma, q, steps + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def _current(self) -> Ledger:
        """The ledger of the current history (rebuilt when ``history`` changed, e.g. by load_state_dict)."""
        if self._ledger is None or self._ledger_of != self.history:
            ledger = Ledger(self._tolerance)
            ledger.extend([Phase(*self._step(sigma, q), check_steps(steps, "num_steps")) for sigma, q, steps in self.history])
            self._ledger, self._ledger_of = ledger, deepcopy(self.history)
        return self._ledger

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """A proven upper bound on ε(δ) of the steps so far, rounded up to a double.

        Opacus PRV's ``eps_error``/``delta_error`` are accepted and ignored: they tune a float
        estimate, and this bound is proven whatever they are.
        """
        unknown = sorted(set(kwargs) - set(_FLOAT_TUNING))
        if unknown:
            raise TypeError(f"get_epsilon() got an unexpected keyword argument {unknown[0]!r}")
        delta = checked(check_delta, delta, "delta")
        return self._current().epsilon(delta)

    def get_delta(self, epsilon: float) -> float:
        """A proven upper bound on δ(ε) of the steps so far, rounded up to a double."""
        epsilon = checked(check_epsilon, epsilon, "epsilon")
        return self._current().delta(epsilon)

    def certificate(self) -> dict[str, Any]:
        """The sealed certificate of the latest ``get_epsilon``/``get_delta`` (``rdp-verify check`` re-verifies it)."""
        if self._ledger is None:
            raise ValueError("no epsilon or delta has been computed yet: call get_epsilon first")
        return self._ledger.certificate()

    def __len__(self) -> int:
        return len(self.history)

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The callback Opacus attaches to a DPOptimizer: one :meth:`step` per optimizer step."""

        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn

    def state_dict(self, destination: Any = None) -> Any:
        """``{"history": ..., "mechanism": ...}`` as Opacus checkpoints it."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore ``history`` from :meth:`state_dict`; refuses another mechanism's state (ValueError)."""
        if not state_dict:
            raise ValueError("state dict is either None or empty and hence cannot be loaded into Privacy Accountant.")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict does not have the key `{key}`. Cannot be loaded into Privacy Accountant.")
        if state_dict["mechanism"] != self.mechanism():
            raise ValueError(f"state_dict of {state_dict['mechanism']} cannot be loaded into "
                             f"Privacy Accountant with mechanism {self.mechanism()}")
        history = [tuple(entry) for entry in state_dict["history"]]
        if any(len(e) != 3 for e in history):
            raise ValueError("state_dict history entries must be (noise_multiplier, sample_rate, num_steps)")
        self.history = history
