"""Acceptance grids split into a default share and the rest, marked ``slow`` (``pytest -m slow`` runs all)."""

from __future__ import annotations

import itertools
from typing import Sequence

import pytest


def covering_params(qs: Sequence[str], sigmas: Sequence[str], alphas: Sequence[str], per_pair: int,
                    pair_share: int = 1) -> list:
    """Every (q, σ, α) of the grid as a pytest param; the default run keeps ``per_pair`` orders for each
    (q, σ) pair, rotating (order index i + j + k·len(alphas)/per_pair for the i-th q and j-th σ) so each q
    and each σ meets every order when the axes are long enough, on one pair in ``pair_share`` (those with
    i + j divisible by it: each q and each σ still appears); the others are marked ``slow``."""
    stride = len(alphas) // per_pair
    kept = {(q, s, alphas[(i + j + k * stride) % len(alphas)])
            for (i, q), (j, s) in itertools.product(enumerate(qs), enumerate(sigmas)) if (i + j) % pair_share == 0
            for k in range(per_pair)}
    return [pytest.param(*p, marks=() if p in kept else pytest.mark.slow)
            for p in itertools.product(qs, sigmas, alphas)]
