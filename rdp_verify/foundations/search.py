"""Bisection on whole numbers for a monotone predicate: the one search every grid walk shares."""

from __future__ import annotations

from typing import Callable

__all__ = ["last_true"]


def last_true(a: int, b: int, holds: Callable[[int], bool]) -> int:
    """The largest i in [a, b) with holds(i), for ``holds`` true at a (not evaluated there) and monotone
    (true, then false) on [a, b]; ⌈log2(b − a)⌉ evaluations."""
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (mid, b) if holds(mid) else (a, mid)
    return a
