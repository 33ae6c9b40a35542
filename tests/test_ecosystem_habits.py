"""Names and habits of the ecosystem: alpha is the miscoverage, NotFittedError, messages that suggest what works."""

import inspect
import math
import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.utils.validation import check_is_fitted

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
    dpcp_quantile,
    private_quantile,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(400, 2))
Y = X[:, 0] + 0.1 * RNG.standard_normal(400)
LABELS = (X[:, 0] > 0).astype(int)
RIDGE = DPRidgeRegression(x_bound=1.5, y_bound=2.0)

REGRESSORS = {
    "split": lambda **kw: SplitConformalRegressor(LinearRegression(), **kw),
    "private split": lambda **kw: PrivateSplitConformalRegressor(LinearRegression(), bound=2.0, n=150, **kw),
    "normalized": lambda **kw: PrivateNormalizedConformalRegressor(LinearRegression(), None, y_bound=2.0, n=150,
                                                                   **kw),
    "cqr": lambda **kw: PrivateConformalizedQuantileRegressor(LinearRegression(), LinearRegression(),
                                                             score_bound=2.0, n=150, **kw),
}
CLASSIFIERS = {
    "split": lambda **kw: SplitConformalClassifier(LogisticRegression(), **kw),
    "private split": lambda **kw: PrivateSplitConformalClassifier(LogisticRegression(), n=150, **kw),
    "mondrian": lambda **kw: MondrianPrivateConformalClassifier(LogisticRegression(), classes=[0, 1], **kw),
}


def _run(est, y):
    est.fit(X[:200], y[:200])
    if hasattr(est, "calibrate"):
        est.calibrate(X[200:], y[200:])
    return est


@pytest.mark.parametrize("kind, name", [("reg", n) for n in REGRESSORS] + [("clf", n) for n in CLASSIFIERS])
def test_alpha_above_one_half_is_refused_with_confidence_level_advice(kind, name):
    make, y = (REGRESSORS[name], Y) if kind == "reg" else (CLASSIFIERS[name], LABELS)
    with pytest.raises(ValueError, match="confidence_level") as err:
        _run(make(alpha=0.9), y)
    assert "alpha=0.1" in str(err.value) and "allow_low_coverage=True" in str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _run(make(alpha=0.9, allow_low_coverage=True), y)
    assert est.get_params()["allow_low_coverage"] is True


def test_dpcp_refuses_alpha_above_one_half():
    for est in (DPCPRegressor(RIDGE, alpha=0.9, bound=2.0, n=400),
                DPCPClassifier(DPLogisticRegression(x_bound=1.5, classes=[0, 1]), alpha=0.9, n=400)):
        with pytest.raises(ValueError, match="confidence_level"):
            est.fit(X, Y if isinstance(est, DPCPRegressor) else LABELS)


@pytest.mark.parametrize("kind, name", [("reg", n) for n in REGRESSORS] + [("clf", n) for n in CLASSIFIERS])
def test_not_fitted_is_sklearns_not_fitted_error(kind, name):
    make = REGRESSORS[name] if kind == "reg" else CLASSIFIERS[name]
    est = make()
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    method = est.predict_interval if kind == "reg" else est.predict_set
    with pytest.raises(NotFittedError):
        method(X[:3])
    if hasattr(est, "calibrate"):
        with pytest.raises(NotFittedError):
            est.calibrate(X[200:], (Y if kind == "reg" else LABELS)[200:])
    assert issubclass(NotFittedError, ValueError)


def test_dpcp_not_fitted():
    with pytest.raises(NotFittedError):
        DPCPRegressor(RIDGE, bound=2.0).predict_interval(X[:3])


@pytest.mark.parametrize("kind, name", [("reg", n) for n in REGRESSORS] + [("clf", n) for n in CLASSIFIERS])
def test_fitted_estimators_state_their_number_of_features(kind, name):
    make, y = (REGRESSORS[name], Y) if kind == "reg" else (CLASSIFIERS[name], LABELS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _run(make(), y)
    assert est.n_features_in_ == X.shape[1]


def test_dpcp_states_its_number_of_features():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = [DPCPRegressor(RIDGE, bound=2.0, n=400, rng=0).fit(X, Y),
                  DPCPClassifier(DPLogisticRegression(x_bound=1.5, classes=[0, 1]), n=400, rng=0).fit(X, LABELS)]
    assert [est.n_features_in_ for est in fitted] == [X.shape[1]] * 2


# the quantities the messages quote (not parameters they suggest)
_QUOTED = {"beta", "alpha1", "epsilon1", "epsilon2", "delta"}


def _params(callee):
    if inspect.isfunction(callee):
        return set(inspect.signature(callee).parameters)
    return set(callee.get_params(deep=False))


def _infeasible_messages():
    small = dict(n=8)
    cases = [
        (private_quantile, lambda: private_quantile(RNG.uniform(size=20), 0.05, 1.0, rng=0)),
        (dpcp_quantile, lambda: dpcp_quantile(RNG.uniform(size=20), 0.1, 0.3, 0.7, 1e-6, rng=0)),
    ]
    ests = [DPCPRegressor(RIDGE, bound=2.0, **small),
            PrivateSplitConformalRegressor(LinearRegression(), bound=2.0, **small),
            PrivateSplitConformalClassifier(LogisticRegression(), **small),
            PrivateNormalizedConformalRegressor(LinearRegression(), None, y_bound=2.0, **small),
            PrivateConformalizedQuantileRegressor(LinearRegression(), LinearRegression(), score_bound=2.0, **small)]
    for est in ests:
        y = LABELS if isinstance(est, PrivateSplitConformalClassifier) else Y
        cases.append((est, lambda est=est, y=y: _run(est, y)))
    for callee, call in cases:
        with pytest.raises(ValueError, match="infeasible|cannot guarantee") as err:
            call()
        yield callee, str(err.value)


def test_infeasibility_messages_suggest_only_what_the_callee_accepts():
    seen = 0
    for callee, message in _infeasible_messages():
        assert "variant='original'" not in message
        named = set(re.findall(r"\b([a-z_][a-z0-9_]*)=", message)) - _QUOTED
        assert named <= _params(callee), (callee, named - _params(callee), message)
        for word in re.findall(r"(?:a larger|a smaller|fewer|more) ([a-z_0-9]+)", message):
            assert word in _params(callee) | {"scores", "points"}, (callee, word, message)
        seen += 1
    assert seen == 7


# ---------------------------------------------------------------------------
# labels as the model knows them: a public classes= in any order
# ---------------------------------------------------------------------------

def _health(size, gen):
    Z = gen.normal(size=(size, 2))
    names = np.array(["poor", "fair", "good"])
    return Z, names[(Z[:, 0] > 0).astype(int) + (Z[:, 1] > 0.5).astype(int)]


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.ReleaseWarning")
def test_public_classes_in_any_order_with_string_labels():
    gen = np.random.default_rng(3)
    Z, lab = _health(6000, gen)
    model = LogisticRegression().fit(Z[:2000], lab[:2000])          # classes_ sorted: fair, good, poor
    order = ["good", "poor", "fair"]
    clf = PrivateSplitConformalClassifier(model, alpha=0.1, epsilon=2.0, n=2000, prefit=True, rng=0, classes=order)
    clf.calibrate(Z[2000:4000], lab[2000:4000])
    assert clf.classes_.tolist() == order and 0 < clf.qhat_ < 1
    proba = clf.predict_proba(Z[4000:])
    assert np.allclose(proba, model.predict_proba(Z[4000:])[:, [1, 2, 0]])
    sets = clf.predict_set(Z[4000:])
    column = {c: j for j, c in enumerate(order)}
    covered = sets[np.arange(2000), [column[v] for v in lab[4000:]]].mean()
    assert covered >= 0.9 - 3 * math.sqrt(0.09 / 2000)
    assert any("classes = ['good', 'poor', 'fair']" in p for p in clf.privacy_.public)


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.ReleaseWarning")
def test_labels_outside_the_public_set_score_worst_and_are_never_quoted():
    gen = np.random.default_rng(4)
    Z, lab = _health(4000, gen)
    model = LogisticRegression().fit(Z[:2000], lab[:2000])
    odd = lab[2000:].astype(object)
    odd[:50] = "not in the codebook"
    odd[50:60] = None
    qhat = {}
    for name, y in (("clean", lab[2000:]), ("odd", odd)):
        est = PrivateSplitConformalClassifier(model, n=2000, prefit=True, rng=1, classes=["fair", "good", "poor"])
        qhat[name] = est.calibrate(Z[2000:], y).qhat_
    assert qhat["odd"] >= qhat["clean"]
    with pytest.raises(ValueError, match="not the public label set") as err:
        PrivateSplitConformalClassifier(model, n=2000, prefit=True, classes=["a", "b", "c"]).calibrate(Z[2000:], odd)
    assert "codebook" in str(err.value) and "not in the codebook" not in str(err.value)


def test_a_dp_trainer_receives_the_public_classes():
    gen = np.random.default_rng(5)
    Z, lab = _health(3000, gen)
    numeric = np.searchsorted(["fair", "good", "poor"], lab) + 1          # labels 1..3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = PrivateSplitConformalClassifier(DPLogisticRegression(epsilon=2.0, x_bound=3.0), n=1000, rng=0,
                                              classes=[3, 2, 1]).fit(Z[:2000], numeric[:2000])
        clf.calibrate(Z[2000:], numeric[2000:])
    assert clf.estimator_.classes_.tolist() == [1, 2, 3] and clf.estimator.classes is None
    assert clf.predict_set(Z[:5]).shape == (5, 3)


def test_label_advice_follows_the_privacy_rule():
    from dpcp_tutorial import lac_score
    with pytest.raises(TypeError) as err:
        lac_score(np.full((2, 2), 0.5), np.array(["a", "b"]))
    assert "LabelEncoder" not in str(err.value) and "public label set" in str(err.value)


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.ReleaseWarning")
def test_dpcp_classifier_columns_follow_the_public_order():
    gen = np.random.default_rng(6)
    Z, lab = _health(3000, gen)
    order = ["poor", "fair", "good"]
    model = DPCPClassifier(DPLogisticRegression(x_bound=3.0), epsilon=4.0, classes=order, n=3000, rng=0)
    model.fit(Z, lab)
    assert model.classes_.tolist() == order and model.estimator_.classes_.tolist() == ["fair", "good", "poor"]
    assert np.allclose(model.predict_proba(Z[:4]), model.estimator_.predict_proba(Z[:4])[:, [2, 0, 1]])
    assert set(model.predict(Z[:50])) <= set(order) and model.predict_set(Z[:4]).shape == (4, 3)


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.ReleaseWarning")
def test_mondrian_columns_follow_the_public_order():
    gen = np.random.default_rng(7)
    Z, lab = _health(6000, gen)
    model = LogisticRegression().fit(Z[:2000], lab[:2000])              # classes_: fair, good, poor
    order = ["good", "poor", "fair"]
    est = MondrianPrivateConformalClassifier(model, classes=order, epsilon=2.0, prefit=True, rng=0)
    est.calibrate(Z[2000:4000], lab[2000:4000])
    assert est.classes_.tolist() == order and est.qhat_.shape == (3,)
    assert np.allclose(est.predict_proba(Z[:4]), model.predict_proba(Z[:4])[:, [1, 2, 0]])
    sets = est.predict_set(Z[4000:])
    column = {c: j for j, c in enumerate(order)}
    covered = sets[np.arange(2000), [column[v] for v in lab[4000:]]]
    for c in order:                                   # per-class coverage, within binomial noise
        mask = lab[4000:] == c
        assert covered[mask].mean() >= 0.9 - 3 * math.sqrt(0.09 / mask.sum()), c
