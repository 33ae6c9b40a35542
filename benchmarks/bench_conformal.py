"""Split conformal calibration: the package against np.partition (the floor) and MAPIE.

Table 1: ``conformal_quantile`` against ``np.partition`` at the same rank.
Goal: within 2x of np.partition for n in {1e3, 1e5, 1e6}. Each table interleaves the two sides
(rounds in turn, best of the rounds), so both see the same machine load.
Table 2: calibrating a fitted linear model on n points (predict + scores + quantile),
``SplitConformalRegressor.calibrate`` against MAPIE's ``SplitConformalRegressor.conformalize``;
both give the same half-width (checked); goal: MAPIE/ours >= 1 at every n.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.linear_model import LinearRegression

from dpcp_tutorial import SplitConformalRegressor, conformal_quantile, conformal_rank

from ._timing import best_time, print_table


def main(save: bool = False) -> None:  # writes no file, so `save` is unused
    rng = np.random.default_rng(0)
    alpha = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from mapie.regression import SplitConformalRegressor as MapieRegressor
    quantile_rows, calibrate_rows = [], []
    for n in [10**3, 10**5, 10**6]:
        scores = rng.exponential(size=n)
        k = conformal_rank(n, alpha)
        t_ours = t_floor = np.inf
        for _ in range(7):          # interleaved rounds: both see the same machine load
            t_ours = min(t_ours, best_time(lambda: conformal_quantile(scores, alpha), repeat=1))
            t_floor = min(t_floor, best_time(lambda: np.partition(scores, k - 1)[k - 1], repeat=1))
        quantile_rows.append([f"{n:.0e}", f"{t_ours * 1e3:.3f}", f"{t_floor * 1e3:.3f}", f"{t_ours / t_floor:.2f}"])

        X = rng.standard_normal((n, 1))
        y = 2 * X[:, 0] + rng.standard_normal(n)
        model = LinearRegression().fit(X[:1000], y[:1000])
        ours = SplitConformalRegressor(model, alpha=alpha, prefit=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            def mapie_calibrate():
                return MapieRegressor(model, confidence_level=1 - alpha, prefit=True).conformalize(X, y)

            t_mapie = t_cal = np.inf
            for _ in range(5):      # interleaved rounds
                t_mapie = min(t_mapie, best_time(mapie_calibrate, repeat=1))
                t_cal = min(t_cal, best_time(lambda: ours.calibrate(X, y), repeat=1))
            _, iv = mapie_calibrate().predict_interval(X[:1])
        same = np.isclose((iv[0, 1, 0] - iv[0, 0, 0]) / 2, ours.qhat_, rtol=1e-12)
        calibrate_rows.append([f"{n:.0e}", f"{t_cal * 1e3:.3f}", f"{t_mapie * 1e3:.3f}", f"{t_mapie / t_cal:.2f}",
                               "yes" if same else "NO"])
    print("conformal_quantile vs np.partition (goal: ratio <= 2)")
    print_table(["n", "ours ms", "partition ms", "ours/partition"], quantile_rows)
    print("\ncalibration of a fitted model: dpcp_tutorial vs MAPIE 1.x")
    print_table(["n", "ours ms", "MAPIE ms", "MAPIE/ours", "same half-width"], calibrate_rows)


if __name__ == "__main__":
    import sys

    main(save="--save" in sys.argv[1:])
