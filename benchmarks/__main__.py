"""Run the benchmarks: ``python -m benchmarks [name ...]`` (names without ``bench_``)."""

from __future__ import annotations

import importlib
import pathlib
import sys


def main(argv: list[str]) -> int:
    here = pathlib.Path(__file__).parent
    names = sorted(p.stem[len("bench_"):] for p in here.glob("bench_*.py"))
    chosen = argv or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {names}")
        return 2
    for name in chosen:
        print(f"\n=== benchmark: {name} ===")
        importlib.import_module(f"benchmarks.bench_{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
