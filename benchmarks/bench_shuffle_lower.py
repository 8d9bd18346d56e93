"""rdp_verify's proven lower ends for shuffled and balls-in-bins runs beside Chua et al.'s method, same process.

Workload (issue 28, item 2): 100 steps per epoch (batch 600 of 60000), σ = 0.8, δ = 1e-5, 1, 3, 5 and 10 epochs.
Ours: the proven lower end of ε(δ) (the larger of the explicit-pair count test and the composed binned per-epoch
maxima, :mod:`rdp_verify.curves.per_epoch`; exact integers, losses and masses rounded down). Theirs: Chua et al.,
"Scalable DP-SGD: Shuffling vs. Poisson Subsampling" (NeurIPS 2024), Section 3 — the privacy-loss distribution of
each epoch's maximum for the pair they use (shuffling: the other records' gradient −1; balls-in-bins: 0), composed
over the epochs, in double precision with FFT convolution — as re-implemented independently of rdp_verify in
``tests/curve_oracles.chua_epsilon`` (their code is not a package; the tests hold ours within 0.1 % of it). Their
number is an estimate (float64, losses rounded to the nearest grid point); ours is a proven lower bound, so ours is
below theirs by at most the grid and bin resolution. Times, the best of ``--repeat`` runs: ours the whole bracket
(both ends), theirs one estimate.

    python benchmarks/bench_shuffle_lower.py [--repeat N]

Measured once (2 cores, after a session's load; times machine-dependent, never a test): ours/theirs 0.9995-0.9999
(shuffle 5.6237/9.7838/12.4494/17.5595 against 5.6240/9.7844/12.4503/17.5611 at 1/3/5/10 epochs; balls-in-bins
1.3655/1.7537/2.0108/2.5084 against 1.3657/1.7542/2.0115/2.5097), ours 0.2-0.9 s a bracket, theirs 0.02-1 s.
Cost grows with the
epochs like the composed PLD's length (bins × epochs) times log(epochs) products for ours, and like an FFT of the
same length per epoch for theirs.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

from bench_pld import best, repeat_parser  # benchmarks/ is the script's own folder

from rdp_verify.curves.accountant import bracket
from rdp_verify.foundations.run import Phase

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' independent oracles
from tests.curve_oracles import chua_epsilon  # noqa: E402

SIGMA, STEPS_PER_EPOCH, BATCH, DATASET, DELTA = Fraction(4, 5), 100, 600, 60000, Fraction(1, 10**5)
EPOCHS = (1, 3, 5, 10)
OTHERS = {"shuffle": -1, "balls-in-bins": 0}  # the other records' gradient of Chua et al.'s pair


def main() -> int:
    args = repeat_parser(__doc__).parse_args()
    print("sampler        epochs   ours: proven lower end (s)   Chua et al. float64 (s)   ours/theirs")
    for sampler, c in OTHERS.items():
        for epochs in EPOCHS:
            phase = Phase(Fraction(BATCH, DATASET), SIGMA, epochs * STEPS_PER_EPOCH, sampler, "add-remove",
                          BATCH, DATASET)
            ours_s, ours = best(lambda: bracket([phase], delta=DELTA), args.repeat)
            theirs_s, theirs = best(lambda: chua_epsilon(1 - c, -c, float(SIGMA), STEPS_PER_EPOCH, epochs,
                                                         float(DELTA)), args.repeat)
            print(f"{sampler:14s} {epochs:6d}   {float(ours.lower):10.4f} ({ours_s:6.2f})"
                  f"          {theirs:10.4f} ({theirs_s:6.2f})       {float(ours.lower) / theirs:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
