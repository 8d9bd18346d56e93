"""Shuffled versus Poisson-sampled DP-SGD, proven: the table in docs/samplers.md.

The setting of the authors' own example for Chua et al., "How Private are DP-SGD Implementations?"
(ICML 2024; google-research, dpsgd_batch_sampler_accounting/example.py): noise multiplier 0.35,
1000 steps per epoch, one epoch, δ(ε) at ε = 0.5 … 10. For each ε it prints the proven bracket of δ(ε)
under Poisson sampling (rate 1/1000), the proven lower end for shuffling (an explicit pair of
neighbouring datasets), and the proven upper end for shuffling (no amplification: the Gaussian
mechanism once). Run: ``python examples/shuffle_vs_poisson.py`` (about a minute and a half).
"""

from fractions import Fraction

from rdp_verify.curves.accountant import bracket
from rdp_verify.foundations.decimals import decimal_text
from rdp_verify.foundations.run import Phase

SIGMA, STEPS = Fraction(35, 100), 1000
EPSILONS = (Fraction(1, 2), 1, 2, 4, 6, 8, 10)


def table() -> str:
    poisson = [Phase(Fraction(1, STEPS), SIGMA, STEPS)]
    shuffled = [Phase(Fraction(1, STEPS), SIGMA, STEPS, "shuffle", "add-remove", 60, 60 * STEPS)]
    rows = ["| ε | δ(ε), Poisson (proven) | δ(ε), shuffled: proven lower end | shuffled: upper end (no amplification) |",
            "| --- | --- | --- | --- |"]
    for eps in EPSILONS:
        p = bracket(poisson, epsilon=Fraction(eps))
        s = bracket(shuffled, epsilon=Fraction(eps))
        rows.append(f"| {decimal_text(Fraction(eps), 3)} | [{decimal_text(p.lower, 3, 'down')}, "
                    f"{decimal_text(p.upper, 3, 'up')}] | {decimal_text(s.lower, 3, 'down')} | "
                    f"{decimal_text(s.upper, 3, 'up')} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
