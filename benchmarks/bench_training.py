"""The DP trainers of chapter 7 against their scikit-learn counterparts, timed in one run on the same data.

For n in {1e4, 1e5, 1e6} training rows (and a held-out test set of 20 000 rows from the same law), each
model's ``fit`` is timed interleaved with its scikit-learn counterpart (one fit of each in turn, best of
the rounds), and both are scored on the test set:

* ``DPLogisticRegression`` (output perturbation, two classes) against ``LogisticRegression(solver="lbfgs")``
  at the same ridge penalty (``C = 1/l2``); 20 features, accuracy and log-loss; goal: ratio <= 1.0;
* ``DPLogisticRegression`` with four classes (softmax) against the multinomial ``LogisticRegression``;
* ``DPRidgeRegression`` (sufficient-statistics perturbation) against ``Ridge(alpha=l2)``; 20 features, test
  R^2; goal: ratio <= 1.5;
* ``DPSGDRegressor`` / ``DPSGDClassifier`` (sampling rate 0.01, 1000 steps: ten expected epochs) against
  ``SGDRegressor`` / ``SGDClassifier(loss="log_loss")`` run for ten epochs (no goal: the algorithms differ).

The features are uniform in a box whose rows have norm at most ``x_bound = 1`` and the labels lie in
``[-y_bound, y_bound]``, so the DP models' clipping changes nothing and both sides fit the same data.
The ridge penalty is public and proportional to the planned size, ``l2 = 0.001 n`` (a mean-form penalty
of 0.001), the same for both sides; every DP model spends epsilon = 1, delta = 1e-6.

Run: ``python -m benchmarks training`` (sizes 1e4, 1e5, 1e6; several minutes on a loaded two-core
machine), ``python -m benchmarks training --quick`` (1e4 and 1e5, about a minute) or
``--sizes=1e5,1e6``; ``--rounds=K`` sets the interleaved rounds (default 3). ``--save`` rewrites
``dpcp_tutorial/data/bench_training.json``.
"""

from __future__ import annotations

import os
import pathlib
import platform
import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier, SGDRegressor
from sklearn.metrics import accuracy_score, log_loss, r2_score

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import DPLogisticRegression, DPRidgeRegression, DPSGDClassifier, DPSGDRegressor

OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_training.json"
SIZES = (10**4, 10**5, 10**6)
QUICK_SIZES = (10**4, 10**5)
N_TEST, D, K = 20_000, 20, 4
EPSILON, DELTA, PENALTY = 1.0, 1e-6, 1e-3         # l2 = PENALTY * n (public: the planned size)
SGD_RATE, SGD_STEPS = 0.01, 1000                   # ten expected epochs
GOALS = {"logistic": 1.0, "ridge": 1.5}


def _features(n: int, rng: np.random.Generator) -> np.ndarray:
    """Rows uniform in the cube of half-width 1/sqrt(D): norm at most 1 = x_bound."""
    return rng.uniform(-1.0, 1.0, size=(n, D)) / np.sqrt(D)


def _data(task: str, n: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng([7, n])
    beta = np.random.default_rng(3).normal(size=(K, D)) * 2.0
    X = _features(n + N_TEST, rng)
    if task == "regression":
        y = np.clip(X @ beta[0] / 2 + 0.3 * rng.normal(size=len(X)), -1.0, 1.0)
    elif task == "binary":
        y = (rng.random(len(X)) < 1.0 / (1.0 + np.exp(-(X @ beta[0] + 0.3)))).astype(int)
    else:
        logits = X @ beta.T
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        y = (rng.random(len(X))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return X[:n], y[:n], X[n:], y[n:]


def _cases(n: int) -> list[dict]:
    l2 = PENALTY * n
    dp = dict(epsilon=EPSILON, delta=DELTA, x_bound=1.0, rng=1)
    sgd = dict(epsilon=EPSILON, delta=DELTA, x_bound=1.0, rng=1, sampling_rate=SGD_RATE, steps=SGD_STEPS,
               expected_batch_size=SGD_RATE * n)
    epochs = round(SGD_RATE * SGD_STEPS)
    return [
        {"name": "logistic", "task": "binary", "goal": GOALS["logistic"],
         "ours": lambda: DPLogisticRegression(l2=l2, classes=[0, 1], **dp),
         "theirs": lambda: LogisticRegression(C=1.0 / l2), "sklearn": "LogisticRegression(lbfgs)"},
        {"name": "logistic 4 classes", "task": "multiclass", "goal": None,
         "ours": lambda: DPLogisticRegression(l2=l2, classes=list(range(K)), **dp),
         "theirs": lambda: LogisticRegression(C=1.0 / l2), "sklearn": "LogisticRegression(lbfgs)"},
        {"name": "ridge", "task": "regression", "goal": GOALS["ridge"],
         "ours": lambda: DPRidgeRegression(l2=l2, y_bound=1.0, **dp),
         "theirs": lambda: Ridge(alpha=l2), "sklearn": "Ridge"},
        {"name": "DP-SGD regressor", "task": "regression", "goal": None,
         "ours": lambda: DPSGDRegressor(y_bound=1.0, clip_norm=0.5, learning_rate=0.5, **sgd),
         "theirs": lambda: SGDRegressor(max_iter=epochs, tol=None, random_state=1), "sklearn": "SGDRegressor"},
        {"name": "DP-SGD classifier", "task": "binary", "goal": None,
         "ours": lambda: DPSGDClassifier(classes=[0, 1], learning_rate=0.5, **sgd),
         "theirs": lambda: SGDClassifier(loss="log_loss", max_iter=epochs, tol=None, random_state=1),
         "sklearn": "SGDClassifier(log_loss)"},
    ]


def _quality(model, task: str, X: np.ndarray, y: np.ndarray) -> dict:
    if task == "regression":
        return {"r2": float(r2_score(y, model.predict(X)))}
    proba = model.predict_proba(X)
    return {"accuracy": float(accuracy_score(y, model.classes_[np.argmax(proba, axis=1)])),
            "log_loss": float(log_loss(y, proba, labels=model.classes_))}


def _timed_fit(make, X, y) -> tuple[float, object]:
    model = make()
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model


def _measure(n: int, rounds: int) -> list[dict]:
    rows, data = [], {}
    for case in _cases(n):
        if case["task"] not in data:
            data[case["task"]] = _data(case["task"], n)
        Xtr, ytr, Xte, yte = data[case["task"]]
        ours = theirs = np.inf
        for _ in range(rounds):      # interleaved: both sides see the same machine load
            t, ours_model = _timed_fit(case["ours"], Xtr, ytr)
            ours = min(ours, t)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")      # lbfgs / SGD convergence notices
                t, theirs_model = _timed_fit(case["theirs"], Xtr, ytr)
            theirs = min(theirs, t)
        rows.append({"model": case["name"], "sklearn": case["sklearn"], "n": n, "ours_s": ours,
                     "sklearn_s": theirs, "ratio": ours / theirs, "goal": case["goal"],
                     "ours_quality": _quality(ours_model, case["task"], Xte, yte),
                     "sklearn_quality": _quality(theirs_model, case["task"], Xte, yte)})
        print(f"  {case['name']} n={n:.0e}: {ours:.3f} s vs {theirs:.3f} s", file=sys.stderr, flush=True)
    return rows


def _parse(options: list[str]) -> tuple[tuple[int, ...], int]:
    sizes, rounds = SIZES, 3
    for option in options:
        if option == "--quick":
            sizes, rounds = QUICK_SIZES, 2
        elif option.startswith("--sizes="):
            sizes = tuple(int(float(s)) for s in option[len("--sizes="):].split(","))
        elif option.startswith("--rounds="):
            rounds = int(option[len("--rounds="):])
        else:
            raise SystemExit(f"unknown option {option!r}; use --quick, --sizes=1e4,1e5 or --rounds=K")
    return sizes, rounds


def _show(value: dict) -> str:
    return " ".join(f"{k.replace('_', '-')} {v:.4f}" for k, v in value.items())


def _blas_threads() -> int | None:
    """Threads of the BLAS the timings ran with (``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``: one)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
        return None
    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=None)


def main(save: bool = False, options: list[str] = ()) -> None:
    sizes, rounds = _parse(list(options))
    rows = [row for n in sizes for row in _measure(n, rounds)]
    print(f"fit time, best of {rounds} interleaved rounds ({_blas_threads()} BLAS threads); quality on {N_TEST} "
          "held-out rows "
          f"(DP at epsilon = {EPSILON:g}, delta = {DELTA:g}; l2 = {PENALTY:g} n on both sides)")
    print_table(["model", "n", "ours s", "sklearn s", "ours/sklearn", "goal", "ours", "sklearn", "counterpart"],
                [[r["model"], f"{r['n']:.0e}", f"{r['ours_s']:.3f}", f"{r['sklearn_s']:.3f}", f"{r['ratio']:.2f}",
                  "-" if r["goal"] is None else f"<= {r['goal']:g}", _show(r["ours_quality"]),
                  _show(r["sklearn_quality"]), r["sklearn"]] for r in rows])
    payload = {"meta": {"command": "python -m benchmarks training --save", "python": platform.python_version(),
                        "machine": platform.machine(), "cpus": os.cpu_count(), "blas_threads": _blas_threads(),
                        "load_average": [round(x, 2) for x in os.getloadavg()], "rounds": rounds,
                        "features": D, "classes": K, "n_test": N_TEST, "epsilon": EPSILON, "delta": DELTA,
                        "penalty_per_row": PENALTY},
               "rows": rows}
    save_result(OUTPUT, payload, save)


if __name__ == "__main__":
    main(save="--save" in sys.argv[1:], options=[a for a in sys.argv[1:] if a != "--save"])
