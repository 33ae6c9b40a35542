"""The inputs engineers bring: DataFrames with names and categories, reordered columns, NaN, string labels.

One rule everywhere (``dpcp_tutorial._validation.check_features`` and ``model_outputs``): a DataFrame's columns
are matched by name, the model receives the frame it was fitted on, NaN features go to the model, a score that
comes out NaN or infinite is the worst score at calibration and the whole public range at prediction, in memory
as on Dask.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from dpcp_tutorial import (
    DPCPClassifier,
    DPCPRegressor,
    DPLogisticRegression,
    DPRidgeRegression,
    MondrianPrivateConformalClassifier,
    PrivateConformalizedQuantileRegressor,
    PrivateNormalizedConformalRegressor,
    PrivateSplitConformalClassifier,
    PrivateSplitConformalRegressor,
    SplitConformalClassifier,
    SplitConformalRegressor,
    differential_cp_interval,
    differential_cp_set,
)
from dpcp_tutorial import ReleaseWarning, private_split

pytestmark = pytest.mark.filterwarnings("ignore::dpcp_tutorial.ReleaseWarning")

N = 600


def frame(n=N, seed=0, nan=0.0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.uniform(-1, 1, n), "dose": rng.uniform(-1, 1, n)})
    if nan:
        X.loc[rng.uniform(size=n) < nan, "dose"] = np.nan
    y = X["age"].to_numpy() - np.nan_to_num(X["dose"].to_numpy()) + 0.2 * rng.standard_normal(n)
    labels = np.where(y > 0.3, "high", np.where(y < -0.3, "low", "mid"))
    return X, y, labels


def ridge():
    return DPRidgeRegression(epsilon=1.0, x_bound=math.sqrt(2), y_bound=3.0, rng=1)


def logistic(classes=("low", "mid", "high")):
    return DPLogisticRegression(epsilon=1.0, x_bound=math.sqrt(2), classes=list(classes), rng=1)


REGRESSORS = {
    "split": lambda: SplitConformalRegressor(LinearRegression()),
    "private split": lambda: PrivateSplitConformalRegressor(ridge(), bound=3.0, n=300, rng=0),
    "normalized": lambda: PrivateNormalizedConformalRegressor(ridge(), None, y_bound=3.0, n=300, rng=0),
    "cqr": lambda: PrivateConformalizedQuantileRegressor(ridge(), ridge(), score_bound=3.0, n=300, rng=0),
}
CLASSIFIERS = {
    "split": lambda: SplitConformalClassifier(LogisticRegression(), classes=["low", "mid", "high"]),
    "private split": lambda: PrivateSplitConformalClassifier(logistic(), classes=["low", "mid", "high"], n=300,
                                                             epsilon=5.0, rng=0),
    "mondrian": lambda: MondrianPrivateConformalClassifier(logistic(), classes=["low", "mid", "high"], epsilon=5.0,
                                                            rng=0),
}


def _fit_calibrate(est, X, y):
    return est.fit(X.iloc[:300], y[:300]).calibrate(X.iloc[300:], y[300:])


def _output(est, X):
    return est.predict_interval(X) if hasattr(est, "predict_interval") else est.predict_set(X)


@pytest.mark.parametrize("kind, name", [("r", k) for k in REGRESSORS] + [("c", k) for k in CLASSIFIERS])
def test_frames_are_matched_by_name_and_never_misread(kind, name):
    X, y, labels = frame()
    est = (REGRESSORS if kind == "r" else CLASSIFIERS)[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # no feature-name warning from scikit-learn, ever
        warnings.filterwarnings("ignore", category=ReleaseWarning)
        _fit_calibrate(est, X, y if kind == "r" else labels)
        assert est.n_features_in_ == 2 and list(est.feature_names_in_) == ["age", "dose"]
        expected = _output(est, X)
        np.testing.assert_array_equal(_output(est, X[["dose", "age"]]), expected)     # reordered: read by name
        np.testing.assert_array_equal(_output(est, X.to_numpy()), expected)           # an array: positional
    with pytest.raises(ValueError, match=r"missing \['dose'\]"):
        _output(est, X[["age"]])
    with pytest.raises(ValueError, match=r"unexpected \['extra'\]"):
        _output(est, X.assign(extra=1.0))


@pytest.mark.parametrize("estimator", [ridge(), logistic()])
def test_the_package_dp_models_take_frames(estimator):
    X, y, labels = frame()
    target = y if isinstance(estimator, DPRidgeRegression) else labels
    model = estimator.fit(X, target)
    assert list(model.feature_names_in_) == ["age", "dose"]
    expected = model.predict(X)
    np.testing.assert_array_equal(model.predict(X[["dose", "age"]]), expected)
    with pytest.raises(ValueError, match=r"missing \['dose'\]"):
        model.predict(X.rename(columns={"dose": "Dose"}))
    with pytest.raises(ValueError, match="fitted without feature names"):
        type(estimator)(**estimator.get_params()).fit(X.to_numpy(), target).predict(X)
    with pytest.raises(ValueError, match="NaN"):                     # fit: the data domain, one fixed message
        type(estimator)(**estimator.get_params()).fit(frame(nan=0.1)[0], target)


def test_dpcp_and_differential_cp_take_frames():
    X, y, labels = frame(2000)
    reg = DPCPRegressor(ridge(), epsilon=2.0, bound=3.0, n=2000, rng=0).fit(X, y)
    assert list(reg.feature_names_in_) == ["age", "dose"]
    np.testing.assert_array_equal(reg.predict_interval(X[["dose", "age"]]), reg.predict_interval(X))
    clf = DPCPClassifier(logistic(), epsilon=2.0, classes=["low", "mid", "high"], n=2000, rng=0).fit(X, labels)
    np.testing.assert_array_equal(clf.predict_set(X[["dose", "age"]]), clf.predict_set(X))
    with pytest.raises(ValueError, match=r"X_test does not have the columns"):
        differential_cp_interval(ridge(), X, y, X[["age"]])
    out = differential_cp_interval(ridge(), X, y, X.iloc[:5][["dose", "age"]], rng=0)
    np.testing.assert_array_equal(out, differential_cp_interval(ridge(), X, y, X.iloc[:5], rng=0))


def _categorical_data(n, seed):
    rng = np.random.default_rng(seed)
    ward = pd.Categorical(rng.choice(["icu", "surgery", "general"], n), categories=["icu", "surgery", "general"])
    X = pd.DataFrame({"ward": ward, "age": rng.uniform(20, 90, n), "lab": rng.normal(size=n)})
    y = (X["ward"] == "icu") * 2.0 + X["age"] / 50 + 0.3 * rng.standard_normal(n)
    return X, y.to_numpy()


def _prefit_column_pipeline(X, y):
    columns = ColumnTransformer([("ward", OneHotEncoder(handle_unknown="ignore"), ["ward"]),
                                 ("num", "passthrough", ["age", "lab"])])
    return FrozenEstimator(make_pipeline(columns, HistGradientBoostingRegressor(max_iter=10)).fit(X, y))


def test_a_prefit_column_transformer_pipeline_that_selects_columns_by_name_works(monkeypatch):
    X, y = _categorical_data(800, 1)
    model = _prefit_column_pipeline(X.iloc[:400], y[:400])
    seen = _captured_scores(monkeypatch)
    est = PrivateSplitConformalRegressor(model, bound=5.0, prefit=True, n=400, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ReleaseWarning)
        est.calibrate(X.iloc[400:], y[400:])
        assert list(est.feature_names_in_) == ["ward", "age", "lab"]
        out = est.predict_interval(X.iloc[:20][["lab", "ward", "age"]])
    np.testing.assert_array_equal(out, est.predict_interval(X.iloc[:20]))
    # the same frame (names, dtypes, the categorical column) reaches the model on Dask: the same scores
    on_dask = _dask_scores(X.iloc[400:].assign(y=y[400:]), model, ["ward", "age", "lab"], "y", "residual", 5.0)
    np.testing.assert_allclose(seen[0], on_dask, rtol=0, atol=1e-12)


def _captured_scores(monkeypatch):
    seen = []
    original = private_split._release_threshold

    def recording(owner, scores, **kwargs):
        seen.append(np.array(scores))
        return original(owner, scores, **kwargs)

    monkeypatch.setattr(private_split, "_release_threshold", recording)
    return seen


def _dask_scores(df, model, features, target, kind, bound=None):
    dd = pytest.importorskip("dask.dataframe")
    from dpcp_tutorial.scale import model_scores

    ddf = dd.from_pandas(df, npartitions=3)
    return model_scores(ddf, model, features, target, kind=kind, bound=bound).compute(scheduler="synchronous") \
        .to_numpy()


@pytest.mark.parametrize("model", ["hist", "linear"])
def test_nan_features_score_the_same_in_memory_and_on_dask(monkeypatch, model):
    """HistGradientBoosting handles NaN (its own output); LinearRegression refuses it (the record's score is 1)."""
    X, y, _ = frame(N, seed=3, nan=0.2)
    fit_X = X.iloc[:300] if model == "hist" else X.iloc[:300].fillna(0.0)
    fitted = (HistGradientBoostingRegressor(max_iter=20) if model == "hist" else LinearRegression()) \
        .fit(fit_X, y[:300])
    seen = _captured_scores(monkeypatch)
    est = PrivateSplitConformalRegressor(fitted, bound=2.0, prefit=True, n=300, rng=0)
    est.calibrate(X.iloc[300:], y[300:])
    in_memory = seen[0]
    on_dask = _dask_scores(X.iloc[300:].assign(y=y[300:]), fitted, ["age", "dose"], "y", "residual", 2.0)
    # the same rule; a linear model's refused batches are re-scored in halves, whose floating-point kernels may
    # sum in another order (last bit)
    np.testing.assert_allclose(in_memory, on_dask, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(in_memory == 1.0, on_dask == 1.0)
    missing = X.iloc[300:]["dose"].isna().to_numpy()
    assert missing.any()
    if model == "linear":
        assert np.all(in_memory[missing] == 1.0)      # refused alone: the worst score
    else:
        assert not np.all(in_memory[missing] == 1.0)  # the model's own output
    if model == "linear":
        with pytest.raises(ValueError):                # prediction: what the model gives (it refuses NaN)
            est.predict_interval(X.iloc[300:])
    else:
        assert np.isfinite(est.predict_interval(X.iloc[300:])).all()


class FirstColumn(RegressorMixin, BaseEstimator):
    """A public model that passes NaN features through: its prediction is the first feature."""

    def fit(self, X, y):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        return np.asarray(X, dtype=float)[:, 0]


class Uniform(ClassifierMixin, BaseEstimator):
    """A public classifier whose probabilities are NaN where the first feature is."""

    def fit(self, X, y):
        self.classes_ = np.array(["high", "low", "mid"])
        return self

    def predict_proba(self, X):
        first = np.asarray(X, dtype=float)[:, :1]
        return np.full((first.shape[0], 3), 1 / 3) + 0.0 * first


def test_nan_predictions_give_the_whole_range_and_the_worst_score():
    X, y, labels = frame(N, seed=4)
    cal = X.iloc[300:].to_numpy().copy()
    cal[:10, 0] = np.nan
    test = X.iloc[:4].to_numpy().copy()
    test[1, 0] = np.nan
    model = FirstColumn().fit(X.to_numpy(), y)
    seen = []
    est = PrivateSplitConformalRegressor(model, bound=3.0, prefit=True, n=300, rng=0)
    original = private_split._release_threshold
    try:
        private_split._release_threshold = lambda owner, scores, **kw: (seen.append(scores), original(
            owner, scores, **kw))[1]
        est.calibrate(cal, y[300:])
    finally:
        private_split._release_threshold = original
    assert np.all(seen[0][:10] == 1.0)                        # a NaN prediction: the worst score
    out = est.predict_interval(test)
    assert np.all(np.isinf(out[1])) and np.isfinite(np.delete(out, 1, axis=0)).all()
    clf = PrivateSplitConformalClassifier(Uniform().fit(X, labels), classes=["low", "mid", "high"], prefit=True,
                                          n=300, rng=0, epsilon=5.0)
    clf.calibrate(cal, labels[300:])
    assert clf.predict_set(test)[1].all()
    plain = SplitConformalRegressor(model, prefit=True).calibrate(cal, y[300:])
    assert np.all(plain.calibration_scores_[:10] == np.inf)
    assert np.all(np.isinf(plain.predict_interval(test)[1]))
    with pytest.raises(ValueError, match="NaN"):              # the package's DP models refuse NaN features
        ridge().fit(X, y).predict(X.iloc[:4].assign(age=np.nan))


def test_nan_classification_scores_the_same_in_memory_and_on_dask(monkeypatch):
    X, _, labels = frame(N, seed=5, nan=0.2)
    model = HistGradientBoostingClassifier(max_iter=20).fit(X.iloc[:300], labels[:300])
    seen = _captured_scores(monkeypatch)
    est = PrivateSplitConformalClassifier(model, classes=["low", "mid", "high"], prefit=True, n=300, rng=0)
    est.calibrate(X.iloc[300:], labels[300:])
    on_dask = _dask_scores(X.iloc[300:].assign(label=labels[300:]), model, ["age", "dose"], "label", "lac")
    np.testing.assert_allclose(seen[0], on_dask, rtol=0, atol=1e-15)


def test_labels_outside_the_public_set_are_never_quoted_and_never_refused():
    X, _, labels = frame(N, seed=6)
    # Mondrian: a record whose label is outside the set belongs to no class: the release is that of the data
    # without it, to the bit
    model = LogisticRegression().fit(X.iloc[:300], labels[:300])
    odd = labels[300:].copy()
    odd[7] = "unknown-code-7345"
    kept = np.arange(300) != 7
    args = dict(classes=["low", "mid", "high"], prefit=True, rng=0)
    with_odd = MondrianPrivateConformalClassifier(model, **args).calibrate(X.iloc[300:], odd)
    without = MondrianPrivateConformalClassifier(model, **args).calibrate(X.iloc[300:][kept], labels[300:][kept])
    np.testing.assert_array_equal(with_odd.qhat_, without.qhat_)
    np.testing.assert_array_equal(with_odd.noisy_counts_, without.noisy_counts_)
    # DPCP: the record does not train the model and has the worst score; which outside label it has is irrelevant
    X2, _, labels2 = frame(1000, seed=7)
    releases = []
    for code in ("unknown-a", "unknown-b"):
        odd2 = labels2.copy()
        odd2[:5] = code
        est = DPCPClassifier(logistic(), epsilon=2.0, classes=["low", "mid", "high"], n=1000, rng=0).fit(X2, odd2)
        releases.append((est.qhat_, est.estimator_.coef_.copy()))
    assert releases[0][0] == releases[1][0]
    np.testing.assert_array_equal(releases[0][1], releases[1][1])


def _two_class_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1400, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=1400) > 0).astype(np.int64)
    return X, y, LogisticRegression().fit(X[:400], y[:400])


def test_integer_labels_with_a_missing_entry_are_read_record_by_record():
    """classes=None: a missing label (NaN in a float column, <NA> in a nullable one, None in an object one)
    or a non-integer gets the worst score, like a label outside 0..K-1; no value makes calibrate refuse."""
    X, y, model = _two_class_data()
    est = PrivateSplitConformalClassifier(model, alpha=0.1, epsilon=5.0, n=1000, prefit=True, rng=0)
    Xc, yc = X[400:], y[400:]
    outside = yc.copy()
    outside[:5] = 7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = est.calibrate(Xc, outside).qhat_
        assert want < 1.0 and est.calibrate(Xc, yc).qhat_ != want
        floats = yc.astype(float)
        floats[:5] = [np.nan, 0.5, np.inf, -1.0, 2.0]
        nullable = pd.Series(yc, dtype="Int64").mask(np.arange(1000) < 5)
        objects = yc.astype(object)
        objects[:5] = [None, pd.NA, "1", True, 1.5]
        for labels in (floats, nullable, objects):
            assert est.calibrate(Xc, labels).qhat_ == want
        assert est.calibrate(Xc, yc.astype(float)).qhat_ == est.calibrate(Xc, yc).qhat_       # 1.0 is label 1
    for schema in (yc.astype(str), yc.astype(bool)):              # the dtype is the schema: refused as such
        with pytest.raises(TypeError, match="integer class indices"):
            est.calibrate(Xc, schema)


class _NoClasses(BaseEstimator):
    """A fitted probability model without ``classes_`` (a thin wrapper around a network, say)."""

    def __init__(self, inner=None):
        self.inner = inner

    def fit(self, X, y):
        self.inner_ = LogisticRegression().fit(X, y)
        return self

    def predict_proba(self, X):
        return self.inner_.predict_proba(X)


def test_a_model_without_classes_is_refused_before_any_record_is_scored():
    """The number of probability columns must be known before a private record is scored (a record the model
    refuses then gets the worst score); the model object decides, so every data set is refused alike."""
    X, y, _ = _two_class_data()
    est = PrivateSplitConformalClassifier(_NoClasses().fit(X[:400], y[:400]), n=1000, prefit=True, rng=0)
    refused = X[400:].copy()
    refused[0, 0] = np.nan                                       # LogisticRegression refuses NaN
    messages = set()
    for Xc in (X[400:], refused):
        with pytest.raises(TypeError, match="has no classes_") as err:
            est.calibrate(Xc, y[400:])
        messages.add(str(err.value))
    assert len(messages) == 1


def test_an_object_array_with_none_reaches_the_model_as_a_frame_would():
    """df.to_numpy() of mixed columns is an object array, where a missing value may be None: the model
    receives it unconverted (an imputing pipeline reads None as NaN), so None and NaN release alike; a
    response given as None is a missing response (the worst score), like NaN."""
    from sklearn.impute import SimpleImputer

    rng = np.random.default_rng(1)
    X = rng.normal(size=(700, 2))
    y = X @ [1.0, -0.5] + 0.3 * rng.normal(size=700)
    model = make_pipeline(SimpleImputer(), LinearRegression()).fit(X[:400], y[:400])
    est = PrivateSplitConformalRegressor(model, bound=3.0, epsilon=5.0, n=300, prefit=True, rng=0)
    with_nan, with_none = X[400:].astype(object), X[400:].astype(object)
    with_nan[0, 1], with_none[0, 1] = np.nan, None
    y_nan, y_none = y[400:].copy(), y[400:].astype(object)
    y_nan[3], y_none[3] = np.nan, None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = est.calibrate(with_nan, y_nan).qhat_
        assert want < 1.0
        assert est.calibrate(with_none, y_none).qhat_ == want
        assert est.calibrate(with_none, y_nan).qhat_ == want


def test_split_conformal_classifier_takes_classes_in_the_callers_order():
    X, _, labels = frame(N, seed=8)
    order = ["mid", "high", "low"]
    est = SplitConformalClassifier(LogisticRegression(), classes=order).fit(X.iloc[:300], labels[:300])
    est.calibrate(X.iloc[300:], labels[300:])
    np.testing.assert_array_equal(est.classes_, order)
    proba = est.predict_proba(X.iloc[:5])
    model_order = list(est.estimator_.classes_)
    np.testing.assert_array_equal(proba, est.estimator_.predict_proba(X.iloc[:5])[:, [model_order.index(c)
                                                                                      for c in order]])
    # a DP trainer whose classes is None is given the public set
    dp = SplitConformalClassifier(DPLogisticRegression(x_bound=2.0, rng=0), classes=order)
    dp.fit(X.iloc[:300], labels[:300])
    assert sorted(dp.estimator_.classes_.tolist()) == sorted(order)
    with pytest.raises(ValueError, match="classes_"):
        SplitConformalClassifier(LogisticRegression(), classes=["low", "high"]).fit(X.iloc[:300], labels[:300]) \
            .calibrate(X.iloc[300:], labels[300:])


def test_differential_cp_set_takes_classes_in_the_callers_order():
    X, _, labels = frame(N, seed=9)
    order = ["high", "low", "mid"][::-1]
    given = differential_cp_set(logistic().set_params(classes=None), X, labels, X.iloc[:8], rng=0,
                                classes=order)
    own = differential_cp_set(logistic(classes=sorted(order)), X, labels, X.iloc[:8], rng=0)
    np.testing.assert_array_equal(given, own[:, [sorted(order).index(c) for c in order]])
    with pytest.raises(ValueError, match="differ"):
        differential_cp_set(logistic(classes=["low", "high", "x"]), X, labels, X.iloc[:8], classes=order)


def test_normalized_and_cqr_give_missing_outputs_the_worst_score_and_the_whole_line(monkeypatch):
    from dpcp_tutorial import adaptive

    X, y, _ = frame(N, seed=10)
    Z = X.to_numpy().copy()
    Z[300:310, 0] = np.nan
    model = FirstColumn().fit(Z, y)
    seen = []
    original = adaptive.release_threshold

    def recording(owner, scores, **kwargs):
        seen.append(np.array(scores))
        return original(owner, scores, **kwargs)

    monkeypatch.setattr(adaptive, "release_threshold", recording)
    normalized = PrivateNormalizedConformalRegressor(model, None, y_bound=3.0, prefit=True, n=300, rng=0)
    normalized.calibrate(Z[300:], y[300:])
    cqr = PrivateConformalizedQuantileRegressor(model, model, score_bound=3.0, prefit=True, n=300, rng=0)
    cqr.calibrate(Z[300:], y[300:])
    assert len(seen) == 2
    for scores in seen:
        assert np.all(scores[:10] == 1.0) and np.all(scores[10:] < 1.0)
    for est in (normalized, cqr):
        assert np.all(np.isinf(est.predict_interval(Z[300:304])))
        assert np.isfinite(est.predict_interval(Z[310:314])).all()
