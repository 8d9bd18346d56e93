"""δ(ε) against ε(δ): how much more the drop-in accountant's ``get_delta`` costs than its ``get_epsilon``, beside
the same ratio for dp_accounting's PLD accountant, both in this process.

Workload (issue 27, item 5): TF Privacy's MNIST run, q = 256/60000, σ = 1.1, T = 14063; ``get_epsilon(1e-5)``
against ``get_delta(2.38)`` (about the same point of the curve). Each call starts from a fresh accountant, so
the time includes composing the run (rdp_verify: the grid search, the proven bracket and its cross-check;
dp_accounting: its PLD at its default discretisation). rdp_verify's answers are cached per question, so the
cache is cleared before every call. Times are the best of ``--repeat`` runs.

    python benchmarks/bench_delta.py [--repeat N]

Needs the optional peer: pip install 'rdp_verify[peers]'.
"""

from __future__ import annotations

from bench_pld import best, have_dp_accounting, repeat_parser  # benchmarks/ is the script's own folder

from rdp_verify.accountants import ledger
from rdp_verify.accountants.dp_accounting_api import CertifiedPldAccountant

Q, SIGMA, STEPS, DELTA, EPSILON = 256 / 60000, 1.1, 14063, 1e-5, 2.38


def main() -> int:
    args = repeat_parser(__doc__).parse_args()
    if not have_dp_accounting():
        return 2
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    step = dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA))

    def ours(question: str) -> float:
        ledger._certificate.cache_clear()
        acc = CertifiedPldAccountant().compose(step, STEPS)
        return acc.get_epsilon(DELTA) if question == "epsilon" else acc.get_delta(EPSILON)

    def theirs(question: str) -> float:
        acc = pld_privacy_accountant.PLDAccountant().compose(step, STEPS)
        return acc.get_epsilon(DELTA) if question == "epsilon" else acc.get_delta(EPSILON)

    print(f"workload: q = 256/60000, sigma = {SIGMA}, T = {STEPS}; get_epsilon({DELTA}) and get_delta({EPSILON})")
    for name, fn in (("rdp_verify CertifiedPldAccountant", ours), ("dp_accounting PLDAccountant", theirs)):
        eps_time, eps = best(lambda: fn("epsilon"), args.repeat)
        delta_time, delta = best(lambda: fn("delta"), args.repeat)
        print(f"{name:34s} get_epsilon {eps_time * 1000:8.1f} ms ({eps:.6f})   get_delta {delta_time * 1000:8.1f} ms "
              f"({delta:.6g})   ratio get_delta/get_epsilon {delta_time / eps_time:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
