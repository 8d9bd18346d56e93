"""Golden (ε, δ) vectors: proven ε(δ) brackets of whole DP-SGD runs on a documented grid, as CSV.

Each row is ``q,sigma,steps,delta,epsilon_lower,epsilon_upper``: exact decimal inputs of one run of
``steps`` Poisson-subsampled Gaussian steps (add/remove-one, ℓ2-sensitivity 1) and an interval that
provably contains its ε(δ), the inverse of the privacy curve δ(ε) = max over both directions of the
hockey-stick divergence of the composed dominating pairs (Zhu, Dong, Wang 2022, Theorems 10–11). The
interval is :func:`rdp_verify.curves.accountant.bracket` at relative tolerance :data:`TOLERANCE`
(connect-the-dots upper bound, lowered-chord lower bound, exact integer composition; see
docs/privacy-curves.md), rounded outward to :data:`DIGITS` significant digits.

The computation is exact integer arithmetic plus Arb balls at fixed precision, and the grid choices
depend only on the widths found, so ``rdp-verify golden --dp --out certificates/golden-dp-v2.csv``
regenerates the file bit for bit (a few minutes on one core; ``--jobs`` spreads the rows).

Version 2 replaced version 1 when the grid search changed (grids anchored above the loss's
sliver, first grid from the size of the loss; closed form for q = 1): its brackets are tighter. The
version 1 file, ``certificates/golden-dp-v1.csv``, stays as it was for the users who pinned it; its
brackets are proven too, and every one of them overlaps version 2's (tests/reference).

:data:`RUNS` is fixed in advance to exercise what float accountants get wrong: the MNIST run of
Abadi et al. (2016) as in Opacus's examples, long runs (10⁵ and 10⁶ steps), small noise, large
sampling rates (q = 0.5, 1), and every run at δ = 1e-5, 1e-10 and 1e-20.
"""

from __future__ import annotations

from fractions import Fraction

from .. import __version__
from ..foundations.decimals import decimal_text
from ..foundations.inputs import Phase, fraction_text, parse_q, parse_rational, parse_sigma
from ..foundations.parallel import progress_map

__all__ = ["FORMAT_VERSION", "RUNS", "DELTAS", "TOLERANCE", "DIGITS", "COLUMNS", "COMMAND", "points", "header",
           "row", "build", "parse_rows"]

FORMAT_VERSION = 2
TOLERANCE = Fraction(1, 1000)
DIGITS = 12
COLUMNS = ("q", "sigma", "steps", "delta", "epsilon_lower", "epsilon_upper")
COMMAND = f"rdp-verify golden --dp --out certificates/golden-dp-v{FORMAT_VERSION}.csv"

RUNS: tuple[tuple[str, str, int], ...] = (
    ("256/60000", "1.1", 14063),  # Abadi et al. 2016 MNIST: batch 256 of 60000, 60 epochs
    ("0.001", "1", 100000),  # long run, small q
    ("0.0001", "1", 1000000),  # the longest supported run
    ("0.01", "1", 1000),
    ("0.01", "2", 10000),
    ("0.01", "0.6", 100),  # little noise
    ("0.05", "1.5", 5000),
    ("0.1", "1", 100),
    ("0.1", "3", 1000),
    ("0.5", "2", 100),  # large q
    ("0.5", "5", 1000),
    ("1", "2", 10),  # q = 1: the Gaussian mechanism, mu = sqrt(T)/sigma (Balle & Wang 2018 closed form)
    ("1", "10", 1000),
)
DELTAS: tuple[str, ...] = ("1e-5", "1e-10", "1e-20")


def points() -> list[tuple[str, str, int, str]]:
    """Every (q, sigma, steps, delta) of the grid as written in the file: runs as listed, δ within each run."""
    return [(q, sigma, steps, d) for q, sigma, steps in RUNS for d in DELTAS]


def _parsed(q: str, sigma: str, steps: int | str, delta: str) -> tuple[Phase, Fraction]:
    return Phase(parse_q(q), parse_sigma(sigma), int(steps)), parse_rational(delta, "delta")


def header() -> str:
    """The comment block and the column line (everything before the first row)."""
    runs = "; ".join(f"({q}, {s}, {t})" for q, s, t in RUNS)
    return "\n".join([
        f"# rdp_verify golden (epsilon, delta) vectors, format version {FORMAT_VERSION}",
        "# Each row: exact q, sigma, steps, delta and a PROVEN interval epsilon_lower <= epsilon(delta) <= epsilon_upper",
        "# for `steps` adaptive steps of the Poisson-subsampled Gaussian mechanism, l2-sensitivity 1, add/remove-one",
        "# (both directions; Zhu, Dong, Wang 2022, Theorems 10-11). Proven privacy-curve bracket",
        f"# (rdp_verify.curves.accountant.bracket, relative tolerance {fraction_text(TOLERANCE)}), rounded outward to"
        f" {DIGITS} significant digits.",
        f"# Runs (q, sigma, steps): {runs}",
        f"# each at delta: {' '.join(DELTAS)}",
        f"# Made by rdp_verify {__version__}. Regenerate bit for bit: {COMMAND}",
        ",".join(COLUMNS),
    ]) + "\n"


def row(point: tuple[str, str, int, str]) -> str:
    """One CSV line: the exact inputs (as written in :data:`RUNS`) and the outward-rounded proven ε bracket."""
    from ..curves.accountant import bracket  # here: the command line's parser reads this module's runs

    phase, delta = _parsed(*point)
    b = bracket([phase], delta=delta, tolerance=TOLERANCE)
    if b.upper is None:
        raise ArithmeticError(f"no finite upper bound for {phase} at delta={delta}: change the grid's runs")
    q, sigma, steps, d = point
    return f"{q},{sigma},{steps},{d},{decimal_text(b.lower, DIGITS, 'down')},{decimal_text(b.upper, DIGITS, 'up')}\n"


def build(jobs=1) -> str:
    """The whole file as text (rows in grid order, whatever ``jobs`` is)."""
    return header() + "".join(progress_map(row, points(), jobs, "golden (epsilon, delta) rows"))


def parse_rows(text: str) -> list[tuple[Phase, Fraction, Fraction, Fraction]]:
    """(run, δ, ε lower, ε upper) for every data row of a golden (ε, δ) file's text."""
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    if not lines or tuple(lines[0].split(",")) != COLUMNS:
        raise ValueError(f"a golden (epsilon, delta) file starts with the columns {','.join(COLUMNS)}")
    out = []
    for line in lines[1:]:
        q, sigma, steps, d, lo, hi = line.split(",")
        out.append((*_parsed(q, sigma, steps, d), Fraction(lo), Fraction(hi)))
    return out
