"""``rdp-verify audit --canaries`` (issue 39): the verdict agrees with every line the report prints, on the issue's
million-canary file (slow) and on a smaller seeded attack whose verdict flipped the same way; ``--plot`` works for
every ``--method``, and overlapping confidence boxes are counted in the legend and marked ×k, not drawn as one dot."""

import json
from fractions import Fraction

import numpy as np
import pytest

from rdp_verify.cli import main

MU_ONE = ["--q", "1", "--sigma", "2", "--steps", "4"]  # the Gaussian mechanism with mu = 1 exactly
QUARTER = ["--q", "1", "--sigma", "8", "--steps", "4", "--delta", "1e-7"]  # mu = 1/4


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_scores(path, shift, seed, n):
    """The issue's generator: numpy's default_rng(seed) draws n member scores from N(shift, 1), then n non-member
    scores from N(0, 1); rows ``score,member`` with the score as Python's repr of the double."""
    rng = np.random.default_rng(seed)
    members, others = rng.normal(shift, 1, n), rng.normal(0, 1, n)
    with open(path, "w") as f:
        f.write("score,member\n")
        f.write("".join(f"{float(x)!r},1\n" for x in members))
        f.write("".join(f"{float(x)!r},0\n" for x in others))
    return path


def test_a_flipped_attack_says_bug_beside_its_own_mu(capsys, tmp_path):
    """10,000 members N(2.6, 1) and 10,000 non-members N(0, 1), seed 0, as one run's canaries: before, "verdict:
    consistent" beside "mu >= 1.03546" against the 1-GDP run; now bug (exit 1), and the sealed report checks."""
    path = write_scores(tmp_path / "c.csv", 2.6, 0, 10_000)
    out_path = tmp_path / "r.json"
    code, out, _ = run(capsys, "audit", *MU_ONE, "--delta", "1e-14", "--canaries", str(path), "--method", "one-run-fdp",
                       "--out", str(out_path))
    assert code == 1 and "\nverdict: bug (the threshold of rank " in out
    assert "rejects the run's exact trade-off curve G_mu, mu = 1 (q = 1" in out
    assert "Gaussian DP: mu >= 1.03546 (the run is not mu-GDP for any smaller mu)" in out
    assert "this run's curve is Gaussian (q = 1), so it bounds the run's epsilon" in out
    checked, report, err = run(capsys, "check", str(out_path))
    assert checked == 0 and "confirmed" in report and err == ""


@pytest.mark.slow
def test_the_issue_file_says_bug(capsys, tmp_path):
    """The issue's file: one million canaries, numpy's default_rng(0), 500,000 members N(2.1, 1) then 500,000
    non-members N(0, 1); against q = 1, sigma = 2, 4 steps at delta = 1e-14 with --method one-run-fdp it printed
    ``verdict: consistent`` (exit 0) beside mu >= 1.00906 and G_mu's epsilon >= 7.94565 > the proven 7.86874."""
    path = write_scores(tmp_path / "c.csv", 2.1, 0, 500_000)
    out_path = tmp_path / "r.json"
    code, out, _ = run(capsys, "audit", *MU_ONE, "--delta", "1e-14", "--canaries", str(path), "--method", "one-run-fdp",
                       "--out", str(out_path))
    assert code == 1 and "\nverdict: bug (" in out
    assert "mu >= 1.00906" in out and "G_mu has epsilon >= 7.94565" in out
    assert "proven epsilon in [7.86873, 7.86874]" in out
    report = json.loads(out_path.read_text())
    assert report["verdict"] == "bug" and Fraction(report["gdp_mu_lower"]) > 1


# ------------------------------------------------------------------------------------------------------
# --plot


@pytest.fixture
def figures(monkeypatch):
    pytest.importorskip("matplotlib")
    from rdp_verify.tradeoff import plot

    kept = []
    save = plot.save_figure
    monkeypatch.setattr(plot, "save_figure", lambda fig, path: kept.append(fig) or save(fig, path))
    return kept


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def marks(ax):
    return [t.get_text() for t in ax.texts]


def test_overlapping_boxes_are_counted_not_lost(figures, tmp_path):
    """Ten boxes whose corners coincide to a pixel and one apart: the legend counts all eleven ("at least": the
    audit stops at ten) and says how many markers they make; the ten are marked ×10 on both panels; the box of the
    largest empirical epsilon is a separate marker with its own legend entry."""
    from rdp_verify.foundations.run import Phase
    from rdp_verify.tradeoff import tradeoff
    from rdp_verify.tradeoff.plot import draw

    trade = tradeoff([Phase(q=Fraction(1), sigma=Fraction(2), steps=4)], fprs=[Fraction(1, 10**4)])
    boxes = [{"rank": 10 + i, "fpr_upper": f"0.0{3000 + i}", "fnr_upper": "0.2"} for i in range(10)]
    boxes.append({"rank": 40, "fpr_upper": "0.4", "fnr_upper": "0.01"})
    strongest = {"rank": 7, "fpr_upper": "0.03", "fnr_upper": "0.2"}
    draw(trade, tmp_path / "p.png", boxes, strongest=strongest, more=True, boxes_label="box(es) below the curve")
    left, right = figures[0].axes
    for ax in (left, right):
        texts = legend_texts(ax)
        assert any(t.startswith("at least 11 box(es) below the curve") and "11 in 2 marker(s), ×k: k boxes" in t
                   for t in texts), texts
        assert any(t.startswith("largest empirical ε (rank 7)") for t in texts)
        assert sorted(marks(ax)) == ["×10"]


def test_plot_of_a_canary_audit_counts_its_boxes(capsys, figures, tmp_path):
    path = tmp_path / "p.png"
    code, _, err = run(capsys, "audit", *MU_ONE, "--canaries", "examples/canaries-mu3.csv", "--plot", str(path))
    assert code == 1 and path.read_bytes()[:4] == b"\x89PNG" and f"wrote {path}" in err
    left, _ = figures[0].axes
    texts = legend_texts(left)
    assert any(t.startswith("at least 10 box(es) below the certified curve") for t in texts), texts
    assert any(t.startswith("largest empirical ε (rank ") for t in texts)


@pytest.mark.parametrize("method, with_run", [("one-run", True), ("one-run-fdp", False)])
def test_plot_works_for_one_run_methods(capsys, figures, tmp_path, method, with_run):
    """Before: "--plot goes with --method clopper-pearson" (exit 2). Now the run's band (when given) with the curves
    the attack refutes: f_(eps,delta) at the printed epsilon and, for one-run-fdp, G_mu at the printed mu."""
    path = tmp_path / "p.svg"
    flags = QUARTER if with_run else ["--delta", "1e-7"]
    code, out, err = run(capsys, "audit", *flags, "--method", method, "--canaries", "examples/canaries-one-run-mu4.csv",
                         "--plot", str(path))
    assert code == (1 if with_run else 0) and path.read_text().startswith("<?xml") and f"wrote {path}" in err
    texts = legend_texts(figures[0].axes[0])
    assert any(t.startswith("f_ε,δ, ε = ") and "refuted (not (ε, δ)-DP)" in t for t in texts), texts
    assert any(t.startswith("G_μ, μ = ") and "refuted by the attack" in t for t in texts) == (method == "one-run-fdp")
    assert any(t.startswith("proven band") for t in texts) == with_run


def test_a_version_1_one_run_report_is_refused_in_one_line(capsys, tmp_path):
    # its verdict was held against the 231-vertex envelope, which is gone: check says so instead of FAILED lines
    code, out, _ = run(capsys, "audit", *QUARTER, "--method", "one-run-fdp", "--canaries",
                       "examples/canaries-one-run-mu025.csv", "--json")
    report = json.loads(out)
    assert report["format_version"] == 2
    report["format_version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report))
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "format version 1, whose verdict was held against a coarse 231-vertex envelope" in err
