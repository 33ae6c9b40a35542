"""The depth median's checks of its public inputs and its public candidates, shared by
:mod:`~dpcp_tutorial.median` and its Dask version in :mod:`~dpcp_tutorial.scale` (chapters 10, 14 and 19).

The two must refuse the same settings with the same messages and draw the same candidates from the same
``rng``, so that a release on partitions is the in-memory release: the public box, the prior's range, the
candidates (from the prior, uniform in the box, or the prior restricted to the box), the directions'
settings, the localisation share, the prior built from a private localisation and the far-tail warning
live here once. Internal to the package: the names below are not public API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._depth_core import MAX_DIRECTIONS, resolve_directions
from ._validation import check_array, check_positive_int, check_scalar

if TYPE_CHECKING:                      # annotations only: median imports this module
    from .median import GaussianPrior


DEFAULT_DIRECTIONS = {"halfspace": 1000, "idd": 500, "smoothed_idd": 500}
# public range of a prior's scale: its square and inverse square stay normal floating-point numbers
MIN_SCALE, MAX_SCALE = 1e-100, 1e100
MAX_CANDIDATES = 10 ** 8    # prior draws at most (GaussianPrior.sample's memory cap)


def check_box(box, d: int | None = None) -> np.ndarray:
    """A public box ``((low_1, ..., low_d), (high_1, ..., high_d))`` as a (2, d) array with ``low < high``."""
    b = check_array(box, "box", max_ndim=2)
    if b.ndim != 2 or b.shape[0] != 2 or b.shape[1] == 0 or (d is not None and b.shape[1] != d):
        want = "(2, d)" if d is None else f"(2, {d})"
        raise ValueError(f"box must be ((low_1, ..., low_d), (high_1, ..., high_d)), the public lower and upper "
                         f"corners, of shape {want}; got shape {b.shape}")
    if not np.all(b[1] > b[0]):
        raise ValueError("box must have high > low in every coordinate (row 0 is the lower corner, row 1 the upper)")
    if np.any(np.abs(b) > MAX_SCALE):
        raise ValueError(f"box must lie within +-{MAX_SCALE:g} in every coordinate; rescale the data and the box")
    return b


def draw_candidates(prior: GaussianPrior | None, box: np.ndarray | None, n_candidates: int, d: int,
                     rng: np.random.Generator) -> np.ndarray:
    """The public candidates: prior draws, uniform draws in the box, or prior draws restricted to the box."""
    if box is None:     # within the data's domain +-1e100 (a prior centred near its edge draws beyond it)
        return np.clip(prior.sample(n_candidates, d, rng), -MAX_SCALE, MAX_SCALE)
    if prior is None:
        check_candidate_memory(n_candidates, d)
        cand = box[0] + (box[1] - box[0]) * rng.random((n_candidates, d))   # uniform on the box
        return np.minimum(cand, box[1])          # rounding never leaves the box
    return prior.sample_in_box(n_candidates, box, rng)


def check_candidates_in_box(cand: np.ndarray, box: np.ndarray | None) -> None:
    if box is not None and not np.all((cand >= box[0]) & (cand <= box[1])):
        raise ValueError("some candidates lie outside the public box; pass candidates inside it (e.g. "
                         "public_grid over the box) or drop box= (candidates and box are public inputs)")


def check_direction_settings(directions, n_directions, d: int) -> None:
    """Validate ``directions`` and ``n_directions`` in a mode that does not use them (nothing is drawn)."""
    if n_directions is not None:
        check_positive_int(n_directions, "n_directions", maximum=MAX_DIRECTIONS)
    if directions is not None:
        resolve_directions(directions, 1 if n_directions is None else n_directions, d, None)


def check_localize_share(localize_share, private: bool) -> float:
    if not private:
        if localize_share is not None:
            raise ValueError("localize_share is only used with prior='private'")
        return 0.0
    if localize_share is None:
        from .median import LOCALIZE_SHARE

        return LOCALIZE_SHARE
    return check_scalar(localize_share, "localize_share", low=0.0, high=1.0,
                        hint="it is the share of epsilon spent on locating the data (default 0.2)")


def warn_far_tail(release: np.ndarray, prior: GaussianPrior) -> None:
    """:class:`~dpcp_tutorial.ReleaseWarning` when ``release`` lies beyond the prior's far-tail radius.

    The condition reads the release and the public prior only, so the warning
    is post-processing and costs no privacy.
    """
    radius, limit = prior.mahalanobis_radius(release), prior.far_tail_radius(release.size)
    if radius > limit:
        import warnings

        from .accounting import ReleaseWarning
        from .median import FAR_TAIL

        warnings.warn(f"the private median lies {radius:.3g} prior standard deviations from the prior's mean, beyond "
                      f"the prior's far-tail radius {limit:.3g} (its 1 - {FAR_TAIL:g} quantile): the prior is "
                      "probably centred or scaled wrongly for these data's units. The release is valid, but the "
                      "prior had almost no mass there; choose the prior from public knowledge (the warning depends "
                      "only on the release and the prior, so it costs no privacy)", ReleaseWarning, stacklevel=3)


def prior_from_localization(loc) -> GaussianPrior:
    """The prior :math:`N(\\tilde c, \\tilde s^2 I_d)` of a private localisation (post-processing, chapter 19).

    The centre is clipped to the prior's public range :math:`\\pm 10^{100}` and the scale to
    :math:`[10^{-100}, 10^{100}]`.
    """
    from .median import GaussianPrior

    return GaussianPrior(tuple(np.clip(loc.centre, -MAX_SCALE, MAX_SCALE)),
                         float(min(max(loc.scale, MIN_SCALE), MAX_SCALE)))


def check_candidate_memory(n_candidates: int, d: int) -> None:
    """Refuse ``n_candidates`` draws in ``d`` dimensions beyond 1e8 numbers (public settings only)."""
    if n_candidates * d > 10 ** 8:
        raise ValueError(f"n_candidates * d = {n_candidates * d} draws would not fit in memory; use "
                         "fewer (at most 1e8)")


def check_prior_setting(prior, localize_share, candidates) -> tuple[bool, float]:
    """``(private, share)``: whether ``prior="private"`` (a string that is not is refused) and the share of
    epsilon spent on the localisation; a private prior is not combined with explicit candidates."""
    private = isinstance(prior, str)
    if private and prior != "private":
        raise ValueError(f"prior must be a GaussianPrior or 'private', got {prior!r}")
    share = check_localize_share(localize_share, private)
    if private and candidates is not None:
        raise ValueError("prior='private' builds the law of the candidates; it is not combined with explicit "
                         "candidates (drop candidates=, or pass a public prior)")
    return private, share
