"""Shared foundations: exact inputs, bounded values, decimal text, atomic files, parallel map, figures.

Imports nothing else of rdp_verify; every other package builds on it.
"""
