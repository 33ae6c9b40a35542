"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import json
import pathlib
import time
from typing import Callable


def best_time(fn: Callable[[], object], repeat: int = 5, min_total: float = 0.2) -> float:
    """Best wall-clock time of ``fn()`` over ``repeat`` rounds (each round loops until ``min_total`` s)."""
    best = float("inf")
    for _ in range(repeat):
        loops, start = 0, time.perf_counter()
        while True:
            fn()
            loops += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_total:
                break
        best = min(best, elapsed / loops)
    return best


def print_table(header: list[str], rows: list[list]) -> None:
    """Print a plain aligned table."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))


def save_result(path: pathlib.Path, payload: dict, save: bool) -> None:
    """Write ``payload`` as JSON to ``path`` only when ``save`` is true (``python -m benchmarks NAME --save``).

    The committed results under ``dpcp_tutorial/data/`` are rewritten only on
    request, so that a plain benchmark run never changes tracked files.
    """
    if not save:
        print(f"not saved (run with --save to rewrite {path.name})")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {path}")
