"""The drop-in accountant over event trees: composing costs the size of the new event, not of the run so far."""

import pytest

from rdp_verify.accountants.dp_accounting_api import CertifiedPldAccountant
from rdp_verify.privacy_curve import table

dp_event = pytest.importorskip("dp_accounting.dp_event")


def test_each_compose_resolves_only_the_new_event(monkeypatch):
    """300 one-step composes (an Opacus-style loop) flatten 300 components in all, not 300²/2 (a resolve of the
    whole history per compose made 1000 composes take minutes); the answer resolves the whole run once."""
    seen = []
    original = table.components
    monkeypatch.setattr(table, "components", lambda event: seen.append(1) or original(event))
    acc = CertifiedPldAccountant()
    step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    for _ in range(300):
        acc.compose(step)
    acc.compose(dp_event.LaplaceDpEvent(10.0))
    assert len(seen) == 301
    assert acc._run().leaves and len(seen) == 302  # the whole run, once, when an answer needs it
    assert acc._run() is acc._run() and len(seen) == 302


@pytest.mark.parametrize("event", [dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)),
                                   dp_event.GaussianDpEvent(2.0)], ids=["poisson", "q = 1"])
def test_a_replace_special_certificate_of_gaussian_steps_alone_is_confirmed(event):
    # the accountant answers REPLACE_SPECIAL runs through the event format; its recompute refused a run without a
    # mechanism beyond the Gaussian family, so check FAILED a certificate the accountant had just written
    from dp_accounting import NeighboringRelation

    from rdp_verify.privacy_curve.certificate import check_event_certificate

    acc = CertifiedPldAccountant(neighboring_relation=NeighboringRelation.REPLACE_SPECIAL)
    acc.compose(event, 10)
    acc.get_epsilon(1e-5)
    cert = acc.certificate()
    assert cert["format"] == "rdp_verify event privacy curve" and check_event_certificate(cert) == []
