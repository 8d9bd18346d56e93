"""Golden (ε, δ) vectors: proven ε(δ) brackets of whole DP-SGD runs on a documented grid, as CSV.

Each row is ``q,sigma,steps,sampler,neighbours,batch_size,dataset_size,delta,epsilon_lower,epsilon_upper``:
exact decimal inputs of one run of ``steps`` noisy steps (:class:`~rdp_verify.foundations.run.Phase`:
the batch sampler and neighbour relation; the batch and dataset sizes empty for Poisson sampling) and
an interval that provably contains its ε(δ). For Poisson sampling with add/remove neighbours that is
the inverse of the privacy curve δ(ε) = max over both directions of the hockey-stick divergence of the
composed dominating pairs (Zhu, Dong, Wang 2022, Theorems 10–11); for the other samplers the bounds
of :mod:`rdp_verify.curves.replace_one` and :mod:`rdp_verify.curves.per_epoch` (docs/samplers.md). The
interval is :func:`rdp_verify.curves.accountant.bracket` at relative tolerance :data:`TOLERANCE`
(connect-the-dots upper bound, lowered-chord lower bound, exact integer composition; see
docs/privacy-curves.md), rounded outward to :data:`DIGITS` significant digits. Fixed-size,
shuffled and balls-in-bins rows are wider than the tolerance: their two ends come from different
pairs, and no grid closes the gap.

The computation is exact integer arithmetic plus Arb balls at fixed precision, and the grid choices
depend only on the widths found, so ``rdp-verify golden --dp --out certificates/golden-dp-v4.csv``
regenerates the file bit for bit (several minutes on one core; ``--jobs`` spreads the rows).

Version 4 raised the lower ends of the shuffled and balls-in-bins rows (the composed laws of each
epoch's largest step, :mod:`rdp_verify.curves.per_epoch`) and added a balls-in-bins run under zero-out
neighbours, whose upper end is random allocation's (:mod:`rdp_verify.curves.random_allocation`); its Poisson
and fixed-size rows are those of version 3, byte for byte, and each other bracket of version 3 contains
version 4's. Version 3
added the columns of the sampler and the neighbour relation and the rows of :data:`SAMPLER_RUNS`; its
Poisson add/remove rows are those of version 2, bit for bit. Version 2 replaced version 1 when the grid
search changed (grids anchored above the loss's sliver, first grid from the size of the loss; closed form
for q = 1): its brackets are tighter. The files of versions 1 to 3, ``certificates/golden-dp-v1.csv`` to
``golden-dp-v3.csv``, stay as they were for the users who pinned them (:func:`parse_rows` reads them);
their brackets are proven too (tests/reference).

:data:`RUNS` is fixed in advance to exercise what float accountants get wrong: the MNIST run of
Abadi et al. (2016) as in Opacus's examples, long runs (10⁵ and 10⁶ steps), small noise, large
sampling rates (q = 0.5, 1), and every run at δ = 1e-5, 1e-10 and 1e-20. :data:`SAMPLER_RUNS` adds
replace-one under Poisson sampling (dp_accounting's ``REPLACE_ONE`` PLD), fixed-size batches
(dp_accounting's RDP ``SampledWithoutReplacementDpEvent``), and the shuffled and balls-in-bins runs of
docs/samplers.md.
"""

from __future__ import annotations

from fractions import Fraction

from .. import __version__
from ..foundations.decimals import decimal_text
from ..foundations.inputs import fraction_text, parse_q, parse_rational, parse_run_sigma
from ..foundations.parallel import progress_map
from ..foundations.run import Phase

__all__ = ["FORMAT_VERSION", "RUNS", "SAMPLER_RUNS", "DELTAS", "TOLERANCE", "DIGITS", "COLUMNS", "COMMAND", "points", "header",
           "row", "build", "parse_rows"]

FORMAT_VERSION = 4
TOLERANCE = Fraction(1, 1000)
DIGITS = 12
COLUMNS = ("q", "sigma", "steps", "sampler", "neighbours", "batch_size", "dataset_size", "delta", "epsilon_lower",
           "epsilon_upper")
COLUMNS_V2 = ("q", "sigma", "steps", "delta", "epsilon_lower", "epsilon_upper")  # versions 1 and 2
COMMAND = f"rdp-verify golden --dp --out certificates/golden-dp-v{FORMAT_VERSION}.csv"

RUNS: tuple[tuple[str, str, int], ...] = (  # Poisson sampling, add/remove neighbours
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
# (q, sigma, steps, sampler, neighbours, batch size, dataset size): "" for the sizes of Poisson sampling
SAMPLER_RUNS: tuple[tuple[str, str, int, str, str, str, str], ...] = (
    ("0.01", "1", 1000, "poisson", "replace-one", "", ""),  # the run: dp_accounting REPLACE_ONE PLD
    ("256/60000", "1.1", 14063, "poisson", "replace-one", "", ""),
    ("0.1", "2", 100, "poisson", "replace-one", "", ""),
    ("1", "2", 10, "poisson", "replace-one", "", ""),  # the Gaussian mechanism at sensitivity 2
    ("1/100", "2", 300, "fixed", "replace-one", "600", "60000"),  # dp_accounting's RDP for the same sampler
    ("1/240", "1.3", 720, "shuffle", "add-remove", "250", "60000"),  # TF Privacy's Keras tutorial, shuffled
    ("1/1000", "0.35", 1000, "shuffle", "add-remove", "60", "60000"),  # Chua et al.'s example setting
    ("1/240", "1.3", 720, "balls-in-bins", "replace-one", "250", "60000"),
    ("1/240", "1.3", 720, "balls-in-bins", "add-remove", "250", "60000"),  # zero-out: random allocation's upper end
)
DELTAS: tuple[str, ...] = ("1e-5", "1e-10", "1e-20")


Point = tuple[str, str, int, str, str, str, str, str]  # a run of SAMPLER_RUNS' shape and its delta


def points() -> list[Point]:
    """Every row's inputs as written in the file: :data:`RUNS` (Poisson add/remove), then :data:`SAMPLER_RUNS`,
    each run at every δ of :data:`DELTAS` in turn."""
    runs = [(q, s, t, "poisson", "add-remove", "", "") for q, s, t in RUNS] + list(SAMPLER_RUNS)
    return [(*run, d) for run in runs for d in DELTAS]


def _phase(q: str, sigma: str, steps: int | str, sampler: str = "poisson", neighbours: str = "add-remove",
           batch: str = "", size: str = "") -> Phase:
    sizes = (int(batch), int(size)) if batch else (None, None)
    return Phase(parse_q(q), parse_run_sigma(sigma), int(steps), sampler, neighbours, *sizes)


def header() -> str:
    """The comment block and the column line (everything before the first row)."""
    runs = "; ".join(f"({q}, {s}, {t})" for q, s, t in RUNS)
    others = "; ".join(f"({q}, {s}, {t}, {sampler}, {nb}" + (f", batch {b} of {n})" if b else ")")
                       for q, s, t, sampler, nb, b, n in SAMPLER_RUNS)
    return "\n".join([
        f"# rdp_verify golden (epsilon, delta) vectors, format version {FORMAT_VERSION}",
        "# Each row: exact q, sigma, steps, the batch sampler and neighbour relation (batch and dataset sizes empty for",
        "# Poisson sampling), delta and a PROVEN interval epsilon_lower <= epsilon(delta) <= epsilon_upper for `steps`",
        "# adaptive noisy steps, every clipped gradient of norm at most 1 (sensitivity 1 add/remove, 2 replace-one).",
        "# Poisson add/remove: both directions of the SGM's dominating pairs (Zhu, Dong, Wang 2022, Theorems 10-11);",
        "# other samplers: docs/samplers.md (fixed, shuffle, balls-in-bins rows are wider than the tolerance).",
        f"# Proven privacy-curve bracket (rdp_verify.curves.accountant.bracket, relative tolerance "
        f"{fraction_text(TOLERANCE)}), rounded outward to {DIGITS} significant digits.",
        f"# Poisson add/remove runs (q, sigma, steps): {runs}",
        f"# Other runs: {others}",
        f"# each at delta: {' '.join(DELTAS)}",
        f"# Made by rdp_verify {__version__}. Regenerate bit for bit: {COMMAND}",
        ",".join(COLUMNS),
    ]) + "\n"


def row(point: Point) -> str:
    """One CSV line: the exact inputs (as written in :data:`RUNS`, :data:`SAMPLER_RUNS`) and the outward-rounded
    proven ε bracket."""
    from ..curves.accountant import bracket  # here: the command line's parser reads this module's runs

    *run, d = point
    phase, delta = _phase(*run), parse_rational(d, "delta")
    b = bracket([phase], delta=delta, tolerance=TOLERANCE)
    if b.upper is None:
        raise ArithmeticError(f"no finite upper bound for {phase} at delta={delta}: change the grid's runs")
    return ",".join([*map(str, run), d, decimal_text(b.lower, DIGITS, "down"), decimal_text(b.upper, DIGITS, "up")]) + "\n"


def build(jobs=1) -> str:
    """The whole file as text (rows in grid order, whatever ``jobs`` is)."""
    return header() + "".join(progress_map(row, points(), jobs, "golden (epsilon, delta) rows", "row"))


def parse_rows(text: str) -> list[tuple[Phase, Fraction, Fraction, Fraction]]:
    """(run, δ, ε lower, ε upper) for every data row of a golden (ε, δ) file's text (versions 3 and 4, or the
    Poisson add/remove rows of versions 1 and 2)."""
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    columns = tuple(lines[0].split(",")) if lines else ()
    if columns not in (COLUMNS, COLUMNS_V2):
        raise ValueError(f"a golden (epsilon, delta) file starts with the columns {','.join(COLUMNS)}")
    out = []
    for line in lines[1:]:
        cells = line.split(",")
        if columns == COLUMNS_V2:
            q, sigma, steps, d, lo, hi = cells
            phase = _phase(q, sigma, steps)
        else:
            *run, d, lo, hi = cells
            phase = _phase(*run)
        out.append((phase, parse_rational(d, "delta"), Fraction(lo), Fraction(hi)))
    return out
