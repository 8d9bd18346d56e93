"""Golden reference vectors: proven ε_α intervals on a documented grid, as CSV.

Each row is ``q,sigma,alpha,epsilon_lower,epsilon_upper``: exact decimal inputs
and an interval that provably contains ε_α = log max(A_α, B_α)/(α − 1), the
Rényi-DP of one step of the Poisson-subsampled Gaussian mechanism (Mironov,
Talwar, Zhang 2019, Theorem 4). The interval is the Arb enclosure of
:func:`rdp_verify.methods.rigorous.epsilon_bounds` at :data:`DPS` = 40 digits, rounded
outward to :data:`DIGITS` = 25 significant digits
(:func:`rdp_verify.foundations.decimals.decimal_text`).

The file has no timestamps or machine-dependent fields, so
``rdp-verify golden --out certificates/golden-v1.csv`` regenerates it bit for
bit. Computing at 40 digits and printing 25 makes that robust: a printed end
could only change if a different platform's enclosure moved by 1e-40 relative
across a 25-digit rounding boundary. The header names the rdp_verify version
that made the file; a new version regenerates it, and ``git diff`` then shows
whether any number changed. :mod:`rdp_verify.reference` reads it as package data
(``rdp_verify/reference/data/golden-v1.csv`` is a symlink to it; wheels and sdists copy the bytes).
"""

from __future__ import annotations

from .. import __version__
from ..foundations.decimals import decimal_text
from ..foundations.inputs import SGM, fraction_text
from ..foundations.parallel import Pool, progress_map
from .grid import Grid

__all__ = ["FORMAT_VERSION", "GRID", "DPS", "DIGITS", "COLUMNS", "COMMAND", "header", "row", "build"]

FORMAT_VERSION = 1
DPS = 40
DIGITS = 25
COLUMNS = ("q", "sigma", "alpha", "epsilon_lower", "epsilon_upper")
COMMAND = f"rdp-verify golden --out certificates/golden-v{FORMAT_VERSION}.csv"

# q over decades from 1e-6, the 1-2-5 steps of the last decade and q = 1 (the plain
# Gaussian mechanism); σ on the same 1-2.5-5 ladder as the comparison grid; α: fine
# fractional orders near 1, every power of 2 from 2 to 2048, and 2^k + 0.5 for
# k = 1..7 (fractional orders exercise the eq. (12) series at every scale).
GRID = Grid.parse(
    q=["1e-6", "1e-5", "1e-4", "1e-3", "0.01", "0.1", "0.2", "0.5", "1"],
    sigma=["0.5", "1", "2.5", "5", "10", "25", "50", "100"],
    alpha=sorted(["1.01", "1.1", "1.25", "1.5", "1.75"]
                 + [str(2**k) for k in range(1, 12)]
                 + [f"{2**k}.5" for k in range(1, 8)], key=float),
)


def _values(xs: tuple) -> str:
    return " ".join(fraction_text(x) for x in xs)


def header() -> str:
    """The comment block and the column line (everything before the first row)."""
    return "\n".join([
        f"# rdp_verify golden reference vectors, format version {FORMAT_VERSION}",
        "# Each row: exact q, sigma, alpha and a PROVEN interval epsilon_lower <= epsilon_alpha <= epsilon_upper,",
        "# epsilon_alpha = log(max(A_alpha, B_alpha))/(alpha - 1), the Renyi-DP of ONE step of the",
        "# Poisson-subsampled Gaussian mechanism, l2-sensitivity 1 (Mironov, Talwar, Zhang 2019, Theorem 4).",
        # the module path as of format version 1 (now rdp_verify.methods.rigorous): the file must not change
        f"# Arb ball arithmetic (rdp_verify.rigorous.epsilon_bounds, {DPS} digits), rounded outward to {DIGITS}",
        "# significant digits. Rows run over q, then sigma, then alpha:",
        f"#   q:     {_values(GRID.q)}",
        f"#   sigma: {_values(GRID.sigma)}",
        f"#   alpha: {_values(GRID.alpha)}",
        f"# Made by rdp_verify {__version__}. Regenerate bit for bit: {COMMAND}",
        ",".join(COLUMNS),
    ]) + "\n"


def row(sgm: SGM) -> str:
    """One CSV line: the exact inputs and the outward-rounded proven interval."""
    from ..methods.rigorous import epsilon_bounds  # here: the command line's parser reads this module's grid

    eps = epsilon_bounds(sgm, DPS)
    t = sgm.texts()
    lo, hi = decimal_text(eps.lower, DIGITS, "down"), decimal_text(eps.upper, DIGITS, "up")
    return f"{t['q']},{t['sigma']},{t['alpha']},{lo},{hi}\n"


def build(jobs: int | Pool = 1) -> str:
    """The whole file as text (rows in grid order, whatever ``jobs``: processes, or a ``Pool``)."""
    return header() + "".join(progress_map(row, GRID.points(), jobs, "golden rows", "row"))
