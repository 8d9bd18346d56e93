"""Order-preserving parallel map with a progress bar: the one way grids are spread over processes."""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence

from tqdm import tqdm

__all__ = ["progress_map"]


def progress_map(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int, desc: str) -> list[Any]:
    """``[fn(x) for x in items]`` on ``jobs`` processes, in order, with a progress bar on a terminal.

    The result does not depend on ``jobs``: ``fn`` must be a picklable top-level function and
    every result is returned in the order of ``items``. The bar (stderr, after one second)
    appears only when stderr is a terminal and there are at least two items.
    """
    bar = tqdm(total=len(items), desc=desc, unit="pt", delay=1.0, file=sys.stderr,
               disable=len(items) < 2 or not sys.stderr.isatty(), leave=False)
    try:
        if jobs <= 1:
            out = []
            for item in items:
                out.append(fn(item))
                bar.update()
            return out
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            out = []
            for result in pool.map(fn, items):
                out.append(result)
                bar.update()
            return out
    finally:
        bar.close()
