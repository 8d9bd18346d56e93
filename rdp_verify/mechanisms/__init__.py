"""Proven discretised privacy-loss distributions of single mechanisms, one module per mechanism.

Each mechanism is a frozen dataclass of exact rationals (a :class:`~rdp_verify.mechanisms.base.Mechanism`) whose
``plds(h, bits, tail)`` gives fixed-point PLDs on h·ℤ for both directions ("remove", "add") and both bounds
("upper", "lower"), ready for :func:`rdp_verify.pld.compose.compose`; the proof is in :mod:`rdp_verify.pld.rounding`.
"""
