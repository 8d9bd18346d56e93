"""Example: rdp_verify's certified accountant in the bookkeeping of an Opacus training loop.

Opacus's ``PrivacyEngine`` attaches ``accountant.get_optimizer_hook_fn(sample_rate)`` to its
``DPOptimizer``: every optimizer step calls the hook, which calls ``accountant.step(noise_multiplier=,
sample_rate=)``; ``privacy_engine.get_epsilon(delta)`` calls ``accountant.get_epsilon(delta)`` and
checkpoints save ``accountant.state_dict()``. ``CertifiedAccountant`` follows that protocol, so it
plugs in where Opacus's ``RDPAccountant`` or ``PRVAccountant`` would (``privacy_engine.accountant =
CertifiedAccountant()``). The optimizer below is a stand-in with the three attributes the hook reads
(no torch needed):

    pip install 'rdp_verify[peers]' && pip install --no-deps opacus==1.6.0
    python -m pytest examples/test_opacus_training_loop.py

Every ε it returns is a proven upper bound (rounded up), and ``certificate()`` is the sealed proof.
"""

import pytest

from rdp_verify.accountants import CertifiedAccountant
from rdp_verify.curves.certificate import check_run_certificate
from rdp_verify.reference import dp_peers

SAMPLE_RATE, SIGMA, STEPS_PER_EPOCH, EPOCHS, DELTA = 0.01, 2.0, 100, 3, 1e-5


class ToyDPOptimizer:
    """What Opacus's DPOptimizer exposes to the accountant's hook."""

    def __init__(self, noise_multiplier: float):
        self.noise_multiplier = noise_multiplier
        self.accumulated_iterations = 1  # Opacus: >1 with gradient accumulation (virtual steps)
        self.step_hook = None

    def attach_step_hook(self, fn):
        self.step_hook = fn

    def step(self):
        # ... clip, noise and apply the gradients ...
        if self.step_hook is not None:
            self.step_hook(self)


def train(accountant, epochs, optimizer=None):
    optimizer = optimizer or ToyDPOptimizer(SIGMA)
    optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=SAMPLE_RATE))
    spent = []
    for _ in range(epochs):
        for _ in range(STEPS_PER_EPOCH):
            optimizer.step()
        spent.append(accountant.get_epsilon(delta=DELTA))  # what a training script logs per epoch
    return spent


def test_epsilon_grows_each_epoch_and_is_certified():
    accountant = CertifiedAccountant()
    spent = train(accountant, EPOCHS)
    assert accountant.history == [(SIGMA, SAMPLE_RATE, STEPS_PER_EPOCH * EPOCHS)]
    assert spent == sorted(spent) and spent[0] < spent[-1]
    cert = accountant.certificate()
    assert cert["verdict"] == "certified" and check_run_certificate(cert) == []
    assert spent[-1] >= float(cert["epsilon"]["upper"])  # the float is the proven upper end, rounded up


def test_resuming_from_a_checkpoint_gives_the_same_epsilon():
    first = CertifiedAccountant()
    train(first, 1)
    checkpoint = first.state_dict()
    resumed = CertifiedAccountant()
    resumed.load_state_dict(checkpoint)
    assert train(resumed, 2)[-1] == train(CertifiedAccountant(), EPOCHS)[-1]


def test_agrees_with_opacus_prv_within_its_stated_error():
    try:
        opacus_prv = dp_peers.load_dp("opacus_prv")
    except dp_peers.PeerUnavailable as exc:
        pytest.skip(str(exc))
    ours = train(CertifiedAccountant(), EPOCHS)[-1]
    theirs = opacus_prv([(SAMPLE_RATE, SIGMA, STEPS_PER_EPOCH * EPOCHS)], DELTA)
    assert theirs.lower <= ours <= theirs.epsilon + theirs.error


def test_gradient_accumulation_scales_the_sample_rate():
    accountant = CertifiedAccountant()
    optimizer = ToyDPOptimizer(SIGMA)
    optimizer.accumulated_iterations = 4  # 4 physical batches per logical step: sample rate x 4
    optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=SAMPLE_RATE))
    optimizer.step()
    assert accountant.history == [(SIGMA, 4 * SAMPLE_RATE, 1)]
