"""Write the synthetic canary files of docs/tradeoff.md (no training: the scores are drawn directly).

An attack's score for a canary is drawn from N(mu', 1) when the canary was in the training data and from
N(0, 1) when it was not; the best test on such scores has the trade-off curve of mu'-GDP. With 500 members
and 500 non-members each:

* ``canaries-mu3.csv``: mu' = 3 (seed 2026), far stronger than a 1-GDP run allows;
* ``canaries-mu1.csv``: mu' = 1 (seed 2027), exactly what a 1-GDP run allows.

One-run files (``audit --method one-run`` or ``one-run-fdp``; Steinke, Nasr, Jagielski 2023): m = 2000
canaries, each a member independently with probability 1/2, as in a single training run:

* ``canaries-one-run-mu4.csv``: mu' = 4 (seed 2028), far stronger than a 0.25-GDP run allows;
* ``canaries-one-run-mu025.csv``: mu' = 0.25 (seed 2029), exactly what a 0.25-GDP run allows
  (``--q 1 --sigma 8 --steps 4``).

Run ``python examples/make_canaries.py`` from the repository root; Python's ``random`` gives the same
files on every machine. ``python examples/make_canaries.py MU SEED N FILE`` writes 2N canaries of
:func:`scores` to FILE instead (e.g. ``1 7 500000 /tmp/million.csv``: a million canaries, 9 MB, for
``rdp-verify audit --q 1 --sigma 2 --steps 4 --canaries /tmp/million.csv``).
"""

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scores(mu: float, seed: int, n: int = 500, digits: int = 4) -> str:
    """n members scored N(mu, 1) then n non-members scored N(0, 1), written with ``digits`` decimals (the one
    seeded generator of the canary files, the tests and ``benchmarks/bench_canaries.py``: n = 500000 gives a
    million canaries; write such files outside the repository)."""
    rng = random.Random(seed)
    rows = [f"{rng.gauss(mu, 1):.{digits}f},1" for _ in range(n)] + [f"{rng.gauss(0, 1):.{digits}f},0" for _ in range(n)]
    return "\n".join(["score,member", *rows]) + "\n"


def one_run_scores(mu: float, seed: int, m: int = 2000) -> str:
    """m canaries, each included with probability 1/2; score N(mu, 1) if included, else N(0, 1)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(m):
        member = rng.random() < 0.5
        rows.append(f"{rng.gauss(mu if member else 0, 1):.4f},{int(member)}")
    return "\n".join(["score,member", *rows]) + "\n"


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 5:
        mu, seed, n, out = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        Path(out).write_text(scores(mu, seed, n))
        raise SystemExit(0)
    (HERE / "canaries-mu3.csv").write_text(scores(3, 2026))
    (HERE / "canaries-mu1.csv").write_text(scores(1, 2027))
    (HERE / "canaries-one-run-mu4.csv").write_text(one_run_scores(4, 2028))
    (HERE / "canaries-one-run-mu025.csv").write_text(one_run_scores(0.25, 2029))
