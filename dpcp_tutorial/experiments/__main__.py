"""Command line: ``python -m dpcp_tutorial.experiments NAME [options]``."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

from . import available

DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data"


def main(argv: list[str] | None = None) -> int:
    runners = available()
    parser = argparse.ArgumentParser(prog="python -m dpcp_tutorial.experiments",
                                     description="Run a full-size experiment of the book.")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    sub = parser.add_subparsers(dest="name")
    for name, module in sorted(runners.items()):
        p = sub.add_parser(name, help=module.DESCRIPTION, description=module.DESCRIPTION)
        module.add_arguments(p)
        p.add_argument("--output", type=pathlib.Path, default=DATA_DIR / f"{name}.json",
                       help="where to write the JSON result (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.list or not args.name:
        for name, module in sorted(runners.items()):
            print(f"{name:28s} {module.DESCRIPTION}")
        return 0
    start = time.perf_counter()
    result = runners[args.name].run(args)
    result.setdefault("meta", {})
    result["meta"].update({"experiment": args.name,
                           "command": "python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:] if argv is None else argv),
                           "seconds": round(time.perf_counter() - start, 1)})
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.output} in {result['meta']['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
