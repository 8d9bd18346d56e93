"""What jax_privacy's one-run level costs: how often each one-run audit finds leakage where there is none.

Workload (issue 39, item 7): the null. Each trial draws m canaries (default 1000) with attack scores iid N(0, 1)
and membership labels that are fair coins, scores and labels independent: whatever the training, this attack
sees a mechanism whose true ε is 0 (the scores are a post-processing of nothing the labels touch), so an audit
that reports ε > 0, i.e. rejects (0, δ)-DP, is wrong. Both audits see the same trials, at significance 0.05
(confidence 0.95, the default of ``rdp-verify audit`` and ``compare --tradeoff``) and δ = 1e-6 (default; the
p-value's term 2mδ·max S_i/i is then small, so the test is nearly the pure binomial one; a larger δ such as
``compare --tradeoff``'s 1e-5 raises every p-value and hides part of the excess):

* rdp_verify: :func:`rdp_verify.tradeoff.one_run.epsilon_one_run_lower` on the guesses of every guess count
  k = 1, …, m (guess "member" for the k highest scores), each threshold tested at level 0.05/m
  (:func:`~rdp_verify.tradeoff.one_run.one_run_level`, rule ``any-threshold``: a union bound over the m rules
  fixed before the data); wrong when it returns a rejection (proven p-value ≤ the level);
* jax_privacy 2.x: ``CanaryScoreAuditor(in_scores, out_scores).epsilon_one_run(0.05, δ)`` (its default
  ``Bonferroni()`` threshold strategy divides the significance by ``len(self._fn_counts)``, the vertices of the
  ROC curve's Pareto frontier, a count the labels choose); wrong when it returns ε > 0;
* jax_privacy at the honest level: the same call with significance 0.05·n/m, n its vertex count, so that each
  of its tests runs at 0.05/m as rdp_verify's do: it shows that the level, not the p-value, makes the difference.

A valid audit at significance 0.05 is wrong on at most 5 % of trials (here far fewer: the union bound over m
rules is loose). Printed: the wrong-claim count and rate of each, with exact two-sided 95 % Clopper–Pearson
intervals (both ends from :func:`rdp_verify.tradeoff.binomial.clopper_pearson_upper`, proven, rounded outward),
the median vertex count, and the seconds per trial. Seeded (``numpy.random.default_rng(--seed)``, one stream
drawn trial by trial: scores, then labels), so a run repeats exactly; the rates are the same on every machine,
the times are not.

    python benchmarks/one_run_null.py [--trials N] [--canaries M] [--seed S] [--delta D] [--significance G]

The default 10000 trials take about half a minute on a shared 2-core machine (about 2 ms a trial for
jax_privacy's two calls, under 1 ms for rdp_verify, after 5 s of importing jax). jax_privacy is optional
(pip install 'rdp_verify[fdp-peers]'): without it only rdp_verify's rate is printed, and the script says so.
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

import numpy as np

from rdp_verify.foundations.decimals import decimal_text
from rdp_verify.foundations.inputs import parse_rational
from rdp_verify.tradeoff.binomial import clopper_pearson_upper
from rdp_verify.tradeoff.one_run import Guesses, epsilon_one_run_lower, one_run_level


def interval(k: int, n: int) -> tuple[Fraction, Fraction]:
    """The exact two-sided 95 % Clopper–Pearson interval of k successes in n trials, rounded outward: the upper
    end at one-sided level 0.025, the lower end by symmetry (1 minus the upper end of the n − k failures)."""
    half = Fraction(1, 40)
    return 1 - clopper_pearson_upper(n - k, n, half), clopper_pearson_upper(k, n, half)


def rate(name: str, k: int, n: int) -> str:
    lo, hi = interval(k, n)  # printed to 3 significant digits, rounded outward
    return (f"{name:<44} {k:>6} of {n:<6} {100 * k / n:6.2f} %   95 % CI "
            f"[{decimal_text(100 * lo, 3, 'down')} %, {decimal_text(100 * hi, 3, 'up')} %]")


def peer():
    try:
        from jax_privacy.auditing import CanaryScoreAuditor
    except ImportError:
        print("jax_privacy is NOT installed (pip install 'rdp_verify[fdp-peers]'): rdp_verify's rate only",
              file=sys.stderr)
        return None
    return CanaryScoreAuditor


def guesses(scores: np.ndarray, member: np.ndarray) -> Guesses:
    """Guess counts k = 1, …, m: the k highest scores guessed members (scores are continuous: no ties)."""
    order = np.argsort(-scores, kind="stable")
    m = len(scores)
    return Guesses(lambda j: f"{scores[order[j]]:.6g}", np.arange(1, m + 1), np.cumsum(member[order]), m)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10000, help="trials (default 10000)")
    parser.add_argument("--canaries", type=int, default=1000, help="canaries m per trial (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="numpy.random.default_rng seed (default 0)")
    parser.add_argument("--delta", default="1e-6", help="delta (default 1e-6)")
    parser.add_argument("--significance", default="0.05", help="1 - confidence (default 0.05)")
    args = parser.parse_args()
    if args.trials < 1 or args.canaries < 2:
        parser.error("--trials must be >= 1 and --canaries >= 2")
    delta, gamma = parse_rational(args.delta, "delta"), parse_rational(args.significance, "significance")
    m = args.canaries
    auditor = peer()
    rng = np.random.default_rng(args.seed)
    ours = jax = jax_honest = 0
    vertices: list[int] = []
    our_time = jax_time = 0.0
    for _ in range(args.trials):
        scores = rng.standard_normal(m)
        member = rng.random(m) < 0.5
        start = time.perf_counter()
        g = guesses(scores, member)
        level = one_run_level(g, 1 - gamma, "any-threshold")  # gamma / m
        ours += epsilon_one_run_lower(g, delta, level) is not None
        our_time += time.perf_counter() - start
        if auditor is not None and 0 < member.sum() < m:  # jax_privacy needs both classes non-empty
            start = time.perf_counter()
            a = auditor(scores[member], scores[~member])
            n = len(a._fn_counts)  # what its Bonferroni() divides the significance by
            vertices.append(n)
            jax += a.epsilon_one_run(float(gamma), float(delta)) > 0
            jax_time += time.perf_counter() - start
            jax_honest += a.epsilon_one_run(float(gamma) * n / m, float(delta)) > 0
    print(f"null: {args.trials} trials of {m} canaries, scores iid N(0, 1), labels fair coins (true epsilon 0); "
          f"delta = {args.delta}, significance {args.significance}; seed {args.seed}")
    print("wrong claims (the audit rejects (0, delta)-DP: epsilon > 0):")
    print(rate(f"rdp_verify, level {args.significance}/m", ours, args.trials))
    if auditor is None:
        print("jax_privacy: not installed, not measured")
        return 0
    print(rate("jax_privacy epsilon_one_run (Bonferroni())", jax, len(vertices)))
    print(rate("jax_privacy at level significance/m", jax_honest, len(vertices)))
    print(f"jax_privacy's divisor (ROC vertices kept): median {int(np.median(vertices))}, "
          f"range {min(vertices)}-{max(vertices)}, against m = {m}")
    print(f"seconds per trial (machine-dependent): rdp_verify {our_time / args.trials:.4f}, "
          f"jax_privacy {jax_time / len(vertices):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
