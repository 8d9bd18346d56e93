"""What both drop-in accountants share: exact reading of the numbers they are handed, the run's
phases, and proven ε(δ) / δ(ε) answers as floats rounded up, each with its sealed certificate.

**Numbers.** Accountant interfaces pass floats. A float is read as the shortest decimal that
round-trips to it (``repr``): ``1.1`` is 11/10, the number the user typed, not the binary
1.100000000000000088817841970012523 it approximates (a relative difference below 1.2e-16).
Strings ("256/60000", "1e-5") and :class:`fractions.Fraction` are read exactly. NaN, ±inf and
bools are refused. :func:`checked` then applies the toolkit's one validator for the quantity
(:mod:`rdp_verify.foundations.inputs`) under the interface's own argument name, before anything
is computed: ``target_delta=1e-300 is below the supported minimum 1e-40``.

**Answers.** ε(δ) and δ(ε) come from :func:`rdp_verify.curves.certificate.certify_run`: a proven
bracket of the run's privacy curve (both directions of the add/remove-one relation), cross-checked
against an independent estimate. The float returned is the bracket's proven upper end rounded up
to the next double (:func:`rdp_verify.foundations.decimals.float_rounded`), so it is itself a true
(ε, δ) guarantee of the run; +inf when no finite bound was found. If the independent estimate
disagrees with the bracket, :class:`CertificationError` is raised instead of returning a number.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, TypeVar

from ..curves.accountant import DEFAULT_TOLERANCE, check_run
from ..curves.certificate import certify_run
from ..foundations.decimals import float_rounded
from ..foundations.inputs import InputError, parse_rational
from ..foundations.run import Phase, merged

__all__ = ["CertificationError", "exact_number", "checked", "Ledger"]

T = TypeVar("T")


class CertificationError(ArithmeticError):
    """The proven bracket and its independent cross-check disagree: no number is returned."""


def exact_number(x: Any, name: str) -> Fraction:
    """``x`` as an exact rational: floats by their shortest decimal (``repr``), text exactly."""
    if isinstance(x, bool):
        raise InputError(f"{name}={x!r} is a bool, not a number")
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            raise InputError(f"{name}={x!r} is not a finite number")
        return Fraction(repr(x))
    if isinstance(x, str):
        return parse_rational(x, name)
    if type(x).__module__ == "numpy" and hasattr(x, "item"):  # numpy scalars: their Python value
        return exact_number(x.item(), name)
    raise InputError(f"{name}={x!r} is not a number (give a float, an int, a Fraction or a decimal string)")


def checked(check: Callable[[Fraction, str, str | None], T], x: Any, name: str) -> T:
    """``check(value, name, given)`` of ``x`` read by :func:`exact_number`: a validator of
    :mod:`rdp_verify.foundations.inputs`, its message naming ``name`` and showing ``x`` as given."""
    given = repr(x) if isinstance(x, float) else x if isinstance(x, str) else None
    return check(exact_number(x, name), name, given)


@lru_cache(maxsize=256)  # answers are deterministic: accountants asked the same question share them
def _certificate(run: tuple[Phase, ...], key: str, value: Fraction, tolerance: Fraction) -> dict[str, Any]:
    cert = certify_run(run, tolerance=tolerance, **{key: value})
    if cert["verdict"] == "inconsistent":  # a "partial" bracket still has a proven upper end (or none: inf)
        raise CertificationError(
            f"the proven bracket and the independent estimate disagree for {key} = {value}: "
            "refusing to return a number (please report this run)")
    return cert


@dataclass
class Ledger:
    """The run so far as phases (:class:`~rdp_verify.foundations.run.Phase`); consecutive equal steps merge."""

    tolerance: Fraction = DEFAULT_TOLERANCE
    phases: list[Phase] = field(default_factory=list)
    last: dict[str, Any] | None = None  # the certificate of the latest answer

    def extend(self, steps: list[Phase]) -> None:
        """Append phases, all or none (domain- and size-checked; a phase equal to the last but for its
        length merges with it: :func:`~rdp_verify.foundations.run.merged`)."""
        phases = merged([*self.phases, *steps])
        self.phases = list(check_run(phases)) if phases else []

    def _answer(self, key: str, value: Fraction) -> dict[str, Any]:
        self.last = _certificate(tuple(self.phases), key, value, self.tolerance)
        return self.last

    def epsilon(self, delta: Fraction) -> float:
        """A proven upper bound on ε(δ) of the run, rounded up to a double (0.0 for an empty run);
        ``delta`` is validated by the caller (:func:`checked`)."""
        if not self.phases:
            return 0.0
        upper = self._answer("delta", delta)["epsilon"]["upper"]
        return math.inf if upper is None else float_rounded(Fraction(upper), "up")

    def delta(self, epsilon: Fraction) -> float:
        """A proven upper bound on δ(ε) of the run, rounded up to a double (0.0 for an empty run);
        ``epsilon`` is validated by the caller (:func:`checked`)."""
        if not self.phases:
            return 0.0
        return float_rounded(Fraction(self._answer("epsilon", epsilon)["delta"]["upper"]), "up")

    def certificate(self) -> dict[str, Any]:
        """The sealed certificate (``rdp-verify check`` re-verifies it) of the latest answer."""
        if self.last is None:
            raise ValueError("no epsilon or delta has been computed yet: call get_epsilon or get_delta first")
        return copy.deepcopy(self.last)  # a copy: the cached answer must not change under the caller
