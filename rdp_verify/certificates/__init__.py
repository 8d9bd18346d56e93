"""Sealed JSON certificates of one SGM step: building (``certify``), hashing and checking
(``certificate``), Theorem 11 and Corollary 7 (``theorem11``), the field lists of a check (``fields``), the
registry of every sealed format ``rdp-verify check`` verifies (``formats``), and every JSON Schema (``schemas/``).

Imports the methods and the foundations (``formats`` reaches the formats defined above by dotted name, when a file
is checked).
"""
