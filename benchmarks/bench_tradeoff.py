"""rdp_verify's proven trade-off curve against the same curve read off dp_accounting's PLD, same process.

Workload (issue 19): q = 256/60000, σ = 1.1, T = 14063; TPR = 1 − f(FPR) at FPR = 10^−1 … 10^−6 (six
values). dp_accounting has no trade-off curve: the peer is its PLDAccountant (pessimistic, float64, at the
grid step rdp_verify chose) composed once, then f(α) ≈ max over an ε ladder of 1 − δ(ε) − e^ε·α from
``get_delta_for_epsilon`` on 4000 values of ε (the conjugate formula, Dong, Roth, Su 2022, Proposition 2.12;
an estimate with no error bound). rdp_verify composes the four discrete pairs (exact integers) and reads
both proven envelopes. Times are the best of ``--repeat`` runs; each side includes its composition.

    python benchmarks/bench_tradeoff.py [--repeat N]

Cost grows like the privacy curve's (√T/h·log T for the composition), plus O(n) to prepare the composed
pairs' suffix sums and O(log n) per FPR and bisection step. Needs the optional peer:
pip install 'rdp_verify[peers]'.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np
from bench_pld import best, have_dp_accounting, repeat_parser  # benchmarks/ is the script's own folder

from rdp_verify.curves.accountant import bracket, compose_run
from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import tradeoff

Q, SIGMA, STEPS = Fraction(256, 60000), Fraction(11, 10), 14063
FPRS = [Fraction(1, 10**k) for k in range(1, 7)]


def main() -> int:
    args = repeat_parser(__doc__).parse_args()
    if not have_dp_accounting():
        return 2
    from dp_accounting import dp_event, privacy_accountant
    from dp_accounting.pld import pld_privacy_accountant
    phases = [Phase(Q, SIGMA, STEPS)]
    settings = bracket(phases, delta=Fraction(1, 10**9)).curves.settings  # the grid `rdp-verify tradeoff` uses
    h = settings.grid_step

    def theirs() -> list[float]:
        acc = pld_privacy_accountant.PLDAccountant(privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE,
                                                   value_discretization_interval=float(h))
        acc.compose(dp_event.PoissonSampledDpEvent(float(Q), dp_event.GaussianDpEvent(float(SIGMA))), STEPS)
        eps = np.linspace(0, 20, 4000)
        delta = np.array(acc._pld.get_delta_for_epsilon(eps))
        return [1 - max(0.0, float(np.max(1 - delta - np.exp(eps) * float(a)))) for a in FPRS]

    def ours() -> list[tuple[Fraction, Fraction]]:
        trade = tradeoff(phases, curves=compose_run(phases, settings))
        return [trade.tpr(a) for a in FPRS]

    peer_time, peer = best(theirs, args.repeat)
    our_time, result = best(ours, args.repeat)
    print(f"workload: q={Q}, sigma={SIGMA}, T={STEPS}; TPR at FPR 1e-1 .. 1e-6; grid step h = {h}")
    print(f"dp_accounting PLD + conjugate on 4000 epsilons (float64, no error bound) {peer_time * 1000:8.1f} ms")
    print(f"rdp_verify proven envelopes at the same grid                         {our_time * 1000:8.1f} ms"
          f"   ratio {our_time / peer_time:5.2f}x")
    # dp_accounting's pessimistic pairs overstate delta, hence TPR: it should sit at or above the proven
    # lower end (never under-report the attack), above the upper end by its own discretisation error
    print(f"{'FPR':>8} {'dp_accounting TPR':>18} {'proven TPR bracket':>40} {'not under':>10} {'over upper end':>15}")
    for a, theirs_tpr, (low, up) in zip(FPRS, peer, result):
        print(f"{float(a):>8.0e} {theirs_tpr:>18.8g} {f'[{float(low):.8g}, {float(up):.8g}]':>40} "
              f"{str(theirs_tpr >= float(low)):>10} {(theirs_tpr - float(up)) / float(up):>+15.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
