"""Exact parsing and validation of the SGM parameters q, σ and the Rényi order α.

Every number enters the toolkit as text and is held as an exact rational
(:class:`fractions.Fraction`): "0.1" is 1/10, never the binary double
0.1000000000000000055511151231257827. Accepted spellings are decimals ("0.01",
".5", "2.5"), scientific notation ("1e-6", "2.5E3") and ratios of integers
("1/3"). Everything else -- NaN, inf, hexadecimal, empty text, Python underscores
-- is refused with an :class:`InputError` whose message is one line.

The supported domain is the one the methods are validated on (README,
"Supported domain"): for one-step Rényi DP (the four methods, RDP accounting)
q ∈ [1e-12, 1], σ ∈ [0.1, 1e4], α ∈ (1, 1e6] with α − 1 ≥ 1e-9; for runs
(:class:`Phase`, the proven privacy curves) q ∈ [1e-12, 1] and σ ∈ [0.05, 1e6].
Outside it the toolkit refuses rather than print a number nobody has checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "InputError",
    "SGM",
    "parse_rational",
    "parse_q",
    "parse_sigma",
    "parse_alpha",
    "check_q",
    "check_sigma",
    "check_run_sigma",
    "parse_run_sigma",
    "check_alpha",
    "parse_alphas",
    "parse_dps",
    "fraction_text",
    "Phase",
]

Q_MIN = Fraction(1, 10**12)
SIGMA_MIN = Fraction(1, 10)
SIGMA_MAX = Fraction(10**4)
RUN_SIGMA_MIN = Fraction(1, 20)  # runs (Phase): the privacy-curve accountant's domain
RUN_SIGMA_MAX = Fraction(10**6)
ALPHA_MAX = Fraction(10**6)
ALPHA_GAP_MIN = Fraction(1, 10**9)  # smallest α − 1
DPS_MIN, DPS_MAX = 10, 300
_MAX_TEXT = 100
_MAX_EXPONENT = 400

_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_RATIO = re.compile(r"[+-]?\d+/\d+")


class InputError(ValueError):
    """A parameter is unparsable or outside the supported domain (CLI exit 2)."""


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


def parse_q(text: str) -> Fraction:
    """Sampling rate q ∈ (0, 1] (Definition 3); supported down to 1e-12."""
    return check_q(parse_rational(text, "q"), text.strip())


def parse_sigma(text: str) -> Fraction:
    """Noise multiplier σ > 0 (Definition 3); supported on [0.1, 1e4]."""
    return check_sigma(parse_rational(text, "sigma"), text.strip())


def parse_alpha(text: str) -> Fraction:
    """Rényi order α > 1 (Definition 1); supported on (1, 1e6] with α − 1 ≥ 1e-9."""
    return check_alpha(parse_rational(text, "alpha"), text.strip())


def check_q(q: Fraction, shown: str | None = None) -> Fraction:
    """q itself if it lies in the supported domain [1e-12, 1], else :class:`InputError`."""
    shown = shown or fraction_text(q)
    if not 0 < q <= 1:
        raise InputError(f"q={shown} is outside (0, 1]: q is a sampling probability")
    if q < Q_MIN:
        raise InputError(f"q={shown} is below the supported minimum 1e-12")
    return q


def check_sigma(sigma: Fraction, shown: str | None = None) -> Fraction:
    """σ itself if it lies in the supported domain [0.1, 1e4], else :class:`InputError`."""
    shown = shown or fraction_text(sigma)
    if sigma <= 0:
        raise InputError(f"sigma={shown} must be positive")
    if not SIGMA_MIN <= sigma <= SIGMA_MAX:
        raise InputError(f"sigma={shown} is outside the supported range [0.1, 1e4]")
    return sigma


def parse_run_sigma(text: str) -> Fraction:
    """Noise multiplier σ of a run's phase; supported on [0.05, 1e6] (the privacy-curve domain)."""
    return check_run_sigma(parse_rational(text, "sigma"), text.strip())


def check_run_sigma(sigma: Fraction, shown: str | None = None) -> Fraction:
    """σ itself if it lies in the run domain [0.05, 1e6], else :class:`InputError`."""
    shown = shown or fraction_text(sigma)
    if sigma <= 0:
        raise InputError(f"sigma={shown} must be positive")
    if not RUN_SIGMA_MIN <= sigma <= RUN_SIGMA_MAX:
        raise InputError(f"sigma={shown} is outside the supported range [0.05, 1e6]")
    return sigma


def check_alpha(alpha: Fraction, shown: str | None = None) -> Fraction:
    """α itself if it lies in the supported domain (1, 1e6], α − 1 ≥ 1e-9, else :class:`InputError`."""
    shown = shown or fraction_text(alpha)
    if alpha <= 1:
        raise InputError(f"alpha={shown} must be greater than 1")
    if alpha > ALPHA_MAX:
        raise InputError(f"alpha={shown} is above the supported maximum 1e6")
    if alpha - 1 < ALPHA_GAP_MIN:
        raise InputError(f"alpha={shown} is closer to 1 than the supported 1 + 1e-9")
    return alpha


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


@dataclass(frozen=True)
class Phase:
    """``steps`` consecutive SGM steps at sampling rate ``q`` and noise multiplier ``sigma``.

    A DP-SGD run is a sequence of phases; both accountants (RDP, :mod:`rdp_verify.accounting.rdp`,
    and privacy curves, :mod:`rdp_verify.curves`) take one. q and σ must lie in the run domain
    (q ∈ [1e-12, 1], σ ∈ [0.05, 1e6]); the RDP accountant checks its narrower σ range itself.
    """

    q: Fraction
    sigma: Fraction
    steps: int

    def __post_init__(self) -> None:
        SGM(self.q, self.sigma, Fraction(2))  # types
        check_q(self.q)
        check_run_sigma(self.sigma)
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 1:
            raise InputError(f"steps={self.steps!r} must be a whole number of at least 1")
