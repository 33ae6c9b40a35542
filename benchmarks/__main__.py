"""Run the benchmarks: ``python -m benchmarks [name ...] [--save] [--OPTION ...]`` (names without ``bench_``).

Results are printed. The committed JSON results under ``dpcp_tutorial/data/``
are rewritten only with an explicit ``--save``. Other ``--OPTION`` arguments
(e.g. ``--quick``) go to the benchmarks whose ``main`` takes ``options``;
a benchmark without options refuses them.
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
    options = [a for a in argv if a.startswith("--") and a != "--save"]
    chosen = [a for a in argv if not a.startswith("--")] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {names} (option: --save)")
        return 2
    if options:
        plain = [name for name in chosen if "options" not in inspect.signature(
            importlib.import_module(f"benchmarks.bench_{name}").main).parameters]
        if plain:
            print(f"benchmark(s) {plain} take no options (got {options}); run them without, or name only "
                  "benchmarks that take them")
            return 2
    for name in chosen:
        print(f"\n=== benchmark: {name} ===")
        module = importlib.import_module(f"benchmarks.bench_{name}")
        if options:
            module.main(save=save, options=options)
        else:
            module.main(save=save)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
