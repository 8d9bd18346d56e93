"""Exact parsing of every number the toolkit is given, and the one definition of its supported domain.

Every number enters the toolkit as text and is held as an exact rational
(:class:`fractions.Fraction`): "0.1" is 1/10, never the binary double
0.1000000000000000055511151231257827. Accepted spellings are decimals ("0.01",
".5", "2.5"), scientific notation ("1e-6", "2.5E3") and ratios of integers
("1/3"). Everything else -- NaN, inf, hexadecimal, empty text, Python underscores
-- is refused with an :class:`InputError` whose message is one line.

The supported domain is the one the methods are validated on (README,
"Supported domain"): for one-step Rényi DP (the four methods, RDP accounting)
q ∈ [1e-12, 1], σ ∈ [0.1, 1e4], α ∈ (1, 1e6] with α − 1 ≥ 1e-9; for runs
(:class:`rdp_verify.foundations.run.Phase`, the proven privacy curves) q ∈ [1e-12, 1], σ ∈ [0.05, 1e6] and
at most 1e6 steps; δ ∈ [1e-40, 1), ε ≥ 0 and relative tolerances in (0, 1).
Outside it the toolkit refuses rather than print a number nobody has checked.

**One validator per quantity.** ``check_<x>(value, name, given)`` returns the exact
value if it lies in the domain and otherwise raises :class:`InputError`; ``parse_<x>(text,
name)`` reads text exactly (:func:`parse_rational`) and checks it. Every entry point -- the
command line, claims files, the drop-in accountants, the Python API -- calls these with
its own argument ``name`` (``--delta``'s ``delta``, Opacus's ``sample_rate``, ...), so the
same limit gives the same one-line message everywhere: ``target_delta=1e-300 is below the
supported minimum 1e-40``. The value is shown as given (``given``: the caller's text), else
by :func:`short_text` (exact and short, or rounded and marked ``...``, never 300 digits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .decimals import decimal_text

__all__ = [
    "InputError",
    "Refused",
    "SGM",
    "parse_rational",
    "parse_whole",
    "fraction_text",
    "short_text",
    "check_q",
    "check_sigma",
    "check_run_sigma",
    "check_alpha",
    "check_delta",
    "check_epsilon",
    "check_steps",
    "check_tolerance",
    "parse_q",
    "parse_sigma",
    "parse_run_sigma",
    "parse_alpha",
    "parse_delta",
    "parse_epsilon",
    "parse_steps",
    "parse_tolerance",
    "parse_alphas",
    "parse_dps",
]

Q_MIN = Fraction(1, 10**12)
SIGMA_MIN = Fraction(1, 10)
SIGMA_MAX = Fraction(10**4)
RUN_SIGMA_MIN = Fraction(1, 20)  # runs (foundations.run.Phase): the privacy-curve accountant's domain
RUN_SIGMA_MAX = Fraction(10**6)
ALPHA_MAX = Fraction(10**6)
ALPHA_GAP_MIN = Fraction(1, 10**9)  # smallest α − 1
DELTA_MIN = Fraction(1, 10**40)  # the smallest δ supported (and tested), by every accountant
MAX_STEPS = 10**6  # the most steps a run may have (per phase here; in all, for privacy curves)
DPS_MIN, DPS_MAX = 10, 300
_MAX_TEXT = 100
_SHORT = 20  # characters: longer exact texts are shown rounded
_MAX_EXPONENT = 400

_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_RATIO = re.compile(r"[+-]?\d+/\d+")


class InputError(ValueError):
    """A parameter is unparsable or outside the supported domain (CLI exit 2)."""


class Refused(InputError):
    """A file asks for more work than the commands that write it ever do (a recorded grid step, fixed-point bits,
    tail or size beyond their limits): ``rdp-verify check`` refuses it before any work, one line and exit 2,
    rather than reporting a field that fails (docs/certificates.md, "the largest work a certificate can demand")."""


def parse_rational(text: str, name: str) -> Fraction:
    """Parse decimal, scientific or ``p/q`` text into an exact :class:`Fraction`."""
    if not isinstance(text, str):
        raise InputError(f"{name} must be given as text, got {type(text).__name__}")
    s = text.strip()
    if not s:
        raise InputError(f"{name} is empty")
    if len(s) > _MAX_TEXT:
        raise InputError(f"{name} is longer than {_MAX_TEXT} characters")
    if _DECIMAL.fullmatch(s):
        exponent = re.search(r"[eE]([+-]?\d+)$", s)
        if exponent and abs(int(exponent.group(1))) > _MAX_EXPONENT:
            raise InputError(f"{name}={s!r}: exponent beyond ±{_MAX_EXPONENT}")
        return Fraction(s)
    if _RATIO.fullmatch(s):
        num, den = s.split("/")
        if int(den) == 0:
            raise InputError(f"{name}={s!r}: division by zero")
        return Fraction(int(num), int(den))
    raise InputError(
        f"{name}={s!r} is not a number (use a decimal like 0.01, 1e-6 or a ratio like 1/3)"
    )


def fraction_text(x: Fraction) -> str:
    """Exact text of a rational: a terminating decimal where one exists, else ``p/q``."""
    if x.denominator == 1:
        return str(x.numerator)
    den = x.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{x.numerator}/{x.denominator}"
    places = max(twos, fives)
    scaled = abs(x) * 10**places
    assert scaled.denominator == 1
    digits = str(scaled.numerator).rjust(places + 1, "0")
    sign = "-" if x < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def parse_whole(text: str, name: str) -> int:
    """A whole number of at least 1 (a count: steps, batch size, dataset size) from its text."""
    x = parse_rational(text, name)
    if x.denominator != 1 or x < 1:
        raise InputError(f"{name}={text.strip()} must be a whole number of at least 1")
    return int(x)


def _scientific(x: Fraction) -> str | None:
    """Exact ``d.ddde±k`` text of x, or None if x has no terminating decimal expansion."""
    plain = fraction_text(x)
    if "/" in plain:
        return None
    sign, body = ("-", plain[1:]) if plain.startswith("-") else ("", plain)
    whole, _, frac = body.partition(".")
    digits = (whole + frac).lstrip("0").rstrip("0")
    if not digits:
        return "0"
    exponent = len(whole) - 1 if whole != "0" else -(len(frac) - len(frac.lstrip("0")) + 1)
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{exponent}"


def _shortest(x: Fraction) -> str:
    """The shorter exact spelling of x: :func:`fraction_text` or scientific notation (the former on a tie)."""
    scientific = _scientific(x)
    return fraction_text(x) if scientific is None else min(fraction_text(x), scientific, key=len)


def short_text(x: Fraction | int) -> str:
    """x as short text for messages: its shorter exact spelling (``0.05``, ``1/3``, ``1e-40``, ``1e6``);
    beyond 20 characters, x rounded to 6 significant digits followed by ``...`` (never 300 digits)."""
    x = Fraction(x)
    exact = _shortest(x)
    return exact if len(exact) <= _SHORT else _shortest(Fraction(decimal_text(x, 6))) + "..."


def _refused(name: str, value: object, given: str | None, reason: str) -> InputError:
    """The one-line error for ``name`` = ``value``: shown as given, else short (:func:`short_text`)."""
    if given is not None:
        shown = given.strip()
    elif isinstance(value, (Fraction, int)) and not isinstance(value, bool):
        shown = short_text(value)
    else:
        shown = repr(value)
    return InputError(f"{name}={shown} {reason}")


def _exact(value: object, name: str, given: str | None) -> Fraction:
    """``value`` as a Fraction if it is an exact rational (Fraction or int, not bool), else InputError."""
    if isinstance(value, bool) or not isinstance(value, (Fraction, int)):
        raise _refused(name, value, given, "must be an exact rational (a Fraction, or text such as '1e-5')")
    return Fraction(value)


def check_q(q: Fraction, name: str = "q", given: str | None = None) -> Fraction:
    """Sampling rate q ∈ (0, 1] (Definition 3), supported on [1e-12, 1]; else :class:`InputError`."""
    x = _exact(q, name, given)
    if not 0 < x <= 1:
        raise _refused(name, q, given, "is outside (0, 1]: it is a sampling probability")
    if x < Q_MIN:
        raise _refused(name, q, given, f"is below the supported minimum {short_text(Q_MIN)}")
    return x


def _check_range(value: Fraction, name: str, given: str | None, low: Fraction, high: Fraction) -> Fraction:
    x = _exact(value, name, given)
    if x <= 0:
        raise _refused(name, value, given, "must be positive")
    if not low <= x <= high:
        raise _refused(name, value, given, f"is outside the supported range [{short_text(low)}, {short_text(high)}]")
    return x


def check_sigma(sigma: Fraction, name: str = "sigma", given: str | None = None) -> Fraction:
    """Noise multiplier σ > 0 of one-step RDP (Definition 3), supported on [0.1, 1e4]; else :class:`InputError`."""
    return _check_range(sigma, name, given, SIGMA_MIN, SIGMA_MAX)


def check_run_sigma(sigma: Fraction, name: str = "sigma", given: str | None = None) -> Fraction:
    """Noise multiplier σ of a run's phase, supported on [0.05, 1e6] (the privacy-curve domain)."""
    return _check_range(sigma, name, given, RUN_SIGMA_MIN, RUN_SIGMA_MAX)


def check_alpha(alpha: Fraction, name: str = "alpha", given: str | None = None) -> Fraction:
    """Rényi order α > 1 (Definition 1), supported on (1, 1e6] with α − 1 ≥ 1e-9; else :class:`InputError`."""
    x = _exact(alpha, name, given)
    if x <= 1:
        raise _refused(name, alpha, given, "must be greater than 1")
    if x > ALPHA_MAX:
        raise _refused(name, alpha, given, f"is above the supported maximum {short_text(ALPHA_MAX)}")
    if x - 1 < ALPHA_GAP_MIN:
        raise _refused(name, alpha, given, f"is closer to 1 than the supported 1 + {short_text(ALPHA_GAP_MIN)}")
    return x


def check_delta(delta: Fraction, name: str = "delta", given: str | None = None) -> Fraction:
    """δ of an (ε, δ) guarantee: in (0, 1), supported down to 1e-40; else :class:`InputError`."""
    x = _exact(delta, name, given)
    if not 0 < x < 1:
        raise _refused(name, delta, given, "must lie strictly between 0 and 1")
    if x < DELTA_MIN:
        raise _refused(name, delta, given, f"is below the supported minimum {short_text(DELTA_MIN)}")
    return x


def check_epsilon(epsilon: Fraction, name: str = "epsilon", given: str | None = None, *,
                  positive: bool = False) -> Fraction:
    """ε of an (ε, δ) guarantee: ε ≥ 0 (ε > 0 for a target, ``positive``); else :class:`InputError`."""
    x = _exact(epsilon, name, given)
    if positive and x <= 0:
        raise _refused(name, epsilon, given, "must be positive")
    if x < 0:
        raise _refused(name, epsilon, given, "must be non-negative")
    return x


def check_steps(steps: int, name: str = "steps", given: str | None = None) -> int:
    """A number of SGM steps: a whole number in [1, 1e6]; else :class:`InputError`."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise _refused(name, steps, given, "must be a whole number of at least 1")
    if steps > MAX_STEPS:
        raise _refused(name, steps, given, f"is beyond the supported maximum {short_text(MAX_STEPS)}")
    return steps


def check_tolerance(tolerance: Fraction, name: str = "tolerance", given: str | None = None) -> Fraction:
    """A relative tolerance (bracket width over its upper end): in (0, 1); else :class:`InputError`."""
    x = _exact(tolerance, name, given)
    if not 0 < x < 1:
        raise _refused(name, tolerance, given, "must lie strictly between 0 and 1")
    return x


def parse_q(text: str, name: str = "q") -> Fraction:
    """:func:`check_q` of the number ``text`` spells."""
    return check_q(parse_rational(text, name), name, text)


def parse_sigma(text: str, name: str = "sigma") -> Fraction:
    """:func:`check_sigma` of the number ``text`` spells."""
    return check_sigma(parse_rational(text, name), name, text)


def parse_run_sigma(text: str, name: str = "sigma") -> Fraction:
    """:func:`check_run_sigma` of the number ``text`` spells."""
    return check_run_sigma(parse_rational(text, name), name, text)


def parse_alpha(text: str, name: str = "alpha") -> Fraction:
    """:func:`check_alpha` of the number ``text`` spells."""
    return check_alpha(parse_rational(text, name), name, text)


def parse_delta(text: str, name: str = "delta") -> Fraction:
    """:func:`check_delta` of the number ``text`` spells."""
    return check_delta(parse_rational(text, name), name, text)


def parse_epsilon(text: str, name: str = "epsilon", *, positive: bool = False) -> Fraction:
    """:func:`check_epsilon` of the number ``text`` spells."""
    return check_epsilon(parse_rational(text, name), name, text, positive=positive)


def parse_steps(text: str, name: str = "steps") -> int:
    """:func:`check_steps` of the whole number ``text`` spells."""
    return check_steps(parse_whole(text, name), name, text)


def parse_tolerance(text: str, name: str = "tolerance") -> Fraction:
    """:func:`check_tolerance` of the number ``text`` spells."""
    return check_tolerance(parse_rational(text, name), name, text)


def parse_alphas(text: str) -> list[Fraction]:
    """Comma-separated orders, e.g. ``"1.5,2,32"``; duplicates are refused."""
    parts = [p for p in text.split(",")]
    if any(not p.strip() for p in parts):
        raise InputError(f"alpha list {text!r} has an empty entry")
    alphas = [parse_alpha(p) for p in parts]
    if len(set(alphas)) != len(alphas):
        raise InputError(f"alpha list {text!r} repeats an order")
    return alphas


def parse_dps(value: int | str) -> int:
    """Requested decimal digits, between 10 and 300."""
    try:
        dps = int(value)
    except (TypeError, ValueError):
        raise InputError(f"dps={value!r} is not an integer") from None
    if not DPS_MIN <= dps <= DPS_MAX:
        raise InputError(f"dps={dps} is outside the supported range [{DPS_MIN}, {DPS_MAX}]")
    return dps


@dataclass(frozen=True)
class SGM:
    """The Sampled Gaussian Mechanism SG_{q,σ} of Definition 3 at order α.

    Attributes are exact rationals. ``gamma`` values used by the methods are
    α (for A_α) and 1 − α (for B_α): both are moments E_{μ0}[w(z)^γ] with
    w(z) = 1 − q + q·exp((2z − 1)/(2σ²)), see :mod:`rdp_verify.methods.quadrature`.
    """

    q: Fraction
    sigma: Fraction
    alpha: Fraction

    @classmethod
    def parse(cls, q: str, sigma: str, alpha: str) -> "SGM":
        return cls(parse_q(q), parse_sigma(sigma), parse_alpha(alpha))

    def __post_init__(self) -> None:
        for name in ("q", "sigma", "alpha"):
            if not isinstance(getattr(self, name), Fraction):
                raise InputError(f"{name} must be an exact Fraction")
        # Mathematical validity only: the methods also evaluate moments just outside the
        # supported domain (e.g. α = 1 + 10^−dps for a derivative at 1). User-facing entry
        # points (parse_*, Phase and the accounting's orders) enforce the domain with check_*.
        if not (0 < self.q <= 1 and self.sigma > 0 and self.alpha > 1):
            raise InputError("need 0 < q <= 1, sigma > 0 and alpha > 1")

    @property
    def integer_order(self) -> bool:
        return self.alpha.denominator == 1

    def texts(self) -> dict[str, str]:
        """Exact decimal (or p/q) strings, as recorded in certificates."""
        return {
            "q": fraction_text(self.q),
            "sigma": fraction_text(self.sigma),
            "alpha": fraction_text(self.alpha),
        }
