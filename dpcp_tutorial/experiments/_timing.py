"""The wall-clock timing that the scaling experiments share (internal to the experiments)."""

from __future__ import annotations

import time


def best_time(fn, repeats: int) -> float:
    """The best of ``repeats`` wall-clock times of ``fn()``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
