"""Points of the automatically graded part of every coding exercise: the one table the grader and the rubric use.

The rubric of the instructors' page gives each coding exercise 10 points: 6 for the checker (this table),
2 for readable code and 2 for clear errors on bad public input and no data-dependent output (marked by
hand, with the first lines each submission printed in its feedback file). The two assembly exercises, which
build a whole private release, are worth twice as much (12 + 4 + 4). The grader awards
``points * cases_passed / cases_total`` for a submission whose function(s) ran, and 0 for one that is not
submitted or not graded. An exercise with several checkers (``ex-04-code``) or several functions
(``ex-04-assemble``) is one row and one entry here.
"""

from __future__ import annotations

POINTS: dict[str, float] = {
    "ex-01-code-quantile": 6, "ex-01-code-aps": 6,
    "ex-02-private-mean": 6, "ex-02-attacker": 6,
    "ex-03-bound": 6, "ex-03-stable": 6, "ex-03-release": 6, "ex-03-loss": 6,
    "ex-04-coin": 6, "ex-04-pad": 6, "ex-04-code": 6, "ex-04-assemble": 12,
    "ex-05-code": 6,
    "ex-06-level": 6, "ex-06-bound": 6, "ex-06-code": 6, "ex-06-assemble": 12,
    "ex-07-ssp-code": 6, "ex-07-clip": 6,
    "ex-08-code-interval": 6, "ex-08-code-n": 6,
    "ex-09-spatial": 6, "ex-09-idd": 6,
    "ex-10-worst-case": 6, "ex-10-langevin": 6,
    "ex-11-exact-1d": 6,
    "ex-12-hdk": 6, "ex-12-counterexample": 6,
    "ex-13-clip": 6, "ex-13-safe": 6,
    "ex-14-counts": 6, "ex-14-leak": 6,
    "ex-15-annulus": 6, "ex-15-law": 6,
    "ex-16-noise": 6, "ex-16-pool": 6,
    "ex-17-thresholds": 6, "ex-17-score": 6, "ex-17-account": 6,
    "ex-18-first": 6, "ex-18-loss": 6, "ex-18-stop": 6,
    "ex-19-account": 6, "ex-19-rank": 6,
}
"""Exercise label -> automatic points (``tests/test_grading.py`` checks that every checked exercise has one)."""
