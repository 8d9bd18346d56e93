"""A product grid q × σ × α of exact one-step SGM parameters: the comparison's, the golden file's, a dataset's.

Only exact parsing (:mod:`rdp_verify.foundations.inputs`): the command line's parser describes
the golden grid at start-up, before any engine is loaded.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from ..foundations.inputs import SGM, parse_alphas, parse_q, parse_sigma

__all__ = ["Grid"]


@dataclass(frozen=True)
class Grid:
    """A product grid q × σ × α of exact values (iterated in that order)."""

    q: tuple[Fraction, ...]
    sigma: tuple[Fraction, ...]
    alpha: tuple[Fraction, ...]

    @classmethod
    def parse(cls, q: Sequence[str], sigma: Sequence[str], alpha: Sequence[str]) -> "Grid":
        return cls(tuple(map(parse_q, q)), tuple(map(parse_sigma, sigma)), tuple(parse_alphas(",".join(alpha))))

    def points(self) -> list[SGM]:
        return [SGM(q, s, a) for q, s, a in itertools.product(self.q, self.sigma, self.alpha)]

    def describe(self) -> str:
        n = len(self.q) * len(self.sigma) * len(self.alpha)
        return f"q: {len(self.q)}, sigma: {len(self.sigma)}, alpha: {len(self.alpha)} values = {n} point{'s' * (n > 1)}"
