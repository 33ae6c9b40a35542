"""Private centre and scale of data without any public bound (chapter 19).

Copy-ready: needs only NumPy and the standard library. The release is the
prior of the depth median's ``prior="private"``: a Gaussian centred at the
released centre with the released scale. Three steps, each on a public grid:
a radius by AboveThreshold, a coordinate-wise median by the exponential
mechanism on the bins of [-radius, radius], and a scale by AboveThreshold.
"""
import math
import numbers

import numpy as np

_LIMIT = 1e100                      # the domain: |coordinates| at most 1e100
RADIUS_EXPONENTS = np.arange(-100, 334)     # radius grid 2**k; 2**333 > 1e100
RADIUS_LEVEL = 0.9
CENTRE_BINS = 2 ** 16
SCALE_STEPS = np.arange(64, -1, -1)         # scale grid 2 R 2**(-k/4)
SPLIT = (0.2, 0.6, 0.2)             # shares: radius, all centres, scale


def _check_rng(rng):
    """None, a non-negative int seed or a Generator -> a Generator."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(
            rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"rng={rng} must be a non-negative int seed")
        return np.random.default_rng(int(rng))
    raise TypeError("rng must be None, an int seed or a numpy.random."
                    f"Generator, got {type(rng).__name__}")


def _check_data(data):
    """A real 2-D float array with n >= 2 rows, d >= 1, values in domain."""
    if isinstance(data, np.ma.MaskedArray):
        raise TypeError("data is a masked array; pass data.filled(value) "
                        "or drop the masked rows explicitly")
    try:
        data = np.asarray(data)
    except ValueError:
        raise TypeError("data must be an array of real numbers with rows "
                        "of equal length") from None
    if data.dtype.kind not in "iuf":
        raise TypeError(f"data must be an array of real numbers, got "
                        f"dtype {data.dtype}")
    if data.ndim != 2 or data.shape[1] == 0 or data.shape[0] < 2:
        raise ValueError("data must be a 2-D array of shape (n, d) with "
                         "n >= 2 rows and d >= 1 columns")
    data = data.astype(float)
    if not (np.abs(data) <= _LIMIT).all():   # also catches NaN and inf
        raise ValueError("data must be finite with every |coordinate| at "
                         "most 1e100; outside that domain no privacy is "
                         "claimed")
    return data


def _check_epsilon(epsilon):
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(
            epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got "
                        f"{type(epsilon).__name__}")
    epsilon = float(epsilon)
    if not 0.0 < epsilon < math.inf:
        raise ValueError(f"epsilon={epsilon} must be finite and > 0")
    return epsilon


def _above_threshold(counts, target, epsilon, rng):
    """First k with counts[k] - target + nu_k >= rho; the last k if none."""
    rho = rng.laplace(scale=2.0 / epsilon)
    nu = rng.laplace(scale=2.0 / epsilon, size=counts.size)
    passed = np.flatnonzero(counts - target + nu >= rho)
    return int(passed[0]) if passed.size else counts.size - 1


def private_localization(data, epsilon, rng=None):
    """Release a centre and a scale of ``data`` with no public range.

    With eps_R, eps_C, eps_S = 0.2, 0.6, 0.2 times ``epsilon``:

    1. Radius. N_k = #{i : max_j |x_ij| <= 2**k}, k = -100..333.
       AboveThreshold: rho ~ Lap(2/eps_R), nu_k ~ Lap(2/eps_R); R is the
       first 2**k with N_k - 0.9 n + nu_k >= rho (the last if none).
    2. Centre, for each coordinate j, with eps_c = eps_C / d: the edges
       e_k = -R + 2 R k / B, B = 2**16, and L_k = #{i : clip(x_ij) <= e_k}
       (L_0 = 0, L_B = n; clip to [-R, R]). Bin k gets the utility
       u_k = -max(L_k - n/2, n/2 - L_{k+1}, 0), its rank distance to the
       median, and is drawn with probability proportional to
       exp(eps_c u_k / 2) (Gumbel-max); c_j is its centre.
    3. Scale. v_i = ||clip(x_i) - c|| / sqrt(d); AboveThreshold as in
       step 1 with eps_S on the increasing grid 2 R 2**(-k/4),
       k = 64..0, and the target n/2.

    Privacy. Every count minus its target moves by at most 1 between
    neighbours: replace-one neighbours (one row replaced, n public)
    change each count by at most 1; add/remove neighbours (one row added
    or removed; n need not be public) change a count by 0 or 1 and the
    target q n by q in [0, 1]. For one pair of neighbours all these
    differences lie in one interval [c, c + 1] (a replaced value moves
    every count the same way; an added row moves each by -q or 1 - q),
    and then AboveThreshold with threshold noise Lap(1/e1) and query
    noise Lap(1/e2) loses at most e2 + e1 max(|c|, |c + 1|) <= e1 + e2;
    here e1 = e2 = eps_R / 2 (eps_S / 2). The bin mechanism is eps_c-DP
    per coordinate (its utility is a maximum of such differences, so it
    moves by at most 1), and by sequential
    composition the release is epsilon-DP under replace-one neighbours
    and under add/remove neighbours. Every grid is public given the
    earlier releases.

    Refusals. The checks on epsilon and rng depend on public inputs
    only, and so does the shape check. The only data-dependent refusals
    are the domain checks: privacy is claimed for data sets of n >= 2
    rows whose entries are real, finite and at most 1e100 in magnitude;
    outside that domain the function raises ValueError (TypeError for a
    non-numeric array) without quoting any value or count. Inside it
    nothing raises, warns or branches on the data.

    Parameters
    ----------
    data : array-like of shape (n, d)
        The private sample (see the domain above).
    epsilon : float
        The localisation budget, finite and > 0.
    rng : None, int or numpy.random.Generator
        Randomness, used in the order: radius, centres, scale. Use None
        (fresh entropy) for a real release; a seed makes it public.

    Returns
    -------
    centre : ndarray of shape (d,)
    scale : float
    radius : float

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If epsilon is out of range or the data are outside the domain.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(1000.0, 2.0, size=(5000, 2))
    >>> centre, scale, radius = private_localization(data, 1.0, rng=1)
    >>> radius
    1024.0
    >>> bool(np.all(np.abs(centre - 1000.0) < 0.5)), bool(1 < scale < 4)
    (True, True)
    """
    data = _check_data(data)
    epsilon = _check_epsilon(epsilon)
    rng = _check_rng(rng)
    n, d = data.shape
    e_radius, e_centre, e_scale = (share * epsilon for share in SPLIT)
    # 1. radius
    radii = np.exp2(RADIUS_EXPONENTS.astype(float))
    sup = np.sort(np.max(np.abs(data), axis=1))
    counts = np.searchsorted(sup, radii, side="right")
    radius = float(radii[_above_threshold(counts, RADIUS_LEVEL * n,
                                          e_radius, rng)])
    # 2. centre, coordinate by coordinate
    clipped = np.clip(data, -radius, radius)
    width = 2.0 * radius / CENTRE_BINS
    mids = -radius + (np.arange(CENTRE_BINS) + 0.5) * width
    edges = -radius + width * np.arange(CENTRE_BINS + 1)
    below = np.empty((d, CENTRE_BINS + 1), dtype=np.int64)
    for j in range(d):
        below[j, 1:-1] = np.searchsorted(np.sort(clipped[:, j]),
                                         edges[1:-1], side="right")
    below[:, 0], below[:, -1] = 0, n
    centre = np.empty(d)
    for j in range(d):
        utility = -np.maximum(np.maximum(below[j, :-1] - 0.5 * n,
                                         0.5 * n - below[j, 1:]), 0.0)
        logits = 0.5 * (e_centre / d) * utility
        k = int(np.argmax(logits + rng.gumbel(size=logits.size)))
        centre[j] = mids[k]
    # 3. scale
    scales = 2.0 * radius * np.exp2(-SCALE_STEPS / 4)
    spread = np.sort(np.linalg.norm(clipped - centre, axis=1) / math.sqrt(d))
    counts = np.searchsorted(spread, scales, side="right")
    scale = float(scales[_above_threshold(counts, 0.5 * n, e_scale, rng)])
    return centre, scale, radius
