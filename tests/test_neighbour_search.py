"""A seeded search over neighbouring data sets: no private entry point has an edge on one side only.

A raise, a warning or a NaN in a private path is part of the output: if a data set releases and its neighbour
refuses, or one side warns and the other does not, the privacy loss is infinite whatever the mechanism's noise.
For every private entry point that reads records (the calibration steps of the private estimators, the one-call
releases, the private trainers, the score releases, the depth medians and aggregators, and the Dask releases of
``dpcp_tutorial.scale``) this module builds a few data sets inside the entry point's domain, seeded, each holding
extreme records, and for each of them a set of neighbours -- a record removed, an extreme record added, a record
replaced by an extreme one (add/remove and replace-one) -- and checks that

* both sides release (a finite output, no NaN) or both refuse with the same message (a domain refusal is the
  same for every data set), and
* the warnings of the two sides are the same (:class:`dpcp_tutorial.ReleaseWarning` aside: it is a function of
  the release and public inputs only, audited in tests/test_private_errors.py and the estimators' tests).

The extreme records are those the models and mechanisms find hardest: public models that return NaN, +-inf or
non-probability rows for one record, whose output overflows (NumPy's overflow warning), that warn about one record
(a ``UserWarning`` or a ``ConvergenceWarning``), labels the model has no column for, categories a one-hot encoder
has not seen and missing categories, and the data extremes of tests/test_bad_input_sweep.py that lie inside the
domain (values of magnitude 1e100, 1e-300, denormals, exact ties, scores 0 and 1, infinite scores where the
calibrator clips them). Any other exception (an IndexError, an OverflowError ...) fails the test as a crash.

The domains are those the entry points document: finite features and responses of magnitude at most 1e100,
scores in [0, 1] (the clipping calibrators: any score), and labels in the public label set where there is one
(``classes=`` of the Mondrian classifier, the DP classifiers and DPCP: a label outside it is refused with one
message for every such data set, tests/test_private_errors.py). The private split classifier has no label set of
its own: a label the model has no column for is in its domain and takes the worst score.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning

import dpcp_tutorial as dp

# feature values of x0 that make the adversarial public models misbehave on that record
NAN, INF, NEG_INF, OVERFLOW, WARN, CONVERGE, BAD_ROW = 7.0, 8.0, -8.0, 9.0, 6.0, 5.0, -7.0
MARKS = (NAN, INF, NEG_INF, OVERFLOW, WARN, CONVERGE, BAD_ROW)


def _speak(x0):
    """The model's record-triggered warnings (as a model would: only when such a record is present)."""
    if np.any(x0 == WARN):
        warnings.warn("the model found an unusual record", UserWarning)
    if np.any(x0 == CONVERGE):
        warnings.warn("the model's inner solver did not converge on this batch", ConvergenceWarning)


class MarkedRegressor(RegressorMixin, BaseEstimator):
    """A public regressor that returns NaN, +-inf or an overflowing value for marked records, and warns."""

    def __init__(self, slope: float = 1.0):
        self.slope = slope

    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        x0 = X[:, 0]
        out = self.slope * (x0 + 0.5 * X[:, 1])
        out = np.where(x0 == NAN, np.nan, out)
        out = np.where(x0 == INF, np.inf, out)
        out = np.where(x0 == NEG_INF, -np.inf, out)
        out = np.where(x0 == OVERFLOW, np.exp(np.where(x0 == OVERFLOW, 1000.0, 0.0)), out)  # overflow warning
        _speak(x0)
        return out


class MarkedClassifier(ClassifierMixin, BaseEstimator):
    """A public three-class classifier whose probability rows are NaN, infinite, negative or overflow on marks."""

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1, 2])
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict_proba(self, X):
        X = np.asarray(X, dtype=float)
        x0 = X[:, 0]
        logits = np.column_stack([x0, X[:, 1], -x0])
        logits = np.where((x0 == OVERFLOW)[:, None], 1000.0, np.clip(logits, -50, 50))
        e = np.exp(logits)                                       # overflows to inf on a marked record
        proba = e / e.sum(axis=1, keepdims=True)                 # inf / inf = NaN: an invalid-value warning
        proba[x0 == NAN] = np.nan
        proba[x0 == INF] = np.inf
        proba[x0 == BAD_ROW] = [1.5, -0.5, 0.0]                  # sums to 1, one negative entry
        proba[x0 == NEG_INF] = [0.9, 0.9, 0.9]                   # does not sum to 1
        _speak(x0)
        return proba


class MarkedRidge(dp.DPRidgeRegression):
    """A DP trainer whose fitted model misbehaves on marked records (DPCP scores the records it was fitted on)."""

    def predict(self, X):
        out = super().predict(X)
        return np.where(np.asarray(X)[:, 0] == NAN, np.nan, np.where(np.asarray(X)[:, 0] == INF, np.inf, out))


class MarkedLogistic(dp.DPLogisticRegression):
    """A DP classifier whose probabilities are NaN or negative on marked records."""

    def predict_proba(self, X):
        proba = super().predict_proba(X)
        x0 = np.asarray(X)[:, 0]
        proba[x0 == NAN] = np.nan
        proba[x0 == BAD_ROW] = [1.5, -0.5]
        _speak(x0)
        return proba


# --------------------------------------------------------------------------- the search

def _outcome(fn, data):
    """``((kind, detail), warnings)``: a release (checked finite) or a refusal (type and message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(data)
        except (TypeError, ValueError) as exc:
            result = ("refused", f"{type(exc).__name__}: {exc}")
        else:
            result = ("released", _finite(out))
    said = tuple(sorted({(w.category.__name__, str(w.message)) for w in caught
                         if not issubclass(w.category, dp.ReleaseWarning)}))
    return result, said


def _finite(out) -> bool:
    """True unless the release holds a NaN (a fitted estimator: its released attributes)."""
    if hasattr(out, "get_params"):
        values = [v for k, v in vars(out).items() if k.endswith("_") and not k.startswith("_")]
    else:
        values = [out]
    for v in values:
        if isinstance(v, (float, np.floating, np.ndarray, list, tuple)):
            arr = np.asarray(v, dtype=object).ravel()
            if any(isinstance(a, (float, np.floating)) and np.isnan(a) for a in arr):
                return False
    return True


def _neighbours(data: np.ndarray, pool: np.ndarray, gen: np.random.Generator, count: int):
    """Add/remove and replace-one neighbours: ``(what, neighbour)``; records are rows (the first axis)."""
    out = []
    n = len(data)
    for i in gen.choice(n, size=min(count, n), replace=False):
        out.append((f"remove record {i}", np.delete(data, i, axis=0)))
    for j in gen.choice(len(pool), size=min(count, len(pool)), replace=False):
        out.append((f"add {pool[j].tolist()}", np.concatenate([data, pool[j:j + 1]], axis=0)))
        i = int(gen.integers(n))
        other = data.copy()
        other[i] = pool[j]
        out.append((f"replace record {i} by {pool[j].tolist()}", other))
    return out


def search(fn, bases, pool, seed, count=4):
    """Every neighbouring pair's problems (an empty list when none)."""
    gen = np.random.default_rng(seed)
    problems = []
    for b, data in enumerate(bases):
        first = _outcome(fn, data)
        assert first[0][0] == "released", f"base data set {b} does not release: {first}"
        for what, other in _neighbours(data, pool, gen, count):
            second = _outcome(fn, other)
            if second[0] != first[0]:
                problems.append(f"data set {b}, {what}: {first[0]} versus {second[0]}")
            if second[1] != first[1]:
                problems.append(f"data set {b}, {what}: warnings {first[1]} versus {second[1]}")
    return problems


# --------------------------------------------------------------------------- data sets in the domains

_GEN = np.random.default_rng(2024)


def _records(n, labels=None, marks=(NAN, OVERFLOW, WARN)):
    """Rows ``(x0, x1, y)``; a few rows carry marks, one is duplicated (exact ties)."""
    X = _GEN.normal(size=(n, 2)) * 0.5
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.2 * _GEN.normal(size=n)) if labels is None else _GEN.integers(0, labels, n)
    rows = np.column_stack([X, y]).astype(float)
    for k, mark in enumerate(marks):
        rows[k, 0] = mark
    rows[-1] = rows[-2]
    return rows


def _pool(labels=None, extra_labels=()):
    """Extreme records inside the domain: every mark, magnitudes 1e100 and 1e-300, a denormal, zeros."""
    y0 = 0.0 if labels is None else 1.0
    rows = [[m, 0.3, y0] for m in MARKS]
    rows += [[1e100, -1e100, y0], [1e-300, 5e-324, y0], [0.0, 0.0, y0]]
    if labels is None:
        rows += [[0.1, 0.2, 1e100], [0.1, 0.2, -1e100], [0.1, 0.2, 0.0]]
    else:
        rows += [[0.1, 0.2, float(c)] for c in range(labels)] + [[0.1, 0.2, float(c)] for c in extra_labels]
    return np.array(rows, dtype=float)


REG = [_records(40), _records(25, marks=(INF, CONVERGE))]
CLF = [_records(40, labels=3, marks=(NAN, OVERFLOW, BAD_ROW, WARN)), _records(30, labels=3, marks=(INF, NEG_INF))]


def _xy(rows):
    return rows[:, :2], rows[:, 2]


def _xc(rows):
    return rows[:, :2], rows[:, 2].astype(np.int64)


def _calibrate(estimator, labels=False):
    def run(rows):
        X, y = (_xc if labels else _xy)(rows)
        return estimator.calibrate(X, y)
    return run


_REG_MODEL = MarkedRegressor().fit(np.zeros((1, 2)))
_SCALE_MODEL = MarkedRegressor(slope=0.5).fit(np.zeros((1, 2)))
_CLF_MODEL = MarkedClassifier().fit(np.zeros((1, 2)))

MODEL_ENTRIES = {
    "PrivateSplitConformalRegressor.calibrate": (
        _calibrate(dp.PrivateSplitConformalRegressor(_REG_MODEL, 0.2, 2.0, bound=3.0, bins=50, prefit=True, rng=0)),
        REG, _pool()),
    "PrivateSplitConformalRegressor.calibrate (public n, pps)": (
        _calibrate(dp.PrivateSplitConformalRegressor(_REG_MODEL, 0.2, 2.0, bound=3.0, calibrator="pps", m=20,
                                                     n=60, prefit=True, rng=0)), REG, _pool()),
    "PrivateSplitConformalClassifier.calibrate (lac)": (
        _calibrate(dp.PrivateSplitConformalClassifier(_CLF_MODEL, 0.2, 2.0, bins=50, prefit=True, rng=0), True),
        CLF, _pool(3, extra_labels=(3, 7, -1))),
    "PrivateSplitConformalClassifier.calibrate (aps, public n)": (
        _calibrate(dp.PrivateSplitConformalClassifier(_CLF_MODEL, 0.2, 2.0, score="aps", bins=50, n=60,
                                                      prefit=True, rng=0), True),
        CLF, _pool(3, extra_labels=(3, -1))),
    "MondrianPrivateConformalClassifier.calibrate": (
        _calibrate(dp.MondrianPrivateConformalClassifier(_CLF_MODEL, classes=[0, 1, 2], alpha=0.2, epsilon=5.0,
                                                         bins=20, prefit=True, rng=0), True),
        CLF, _pool(3)),
    "MondrianPrivateConformalClassifier.calibrate (aps, laplace)": (
        _calibrate(dp.MondrianPrivateConformalClassifier(_CLF_MODEL, classes=[0, 1, 2], alpha=0.2, epsilon=5.0,
                                                         score="aps", calibrator="laplace_histogram", bins=20,
                                                         prefit=True, rng=0), True),
        CLF, _pool(3)),
    "PrivateNormalizedConformalRegressor.calibrate": (
        _calibrate(dp.PrivateNormalizedConformalRegressor(_REG_MODEL, _SCALE_MODEL, 0.2, 2.0, y_bound=3.0,
                                                          sigma_min=0.1, score_bound=5.0, bins=20, prefit=True,
                                                          rng=0)),
        REG, _pool()),
    "PrivateConformalizedQuantileRegressor.calibrate": (
        _calibrate(dp.PrivateConformalizedQuantileRegressor(_SCALE_MODEL, _REG_MODEL, 0.2, 2.0, score_bound=3.0,
                                                            bins=20, prefit=True, rng=0)),
        REG, _pool()),
    "PrivateSplitConformalRegressor.calibrate (unbounded)": (
        _calibrate(dp.PrivateSplitConformalRegressor(_REG_MODEL, 0.2, 2.0, bound="unbounded", n=60, prefit=True,
                                                     rng=0)), REG, _pool()),
    "DPCPRegressor.fit (unbounded)": (
        lambda rows: dp.DPCPRegressor(MarkedRidge(x_bound=1.0, y_bound=3.0), epsilon=4.0, training_share=0.25,
                                      bound="unbounded", n=2000, rng=0).fit(*_xy(rows)),
        REG, _pool()),
    "DPCPRegressor.fit": (
        lambda rows: dp.DPCPRegressor(MarkedRidge(x_bound=1.0, y_bound=3.0), epsilon=4.0, training_share=0.25,
                                      bound=3.0, bins=50, n=2000, rng=0).fit(*_xy(rows)),
        REG, _pool()),
    "DPCPClassifier.fit": (
        lambda rows: dp.DPCPClassifier(MarkedLogistic(x_bound=1.0), epsilon=4.0, training_share=0.25, bins=50,
                                       classes=[0, 1], n=2000, rng=0).fit(*_xc(rows)),
        [_records(40, labels=2, marks=(NAN, BAD_ROW, WARN))], _pool(2)),
}


@pytest.mark.parametrize("entry", sorted(MODEL_ENTRIES))
def test_model_outputs_never_make_one_neighbour_speak(entry):
    fn, bases, pool = MODEL_ENTRIES[entry]
    problems = search(fn, bases, pool, seed=sorted(MODEL_ENTRIES).index(entry))
    assert not problems, f"{entry}:\n  " + "\n  ".join(problems[:10])


# --------------------------------------------------------------------------- releases without a model

_S = _GEN.uniform(size=60)
_S[:4] = [0.0, 1.0, 5e-324, np.nextafter(1.0, 0.0)]
_S[-1] = _S[-2]
SCORES = [_S[:, None]]
SCORE_POOL = np.array([[0.0], [1.0], [5e-324], [np.nextafter(1.0, 0.0)], [0.5], [_S[10]]])
UNBOUNDED_POOL = np.concatenate([SCORE_POOL, [[np.inf], [1e300], [7.0]]])    # no upper bound to clip to
CLIPPED_POOL = np.concatenate([SCORE_POOL, [[np.inf], [-np.inf], [1e100], [-5.0]]])    # clipped, never refused

_D = _GEN.normal(size=(30, 2))
_D[0] = [1e100, -1e100]
_D[-1] = _D[-2]
DATA = [_D]
DATA_POOL = np.array([[1e100, 1e100], [-1e100, 0.0], [1e-300, 5e-324], [0.0, 0.0], [_D[3, 0], _D[3, 1]]])
_GRID = dp.public_grid(-2, 2, 5, 2)


def _scores(fn):
    return lambda rows: fn(rows[:, 0])


PLAIN_ENTRIES = {
    "private_quantile": (_scores(lambda s: dp.private_quantile(s, 0.1, 1.0, bins=50, rng=0)), SCORES, SCORE_POOL),
    "private_quantile (public n)": (_scores(lambda s: dp.private_quantile(s, 0.1, 1.0, bins=50, n=100, rng=0)),
                                    SCORES, SCORE_POOL),
    "unbounded_private_quantile": (_scores(lambda s: dp.unbounded_private_quantile(s, 0.1, 1.0, rng=0)), SCORES,
                                   UNBOUNDED_POOL),
    "unbounded_private_quantile (public n, two stages)": (
        _scores(lambda s: dp.unbounded_private_quantile(s, 0.1, 1.0, n=60, method="two_stage", rng=0)), SCORES,
        UNBOUNDED_POOL),
    "pps_private_quantile": (_scores(lambda s: dp.pps_private_quantile(s, 0.1, 1.0, m=20, n=100, rng=0)), SCORES,
                             SCORE_POOL),
    "dpcp_quantile": (_scores(lambda s: dp.dpcp_quantile(s, 0.1, 0.3, 0.7, 1e-6, bins=50, n=2000, rng=0)), SCORES,
                      SCORE_POOL),
    "laplace_histogram_quantile": (_scores(lambda s: dp.laplace_histogram_quantile(s, 0.1, 1.0, bins=20, rng=0)),
                                   SCORES, CLIPPED_POOL),
    "opendp_quantile": (_scores(lambda s: dp.opendp_quantile(s, 0.1, 1.0, bins=20, rng=0)), SCORES, CLIPPED_POOL),
    "pcoqs_quantile": (_scores(lambda s: dp.pcoqs_quantile(s, 0.1, 1.0, rng=0)), SCORES, CLIPPED_POOL),
    "private_depth_median": (lambda d: dp.private_depth_median(d, 1.0, candidates=_GRID, rng=0), DATA, DATA_POOL),
    "private_depth_median (private prior)": (lambda d: dp.private_depth_median(d, 1.0, prior="private",
                                                                                n_candidates=50, rng=0),
                                             DATA, DATA_POOL),
    "private_prior": (lambda d: dp.private_prior(d, 1.0, rng=0).mean_vector(d.shape[1]), DATA, DATA_POOL),
    "private_localization": (lambda d: dp.private_localization(d, 1.0, rng=0).centre, DATA, DATA_POOL),
    "private_median_aggregate": (lambda d: dp.private_median_aggregate(d, 1.0, _GRID, rng=0), DATA, DATA_POOL),
    "dp_clipped_mean_aggregate": (lambda d: dp.dp_clipped_mean_aggregate(d, 1.0, 1.0, 1e-5, rng=0), DATA,
                                  DATA_POOL),
    "coordinatewise_private_median": (lambda d: dp.coordinatewise_private_median(d, 1.0, (-5.0, 5.0), bins=50,
                                                                                  rng=0), DATA, DATA_POOL),
    "coinpress_mean": (lambda d: dp.coinpress_mean(d, 0.5, 10.0, rng=0), DATA, DATA_POOL),
    "DPRidgeRegression.fit": (lambda r: dp.DPRidgeRegression(x_bound=1.0, y_bound=3.0, rng=0).fit(*_xy(r)), REG,
                              _pool()),
    "DPLogisticRegression.fit": (lambda r: dp.DPLogisticRegression(x_bound=1.0, classes=[0, 1, 2], rng=0)
                                 .fit(*_xc(r)), CLF, _pool(3)),
    "DPRegressogram.fit": (lambda r: dp.DPRegressogram(low=-3.0, high=3.0, y_bound=3.0, rng=0).fit(r[:, :1], r[:, 2]),
                           REG, _pool()),
    "DPSGDRegressor.fit": (lambda r: dp.DPSGDRegressor(steps=5, x_bound=1.0, y_bound=3.0, expected_batch_size=8.0,
                                                       rng=0).fit(*_xy(r)), REG, _pool()),
    "DPSGDClassifier.fit": (lambda r: dp.DPSGDClassifier(steps=5, x_bound=1.0, expected_batch_size=8.0,
                                                         classes=[0, 1, 2], rng=0).fit(*_xc(r)), CLF, _pool(3)),
    "DPSGDQuantileRegressor.fit": (lambda r: dp.DPSGDQuantileRegressor(steps=5, x_bound=1.0, expected_batch_size=8.0,
                                                                       rng=0).fit(*_xy(r)), REG, _pool()),
    "dpcp_interval": (lambda r: dp.dpcp_interval(MarkedRidge(x_bound=1.0, y_bound=3.0), *_xy(r), np.zeros((2, 2)),
                                                 epsilon=4.0, training_share=0.25, bound=3.0, bins=50, n=2000, rng=0),
                      REG, _pool()),
    "dpcp_set": (lambda r: dp.dpcp_set(MarkedLogistic(x_bound=1.0), *_xc(r), np.zeros((2, 2)), epsilon=4.0,
                                       training_share=0.25, bins=50, classes=[0, 1], n=2000, rng=0),
                 [_records(40, labels=2, marks=(NAN, BAD_ROW, WARN))], _pool(2)),
    "private_sufficient_statistics": (lambda r: dp.private_sufficient_statistics(*_xy(r), x_bound=1.0, y_bound=3.0,
                                                                                 rng=0), REG, _pool()),
}


@pytest.mark.parametrize("entry", sorted(PLAIN_ENTRIES))
def test_extreme_records_never_make_one_neighbour_speak(entry):
    fn, bases, pool = PLAIN_ENTRIES[entry]
    problems = search(fn, bases, pool, seed=100 + sorted(PLAIN_ENTRIES).index(entry))
    assert not problems, f"{entry}:\n  " + "\n  ".join(problems[:10])


# --------------------------------------------------------------------------- every private entry point is searched

#: private entry points searched elsewhere in this module
SCALE_ENTRIES = ("scale.private_quantile", "scale.pps_private_quantile", "scale.dpcp_quantile",
                 "scale.unbounded_private_quantile", "scale.private_depth_median", "scale.model_scores")

#: private entry points not searched here, with the reason
NOT_SEARCHED = {
    "laplace_mechanism": "releases a query answer the caller computed (no records); its domain refusal is checked "
                         "in tests/test_private_errors.py",
    "gaussian_mechanism": "releases a query answer the caller computed (no records); tests/test_private_errors.py",
    "exponential_mechanism": "utilities the caller computed (no records)",
    "gumbel_max_sample": "logits the caller computed (no records)",
    "noisy_class_counts": "counts, not records; searched through MondrianPrivateConformalClassifier.calibrate",
    "private_tukey_median_2d": "the exact sampler's near-duplicate, collinear and denormal families are searched in "
                               "tests/test_tukey_exact.py",
}

#: what makes an exported name a private release (checked below, so that a new one cannot be forgotten)
_PRIVATE_NAME = ("private", "DP", "dp_", "dpcp", "pcoqs_quantile", "opendp_quantile", "laplace_histogram_quantile",
                 "laplace_mechanism", "gaussian_mechanism", "exponential_mechanism", "gumbel_max_sample",
                 "noisy_class_counts", "coinpress_mean", "Mondrian")
_NOT_RELEASES = {"check_dp_trainer", "dp_sgd_epsilon", "dp_sgd_noise_multiplier", "dpcp_levels",
                 "private_quantile_level", "private_quantile_miscoverage_bound", "private_quantile_privacy_loss",
                 "private_quantile_probabilities", "exponential_mechanism_probabilities", "opendp_quantile_level",
                 "opendp_quantile_probabilities", "pcoqs_corrected_level", "pps_privacy_loss",
                 "pps_quantile_probabilities", "pps_corrected_level", "pps_optimal_gamma", "pps_choose_m",
                 "adaptive_privacy_account", "pure_dp_to_zcdp", "zcdp_to_approx_dp"}


def test_every_private_entry_point_is_searched():
    from dpcp_tutorial import _EXPORTS

    searched = {key.split(" ")[0].split(".")[0] for key in (*MODEL_ENTRIES, *PLAIN_ENTRIES)}
    private = {name for name in _EXPORTS if any(part in name for part in _PRIVATE_NAME)} - _NOT_RELEASES
    missing = sorted(private - searched - set(NOT_SEARCHED))
    assert not missing, f"add these private entry points to the neighbour search (or to NOT_SEARCHED): {missing}"
    from dpcp_tutorial import scale

    assert set(SCALE_ENTRIES) >= {f"scale.{n}" for n in scale.__all__ if n not in ("local_cluster",
                                                                                  "simulated_scores",
                                                                                  "score_histogram")}


# --------------------------------------------------------------------------- the Dask releases

@pytest.mark.slow
def test_scale_scores_never_make_one_neighbour_speak():
    """model_scores + private_quantile on Dask: unseen and missing categories, unknown labels, NaN features,
    a pipeline's one-hot encoder that refuses a record, a model that warns or overflows on one record."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from dpcp_tutorial import scale

    gen = np.random.default_rng(7)
    train = pd.DataFrame({"city": gen.choice(["a", "b"], 60), "x0": gen.normal(size=60), "x1": gen.normal(size=60)})
    train["y"] = train.x0 + (train.city == "a") + 0.1 * gen.normal(size=60)
    train["label"] = (train.x0 > 0).astype(int)
    encode = make_column_transformer((OneHotEncoder(), ["city"]), remainder="passthrough")
    regressor = make_pipeline(encode, Ridge()).fit(train[["city", "x0", "x1"]], train.y)
    classifier = make_pipeline(make_column_transformer((OneHotEncoder(), ["city"]), remainder="passthrough"),
                               LogisticRegression()).fit(train[["city", "x0", "x1"]], train.label)
    marked = MarkedRegressor().fit(np.zeros((1, 2)))

    base = train.iloc[:24].reset_index(drop=True)
    extremes = pd.DataFrame({"city": ["c", None, "a", "b", "a", "a"], "x0": [0.1, 0.2, np.nan, OVERFLOW, WARN, NAN],
                             "x1": [0.0, 0.0, 0.0, 0.0, 1e100, 0.0], "y": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
                             "label": [0, 1, 1, 7, 0, 1]})
    releases = {
        "residual, one-hot pipeline": lambda f: scale.private_quantile(
            scale.model_scores(f, regressor, ["city", "x0", "x1"], "y", bound=3.0), 0.1, 1.0, bins=20, n=100,
            rng=0),
        "lac, one-hot pipeline": lambda f: scale.private_quantile(
            scale.model_scores(f, classifier, ["city", "x0", "x1"], "label", kind="lac"), 0.1, 1.0, bins=20, n=100,
            rng=0),
        "residual, a model that warns and overflows": lambda f: scale.private_quantile(
            scale.model_scores(f, marked, ["x0", "x1"], "y", bound=3.0), 0.1, 1.0, bins=20, rng=0, n=100),
    }
    problems = []
    for what, release in releases.items():
        def run(frame):
            return release(dd.from_pandas(frame, npartitions=2))

        first = _outcome(run, base)
        assert first[0][0] == "released", (what, first)
        for k in range(len(extremes)):
            row = extremes.iloc[k:k + 1]
            neighbours = {"add": pd.concat([base, row], ignore_index=True),
                          "replace": pd.concat([base.iloc[1:], row], ignore_index=True)}
            for how, frame in neighbours.items():
                second = _outcome(run, frame)
                if second != first:
                    problems.append(f"{what}, {how} {row.to_dict('records')}: {first} versus {second}")
    assert not problems, "\n".join(problems)


def test_a_model_warning_inside_calibrate_is_dropped_and_the_filters_restored():
    """The shared context drops the model's warnings inside a private path and leaves the caller's filters alone."""
    before = list(warnings.filters)
    model = dp.PrivateSplitConformalRegressor(_REG_MODEL, 0.2, 2.0, bound=3.0, bins=50, prefit=True, rng=0)
    X, y = _xy(REG[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.calibrate(X, y)
    assert [w.category for w in caught if not issubclass(w.category, dp.ReleaseWarning)] == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _REG_MODEL.predict(X)                       # outside a private path the model still speaks
    assert {UserWarning, RuntimeWarning} <= {w.category for w in caught}
    assert warnings.filters == before


def test_nan_probability_rows_and_unseen_labels_take_the_worst_score():
    """The per-record rule of the private classification scores, against a direct computation."""
    from dpcp_tutorial._split_core import private_classification_scores
    from dpcp_tutorial.conformal import lac_score

    proba = np.array([[0.2, 0.8], [np.nan, 0.5], [np.inf, 0.0], [1.2, -0.2], [0.9, 0.9], [0.5, 0.5], [0.3, 0.7]])
    y = np.array([1, 0, 0, 0, 1, 2, -1])
    got = private_classification_scores("lac", proba, y)
    assert np.array_equal(got, [lac_score(proba[:1], y[:1])[0], 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    aps = private_classification_scores("aps", proba, y)
    assert aps[0] == pytest.approx(0.8) and np.all(aps[1:] == 1.0)


@pytest.mark.slow
def test_dask_score_and_data_releases_never_make_one_neighbour_speak():
    """The Dask releases on the extreme scores and data above (dask arrays, two partitions)."""
    da = pytest.importorskip("dask.array")
    from dpcp_tutorial import scale

    def chunked(fn):
        return lambda rows: fn(da.from_array(rows, chunks=(max(1, (len(rows) + 1) // 2), rows.shape[1])))

    entries = {
        "scale.private_quantile": (chunked(lambda s: scale.private_quantile(s[:, 0], 0.1, 1.0, bins=50, n=100,
                                                                            rng=0)), SCORES, SCORE_POOL),
        "scale.pps_private_quantile": (chunked(lambda s: scale.pps_private_quantile(s[:, 0], 0.1, 1.0, m=20, n=100,
                                                                                    rng=0)), SCORES, SCORE_POOL),
        "scale.dpcp_quantile": (chunked(lambda s: scale.dpcp_quantile(s[:, 0], 0.1, 0.3, 0.7, 1e-6, bins=50, n=2000,
                                                                      rng=0)), SCORES, SCORE_POOL),
        "scale.unbounded_private_quantile": (chunked(lambda s: scale.unbounded_private_quantile(s[:, 0], 0.1, 1.0,
                                                                                                n=100, rng=0)),
                                             SCORES, UNBOUNDED_POOL),
        "scale.private_depth_median": (chunked(lambda d: scale.private_depth_median(
            d, 1.0, candidates=_GRID, directions=dp.random_directions(16, 2, rng=0), rng=0)), DATA, DATA_POOL),
        "scale.private_depth_median (private prior)": (chunked(lambda d: scale.private_depth_median(
            d, 1.0, prior="private", n_candidates=50, rng=0)), DATA, DATA_POOL),
    }
    problems = []
    for k, (name, (fn, bases, pool)) in enumerate(entries.items()):
        problems += [f"{name}: {p}" for p in search(fn, bases, pool, seed=200 + k, count=2)]
    assert not problems, "\n".join(problems[:10])


def test_a_missing_value_of_a_nullable_dask_column_is_refused_like_nan():
    """pd.NA in a nullable (Float64, Int64) Dask column meets the domain check: the one NaN message, wherever it is."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from dpcp_tutorial import scale

    gen = np.random.default_rng(3)
    frame = pd.DataFrame({"a": pd.array(gen.normal(size=12), dtype="Float64"),
                          "b": pd.array(gen.integers(-2, 3, 12), dtype="Int64")})
    messages = set()
    for column, row in (("a", 0), ("a", 11), ("b", 5)):
        holed = frame.copy()
        holed.loc[row, column] = pd.NA
        with pytest.raises(ValueError) as info:
            scale.private_depth_median(dd.from_pandas(holed, npartitions=3), 1.0, candidates=_GRID,
                                       directions=dp.random_directions(8, 2, rng=0), rng=0)
        messages.add(str(info.value))
    with pytest.raises(ValueError) as info:
        scale.private_depth_median(dd.from_pandas(frame.astype(float).assign(a=np.nan), npartitions=3), 1.0,
                                   candidates=_GRID, directions=dp.random_directions(8, 2, rng=0), rng=0)
    assert messages == {str(info.value)}
    scores = pd.Series(pd.array(gen.uniform(size=30), dtype="Float64"))
    scores[7] = pd.NA
    with pytest.raises(ValueError, match="scores contains NaN"):
        scale.private_quantile(dd.from_pandas(scores, npartitions=2), 0.1, 1.0, bins=20, n=100, rng=0)


def test_a_record_the_encoder_refuses_scores_one_and_the_others_score_as_alone():
    """model_scores' per-record rule: in a partition holding unseen and missing categories, each record gets its
    score alone (the model's output, or 1 where the model refuses it), and no category is quoted anywhere."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from dpcp_tutorial import scale

    gen = np.random.default_rng(11)
    train = pd.DataFrame({"city": gen.choice(["a", "b"], 40), "x0": gen.normal(size=40)})
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["city"]), remainder="passthrough"),
                          Ridge()).fit(train, train.x0 + (train.city == "a"))
    frame = pd.DataFrame({"city": ["a", "b", "secret-city", "a", None, "b", "a", "another", "b"],
                          "x0": np.linspace(-1, 1, 9), "y": np.linspace(0, 2, 9)})

    def scores(f):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = scale.model_scores(dd.from_pandas(f, npartitions=1), model, ["city", "x0"], "y",
                                     bound=3.0).compute(scheduler="sync").to_numpy()
        assert not [w for w in caught if "secret" in str(w.message)]
        return out

    together = scores(frame)
    alone = np.array([scores(frame.iloc[i:i + 1])[0] for i in range(len(frame))])
    np.testing.assert_allclose(together, alone, rtol=1e-12, atol=0)
    assert np.array_equal(together == 1.0, np.isin(np.arange(9), [2, 4, 7]))
    nullable = frame.assign(x0=pd.array([None, *frame.x0[1:]], dtype="Float64"),
                            y=pd.array([*frame.y[:-1], None], dtype="Float64"))     # pd.NA: a missing value
    holed = scores(nullable)
    assert holed[0] == holed[-1] == 1.0
    np.testing.assert_allclose(holed[1:-1], together[1:-1], rtol=1e-12, atol=0)
