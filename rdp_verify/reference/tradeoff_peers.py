"""Trade-off curves (f-DP) and auditors' ε estimates of other libraries, against proven envelopes and brackets.

Two kinds of peer value are judged here, each with the classes of :mod:`rdp_verify.reference.dp_compare`
(``exact``, ``conservative``, ``unsafe``, ``failed``), oriented so that ``unsafe`` always means *the peer's claim is
proven false*:

**Trade-off values** β(α) of a run (kind ``curve``): a peer's type-II error at type-I error α, set against our proven
envelopes [f_low(α), f_up(α)] ∋ f(α) (:mod:`rdp_verify.tradeoff`; Dong, Roth, Su 2022, Definition 2.1). A β
reported as the run's trade-off value is a privacy claim: "no membership test with false-positive rate α has a
false-negative rate below β". Some test reaches f(α) ≤ f_up(α), so

* β > f_up(α): the claim is false, the run is *less* private than the peer says → ``unsafe``;
* β < f_low(α): a true bound, but pessimistic → ``conservative``;
* f_low(α) ≤ β ≤ f_up(α) → ``exact``; NaN, inf or a raise → ``failed``.

This is :func:`~rdp_verify.reference.dp_compare.classify` of the true-positive rate 1 − β against
[1 − f_up(α), 1 − f_low(α)], the same orientation as an ε (a TPR, like an ε, below the proven lower end claims more
privacy than the run has), compared as exact rationals.

**Auditors' ε** (kind ``auditor``): an empirical *lower* bound on ε at δ from canary scores (members' and
non-members' attack scores), set against the run's proven bracket [lo, hi] ∋ ε(δ)
(:func:`rdp_verify.curves.accountant.bracket`). An auditor claims "with confidence 1 − significance, the mechanism
that produced these scores is not (x, δ)-DP". If the scores come from the stated run, the claim is false whenever
x > hi, so

* x > hi → ``unsafe`` (the estimate claims more leakage than the run has: on canaries of an honest run it is wrong;
  on canaries of a real training run it says the implementation is not the stated mechanism, which the canaries'
  provenance must decide);
* x < lo → ``conservative`` (a true lower bound, loose: all an audit of finitely many canaries can give);
* lo ≤ x ≤ hi → ``exact``; NaN, inf or a raise → ``failed``.

That is :func:`~rdp_verify.reference.dp_compare.classify` of −x against [−hi, −lo]. A statistical lower bound may
exceed the truth with probability up to its significance, so a single ``unsafe`` auditor value on an honest run is a
defect only when it happens more often than that (docs/library-authors.md counts it over seeds).

The peers (:data:`TRADEOFF_PEERS`; optional, imported on first use, never by the core; :class:`PeerUnavailable`
names the pip command):

``riskcal`` (riskcal 1.5.1, kind curve)
    ``riskcal.calibration.dpsgd.get_beta_for_dpsgd(noise_multiplier=σ, sample_rate=q, num_steps=T, alpha=[α...])``,
    riskcal's DP-SGD entry point: dp_accounting's ``from_gaussian_mechanism(σ, sampling_prob=q,
    use_connect_dots=True, value_discretization_interval=1e-4).self_compose(T)``, read by
    ``riskcal.analysis.get_beta_from_pld`` (Kulynych et al. 2024, Algorithm 1, on the privacy-loss PMFs, symmetrised
    by Dong, Roth, Su Definition F.1 when the PLD is asymmetric).
``dp_accounting_pld`` (dp-accounting 0.6, kind curve)
    dp_accounting 0.6 has no trade-off or true-positive-rate function (none in its source). This peer is the
    trade-off the SAME PLD as riskcal's implies through its own privacy curve: ``get_delta_for_epsilon`` on a grid
    ε_k = k·h, 0 ≤ ε_k ≤ 2E (E the first power of two at which δ has stopped falling: past the largest finite
    loss; h = max(10⁻³, 2E/5000)), refined by 201 points over [ε_{k−1}, ε_{k+1}] around each α's best ε_k, and
    β(α) = max over these ε of max{0, 1 − δ(ε) − e^ε α, e^{−ε}(1 − δ(ε) − α)} (Dong, Roth, Su 2022,
    Proposition 2.12, the supremum taken over the grid only: it can only lower β; past the largest loss δ is
    constant and both terms fall, so larger ε cannot raise it). An estimate with no stated error, pessimistic
    when dp_accounting's δ(ε) is.
``jax_privacy_clopper_pearson``, ``jax_privacy_gdp``, ``jax_privacy_one_run``, ``jax_privacy_one_run_fdp`` (jax-privacy 2.0.0, kind auditor)
    ``jax_privacy.auditing.CanaryScoreAuditor(in_scores, out_scores)`` and, with its defaults (``one_sided=True``,
    ``threshold_strategy=Bonferroni()``), ``.epsilon_clopper_pearson(significance, delta)`` (Nasr et al. 2021, arXiv 2101.04535, as cited there),
    ``.epsilon_from_gdp(significance, delta)`` (a μ from Clopper–Pearson boxes converted to ε as if the mechanism
    were Gaussian; arXiv 2302.07956, 2406.04827), ``.epsilon_one_run(significance, delta)`` (Steinke, Nasr,
    Jagielski 2023) and
    ``.epsilon_one_run_fdp(significance, delta)`` (Mahloujifar, Melis, Chaudhuri 2024). Members' scores are the
    held-in canaries, non-members' the held-out ones; scores are the nearest doubles of the file's decimals.

Peers see IEEE doubles (q, σ, α, δ rounded to the nearest double); our envelopes and brackets are for the exact
values. The envelopes come from the caller (the command line builds them with :func:`rdp_verify.tradeoff.tradeoff`;
this module sits beside :mod:`rdp_verify.tradeoff` and does not import it).
"""

from __future__ import annotations

import importlib
import math
import textwrap
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..foundations.decimals import decimal_text
from ..foundations.files import parse_csv, read_text
from ..foundations.inputs import InputError, fraction_text, parse_rational
from ..foundations.run import Phase
from .dp_peers import _quiet
from .peers import INSTALL, PeerUnavailable

if TYPE_CHECKING:  # dp_compare loads the engines: imported where it is used, so the command line starts light
    from .dp_compare import Target

__all__ = ["TRADEOFF_PEERS", "TradeoffPeer", "CurveTarget", "Canaries", "TradeoffPoint", "PeerUnavailable",
           "load_curve", "load_auditor", "classify_beta", "classify_lower_bound", "read_scores", "parse_scores",
           "compare_curves", "compare_auditors", "table", "at_an_end", "NOISE_BETA", "NOISE_EPSILON",
           "TABLE_CLASSES", "FDP_INSTALL"]

# the pip command of each library (dp_accounting's is the peers extra's)
FDP_INSTALL: dict[str, str] = {
    "riskcal": "pip install 'rdp_verify[fdp-peers]'  (or: pip install riskcal==1.5.1)",
    "jax_privacy": "pip install 'rdp_verify[fdp-peers]'  (or: pip install jax-privacy==2.0.0)",
    "dp_accounting": INSTALL["dp_accounting"],
}


@dataclass(frozen=True)
class TradeoffPeer:
    name: str
    library: str  # a key of FDP_INSTALL
    kind: str  # "curve": beta(alpha) of a run; "auditor": an epsilon lower bound from canary scores
    calls: str

    @property
    def install(self) -> str:
        return FDP_INSTALL[self.library]


_AUDITOR = "jax_privacy.auditing.CanaryScoreAuditor(in_scores, out_scores)"
TRADEOFF_PEERS: dict[str, TradeoffPeer] = {
    p.name: p
    for p in (
        TradeoffPeer("riskcal", "riskcal", "curve",
                     "riskcal.calibration.dpsgd.get_beta_for_dpsgd(noise_multiplier=sigma, sample_rate=q, "
                     "num_steps=steps, alpha=alphas)"),
        TradeoffPeer("dp_accounting_pld", "dp_accounting", "curve",
                     "the conjugate of dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(sigma, "
                     "sampling_prob=q).self_compose(steps).get_delta_for_epsilon on a grid of epsilon"),
        TradeoffPeer("jax_privacy_clopper_pearson", "jax_privacy", "auditor",
                     f"{_AUDITOR}.epsilon_clopper_pearson(significance, delta)"),
        TradeoffPeer("jax_privacy_gdp", "jax_privacy", "auditor", f"{_AUDITOR}.epsilon_from_gdp(significance, delta)"),
        TradeoffPeer("jax_privacy_one_run", "jax_privacy", "auditor",
                     f"{_AUDITOR}.epsilon_one_run(significance, delta)"),
        TradeoffPeer("jax_privacy_one_run_fdp", "jax_privacy", "auditor",
                     f"{_AUDITOR}.epsilon_one_run_fdp(significance, delta)"),
    )
}

CurveFunction = Callable[[float, float, int, Sequence[float]], list[float]]
AuditorFunction = Callable[[Sequence[float], Sequence[float], float, float], float]


def _import(library: str, module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == module.split(".")[0]:
            raise PeerUnavailable(f"{library} is not installed: {FDP_INSTALL[library]}") from None
        raise PeerUnavailable(f"{library} cannot be imported ({exc}): {FDP_INSTALL[library]}") from None


# ---------------------------------------------------------------- the peers


def _riskcal() -> CurveFunction:
    dpsgd = _import("riskcal", "riskcal.calibration.dpsgd")
    np = importlib.import_module("numpy")

    def beta(q: float, sigma: float, steps: int, alphas: Sequence[float]) -> list[float]:
        got = dpsgd.get_beta_for_dpsgd(noise_multiplier=sigma, sample_rate=q, num_steps=steps,
                                       alpha=np.asarray(alphas, dtype=float))
        return [float(b) for b in np.atleast_1d(got)]

    return beta


_CONJUGATE_POINTS = 5000  # the coarse grid of epsilon
_CONJUGATE_STEP = 1e-3  # its smallest step
_CONJUGATE_REFINE = 201  # points of the fine grid around each alpha's best coarse point


def _dp_accounting_conjugate() -> CurveFunction:
    pld_module = _import("dp_accounting", "dp_accounting.pld.privacy_loss_distribution")
    np = importlib.import_module("numpy")

    def beta(q: float, sigma: float, steps: int, alphas: Sequence[float]) -> list[float]:
        pld = pld_module.from_gaussian_mechanism(sigma, sampling_prob=q, use_connect_dots=True,
                                                 value_discretization_interval=1e-4)
        if steps > 1:
            pld = pld.self_compose(steps)

        def delta(eps: Any) -> Any:  # one call per array (each call costs about a second), in ascending order
            eps = np.asarray(eps, dtype=float)
            order = np.argsort(eps, kind="stable")
            out = np.empty_like(eps)
            out[order] = np.asarray(pld.get_delta_for_epsilon(eps[order]), dtype=float)
            return out

        top = 1.0  # doubled until delta(top) = delta(2 top): past the largest loss (scalar calls are cheap)
        while pld.get_delta_for_epsilon(top) > pld.get_delta_for_epsilon(2 * top) and top < 2.0**12:
            top *= 2
        step = max(_CONJUGATE_STEP, 2 * top / _CONJUGATE_POINTS)
        eps = np.arange(0.0, 2 * top + step, step)
        d = delta(eps)
        a = np.asarray(alphas, dtype=float)[:, None]
        coarse = np.maximum(1 - d - np.exp(eps) * a, np.exp(-eps) * (1 - d - a))
        best = np.argmax(coarse, axis=1)
        fine = np.stack([np.linspace(eps[max(k - 1, 0)], eps[min(k + 1, len(eps) - 1)], _CONJUGATE_REFINE)
                         for k in best])
        df = delta(fine.ravel()).reshape(fine.shape)
        refined = np.maximum(1 - df - np.exp(fine) * a, np.exp(-fine) * (1 - df - a))
        return [float(max(0.0, c[k], np.max(r))) for c, k, r in zip(coarse, best, refined)]

    return beta


def _jax_privacy(method: str) -> AuditorFunction:
    auditing = _import("jax_privacy", "jax_privacy.auditing")
    np = importlib.import_module("numpy")

    def epsilon(members: Sequence[float], non_members: Sequence[float], significance: float, delta: float) -> float:
        auditor = auditing.CanaryScoreAuditor(np.asarray(members, dtype=float), np.asarray(non_members, dtype=float))
        return float(getattr(auditor, method)(significance, delta))

    return epsilon


_CURVES: dict[str, Callable[[], CurveFunction]] = {
    "riskcal": _riskcal,
    "dp_accounting_pld": _dp_accounting_conjugate,
}
_AUDITORS: dict[str, Callable[[], AuditorFunction]] = {
    "jax_privacy_clopper_pearson": lambda: _jax_privacy("epsilon_clopper_pearson"),
    "jax_privacy_gdp": lambda: _jax_privacy("epsilon_from_gdp"),
    "jax_privacy_one_run": lambda: _jax_privacy("epsilon_one_run"),
    "jax_privacy_one_run_fdp": lambda: _jax_privacy("epsilon_one_run_fdp"),
}


def _unknown(name: str, kind: str) -> InputError:
    names = [n for n, p in TRADEOFF_PEERS.items() if p.kind == kind]
    return InputError(f"unknown trade-off {kind} peer {name!r}: choose from {', '.join(names)}")


@lru_cache(maxsize=None)
def load_curve(name: str) -> CurveFunction:
    """The peer's ``beta(q, sigma, steps, alphas) -> [beta(alpha) ...]`` for one Poisson add/remove run (module
    docstring); :class:`PeerUnavailable` when its library is missing, InputError for an unknown name. The library's
    own exceptions propagate from the returned function; its warnings and absl lines are silenced."""
    if name not in _CURVES:
        raise _unknown(name, "curve")
    with _quiet():
        fn = _CURVES[name]()

    def beta(q: float, sigma: float, steps: int, alphas: Sequence[float]) -> list[float]:
        with _quiet():
            return fn(float(q), float(sigma), int(steps), [float(a) for a in alphas])

    beta.__name__ = beta.__qualname__ = name
    return beta


@lru_cache(maxsize=None)
def load_auditor(name: str) -> AuditorFunction:
    """The peer's ``epsilon(members, non_members, significance, delta) -> float``: its empirical ε lower bound from
    the canaries' scores (module docstring); :class:`PeerUnavailable`, InputError as :func:`load_curve`."""
    if name not in _AUDITORS:
        raise _unknown(name, "auditor")
    with _quiet():
        fn = _AUDITORS[name]()

    def epsilon(members: Sequence[float], non_members: Sequence[float], significance: float, delta: float) -> float:
        with _quiet():
            return fn(members, non_members, float(significance), float(delta))

    epsilon.__name__ = epsilon.__qualname__ = name
    return epsilon


# ---------------------------------------------------------------- classification


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def classify_beta(beta: float | None, f_lower: Fraction, f_upper: Fraction) -> str:
    """One of :data:`~rdp_verify.reference.dp_compare.CLASSES` for a peer's β(α) against [f_low(α), f_up(α)]:
    :func:`~rdp_verify.reference.dp_compare.classify` of the exact TPR 1 − β against [1 − f_up, 1 − f_low]
    (β above f_up: ``unsafe``; below f_low: ``conservative``)."""
    from .dp_compare import classify

    if not _finite(beta):
        return "failed"
    return classify(1 - Fraction(beta), 1 - Fraction(f_upper), 1 - Fraction(f_lower))


def classify_lower_bound(epsilon: float | None, lower: Fraction, upper: Fraction) -> str:
    """One of :data:`~rdp_verify.reference.dp_compare.CLASSES` for an empirical ε LOWER bound against the proven
    bracket [lower, upper] ∋ ε(δ): :func:`~rdp_verify.reference.dp_compare.classify` of −ε against
    [−upper, −lower] (above the upper end: ``unsafe``; below the lower end: ``conservative``)."""
    from .dp_compare import classify

    if not _finite(epsilon):
        return "failed"
    return classify(-Fraction(epsilon), -Fraction(upper), -Fraction(lower))


# ---------------------------------------------------------------- targets, canaries, points


def _run_text(phase: Phase) -> str:
    return f"q={fraction_text(phase.q)} sigma={fraction_text(phase.sigma)} steps={phase.steps}"


@dataclass(frozen=True)
class CurveTarget:
    """A Poisson add/remove run at one type-I error α, with proven envelopes f_lower ≤ f(α) ≤ f_upper."""

    phase: Phase
    alpha: Fraction
    f_lower: Fraction
    f_upper: Fraction


@dataclass(frozen=True)
class Canaries:
    """An attack's scores: members' (held-in canaries) and non-members' (held-out), as doubles."""

    label: str
    members: tuple[float, ...]
    non_members: tuple[float, ...]


def parse_scores(text: str, label: str) -> Canaries:
    """Scores from CSV text with the columns ``score,member`` (one row per canary, member 1 or 0; the format of
    ``rdp-verify audit --canaries``), read by the shared CSV reader; refused with one line otherwise. Each
    score is read as an exact decimal, then rounded to the nearest double for the peers."""
    rows = parse_csv(text, label)
    if not rows:
        raise InputError(f"{label} has no rows (a header and at least one row are needed)")
    rows = [{k.lower(): v for k, v in r.items()} for r in rows]
    if not {"score", "member"} <= set(rows[0]):
        raise InputError(f"{label}: the auditors need the columns score,member (one row per canary); "
                         "counts per threshold are not enough")
    members, non_members = [], []
    for i, r in enumerate(rows, start=2):
        if r["member"] not in ("0", "1"):
            raise InputError(f"row {i}: member {r['member']!r} is not a label: 1 (member) or 0 (non-member)")
        exact = parse_rational(r["score"], f"row {i}: score")
        try:
            score = float(exact)
        except OverflowError:
            score = math.inf
        if not math.isfinite(score):
            raise InputError(f"row {i}: score {r['score']!r} is beyond the range of a double")
        (members if r["member"] == "1" else non_members).append(score)
    if not members or not non_members:
        raise InputError("the canary scores need both members and non-members")
    return Canaries(label, tuple(members), tuple(non_members))


def read_scores(path: str | Path) -> Canaries:
    """:func:`parse_scores` of a file, labelled by its path."""
    return parse_scores(read_text(path, "canary file"), str(path))


@dataclass(frozen=True)
class TradeoffPoint:
    """One peer's value at one target: β(α) of a run (kind ``curve``) or an ε lower bound from canaries against a
    run's ε(δ) bracket (kind ``auditor``); ``lower``/``upper`` are the proven ends in the value's own units."""

    peer: str
    kind: str
    phase: Phase
    at: Fraction | tuple[str, Fraction]  # a curve's alpha; an auditor's (canary file, delta)
    value: float | None  # None when the peer raised
    error: str | None
    lower: Fraction
    upper: Fraction
    classification: str

    @property
    def outside(self) -> Fraction | None:
        """The peer's value minus the nearer end when it lies outside [lower, upper] (0 inside; None if not finite)."""
        if not _finite(self.value):
            return None
        x = Fraction(self.value)
        return x - self.upper if x > self.upper else x - self.lower if x < self.lower else Fraction(0)

    def at_text(self) -> str:
        """``1e-8`` (a curve's α) or ``FILE at delta 0.00001`` (an auditor's canaries and δ)."""
        if isinstance(self.at, tuple):
            return f"{self.at[0]} at delta {decimal_text(self.at[1], 3)}"
        return decimal_text(self.at, 3)

    def where(self) -> str:
        return f"{_run_text(self.phase)} " + (f"alpha={self.at_text()}" if self.kind == "curve" else self.at_text())

    def to_json(self) -> dict[str, Any]:
        at = ({"alpha": fraction_text(self.at)} if self.kind == "curve" else
              {"canaries": self.at[0], "delta": fraction_text(self.at[1])})
        return {"peer": self.peer, "kind": self.kind, **self.phase.to_json(), **at,
                "peer_value": None if self.value is None else repr(self.value), "peer_error": self.error,
                "lower": decimal_text(self.lower, 12, "down"), "upper": decimal_text(self.upper, 12, "up"),
                "quantity": "beta(alpha)" if self.kind == "curve" else "epsilon(delta)",
                "classification": self.classification}


def compare_curves(names: Sequence[str], targets: Sequence[CurveTarget]) -> list[TradeoffPoint]:
    """Every curve peer in ``names`` at every target: one call per peer and run with all its α."""
    runs: dict[Phase, list[CurveTarget]] = {}
    for t in targets:
        runs.setdefault(t.phase, []).append(t)
    out = []
    for name in names:
        fn = load_curve(name)
        for phase, group in runs.items():
            group = sorted(group, key=lambda t: t.alpha)
            try:
                values: list[float | None] = list(fn(float(phase.q), float(phase.sigma), phase.steps,
                                                     [float(t.alpha) for t in group]))
                error = None
                if len(values) != len(group):
                    raise ValueError(f"{len(values)} values for {len(group)} alphas")
            except Exception as exc:  # any failure of the peer is a finding, not a crash
                values, error = [None] * len(group), f"{type(exc).__name__}: {exc}"
            for t, v in zip(group, values):
                out.append(TradeoffPoint(name, "curve", phase, t.alpha, v, error,
                                         t.f_lower, t.f_upper, classify_beta(v, t.f_lower, t.f_upper)))
    return out


def compare_auditors(names: Sequence[str], canaries: Sequence[Canaries], targets: Sequence[Target],
                     confidence: Fraction) -> list[TradeoffPoint]:
    """Every auditor in ``names`` on every canary file, at each target's δ (significance 1 − confidence), its ε
    lower bound classified against that target's proven ε(δ) bracket (:func:`classify_lower_bound`)."""
    confidence = Fraction(confidence)
    if not 0 < confidence < 1:
        raise InputError(f"confidence {confidence} must lie strictly between 0 and 1")
    significance = float(1 - confidence)
    out = []
    for name in names:
        fn = load_auditor(name)
        for c in canaries:
            seen: dict[Fraction, tuple[float | None, str | None]] = {}
            for t in targets:
                if t.delta not in seen:
                    try:
                        seen[t.delta] = fn(c.members, c.non_members, significance, float(t.delta)), None
                    except Exception as exc:  # a failure of the peer is a finding, not a crash
                        seen[t.delta] = None, f"{type(exc).__name__}: {exc}"
                value, error = seen[t.delta]
                out.append(TradeoffPoint(name, "auditor", t.phase, (c.label, t.delta), value, error,
                                         t.lower, t.upper, classify_lower_bound(value, t.lower, t.upper)))
    return out


# ---------------------------------------------------------------- the table (no digit of a peer's value)

NOISE_BETA = Fraction(1, 10**11)  # absolute: a beta this close to an end is "at an end" (peers' float64 sums)
NOISE_EPSILON = Fraction(1, 10**6)  # absolute: jax_privacy's root finding stops at xtol = 1e-6
TABLE_CLASSES = ("exact", "at an end", "conservative", "unsafe", "failed")


def at_an_end(point: TradeoffPoint) -> bool:
    """The peer's finite value lies within the noise (:data:`NOISE_BETA`, :data:`NOISE_EPSILON`, absolute) of an
    end of the proven interval, but not on it: which side it falls on is its float rounding or root finding. (A
    value exactly at an end, such as an auditor's 0 when nothing is falsified, keeps its class.)"""
    if not _finite(point.value):
        return False
    noise = NOISE_BETA if point.kind == "curve" else NOISE_EPSILON
    x = Fraction(point.value)
    return any(0 < abs(x - end) <= noise for end in (point.lower, point.upper))


def _table_class(point: TradeoffPoint) -> str:
    return "at an end" if at_an_end(point) else point.classification


def _coarse(x: Fraction) -> str:
    """Two significant digits: far coarser than a peer's float noise."""
    return decimal_text(abs(x), 2)


def _outside_text(p: TradeoffPoint) -> str:
    """Where a value lies outside the proven interval, by how much (two digits), beside our proven digits."""
    above = p.outside > 0
    if p.kind == "curve":
        text = (f"{p.where()}: f in [{decimal_text(p.lower, 12, 'down')}, {decimal_text(p.upper, 12, 'up')}], beta "
                f"{'above f_upper' if above else 'below f_lower'} by {_coarse(p.outside)}")
        if above and p.upper < 1:
            text += (f" (the best attack's TPR is at least 1 - f_upper = {decimal_text(1 - p.upper, 3, 'down')}; "
                     f"the peer's 1 - beta is {_coarse(100 * p.outside / (1 - p.upper))} % lower)")
        return text
    return (f"{p.where()}: proven epsilon in [{decimal_text(p.lower, 12, 'down')}, {decimal_text(p.upper, 12, 'up')}], "
            f"its epsilon lower bound {'above the upper end' if above else 'below the lower end'} by "
            f"{_coarse(p.outside)}")


def table(points: Sequence[TradeoffPoint]) -> str:
    """Counts per peer and class, where each class other than ``exact`` occurs, and each peer's farthest value
    outside the proven interval to two significant digits, beside our proven digits: no digit of a peer's float
    noise is printed (a value within the noise of an end is counted ``at an end``)."""
    peers = list(dict.fromkeys(p.peer for p in points))
    if not peers:
        return "no points\n"
    counts = Counter((p.peer, _table_class(p)) for p in points)
    width = max(len(n) for n in peers + ["peer"])
    lines = [f"{'peer':<{width}}" + "".join(f"{c:>13}" for c in TABLE_CLASSES)]
    lines += [f"{n:<{width}}" + "".join(f"{counts[n, c]:>13}" for c in TABLE_CLASSES) for n in peers]
    for name in peers:
        mine = [p for p in points if p.peer == name]
        for cls in TABLE_CLASSES[1:]:
            runs: dict[str, list[str]] = {}
            for p in mine:
                if _table_class(p) == cls:
                    runs.setdefault(_run_text(p.phase), []).append(p.at_text())
            if runs:
                what = "alpha " if mine[0].kind == "curve" else ""
                text = f"{name} {cls}: " + "; ".join(f"{run} ({what}{', '.join(ats)})" for run, ats in runs.items())
                lines += textwrap.wrap(text, 110, subsequent_indent="  ", break_on_hyphens=False,
                                       break_long_words=False)
        for cls in ("unsafe", "conservative"):
            found = [p for p in mine if _table_class(p) == cls and p.outside]
            if not found or (cls == "conservative" and mine[0].kind == "auditor"):  # loose: what audits give
                continue
            worst = [max(found, key=lambda p: abs(p.outside))]
            if cls == "unsafe" and worst[0].kind == "curve":  # and the largest share of the best attack's TPR
                share = max(found, key=lambda p: p.outside / (1 - p.upper) if p.upper < 1 else 0)
                worst += [share] if share is not worst[0] else []
            for p in worst:
                lines += textwrap.wrap(f"farthest {cls}: {_outside_text(p)}", 110, initial_indent="  ",
                                       subsequent_indent="    ", break_on_hyphens=False, break_long_words=False)
        failed = [p for p in mine if p.classification == "failed" and p.error]
        for reason, n in Counter(p.error.split(". ")[0][:100] for p in failed).most_common():
            lines.append(f"  failed: {reason} ({n}x)")
    return "\n".join(lines) + "\n"

