"""Private conformal calibrators from the literature, restated from their papers.

Peers of Algorithm 1 (:mod:`dpcp_tutorial.quantile`) and of private split
conformal prediction (:mod:`dpcp_tutorial.private_split`), implemented from
their published descriptions so that every calibrator can be compared on the
same scores at equal privacy:

* :func:`pcoqs_quantile` -- P-COQS (Romanus & Molinari, 2025): a binary search
  for the conformal rank with Gaussian noise on range counts, rho-zCDP;
  :func:`pcoqs_corrected_level` gives the level that makes it a calibrator
  with a coverage guarantee (our derivation).
* :func:`laplace_histogram_quantile` -- a Laplace-noised histogram over public
  bins: the "Lap_Hist" baseline of the P-COQS paper (``variant="paper"``) and a
  corrected calibrator with a proven finite-sample coverage bound
  (``variant="corrected"``, the default).
* :func:`opendp_quantile` -- OpenDP's ``make_private_quantile`` (the library
  itself computes the scores and the privacy map) with a proven level
  correction (``variant="corrected"``, the default) or as is (``variant="raw"``).

Equal privacy between the pure-DP calibrators and P-COQS (rho-zCDP): an
epsilon-DP mechanism is ``rho = epsilon * tanh(epsilon / 2)``-zCDP, the sharp
conversion (:func:`~dpcp_tutorial.pure_dp_to_zcdp`; chapter 16, proposition
*Pure DP implies zCDP, tightly*), which is below the classic ``epsilon**2 / 2``
of Bun & Steinke (2016, Prop. 1.4) by a factor up to 5 at epsilon = 10. The
conversion goes one way only: P-COQS at that rho still holds the *weaker*
guarantee (zCDP does not imply pure DP); the book says so where it compares them.

Notation (chapter 16): :math:`\\kappa` is P-COQS's search tolerance (``tol``),
:math:`\\zeta` the failure share of the corrected calibrators; :math:`\\delta`
is kept for the DP parameter and :math:`\\gamma` for Angelopoulos et al.'s split.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from ._validation import (
    MAX_MAGNITUDE,
    MAX_RECORDS,
    RandomLike,
    check_1d,
    check_alpha,
    check_bool,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_scalar,
    renamed_keywords,
)
from ._calibrator_core import laplace_corrected_rank, opendp_bound, opendp_level, opendp_scale, pcoqs_corrected_rank
from ._counts import subsample_or_pad
from ._mechanism_core import gauss_legendre, opendp_additive
from .mechanisms import check_sampler, opendp_prelude

__all__ = [
    "laplace_histogram_quantile",
    "laplace_prefix_tail",
    "opendp_quantile",
    "opendp_quantile_level",
    "opendp_quantile_probabilities",
    "pcoqs_corrected_level",
    "pcoqs_quantile",
    "pcoqs_steps",
]

_RELATIONS = ("replace-one", "add/remove")


def _check_n(n, scores: np.ndarray) -> int:
    """The size of an exact law (``*_probabilities``): ``n`` must be the number of scores given."""
    if n is None:
        return int(scores.size)
    n = check_positive_int(n, "n")
    if n != scores.size:
        # n is public and so is the shape of the data the caller passes: comparing them reveals nothing
        raise ValueError(f"n={n} is the public number of calibration scores, but scores has a different "
                         "length; the release subsamples or pads to n first: pass the n scores it runs on")
    return n


def _at_public_n(scores, n, gen, upper: float):
    """``(scores, n)`` with exactly ``n`` scores: ``n=None`` keeps them (their number is then declared public);
    a public ``n`` takes a uniform ``n``-subset, or pads with ``upper``, the worst score of the public range
    (:func:`~dpcp_tutorial._counts.subsample_or_pad`; ``gen=None``, OpenDP's sampler, subsamples with fresh OS
    entropy). Nothing is drawn when there are exactly ``n`` scores. No count of the data is kept."""
    if n is None:
        if scores.size == 0:
            raise ValueError("scores is empty; at least one value is needed (or pass a public n to pad to)")
        return scores, int(scores.size)
    n = check_positive_int(n, "n", maximum=MAX_RECORDS)
    return subsample_or_pad(scores, n, np.random.default_rng() if gen is None else gen, top=upper), n


def _check_scores(scores, allow_empty: bool = False) -> np.ndarray:
    """Private scores as a 1-D float array; only NaN is refused (one fixed message for every such data set).

    Every finite or infinite score is legal: the calibrators clip to, or never count outside, the public
    range ``[lower, upper]``, so a score far outside it (``inf``, ``1e300``) releases like any other score
    on the same side of the range. NaN has no place on the line and is outside the domain (see
    :mod:`dpcp_tutorial._validation`).
    """
    return check_1d(scores, "scores", allow_inf=True, max_magnitude=None, allow_empty=allow_empty)


def _noise_scale(sensitivity: float, epsilon: float) -> float:
    """``sensitivity / epsilon``, refused (a public input) when beyond 1e100, where sums of the noise overflow."""
    scale = sensitivity / epsilon
    if not scale <= MAX_MAGNITUDE:
        raise ValueError(f"epsilon={epsilon:g} is too small: the noise scale {sensitivity:g}/epsilon exceeds "
                         f"{MAX_MAGNITUDE:g}; no useful release exists at this budget")
    return scale


def _check_range(lower, upper) -> tuple[float, float]:
    lower = check_scalar(lower, "lower")
    upper = check_scalar(upper, "upper")
    if not upper > lower:
        raise ValueError(f"upper={upper} must be larger than lower={lower}: [lower, upper] is the public "
                         "range of the scores")
    return lower, upper


def pcoqs_steps(lower: float = 0.0, upper: float = 1.0, tol: float = 1e-10) -> int:
    r"""Number of binary-search steps of P-COQS: :math:`T = \lceil \log_2((u - l)/\kappa) \rceil`.

    Parameters
    ----------
    lower : float, default=0.0
        Lower end of the public search interval :math:`[l, u]`.
    upper : float, default=1.0
        Upper end of the public search interval.
    tol : float, default=1e-10
        The tolerance :math:`\kappa` (1e-10 in the paper and its R package): after
        :math:`T` halvings the search interval is no longer than :math:`\kappa`.

    Returns
    -------
    int
        ``T`` (34 for the defaults).

    Examples
    --------
    >>> pcoqs_steps()
    34
    >>> pcoqs_steps(0.0, 10.0, tol=1e-3)
    14
    """
    lower, upper = _check_range(lower, upper)
    tol = check_scalar(tol, "tol", low=0.0, hint="the search stops once the interval is shorter than tol")
    return max(1, math.ceil(math.log2((upper - lower) / tol)))


def pcoqs_quantile(
    scores,
    alpha: float,
    rho: float,
    *,
    lower: float = 0.0,
    upper: float = 1.0,
    tol: float = 1e-10,
    decimals: int | None = 2,
    rounding: str = "nearest",
    n: int | None = None,
    rng: RandomLike = None,
    sampler: str = "numpy",
) -> float:
    r"""P-COQS: the conformal quantile by a noisy binary search (Romanus & Molinari, 2025).

    The search targets the finite-sample conformal rank
    :math:`m = \lceil (1-\alpha)(n+1) \rceil`. Starting from
    :math:`[\ell, r] = [l, u]`, each of the :math:`T` steps (:func:`pcoqs_steps`)
    halves the interval at :math:`\text{mid} = (\ell + r)/2` using one noisy
    range count

    .. math:: c = \max\bigl(0, \lfloor \#\{i : l \le s_i \le \text{mid}\} + Z \rfloor\bigr),
              \quad Z \sim \mathcal N(0, \sigma^2), \quad \sigma = \sqrt{T / (2\rho)},

    and moves right (:math:`\ell = \text{mid} + \kappa`) when :math:`c < m`, left
    (:math:`r = \text{mid}`) otherwise. The output is :math:`(\ell + r)/2`,
    rounded to two decimals as the authors' R package and notebooks do, and
    kept in :math:`[l, u]` (the last step can leave :math:`\ell = \text{mid} +
    \kappa > r`, and rounding up can pass :math:`u`; such a release is :math:`u`).

    Parameters
    ----------
    scores : array-like, shape (n,)
        Calibration scores (private). Scores outside ``[lower, upper]``
        (``inf`` and values beyond 1e100 included) are simply never counted,
        as in the authors' code; only NaN is refused.
    alpha : float
        Miscoverage level in (0, 1).
    rho : float
        zCDP budget of the whole search, > 0.
    lower : float, default=0.0
        Lower end of the public search interval (the paper's ``lower_bound``).
    upper : float, default=1.0
        Upper end (the paper's ``upper_bound``).
    tol : float, default=1e-10
        Tolerance :math:`\kappa` of the search.
    decimals : int or None, default=2
        Round the output to this many decimals (2 reproduces the authors'
        package); ``None`` returns the search's midpoint unrounded.
    rounding : {"nearest", "up"}, default="nearest"
        ``"nearest"`` is the authors' ``round``; ``"up"`` rounds up to the
        decimal grid instead, which can only raise the threshold (so it never
        costs coverage). Post-processing: no privacy cost either way.
    n : int, default=None
        The public number of calibration scores. ``None`` uses the data's own
        size, which is then **declared public**. With a public ``n`` the release
        runs on exactly ``n`` scores (a uniform subset, or the scores padded
        with ``upper``): the rule, coverage and add/remove cost of ``n`` in
        :func:`~dpcp_tutorial.private_quantile`.
    rng : None, int or numpy.random.Generator, default=None
        Source of the Gaussian noise with ``sampler="numpy"``: all :math:`T`
        draws are made once, up front. ``None`` (fresh entropy) for a real
        release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"``: NumPy's floating-point Gaussian, not a hardened
        DP implementation. ``"opendp"``: each step's count goes through
        OpenDP's ``make_gaussian`` (exact noise on the finest lattice, one
        rounding), drawn step by step; OpenDP's zCDP map of a step is
        :math:`\rho/T`, as here. The law is the same: independent
        :math:`N(0, \sigma^2)` noises (the discrete Gaussian on the lattice
        :math:`2^{-1074}`, rounded to floats).

    Returns
    -------
    float
        The private threshold.

    Notes
    -----
    **Privacy.** Each range count has sensitivity 1 under both relations (one
    record changes a count by at most one), so each step is the Gaussian
    mechanism with :math:`\rho/T`-zCDP, and the :math:`T` adaptively chosen
    steps compose to :math:`\rho`-zCDP. This holds under **replace-one** with
    :math:`n` public (the rank :math:`m` is a function of the public :math:`n`),
    and under **add/remove** when the public ``n`` fixes :math:`m` (the search
    compares noisy counts with :math:`m`, so with :math:`m` recomputed from a
    private size the release is not covered by the paper's analysis).
    :math:`\rho`-zCDP implies :math:`(\rho + 2\sqrt{\rho \log(1/\delta)}, \delta)`-DP
    for every :math:`\delta > 0`.

    **Coverage.** There is no finite-sample coverage theorem: the noise can
    stop the search below the :math:`m`-th order statistic, and rounding to the
    nearest hundredth can lower the threshold further. The paper reports
    slight under-coverage; ``rounding="up"`` removes the part due to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.random.default_rng(0).uniform(size=1000)
    >>> q = pcoqs_quantile(scores, alpha=0.1, rho=0.5, rng=1)
    >>> 0.85 <= q <= 0.95
    True
    """
    scores = _check_scores(scores, allow_empty=n is not None)
    alpha = check_alpha(alpha)
    rho = check_scalar(rho, "rho", low=0.0, hint="the zCDP budget must be a positive number")
    lower, upper = _check_range(lower, upper)
    steps = pcoqs_steps(lower, upper, tol)
    tol = float(tol)
    if decimals is not None:
        decimals = check_positive_int(decimals, "decimals", minimum=0, maximum=15)
    rounding = check_choice(rounding, "rounding", ("nearest", "up"), "'nearest' is the authors' rounding")
    sampler, gen = check_sampler(sampler, rng)
    scores, n = _at_public_n(scores, n, gen, upper)     # exactly the public n scores (before any noise)

    sigma = math.sqrt(steps / (2.0 * rho))
    if sampler == "numpy":
        noise = sigma * gen.standard_normal(steps)  # drawn once, before any comparison
    target = math.ceil((1.0 - alpha) * (n + 1) - 1e-9 * (n + 1))   # guard 1-0.7-style float error
    ordered = np.sort(scores)
    below_lower = np.searchsorted(ordered, lower, side="left")

    left, right = lower, upper
    for step in range(steps):
        mid = (left + right) / 2.0
        count = int(np.searchsorted(ordered, mid, side="right") - below_lower)
        if sampler == "numpy":
            noisy = max(0, math.floor(count + noise[step]))
        else:                                       # OpenDP adds the noise to the count exactly, rounds once
            noisy = max(0, math.floor(float(opendp_additive(np.asarray(float(count)), sigma, "gaussian"))))
        if noisy < target:
            left = mid + tol
        else:
            right = mid
    # the last step may leave left = mid + tol above right: the midpoint can then exceed upper by tol/2
    out = min(max((left + right) / 2.0, lower), upper)
    if decimals is None:
        return float(out)
    if rounding == "up":
        scale = 10 ** decimals
        units = math.ceil(out * scale)
        while units / scale < out:      # guard against the product rounding down
            units += 1
        rounded = units / scale
    else:
        rounded = round(out, decimals)
    # a release never leaves the public range: rounding up past upper releases upper (still >= out)
    return float(min(max(rounded, lower), upper))


def pcoqs_corrected_level(alpha: float, n: int, rho: float, *, lower: float = 0.0, upper: float = 1.0,
                          tol: float = 1e-10) -> float | None:
    r"""The level to pass to :func:`pcoqs_quantile` (with ``rounding="up"``) for a coverage guarantee (chapter 16).

    Our derivation, not the paper's (chapter 16, proposition *A certified
    target for P-COQS*). With :math:`T` = :func:`pcoqs_steps`,
    :math:`\sigma = \sqrt{T/(2\rho)}`, a failure share
    :math:`\zeta \in (0, \alpha)`, :math:`\tau = \sigma\,\Phi^{-1}(1 - \zeta/T)`
    (all :math:`T` Gaussian noises are below :math:`\tau` with probability
    :math:`\ge 1-\zeta`, union bound: the event :math:`E`) and
    :math:`k = \lceil(1-\alpha+\zeta)(n+1)\rceil`, the search targets the rank

    .. math:: m' = \lceil k - 1 + \tau \rceil

    instead of :math:`\lceil(1-\alpha)(n+1)\rceil`; :math:`\zeta` minimises
    :math:`m'` over a public grid of 200 values.

    *Coverage.* On :math:`E`, a midpoint below :math:`s_{(k)}`, the
    :math:`k`-th smallest score, has a true count :math:`\le k-1`, hence a noisy
    count :math:`< m'`: the search moves right there, so the right end
    :math:`r` of the interval never drops below :math:`s_{(k)}`. After the
    :math:`T` halvings :math:`r - \ell \le \kappa` (the tolerance ``tol``), so the
    unrounded output :math:`(\ell + r)/2` is at least :math:`s_{(k)} - \kappa/2`.
    Rounding it *up* to a multiple of :math:`10^{-d}` (``decimals`` :math:`= d`,
    ``rounding="up"``) gives a threshold :math:`t \ge s_{(k)}` except on the
    failure event

    .. math:: F = \{\text{the order statistic } s_{(k)} \text{ lies within } \kappa/2
              \text{ just above a multiple of } 10^{-d}\}
              = \{\exists j \in \mathbb Z:\ j\,10^{-d} < s_{(k)} \le j\,10^{-d} + \kappa/2\},

    where a multiple of :math:`10^{-d}` falls in :math:`[s_{(k)} - \kappa/2, s_{(k)})`
    and rounding up can stop below :math:`s_{(k)}`. Hence, for exchangeable
    scores in ``[lower, upper]``,
    :math:`P(S_{n+1} \le t) \ge k/(n+1) - \zeta - P(F) \ge 1 - \alpha - P(F)`,
    and :math:`P(F) = 0` for a continuous score law (the "up to the search
    tolerance" of chapter 16; for a discrete law check that no attainable score
    lies in such a window, as chapter 16 does for the RAND HIE pool). Without
    rounding (``decimals=None``) the output is only :math:`\ge s_{(k)} - \kappa/2`,
    and the bound holds with :math:`F = \{s_{(k)} - \kappa/2 < S_{n+1} \le s_{(k)}\}`
    (the test score within :math:`\kappa/2` at or below :math:`s_{(k)}`) in place
    of the event above.

    Parameters
    ----------
    alpha : float
        Target miscoverage in (0, 1).
    n : int
        Public number of calibration scores.
    rho : float
        zCDP budget of the search, > 0.
    lower : float, default=0.0
        The search interval passed to :func:`pcoqs_quantile`
    upper : float, default=1.0
        (with ``tol``, they fix :math:`T`).
    tol : float, default=1e-10
        The search's tolerance :math:`\kappa`.

    Returns
    -------
    float or None
        :math:`\alpha' = 1 - m'/(n+1)`, so that :func:`pcoqs_quantile` at level
        ``alpha'`` targets :math:`m'`; ``None`` when :math:`m' > n`: no rank can
        be certified, and the release must be the trivial threshold ``upper``.
        Depends on public quantities only, so using it costs no privacy.

    Examples
    --------
    >>> level = pcoqs_corrected_level(0.1, 1000, rho=0.5)
    >>> round(level, 4)
    0.0759
    >>> pcoqs_corrected_level(0.1, 100, rho=0.005) is None
    True
    """
    alpha = check_alpha(alpha)
    n = check_positive_int(n, "n")
    rho = check_scalar(rho, "rho", low=0.0, hint="the zCDP budget must be a positive number")
    lower, upper = _check_range(lower, upper)
    steps = pcoqs_steps(lower, upper, tol)
    target = pcoqs_corrected_rank(float(alpha), n, float(rho), steps)
    if target > n:
        return None
    return (n + 1 - target) / (n + 1)


def laplace_prefix_tail(bins: int, scale: float, failure: float) -> float:
    r"""A level :math:`\tau` that all prefix sums of Laplace noise stay below with probability >= 1-``failure``.

    For i.i.d. :math:`Z_1, \dots, Z_M \sim \mathrm{Laplace}(b)` and
    :math:`S_j = Z_1 + \dots + Z_j`, Doob's maximal inequality applied to the
    submartingale :math:`e^{\lambda S_j}` with the Laplace moment generating
    function :math:`\mathbb E e^{\lambda Z} = (1-\lambda^2 b^2)^{-1}` gives,
    for every :math:`0 < \lambda < 1/b`,

    .. math:: P\bigl(\max_{j \le M} S_j \ge \tau\bigr) \le
              e^{-\lambda\tau} (1 - \lambda^2 b^2)^{-M}.

    Setting the right side to ``failure`` and minimising over
    :math:`t = \lambda b \in (0, 1)`:

    .. math:: \tau = b \min_{0<t<1} \frac{-M \log(1-t^2) + \log(1/\zeta)}{t}.

    Parameters
    ----------
    bins : int
        Number of noisy counts :math:`M` summed.
    scale : float
        Laplace scale :math:`b`.
    failure : float
        The failure share :math:`\zeta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\tau`.

    Examples
    --------
    >>> round(laplace_prefix_tail(100, 2.0, 0.01), 2)
    86.81
    """
    bins = check_positive_int(bins, "bins")
    scale = check_scalar(scale, "scale", low=0.0)
    failure = check_scalar(failure, "failure", low=0.0, high=1.0)
    log_inv = math.log(1.0 / failure)

    def level(t: float) -> float:
        return (-bins * math.log1p(-t * t) + log_inv) / t

    # the minimiser is t* ~ sqrt(log(1/zeta) / M) for large M; bracket it safely inside (0, 1)
    res = minimize_scalar(level, bounds=(1e-9, 1.0 - 1e-12), method="bounded",
                          options={"xatol": 1e-12, "maxiter": 500})
    guess = min(math.sqrt(log_inv / bins), 0.999)
    best = min(res.fun, level(guess))
    return float(scale * best)


def laplace_histogram_quantile(
    scores,
    alpha: float,
    epsilon: float,
    *,
    bins: int = 100,
    lower: float = 0.0,
    upper: float = 1.0,
    variant: str = "corrected",
    relation: str = "replace-one",
    n: int | None = None,
    rng: RandomLike = None,
    sampler: str = "numpy",
) -> float:
    r"""A conformal threshold from a Laplace-noised histogram over public bins.

    The scores are binned on ``bins`` equal-width cells of the public range
    ``[lower, upper]`` (cell :math:`j` is :math:`(e_{j-1}, e_j]`, the first one
    closed; scores outside the range are clipped to it), and every count gets
    independent Laplace noise of scale :math:`b`: the noisy histogram
    :math:`\tilde h_j = h_j + Z_j`.

    ``variant="corrected"`` (default) returns the smallest edge :math:`e_j` with

    .. math:: \tilde C_j = \sum_{i \le j} \tilde h_i \ \ge\ (k - 1) + \tau,
              \qquad k = \lceil (1 - \alpha + \zeta)(n + 1) \rceil,

    where :math:`\tau` = :func:`laplace_prefix_tail` ``(bins, b, zeta)`` bounds
    every prefix sum of the noise with probability :math:`\ge 1-\zeta`, and
    the failure share :math:`\zeta \in (0, \alpha)` is chosen from the public ``(alpha, n, bins,
    b)`` to make :math:`(k-1)+\tau` smallest; ``upper`` when no edge qualifies.

    ``variant="paper"`` reproduces the "Lap_Hist" baseline of the P-COQS paper:
    noisy counts floored at 0 and the first cell whose noisy cumulative count
    reaches :math:`(1-\alpha)` times the noisy total, with linear
    interpolation inside the cell. It has no coverage guarantee.

    Parameters
    ----------
    scores : array-like, shape (n,)
        Calibration scores (private), in ``[lower, upper]`` after the caller's
        public normalisation; values outside (``inf`` and values beyond 1e100
        included) are clipped to the range; only NaN is refused.
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy loss, > 0.
    bins : int, default=100
        Number of public cells :math:`M`.
    lower : float, default=0.0
        Lower end of the public range of the scores.
    upper : float, default=1.0
        Upper end of the public range.
    variant : {"corrected", "paper"}, default="corrected"
        The rule above.
    relation : {"replace-one", "add/remove"}, default="replace-one"
        The neighbour relation for which the release is ``epsilon``-DP: the
        histogram's L1 sensitivity is 2 under replace-one (a record leaves one
        cell and joins another) and 1 under add/remove, so :math:`b = 2/\varepsilon`
        or :math:`1/\varepsilon`. Under the other relation the same noise gives
        :math:`\varepsilon/2` (replace-one scale, add/remove neighbours) or
        :math:`2\varepsilon` (add/remove scale, replace-one neighbours).
    n : int, default=None
        Public number of calibration scores; ``None`` uses the data's size,
        then declared public. The corrected variant's rank :math:`k` depends on
        it; the paper variant does not. With a public ``n`` the release
        runs on exactly ``n`` scores (a uniform subset, or the scores padded
        with ``upper``): the rule, coverage and add/remove cost of ``n`` in
        :func:`~dpcp_tutorial.private_quantile`.
    rng : None, int or numpy.random.Generator, default=None
        Source of the Laplace noise with ``sampler="numpy"``, drawn once after
        the counting. ``None`` (fresh entropy) for a real release
        (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"``: NumPy's floating-point Laplace sampler, not a
        hardened DP implementation. ``"opendp"``: the histogram goes through
        OpenDP's ``make_laplace`` (exact noise, one rounding; OpenDP's map at
        the L1 sensitivity is ``epsilon``): the same law.

    Returns
    -------
    float
        The private threshold.

    Notes
    -----
    **Coverage of the corrected variant.** Let :math:`E` be the event that every
    prefix sum of the noise is below :math:`\tau`, so :math:`P(E^c) \le \zeta`.
    On :math:`E`, :math:`\tilde C_j \ge (k-1)+\tau` forces the true count
    :math:`C_j > k-1`, i.e. at least :math:`k` scores are :math:`\le e_j`, so the
    threshold is at least the :math:`k`-th smallest score :math:`s_{(k)}`.
    For an exchangeable test score, :math:`P(S_{n+1} \le s_{(k)}) \ge k/(n+1)`,
    hence coverage :math:`\ge k/(n+1) - \zeta \ge 1 - \alpha` (when
    :math:`k > n` the output is ``upper`` and coverage is trivial).

    **Privacy.** The noisy histogram is the Laplace mechanism with the stated
    sensitivity; the threshold is post-processing of it and of public
    quantities. With ``n`` public the release is ``epsilon``-DP under
    ``relation``; the loss under the other relation is given above.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.random.default_rng(0).uniform(size=5000)
    >>> t = laplace_histogram_quantile(scores, alpha=0.1, epsilon=1.0, rng=1)
    >>> 0.9 <= t <= 1.0
    True
    """
    scores = _check_scores(scores, allow_empty=n is not None)
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    bins = check_positive_int(bins, "bins", maximum=10**8)
    lower, upper = _check_range(lower, upper)
    variant = check_choice(variant, "variant", ("corrected", "paper"),
                           "'corrected' has coverage >= 1-alpha, 'paper' is the P-COQS paper's Lap_Hist baseline")
    relation = check_choice(relation, "relation", _RELATIONS)
    sampler, gen = check_sampler(sampler, rng)
    scores, n = _at_public_n(scores, n, gen, upper)     # exactly the public n scores (before any noise)

    edges = np.linspace(lower, upper, bins + 1)
    # cell j = (e_{j-1}, e_j]: the index of the first edge >= s, minus one (the first cell is closed)
    cell = np.clip(np.searchsorted(edges, np.clip(scores, lower, upper), side="left") - 1, 0, bins - 1)
    counts = np.bincount(cell, minlength=bins).astype(float)
    scale = _noise_scale(2.0 if relation == "replace-one" else 1.0, epsilon)
    if sampler == "numpy":
        noisy = counts + gen.laplace(0.0, scale, size=bins)     # the only draw, after all counting
    else:
        noisy = opendp_additive(counts, scale, "laplace")

    if variant == "paper":
        floored = np.maximum(noisy, 0.0)
        cumulative = np.cumsum(floored)
        total = cumulative[-1]
        if total <= 0.0:
            return float(upper)
        goal = (1.0 - alpha) * total
        j = int(np.searchsorted(cumulative, goal, side="left"))
        j = min(j, bins - 1)
        before = cumulative[j - 1] if j > 0 else 0.0
        inside = (goal - before) / floored[j] if floored[j] > 0 else 1.0
        return float(edges[j] + min(max(inside, 0.0), 1.0) * (edges[j + 1] - edges[j]))

    k, _zeta, tau = laplace_corrected_rank(alpha, n, bins, scale)
    if k > n:
        return float(upper)
    cumulative = np.cumsum(noisy)
    hits = np.flatnonzero(cumulative >= (k - 1) + tau)
    if hits.size == 0:
        return float(upper)
    return float(edges[hits[0] + 1])


# ---------------------------------------------------------------------------
# OpenDP's make_private_quantile as a conformal calibrator
# ---------------------------------------------------------------------------

_OPENDP_LEVELS = ("corrected", "raw")


def opendp_quantile_level(alpha: float, n: int, epsilon: float, *, bins: int = 100,
                          relation: str = "replace-one") -> float:
    r"""The shifted level :math:`a'` that makes OpenDP's private quantile a conformal calibrator.

    The smallest :math:`a \in [1/2, 1]` such that, for some rank
    :math:`k \le n`, the proven bound of :func:`opendp_quantile` (Notes)

    .. math:: \frac{n+1-k}{n+1} + h\big((M-1)\,e^{-G(a, n, k)/s}\big) \le \alpha,
              \qquad h(A) = \begin{cases} A/2 & A \le 1 \\ 1 - 1/(2A) & A > 1 \end{cases}

    holds, with :math:`G` the score gap and :math:`s` the noise scale. It
    depends only on public quantities. When no level works it returns 1.0
    and :func:`opendp_quantile` releases ``upper`` without reading the scores.

    Parameters
    ----------
    alpha : float
        Target miscoverage in (0, 1).
    n : int
        Public number of calibration scores.
    epsilon : float
        Privacy loss of the release under ``relation``.
    bins : int, default=100
        Number of equal-width cells of the public score range; the candidates
        are their :math:`M` = ``bins`` right edges.
    relation : {"replace-one", "add/remove"}, default="replace-one"
        The neighbour relation of ``epsilon`` (:func:`opendp_quantile`).

    Returns
    -------
    float
        :math:`a'` (before OpenDP's rational rounding, which
        :func:`opendp_quantile` performs upwards).

    Examples
    --------
    >>> round(opendp_quantile_level(0.1, 5000, 1.0), 4)
    0.9502
    """
    alpha = check_alpha(alpha)
    n = check_positive_int(n, "n")
    epsilon = check_epsilon(epsilon)
    bins = check_positive_int(bins, "bins", maximum=10**6)
    relation = check_choice(relation, "relation", _RELATIONS)
    return opendp_level(float(alpha), n, float(epsilon), bins, relation)[0]


def _opendp_release(scores, alpha, epsilon, bins, lower, upper, level, relation, n):
    """Candidates, real scores u_j (shifted so that min u = 0), scale s, the level used, OpenDP's measurement and
    the data it is applied to.

    ``None`` in place of the scores means the trivial release (the top candidate).
    """
    scores = _check_scores(scores)
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    bins = check_positive_int(bins, "bins", maximum=10**6)
    lower, upper = _check_range(lower, upper)
    level = check_choice(level, "variant", _OPENDP_LEVELS, "'corrected' has coverage >= 1-alpha, 'raw' is OpenDP "
                         "at the empirical (1-alpha)-quantile, with no guarantee")
    relation = check_choice(relation, "relation", _RELATIONS)
    _noise_scale(2.0, epsilon)
    n = _check_n(n, scores)
    candidates = np.linspace(lower, upper, bins + 1)[1:]
    candidates[-1] = upper
    clipped = np.clip(scores, lower, upper)
    if level == "raw":
        target = 1.0 - alpha
        data = clipped
    else:
        target, rank = opendp_level(float(alpha), n, float(epsilon), bins, relation)
        if rank == 0:
            return candidates, None, None, None, None, None
        # round up to the candidates (a 1-stable, record-wise map): the events {S <= c_j} are unchanged
        data = candidates[np.minimum(np.searchsorted(candidates, clipped, side="left"), bins - 1)]
    with opendp_prelude() as odp:     # builds the measurement; "contrib" only inside
        atom = odp.atom_domain(T=float, nan=False)
        domain = odp.vector_domain(atom, size=n) if relation == "replace-one" else odp.vector_domain(atom)
        metric = odp.symmetric_distance()
        cand = [float(c) for c in candidates]

        def transformation(a):
            t = odp.t.make_quantile_score_candidates(domain, metric, cand, a)
            # OpenDP scores integers |(D - A) #{x < c} - A #{x > c}| with a = A/D; read A and D off two public
            # dummy data sets of size n (all points above / below every candidate)
            above = t([float(upper) + 1.0] * n)[0]
            below = t([float(candidates[0]) - 1.0] * n)[0]
            return t, above // n, (above + below) // n

        t, num, den = transformation(target)
        if level == "corrected":
            # OpenDP rounds the level to a rational A/D; make sure the level it uses still satisfies the bound
            for _ in range(8):
                a_eff = num / den
                if opendp_bound(a_eff, n, rank, bins, epsilon, relation) <= alpha:
                    break
                target = min(1.0, target + 1.0 / den)
                t, num, den = transformation(target)
            else:     # pragma: no cover - the bound has slack far above 1/D
                return candidates, None, None, None, None, None
        a_eff = num / den
        scale = opendp_scale(a_eff, epsilon, relation)
        measurement = odp.m.make_private_quantile(domain, metric, odp.max_divergence(), cand, target, scale)
    data = [float(v) for v in data]
    raw = t(data)
    low = min(raw)
    utility = np.array([float(r - low) for r in raw]) / den      # exact integer shift, then real units
    return candidates, utility, scale, a_eff, measurement, data


def _report_noisy_max_log_law(utility: np.ndarray, scale: float) -> np.ndarray:
    """Exact log-probabilities of argmin_j (u_j - s E_j), E_j ~ Exp(1) i.i.d. (permute-and-flip law).

    With :math:`p_j = e^{-(u_j - u^*)/s}`, substituting :math:`w = e^{-(t - v^*)}` in
    :math:`P(j) = \\int f(t - v_j)\\prod_{r \\ne j} F(t - v_r)\\,dt` gives
    :math:`P(j) = p_j \\int_0^1 \\prod_{r \\ne j} (1 - w p_r)\\,dw`, a polynomial of
    degree :math:`M-1` in :math:`w`, integrated exactly by Gauss-Legendre.
    """
    with np.errstate(over="ignore", divide="ignore"):
        log_p = -utility / scale
    log_p = np.where(np.isnan(log_p), 0.0, log_p)
    p = np.exp(log_p)
    nodes, weights = gauss_legendre(max(1, (utility.size + 2) // 2))
    w = 0.5 * (nodes + 1.0)
    log_w = np.log(0.5 * weights)
    terms = np.log1p(-np.outer(w, p))                  # shape (nodes, M); w < 1 so no log(0)
    total = terms.sum(axis=1, keepdims=True)
    log_integral = log_w[:, None] + total - terms      # drop r = j
    peak = log_integral.max(axis=0)
    log_int = peak + np.log(np.exp(log_integral - peak).sum(axis=0))
    return log_p + log_int


@renamed_keywords(level="variant")
def opendp_quantile_probabilities(scores, alpha: float, epsilon: float, *, bins: int = 100, lower: float = 0.0,
                                  upper: float = 1.0, variant: str = "corrected", relation: str = "replace-one",
                                  n: int | None = None, log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact output law of :func:`opendp_quantile` (and of OpenDP's own sampler at the same scale).

    Parameters
    ----------
    scores, alpha, epsilon
        As in :func:`opendp_quantile`.
    bins : int, default=100
        As in :func:`opendp_quantile`.
    lower : float, default=0.0
        As in :func:`opendp_quantile`.
    upper : float, default=1.0
        As in :func:`opendp_quantile`.
    variant : {"corrected", "raw"}, default="corrected"
        As in :func:`opendp_quantile` (``level=`` is its deprecated old name).
    relation : {"replace-one", "add/remove"}, default="replace-one"
        As in :func:`opendp_quantile`.
    n : int, default=None
        As in :func:`opendp_quantile`.
    log : bool, default=False
        Return log-probabilities (exact where probabilities underflow).

    Returns
    -------
    candidates : ndarray of shape (bins,)
    probabilities : ndarray of shape (bins,)

    Examples
    --------
    >>> scores = np.random.default_rng(0).uniform(size=2000)
    >>> cand, p = opendp_quantile_probabilities(scores, 0.1, 1.0, bins=10,
    ...                                         variant="raw")
    >>> print(f"{cand[p.argmax()]:.1f} {p.max():.3f}")
    0.9 1.000
    """
    log = check_bool(log, "log")
    candidates, utility, scale, _, _, _ = _opendp_release(scores, alpha, epsilon, bins, lower, upper, variant,
                                                          relation, n)
    if utility is None:
        logp = np.full(candidates.size, -np.inf)
        logp[-1] = 0.0
    else:
        logp = _report_noisy_max_log_law(utility, scale)
        logp = logp - (logp.max() + np.log(np.exp(logp - logp.max()).sum()))
    return candidates, (logp if log else np.exp(logp))


@renamed_keywords(level="variant")
def opendp_quantile(
    scores,
    alpha: float,
    epsilon: float,
    *,
    bins: int = 100,
    lower: float = 0.0,
    upper: float = 1.0,
    variant: str = "corrected",
    relation: str = "replace-one",
    n: int | None = None,
    rng: RandomLike = None,
    sampler: str = "numpy",
) -> float:
    r"""OpenDP's ``make_private_quantile`` as a conformal calibrator, with a proven level correction.

    The candidates are the right edges :math:`c_1 < \dots < c_M = u` of
    ``bins`` equal cells of the public range :math:`[l, u]`. OpenDP (0.16,
    ``opendp.transformations.make_quantile_score_candidates``) scores candidate
    :math:`c` at level :math:`a` by

    .. math:: u(c) = \bigl|(1-a)\,\#\{i: x_i < c\} - a\,\#\{i: x_i > c\}\bigr|

    (computed in integers after writing :math:`a = A/D` as a rational), and
    ``make_private_quantile`` with ``max_divergence`` releases
    :math:`\arg\min_c \bigl(u(c) - s E_c\bigr)`, :math:`E_c \sim \mathrm{Exp}(1)`
    i.i.d. (report-noisy-max with exponential noise = permute-and-flip). OpenDP's
    sampler cannot be seeded, so by default (``sampler="numpy"``) the same law
    is sampled here with ``rng`` from OpenDP's own integer scores;
    ``sampler="opendp"`` runs OpenDP's measurement itself (exact, unseedable).
    The tests check by chi-square that both samplers follow
    :func:`opendp_quantile_probabilities` and that OpenDP's privacy map
    reports ``epsilon``.

    * ``variant="corrected"`` (default): the scores are first rounded **up** to
      the candidates, and the level is :math:`a'` =
      :func:`opendp_quantile_level` (rounded up to OpenDP's rational grid).
      Coverage :math:`P(S_{n+1} \le \hat c) \ge 1-\alpha` for exchangeable scores
      (Notes). When no level works, ``upper`` is returned without reading the
      scores.
    * ``variant="raw"``: OpenDP as a user would call it, at :math:`a = 1-\alpha` on
      the unrounded scores: the empirical quantile with no :math:`(n+1)` term
      and no noise correction; no coverage guarantee.

    Parameters
    ----------
    scores : array-like, shape (n,)
        Calibration scores (private), clipped to ``[lower, upper]`` (``inf``
        and values beyond 1e100 included); only NaN is refused.
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy loss under ``relation``.
    bins : int, default=100
        Number of candidates :math:`M`.
    lower : float, default=0.0
        Lower end of the public score range.
    upper : float, default=1.0
        Upper end of the public score range.
    variant : {"corrected", "raw"}, default="corrected"
        The level correction above, or none (``"raw"``); ``level=`` is its
        deprecated old name.
    relation : {"replace-one", "add/remove"}, default="replace-one"
        ``"replace-one"``: OpenDP's known-size domain
        (``vector_domain(..., size=n)``, ``symmetric_distance``, ``d_in = 2``) and
        :math:`s = 2/\varepsilon`; ``"add/remove"``: the unsized domain with
        ``d_in = 1`` and :math:`s = 2\max(a, 1-a)/\varepsilon`. In both cases
        OpenDP's privacy map at ``d_in`` equals ``epsilon``.
    n : int, default=None
        Public number of scores; ``None`` uses the data's size, which is then
        **declared public**. The corrected level depends on it. With a public ``n`` the release
        runs on exactly ``n`` scores (a uniform subset, or the scores padded
        with ``upper``): the rule, coverage and add/remove cost of ``n`` in
        :func:`~dpcp_tutorial.private_quantile`.
    rng : None, int or numpy.random.Generator, default=None
        Source of the :math:`M` exponential variates with ``sampler="numpy"``,
        drawn once after all counting. ``None`` (fresh entropy) for a real
        release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"``: NumPy's floating-point exponential variates on
        OpenDP's scores (seedable, not hardened). ``"opendp"``: the release is
        OpenDP's ``make_private_quantile`` measurement applied to the (rounded
        up, clipped) scores: its exact sampler, the same law.

    Returns
    -------
    float
        The released threshold, one of the candidates.

    Notes
    -----
    **Privacy.** Rounding up to the candidates is a record-wise map (1-stable
    under both relations); the release is then OpenDP's measurement with the
    scale above. *replace-one* (n public): OpenDP's map with ``d_in = 2`` is
    :math:`2/s = \varepsilon`. *add/remove* (the level is computed from a public
    ``n``; the data's own size is never used): OpenDP's map with ``d_in = 1`` is
    :math:`2\max(a,1-a)/s = \varepsilon`. Under the other relation: the
    replace-one scale gives :math:`\varepsilon\max(a, 1-a)` for add/remove
    neighbours (a record moves :math:`u(c)` by :math:`a` or :math:`1-a`; the law
    is invariant to a common shift, so the loss is the range of the changes
    over :math:`s`); the add/remove scale gives
    :math:`\varepsilon/\max(a,1-a) \le 2\varepsilon` for replace-one neighbours
    (OpenDP's map at ``d_in = 2`` reports the cruder :math:`2\varepsilon`).

    **Coverage of the corrected level** (rigorous for every data set once
    the scores are rounded up to the candidates, ties and lattice data
    included). Write :math:`N_j = \#\{i : \hat s_i \le c_j\}` (:math:`N_0 = 0`,
    :math:`N_M = n`) and :math:`g_j = (1-a)N_{j-1} - a(n - N_j)`, increasing in
    :math:`j`, so that :math:`u_j = |g_j|`. Fix a rank :math:`k \le n` and let
    :math:`c_J = \hat s_{(k)}`, :math:`x = N_{J-1} \le k-1`.

    1. *Bad candidates* :math:`j < J` have :math:`N_j \le x`, so
       :math:`g_j \le g_{J-1} \le (1-a)x - a(n-x) = x - an` and
       :math:`u_j \ge an - x`.
    2. *A good candidate* :math:`j \ge J`: let :math:`j_0 \ge J` be the first
       index with :math:`g_{j_0} \ge 0` (it exists since :math:`g_M \ge 0`). If
       :math:`j_0 = J`, :math:`u_J \le (1-a)x`. Otherwise, with
       :math:`y = N_{j_0-1} \in [k, n]`, :math:`u_{j_0-1} \le a(n-y) - (1-a)x` and
       :math:`u_{j_0} \le (1-a)y`; the smaller of the two is at most
       :math:`H = \max_{y\in[k,n]}\min(a(n-y) - (1-a)x, (1-a)y)` (closed form).
    3. Hence the gap :math:`G = u_{\text{bad}} - u_{\text{good}} \ge an - x -
       \max((1-a)x, H)`, which decreases in :math:`x`; at :math:`x = k-1` this
       is :func:`~dpcp_tutorial._calibrator_core.opendp_gap`. In the regime of interest it equals
       :math:`a(an - (2-a)(k-1))`, attained by lattice data (``k-1`` low
       scores, a tie block at :math:`c_J`, the rest at :math:`c_{J+1}`).
    4. Report-noisy-max: with :math:`g^\circ` the good candidate and
       :math:`A = \sum_{j<J} e^{-(u_j - u_{g^\circ})/s} \le (M-1)e^{-G/s}`,
       conditioning on :math:`E_{g^\circ} = e` and a union bound give
       :math:`P(\hat c < c_J \mid e) \le \min(1, A e^{-e})`, and
       :math:`\mathbb E\min(1, Ae^{-E}) = h(A)`.
    5. :math:`P(S_{n+1} > \hat c) \le P(S_{n+1} > s_{(k)}) + P(\hat c < s_{(k)})
       \le \frac{n+1-k}{n+1} + h(A)`, since :math:`\hat c` is a candidate and
       :math:`\hat c < s_{(k)} \iff \hat c < c_J`. (Summing
       :math:`\min(\frac{1}{n+1}, P(\hat c < s_{(k)}))` over the ranks, as for
       Algorithm 1 in chapter 3, is no better here: this bound on
       :math:`P(\hat c < s_{(k)})` increases with :math:`k`.)

    :func:`opendp_quantile_level` picks the smallest :math:`a` (over ranks
    :math:`k`) with this bound :math:`\le \alpha`. The bound uses the level OpenDP
    actually applies, :math:`A/D`. The price of ties: the gap needs
    :math:`a > 2(1-\alpha)/(2-\alpha)` asymptotically (about 0.947 at
    :math:`\alpha = 0.1`), because OpenDP's score ignores the points tied with a
    candidate. Without the rounding step (``variant="raw"``) no such bound is
    proven here.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.random.default_rng(0).uniform(size=5000)
    >>> q = opendp_quantile(s, alpha=0.1, epsilon=1.0, rng=1)
    >>> 0.9 <= q <= 1.0
    True
    """
    sampler, gen = check_sampler(sampler, rng)
    if n is not None:       # exactly the public n scores, padded with the top of the public range
        scores = _check_scores(scores, allow_empty=True)
        scores, n = _at_public_n(scores, n, gen, _check_range(lower, upper)[1])
    candidates, utility, scale, _, measurement, data = _opendp_release(scores, alpha, epsilon, bins, lower, upper,
                                                                       variant, relation, n)
    if sampler == "opendp":
        return float(candidates[-1]) if utility is None else float(measurement(data))
    noise = gen.standard_exponential(candidates.size)     # the only draw, after all counting
    if utility is None:
        return float(candidates[-1])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        value = utility / scale - noise               # argmin of u/s - E; u/s may overflow to inf (never chosen)
    value = np.where(np.isnan(value), np.inf, value)
    return float(candidates[int(np.argmin(value))])
