"""rdp_verify vs dp_accounting on dp_accounting's 156 default orders, same process.

Workload (issue 3): q = 0.01, σ = 1.1, orders 1.1…10.9 step 0.1, 11…63, 128,
256, 512, 1024; every rdp_verify order is a proven Arb enclosure of ε_α with
relative accuracy 10^-30 (10^-20 on the ``rdp-verify rdp`` command path, its default,
which includes parsing the arguments and printing the table). Timings are the best of several cold runs (rdp_verify's
per-(q, σ) caches are cleared before each run). Prints both times and the ratio.

    python benchmarks/bench_dp_accounting.py [--repeat N]

Needs the optional peer: pip install 'rdp_verify[peers]'.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from fractions import Fraction

from rdp_verify.cli import main as rdp_verify_main
from rdp_verify.foundations.inputs import SGM
from rdp_verify.methods import arb_series, rigorous

Q, SIGMA, DPS = Fraction(1, 100), Fraction(11, 10), 30


def _cli(argv: list[str]) -> None:
    """``rdp-verify ARGV`` in this process, its output discarded."""
    with contextlib.redirect_stdout(io.StringIO()):
        if rdp_verify_main(argv) != 0:
            raise RuntimeError(f"rdp-verify {' '.join(argv)} failed")


def best_time(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        rigorous.shared_context.cache_clear()
        arb_series._gauss_legendre.cache_clear()
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    try:
        from dp_accounting.rdp import rdp_privacy_accountant as dpa
    except ImportError:
        print("dp_accounting is not installed: pip install 'rdp_verify[peers]'", file=sys.stderr)
        return 2

    floats = list(dpa.DEFAULT_RDP_ORDERS)
    orders = [Fraction(repr(o)) for o in floats]  # 1.1 -> 11/10: the decimal the float stands for
    peer_time, peer = best_time(lambda: dpa._compute_rdp_poisson_subsampled_gaussian(float(Q), float(SIGMA), floats), args.repeat)
    ours_time, ours = best_time(lambda: rigorous.epsilon_many(Q, SIGMA, orders, DPS), args.repeat)
    cli_time, _ = best_time(lambda: _cli(["rdp", "--q", str(Q), "--sigma", "1.1", "--orders", "dp_accounting_default"]),
                            args.repeat)
    both_time, _ = best_time(lambda: [rigorous.enclose(SGM(Q, SIGMA, a), DPS) for a in orders], max(1, args.repeat // 2))

    worst = max(ours, key=lambda e: e.error / e.value)
    slack = Fraction(1, 10**9)
    outside = [(o, e, x) for o, e, x in zip(orders, ours, peer)
               if not (e.lower <= Fraction(x) * (1 + slack) and Fraction(x) * (1 - slack) <= e.upper)]
    fractional = sum(1 for o in orders if o.denominator != 1)
    print(f"workload: q={Q}, sigma={SIGMA}, {len(orders)} orders (dp_accounting.DEFAULT_RDP_ORDERS), {DPS} digits")
    print(f"dp_accounting (float64)                     {peer_time * 1e3:8.1f} ms")
    print(f"rdp_verify epsilon_many (proven, A_alpha)   {ours_time * 1e3:8.1f} ms   ratio {ours_time / peer_time:5.2f}x")
    print(f"rdp-verify rdp (CLI path, 20 digits)        {cli_time * 1e3:8.1f} ms   ratio {cli_time / peer_time:5.2f}x"
          "   (parse, enclose, print; interpreter start excluded)")
    print(f"rdp_verify enclose (proven, A and B)        {both_time * 1e3:8.1f} ms   ratio {both_time / peer_time:5.2f}x")
    print(f"widest relative enclosure: {float(2 * worst.error / worst.value):.1e}")
    print(f"orders where dp_accounting is outside our interval (beyond 1e-9 relative): {len(outside)} of {len(orders)}"
          f" ({sum(1 for o, _, _ in outside if o.denominator != 1)} of the {fractional} fractional ones)")
    if outside:
        o, e, x = max(outside, key=lambda t: abs(Fraction(t[2]) / t[1].value - 1))
        print(f"largest deviation: alpha = {float(o):g}, dp_accounting {x:.6g}, ours {float(e.value):.6g}"
              f" ({float(Fraction(x) / e.value - 1):+.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
