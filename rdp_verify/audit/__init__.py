"""Audits of reported (ε, δ) claims: reading claims (``claims``) and verdicts with reports (``report``).

Imports the accounting, the certificates, the methods and the foundations.
"""
