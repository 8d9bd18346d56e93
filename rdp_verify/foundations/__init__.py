"""Shared foundations: exact inputs, bounded values, decimal text, atomic files, parallel map (local or Dask), figures.

Imports nothing else of rdp_verify; every other package builds on it.
"""
