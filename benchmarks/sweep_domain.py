"""Sweep the privacy-curve accountant over its whole domain: time, width and verdict per region.

Draws N runs at random (seeded: the same points on every machine) — q log-uniform on [1e-12, 1]
with q = 1 in one draw of twenty, σ log-uniform on [0.05, 1e6], T log-uniform on [1, 1e5], δ
log-uniform on [1e-30, 0.5], each rounded to three significant digits and read exactly — and
certifies each with `rdp-verify dp`'s code path (:func:`rdp_verify.curves.certificate.certify_run`,
default tolerance 1e-3), in a child process with a time limit. Prints one table row per region
(q, σ and T ranges): points, median and largest seconds, median relative width, verdicts, how often
the independent estimate was informative, tracebacks and refusals. ``--out FILE`` also writes every
point as JSON lines (inputs, seconds, width, verdict, the estimate, any error).

Usage::

    python benchmarks/sweep_domain.py -n 1000 --jobs 2 --out sweep.jsonl

Timings depend on the machine; the table in docs/privacy-curves.md was made with the command above
on 2 cores. Cost grows like √T/h·log T per point (docs/privacy-curves.md).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import random
import statistics
import sys
import time
import traceback
from fractions import Fraction
from typing import Any

from rdp_verify.foundations.decimals import decimal_text

SEED = 20261124


def draw(rng: random.Random) -> dict[str, Any]:
    """One random run of the domain, as exact decimal texts."""
    def log_uniform(lo: float, hi: float) -> str:
        return decimal_text(Fraction(10 ** rng.uniform(math.log10(lo), math.log10(hi))), 3)

    q = "1" if rng.random() < 0.05 else log_uniform(1e-12, 1)
    if Fraction(q) > 1:
        q = "1"
    steps = max(1, min(10**5, round(10 ** rng.uniform(0, 5))))
    return {"q": q, "sigma": log_uniform(0.05, 1e6), "steps": steps, "delta": log_uniform(1e-30, 0.5)}


def run_point(point: dict[str, Any], queue: Any) -> None:
    """Certify one point; put a result dict on the queue (in a child process)."""
    from rdp_verify.curves.certificate import certify_run
    from rdp_verify.foundations.inputs import InputError
    from rdp_verify.foundations.run import Phase

    start = time.perf_counter()
    try:
        phase = Phase(Fraction(point["q"]), Fraction(point["sigma"]), point["steps"])
        cert = certify_run([phase], delta=Fraction(point["delta"]))
        eps, cc = cert["epsilon"], cert["cross_check"]
        out = {"verdict": cert["verdict"], "lower": eps["lower"], "upper": eps["upper"],
               "relative_width": eps["relative_width"], "tolerance_met": eps["tolerance_met"],
               "informative": cc["informative"], "consistent": cc["consistent"], "method": cert["method"],
               "estimate": cc["estimate"], "proven_delta": cc["proven_delta"]}
    except InputError as exc:
        out = {"verdict": "refused", "error": str(exc)}
    except Exception:  # noqa: BLE001 - the sweep reports every failure
        out = {"verdict": "traceback", "error": traceback.format_exc(limit=6)}
    queue.put({**out, "seconds": round(time.perf_counter() - start, 3)})


def measure(point: dict[str, Any], limit: float) -> dict[str, Any]:
    """Run one point in a forked child, killed after ``limit`` seconds."""
    queue: Any = mp.get_context("fork").Queue()
    child = mp.get_context("fork").Process(target=run_point, args=(point, queue))
    child.start()
    child.join(limit)
    if child.is_alive():
        child.kill()
        child.join()
        return {**point, "verdict": "timeout", "seconds": limit}
    return {**point, **queue.get()}


def region(p: dict[str, Any]) -> tuple[str, str, str]:
    q, sigma, steps = Fraction(p["q"]), Fraction(p["sigma"]), p["steps"]
    rq = "q = 1" if q == 1 else "q < 1e-6" if q < Fraction(1, 10**6) else "q < 0.01" if q < Fraction(1, 100) \
        else "q < 1"
    rs = "sigma < 1" if sigma < 1 else "sigma < 100" if sigma < 100 else "sigma >= 100"
    rt = "T <= 2" if steps <= 2 else "T <= 100" if steps <= 100 else "T > 100"
    return rq, rs, rt


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table, one row per (q, σ, T) region, sorted."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(region(r), []).append(r)
    lines = ["| q | sigma | T | points | median s | max s | median rel. width | certified | partial | "
             "inconsistent | informative | traceback / timeout / refused |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(groups):
        g = groups[key]
        secs = [r["seconds"] for r in g]
        widths = [float(r["relative_width"]) for r in g if r.get("relative_width") is not None]
        count = {v: sum(r["verdict"] == v for r in g) for v in ("certified", "partial", "inconsistent", "traceback",
                                                                "timeout", "refused")}
        informative = sum(bool(r.get("informative")) for r in g)
        lines.append(f"| {' | '.join(key)} | {len(g)} | {statistics.median(secs):.1f} | {max(secs):.1f} | "
                     f"{statistics.median(widths):.1e} | {count['certified']} | {count['partial']} | "
                     f"{count['inconsistent']} | {informative} | {count['traceback']} / {count['timeout']} / "
                     f"{count['refused']} |" if widths else
                     f"| {' | '.join(key)} | {len(g)} | {statistics.median(secs):.1f} | {max(secs):.1f} | - | "
                     f"{count['certified']} | {count['partial']} | {count['inconsistent']} | {informative} | "
                     f"{count['traceback']} / {count['timeout']} / {count['refused']} |")
    secs = [r["seconds"] for r in rows]
    lines.append(f"\nAll {len(rows)} points: median {statistics.median(secs):.1f} s, largest {max(secs):.1f} s; "
                 + ", ".join(f"{v} {sum(r['verdict'] == v for r in rows)}" for v in
                             ("certified", "partial", "inconsistent", "traceback", "timeout", "refused"))
                 + f"; estimate informative at {sum(bool(r.get('informative')) for r in rows)}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=100, help="number of random points (default 100)")
    parser.add_argument("--jobs", type=int, default=1, help="points computed at once (default 1)")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds before a point counts as a timeout")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", help="write every point as JSON lines to this file")
    ns = parser.parse_args(argv)
    rng = random.Random(ns.seed)
    points = [draw(rng) for _ in range(ns.n)]
    rows: list[dict[str, Any]] = []
    from concurrent.futures import ThreadPoolExecutor  # threads only wait on the forked children

    with ThreadPoolExecutor(ns.jobs) as pool:
        for i, row in enumerate(pool.map(lambda p: measure(p, ns.limit), points)):
            rows.append(row)
            print(f"[{i + 1}/{ns.n}] {row['q']} {row['sigma']} {row['steps']} {row['delta']}: {row['verdict']} "
                  f"{row['seconds']} s", file=sys.stderr, flush=True)
            if ns.out:
                with open(ns.out, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
