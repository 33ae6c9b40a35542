"""Class-conditional (Mondrian) private conformal prediction (dpcp_tutorial.mondrian)."""

import itertools
import math

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from dpcp_tutorial._counts import subsample_or_pad as _subsample_or_pad
from dpcp_tutorial.mondrian import (
    MondrianPrivateConformalClassifier,
    count_lower_margin,
    mondrian_privacy_loss,
    noisy_class_counts,
)
from dpcp_tutorial.quantile import private_quantile, private_quantile_probabilities
from dpcp_tutorial.accounting import ReleaseWarning

PRIORS = [0.8, 0.15, 0.05]
CENTRES = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0]])


def _make(n, gen):
    """An imbalanced 3-class problem with overlapping Gaussian classes."""
    y = gen.choice(3, size=n, p=PRIORS)
    return CENTRES[y] + gen.normal(size=(n, 2)), y


@pytest.fixture(scope="module")
def problem():
    gen = np.random.default_rng(0)
    X_train, y_train = _make(3000, gen)
    model = LogisticRegression().fit(X_train, y_train)
    X_test, y_test = _make(20000, gen)
    return model, X_test, y_test


def _per_class_coverage(sets, y):
    return np.array([sets[y == j, j].mean() for j in range(3)])


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")   # the rare class
def test_mondrian_covers_every_class_and_the_marginal_version_fails_the_minority(problem):
    """Monte Carlo over calibration sets (binomial-type SEs across repetitions); a large fixed test set."""
    model, X_test, y_test = problem
    alpha, epsilon, reps = 0.1, 2.0, 40
    gen = np.random.default_rng(1)
    mondrian, marginal = [], []
    proba_test = model.predict_proba(X_test)
    for r in range(reps):
        X_cal, y_cal = _make(4000, gen)
        est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], alpha=alpha, epsilon=epsilon, bins=50,
                                                 prefit=True, rng=r).calibrate(X_cal, y_cal)
        mondrian.append(_per_class_coverage(est.predict_set(X_test), y_test))
        # the non-Mondrian private version: one threshold from all calibration scores, same budget
        p = model.predict_proba(X_cal)
        q = private_quantile(1 - p[np.arange(y_cal.size), y_cal], alpha, epsilon, 50, rng=r)
        sets = (1 - proba_test) <= q
        marginal.append(np.r_[_per_class_coverage(sets, y_test), sets[np.arange(y_test.size), y_test].mean()])
    mondrian, marginal = np.array(mondrian), np.array(marginal)
    mean, se = mondrian.mean(0), mondrian.std(0, ddof=1) / math.sqrt(reps)
    print(f"Mondrian per-class coverage {np.round(mean, 4)} +- {np.round(se, 4)}")
    assert np.all(mean >= 1 - alpha - 3 * se - 1e-12)
    m_mean = marginal.mean(0)
    print(f"marginal private CP: per-class {np.round(m_mean[:3], 4)}, marginal {m_mean[3]:.4f}")
    assert m_mean[3] >= 1 - alpha - 0.01          # it does cover on average over classes ...
    assert m_mean[2] < 0.5                          # ... by sacrificing the 5% class
    assert mean[2] - m_mean[2] > 0.4


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")   # the rare class
def test_other_calibrators_run_and_give_per_class_thresholds(problem):
    model, X_test, y_test = problem
    X_cal, y_cal = _make(3000, np.random.default_rng(2))
    for calibrator in ("pps", "opendp", "laplace_histogram"):
        est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], epsilon=2.0, bins=50, prefit=True,
                                                 calibrator=calibrator, rng=0).calibrate(X_cal, y_cal)
        assert est.qhat_.shape == (3,) and np.all((0 <= est.qhat_) & (est.qhat_ <= 1))
        assert est.qhat_[0] < est.qhat_[2]          # the rare class needs a larger threshold
        cov = _per_class_coverage(est.predict_set(X_test), y_test)
        assert np.all(cov >= 0.85), (calibrator, cov)


def test_discrete_laplace_counts_follow_their_law_and_the_margin_is_minimal():
    epsilon = 0.7
    gen = np.random.default_rng(3)
    z = noisy_class_counts(np.zeros(40000, dtype=int), epsilon, rng=gen)
    q = math.exp(-epsilon)
    support = np.arange(-8, 9)
    pmf = (1 - q) / (1 + q) * q ** np.abs(support)
    observed = np.array([np.sum(z == s) for s in support] + [np.sum(np.abs(z) > 8)])
    expected = np.r_[pmf, 1 - pmf.sum()] * z.size
    p_value = stats.chisquare(observed, expected).pvalue
    print(f"discrete Laplace chi-square p = {p_value:.3f}")
    assert p_value > 1e-3
    for eps, eta in [(0.1, 0.01), (0.7, 0.05), (2.0, 0.001), (5.0, 0.3)]:
        t = count_lower_margin(eps, eta)
        tail = lambda s: math.exp(-eps * s) / (1 + math.exp(-eps))   # noqa: E731  P(Z >= s), s >= 1
        assert tail(t + 1) <= eta
        assert t == 0 or tail(t) > eta


def _mixture_law(class_scores, m, beta, epsilon, bins):
    """Exact law of private_quantile(subsample_or_pad(scores, m), n=m): average over all m-subsets."""
    class_scores = np.asarray(class_scores, float)
    if class_scores.size < m:
        padded = np.r_[class_scores, np.ones(m - class_scores.size)]
        return private_quantile_probabilities(padded, beta, epsilon, bins, log=False, n=m)[1]
    laws = [private_quantile_probabilities(class_scores[list(c)], beta, epsilon, bins, n=m)[1]
            for c in itertools.combinations(range(class_scores.size), m)]
    return np.mean(laws, axis=0)


def test_exact_audit_subsample_or_pad_turns_add_remove_into_the_calibrators_replace_one_loss():
    """Given the released size m, adding/removing one class record costs at most the calibration budget."""
    epsilon, beta, bins, m = 3.0, 0.45, 4, 4
    gen = np.random.default_rng(4)
    grid = np.linspace(0, 1, bins + 1)[1:]
    worst = 0.0
    for trial in range(30):
        size = int(gen.integers(2, 7))                        # below, at and above m: pad and subsample
        base = [gen.uniform(size=size), gen.choice(grid, size), np.ones(size), np.zeros(size)][trial % 4]
        law = _mixture_law(base, m, beta, epsilon, bins)
        new = float(gen.choice([0.0, 1.0, 0.5, gen.uniform()]))
        for other in (np.append(base, new), np.delete(base, int(gen.integers(size)))):
            other_law = _mixture_law(other, m, beta, epsilon, bins)
            worst = max(worst, float(np.max(np.abs(np.log(other_law) - np.log(law)))))
    print(f"subsample-or-pad audit: worst log-ratio {worst:.4f} <= {epsilon}")
    assert worst <= epsilon + 1e-9
    assert worst > 0.2 * epsilon


def test_subsample_or_pad_gives_exactly_m_scores():
    gen = np.random.default_rng(0)
    scores = np.array([0.1, 0.2, 0.3])
    assert np.array_equal(_subsample_or_pad(scores, 5, gen), [0.1, 0.2, 0.3, 1.0, 1.0])
    out = _subsample_or_pad(scores, 2, gen)
    assert out.size == 2 and set(out) <= set(scores)


def test_privacy_loss_statement():
    assert mondrian_privacy_loss(1.5) == 1.5
    assert mondrian_privacy_loss(1.5, "replace-one") == 3.0
    with pytest.raises(ValueError):
        mondrian_privacy_loss(1.0, "swap")


def test_an_empty_or_tiny_class_gets_the_full_label_set_without_an_error(problem):
    model, X_test, _ = problem
    gen = np.random.default_rng(5)
    X_cal, y_cal = _make(2000, gen)
    keep = y_cal != 2                                    # no record of class 2 at all
    est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], epsilon=1.0, prefit=True, rng=0)
    with pytest.warns(ReleaseWarning, match=r"class\(es\) \[2\] is 1"):
        est.calibrate(X_cal[keep], y_cal[keep])
    assert est.qhat_[2] == 1.0 and est.predict_set(X_test)[:, 2].all()
    assert est.noisy_counts_.shape == (3,) and est.calibration_sizes_[2] == 0


def test_public_class_sizes_spend_nothing_on_counts(problem):
    model, _, _ = problem
    X_cal, y_cal = _make(2000, np.random.default_rng(6))
    sizes = np.bincount(y_cal, minlength=3)
    est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], epsilon=2.0, prefit=True, bins=50,
                                             class_sizes=sizes, rng=0).calibrate(X_cal, y_cal)
    assert est.noisy_counts_ is None and np.array_equal(est.calibration_sizes_, sizes)
    assert est.privacy_.replace_one == (2.0, 0.0) and est.privacy_.add_remove is None   # class sizes public
    assert est.privacy_.relation == "replace-one"
    with pytest.raises(ValueError, match="declared public"):
        MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], prefit=True,
                                           class_sizes=sizes + 1).calibrate(X_cal, y_cal)


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")   # the rare class
def test_same_seed_same_sets_and_fit_then_calibrate():
    gen = np.random.default_rng(7)
    X, y = _make(3000, gen)
    make = lambda: MondrianPrivateConformalClassifier(LogisticRegression(), classes=[0, 1, 2], epsilon=2.0,   # noqa
                                                      bins=50, rng=3)
    a = make().fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:])
    b = make().fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:])
    assert np.array_equal(a.qhat_, b.qhat_)
    assert np.array_equal(a.predict_set(X[:50]), b.predict_set(X[:50]))


@pytest.mark.parametrize("kwargs,exc", [
    (dict(classes=None), ValueError),
    (dict(classes=[0, 1, 2], alpha=0.0), ValueError),
    (dict(classes=[0, 1, 2], epsilon=-1.0), ValueError),
    (dict(classes=[0, 1, 2], calibrator="median"), ValueError),
    (dict(classes=[0, 1, 2], score="raps"), ValueError),
    (dict(classes=[0, 1, 2], count_share=1.0), ValueError),
    (dict(classes=[0, 1, 2], count_failure=0.5), ValueError),
    (dict(classes=[0, 1, 2], class_sizes="public"), ValueError),
    (dict(classes=[0, 1, 2], class_sizes=[1.5, 2, 3]), TypeError),
    (dict(classes=[0, 1]), ValueError),               # label 2 is outside the public label set
])
def test_bad_settings_raise(problem, kwargs, exc):
    model, _, _ = problem
    X_cal, y_cal = _make(300, np.random.default_rng(8))
    with pytest.raises(exc):
        MondrianPrivateConformalClassifier(model, prefit=True, **kwargs).calibrate(X_cal, y_cal)


def test_predict_before_calibrate_raises(problem):
    model, X_test, _ = problem
    with pytest.raises(ValueError, match="not calibrated"):
        MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], prefit=True).predict_set(X_test[:3])


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_account_counts_and_per_class_thresholds(problem):
    """Counts on every record (sequential) and one threshold per class (parallel, a record's class is its own
    key): epsilon under add/remove, 2 epsilon under replace-one, as mondrian_privacy_loss states."""
    model, _, _ = problem
    X_cal, y_cal = _make(3000, np.random.default_rng(8))
    est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], epsilon=1.5, prefit=True, rng=0)
    acc = est.calibrate(X_cal, y_cal).privacy_
    assert acc.add_remove == (pytest.approx(mondrian_privacy_loss(1.5)), 0.0)
    assert acc.replace_one == (pytest.approx(mondrian_privacy_loss(1.5, "replace-one")), 0.0)
    assert [p.part for p in acc.parts] == ["all", "class 0", "class 1", "class 2"]


@pytest.mark.parametrize("bad", ["2-D y", "1-D X"])
def test_shape_and_label_errors_quote_no_record_count_or_label(problem, bad):
    """Refusals of the calibration data quote no private count or label."""
    model, _, _ = problem
    X_cal, y_cal = _make(317, np.random.default_rng(9))
    args = {"2-D y": (X_cal, y_cal[:, None]), "1-D X": (X_cal[:, 0], y_cal)}[bad]
    est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], prefit=True, rng=0)
    with pytest.raises(ValueError) as err:
        est.calibrate(*args)
    assert "317" not in str(err.value) and "7345" not in str(err.value)


def test_count_share_has_a_public_floor_and_settings_are_named():
    rng = np.random.default_rng(50)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    model = LogisticRegression().fit(X[:100], y[:100])
    with pytest.raises(ValueError, match=r"count_share=1e-300 must be >= 1e-06"):
        MondrianPrivateConformalClassifier(model, classes=[0, 1], count_share=1e-300, prefit=True) \
            .calibrate(X[100:], y[100:])
    with pytest.raises(TypeError, match="calibrator must be one of"):
        MondrianPrivateConformalClassifier(model, classes=[0, 1], calibrator=["pps"], prefit=True) \
            .calibrate(X[100:], y[100:])
    with pytest.raises(TypeError, match="score must be one of"):
        MondrianPrivateConformalClassifier(model, classes=[0, 1], score=["lac"], prefit=True) \
            .calibrate(X[100:], y[100:])
    with pytest.raises(ValueError, match="counts is empty"):
        noisy_class_counts(np.array([], dtype=int), 1.0, rng=0)
    with pytest.raises(TypeError, match="relation must be one of"):
        mondrian_privacy_loss(1.0, relation=np.array(["add/remove"]))


@pytest.mark.parametrize("calibrator, level", [("private_quantile", 0.1), ("laplace_histogram", 0.09)])
def test_the_tight_quantile_runs_at_alpha_the_others_at_alpha_minus_zeta(problem, monkeypatch, calibrator, level):
    """Padding keeps the tight quantile's coverage (chapter 3), so it needs no slack for the count bound's failure."""
    model, _, _ = problem
    X_cal, y_cal = _make(3000, np.random.default_rng(8))
    seen = []
    original = MondrianPrivateConformalClassifier._threshold

    def recording(self, scores, lvl, *args):
        seen.append(lvl)
        return original(self, scores, lvl, *args)

    monkeypatch.setattr(MondrianPrivateConformalClassifier, "_threshold", recording)
    est = MondrianPrivateConformalClassifier(model, classes=[0, 1, 2], alpha=0.1, epsilon=2.0, calibrator=calibrator,
                                             bins=50, prefit=True, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)   # small classes may get the threshold 1
        est.calibrate(X_cal, y_cal)
    assert seen and all(lvl == pytest.approx(level) for lvl in seen)


def test_no_calibration_record_at_all_is_a_release_like_one_record():
    """The class sizes are private (add/remove): an empty calibration set is the neighbour of a one-record set
    and releases like it, advancing the caller's generator by the same amount."""
    from dpcp_tutorial import ReleaseWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = MondrianPrivateConformalClassifier(LogisticRegression(), classes=[0, 1], alpha=0.1, epsilon=1.0, rng=0)
    clf.fit(X, y)
    Xc, yc = rng.normal(size=(1, 2)), np.array([1])
    after = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ReleaseWarning)          # depends on the release only
        for Xd, yd in ((Xc, yc), (Xc[:0], yc[:0]), (np.empty((0, 2)), [])):
            gen = np.random.default_rng(5)
            clf.set_params(rng=gen).calibrate(Xd, yd)
            assert clf.qhat_.shape == (2,) and np.all((clf.qhat_ > 0) & (clf.qhat_ <= 1))
            assert clf.privacy_.add_remove[0] == pytest.approx(1.0)
            after.append(gen.integers(2**62))
    assert len(set(after)) == 1
