"""Certified trade-off curves (f-DP) of DP-SGD runs, and empirical canary attacks held against them.

For library authors: ``tradeoff(phases)`` gives a run's proven envelopes and derived figures
(:mod:`rdp_verify.tradeoff.curve`); ``audit_canaries(trade, counts)`` the verdict of an attack
(:mod:`rdp_verify.tradeoff.canaries`); ``certify_tradeoff`` a sealed certificate.
"""

from .canaries import audit_canaries, parse_canaries, read_canaries
from .certificate import certify_tradeoff, check_tradeoff_certificate
from .curve import TradeOff, tradeoff

__all__ = ["tradeoff", "TradeOff", "audit_canaries", "parse_canaries", "read_canaries", "certify_tradeoff",
           "check_tradeoff_certificate"]
