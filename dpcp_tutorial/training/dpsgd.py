"""DP-SGD for linear models and its accounting (chapters 7 and 17).

Poisson subsampling, per-example clipping and Gaussian noise, accounted with
Google's ``dp_accounting`` (its Poisson-subsampled Gaussian accountants are
stated for add/remove): :class:`DPSGDRegressor` (squared loss),
:class:`DPSGDClassifier` (logistic / softmax loss) and
:class:`DPSGDQuantileRegressor` (pinball loss, for conformalised quantile
regression, chapter 17).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    REQUIRED,
    RandomLike,
    check_1d,
    check_alpha,
    check_bool,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
)
from ._common import (
    LinearClassifierMixin,
    check_bounds,
    clip_factors,
    clip_rows,
    clipped_design,
    encode_labels,
    fit_features,
    one_hot,
    prediction_features,
    probabilities,
    require_bounds,
    trainer_privacy_account,
)

__all__ = ["dp_sgd_epsilon", "dp_sgd_noise_multiplier", "DPSGDRegressor", "DPSGDClassifier",
           "DPSGDQuantileRegressor"]


@contextlib.contextmanager
def _quiet_absl():
    """Silence dp_accounting's "order excluded" log lines (the bound stays valid without those orders)."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _check_accountant(accountant: str) -> str:
    return check_choice(accountant, "accountant", ("rdp", "pld"),
                        "'rdp': Renyi DP (fast); 'pld': privacy loss distributions (tighter, slower)")


def _check_sgd_privacy(noise_multiplier, sampling_rate, steps, delta) -> tuple[float, float, int, float]:
    noise_multiplier = check_scalar(noise_multiplier, "noise_multiplier", low=0.0, low_inclusive=True)
    if 0.0 < noise_multiplier < 1e-4:
        raise ValueError(f"noise_multiplier={noise_multiplier:g} is too small to account for (below 1e-4 the "
                         "privacy loss is astronomically large); use 0 for no noise or at least 1e-4")
    sampling_rate = check_scalar(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_inclusive=True,
                                 hint="it is the probability that an example enters a step's batch")
    steps = check_positive_int(steps, "steps", maximum=10 ** 8)
    delta = check_scalar(delta, "delta", low=0.0, high=1.0,
                         hint="DP-SGD's Gaussian noise needs 0 < delta < 1, far below 1/n")
    return noise_multiplier, sampling_rate, steps, delta


_MIN_RTOL = 1e-9      # dp_sgd_noise_multiplier's narrowest bracket (the accountants are not more precise)


def dp_sgd_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                   accountant: str = "rdp") -> float:
    """Epsilon of DP-SGD with Poisson subsampling, from Google's ``dp_accounting`` (chapter 7).

    The event is ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)``:
    each step includes every example independently with probability :math:`q`
    and adds :math:`N(0, \\sigma^2 C^2 I)` to the sum of gradients clipped to norm
    :math:`C`. It is accounted under the **add/remove** relation, either with
    Rényi DP (``"rdp"``, Mironov 2017; Mironov, Talwar & Zhang 2019) and the
    library's default orders, or with privacy loss distributions (``"pld"``,
    tighter, slower; discretisation interval :math:`10^{-4}`).

    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma \\ge 0` (0 means no privacy: returns ``inf``).
    sampling_rate : float
        :math:`q \\in (0, 1]`.
    steps : int
        Number of noisy steps :math:`T`.
    delta : float
        Target :math:`\\delta \\in (0, 1)`.
    accountant : {"rdp", "pld"}, default="rdp"
        Rényi DP (fast) or privacy loss distributions (tighter, slower).

    Returns
    -------
    float
        The smallest :math:`\\varepsilon` the accountant certifies.

    Raises
    ------
    ImportError
        If ``dp_accounting`` is not installed (``pip install dp-accounting``).

    Examples
    --------
    Batches of 5% of the records, 200 steps, noise multiplier 2:

    >>> round(dp_sgd_epsilon(2.0, sampling_rate=0.05, steps=200, delta=1e-6), 2)
    1.95
    """
    noise_multiplier, sampling_rate, steps, delta = _check_sgd_privacy(noise_multiplier, sampling_rate, steps, delta)
    accountant = _check_accountant(accountant)
    if noise_multiplier == 0.0:
        return math.inf
    return _accounted_epsilon(noise_multiplier, sampling_rate, steps, delta, accountant)


@functools.lru_cache(maxsize=4096)
def _accounted_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                       accountant: str) -> float:
    """The dp_accounting computation behind :func:`dp_sgd_epsilon`, memoised (it is deterministic)."""
    try:
        import dp_accounting
    except ImportError:  # pragma: no cover - dp-accounting is in requirements.txt
        raise ImportError("dp_sgd_epsilon needs Google's dp-accounting: pip install dp-accounting") from None
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sampling_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps)
    if accountant == "rdp":
        acc = dp_accounting.rdp.RdpAccountant()
    else:
        acc = dp_accounting.pld.PLDAccountant()
    with _quiet_absl():
        acc.compose(event)
        return float(acc.get_epsilon(delta))


def dp_sgd_noise_multiplier(target_epsilon: float, sampling_rate: float, steps: int, delta: float,
                            accountant: str = "rdp", rtol: float = 1e-3) -> float:
    """Smallest noise multiplier whose DP-SGD epsilon is at most ``target_epsilon`` (chapter 7).

    :func:`dp_sgd_epsilon` decreases in :math:`\\sigma`. A bracket
    :math:`[\\sigma_{lo}, \\sigma_{hi}]` with :math:`\\varepsilon(\\sigma_{lo}) > \\varepsilon^* \\ge \\varepsilon(\\sigma_{hi})`
    is narrowed with secant steps through the last two evaluations of :math:`\\log\\varepsilon`
    against :math:`\\log\\sigma` (nearly linear), each followed by two probes :math:`(1 \\pm \\text{rtol}/3)` around the estimate, with a bisection
    step whenever the bracket does not halve. The returned :math:`\\sigma` is the upper end of the
    final bracket, so ``dp_sgd_epsilon(sigma, ...) <= target_epsilon`` always holds and
    :math:`\\sigma/(1 + \\text{rtol})` misses the target.

    Parameters
    ----------
    target_epsilon : float
        The budget :math:`\\varepsilon^* > 0` to meet.
    sampling_rate, steps, delta
        As in :func:`dp_sgd_epsilon`.
    accountant : {"rdp", "pld"}, default="rdp"
        As in :func:`dp_sgd_epsilon`.
    rtol : float, default=0.001
        Relative width of the final bracket, in :math:`[10^{-9}, 1)` (a public
        tolerance: narrower brackets than :math:`10^{-9}` are below the
        accountant's own precision and would only cost time).

    Returns
    -------
    float

    Examples
    --------
    Ten full-batch steps (``sampling_rate=1``) within epsilon = 2:

    >>> sigma = dp_sgd_noise_multiplier(2.0, sampling_rate=1.0, steps=10, delta=1e-6, rtol=0.01)
    >>> round(sigma, 1), dp_sgd_epsilon(sigma, 1.0, 10, 1e-6) <= 2.0
    (7.6, True)
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    rtol = check_scalar(rtol, "rtol", low=_MIN_RTOL, high=1.0, low_inclusive=True,
                        hint=f"the relative width of the final bracket, between {_MIN_RTOL:g} (about 30 "
                             "accountant calls) and 1")
    _check_sgd_privacy(1.0, sampling_rate, steps, delta)     # every argument checked before the search
    accountant = _check_accountant(accountant)

    history: list[tuple[float, float]] = []   # (log sigma, excess) of every evaluation

    def excess(sigma: float) -> float:  # > 0: too little noise
        eps = dp_sgd_epsilon(sigma, sampling_rate, steps, delta, accountant)
        g = -math.inf if eps == 0.0 else math.log(eps / target_epsilon)  # the accountant may certify epsilon = 0
        history.append((math.log(sigma), g))
        return g

    lo = hi = 1.0
    g_hi = excess(hi)
    while g_hi > 0:
        lo, hi = hi, hi * 4.0
        if hi > 1e8:
            raise ValueError(f"target_epsilon={target_epsilon:g} is not reachable with noise_multiplier <= 1e8; "
                             "raise the target or lower sampling_rate or steps")
        g_hi = excess(hi)
    if lo == hi:
        g_lo = g_hi
        while g_lo <= 0:
            hi, g_hi, lo = lo, g_lo, lo / 4.0
            if lo < 1e-4:
                return hi
            g_lo = excess(lo)
    else:
        g_lo = excess(lo)

    def update(sigma: float) -> None:
        nonlocal lo, hi, g_lo, g_hi
        g = excess(sigma)
        if g > 0:
            lo, g_lo = sigma, g
        else:
            hi, g_hi = sigma, g

    while hi / lo - 1.0 > rtol:
        width = math.log(hi / lo)
        (u1, g1), (u2, g2) = history[-2:]
        if math.isfinite(g1) and math.isfinite(g2) and g1 != g2:
            log_guess = u2 - g2 * (u2 - u1) / (g2 - g1)
            # a guess more than a factor e outside the bracket has no probe inside it (rtol < 1): skipped, so
            # that exp never overflows
            guess = math.exp(log_guess) if math.log(lo) - 1.0 < log_guess < math.log(hi) + 1.0 else None
            for probe in () if guess is None else (guess * (1 - rtol / 3), guess * (1 + rtol / 3)):
                if lo < probe < hi:
                    update(probe)
        if math.log(hi / lo) > 0.5 * width:
            update(math.sqrt(lo * hi))
    return hi


def _sgd_residuals(kind, Z: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """:math:`\\partial\\ell/\\partial z`: ``z - y`` (squared loss), ``p - y`` (logistic / softmax);
    a callable ``kind`` gives ``kind(Z, Y)`` (the pinball loss of
    :class:`dpcp_tutorial.adaptive.DPSGDQuantileRegressor`)."""
    if callable(kind):
        return kind(Z, Y)
    if kind == "squared":
        return Z - Y
    return probabilities(Z) - Y


def _dp_sgd(Xa: np.ndarray, Y: np.ndarray, kind: str, *, noise_multiplier: float, clip_norm: float,
            sampling_rate: float, steps: int, learning_rate: float, l2: float, batch_size: float,
            rng: np.random.Generator) -> np.ndarray:
    """The DP-SGD loop for linear models; returns the final iterate, shape (K, p).

    Per step: a Poisson sample (a Binomial(n, q) size, then a uniform subset of that
    size: the same law as independent inclusions), per-example gradients
    :math:`r_i \\otimes x_i` clipped to norm ``clip_norm``, their sum plus
    :math:`N(0, (\\sigma C)^2 I)`, divided by ``batch_size``, plus the public
    :math:`\\lambda\\theta`.
    """
    n, p = Xa.shape
    theta = np.zeros((Y.shape[1], p))
    row_norms = np.linalg.norm(Xa, axis=1)
    noise_std = noise_multiplier * clip_norm
    for _ in range(steps):
        m = rng.binomial(n, sampling_rate)
        idx = rng.choice(n, size=m, replace=False) if m else np.empty(0, dtype=int)
        Xb = Xa[idx]
        R = _sgd_residuals(kind, Xb @ theta.T, Y[idx])
        norms = np.linalg.norm(R, axis=1) * row_norms[idx]
        R = R * clip_factors(norms, clip_norm)[:, None]
        noisy_sum = R.T @ Xb + rng.normal(0.0, noise_std, size=theta.shape)
        theta = theta - learning_rate * (noisy_sum / batch_size + l2 * theta)
    return theta


class _DPSGDBase(BaseEstimator):
    """Parameter checks and the privacy bookkeeping shared by the DP-SGD estimators."""

    relation = "add/remove"

    def _run(self, X, Y: np.ndarray, kind: str) -> np.ndarray:
        noise_multiplier, sampling_rate, steps, delta = _check_sgd_privacy(
            self.noise_multiplier, self.sampling_rate, self.steps, self.delta)
        accountant = _check_accountant(self.accountant)
        if self.epsilon is not None:
            noise_multiplier = dp_sgd_noise_multiplier(check_epsilon(self.epsilon), sampling_rate, steps, delta,
                                                       accountant)
        clip_norm = check_scalar(self.clip_norm, "clip_norm", low=0.0)
        learning_rate = check_scalar(self.learning_rate, "learning_rate", low=0.0)
        l2 = check_scalar(self.l2, "l2", low=0.0, low_inclusive=True)
        x_bound, _ = check_bounds(self.x_bound)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        rng = check_random_state(self.rng)
        if self.expected_batch_size is None:
            batch_size = sampling_rate * X.shape[0]
        else:
            batch_size = check_scalar(self.expected_batch_size, "expected_batch_size", low=1e-6,
                                      hint="a public constant such as sampling_rate * (planned data-set size)")
        theta = _dp_sgd(clipped_design(X, x_bound, fit_intercept), Y, kind, noise_multiplier=noise_multiplier,
                        clip_norm=clip_norm, sampling_rate=sampling_rate, steps=steps,
                        learning_rate=learning_rate, l2=l2, batch_size=batch_size, rng=rng)
        self.expected_batch_size_ = batch_size
        self.noise_multiplier_ = noise_multiplier
        self.epsilon_ = dp_sgd_epsilon(noise_multiplier, sampling_rate, steps, delta, accountant)
        public = [f"x_bound = {x_bound:g}", f"clip_norm = {clip_norm:g}", f"sampling_rate = {sampling_rate:g}",
                  f"steps = {steps}", f"noise_multiplier = {noise_multiplier:.4g}"]
        if getattr(self, "y_bound", None) is not None:
            public.insert(1, f"y_bound = {float(self.y_bound):g}")
        if self.expected_batch_size is not None:
            public.append(f"expected_batch_size = {batch_size:g}")
        self.privacy_ = trainer_privacy_account(f"{type(self).__name__} (DP-SGD, {accountant} accountant)",
                                                self.epsilon_, delta, public,
                                                n_public=self.expected_batch_size is None)
        self.n_features_in_ = X.shape[1]
        return theta


_SGD_DOC = """
    Each of ``steps`` steps draws a Poisson sample (every example independently
    with probability ``sampling_rate``), clips each example's gradient to norm
    ``clip_norm``, adds :math:`N(0, (\\sigma C)^2 I)` to the *sum* and divides by
    the expected batch size :math:`b`, then takes a step
    :math:`\\theta \\leftarrow \\theta - \\eta\\,(\\tilde g / b + \\lambda\\theta)`
    from :math:`\\theta_0 = 0` (Abadi et al., 2016); the last iterate is returned.
    ``epsilon_`` comes from :func:`dp_sgd_epsilon` (add/remove). The output law
    does not depend on the order of the rows.

    The default :math:`b = q n` uses the data-set size. Under add/remove with a
    private :math:`n` (Differential CP and DPCP compare fits on :math:`n` and
    :math:`n+1` points) the step size must not depend on :math:`n`: pass
    ``expected_batch_size`` as a public constant, e.g. ``q * n0`` for a planned
    size ``n0``. Only then is the accountant's add/remove guarantee the
    guarantee of the released model.

    Passing ``epsilon`` instead calibrates the noise multiplier with
    :func:`dp_sgd_noise_multiplier` (``noise_multiplier`` is then ignored), so the
    estimator can be given a budget like the other trainers.
"""


class DPSGDRegressor(RegressorMixin, _DPSGDBase):
    __doc__ = """Linear regression (squared loss) trained with DP-SGD (chapter 7).
""" + _SGD_DOC + """
    Parameters
    ----------
    noise_multiplier : float, default=1.0
        :math:`\\sigma \\ge 0`.
    clip_norm : float, default=1.0
        Per-example gradient norm bound :math:`C`.
    sampling_rate : float, default=0.01
        Poisson sampling probability :math:`q \\in (0, 1]`.
    steps : int, default=1000
        Number of steps :math:`T`.
    learning_rate : float, default=0.2
        :math:`\\eta`.
    delta : float, default=1e-06
        Target :math:`\\delta \\in (0, 1)` for ``epsilon_``.
    l2 : float, default=0.0
        Ridge coefficient :math:`\\lambda \\ge 0` added to the averaged gradient.
    x_bound, y_bound : float
        **Required** public bounds: rows are clipped to norm ``x_bound`` and labels to
        ``[-y_bound, y_bound]``; predictions are clipped to ``[-y_bound, y_bound]``.
    fit_intercept : bool, default=True
        Append a constant column of ones.
    rng : None, int or numpy.random.Generator, default=None
        Source of the sampling and the noise; ``None`` for a real release
        (:term:`Seed`).
    expected_batch_size : float or None, default=None
        Public divisor :math:`b`; ``None`` uses ``sampling_rate * n`` (see above).
    accountant : {"rdp", "pld"}, default="rdp"
        The accountant of :func:`dp_sgd_epsilon`.
    epsilon : float or None, default=None
        Target budget; if given, ``noise_multiplier_`` is calibrated to it.

    Attributes
    ----------
    coef_ : ndarray of shape (d,)
    intercept_ : float
    epsilon_ : float
        The accountant's epsilon (at most ``epsilon`` when that is given).
    privacy_ : PrivacyAccount
        ``(epsilon_, delta)`` under add/remove (primary; with a public
        ``expected_batch_size``), replace-one by group privacy. With
        ``expected_batch_size=None`` the step divides by the data's own size:
        add/remove is then not covered and the primary relation is replace-one.
        The rule for ``epsilon`` (the total of what ``fit`` computes from the
        data) is in :mod:`dpcp_tutorial.accounting`.
    noise_multiplier_ : float
        The noise multiplier used.
    expected_batch_size_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray
        The column names when fitted on a DataFrame with string column names;
        a later frame is matched by name (reordered columns are read by name).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(2000, 2)); y = X @ [1.0, -1.0]
    >>> model = DPSGDRegressor(noise_multiplier=2.0, sampling_rate=0.05, steps=200, learning_rate=0.5,
    ...                        x_bound=1.0, y_bound=1.0, expected_batch_size=100.0, rng=1).fit(X, y)
    >>> np.round(model.coef_, 1), round(model.epsilon_, 2)
    (array([ 1., -1.]), 1.95)
"""

    def __init__(self, noise_multiplier: float = 1.0, clip_norm: float = 1.0, sampling_rate: float = 0.01,
                 steps: int = 1000, learning_rate: float = 0.2, delta: float = 1e-6, l2: float = 0.0, *,
                 x_bound=REQUIRED, y_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None,
                 expected_batch_size: float | None = None, accountant: str = "rdp", epsilon: float | None = None):
        require_bounds(type(self).__name__, x_bound, y_bound, needs_y=True)
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.learning_rate = learning_rate
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.rng = rng
        self.expected_batch_size = expected_batch_size
        self.accountant = accountant
        self.epsilon = epsilon

    def fit(self, X, y):
        """Run DP-SGD on ``(X, y)``. Returns ``self``."""
        X = fit_features(X, self)
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        _, y_bound = check_bounds(self.x_bound, self.y_bound)
        theta = self._run(X, np.clip(y, -y_bound, y_bound)[:, None], "squared")[0]
        self.coef_ = theta[:-1] if self.fit_intercept else theta
        self.intercept_ = float(theta[-1]) if self.fit_intercept else 0.0
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions clipped to ``[-y_bound, y_bound]``, on rows clipped to ``x_bound``."""
        check_is_fitted(self, "coef_")
        X = prediction_features(X, self)
        pred = clip_rows(X, self.x_bound) @ self.coef_ + self.intercept_
        return np.clip(pred, -self.y_bound, self.y_bound)


class DPSGDClassifier(LinearClassifierMixin, ClassifierMixin, _DPSGDBase):
    __doc__ = """Logistic (two classes) or softmax (K >= 3) regression trained with DP-SGD (chapter 7).
""" + _SGD_DOC + """
    Parameters
    ----------
    noise_multiplier : float, default=1.0
        :math:`\\sigma \\ge 0`.
    clip_norm : float, default=1.0
        Per-example gradient norm bound :math:`C`.
    sampling_rate : float, default=0.01
        Poisson sampling probability :math:`q \\in (0, 1]`.
    steps : int, default=1000
        Number of steps :math:`T`.
    learning_rate : float, default=0.5
        :math:`\\eta`.
    delta : float, default=1e-06
        Target :math:`\\delta \\in (0, 1)` for ``epsilon_``.
    l2 : float, default=0.0
        Ridge coefficient :math:`\\lambda \\ge 0` added to the averaged gradient.
    x_bound : float
        **Required** public bound: rows are clipped to norm ``x_bound``.
    fit_intercept : bool, default=True
        Append a constant column of ones.
    rng : None, int or numpy.random.Generator, default=None
        Source of the sampling and the noise; ``None`` for a real release
        (:term:`Seed`).
    expected_batch_size : float or None, default=None
        Public divisor :math:`b`; ``None`` uses ``sampling_rate * n`` (see above).
    accountant : {"rdp", "pld"}, default="rdp"
        The accountant of :func:`dp_sgd_epsilon`.
    epsilon : float or None, default=None
        Target budget; if given, ``noise_multiplier_`` is calibrated to it.
    classes : array-like, default=None
        The public label set, **required** by :meth:`fit` (as in
        :class:`DPLogisticRegression`).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    coef_ : ndarray of shape (1, d) or (K, d)
    intercept_ : ndarray of shape (1,) or (K,)
    epsilon_ : float
    privacy_ : PrivacyAccount
        As in :class:`DPSGDRegressor`.
    noise_multiplier_ : float
    expected_batch_size_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray
        The column names when fitted on a DataFrame with string column names;
        a later frame is matched by name (reordered columns are read by name).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(2000, 2))
    >>> y = (X @ [4.0, -4.0] + rng.logistic(size=2000) > 0).astype(int)
    >>> model = DPSGDClassifier(noise_multiplier=2.0, sampling_rate=0.05, steps=200, x_bound=1.0,
    ...                         expected_batch_size=100.0, classes=[0, 1], rng=1).fit(X, y)
    >>> model.predict([[0.4, -0.4], [-0.4, 0.4]])
    array([1, 0])
    >>> round(model.score(X, y), 2)
    0.76
"""

    def __init__(self, noise_multiplier: float = 1.0, clip_norm: float = 1.0, sampling_rate: float = 0.01,
                 steps: int = 1000, learning_rate: float = 0.5, delta: float = 1e-6, l2: float = 0.0, *,
                 x_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None,
                 expected_batch_size: float | None = None, accountant: str = "rdp", epsilon: float | None = None,
                 classes=None):
        require_bounds(type(self).__name__, x_bound)
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.learning_rate = learning_rate
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.fit_intercept = fit_intercept
        self.rng = rng
        self.expected_batch_size = expected_batch_size
        self.accountant = accountant
        self.epsilon = epsilon
        self.classes = classes

    def fit(self, X, y):
        """Run DP-SGD on ``(X, y)``. Returns ``self``."""
        X = fit_features(X, self)
        classes_, index = encode_labels(y, self.classes, "DPSGDClassifier")
        check_same_length(("X", X), ("y", index))
        kind = "logistic" if classes_.size == 2 else "softmax"
        theta = self._run(X, one_hot(index, classes_.size), kind)
        self.classes_ = classes_
        self._set_coefficients(theta)
        return self


class DPSGDQuantileRegressor(RegressorMixin, _DPSGDBase):
    __doc__ = """Linear quantile regression (pinball loss) trained with DP-SGD (chapter 17).

    Minimises :math:`\\sum_i \\rho_\\tau(y_i - \\theta^\\top x_i)` with
    :math:`\\rho_\\tau(u) = u(\\tau - 1\\{u < 0\\})`; the per-example gradient is
    :math:`(1\\{y_i < \\theta^\\top x_i\\} - \\tau)\\,x_i`, of norm at most
    :math:`\\max(\\tau, 1-\\tau)B` whatever :math:`y` is, so no label bound is
    needed (it is clipped to ``clip_norm`` like every DP-SGD gradient). Same
    loop and accounting as :class:`~dpcp_tutorial.DPSGDRegressor`:
""" + _SGD_DOC + """
    Parameters
    ----------
    quantile : float, default=0.9
        The level :math:`\\tau \\in (0, 1)`.
    noise_multiplier : float, default=1.0
        :math:`\\sigma \\ge 0`.
    clip_norm : float, default=1.0
        Per-example gradient norm bound :math:`C`.
    sampling_rate : float, default=0.05
        Poisson sampling probability :math:`q \\in (0, 1]`.
    steps : int, default=300
        Number of steps :math:`T`.
    learning_rate : float, default=20.0
        :math:`\\eta`.
    delta : float, default=1e-06
        Target :math:`\\delta \\in (0, 1)` for ``epsilon_``.
    l2 : float, default=0.0
        Ridge coefficient :math:`\\lambda \\ge 0` added to the averaged gradient.
    x_bound : float
        **Required** public bound: rows are clipped to norm ``x_bound``.
    fit_intercept : bool, default=True
        Append a constant column of ones.
    rng : None, int or numpy.random.Generator, default=None
        Source of the sampling and the noise; ``None`` for a real release
        (:term:`Seed`).
    expected_batch_size : float or None, default=None
        Public divisor :math:`b`; ``None`` uses ``sampling_rate * n`` (see above).
    accountant : {"rdp", "pld"}, default="rdp"
        The accountant of :func:`dp_sgd_epsilon`.
    epsilon : float or None, default=None
        Target budget; if given, ``noise_multiplier_`` is calibrated to it.

    Attributes
    ----------
    coef_, intercept_, epsilon_, privacy_, noise_multiplier_, expected_batch_size_, n_features_in_
        As in :class:`~dpcp_tutorial.DPSGDRegressor`; ``privacy_`` is a
        :class:`~dpcp_tutorial.PrivacyAccount`, ``(epsilon_, delta)`` under add/remove.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(2000, 2)); y = X @ [1.0, -1.0] + 0.1 * rng.normal(size=2000)
    >>> model = DPSGDQuantileRegressor(quantile=0.9, noise_multiplier=2.0, steps=200, learning_rate=1.0,
    ...                                x_bound=1.0, expected_batch_size=100.0, rng=1).fit(X, y)
    >>> np.round(model.coef_, 1), round(model.intercept_, 1)
    (array([ 1., -1.]), 0.2)
"""

    def __init__(self, quantile: float = 0.9, noise_multiplier: float = 1.0, clip_norm: float = 1.0,
                 sampling_rate: float = 0.05, steps: int = 300, learning_rate: float = 20.0, delta: float = 1e-6,
                 l2: float = 0.0, *, x_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None,
                 expected_batch_size: float | None = None, accountant: str = "rdp", epsilon: float | None = None):
        require_bounds(type(self).__name__, x_bound)
        self.quantile = quantile
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.learning_rate = learning_rate
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.fit_intercept = fit_intercept
        self.rng = rng
        self.expected_batch_size = expected_batch_size
        self.accountant = accountant
        self.epsilon = epsilon

    def fit(self, X, y):
        """Run DP-SGD on the pinball loss. Returns ``self``."""
        tau = check_alpha(self.quantile, "quantile")
        X = fit_features(X, self)
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))

        def pinball_gradient(Z, Y):
            return (Y < Z).astype(float) - tau

        theta = self._run(X, y[:, None], pinball_gradient)[0]
        self.coef_ = theta[:-1] if self.fit_intercept else theta
        self.intercept_ = float(theta[-1]) if self.fit_intercept else 0.0
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted :math:`\\tau`-quantiles, on rows clipped to ``x_bound``."""
        check_is_fitted(self, "coef_")
        X = prediction_features(X, self)
        x_bound, _ = check_bounds(self.x_bound)
        return clip_rows(X, x_bound) @ self.coef_ + self.intercept_
