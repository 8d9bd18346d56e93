"""Canary audits from 10^3 to 10^6 canaries: rdp_verify's proven audit beside jax_privacy's float64 auditor.

Workload (issue 30): the run q = 1, σ = 2, T = 4 (1-GDP); an attack exactly as strong, scores N(1, 1) for the
members and N(0, 1) for the others, half and half, written to 6 decimals by examples/make_canaries.py (seed
30, into a temporary folder). For each canary count:

* rdp_verify: ``read_canaries`` (the CSV read exactly) and ``audit_canaries`` (the screened audit: verdict
  and empirical ε proven), times given apart; the run's curve is composed once, outside the timing;
* jax_privacy 2.x: ``CanaryScoreAuditor(in_scores, out_scores).epsilon_clopper_pearson(significance, delta,
  one_sided=False)`` on scores already in float64 arrays (its default Bonferroni threshold strategy; float64
  Clopper–Pearson bounds, nothing proven).

Printed: seconds for each, the ratio of rdp_verify's total to jax_privacy's, and both empirical ε (they differ
by the levels: rdp_verify's holds for any threshold of the scores, jax_privacy's Bonferroni counts the
thresholds it keeps). Times are the best of ``--repeat`` runs (default 1 from 10^6 up). No timing is asserted.

    python benchmarks/bench_canaries.py [--repeat N] [--largest N]

jax_privacy is optional: without it only rdp_verify's times are printed.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np
from bench_pld import best, repeat_parser  # benchmarks/ is the script's own folder

from rdp_verify.foundations.run import Phase
from rdp_verify.tradeoff import tradeoff
from rdp_verify.tradeoff.canaries import DEFAULT_CONFIDENCE, DEFAULT_DELTA, audit_canaries, read_canaries

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (10**3, 10**4, 10**5, 10**6)


def generator():
    """examples/make_canaries.py (the one seeded generator of canary scores)."""
    spec = importlib.util.spec_from_file_location("make_canaries", ROOT / "examples" / "make_canaries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peer():
    try:
        from jax_privacy.auditing import CanaryScoreAuditor
    except ImportError:
        print("jax_privacy is not installed (pip install jax-privacy): rdp_verify's times only", file=sys.stderr)
        return None
    return CanaryScoreAuditor


def main() -> int:
    parser = repeat_parser(__doc__)
    parser.add_argument("--largest", type=int, default=10**6, help="the largest canary count (default 10^6)")
    args = parser.parse_args()
    make, auditor = generator(), peer()
    trade = tradeoff([Phase(Fraction(1), Fraction(2), 4)], fprs=[Fraction(2, args.largest)])
    print("workload: q = 1, sigma = 2, T = 4; scores N(1, 1) vs N(0, 1), 6 decimals; confidence 0.95, delta 1e-5")
    print(f"{'canaries':>9} {'thresholds':>10} {'read s':>8} {'audit s':>8} {'ours s':>8} {'jax s':>8} "
          f"{'ratio':>7} {'ours eps (proven)':>17} {'jax eps (float)':>15}")
    with tempfile.TemporaryDirectory() as folder:
        for count in (c for c in COUNTS if c <= args.largest):
            path = Path(folder) / f"canaries-{count}.csv"
            path.write_text(make.scores(1, 30, count // 2, digits=6))
            repeat = args.repeat if count < 10**6 else 1
            read_time, table = best(lambda: read_canaries(path), repeat)
            audit_time, report = best(lambda: audit_canaries(trade, table), repeat)
            ours = read_time + audit_time
            line = (f"{count:>9} {len(table):>10} {read_time:>8.2f} {audit_time:>8.2f} {ours:>8.2f}")
            if auditor is not None:
                rows = np.loadtxt(path, delimiter=",", skiprows=1)
                members = rows[:, 1] == 1
                significance = float(1 - DEFAULT_CONFIDENCE)

                def theirs() -> float:
                    return auditor(rows[members, 0], rows[~members, 0]).epsilon_clopper_pearson(
                        significance, float(DEFAULT_DELTA), one_sided=False)

                peer_time, eps = best(theirs, repeat)
                line += f" {peer_time:>8.2f} {ours / peer_time:>6.1f}x {report['empirical_epsilon_lower']:>17}"
                line += f" {eps:>15.6g}"
            else:
                line += f" {'-':>8} {'-':>7} {report['empirical_epsilon_lower']:>17}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
