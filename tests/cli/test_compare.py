"""``rdp-verify compare --against``: one name per peer in both comparisons, library names as aliases.

The peers are made unavailable, so each requested name shows in a "skipping" line and nothing is computed.
"""

import pytest

from rdp_verify.cli import compare as compare_cli
from rdp_verify.cli import main
from rdp_verify.reference.dp_peers import DP_PEERS
from rdp_verify.reference.peers import PEERS, PeerUnavailable


@pytest.fixture
def nothing_installed(monkeypatch):
    def unavailable(name):
        raise PeerUnavailable("not installed here")

    monkeypatch.setattr(compare_cli, "load", unavailable)
    monkeypatch.setattr(compare_cli, "load_dp", unavailable)


def requested(capsys, *argv):
    """The peers ``compare`` would evaluate, in order."""
    assert main(["compare", *argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "rdp-verify: error: no requested peer is installed (see the messages above)"
    return [line.removeprefix("rdp-verify: skipping ").split(": ")[0] for line in err[:-1]]


def test_an_accountant_has_the_same_name_in_both_comparisons():
    assert set(PEERS) <= set(DP_PEERS)  # every one-step RDP peer is also an (epsilon, delta) peer, same name
    assert "opacus" not in PEERS and "dp_accounting" not in PEERS
    for name, p in {**PEERS, **DP_PEERS}.items():
        assert name == p.library or name.startswith(p.library + "_")


@pytest.mark.parametrize("dp, against, names", [
    (False, "opacus", ["opacus_rdp"]),
    (True, "opacus", ["opacus_rdp", "opacus_prv"]),
    (False, "dp_accounting,opacus_rdp", ["dp_accounting_rdp", "opacus_rdp"]),
    (True, "dp_accounting", ["dp_accounting_pld", "dp_accounting_rdp", "dp_accounting_pld_replace_one",
                             "dp_accounting_rdp_fixed"]),
    (True, "opacus_prv,opacus", ["opacus_prv", "opacus_rdp"]),  # each once
    (False, "all", list(PEERS)),
    (True, "all", list(DP_PEERS)),
])
def test_library_names_mean_each_of_its_accountants(capsys, nothing_installed, dp, against, names):
    assert requested(capsys, *(["--dp"] if dp else []), "--against", against) == names


@pytest.mark.parametrize("dp, against", [(False, "opacus_prv"), (False, "tf_privacy"), (True, "opacus_pld")])
def test_an_unknown_peer_lists_the_valid_names(capsys, dp, against):
    assert main(["compare", *(["--dp"] if dp else []), "--against", against]) == 2
    err = capsys.readouterr().err
    valid = ", ".join(DP_PEERS if dp else PEERS)
    assert err == (f"rdp-verify: error: --against {against!r}: unknown peer (choose from {valid}, or all; "
                   "dp_accounting, opacus for every accountant of that library)\n")
