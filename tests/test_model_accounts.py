"""Every step of a model fitted on private data is accounted for, or the estimator refuses (chapter 7)."""

import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler

from dpcp_tutorial import (
    DPCPRegressor,
    DPLogisticRegression,
    DPRidgeRegression,
    MondrianPrivateConformalClassifier,
    PrivateConformalizedQuantileRegressor,
    PrivateNormalizedConformalRegressor,
    PrivateSplitConformalClassifier,
    PrivateSplitConformalRegressor,
    PublicScaler,
)
from dpcp_tutorial.accounting import (PrivacyAccount, check_model_privacy, declared_relation, model_steps,
                                      trainer_account)
from dpcp_tutorial.training import trainer_privacy_account

D = 3
RNG = np.random.default_rng(0)
X = RNG.uniform(-4, 4, size=(1200, D))
Y = X @ np.array([0.5, -0.3, 0.2]) + 0.3 * RNG.standard_normal(1200)
LABELS = (X[:, 0] > 0).astype(int)


def ridge(epsilon=1.0):
    return DPRidgeRegression(epsilon=epsilon, x_bound=math.sqrt(D), y_bound=4.0, rng=1)


def logistic():
    return DPLogisticRegression(epsilon=1.0, x_bound=math.sqrt(D), classes=[0, 1], rng=1)


def inverse_checked():
    return FunctionTransformer(np.tanh, inverse_func=np.arctanh, check_inverse=True)


LEAKING = {
    "scaler": lambda: make_pipeline(StandardScaler(), ridge()),
    "nested": lambda: make_pipeline(make_pipeline(PublicScaler(-4, 4), MinMaxScaler()), ridge()),
    "column transformer": lambda: make_pipeline(
        ColumnTransformer([("a", StandardScaler(), [0]), ("b", PublicScaler(-4, 4), [1, 2])]), ridge()),
    "column remainder": lambda: make_pipeline(
        ColumnTransformer([("a", PublicScaler(-4, 4), [0])], remainder=StandardScaler()), ridge()),
    "feature union": lambda: make_pipeline(FeatureUnion([("pca", PCA(2)), ("p", PublicScaler(-4, 4))]), ridge()),
    "inverse check": lambda: make_pipeline(inverse_checked(), ridge()),
}
LEAK_NAMES = {"scaler": "standardscaler", "nested": "minmaxscaler", "column transformer": "'a'",
              "column remainder": "remainder", "feature union": "pca", "inverse check": "functiontransformer"}

LEGAL = {
    "public scaler": lambda: make_pipeline(PublicScaler(-4, 4), ridge()),
    "function": lambda: make_pipeline(FunctionTransformer(np.tanh), ridge()),
    "passthrough": lambda: make_pipeline("passthrough", PublicScaler(-4, 4), ridge()),
    "column transformer": lambda: make_pipeline(
        ColumnTransformer([("a", PublicScaler(-4, 4), [0, 1]), ("b", "passthrough", [2]), ("c", "drop", [])]),
        ridge()),
    "frozen public scaler": lambda: make_pipeline(
        FrozenEstimator(StandardScaler().fit(RNG.uniform(-4, 4, size=(50, D)))), FunctionTransformer(np.tanh),
        ridge()),
}


@pytest.mark.parametrize("name", sorted(LEAKING))
def test_split_regressor_refuses_every_leaking_composition(name):
    est = PrivateSplitConformalRegressor(LEAKING[name](), bound=4.0, n=500, rng=0)
    with pytest.raises(ValueError, match="cannot account for this model") as err:
        est.fit(X[:600], Y[:600])
    assert LEAK_NAMES[name] in str(err.value)
    assert "PublicScaler" in str(err.value) and "FrozenEstimator" in str(err.value)
    assert not hasattr(est, "estimator_")


def test_refusal_reads_the_model_only():
    """The same refusal before any data is read, whatever the data (neighbours included)."""
    messages = set()
    for data in ((X[:600], Y[:600]), (X[1:601], Y[1:601]), (None, None)):
        with pytest.raises(ValueError) as err:
            PrivateSplitConformalRegressor(LEAKING["scaler"](), bound=4.0, n=500).fit(*data)
        messages.add(str(err.value))
    assert len(messages) == 1


def test_prefit_leaking_pipeline_is_refused_before_any_release():
    model = LEAKING["scaler"]().fit(X[:600], Y[:600])
    est = PrivateSplitConformalRegressor(model, bound=4.0, n=500, prefit=True, rng=0)
    with pytest.raises(ValueError, match="standardscaler"):
        est.calibrate(X[600:], Y[600:])
    assert not hasattr(est, "qhat_") and not hasattr(est, "privacy_")


def test_fitted_scaler_leaks_one_record():
    """Why: one training record changed moves a test prediction, and a threshold separates the data sets."""
    gen = np.random.default_rng(1)
    Xa = gen.normal(size=(2000, 1))
    ya = np.clip(Xa[:, 0], -2, 2) + 0.1 * gen.standard_normal(2000)
    Xb = Xa.copy()
    Xb[0, 0] = 1e5                       # one record replaced
    preds = [np.array([make_pipeline(StandardScaler(), DPRidgeRegression(epsilon=1.0, x_bound=1.0, y_bound=2.0,
                                                                         rng=s)).fit(data, ya).predict([[1.0]])[0]
                       for s in range(30)]) for data in (Xa, Xb)]
    # the DP noise does not hide the scaler's statistics: the threshold 0.75 separates every run
    assert preds[0].min() > 0.75 > preds[1].max()
    # the public scaler: the same record moves nothing but the trainer's own (certified) output
    public = [make_pipeline(PublicScaler(-3, 3), DPRidgeRegression(epsilon=1.0, x_bound=1.0, y_bound=2.0, rng=0))
              .fit(data, ya).predict([[1.0]])[0] for data in (Xa, Xb)]
    assert abs(public[0] - public[1]) < 0.05


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legal_compositions_report_the_trainers_account(name):
    est = PrivateSplitConformalRegressor(LEGAL[name](), epsilon=0.5, bound=4.0, n=500, rng=0)
    est.fit(X[:600], Y[:600]).calibrate(X[600:], Y[600:])
    own = est.estimator_[-1].privacy_
    assert own.add_remove == (1.0, 1e-6)
    # parallel composition: max under add/remove; max(RO, AR + AR) under replace-one
    assert est.privacy_.add_remove == (1.0, 1e-6)
    assert est.privacy_.replace_one[0] == pytest.approx(max(own.replace_one[0], 1.0 + 0.5))
    assert any("model training" in p.label and p.part == "training" for p in est.privacy_.parts)
    if name not in ("passthrough",):
        assert any(line.startswith("model step") for line in est.privacy_.public)


def test_non_private_models_declare_their_training_data_public():
    for model in (make_pipeline(StandardScaler(), LinearRegression()), LinearRegression()):
        est = PrivateSplitConformalRegressor(model, bound=4.0, n=500, rng=0).fit(X[:600], Y[:600])
        est.calibrate(X[600:], Y[600:])
        assert est.privacy_.add_remove == (1.0, 0.0)
        assert any("treated as public" in p for p in est.privacy_.public)
    frozen = FrozenEstimator(make_pipeline(StandardScaler(), ridge()).fit(X[:600], Y[:600]))
    est = PrivateSplitConformalRegressor(frozen, bound=4.0, n=500, prefit=True, rng=0).calibrate(X[600:], Y[600:])
    assert est.privacy_.add_remove == (1.0, 0.0)
    assert any("treated as public" in p for p in est.privacy_.public)


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.ReleaseWarning")
def test_classifier_and_mondrian():
    leak = make_pipeline(StandardScaler(), logistic())
    with pytest.raises(ValueError, match="standardscaler"):
        PrivateSplitConformalClassifier(leak, n=500).fit(X[:600], LABELS[:600])
    with pytest.raises(ValueError, match="standardscaler"):
        MondrianPrivateConformalClassifier(leak, classes=[0, 1]).fit(X[:600], LABELS[:600])
    prefit = make_pipeline(StandardScaler(), logistic()).fit(X[:600], LABELS[:600])
    mondrian = MondrianPrivateConformalClassifier(prefit, classes=[0, 1], prefit=True, rng=0)
    with pytest.raises(ValueError, match="standardscaler"):
        mondrian.calibrate(X[600:], LABELS[600:])
    assert not hasattr(mondrian, "qhat_")
    good = make_pipeline(PublicScaler(-4, 4), logistic())
    est = PrivateSplitConformalClassifier(good, n=500, rng=0).fit(X[:600], LABELS[:600])
    est.calibrate(X[600:], LABELS[600:])
    assert est.privacy_.add_remove == (1.0, 0.0) or est.privacy_.add_remove[0] == 1.0
    mondrian = MondrianPrivateConformalClassifier(good, classes=[0, 1], rng=0).fit(X[:600], LABELS[:600])
    mondrian.calibrate(X[600:], LABELS[600:])
    # the totals are the pipeline's: the model's training part in parallel with the calibration part
    assert [p.part for p in mondrian.privacy_.parts] == ["training", "calibration"]
    assert mondrian.privacy_.add_remove == (1.0, 1e-6)
    strong = make_pipeline(PublicScaler(-4, 4), DPLogisticRegression(epsilon=3.0, x_bound=math.sqrt(D),
                                                                     classes=[0, 1], rng=2))
    mondrian = MondrianPrivateConformalClassifier(strong, classes=[0, 1], epsilon=1.0, rng=0)
    mondrian.fit(X[:600], LABELS[:600]).calibrate(X[600:], LABELS[600:])
    assert mondrian.privacy_.add_remove == (3.0, 1e-6)
    assert mondrian.privacy_.replace_one[0] == 6.0        # the model's group-privacy bound 2 * 3 dominates
    assert any("calibration breakdown" in note for note in mondrian.privacy_.notes)
    plain = MondrianPrivateConformalClassifier(LogisticRegression(), classes=[0, 1], rng=0)
    plain.fit(X[:600], LABELS[:600]).calibrate(X[600:], LABELS[600:])
    assert any("treated as public" in note for note in plain.privacy_.notes)


def test_adaptive_estimators():
    leak = make_pipeline(StandardScaler(), ridge())
    with pytest.raises(ValueError, match="standardscaler"):
        PrivateNormalizedConformalRegressor(leak, None, y_bound=4.0, n=300).fit(X[:400], Y[:400])
    with pytest.raises(ValueError, match="standardscaler"):
        PrivateNormalizedConformalRegressor(ridge(), leak, y_bound=4.0, sigma_min=0.1, n=300).fit(X[:400], Y[:400])
    with pytest.raises(ValueError, match="standardscaler"):
        PrivateConformalizedQuantileRegressor(leak, ridge(), score_bound=4.0).fit(X[:400], Y[:400])
    good = PrivateNormalizedConformalRegressor(make_pipeline(PublicScaler(-4, 4), ridge()), None, epsilon=0.5,
                                               y_bound=4.0, n=300, rng=0)
    good.fit(X[:400], Y[:400]).calibrate(X[400:700], Y[400:700])
    assert good.privacy_.add_remove == (1.0, 1e-6)
    assert any("PublicScaler" in line for line in good.privacy_.public)


def test_dpcp_refuses_pipelines():
    for model in (make_pipeline(PublicScaler(-4, 4), ridge()), make_pipeline(StandardScaler(), ridge())):
        with pytest.raises(ValueError, match="the DP trainer itself") as err:
            DPCPRegressor(model, bound=4.0, n=1200).fit(X, Y)
        assert "PublicScaler" in str(err.value)


class _DPTransformer(TransformerMixin, BaseEstimator):
    """A stand-in DP step (declares its relation, reports privacy_): to test the composition of two DP steps."""

    relation = "add/remove"

    def fit(self, X, y=None):
        self.privacy_ = trainer_privacy_account("stand-in DP transform", 0.25, 0.0, ())
        return self

    def transform(self, X):
        return X


def test_several_dp_steps_compose_sequentially():
    model = make_pipeline(_DPTransformer(), PublicScaler(-4, 4), ridge()).fit(X[:600], Y[:600])
    account = trainer_account(model)
    assert isinstance(account, PrivacyAccount)
    assert account.add_remove == (1.25, 1e-6)
    assert [kind for _, _, kind, _ in model_steps(model)] == ["dp", "public", "dp"]
    assert trainer_account(LinearRegression()) is None
    assert check_model_privacy(make_pipeline(StandardScaler(), LinearRegression())) == []


def test_a_trainer_declaring_the_old_attribute_name_is_read_with_a_future_warning():
    class OldStyle(DPRidgeRegression):
        relation = None
        neighbouring = "add/remove"

    with pytest.warns(FutureWarning, match="`relation`"):
        assert declared_relation(OldStyle(x_bound=1.0, y_bound=1.0)) == "add/remove"
    with pytest.warns(FutureWarning):
        assert model_steps(OldStyle(x_bound=1.0, y_bound=1.0))[0][2] == "dp"
    assert declared_relation(DPRidgeRegression(x_bound=1.0, y_bound=1.0)) == "add/remove"
