"""rdp_verify's proven ε(δ) ends for balls-in-bins beside the ``random-allocation`` package's values, same process.

Workload (issue 28, item 1): 100 steps per epoch (batch 600 of 60000), σ = 0.6, δ = 1e-5, zero-out neighbours,
1, 3, 5 and 10 epochs. Ours (docs/samplers.md): the proven lower end (explicit pair, composed maxima), the
proven upper end (the smaller of no amplification and random allocation), and random allocation's two
directions (remove: Feldman & Shenfeld 2025's Rényi DP at the best integer order, proven conversion; add: the
smaller of the shifted Gaussian, whose shift is added per epoch, and the Rényi DP of the exact pair through the
Laplace transform of the lognormal at the best order of ``ADD_ORDERS``, both shown). Theirs: ``allocation_epsilon_combined`` of random-allocation
1.0.5 (Feldman & Shenfeld's code, float64, the smallest of their analyses; orders 2..60), in both directions and
each one; their remove direction uses the same theorem as ours (docs/samplers.md compares the two add
directions). Times, the best of ``--repeat`` runs: ours the whole bracket (both ends), theirs the three calls.

    python benchmarks/bench_random_allocation.py [--repeat N]

random-allocation 1.0.5 declares numpy<2.2 and imports pandas without declaring it; it runs with numpy 2.4.
Install it beside rdp_verify without letting pip downgrade numpy (its other needs, dp-accounting, matplotlib and
scipy, come with rdp_verify[peers,plot,test]):

    pip install --no-deps random-allocation==1.0.5
    pip install numba pandas

Without it the script prints our values only.
"""

from __future__ import annotations

import sys
from fractions import Fraction

from bench_pld import best, repeat_parser  # benchmarks/ is the script's own folder

from rdp_verify.curves.accountant import bracket
from rdp_verify.curves.random_allocation import ADD_ORDERS, AllocationBound
from rdp_verify.foundations.run import Phase

SIGMA, STEPS_PER_EPOCH, BATCH, DATASET, DELTA = Fraction(3, 5), 100, 600, 60000, Fraction(1, 10**5)
EPOCHS = (1, 3, 5, 10)


def phase(epochs: int) -> Phase:
    return Phase(Fraction(BATCH, DATASET), SIGMA, epochs * STEPS_PER_EPOCH, "balls-in-bins", "add-remove",
                 BATCH, DATASET)


def peer():
    """The package's combined ε in both directions, remove and add (None if it is not installed)."""
    try:
        from random_allocation.comparisons.structs import PrivacyParams, SchemeConfig
        from random_allocation.random_allocation_scheme import combined
    except ImportError:
        print("random-allocation is not installed: pip install --no-deps random-allocation==1.0.5; "
              "pip install numba pandas", file=sys.stderr)
        return None
    config = SchemeConfig(allocation_direct_alpha_orders=list(range(2, 61)))

    def values(epochs: int) -> tuple[float, float, float]:
        params = PrivacyParams(sigma=float(SIGMA), num_steps=STEPS_PER_EPOCH, num_selected=1, num_epochs=epochs,
                               delta=float(DELTA))
        return (combined.allocation_epsilon_combined(params, config),
                combined.allocation_epsilon_combined_remove(params, config),
                combined.allocation_epsilon_combined_add(params, config))
    return values


def main() -> int:
    args = repeat_parser(__doc__).parse_args()
    theirs = peer()
    print(f"workload: balls-in-bins, {STEPS_PER_EPOCH} steps per epoch (batch {BATCH} of {DATASET}), "
          f"sigma={float(SIGMA)}, delta=1e-5, zero-out")
    print(f"{'epochs':>6} {'proven lower':>13} {'proven upper':>13} {'ours remove':>12} {'add shifted':>12} "
          f"{'add Renyi':>10} {'order':>6} {'their combined':>15} {'their remove':>13} {'their add':>10} "
          f"{'ours ms':>8} {'theirs ms':>10}")
    for epochs in EPOCHS:
        run = [phase(epochs)]
        our_time, result = best(lambda: bracket(run, delta=DELTA), args.repeat)
        bound = AllocationBound(tuple(run))
        order = bound.epsilon(DELTA)[0]
        remove, shifted = bound.remove_epsilon(DELTA, order), bound.shifted_epsilon(DELTA)
        add_order, renyi = min(((a, bound.add_rdp_epsilon(DELTA, a)) for a in ADD_ORDERS), key=lambda v: v[1])
        line = (f"{epochs:>6} {float(result.lower):>13.6f} {float(result.upper):>13.6f} {float(remove):>12.6f} "
                f"{float(shifted):>12.6f} {float(renyi):>10.6f} {str(add_order):>6}")
        if theirs is not None:
            their_time, (both, their_remove, their_add) = best(lambda: theirs(epochs), args.repeat)
            line += (f" {both:>15.6f} {their_remove:>13.6f} {their_add:>10.6f} {our_time * 1000:>8.0f} "
                     f"{their_time * 1000:>10.0f}")
        else:
            line += f" {'':>15} {'':>13} {'':>10} {our_time * 1000:>8.0f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
