"""Proven (ε, δ) privacy curves of DP-SGD runs: the exact single-step curve (``single_step``), the
dominating and dominated discrete pairs of an SGM step (``discretize``, on :mod:`rdp_verify.pld`'s pairs and exact
composition), the brackets of ε(δ) and δ(ε) (``accountant``), an independent estimate (``crosscheck``), certificates
(``certificate``) and drawing (``plot``).

Imports the generic PLD arithmetic (pld), the accounting (for the RDP contrast), the certificates, the methods and the
foundations.
"""
