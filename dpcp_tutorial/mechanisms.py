"""Basic differentially private mechanisms (chapters 2 and 3).

* Additive noise for numeric queries: the Laplace mechanism (pure
  :math:`\\varepsilon`-DP) and the Gaussian mechanism (:math:`(\\varepsilon, \\delta)`-DP),
  the latter with the classical calibration and with the exact *analytic*
  calibration of Balle & Wang (2018) (chapter 2).
* Selection from a finite candidate set: the exponential mechanism
  (chapter 3). All its samplers work in log space: no large number is ever
  exponentiated, so utilities of size 1e9 with epsilon up to 1e3 are handled
  exactly (chapter 3, *The naive formula underflows*).

Randomness and real releases
----------------------------
Every random function of the package takes ``rng``:

``None`` for a real release, a seed for teaching, tests and simulations
(:term:`Seed`: a seeded release is not private).

NumPy's samplers work in floating point and are **not a hardened DP
implementation**: Mironov (2012, "On significance of the least significant
bits for differential privacy") showed that the low-order bits of a textbook
floating-point Laplace sample reveal the value it was added to, and the same
kind of attack applies to other samplers built from ``log`` of a uniform
float. Where OpenDP's exact samplers (arbitrary-precision arithmetic, the
operating system's randomness) produce the same release law, the function
offers ``sampler="opendp"``: the Laplace mechanism, the exponential mechanism
(:func:`exponential_mechanism`, the private quantile
:func:`~dpcp_tutorial.private_quantile`), and the peers' calibrators of
:mod:`dpcp_tutorial.calibrators`. OpenDP's samplers cannot be seeded, so with
``sampler="opendp"`` the argument ``rng`` must be ``None``. The tests check
that both samplers follow the same law. Where a function offers no such option,
its docstring says why.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
from scipy.special import log_ndtr

from ._mechanism_core import normalise, opendp_additive, opendp_noisy_max
from ._validation import (
    MAX_MAGNITUDE,
    RandomLike,
    real_array,
    check_1d,
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_random_state,
    check_scalar,
)

__all__ = [
    "laplace_scale",
    "laplace_mechanism",
    "gaussian_sigma",
    "gaussian_mechanism",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gumbel_max_sample",
    "SAMPLERS",
]

#: Samplers of the releases that offer a choice (see the module docstring).
SAMPLERS = ("numpy", "opendp")


def check_sampler(sampler, rng):
    """Validate ``(sampler, rng)``: the generator to use with ``"numpy"``, ``None`` with ``"opendp"``.

    OpenDP's samplers draw from the operating system and cannot be seeded: a seed
    or generator passed with ``sampler="opendp"`` is refused (it would promise a
    reproducibility that does not exist), after its type is checked as usual.
    """
    sampler = check_choice(sampler, "sampler", SAMPLERS,
                           "'numpy' is NumPy's seedable floating-point sampler, 'opendp' OpenDP's exact sampler")
    if sampler == "numpy":
        return sampler, check_random_state(rng)
    if rng is not None:
        check_random_state(rng)
        raise ValueError("sampler='opendp' draws from the operating system through OpenDP and cannot be seeded; "
                         "pass rng=None (the choice for a real release anyway)")
    return sampler, None


@contextlib.contextmanager
def opendp_prelude():
    """``opendp.prelude`` with OpenDP's ``contrib`` features enabled inside the block only.

    OpenDP checks its feature flags when a measurement is built, not when it
    runs, so the package builds its measurements inside this block and the
    caller's own setting (``opendp.prelude.enable_features``) is restored on
    leaving it: using ``sampler="opendp"`` never enables "contrib" for the rest
    of the process. OpenDP is an optional dependency (``pip install opendp``).
    """
    try:
        import opendp.prelude as odp
        from opendp.mod import GLOBAL_FEATURES
    except ImportError as err:     # pragma: no cover - opendp is pinned in requirements.txt
        raise ImportError("sampler='opendp' and opendp_quantile need the OpenDP library: "
                          "pip install 'dpcp_tutorial[opendp]' (or pip install opendp)") from err
    had = "contrib" in GLOBAL_FEATURES
    odp.enable_features("contrib")
    try:
        yield odp
    finally:
        if not had:
            odp.disable_features("contrib")


def rounded_up(value: float) -> float:
    """The smallest float ``>= value`` computed by one rounding (a noise scale that never loses privacy)."""
    return float(np.nextafter(value, np.inf))


# ---------------------------------------------------------------------------
# additive noise: Laplace and Gaussian
# ---------------------------------------------------------------------------

def _check_sensitivity(sensitivity) -> float:
    return check_scalar(sensitivity, "sensitivity", low=0.0,
                        hint="the sensitivity is the largest change of the query between neighbours; it must be > 0")


def _check_value(value) -> np.ndarray:
    # the query answer is private: the domain check's message is the same for every invalid answer
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TypeError(f"value must be a real number or an array of real numbers, got {type(value).__name__}")
    arr = real_array(value, "value")
    if not np.isfinite(arr).all():
        raise ValueError("value contains NaN or infinite entries; a private release needs a finite query answer")
    if arr.size and not np.abs(arr).max() <= MAX_MAGNITUDE:
        raise ValueError(f"value has entries beyond {MAX_MAGNITUDE:g} in magnitude; rescale the query")
    return arr


def _add_noise(value, noise_fn) -> float | np.ndarray:
    arr = _check_value(value)
    noisy = arr + noise_fn(arr.shape)
    return float(noisy) if noisy.ndim == 0 else noisy


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale :math:`b = \\Delta_1 / \\varepsilon` of the Laplace mechanism (chapter 2).

    Parameters
    ----------
    sensitivity : float
        :math:`\\Delta_1`, the largest :math:`\\ell_1` change of the query between neighbouring data sets.
    epsilon : float
        Privacy parameter (positive).

    Examples
    --------
    >>> from dpcp_tutorial import laplace_scale
    >>> laplace_scale(sensitivity=1.0, epsilon=0.5)
    2.0
    """
    return _check_sensitivity(sensitivity) / check_epsilon(epsilon)


def laplace_mechanism(value, sensitivity: float, epsilon: float, rng: RandomLike = None, *,
                      sampler: str = "numpy"):
    """Release ``value`` plus Laplace noise: pure :math:`\\varepsilon`-DP (chapter 2).

    .. math:: M(D) = f(D) + Z, \\qquad Z_i \\overset{iid}{\\sim} \\mathrm{Laplace}(0, \\Delta_1/\\varepsilon),

    where :math:`\\Delta_1 = \\max_{D \\simeq D'} \\lVert f(D) - f(D') \\rVert_1`.

    Parameters
    ----------
    value : float or array-like
        The exact query answer :math:`f(D)` (a vector query gets independent noise per entry).
    sensitivity : float
        :math:`\\Delta_1` under the neighbouring relation you want to protect.
    epsilon : float
        Privacy parameter (positive).
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise with ``sampler="numpy"``; ``None`` for a real
        release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"`` (default): ``numpy.random.Generator.laplace``, a
        floating-point sampler (not hardened: Mironov 2012). ``"opendp"``:
        OpenDP's ``make_laplace``, which adds exact Laplace noise to the value
        and rounds once (same law up to that rounding; OpenDP's own privacy map
        at ``sensitivity`` is ``epsilon``).

    Returns
    -------
    float or ndarray
        The noisy answer, of the same shape as ``value``.

    Examples
    --------
    >>> from dpcp_tutorial import laplace_mechanism
    >>> round(float(laplace_mechanism(10.0, sensitivity=1.0, epsilon=1.0, rng=0)), 4)
    10.3201
    """
    b = laplace_scale(sensitivity, epsilon)
    sampler, gen = check_sampler(sampler, rng)
    if sampler == "opendp":
        arr = _check_value(value)
        noisy = opendp_additive(arr, b, "laplace")
        return float(noisy) if noisy.ndim == 0 else noisy
    return _add_noise(value, lambda shape: gen.laplace(0.0, b, size=shape))


def _log_sub_exp(log_a, log_b):
    """:math:`\\log(e^a - e^b)` for :math:`a > b` without cancellation (``-inf`` when ``a <= b``)."""
    if log_b >= log_a:
        return -math.inf
    return log_a + math.log(-math.expm1(log_b - log_a))


def _analytic_gaussian_alpha(epsilon: float, delta: float) -> float:
    """Noise multiplier of Balle & Wang (2018), Algorithm 1, for sensitivity 1.

    Returns :math:`\\alpha` such that :math:`\\sigma = \\alpha / \\sqrt{2\\varepsilon}`.
    Works with logarithms of the Gaussian tail (``scipy.special.log_ndtr``),
    so :math:`e^{\\varepsilon}` is never formed.
    """
    log_delta = math.log(delta)

    def log_term(y):  # log( e^eps * Phi(-y) )
        return epsilon + float(log_ndtr(-y))

    # delta_0 = Phi(0) - e^eps Phi(-sqrt(2 eps)): the privacy profile at sigma = 1/sqrt(2 eps)
    log_delta0 = _log_sub_exp(math.log(0.5), log_term(math.sqrt(2.0 * epsilon)))
    if log_delta >= log_delta0:
        # B+(v) = Phi(sqrt(eps v)) - e^eps Phi(-sqrt(eps (v + 2))), increasing; v* = sup{v : B+(v) <= delta}
        def log_b(v):
            return _log_sub_exp(float(log_ndtr(math.sqrt(epsilon * v))), log_term(math.sqrt(epsilon * (v + 2.0))))
        increasing = True
    else:
        # B-(u) = Phi(-sqrt(eps u)) - e^eps Phi(-sqrt(eps (u + 2))), decreasing; u* = inf{u : B-(u) <= delta}
        def log_b(u):
            return _log_sub_exp(float(log_ndtr(-math.sqrt(epsilon * u))), log_term(math.sqrt(epsilon * (u + 2.0))))
        increasing = False

    def below(x):  # is B(x) <= delta ?
        return log_b(x) <= log_delta

    # bracket [lo, hi] with below(lo) == increasing and below(hi) != increasing, then bisect
    lo, hi = 0.0, 1.0
    while below(hi) == increasing:
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:  # B+ tends to 1 > delta and B- to 0 < delta, so this cannot happen
            raise RuntimeError("analytic Gaussian calibration failed to bracket the solution")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if below(mid) == increasing:
            lo = mid
        else:
            hi = mid
    x = lo if increasing else hi
    root = math.sqrt(1.0 + x / 2.0)
    return root - math.sqrt(x / 2.0) if increasing else root + math.sqrt(x / 2.0)


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float, analytic: bool = True) -> float:
    """Noise standard deviation of the Gaussian mechanism (chapter 2).

    * ``analytic=True`` (default): the smallest :math:`\\sigma` for which adding
      :math:`N(0, \\sigma^2 I)` is :math:`(\\varepsilon, \\delta)`-DP, i.e. the solution of

      .. math:: \\Phi\\Big(\\frac{\\Delta_2}{2\\sigma} - \\frac{\\varepsilon\\sigma}{\\Delta_2}\\Big)
                - e^{\\varepsilon}\\,\\Phi\\Big(-\\frac{\\Delta_2}{2\\sigma} - \\frac{\\varepsilon\\sigma}{\\Delta_2}\\Big)
                = \\delta,

      found by the binary search of Balle & Wang (2018, Algorithm 1). Valid for every :math:`\\varepsilon > 0`.
    * ``analytic=False``: the classical :math:`\\sigma = \\Delta_2\\sqrt{2\\log(1.25/\\delta)}/\\varepsilon`
      (Dwork & Roth 2014, Theorem A.1), proved only for :math:`\\varepsilon < 1`.

    Parameters
    ----------
    sensitivity : float
        :math:`\\Delta_2`, the largest :math:`\\ell_2` change of the query between neighbours.
    epsilon : float
        Privacy parameter (positive; below 1 for the classical calibration).
    delta : float
        Privacy parameter in (0, 1).
    analytic : bool, default=True
        Use the exact analytic calibration (default) or the classical formula.

    Raises
    ------
    ValueError
        If ``delta`` is 0 (no Gaussian noise is pure DP), or if ``analytic=False`` with ``epsilon >= 1``.

    Examples
    --------
    >>> from dpcp_tutorial import gaussian_sigma
    >>> round(gaussian_sigma(1.0, epsilon=1.0, delta=1e-5), 4)
    3.7306
    >>> round(gaussian_sigma(1.0, epsilon=0.5, delta=1e-5, analytic=False), 4)
    9.6896
    """
    sensitivity = _check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("the Gaussian mechanism needs delta > 0 (no amount of Gaussian noise gives pure "
                         "epsilon-DP); use laplace_mechanism for delta = 0")
    if check_bool(analytic, "analytic"):
        return sensitivity * _analytic_gaussian_alpha(epsilon, delta) / math.sqrt(2.0 * epsilon)
    if epsilon >= 1.0:
        raise ValueError(f"the classical Gaussian calibration is only proved for epsilon < 1, got epsilon={epsilon:g}; "
                         "use analytic=True, which is exact for every epsilon")
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_mechanism(value, sensitivity: float, epsilon: float, delta: float, rng: RandomLike = None,
                       analytic: bool = True):
    """Release ``value`` plus Gaussian noise: :math:`(\\varepsilon, \\delta)`-DP (chapter 2).

    .. math:: M(D) = f(D) + Z, \\qquad Z \\sim N(0, \\sigma^2 I),

    with :math:`\\sigma` from :func:`gaussian_sigma` (analytic calibration by
    default) and :math:`\\Delta_2 = \\max_{D \\simeq D'} \\lVert f(D) - f(D') \\rVert_2`.

    Parameters
    ----------
    value : float or array-like
        The exact query answer :math:`f(D)`.
    sensitivity : float
        :math:`\\Delta_2` under the neighbouring relation you want to protect.
    epsilon, delta : float
        Privacy parameters.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` for a real release (:term:`Seed`).
    analytic : bool, default=True
        Calibrate :math:`\\sigma` exactly (default) or with the classical formula.

    Returns
    -------
    float or ndarray
        The noisy answer, of the same shape as ``value``.

    Notes
    -----
    The noise is NumPy's floating-point Gaussian sampler, which is not a
    hardened DP implementation (module docstring). No OpenDP sampler is
    offered here: OpenDP's ``make_gaussian`` draws the discrete Gaussian on a
    lattice (Canonne, Kamath & Steinke 2020) and certifies zCDP,
    :math:`\\rho = \\Delta_2^2/(2\\sigma^2)`; the analytic
    :math:`(\\varepsilon, \\delta)` calibration computed here is proven for the
    continuous Gaussian only. For a hardened Gaussian release use OpenDP
    directly with its zCDP accounting.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import gaussian_mechanism
    >>> noisy = gaussian_mechanism(np.zeros(3), 1.0, epsilon=1.0, delta=1e-5, rng=0)
    >>> np.round(noisy, 4)
    array([ 0.4691, -0.4928,  2.3892])
    """
    sigma = gaussian_sigma(sensitivity, epsilon, delta, analytic=analytic)
    gen = check_random_state(rng)
    return _add_noise(value, lambda shape: gen.normal(0.0, sigma, size=shape))


# ---------------------------------------------------------------------------
# exponential mechanism
# ---------------------------------------------------------------------------

def _exponential_logits(utilities, sensitivity: float, epsilon: float) -> np.ndarray:
    """Logits :math:`\\varepsilon u_j / (2\\Delta)`, shifted so the largest is 0."""
    u = check_1d(utilities, "utilities")
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    # subtract the max *before* scaling so huge utilities keep their differences
    return (epsilon / (2.0 * sensitivity)) * (u - u.max())


def gumbel_max_sample(logits: np.ndarray, rng: RandomLike = None) -> int:
    """Draw index ``j`` with probability ``softmax(logits)[j]`` by the Gumbel-max trick.

    .. math:: J = \\arg\\max_j \\,(\\ell_j + G_j), \\qquad G_j \\overset{iid}{\\sim} \\mathrm{Gumbel}(0, 1).

    Exact for any finite logits (no exponentials are formed). Entries equal to
    ``-inf`` are never chosen. The Gumbel variates are NumPy's floating-point
    ones (module docstring); for a release drawn by OpenDP's exact sampler use
    :func:`exponential_mechanism` with ``sampler="opendp"``.

    Parameters
    ----------
    logits : array-like of shape (m,)
        The log-weights :math:`\\ell_j`, finite or ``-inf``.
    rng : None, int or numpy.random.Generator, default=None
        Source of the Gumbel variates; ``None`` for a real release
        (:term:`Seed`).

    Returns
    -------
    int
        The drawn index :math:`J`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import gumbel_max_sample
    >>> gumbel_max_sample(np.array([0.0, -np.inf, 5.0]), rng=0)
    2
    """
    logits = real_array(logits, "logits")
    if logits.ndim != 1 or logits.size == 0:
        raise ValueError(f"logits must be a non-empty 1-D array, got shape {logits.shape}")
    if np.isnan(logits).any() or not np.isfinite(logits.max()):
        raise ValueError("logits must not contain NaN and must have a finite maximum")
    rng = check_random_state(rng)
    return int(np.argmax(logits + rng.gumbel(size=logits.size)))


def exponential_mechanism_probabilities(utilities, sensitivity: float, epsilon: float,
                                        log: bool = False) -> np.ndarray:
    """Exact output law of the exponential mechanism over a finite candidate set (chapter 3).

    .. math:: P(J = j) = \\frac{\\exp(\\varepsilon u_j / (2\\Delta))}
                                {\\sum_k \\exp(\\varepsilon u_k / (2\\Delta))},

    which is :math:`\\varepsilon`-DP when every utility changes by at most
    :math:`\\Delta` between neighbouring data sets (McSherry & Talwar, 2007).
    Computed as a log-softmax, so no term overflows or underflows to ``nan``.

    Parameters
    ----------
    utilities : array-like of shape (K,)
        Utility of each candidate (higher is better).
    sensitivity : float
        :math:`\\Delta`, the largest change of any utility between neighbours.
    epsilon : float
        Privacy parameter.
    log : bool, default=False
        Return log-probabilities instead (exact even where probabilities
        underflow to 0; used by the privacy audits).

    Returns
    -------
    ndarray of shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import exponential_mechanism_probabilities
    >>> p = exponential_mechanism_probabilities([0.0, 1.0], sensitivity=1.0, epsilon=2.0)
    >>> np.round(p, 4)
    array([0.2689, 0.7311])
    """
    return normalise(_exponential_logits(utilities, sensitivity, epsilon), log)


def exponential_mechanism(utilities, sensitivity: float, epsilon: float, rng: RandomLike = None, *,
                          sampler: str = "numpy") -> int:
    """Sample a candidate index from the exponential mechanism (chapter 3).

    Same law as :func:`exponential_mechanism_probabilities`,
    :math:`P(j) \\propto \\exp(\\varepsilon u_j / (2\\Delta))`, drawn with the
    Gumbel-max trick :math:`\\arg\\max_j (u_j/s + G_j)`, :math:`s = 2\\Delta/\\varepsilon`.

    Parameters
    ----------
    utilities : array-like of shape (K,)
        Utility of each candidate (higher is better), finite.
    sensitivity : float
        :math:`\\Delta`, the largest change of any utility between neighbours.
    epsilon : float
        Privacy parameter.
    rng : None, int or numpy.random.Generator, default=None
        Source of the Gumbel variates with ``sampler="numpy"``; ``None`` for a
        real release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"`` (default): NumPy's floating-point Gumbel variates.
        ``"opendp"``: OpenDP's ``make_noisy_max`` with Gumbel noise
        (``zero_concentrated_divergence``), which compares
        :math:`u_j/s + G_j` exactly in arbitrary precision, on the given
        float utilities, with :math:`s` rounded up (so the loss is at most
        ``epsilon``). The same law, exactly; OpenDP's own map reports the
        bounded-range zCDP :math:`\\varepsilon^2/8`.

    Returns
    -------
    int
        The index of the chosen candidate.

    Examples
    --------
    >>> from dpcp_tutorial import exponential_mechanism
    >>> exponential_mechanism([0.0, 0.0, 10.0], sensitivity=1.0, epsilon=2.0, rng=0)
    2
    """
    sampler, _ = check_sampler(sampler, rng)
    if sampler == "opendp":
        u = check_1d(utilities, "utilities")
        epsilon = check_epsilon(epsilon)
        scale = rounded_up(2.0 * _check_sensitivity(sensitivity) / epsilon)
        return opendp_noisy_max(u - u.max(), scale, negate=False, integer=False)
    return gumbel_max_sample(_exponential_logits(utilities, sensitivity, epsilon), rng)


