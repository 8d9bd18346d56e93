"""Proven (ε, δ) privacy curves of DP-SGD runs: the exact single-step curve (``single_step``), the
dominating and dominated discrete pairs (``discretize``), exact integer composition (``compose``), the
brackets of ε(δ) and δ(ε) (``accountant``), an independent estimate (``crosscheck``), certificates
(``certificate``) and drawing (``plot``).

Imports the accounting (for the RDP contrast), the certificates, the methods and the foundations.
"""
