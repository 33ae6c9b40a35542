"""Import time: ``import dpcp_tutorial`` in a fresh interpreter against ``import numpy``.

Each row starts a new Python process (``python -X importtime`` is not used: the wall
clock of the whole interpreter is what a user waits for), takes the best of ``REPEAT``
runs, and prints the ratio to the baseline ``python -c "import numpy"`` measured in the
same run. Goal: ``import dpcp_tutorial`` in at most 0.5 s.

Rows: the bare package (lazy: loads none of its modules); the first public name most
chapters use (``private_quantile``: numpy + scipy.special); an estimator
(``SplitConformalRegressor``: scikit-learn); everything (``from dpcp_tutorial import *``).
"""

from __future__ import annotations

import subprocess
import sys
import time

from ._timing import print_table

REPEAT = 7
GOAL = 0.5  # seconds, for the bare ``import dpcp_tutorial``
STATEMENTS = {
    "baseline: import numpy": "import numpy",
    "import dpcp_tutorial": "import dpcp_tutorial",
    "from dpcp_tutorial import private_quantile": "from dpcp_tutorial import private_quantile",
    "from dpcp_tutorial import SplitConformalRegressor": "from dpcp_tutorial import SplitConformalRegressor",
    "from dpcp_tutorial import *": "from dpcp_tutorial import *",
}


def fresh_interpreter_seconds(statement: str, repeat: int = REPEAT) -> float:
    """Best wall-clock time of ``python -c statement`` in a new process, over ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main(save: bool = False) -> None:  # writes no file, so `save` is unused
    times = {label: fresh_interpreter_seconds(statement) for label, statement in STATEMENTS.items()}
    base = times["baseline: import numpy"]
    rows = [[label, f"{t:.3f}", f"{t / base:.2f}"] for label, t in times.items()]
    print_table(["statement (fresh interpreter, best of %d)" % REPEAT, "seconds", "ratio to numpy"], rows)
    bare = times["import dpcp_tutorial"]
    verdict = "meets" if bare <= GOAL else "MISSES"
    print(f"import dpcp_tutorial: {bare:.3f} s, {verdict} the goal of {GOAL} s "
          f"({bare / base:.2f}x the time of import numpy)")
