"""A dependency-free progress bar for the experiment runners (printed to stderr).

Notebooks never use it (nbval compares stderr); the full-size runners do.
"""

from __future__ import annotations

import sys
import time
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], total: int | None = None, label: str = "", stream=None,
             enabled: bool = True) -> Iterator[T]:
    """Yield ``items`` while drawing ``label [#####     ] k/total elapsed`` on ``stream``."""
    stream = sys.stderr if stream is None else stream
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    start = time.perf_counter()

    def draw(done: int) -> None:
        if not enabled:
            return
        elapsed = time.perf_counter() - start
        if total:
            filled = int(30 * done / total)
            bar = "#" * filled + " " * (30 - filled)
            eta = elapsed / done * (total - done) if done else float("nan")
            stream.write(f"\r{label} [{bar}] {done}/{total}  {elapsed:6.1f}s elapsed, ~{eta:6.1f}s left")
        else:
            stream.write(f"\r{label} {done} done, {elapsed:6.1f}s elapsed")
        stream.flush()

    done = 0
    draw(done)
    for item in items:
        yield item
        done += 1
        draw(done)
    if enabled:
        stream.write("\n")
        stream.flush()
