"""Start-up time of ``rdp-verify``: ``--help`` and an argument error, against ``python -c pass``.

Issue 23 asks both to answer in at most 0.3 s. Each command runs as a fresh interpreter (the
cost a user sees), interleaved in one loop with the peer ``python -c pass``, so a busy machine
slows all three alike; the ratios against the peer are the stable numbers. Times are the best of
``--repeat`` runs, in milliseconds.

    python benchmarks/bench_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

CLI = [sys.executable, "-m", "rdp_verify.cli"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "rdp-verify --help": [*CLI, "--help"],
    "rdp-verify dp --q 2 ... (error)": [*CLI, "dp", "--q", "2", "--sigma", "1", "--steps", "1", "--delta", "1e-5"],
}
EXPECTED_EXIT = {"python -c pass": 0, "rdp-verify --help": 0, "rdp-verify dp --q 2 ... (error)": 2}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    best = dict.fromkeys(COMMANDS, float("inf"))
    for _ in range(args.repeat):
        for name, argv in COMMANDS.items():
            start = time.perf_counter()
            code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            best[name] = min(best[name], time.perf_counter() - start)
            if code != EXPECTED_EXIT[name]:
                print(f"{name}: exit {code}, expected {EXPECTED_EXIT[name]}", file=sys.stderr)
                return 1
    peer = best["python -c pass"]
    for name, seconds in best.items():
        print(f"{name:<34} {seconds * 1000:7.1f} ms  {seconds / peer:5.1f}x python -c pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
