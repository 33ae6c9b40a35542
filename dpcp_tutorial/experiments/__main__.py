"""Command line: ``python -m dpcp_tutorial.experiments NAME [options]``.

The result is written as JSON to ``--out`` (default: ``NAME.json`` in the
current working directory), never into the installed package. The committed
full-size results under ``dpcp_tutorial/data/`` were produced with an explicit
``--out dpcp_tutorial/data/NAME.json`` from the repository root. The progress
bar (tqdm) goes to stderr; ``--quiet`` turns it off.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

from . import available


def _escape(text: str) -> str:
    """argparse %-formats help strings: a literal ``%`` must be written ``%%``."""
    return text.replace("%", "%%")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (one sub-command per runner)."""
    runners = available()
    parser = argparse.ArgumentParser(prog="python -m dpcp_tutorial.experiments",
                                     description="Run a full-size experiment of the book.")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    sub = parser.add_subparsers(dest="name")
    for name, module in sorted(runners.items()):
        p = sub.add_parser(name, help=_escape(module.DESCRIPTION), description=module.DESCRIPTION)
        module.add_arguments(p)
        p.add_argument("--out", "--output", dest="out", type=pathlib.Path, default=pathlib.Path(f"{name}.json"),
                       help="where to write the JSON result (default: %(default)s in the current directory; "
                            f"the committed result was written with --out dpcp_tutorial/data/{name}.json)")
        p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    runners = available()
    if args.list or not args.name:
        for name, module in sorted(runners.items()):
            print(f"{name:28s} {module.DESCRIPTION}")
        return 0
    start = time.perf_counter()
    result = runners[args.name].run(args)
    result.setdefault("meta", {})
    result["meta"].update({"experiment": args.name,
                           "command": "python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:] if argv is None else argv)})
    # a runner that resumes earlier work reports its own total
    result["meta"].setdefault("seconds", round(time.perf_counter() - start, 1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out} in {result['meta']['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
