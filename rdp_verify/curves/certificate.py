"""Sealed certificates of a run's (ε, δ): the proven bracket, how it was proven, and an independent check.

:func:`certify_run` brackets ε(δ) (or δ(ε)) with :func:`rdp_verify.curves.accountant.bracket`,
cross-checks it against the independent estimate of :mod:`rdp_verify.curves.crosscheck` at one ε,
and seals the result (schema ``privacy-curve-v2``, content hash as for every certificate).

**Verdicts** (:func:`verdict_of`), decided by what was proven:

* ``inconsistent`` (the CLI exits 1): the estimate is *informative* — its error is at most a tenth of
  the δ it is held against (the given δ, or the proven lower end of δ(ε)) — and misses the proven
  bracket. rdp_verify never certifies an (ε, δ) whose two computations disagree. An uninformative
  estimate never decides: it is reported, and the verdict follows the proof alone.
* ``partial`` (exit 3): a proven end is vacuous — no finite upper end of ε; a lower end 0 of ε while
  the upper end is positive (ε > 0 is not proven, or ε = 0 is not proven either); a lower end 0 of
  δ(ε) (δ(ε) > 0 always holds for these mechanisms) or an upper end 1. ``verdict_reason`` says which.
* ``certified`` (exit 0): both ends proven and finite, not vacuous; ``tolerance_met`` says whether the
  relative width meets the tolerance, and ``shortfall`` by how much it misses.

:func:`check_run_certificate` re-verifies every field (:data:`POLICY`): the grid ranges are recomputed
from the settings (mpmath at fixed precision) and the bracket with them (exact integers and Arb: the
same on every machine), and every deterministic field must equal the recomputation; the derived fields
(widths, tolerance, the cross-check's booleans, the verdict and its reason: :data:`DERIVED` and the widths)
are re-derived exactly from the certificate's own fields. The independent estimate (double precision in its
saddle-point method, whose last bits may differ between machines) is recorded, not verified: no field is
compared within a tolerance. :data:`NOT_VERIFIED` lists the fields it records but does not check. Before any
work, :func:`check_limits` refuses recorded settings beyond the work the commands ever do (:data:`LIMITS`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from .. import __version__
from ..certificates.certificate import check_against, seal
from ..certificates.fields import FieldPolicy
from ..foundations.decimals import decimal_text
from ..foundations.inputs import DELTA_MIN, InputError, Refused, check_tolerance, fraction_text, parse_rational
from ..foundations.run import Phase, run_family
from ..pld.compose import bits_for
from ..pld.grid import precision
from .accountant import (
    DEFAULT_TOLERANCE,
    FIRST_RUNG,
    MAX_GRID,
    MAX_STEP_POINTS,
    Bracket,
    Curves,
    Settings,
    bracket,
    delta_bracket,
    epsilon_bracket,
    step_key,
)
from .crosscheck import Estimate, estimate_delta
from .discretize import TooManyPoints, grid_points, grid_range
from .gaussian import GaussianCurve, is_gaussian_run
from .per_epoch import Composed, PerEpochBounds, Test, is_per_epoch_run
from .random_allocation import ADD_ORDERS, ORDERS, applies

__all__ = ["FORMAT", "FORMAT_VERSION", "SCHEMA", "POLICY", "NOT_VERIFIED", "DERIVED", "LIMITS", "check_limits", "certify_run", "certificate_of",
           "check_run_certificate", "recompute", "compare", "self_consistency", "verdict_of", "DIGITS",
           "settings_from_json", "settings_json", "mechanism_of", "ASSUMPTIONS_BY_FAMILY", "PROOFS",
           "interval_text", "refinements_json"]

FORMAT = "rdp_verify privacy curve"
FORMAT_VERSION = 2
SCHEMA = "privacy-curve-v2"
DIGITS = 12  # significant digits of printed bounds, rounded outward
INFORMATIVE = Fraction(1, 10)  # an estimate decides only if its error is at most this fraction of δ
MECHANISM = "adaptive composition of the Sampled Gaussian Mechanism SG_{q,sigma} over the steps of a run"

# recorded, but not re-verified by check_run_certificate (JSON paths; * matches any key or index): the versions,
# the grids the refinement tried (a check composes the recorded grid only), and the independent estimate, whose
# saddle-point method sums float64 exponentials with numpy (libm and BLAS may differ in the last bits between
# machines); the fields judged from it (DERIVED) are re-derived from the recorded numbers
NOT_VERIFIED = ("software.rdp_verify", "work.refinements.**", "cross_check.estimate.value",
                "cross_check.estimate.error_bound", "cross_check.details.saddle_point",
                "cross_check.details.cut", "cross_check.details.mu", "cross_check.details.remove_order")
DERIVED = ("cross_check.consistent", "cross_check.informative", "verdict", "verdict_reason")

ASSUMPTIONS_BY_FAMILY: dict[str, dict[str, str]] = {}  # filled below ASSUMPTIONS (the Poisson add/remove default)

ASSUMPTIONS = {
    "sampling": "Poisson sampling with rate q in every step (each record joins each batch independently)",
    "neighbours": "add/remove-one: both directions, (mu, mu0) and (mu0, mu), are bracketed and the larger is reported",
    "sensitivity": "l2-sensitivity 1; sigma is the noise multiplier (noise std / clipping norm)",
    "composition": ("adaptive composition of the steps: the product of the dominating pairs dominates it "
                    "(Zhu, Dong, Wang 2022, Theorem 10)"),
}

ASSUMPTIONS_BY_FAMILY.update({
    "add-remove": ASSUMPTIONS,
    "replace-one": {
        "sampling": ("Poisson sampling with rate q, or a uniformly drawn batch of b of N records (q = b/N) in every "
                     "step, as each phase states"),
        "neighbours": ("replace-one: one record replaced by another, N public; the pairs are symmetric, both orders "
                       "are bracketed"),
        "sensitivity": ("every clipped gradient has l2 norm at most 1, so replacing a record moves the sum by at most "
                        "2 (twice the add/remove sensitivity; dp_accounting's noise_multiplier for REPLACE_ONE events "
                        "is relative to that 2); sigma is the noise std / clipping norm"),
        "composition": ASSUMPTIONS["composition"],
    },
    "per-epoch": {
        "sampling": ("shuffle: a fresh uniformly random permutation each epoch, cut into N/b batches; balls-in-bins: "
                     "each record in one uniformly random step of the epoch's N/b, independently"),
        "neighbours": ("add-remove is read as zero-out (the record replaced by one with gradient 0, N fixed); "
                       "replace-one as the record replaced in its own position"),
        "sensitivity": "l2-sensitivity 1 (zero-out) or 2 (replace-one); sigma is the noise std / clipping norm",
        "composition": ("the upper end holds for any sampler in which each record joins at most one batch per epoch; "
                        "the lower end assumes a fresh permutation or allocation each epoch"),
    },
})

RANDOM_ALLOCATION_PROOF = (
    "Random allocation (balls-in-bins, zero-out neighbours), below the no-amplification bound: the larger of two "
    "directions. Remove: the Renyi divergence of one epoch at the integer order settings.upper_random_allocation_order "
    "is at most log(t^-alpha alpha! [x^alpha] C(x)^t)/(alpha - 1), C(x) = sum_k e^(k(k-1)/(2 sigma^2)) x^k/k!, the sum "
    "over partitions of alpha of Feldman and Shenfeld 2025 (arXiv 2502.08202, Section 6), the adaptive case reduced "
    "to it step by step (rdp_verify.curves.random_allocation); epochs and phases compose additively (Mironov 2017, "
    "Proposition 1), converted by Balle et al. 2020, Theorem 21; enclosed in Arb, rounded up. Add: by the "
    "arithmetic-geometric mean inequality the loss is at most a Gaussian mechanism's with mu^2 = sum E_i/(t_i "
    "sigma_i^2) plus sum E_i (1 - 1/t_i)/(2 sigma_i^2) (Dong, Roth, Su 2022, Corollary 3.3; Balle & Wang 2018, "
    "Theorem 8, in Arb).")

# the proof when the add direction's Renyi DP decided (settings.upper_random_allocation_add_order recorded); the text
# above stays that of the shifted Gaussian, so certificates made before the Renyi add direction still check
RANDOM_ALLOCATION_RENYI_ADD_PROOF = RANDOM_ALLOCATION_PROOF.replace(
    "Add: by the arithmetic-geometric mean inequality",
    "Add: the smaller of the Renyi divergence of one epoch at the order settings.upper_random_allocation_add_order, "
    "(log integral_0^inf u^(k-1) psi(u/t)^t du - log Gamma(k))/k, k = alpha - 1, psi the Laplace transform of the "
    "lognormal LN(-1/(2 sigma^2), 1/sigma^2) (the non-adaptive pair is the worst case: convex order of the "
    "lognormals, step by step; psi by the trapezoid rule with Trefethen and Weideman 2014, Theorem 5.1's error "
    "bound, or Markov's bound; the integral by chords of the convex log psi, exact incomplete gammas and a "
    "Markov tail, rounded up; rdp_verify.curves.random_allocation), composed and converted as the remove "
    "direction, and of the shifted Gaussian: by the arithmetic-geometric mean inequality")

PROOFS = {
    "discrete pairs": {
        "upper": ("Connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022): per step, the pair whose "
                  "curve interpolates the exact hockey-stick curve (Gaussian CDFs in Arb) at the grid dominates the "
                  "step; tail mass beyond the grid goes to loss +infinity. Composed by exact integer convolution, "
                  "masses rounded up and mass cut off moved to +infinity, so every delta read off is an upper bound; "
                  "epsilon_upper is verified by evaluating delta there."),
        "lower": ("Lowered chords: per step, a convex piecewise-linear curve below the exact one (each cell verified "
                  "in Arb by a Taylor or tangent bound, kinks proven convex, the trivial curve (1 - x)_+ as floor) is "
                  "the curve of a pair the step dominates (Blackwell). Composed by exact integer convolution, masses "
                  "rounded down and mass cut off dropped, so every delta read off is a lower bound; below "
                  "epsilon_lower the true curve is proven above delta."),
        "directions": "delta(epsilon) = max over the add and remove directions; both are bracketed",
    },
    "discrete pairs (replace-one)": {
        "upper": ("Connect-the-dots, as for add/remove, applied per step to a symmetric pair that dominates it: for "
                  "Poisson sampling the mixture pair ((1-q)N(0,s^2) + qN(-1,s^2), (1-q)N(0,s^2) + qN(1,s^2)) (the worst "
                  "case by Lebeda, Regehr, Kamath, Steinke 2024, relied on: rdp_verify.curves.replace_one); for "
                  "fixed-size batches the symmetrised remove curve "
                  "of SG(b/N, sigma/2) (advanced joint convexity, Balle, Barthe, Gaboardi 2018, Theorem 2). Composed by "
                  "exact integer convolution, masses rounded up (Zhu, Dong, Wang 2022, Theorem 10)."),
        "lower": ("Lowered chords below the same mixture pair (Poisson: it is attained by a pair of neighbouring "
                  "datasets); for fixed-size batches below the remove and add pairs of SG(b/N, sigma/2), which an "
                  "explicit pair of neighbouring datasets attains in every step. Masses rounded down."),
        "directions": "the upper pair is symmetric; the lower end is the larger of the two orders",
    },
    "per-epoch bounds": {
        "upper": ("No amplification: each record joins at most one batch per epoch, so the run is dominated by the "
                  "Gaussian mechanism with mu^2 = sum ceil(T_i / (N_i/b_i)) Delta^2 / sigma_i^2 (Dong, Roth, Su 2022, "
                  "Corollary 3.3; joint convexity over the permutations), whose curve is the Balle & Wang closed form "
                  "(2018, Theorem 8), evaluated in Arb."),
        "lower": ("An explicit pair of neighbouring datasets (after Chua et al. 2024, ICML, Section 4): constant "
                  "gradients, every other record's gradient c, the differing record's 1 against 0 (zero-out) or -1 "
                  "(replace-one). The larger of two post-processings of the run's output: the composed laws of the "
                  "full epochs' largest noisy step sums, binned (Chua et al. 2024, NeurIPS, Section 3; bin masses in "
                  "Arb, P-masses and losses rounded down, composed by exact integer convolution with products "
                  "rounded down; settings.lower_composed), and the count of full epochs whose largest sum exceeds a "
                  "threshold, Binomial with tails by Arb's regularized incomplete beta (settings.lower_tests)."),
        "directions": "both orders of the pair are tried; the upper end is symmetric",
    },
    "closed form": {
        "upper": ("q = 1 in every phase: the run is the Gaussian mechanism with mu^2 = sum T_i/sigma_i^2 (Dong, Roth, "
                  "Su 2022, Corollary 3.3), whose curve is delta(epsilon) = Phi(-epsilon/mu + mu/2) - "
                  "e^epsilon Phi(-epsilon/mu - mu/2) (Balle & Wang 2018, Theorem 8), evaluated in Arb ball "
                  "arithmetic; epsilon_upper is a point where the ball lies at or below delta."),
        "lower": "The same ball arithmetic: at epsilon_lower the ball lies above delta, and the curve is decreasing.",
        "directions": "Both directions have the same curve (the Gaussian pair is symmetric)",
    },
}


def interval_text(lower: Fraction, upper: Fraction | None) -> dict[str, str | None]:
    """A proven interval as printed in certificates: DIGITS significant digits, lower end down, upper end up."""
    return {"lower": decimal_text(lower, DIGITS, "down"),
            "upper": None if upper is None else decimal_text(upper, DIGITS, "up")}


def _phases_json(phases: Sequence[Phase]) -> list[dict[str, Any]]:
    return [p.to_json() for p in phases]


def _width(lower: Fraction, upper: Fraction | None) -> Fraction | None:
    if upper is None:
        return None
    return Fraction(0) if upper == 0 else (upper - lower) / upper


def _bracket_json(lower: Fraction, upper: Fraction | None, tolerance: Fraction) -> dict[str, Any]:
    """The printed (outward-rounded) ends and the fields derived from them."""
    printed = interval_text(lower, upper)
    return {**printed, **_derived(printed, tolerance)}


def _derived(printed: dict[str, Any], tolerance: Fraction) -> dict[str, Any]:
    """relative_width, tolerance_met and shortfall of printed ends (so a check re-derives them exactly)."""
    upper = None if printed["upper"] is None else Fraction(printed["upper"])
    width = _width(Fraction(printed["lower"]), upper)
    met = width is not None and width <= tolerance
    return {"relative_width": None if width is None else decimal_text(width, 3, "up"),
            "tolerance_met": met,
            "shortfall": None if met or width is None else decimal_text(width / tolerance, 3, "up")}


def _check_point(result: Bracket, epsilon: Fraction | None) -> Fraction:
    """Where to cross-check: the given ε, or a short decimal in the middle of the ε bracket."""
    if epsilon is not None:
        return epsilon
    if result.upper is None:
        return result.lower
    mid = (result.lower + result.upper) / 2
    for digits in range(3, 40):
        x = Fraction(decimal_text(mid, digits))
        if result.lower <= x <= result.upper:
            return x
    return mid


def _cross_check_json(est: Estimate, point: Fraction, proven: tuple[Fraction, Fraction | None],
                      reference: Fraction) -> dict[str, Any]:
    cross = {
        "method": est.method,
        "bound_kind": "estimate",
        "epsilon": fraction_text(point),
        "estimate": {"value": decimal_text(est.value, DIGITS), "error_bound": decimal_text(est.error, 3, "up")},
        "proven_delta": interval_text(*proven),
        "informative_below": decimal_text(reference * INFORMATIVE, 3, "down"),
        "details": {k: (str(v) if not isinstance(v, (int, float, str)) else v) for k, v in est.details.items()},
    }
    return {**cross, **_judged(cross)}


def _judged(cross: dict[str, Any]) -> dict[str, bool]:
    """consistent and informative, from the printed estimate, proven interval and threshold."""
    value, error = Fraction(cross["estimate"]["value"]), Fraction(cross["estimate"]["error_bound"])
    lower = Fraction(cross["proven_delta"]["lower"])
    upper = None if cross["proven_delta"]["upper"] is None else Fraction(cross["proven_delta"]["upper"])
    consistent = lower <= value + error and (upper is None or value - error <= upper)
    return {"consistent": consistent, "informative": error <= Fraction(cross["informative_below"])}


def verdict_of(quantity: str, bracket_json: dict[str, Any], cross: dict[str, Any]) -> tuple[str, str]:
    """(verdict, reason) from the printed bracket and the cross-check (module docstring)."""
    if cross["informative"] and not cross["consistent"]:
        return "inconsistent", (f"the independent estimate of delta({cross['epsilon']}) is informative and misses "
                                "the proven bracket: nothing is certified")
    lower = Fraction(bracket_json["lower"])
    upper = None if bracket_json["upper"] is None else Fraction(bracket_json["upper"])
    if quantity == "epsilon":
        if upper is None:
            return "partial", "upper end: no finite bound (the mass at loss +infinity alone exceeds delta)"
        if lower == 0 and upper > 0:
            return "partial", "lower end 0: neither epsilon > 0 nor epsilon = 0 is proven at this grid"
    else:
        if lower == 0:
            return "partial", "lower end 0: delta(epsilon) > 0 holds but no positive lower bound was proven"
        if upper is not None and upper >= 1:
            return "partial", "upper end 1: no bound below the trivial one"
    # one meaning: both ends proven and finite; whether the tolerance was met is its own field
    # (tolerance_met, shortfall) and its own line of the summary, never part of the verdict
    return "certified", "both ends proven and finite"


def settings_json(curves: Curves | GaussianCurve | PerEpochBounds) -> dict[str, Any]:
    if isinstance(curves, PerEpochBounds):  # a bracket's proof: the tests and orders that gave it (Bracket.proof)
        composed = curves.given_composed
        return {"mu_squared_upper": fraction_text(curves.mu_squared),
                "lower_tests": [t.to_json() for t in curves.given or ()],
                **({} if composed is None else {"lower_composed": composed.to_json()}),
                **({} if curves.upper_order is None else {"upper_random_allocation_order": curves.upper_order}),
                **({} if curves.upper_order is None or curves.upper_add_order is None
                   else {"upper_random_allocation_add_order": fraction_text(curves.upper_add_order)})}
    if isinstance(curves, GaussianCurve):
        return {"mu_squared": fraction_text(curves.mu_squared)}
    s = curves.settings
    return {**s.to_json(), "arb_precision_bits": precision(s.bits, s.grid_step),
            "grids": [{"q": fraction_text(st.q), "sigma": fraction_text(st.sigma),
                       "anchor": fraction_text(st.grid.anchor), "k_lo": st.grid.k_lo, "k_hi": st.grid.k_hi,
                       **({} if st.pair == "sgm" else {"pair": st.pair})}
                      for st in curves.steps]}


def _proofs(result: Bracket) -> dict[str, str]:
    if result.method == "discrete pairs" and run_family(result.curves.phases) == "replace-one":
        return PROOFS["discrete pairs (replace-one)"]
    if isinstance(result.proof, PerEpochBounds) and result.proof.upper_order is not None:
        renyi = result.proof.upper_add_order is not None
        return {**PROOFS[result.method], "upper": RANDOM_ALLOCATION_RENYI_ADD_PROOF if renyi else RANDOM_ALLOCATION_PROOF}
    return PROOFS[result.method]


def mechanism_of(phases: Sequence[Phase]) -> str:
    if all(p.default for p in phases):
        return MECHANISM
    samplers = ", ".join(dict.fromkeys(p.sampler for p in phases))
    return (f"adaptive composition of noisy clipped-gradient sums (Gaussian noise, multiplier sigma) over the steps "
            f"of a run, batches drawn by {samplers}, {phases[0].neighbours} neighbours")


def _work_json(result: Bracket) -> dict[str, Any]:
    if isinstance(result.curves, (GaussianCurve, PerEpochBounds)):
        return {"grid_points_per_step": [], "composed_length": 0, "refinements": []}
    return {"grid_points_per_step": [s.grid.size for s in result.curves.steps],
            "composed_length": result.curves.longest(),
            "refinements": refinements_json(result.refinements)}


def refinements_json(refinements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The grids tried by :func:`~rdp_verify.curves.accountant.bracket` (recorded, not verified)."""
    return [{"grid_step": fraction_text(r["grid_step"]),
             "relative_width": None if r["relative_width"] == float("inf")
             else decimal_text(Fraction(r["relative_width"]), 3, "up")}
            for r in refinements]


def certify_run(phases: Sequence[Phase], *, delta: Fraction | None = None, epsilon: Fraction | None = None,
                tolerance: Fraction = DEFAULT_TOLERANCE, settings: Settings | None = None) -> dict[str, Any]:
    """The sealed certificate of ε(δ) (given ``delta``) or δ(ε) (given ``epsilon``) for the run."""
    result = bracket(phases, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings)
    return certificate_of(result, delta=delta, epsilon=epsilon, tolerance=tolerance)


def _proven_at(result: Bracket, point: Fraction, given_epsilon: bool) -> tuple[Fraction, Fraction | None]:
    at = result if given_epsilon else delta_bracket(result.proof, point)
    return at.lower, at.upper


def certificate_of(result: Bracket, *, delta: Fraction | None = None, epsilon: Fraction | None = None,
                   tolerance: Fraction = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """Cross-check a computed bracket and seal it (see :func:`certify_run`)."""
    tolerance = Fraction(tolerance)
    point = _check_point(result, epsilon)
    proven = _proven_at(result, point, given_epsilon=epsilon is not None)
    reference = delta if delta is not None else proven[0]
    cross = _cross_check_json(estimate_delta(result.curves.phases, point, proven[1]), point, proven, reference)
    quantity = "epsilon" if delta is not None else "delta"
    printed = _bracket_json(result.lower, result.upper, tolerance)
    verdict, reason = verdict_of(quantity, printed, cross)
    cert = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "mechanism": mechanism_of(result.curves.phases),
        "inputs": {"phases": _phases_json(result.curves.phases),
                   **({"delta": fraction_text(delta)} if delta is not None else {"epsilon": fraction_text(epsilon)}),
                   "tolerance": fraction_text(tolerance)},
        "assumptions": ASSUMPTIONS_BY_FAMILY[run_family(result.curves.phases)],
        "method": result.method,
        "settings": settings_json(result.proof),
        quantity: printed,
        "directions": {d: interval_text(lo, up) for d, (lo, up) in sorted(result.by_direction.items())},
        "proofs": _proofs(result),
        "cross_check": cross,
        "work": _work_json(result),
        "verdict": verdict,
        "verdict_reason": reason,
        "software": {"rdp_verify": __version__},
    }
    return seal(cert, SCHEMA)


# -- re-verification ---------------------------------------------------------------------------------

POLICY = FieldPolicy(
    verified=("format", "format_version", "mechanism", "inputs.**", "assumptions.*", "method", "settings.**",
              "epsilon.*", "delta.*", "directions.*.*", "proofs.*", "cross_check.method", "cross_check.bound_kind",
              "cross_check.epsilon", "cross_check.proven_delta.*", "cross_check.informative_below",
              "cross_check.details.direction", "cross_check.details.failure", "work.grid_points_per_step.**",
              "work.composed_length", "content_hash"),
    derived=DERIVED,
    not_verified=NOT_VERIFIED,
)


def recompute(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate of the bracket recomputed from ``cert``'s inputs with its recorded settings (the grid
    ranges are recomputed from them): raises InputError on bad inputs."""
    inp = cert["inputs"]
    phases = [Phase.from_json(p) for p in inp["phases"]]
    delta = parse_rational(inp["delta"], "delta") if "delta" in inp else None
    epsilon = parse_rational(inp["epsilon"], "epsilon") if "epsilon" in inp else None
    tolerance = parse_rational(inp["tolerance"], "tolerance")
    recorded = settings_from_json(phases, cert["settings"], check_tolerance(tolerance))
    if isinstance(recorded, PerEpochBounds):  # re-prove the recorded tests (their search is a heuristic)
        result = epsilon_bracket(recorded, delta) if delta is not None else delta_bracket(recorded, epsilon)
        return certificate_of(result, delta=delta, epsilon=epsilon, tolerance=tolerance)
    settings = recorded if isinstance(recorded, Settings) else None  # the closed form needs no settings
    return certify_run(phases, delta=delta, epsilon=epsilon, tolerance=tolerance, settings=settings)


# -- the largest work a certificate can demand ---------------------------------------------------------

SLACK = 2  # the refinement loop stops on a *predicted* size: what it then composes may exceed the limit a little
LIMITS = {
    # the commands choose 32·ceil((40 + log2(1/δ))/32) bits for a δ scale in [DELTA_MIN, 1] (compose.bits_for)
    "fixed_point_bits": (bits_for(Fraction(1)), bits_for(DELTA_MIN)),
    # one step's grid: refinement stops before a grid predicted beyond MAX_GRID points (the first is ~2·10^4)
    "grid_points": SLACK * MAX_GRID,
    # points at which one step's curve is evaluated in Arb (every point for the replace-one pairs)
    "points_evaluated": SLACK * MAX_STEP_POINTS,
    # a composed PLD: refinement stops before one predicted beyond MAX_GRID (checked while composing: its length
    # cannot be known before)
    "composed_length": SLACK * MAX_GRID,
}


def _truncation_range(tolerance: Fraction) -> tuple[Fraction, Fraction]:
    """The truncation allowances the commands can choose: rung·scale/50 rounded down to one digit, with the δ scale
    in [DELTA_MIN, 1] and the rung at most FIRST_RUNG and, once refined, above width/40 > tolerance/40 (a grid is
    refined only while its width exceeds the tolerance; accountant._next_rung), so at least min(FIRST_RUNG,
    tolerance/40)·DELTA_MIN/500; the floor below leaves another factor two."""
    return min(FIRST_RUNG, tolerance / 40) * DELTA_MIN / 1000, FIRST_RUNG / 50


def _refuse(what: str) -> Refused:
    return Refused(f"settings: {what}: beyond the largest work the commands do (docs/certificates.md)")


def check_limits(phases: Sequence[Phase], s: dict[str, Any], tolerance: Fraction, steps: int | None = None) -> Settings:
    """A discrete-pairs ``settings`` record as :class:`Settings` capped at :data:`LIMITS`, or :class:`Refused`
    (before any discretisation or composition) when it asks for more work than the commands ever do: fixed-point
    bits, truncation allowance and tail outside what the commands choose for the run's steps and
    ``tolerance``, or a grid step whose grid (:func:`grid_range`, mpmath, milliseconds) or selected points
    (:func:`grid_points`, stopped at the limit) exceed :data:`LIMITS`. ``steps``: the composed factors of the whole
    run when it has more than the phases (other mechanisms' uses), which the tail is shared over."""
    bits, h = s["fixed_point_bits"], parse_rational(s["grid_step"], "grid_step")
    truncation = parse_rational(s["truncation_allowance"], "truncation_allowance")
    tail = parse_rational(s["single_step_tail"], "single_step_tail")
    low, high = LIMITS["fixed_point_bits"]
    if isinstance(bits, bool) or not isinstance(bits, int) or not low <= bits <= high:
        raise _refuse(f"fixed_point_bits={bits!r} outside [{low}, {high}]")
    low, high = _truncation_range(tolerance)
    if not low <= truncation <= high:
        raise _refuse(f"truncation_allowance={s['truncation_allowance']} outside [{decimal_text(low, 2)}, "
                      f"{decimal_text(high, 2)}] (tolerance {fraction_text(tolerance)})")
    steps = sum(p.steps for p in phases) if steps is None else steps
    if not truncation / (100 * steps) <= tail <= truncation / (10 * steps):  # default_settings: allowance/(10·T), one digit
        raise _refuse(f"single_step_tail={s['single_step_tail']} is not about truncation_allowance/(10·steps)")
    if h <= 0:
        raise InputError(f"settings: grid_step={s['grid_step']} must be positive")
    settings = Settings(h, bits, truncation, tail, max_length=LIMITS["composed_length"])
    for pair, q, sigma in dict.fromkeys(step_key(p) for p in phases):
        grid = grid_range(q, sigma, h, tail, pair)
        points = grid.size if pair != "sgm" else None
        if grid.size > LIMITS["grid_points"] or (points or 0) > LIMITS["points_evaluated"]:
            raise _refuse(f"grid_step={s['grid_step']} makes a grid of {grid.size} points for q={fraction_text(q)}, "
                          f"sigma={fraction_text(sigma)}; at most {LIMITS['grid_points' if points is None else 'points_evaluated']}")
        if points is None:
            try:
                grid_points(q, sigma, grid, 10 * tail, LIMITS["points_evaluated"])  # the points discretize evaluates
            except TooManyPoints:
                raise _refuse(f"grid_step={s['grid_step']} and single_step_tail={s['single_step_tail']} select more "
                              f"than {LIMITS['points_evaluated']} points to evaluate for q={fraction_text(q)}, "
                              f"sigma={fraction_text(sigma)}") from None
    return settings


def settings_from_json(phases: Sequence[Phase], s: dict[str, Any],
                       tolerance: Fraction = DEFAULT_TOLERANCE) -> Settings | GaussianCurve | PerEpochBounds:
    """What a certificate's ``settings`` record, refused (InputError) when they do not fit the run, and
    (:class:`Refused`, by :func:`check_limits`) when they ask for more work than the commands ever do: the grid
    :class:`Settings` of discrete pairs, the closed form, or the per-epoch bounds with the recorded tests."""
    phases = tuple(phases)
    if "lower_tests" in s:
        tests = tuple(Test(t["phase"], t["order"], parse_rational(t["threshold"], "threshold"), t["count"],
                           parse_rational(t["others_gradient"], "others_gradient")) for t in s["lower_tests"])
        if not is_per_epoch_run(phases) or is_gaussian_run(phases) or any(t.phase >= len(phases) for t in tests):
            raise InputError("settings: lower tests for a run that is not bracketed by per-epoch bounds")
        c = s.get("lower_composed")
        composed = None if c is None else Composed(
            c["order"], parse_rational(c["others_gradient"], "others_gradient"),
            parse_rational(c["lowest_edge"], "lowest_edge"), parse_rational(c["bin_width"], "bin_width"), c["edges"],
            parse_rational(c["grid_step"], "grid_step"), c["fixed_point_bits"]).checked(phases)
        order = s.get("upper_random_allocation_order")
        if order is not None and not (order in ORDERS and applies(phases)):
            raise InputError(f"settings: upper_random_allocation_order={order!r} is not one of the orders tried for a "
                             "run with a balls-in-bins add-remove phase (rdp_verify.curves.random_allocation.ORDERS)")
        add = s.get("upper_random_allocation_add_order")
        add_order = None if add is None else parse_rational(add, "settings: upper_random_allocation_add_order")
        if add_order is not None and not (order is not None and add_order in ADD_ORDERS):
            raise InputError(f"settings: upper_random_allocation_add_order={add!r} is not one of the add-direction "
                             "orders tried (rdp_verify.curves.random_allocation.ADD_ORDERS) beside a recorded "
                             "upper_random_allocation_order")
        return PerEpochBounds(phases, given=tests, given_composed=composed, upper_order=order, upper_add_order=add_order)
    if "mu_squared" in s:
        if not is_gaussian_run(phases):
            raise InputError("settings: a closed form for a run that is not the Gaussian mechanism (q = 1)")
        return GaussianCurve(phases)
    if is_gaussian_run(phases) or is_per_epoch_run(phases):
        raise InputError("settings: a grid for a run that is bracketed in closed form or by per-epoch bounds")
    return check_limits(phases, s, tolerance)


def compare(claimed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """``field: reason`` for each field of ``claimed`` not confirmed by the recomputation ``fresh``: the
    verified fields must be equal; then every derived field (:data:`DERIVED`, the widths, the grid sizes) must
    follow exactly from the certificate's own fields. The estimate is recorded, not verified (:data:`NOT_VERIFIED`):
    no field is compared within a tolerance."""
    return POLICY.compare(claimed, fresh) or self_consistency(claimed)


def self_consistency(cert: dict[str, Any]) -> list[str]:
    """The derived fields, re-derived from the certificate's own fields."""
    problems = []
    quantity = "epsilon" if "delta" in cert["inputs"] else "delta"
    claim, tolerance = cert[quantity], Fraction(cert["inputs"]["tolerance"])
    for key, value in _derived(claim, tolerance).items():
        if claim[key] != value:
            problems.append(f"{quantity}.{key}: not derived from the certificate's own ends")
    cross = cert["cross_check"]
    try:
        Fraction(cross["estimate"]["value"]), Fraction(cross["estimate"]["error_bound"])
    except (TypeError, ValueError):  # only a certificate that bypassed the schema gets here
        return [*problems, "cross_check.estimate: not a value and an error bound"]
    for key, value in _judged(cross).items():
        if cross[key] != value:
            problems.append(f"cross_check.{key}: not derived from the certificate's estimate and proven delta")
    verdict, reason = verdict_of(quantity, claim, cross)
    if cert["verdict"] != verdict:
        problems.append(f"verdict: {verdict} by the certificate's bracket and cross-check")
    if cert["verdict_reason"] != reason:
        problems.append("verdict_reason: not the reason for the certificate's verdict")
    if cert["method"] == "discrete pairs":
        sizes = [g["k_hi"] - g["k_lo"] + 1 for g in cert["settings"]["grids"]]
        if cert["work"]["grid_points_per_step"] != sizes:
            problems.append("work.grid_points_per_step: not the sizes of settings.grids")
    return problems


def check_run_certificate(cert: Any) -> list[str]:
    """Every problem found, as ``field: reason`` lines; empty means every field but :data:`NOT_VERIFIED`
    was recomputed or re-derived and confirmed: :func:`integrity_errors`, then :func:`compare` against
    :func:`recompute`."""
    if isinstance(cert, dict) and cert.get("format_version") == 1:
        return ["format_version: version 1 privacy-curve certificates record no grid range and cannot be "
                "re-verified; regenerate the certificate with this version of rdp_verify"]
    return check_against(cert, SCHEMA, recompute, compare)
