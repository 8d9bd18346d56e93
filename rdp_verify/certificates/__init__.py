"""Sealed JSON certificates of one SGM step: building (``certify``), hashing and checking
(``certificate``), Theorem 11 and Corollary 7 (``theorem11``), and every JSON Schema (``schemas/``).

Imports the methods and the foundations.
"""
