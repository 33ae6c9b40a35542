"""Data generators and loaders used throughout the book (no downloads: everything is
simulated or ships inside an installed package: scikit-learn, statsmodels).
"""

from __future__ import annotations

import numpy as np

from ._validation import RandomLike, check_choice, check_positive_int, check_random_state, check_scalar

__all__ = [
    "make_heteroscedastic_regression",
    "make_contaminated_gaussian",
    "make_cauchy",
    "load_rand_hie",
    "RAND_HIE_VISITS_BOUND",
]


_MAX_VALUES = 10 ** 9    # a simulated data set holds at most this many numbers (8 GB)


def _check_shape(n, d=1) -> tuple[int, int]:
    n = check_positive_int(n, "n", maximum=_MAX_VALUES)
    d = check_positive_int(d, "d", maximum=_MAX_VALUES)
    if n * d > _MAX_VALUES:
        raise ValueError(f"n * d = {n * d} exceeds {_MAX_VALUES:g} values; simulate in chunks "
                         "(dpcp_tutorial.scale.simulated_scores streams scores)")
    return n, d


def make_heteroscedastic_regression(n: int, rng: RandomLike = None, noise: float = 0.5):
    """One-feature regression with noise that grows with ``|x|`` (chapters 1, 4–6).

    .. math:: X \\sim U(-3, 3), \\qquad Y = \\sin(X) + X/2 + \\sigma\\,(0.2 + |X|/3)\\, \\varepsilon,
              \\quad \\varepsilon \\sim N(0, 1).

    Parameters
    ----------
    n : int
        Number of samples.
    rng : None, int or numpy.random.Generator, default=None
        Source of randomness (a simulation, so a seed is fine: :term:`Seed`).
    noise : float, default=0.5
        Noise scale :math:`\\sigma`.

    Returns
    -------
    X : ndarray of shape (n, 1)
    y : ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import make_heteroscedastic_regression
    >>> X, y = make_heteroscedastic_regression(5, rng=0)
    >>> X.shape, y.shape
    ((5, 1), (5,))
    """
    n, _ = _check_shape(n)
    noise = check_scalar(noise, "noise", low=0.0, low_inclusive=True)
    rng = check_random_state(rng)
    x = rng.uniform(-3.0, 3.0, size=n)
    y = np.sin(x) + x / 2 + noise * (0.2 + np.abs(x) / 3) * rng.standard_normal(n)
    return x[:, None], y


def make_contaminated_gaussian(n: int, d: int, fraction: float = 0.25, shift: float = 5.0,
                               rng: RandomLike = None) -> np.ndarray:
    """Gaussian contamination model :math:`(1-\\eta)N(0, I_d) + \\eta N(s\\mathbf 1_d, I_d)` (chapter 10).

    As in the authors' simulations, the first :math:`\\lfloor \\eta n \\rfloor` rows
    are the contaminated ones (deterministic labels); the target location is 0.
    The sample mean is then biased by :math:`\\eta s \\sqrt d` in norm
    (:math:`1.25\\sqrt d` for the defaults).

    Parameters
    ----------
    n, d : int
        Sample size and dimension.
    fraction : float, default=0.25
        Contaminated fraction :math:`\\eta` in [0, 1).
    shift : float, default=5.0
        Shift :math:`s` of every coordinate of the contaminated rows.
    rng : None, int or numpy.random.Generator, default=None
        Source of randomness (a simulation, so a seed is fine: :term:`Seed`).

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    >>> from dpcp_tutorial import make_contaminated_gaussian
    >>> make_contaminated_gaussian(100, 3, fraction=0.1, rng=0).shape
    (100, 3)
    """
    n, d = _check_shape(n, d)
    fraction = check_scalar(fraction, "fraction", low=0.0, high=1.0, low_inclusive=True)
    shift = check_scalar(shift, "shift")
    rng = check_random_state(rng)
    data = rng.standard_normal((n, d))
    data[: int(np.floor(fraction * n))] += shift
    return data


def make_cauchy(n: int, d: int, rng: RandomLike = None) -> np.ndarray:
    """Independent standard Cauchy marginals centred at 0 (chapter 11).

    No moments exist, so the sample mean does not converge; every depth median
    targets the centre 0.

    Parameters
    ----------
    n : int
        Number of points.
    d : int
        Dimension.
    rng : None, int or numpy.random.Generator, default=None
        Source of randomness (a simulation, so a seed is fine: :term:`Seed`).

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import make_cauchy
    >>> x = make_cauchy(10001, 2, rng=0)
    >>> x.shape, bool(np.all(np.abs(np.median(x, axis=0)) < 0.1))
    ((10001, 2), True)
    """
    n, d = _check_shape(n, d)
    rng = check_random_state(rng)
    return rng.standard_cauchy((n, d))


# A person-year has at most 365 days and the variable counts visits to a physician, at most one per day:
# a bound from the variable's definition (statsmodels' description of the data), not from the observed values.
RAND_HIE_VISITS_BOUND = 365.0

_RAND_HIE_HEALTH = ("excellent", "good", "fair", "poor")


def load_rand_hie(task: str = "regression"):
    """The RAND Health Insurance Experiment data shipped with statsmodels (20,190 person-years).

    ``statsmodels.datasets.randhie`` (public domain; used in Cameron & Trivedi 2005, *Microeconometrics*):
    one row per person-year of the experiment, with ``mdvis`` (outpatient
    visits to a physician in the year), insurance-plan variables (``lncoins``,
    ``idp``, ``lpi``, ``fmde``), ``physlm``, ``disea`` and the self-rated health
    dummies ``hlthg``, ``hlthf``, ``hlthp`` (omitted category: excellent). Read
    from the installed package; nothing is downloaded. Two columns are not what
    statsmodels' short description suggests: ``disea`` ("number of chronic
    diseases") holds a percentage of the conditions of a baseline checklist
    (values in [0, 100], with a few imputed site means), and ``physlm``
    ("physical limitation") holds imputed fractions between 0 and 1 besides 0
    and 1. Chapter 6 derives a public box for every column from its definition.

    Parameters
    ----------
    task : {"regression", "classification"}, default="regression"
        ``"regression"``: ``y = mdvis`` (float), ``X`` = the nine other
        columns. ``"classification"``: ``y`` = self-rated health, 0 = excellent
        (about 55%), 1 = good (36%), 2 = fair (7.7%), 3 = poor (1.5%), an
        imbalanced four-class label; ``X`` = ``mdvis`` and the six
        non-health columns.

    Returns
    -------
    X : ndarray of shape (20190, d)
    y : ndarray of shape (20190,)
    info : dict
        ``feature_names``; for regression ``y_bound`` =
        :data:`RAND_HIE_VISITS_BOUND` = 365, a public bound on the target from
        its definition (visits in one year, at most one a day), never from the
        data (the observed maximum is far lower; any smaller cap chosen before
        looking at the data would be valid too, clipping only costs width);
        for classification ``classes`` = [0, 1, 2, 3] and ``class_names``.

    Notes
    -----
    The rows are person-years: a person enrolled for several years (the
    experiment ran three or five years per family) contributes several rows,
    so a guarantee for neighbouring data sets that differ in one row protects
    a person-year. By group privacy, a person with :math:`r` rows gets
    :math:`r\\varepsilon` (pure DP).

    Raises
    ------
    ImportError
        If statsmodels is not installed: ``pip install "dpcp_tutorial[data]"``.

    Examples
    --------
    >>> from dpcp_tutorial import load_rand_hie
    >>> X, y, info = load_rand_hie("regression")
    >>> X.shape, info["feature_names"][:2], info["y_bound"]
    ((20190, 9), ['lncoins', 'idp'], 365.0)
    """
    task = check_choice(task, "task", ("regression", "classification"))
    try:
        from statsmodels.datasets import randhie
    except ImportError as err:
        raise ImportError('load_rand_hie needs statsmodels, which ships the RAND HIE data: '
                          'pip install "dpcp_tutorial[data]" (or pip install statsmodels)') from err
    frame = randhie.load_pandas().data
    if task == "regression":
        names = [c for c in frame.columns if c != "mdvis"]
        X = frame[names].to_numpy(dtype=float)
        y = frame["mdvis"].to_numpy(dtype=float)
        return X, y, {"feature_names": names, "y_bound": RAND_HIE_VISITS_BOUND}
    health = frame[["hlthg", "hlthf", "hlthp"]].to_numpy(dtype=int)
    y = health @ np.array([1, 2, 3])             # the dummies are exclusive; all zero = excellent
    names = [c for c in frame.columns if c not in ("hlthg", "hlthf", "hlthp")]
    X = frame[names].to_numpy(dtype=float)
    return X, y.astype(np.int64), {"feature_names": names, "classes": [0, 1, 2, 3],
                                   "class_names": list(_RAND_HIE_HEALTH)}
