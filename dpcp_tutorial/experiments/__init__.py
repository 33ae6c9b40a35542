"""Full-size experiment runners behind the book's figures and tables.

Run ``python -m dpcp_tutorial.experiments --list`` to see them and
``python -m dpcp_tutorial.experiments NAME --help`` for the options of one.
Each runner is a module of this package that defines

* ``DESCRIPTION`` (one line),
* ``add_arguments(parser)`` (its command-line options, with full-size defaults),
* ``run(args) -> dict`` (runs with a tqdm progress bar on stderr and returns a JSON-able result).

The module ``interactive`` is not a runner: it draws the book's slider figures.

Results are written to ``--out`` (default: ``NAME.json`` in the working directory,
never the installed package; the committed results in ``data/`` were written with an explicit ``--out``).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def available() -> dict[str, ModuleType]:
    """Map runner name (module name) to its module (modules without a ``run`` are tooling, not runners)."""
    runners = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            if hasattr(module, "run"):
                runners[info.name] = module
    return runners
