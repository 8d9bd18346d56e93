"""The four independent methods for A_α and B_α of the Sampled Gaussian Mechanism, and their cross-check.

``quadrature`` (mpmath), ``series`` (Section 3.3), ``symbolic`` (SymPy), ``rigorous`` (Arb ball
enclosures, with its fast path ``arb_series``) share no code beyond the foundations;
``crosscheck`` compares them. Imports only :mod:`rdp_verify.foundations`.
"""
