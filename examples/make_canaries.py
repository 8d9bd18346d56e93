"""Write the synthetic canary files of docs/tradeoff.md (no training: the scores are drawn directly).

An attack's score for a canary is drawn from N(mu', 1) when the canary was in the training data and from
N(0, 1) when it was not; the best test on such scores has the trade-off curve of mu'-GDP. With 500 members
and 500 non-members each:

* ``canaries-mu3.csv``: mu' = 3 (seed 2026), far stronger than a 1-GDP run allows;
* ``canaries-mu1.csv``: mu' = 1 (seed 2027), exactly what a 1-GDP run allows.

Run ``python examples/make_canaries.py`` from the repository root; Python's ``random`` gives the same
files on every machine.
"""

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scores(mu: float, seed: int, n: int = 500) -> str:
    rng = random.Random(seed)
    rows = [f"{rng.gauss(mu, 1):.4f},1" for _ in range(n)] + [f"{rng.gauss(0, 1):.4f},0" for _ in range(n)]
    return "\n".join(["score,member", *rows]) + "\n"


if __name__ == "__main__":
    (HERE / "canaries-mu3.csv").write_text(scores(3, 2026))
    (HERE / "canaries-mu1.csv").write_text(scores(1, 2027))
