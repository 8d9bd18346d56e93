"""Event leaves beyond the Gaussian: rdp_verify's proven bracket against dp_accounting's PLD, same process, same grid.

Workload (issue 29, item 5): three mechanisms (randomized response under two relations) composed with themselves, δ = 1e-5:

* ``laplace``: ``LaplaceDpEvent(1)`` (b = 1, sensitivity 1, ε₀ = 1), 100 uses;
* ``rr``: ``RandomizedResponseDpEvent(0.5, 4)`` under REPLACE_ONE (losses ±log 5 and 0), 100 uses;
* ``rr-special``: the same under REPLACE_SPECIAL (two outcomes, losses log(5/2) and log(1/2)), 100 uses;
* ``mixture``: ``MixtureOfGaussiansDpEvent(1, (0, 1), (1/2, 1/2))`` (add and remove differ), 100 uses.

Each at a FIXED grid step h (``--steps``, default 1e-3 and 1e-4) that is also dp_accounting's
``value_discretization_interval``. dp_accounting: ``from_laplace_mechanism`` / ``from_randomized_response`` /
``from_mixture_gaussian_mechanism`` (pessimistic, float64), ``.self_compose(n)`` (one FFT power; dp_accounting's
``RandomizedResponseDpEvent`` ignores a count, so the PLD is self-composed directly), ``.get_epsilon_for_delta(δ)``.
rdp_verify: :func:`rdp_verify.curves.accountant.bracket` with the leaf, ``settings=Settings(h, bits, truncation,
tail)`` as a run at δ = 1e-5 gets them (64 fixed-point bits, truncation 1e-3·δ/50, per-use tail truncation/(10·n)):
the proven discretisation of both bounds and both directions, the exact integer compositions and the verified roots,
i.e. ε(δ) bracketed from both sides. Times are the best of ``--repeat`` runs; the ratio is ours/theirs, and the
"discretise" columns time one use's PLDs alone (rdp_verify: both bounds and directions; dp_accounting: its
pessimistic PLD). ``--uses`` takes other counts (``--uses 10 100 1000`` for the growth with uses). dp_accounting's
estimate is printed beside our bracket for information only (pessimistic: it may lie above our upper end).
The defaults take about a quarter of an hour (the 1e-4 mixture costs half a minute per run on each side).

    python benchmarks/bench_events.py [--repeat N] [--steps 1e-3 1e-4] [--uses 100] [--cases laplace rr rr-special mixture]

Measured once (a 2-core container shared with other jobs, load about 5, so single timings vary up to 2×; dp_accounting
0.6.0, python-flint; machine-dependent, quoted here, never executed as a test). Whole ε(δ) computation, rdp_verify's
time over dp_accounting's, before → after this benchmark's commit (Laplace's closed-form survival, randomized
response's cuts computed once per step of its survival, the mixture's root search not re-evaluating a point):

    case      h     uses  dp_accounting  rdp_verify (after)  ratio before → after   one use's discretisation, ours
    laplace   1e-3    10     0.039 s        0.28 s               – → 7×
    laplace   1e-3   100     0.04-0.06 s    1.5-1.8 s        32-38× → 23-38×          0.11 s → 0.03 s (theirs 0.004 s)
    laplace   1e-3  1000     0.25 s         12.1 s               – → 49×
    laplace   1e-4   100     0.64-0.86 s    27.6 s              42× → 43×             1.8 s → 0.4 s (theirs 0.045 s)
    rr        1e-3    10     0.019 s        0.36 s               – → 19×
    rr        1e-3   100     0.07-0.09 s    1.9 s            24-28× → 26×             0.19 s → 0.06 s
    rr        1e-3  1000     0.34 s         14.9 s               – → 44×
    rr        1e-4   100     1.3 s          41.6 s              34× → 32×             3.7 s → 0.95 s
    mixture   1e-3   100     4.1-6.1 s      3.4-4.7 s          0.8× → 0.8×            2.3-3.3 s (27% fewer loss evaluations)
    mixture   1e-4   100     29-30 s        41-47 s            1.4× → 1.6× (noise)    30-41 s (theirs 28-35 s)

The mixture is within 5× (dp_accounting's own mixture discretisation costs as much as ours). Laplace and (then) randomized
response are not: one use's discretisation is a few per cent of our time; the rest is the composition
(:mod:`rdp_verify.pld.compose`, outside rdp_verify.mechanisms): exact 64-bit fixed-point integer convolutions by
repeated squaring, 2·log2(uses) products per composed PLD (8 for 100 uses), each about 15× a float64 FFT of the same
length (FLINT ``fmpz_poly`` squaring of 10^6 64-bit coefficients 1.75 s, numpy's rfft/irfft 0.13 s), against
dp_accounting's single float FFT power; and four composed PLDs (two directions × two bounds) even for a symmetric
leaf whose two directions are one PLD (reusing them would take Laplace from 2.0 s to 0.9 s and randomized response
from 2.0 s to 1.2 s at h = 1e-3: measured once with :class:`rdp_verify.curves.accountant.Curves` patched). The ratio
grows with the uses (log2(uses) exact products against one FFT) and with 1/h (the composed length ∝ uses × loss
range / h).

Then the overheads around the exact products in :mod:`rdp_verify.pld.compose` (the cut window by galloping and
halving segment sums instead of a bisection summing O(length) coefficients per probe; the root search's probes
evaluating the fmpz_poly at the ball e^{−h} without building an arb_poly; one negation fewer in the upward division),
composed masses, windows, roots and brackets bit-identical. Measured once, the old and new code alternating in one
process (best of 3; 1000 uses: one run each), at h = 1e-3 (machine-dependent, quoted, never executed):

    case      uses  dp_accounting  rdp_verify before → after   ratio before → after   after: FLINT products alone
    laplace    100    0.033-0.05 s     0.48 s → 0.40 s            15× → 12×              0.25 s (5-8× dp_accounting)
    rr         100    0.05 s           0.65 s → 0.57 s            12× → 11×              0.42 s (8× dp_accounting)
    laplace   1000    0.12 s           3.0 s → 2.7 s              24× → 22×
    rr        1000    0.22 s           4.5 s → 3.3 s              21× → 15×

(the whole benchmark then: Laplace 0.42 s against 0.042 s, 10×; randomized response 0.54 s against 0.051 s, 11×). The
5× aim is out of reach while the products stay exact: after this change the sixteen 64-bit ``fmpz_poly``
products (eight per composed PLD, upper and lower bound) alone take 5-8× dp_accounting's whole ε(δ), the divisions
by 2^64 another quarter of our time for Laplace's dense PLDs (5% for randomized response's sparse ones: FLINT's
per-coefficient division, about three copies' cost), the window about 4%, the root search 3-5%.

Randomized response no longer composes on the grid (2026-11-27): its uses are one exact law (one atom per
likelihood ratio: the coefficients of g(x)^uses under REPLACE_ONE, whose losses ±log r and 0 lie on a lattice; the
uses + 1 outcome counts under REPLACE_SPECIAL), rounded to the grid once
(:class:`rdp_verify.mechanisms.finite_composition.SelfComposed`), so its bracket is one cell wide (h in ε) and no
product is computed. Its "discretise" column then times that composed law's PLDs (dp_accounting's: one use's).
Measured once (same container, load about 1, best of 3, machine-dependent, quoted, never executed):

    case         h     uses  dp_accounting  rdp_verify  ratio   proven bracket of ε(1e-5)      dp_accounting's
    rr         1e-3     10     0.007 s       0.004 s     0.7×    [16.092900, 16.093900]          16.098900
    rr         1e-3    100     0.055 s       0.034 s     0.6×    [123.887428, 123.888428]        123.935069
    rr         1e-3   1000     0.24 s        0.20 s      0.8×    [953.741447, 953.742447]        954.823000
    rr-special 1e-3     10     0.014 s       0.005 s     0.4×    [9.160900, 9.161900]            9.168900
    rr-special 1e-3    100     0.084 s       0.045 s     0.5×    [62.238302, 62.239302]          62.299375
    rr-special 1e-3   1000     0.28 s        0.16 s      0.6×    [415.571271, 415.572271]        416.106425
    rr         1e-4    100     0.49 s        0.35 s      0.7×    [123.888074, 123.888174]        123.893248
    rr-special 1e-4    100     0.63 s        0.47 s      0.7×    [62.238436, 62.238536]          62.240128

(Laplace the same day, for comparison: 10 uses 0.067 s against 0.008 s, 8×; 100 uses 0.48 s against 0.030 s, 16×;
1000 uses 2.8 s against 0.15 s, 18×.)

Laplace then got the SGM steps' kind of pairs (connect-the-dots and lowered chords on its curve, second order in h:
rdp_verify.mechanisms.laplace.LaplaceCurve) and a first grid of ε₀/50. ``--defaults`` adds each side at its
defaults: rdp_verify's bracket at tolerance 1e-3 (its grid refined until met) against dp_accounting's
``PLDAccountant()`` (h = 1e-4). Measured once (same container, best of 3):

    case      h      uses  dp_accounting  rdp_verify  ratio   proven bracket of ε(1e-5)     dp_accounting's
    laplace   1e-3     10     0.012 s       0.24 s     20×     [9.989962, 9.989962]          9.989962
    laplace   1e-3    100     0.040 s       0.89 s     22×     [68.252946, 68.252963]        68.252955
    laplace   1e-3   1000     0.11 s        3.2 s      29×     [474.302422, 474.302524]      474.302476
    laplace   0.02     10     0.005 s       0.008 s    1.6×    [9.989697, 9.990210]          9.990210
    laplace   0.02    100     0.007 s       0.030 s    4.6×    [68.252062, 68.254407]        68.254399
    laplace   0.02   1000     0.010 s       0.17 s     17×     [474.295113, 474.314380]      474.314333
    laplace   auto     10     0.044 s       0.008 s    0.2×    (h = 1/50)
    laplace   auto    100     0.39 s        0.049 s    0.1×    (h = 1/50)
    laplace   auto   1000     1.7 s         0.20 s     0.1×    (h = 1/50)

At h = 1e-3 one use's pairs cost 0.15 s (about 80 µs of Arb work per grid point, against 0.004 s for
dp_accounting's PLD), and the exact products what they did; at the coarse grid the products are short.

Cost: O(uses) atoms under REPLACE_ONE (O(uses²) exact bits), uses + 1 under REPLACE_SPECIAL, then one dense PLD of
(composed loss range)/h points (the range cut where the tails fall below the allowance); a law beyond
finite_composition.MAX_LAW_BITS of exact integers (a few thousand uses) goes back to the grid's products, and a
composed grid beyond rounding.MAX_POINTS (1000 uses at h = 1e-4) is refused, as a composed PLD of that length
would be.

Needs the optional peer: pip install 'rdp_verify[peers]'.
"""

from __future__ import annotations

import sys
from fractions import Fraction

from bench_pld import best, have_dp_accounting, repeat_parser  # benchmarks/ is the script's own folder

from rdp_verify.curves.accountant import Settings, bracket, folded
from rdp_verify.mechanisms.laplace import Laplace
from rdp_verify.mechanisms.mixture_of_gaussians import MixtureOfGaussians
from rdp_verify.mechanisms.randomized_response import RandomizedResponse

DELTA = Fraction(1, 10**5)
BITS = 64  # what a run at δ = 1e-5 gets (pld.compose.bits_for: 40 guard bits below δ's scale)
TRUNCATION = Fraction(1, 1000) * DELTA / 50  # the first rung's allowance (curves.accountant.default_settings)


def cases():
    """name -> (rdp_verify's leaf, dp_accounting's one-use PLD at grid step h)."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld
    REPLACE_SPECIAL = NeighboringRelation.REPLACE_SPECIAL
    return {
        "laplace": (Laplace(Fraction(1)),
                    lambda h: pld.from_laplace_mechanism(1.0, value_discretization_interval=h)),
        "rr": (RandomizedResponse(Fraction(1, 2), 4, "replace-one"),
               lambda h: pld.from_randomized_response(0.5, 4, value_discretization_interval=h)),
        "rr-special": (RandomizedResponse(Fraction(1, 2), 4, "replace-special"),
                       lambda h: pld.from_randomized_response(0.5, 4, value_discretization_interval=h,
                                                              neighboring_relation=REPLACE_SPECIAL)),
        "mixture": (MixtureOfGaussians(Fraction(1), (Fraction(0), Fraction(1)), (Fraction(1, 2), Fraction(1, 2))),
                    lambda h: pld.from_mixture_gaussian_mechanism(1.0, [0.0, 1.0], [0.5, 0.5],
                                                                  value_discretization_interval=h)),
    }


def settings_for(h: Fraction, uses: int) -> Settings:
    return Settings(grid_step=h, bits=BITS, truncation=TRUNCATION, tail=TRUNCATION / (10 * uses))


def defaults_line(name: str, leaf, uses: int, repeat: int) -> None:
    """What each user gets without choosing a grid: rdp_verify's bracket at its default tolerance (relative width
    ≤ 1e-3, the grid refined until it is met) against dp_accounting's ``PLDAccountant()`` at its defaults
    (``value_discretization_interval`` 1e-4), ``compose(event, uses)``, ``get_epsilon(δ)``."""
    import dp_accounting
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    event = {"laplace": lambda: dp_accounting.LaplaceDpEvent(1.0),
             "mixture": lambda: dp_accounting.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5])}[name]()

    def theirs_run() -> float:
        accountant = PLDAccountant()
        accountant.compose(event, uses)
        return accountant.get_epsilon(float(DELTA))

    ours, result = best(lambda: bracket([], delta=DELTA, leaves=[(leaf, uses)]), repeat)
    theirs, eps = best(theirs_run, repeat)
    print(f"{name:8} {'auto':>6} {uses:>5} | {'(defaults)':>33} | {ours:12.3f}s {theirs:7.3f}s {ours / theirs:6.1f}x | "
          f"[{float(result.lower):.6f}, {float(result.upper):.6f}] at h = {result.refinements[-1]['grid_step']}, "
          f"{eps:.6f}", flush=True)


def main() -> int:
    parser = repeat_parser(__doc__)
    parser.add_argument("--steps", nargs="+", default=["1e-3", "1e-4"], help="grid steps h (exact decimals)")
    parser.add_argument("--uses", nargs="+", type=int, default=[100])
    parser.add_argument("--cases", nargs="+", choices=("laplace", "rr", "rr-special", "mixture"),
                        default=["laplace", "rr", "rr-special", "mixture"])
    parser.add_argument("--defaults", action="store_true",
                        help="also each side at its defaults (Laplace and the mixture: dp_accounting's accountant "
                             "counts one use of randomized response whatever the count, docs/events.md)")
    args = parser.parse_args()
    if not have_dp_accounting():
        return 2
    table = cases()
    print(f"delta = {DELTA}, {BITS} fixed-point bits, truncation {TRUNCATION}; best of {args.repeat}")
    print(f"{'case':8} {'h':>6} {'uses':>5} | {'discretise: ours':>16} {'theirs':>8} {'ratio':>6} | "
          f"{'epsilon: ours':>13} {'theirs':>8} {'ratio':>7} | proven bracket [lower, upper], dp_accounting")
    for step in args.steps:
        h = Fraction(step)
        for name in args.cases:
            leaf, peer = table[name]
            for uses in args.uses:
                s = settings_for(h, uses)
                factor = folded([(leaf, uses)])[0][0]  # randomized response: the uses' exact law, rounded once
                d_ours, _ = best(lambda: factor.plds(h, s.bits, s.tail), args.repeat)
                d_theirs, _ = best(lambda: peer(float(h)), args.repeat)
                ours_time, result = best(lambda: bracket([], delta=DELTA, settings=s, leaves=[(leaf, uses)]),
                                         args.repeat)
                theirs_time, eps = best(lambda: peer(float(h)).self_compose(uses).get_epsilon_for_delta(float(DELTA)),
                                        args.repeat)
                print(f"{name:8} {step:>6} {uses:>5} | {d_ours:15.3f}s {d_theirs:7.3f}s {d_ours / d_theirs:5.1f}x | "
                      f"{ours_time:12.3f}s {theirs_time:7.3f}s {ours_time / theirs_time:6.1f}x | "
                      f"[{float(result.lower):.6f}, {float(result.upper):.6f}], {eps:.6f}", flush=True)
    if args.defaults:
        for name in (n for n in args.cases if n in ("laplace", "mixture")):
            for uses in args.uses:
                defaults_line(name, table[name][0], uses, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
