"""How a grid scales: serial, the process pool (--jobs) and Dask (--cluster local:N), same points.

Workload (issue 14): the golden rows (proven ε_α at 40 digits, rdp_verify.reference.golden.row)
of a fixed grid of 10 q × 10 σ × 200 α = 20,000 points (α from 1.05 to 11 in steps of 0.05),
through the one map every command uses (rdp_verify.foundations.parallel.Pool). For each way of
running it: the start-up (processes or cluster), the compute time, the speed-up over serial and
the overhead per point, (workers × compute time − serial time) / points: what each point costs
beyond computing it in this process. Every run's rows must equal the serial rows, in order.

    python benchmarks/bench_cluster.py [--alphas N] [--repeat N] [--cluster ADDRESS ...]

``--alphas N`` takes the first N orders (100·N points; default 200). ``--repeat N`` runs every way
N times, in turn, and keeps the fastest (other work on the machine slows the parallel runs most).
``--cluster`` adds runs on other clusters, e.g. ``--cluster tcp://scheduler:8786``. The caches of
this process are cleared before every run, so no forked worker starts warm. Needs
pip install 'rdp_verify[cluster]'.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction

from rdp_verify.foundations.cluster import ClusterSpec
from rdp_verify.foundations.inputs import fraction_text
from rdp_verify.foundations.parallel import Pool
from rdp_verify.methods import arb_series
from rdp_verify.reference.compare import Grid
from rdp_verify.reference.golden import row

Q = ["1e-5", "1e-4", "1e-3", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5"]
SIGMA = ["0.5", "0.8", "1", "1.5", "2", "3", "5", "10", "25", "100"]


def grid(alphas: int) -> Grid:
    return Grid.parse(Q, SIGMA, [fraction_text(1 + Fraction(k, 20)) for k in range(1, alphas + 1)])


def timed(pool: Pool, points: list) -> tuple[int, float, float, list[str]]:
    """(workers, start-up seconds, compute seconds, rows), from cold caches."""
    arb_series.shared_context.cache_clear()
    arb_series._gauss_legendre.cache_clear()
    start = time.perf_counter()
    with pool:
        opened = time.perf_counter()
        rows = pool.map(row, points, "rows")
        done = time.perf_counter()
        workers = pool.workers
    return workers, opened - start, done - opened, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alphas", type=int, default=200, help="orders in the grid (points = 100 x this)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each way; the fastest counts")
    parser.add_argument("--cluster", action="append", default=[], metavar="ADDRESS", help="also run on this cluster")
    args = parser.parse_args()
    try:
        import distributed  # noqa: F401  (only to fail early with the install line)
    except ImportError:
        print("Dask is not installed: pip install 'rdp_verify[cluster]'", file=sys.stderr)
        return 2
    points = grid(args.alphas).points()
    ways = {"serial": lambda: Pool(1), "--jobs 2 (process pool)": lambda: Pool(2)}
    ways.update({f"--cluster {text}": lambda text=text: Pool(cluster=ClusterSpec.parse(text))
                 for text in ["local:1", "local:2", *args.cluster]})
    print(f"grid: {len(Q)} q x {len(SIGMA)} sigma x {args.alphas} alpha = {len(points)} points (golden rows, 40 digits); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before; fastest of {args.repeat}")
    best: dict[str, tuple] = {}
    for _ in range(args.repeat):
        for name, pool in ways.items():
            run = timed(pool(), points)
            if name not in best or run[2] < best[name][2]:
                best[name] = run
    _, serial_start, serial, reference = best.pop("serial")
    results = [(name, *run) for name, run in best.items()]
    print(f"\n{'run':<26} {'workers':>7} {'start-up s':>10} {'compute s':>10} {'speed-up':>9} "
          f"{'overhead ms/point':>18}  rows")
    print(f"{'serial':<26} {1:>7} {serial_start:>10.2f} {serial:>10.2f} {1:>9.2f} {0:>18.3f}  reference")
    overhead = {}
    for name, workers, start, compute, rows in results:
        overhead[name] = (workers * compute - serial) / len(points) * 1000
        same = "identical" if rows == reference else "DIFFERENT"
        print(f"{name:<26} {workers:>7} {start:>10.2f} {compute:>10.2f} {serial / compute:>9.2f} "
              f"{overhead[name]:>18.3f}  {same}")
    pool_ms, dask_ms = overhead["--jobs 2 (process pool)"], overhead["--cluster local:2"]
    print(f"load average {os.getloadavg()[0]:.2f} after (other work on the machine slows the parallel runs most)")
    print(f"\nserial: {serial / len(points) * 1000:.2f} ms per point. Dask against the process pool, 2 workers: "
          f"{dask_ms - pool_ms:+.3f} ms per point ({(dask_ms - pool_ms) / (serial / len(points) * 1000):+.1%} of a point)")
    return 0 if all(r[4] == reference for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
