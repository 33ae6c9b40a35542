"""Run the benchmarks: ``python -m benchmarks [name ...] [--save] [--n N]`` (names without ``bench_``).

Results are printed. The committed JSON results under ``dpcp_tutorial/data/``
are rewritten only with an explicit ``--save``. ``--n N`` sets the data size of
the benchmarks that take one (``median``: default 10^6), for a quick run.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import sys


def main(argv: list[str]) -> int:
    here = pathlib.Path(__file__).parent
    names = sorted(p.stem[len("bench_"):] for p in here.glob("bench_*.py"))
    save = "--save" in argv
    options = {}
    if "--n" in argv:
        at = argv.index("--n")
        try:
            options["n"] = int(float(argv[at + 1]))
        except (IndexError, ValueError):
            print("--n needs a number of rows, e.g. --n 1e5")
            return 2
        argv = argv[:at] + argv[at + 2:]
    chosen = [a for a in argv if a != "--save"] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {names} (option: --save)")
        return 2
    for name in chosen:
        print(f"\n=== benchmark: {name} ===")
        main_fn = importlib.import_module(f"benchmarks.bench_{name}").main
        accepted = {k: v for k, v in options.items() if k in inspect.signature(main_fn).parameters}
        main_fn(save=save, **accepted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
