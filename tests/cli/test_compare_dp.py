"""``rdp-verify compare --dp``: peers' (ε, δ) against proven brackets, table, JSON, plot and exit codes."""

import json

import pytest

from rdp_verify.cli import main
from rdp_verify.reference import dp_peers


@pytest.fixture
def pld():
    try:
        dp_peers.load_dp("dp_accounting_pld")
    except dp_peers.PeerUnavailable as exc:
        pytest.skip(str(exc))


def test_small_grid_finds_the_inf_at_1e_20(pld, tmp_path, capsys):
    out, plot = tmp_path / "points.json", tmp_path / "dp.png"
    code = main(["compare", "--dp", "--against", "dp_accounting_pld", "--q", "1", "--sigma", "2", "--steps", "10",
                 "--delta", "1e-5,1e-20", "--json", str(out), "--plot", str(plot)])
    text = capsys.readouterr().out
    assert code == 1  # a failed point
    assert "grid: q 1 x sigma 2 x steps 10 x delta 0.00001, 1e-20" in text
    assert "dp_accounting_pld: failed at 1 of 2 points" in text and "inf (1x)" in text
    points = json.loads(out.read_text())
    # q = 1 is bracketed in closed form (relative width 1e-11): dp_accounting's pessimistic PLD, 4e-9 above it
    # with no stated error, is conservative there
    assert [p["classification"] for p in points] == ["conservative", "failed"]
    assert plot.stat().st_size > 0


@pytest.mark.parametrize("args, message", [
    (["--alpha", "2"], "--alpha is for RDP peers"),
    (["--q", "0.1"], "give all of --q, --sigma, --steps and --delta"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--delta", "0"], "delta=0"),
    (["--q", "0.1", "--sigma", "1", "--steps", "ten", "--delta", "1e-5"], "steps='ten'"),
    (["--q", "0.1", "--sigma", "1", "--steps", "2000000", "--delta", "1e-5"], "beyond the supported maximum"),
    (["--against", "opacus_pld"], "unknown peer"),
])
def test_bad_input_exit_2_nothing_written(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    against = [] if "--against" in args else ["--against", "all"]
    assert main(["compare", "--dp", *against, *args, "--json", "out.json"]) == 2
    err = capsys.readouterr().err
    assert message in err.splitlines()[-1] and err.splitlines()[-1].startswith("rdp-verify: error:")
    assert not (tmp_path / "out.json").exists()


def test_steps_without_dp_is_refused(capsys):
    assert main(["compare", "--against", "all", "--steps", "10"]) == 2
    assert "need --dp" in capsys.readouterr().err
