"""The `rdp-verify cdp` command: JSON verdicts, exit codes, bad input, files."""

import json

import pytest

from rdp_verify.cli import main


def run(capsys, *argv):
    code = main(["cdp", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_false_zcdp_claim_refuted(capsys):
    code, out, err = run(capsys, "zcdp", "--q", "0.01", "--sigma", "1", "--rho", "0.001", "--json")
    cert = json.loads(out)
    assert code == 1 and cert["verdict"] == "refuted" and cert["witness"]["alpha"] == "13"


def test_true_zcdp_claim_holds(capsys):
    code, out, err = run(capsys, "zcdp", "--sigma", "2", "--rho", "0.125", "--json")
    cert = json.loads(out)
    assert code == 0 and cert["verdict"] == "holds" and "witness" not in cert
    assert cert["mechanism"]["name"] == "Gaussian" and cert["claim"]["parameters"]["rho"] == "0.125"


def test_summary_and_tcdp(capsys):
    code, out, err = run(capsys, "tcdp", "--q", "0.01", "--sigma", "1", "--rho", "0.001", "--omega", "5")
    assert code == 0 and "verdict: holds" in out
    code, out, err = run(capsys, "tcdp", "--q", "0.01", "--sigma", "1", "--rho", "0.001", "--omega", "5",
                         "--convention", "bdrs18", "--json")
    assert code == 0 and json.loads(out)["claim"]["parameters"]["order_range_end"] == "5"


def test_concentrated_and_out_file(capsys, tmp_path):
    path = tmp_path / "c.json"
    code, out, err = run(capsys, "concentrated", "--sigma", "2", "--mu", "0.125", "--tau", "0.5", "--out", str(path))
    assert code == 0 and out == "" and json.loads(path.read_text())["verdict"] == "holds"
    code, out, err = run(capsys, "concentrated", "--sigma", "2", "--mu", "0.5", "--tau", "1", "--group", "2", "--json")
    assert code == 0 and json.loads(out)["exact"]["tau_true_squared"] == "1"


def test_other_subcommands(capsys):
    assert run(capsys, "best-rho", "--q", "0.01", "--sigma", "1")[0] == 0
    assert run(capsys, "largest-omega", "--q", "0.01", "--sigma", "1", "--rho", "0.001")[0] == 0
    assert run(capsys, "compose", "--sigma", "1,2,3")[0] == 0
    assert run(capsys, "dp", "--epsilon", "1")[0] == 0
    assert run(capsys, "dp", "--epsilon", "1", "--tau", "0.9")[0] == 1


@pytest.mark.parametrize("argv,needle", [
    (["zcdp", "--q", "2", "--sigma", "1", "--rho", "1"], "q=2"),
    (["zcdp", "--sigma", "1", "--rho", "-1"], "rho=-1"),
    (["tcdp", "--sigma", "1", "--rho", "0.1", "--omega", "nan"], "omega='nan'"),
    (["concentrated", "--q", "0.5", "--sigma", "1", "--mu", "1", "--tau", "2", "--group", "2"], "Gaussian mechanism only"),
    (["concentrated", "--sigma", "1", "--mu", "1", "--tau", "1", "--delta", "1"], "delta=1"),
    (["dp", "--epsilon", "1", "--stay", "1"], "stay=1"),
    (["compose", "--sigma", "1,,2"], "empty entry"),
    (["tcdp", "--sigma", "1", "--rho", "0.1"], "--omega"),
])
def test_bad_input_exit_2_one_line(capsys, tmp_path, argv, needle):
    code, out, err = run(capsys, *argv, "--out", str(tmp_path / "x.json"))
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())  # no partial file
