"""Run the benchmarks: ``python -m benchmarks [name ...] [--save]`` (names without ``bench_``).

Results are printed. The committed JSON results under ``dpcp_tutorial/data/``
are rewritten only with an explicit ``--save``.
"""

from __future__ import annotations

import importlib
import pathlib
import sys


def main(argv: list[str]) -> int:
    here = pathlib.Path(__file__).parent
    names = sorted(p.stem[len("bench_"):] for p in here.glob("bench_*.py"))
    save = "--save" in argv
    chosen = [a for a in argv if a != "--save"] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {names} (option: --save)")
        return 2
    for name in chosen:
        print(f"\n=== benchmark: {name} ===")
        importlib.import_module(f"benchmarks.bench_{name}").main(save=save)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
