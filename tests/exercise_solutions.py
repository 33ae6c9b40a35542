"""Reference solutions of every coding exercise, one function per exercise, named as the exercise asks.

Used by tests/test_exercises_harness.py (every checker must pass its solution and fail every stub) and by
tests/test_grading.py (this file is itself a complete, correct submission for the batch grader). From
dpcp_tutorial it imports only the helpers that the exercises let the reader use (the tight quantile's level in
chapter 4; the DP model and the private quantile in chapter 6's assembly), never the implementation of what an
exercise asks for. A new checker needs its solution here: the harness test fails otherwise.
"""

import math
from fractions import Fraction

import numpy as np
from scipy.special import logsumexp

from dpcp_tutorial import (DPRidgeRegression, private_quantile, private_quantile_level,
                           private_quantile_miscoverage_bound)


# chapter 1
def my_quantile(scores, alpha):
    n = len(scores)
    k = math.ceil((n + 1) * (1 - Fraction(alpha).limit_denominator(10**12)))
    return math.inf if k > n else float(np.partition(scores, k - 1)[k - 1])


def my_aps_sets(proba, qhat):
    order = np.argsort(-proba, axis=1, kind="stable")
    cumulative = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    sets = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(sets, order, cumulative <= qhat, axis=1)
    return sets


# chapter 2
def private_mean(x, lower, upper, epsilon, rng):
    x = np.clip(np.asarray(x, dtype=float), lower, upper)
    return float(x.mean() + rng.laplace(0.0, (upper - lower) / (x.size * epsilon)))


# chapter 3
def loss(scores, edges, alpha0):
    ordered = np.sort(scores)
    below = np.searchsorted(ordered, edges, side="left")
    above = ordered.size - np.searchsorted(ordered, edges, side="right")
    return np.maximum(below / (1 - alpha0), above / alpha0)


def probabilities(losses, epsilon, sensitivity):
    logits = -epsilon * (np.asarray(losses) - np.min(losses)) / (2 * sensitivity)
    weights = np.exp(logits)
    return weights / weights.sum()


def miscoverage_bound(alpha0, n, epsilon, m):
    k = np.arange(1, n + 1)
    tau = (m - 1) * np.exp(-epsilon * (1 - alpha0) * (k - alpha0 * n))
    return (1 + np.minimum(1, tau).sum()) / (n + 1)


def release_log_probabilities(scores, edges, alpha0, epsilon):
    rounded = edges[np.searchsorted(edges, scores)]
    a = np.searchsorted(np.sort(rounded), edges, side="left")
    b = rounded.size - np.searchsorted(np.sort(rounded), edges, side="right")
    logits = -epsilon * np.maximum(alpha0 * a, (1 - alpha0) * b)
    return logits - np.logaddexp.reduce(logits)


# chapter 4
def my_round_up(scores, m):
    edges = np.arange(m) / (m - 1)
    return edges[np.minimum(np.searchsorted(edges, scores, side="right"), m - 1)]


def my_qtilde(n, alpha, epsilon, m, gamma):
    return (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2 / (epsilon * n) * math.log(m / (gamma * alpha))


# chapter 5
def my_dcp_quantile(scores, alpha, epsilon, delta):
    alpha1 = math.exp(-epsilon) * (alpha - delta)
    n = len(scores)
    k = math.ceil((n + 1) * (1 - Fraction(alpha1).limit_denominator(10**12)))
    return math.inf if k > n else float(np.sort(scores)[k - 1])


# chapter 6
def my_levels(n, alpha, epsilon1, epsilon2, delta):
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    alpha0 = alpha1 - 2 / (n * epsilon2)
    if alpha0 <= 0:
        raise ValueError(f"infeasible: use at least n={math.floor(2 / (alpha1 * epsilon2)) + 1}")
    return alpha1, alpha0


# chapter 7
def my_ssp_sensitivity(x_bound, y_bound, fit_intercept):
    b2 = x_bound**2 + (1.0 if fit_intercept else 0.0)
    return math.sqrt(b2**2 + b2 * y_bound**2)


def clip_gradients(G, clip_norm):
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))


# chapter 8
def my_interval(y_pred, qhat, bound):
    half = math.inf if qhat >= 1 else bound * qhat
    return np.column_stack([y_pred - half, y_pred + half])


def smallest_n(alpha, epsilon1, epsilon2, delta):
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    return math.floor(2 / (alpha1 * epsilon2)) + 1


# chapter 9
def my_spatial_depth(points, data):
    out = []
    for x in points:
        v = x - data
        r = np.linalg.norm(v, axis=1)
        unit = np.zeros_like(v)
        unit[r > 0] = v[r > 0] / r[r > 0, None]
        out.append(1 - np.linalg.norm(unit.mean(axis=0)))
    return np.array(out)


def my_idd(points, data, directions):
    proj, t = data @ directions.T, points @ directions.T
    f = (proj[None, :, :] <= t[:, None, :]).mean(axis=1)
    return (f * (1 - f)).mean(axis=1)


# chapter 10
def worst_case(n, d):
    v = np.eye(d)[0]
    data = np.outer(np.arange(1.0, n + 1), v)
    data[-1] = -v
    other = data.copy()
    other[-1] = 2 * v
    return data, other, np.zeros(d)


def langevin_step(theta, depth_gradient, eta, prior_mean, prior_scale, step_size, noise):
    drift = eta * depth_gradient - (theta - prior_mean) / prior_scale ** 2
    return theta + step_size * drift + np.sqrt(2 * step_size) * noise


# chapter 11
def interval_log_probabilities(data, epsilon, lower, upper):
    x = np.sort(np.clip(np.asarray(data, dtype=float), lower, upper))
    n = x.size
    with np.errstate(divide="ignore"):
        log_len = np.log(np.diff(np.concatenate([[lower], x, [upper]])))
    k = np.arange(n + 1)
    logits = log_len + epsilon * np.minimum(k, n - k) / 2
    return logits - logsumexp(logits)


# chapter 12
def my_halfspace_depth(points, data, directions):
    u = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    proj = np.sort(data @ u.T, axis=0)
    t = points @ u.T
    n = len(data)
    depth = np.full(len(points), n)
    for k in range(u.shape[0]):
        at_least = n - np.searchsorted(proj[:, k], t[:, k], side="left")
        at_most = np.searchsorted(proj[:, k], t[:, k], side="right")
        depth = np.minimum(depth, np.minimum(at_least, at_most))
    return depth / n


def make_pair(n):
    x = np.random.default_rng(0).standard_normal((n, 2))
    x_prime = x.copy()
    x_prime[-1] = [10.0 * n, 0.0]
    return x, x_prime, np.array([2.5, 0.0])


# chapter 13
def clipped_mean(updates, clip_norm):
    norms = np.linalg.norm(updates, axis=1, keepdims=True)
    scale = np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))
    return (updates * scale).mean(axis=0), 2 * clip_norm / len(updates)


def tukey_safe_attackers(n, d):
    return -(-n // (d + 1)) - 1


# chapter 15
def _clip(poly, u, c):
    s = poly @ u - c
    out = []
    for i in range(len(poly)):
        j = (i + 1) % len(poly)
        if s[i] <= 0:
            out.append(poly[i])
        if (s[i] <= 0) != (s[j] <= 0):
            t = s[i] / (s[i] - s[j])
            out.append(poly[i] + t * (poly[j] - poly[i]))
    return np.array(out).reshape(-1, 2)


def _area(poly):
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _region(data, box, k):
    (x0, y0), (x1, y1) = box
    poly = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float)
    if k == 0:
        return poly
    for a in range(len(data)):
        for b in range(len(data)):
            d = data[b] - data[a]
            if not d.any():
                continue
            u = np.array([-d[1], d[0]]) / np.hypot(*d)
            s = (data - data[a]) @ u
            above = np.sum(s > 1e-12)
            on = np.sum(np.abs(s) <= 1e-12)
            if above < k <= above + on:
                poly = _clip(poly, u, u @ data[a])
    for u in np.vstack([np.eye(2), -np.eye(2)]):
        poly = _clip(poly, u, np.sort(data @ u)[::-1][k - 1])
    return poly


def annulus_area(data, box, k):
    return _area(_region(data, box, k)) - _area(_region(data, box, k + 1))


def tukey_level_probabilities(levels, annulus_areas, epsilon):
    with np.errstate(divide="ignore"):
        logw = 0.5 * epsilon * np.asarray(levels) + np.log(annulus_areas)
    return np.exp(logw - logsumexp(logw))


# chapter 14
def partition_counts(scores, edges):
    scores = np.asarray(scores, dtype=float)
    edges = np.asarray(edges, dtype=float)
    below = (scores[None, :] < edges[:, None]).sum(axis=1)
    above = (scores[None, :] > edges[:, None]).sum(axis=1)
    return np.stack([below, above])


def leaked_quantile(boundaries, sizes, beta):
    below = np.cumsum(sizes)
    k = int(np.argmax(below >= (1 - beta) * np.sum(sizes)))
    return float(boundaries[k + 1])


# chapter 16
def pcoqs_noise_sd(epsilon, steps):
    rho = epsilon * math.tanh(epsilon / 2)   # epsilon-DP implies rho-zCDP (tight)
    return math.sqrt(steps / (2 * rho))     # rho / steps per Gaussian count


def pool_coverage(pool, thresholds):
    ordered = np.sort(np.asarray(pool, dtype=float))
    found = np.searchsorted(ordered, np.asarray(thresholds, dtype=float), side="right")
    return found / ordered.size


# chapter 17
def mondrian_thresholds(scores, y, n_classes, alpha):
    out = np.full(n_classes, np.inf)
    for k in range(n_classes):
        s = np.sort(scores[y == k])
        rank = math.ceil((s.size + 1) * (1 - alpha))
        if rank <= s.size:
            out[k] = s[rank - 1]
    return out


def bounded_normalized_score(y, mu, g, sigma_min, score_bound):
    scale = np.maximum(np.asarray(g, dtype=float), sigma_min)
    residual = np.abs(np.asarray(y, dtype=float) - np.asarray(mu, dtype=float))
    return np.minimum(residual / (score_bound * scale), 1.0)


def pipeline_privacy(parts, disjoint):
    replace = [(2 * e, (1 + math.exp(e)) * d) for e, d in parts]
    combine = max if disjoint else sum
    return (combine(e for e, _ in parts), combine(d for _, d in parts),
            combine(e for e, _ in replace), combine(d for _, d in replace))


# chapter 2: randomised response (ex-02-attacker)
def randomized_response(bits, epsilon, rng):
    keep = rng.random(np.shape(bits)) < 1.0 / (1.0 + np.exp(-epsilon))     # e^eps / (1 + e^eps), no overflow
    return np.where(keep, bits, 1 - np.asarray(bits))


# chapter 4: a coin per record (ex-04-coin)
def my_coin_split(n_records, share, rng):
    return (rng.random(n_records) < share).astype(int)


# chapter 4: the public calibration size (ex-04-pad)
def my_subsample_or_pad(scores, n, rng):
    scores = np.asarray(scores, dtype=float)
    if scores.size > n:
        return rng.choice(scores, size=n, replace=False)
    return np.concatenate([scores, np.ones(n - scores.size)])


# chapter 4: private split conformal prediction assembled (ex-04-assemble)
def my_round_up_to_edges(scores, M):
    edges = np.arange(1, M + 1) / M
    return edges[np.searchsorted(edges, scores, side="left")]


def my_utilities(scores, M, alpha0):
    edges = np.arange(1, M + 1) / M
    at_or_below = np.searchsorted(np.sort(scores), edges, side="right")     # #{R <= e_j}
    a = np.concatenate(([0], at_or_below[:-1]))                              # #{R <= e_(j-1)}
    b = len(scores) - at_or_below                                            # #{R > e_j}
    return np.maximum(alpha0 * a, (1 - alpha0) * b)


def my_log_probabilities(utilities, epsilon):
    logits = -epsilon * np.asarray(utilities, dtype=float)
    top = logits.max()
    return logits - (top + np.log(np.sum(np.exp(logits - top))))       # log-softmax: nothing overflows


def my_gumbel_max(log_probabilities, rng):
    return int(np.argmax(log_probabilities + rng.gumbel(size=len(log_probabilities))))


def my_private_threshold(scores, beta, epsilon, M, rng):
    alpha0 = private_quantile_level(beta, len(scores), epsilon, bins=M)
    u = my_utilities(scores, M, alpha0)
    j = my_gumbel_max(my_log_probabilities(u, epsilon), rng)
    return (j + 1) / M


# chapter 6: DPCP's level (ex-06-level)
def my_dpcp_level(alpha, epsilon1, delta):
    if alpha <= delta:
        raise ValueError("delta must be below alpha")
    return math.exp(-epsilon1) * (alpha - delta)


# chapter 6: the coverage theorem's bound (ex-06-bound)
def my_dpcp_miss_bound(alpha0, n, epsilon1, epsilon2, delta, bins):
    return math.exp(epsilon1) * private_quantile_miscoverage_bound(alpha0, n, epsilon2, bins) + delta


# chapter 6: DPCP assembled end to end (ex-06-assemble)
def my_dpcp_budget(alpha, epsilon, share, delta):
    epsilon1 = share * epsilon
    return epsilon1, epsilon - epsilon1, math.exp(-epsilon1) * (alpha - delta)


def my_dpcp_scores(y, y_pred, bound):
    return np.minimum(np.abs(np.asarray(y) - np.asarray(y_pred)) / bound, 1.0)


def my_dpcp_interval(X, y, X_test, *, alpha, epsilon, share, delta, x_bound, y_bound, bound, bins, rng):
    epsilon1, epsilon2, alpha1 = my_dpcp_budget(alpha, epsilon, share, delta)
    model = DPRidgeRegression(epsilon=epsilon1, delta=delta, x_bound=x_bound, y_bound=y_bound, rng=rng).fit(X, y)
    qhat = private_quantile(my_dpcp_scores(y, model.predict(X), bound), alpha1, epsilon2, bins=bins, rng=rng)
    centre = model.predict(X_test)
    half = np.inf if qhat >= 1 else bound * qhat
    return np.column_stack([centre - half, centre + half])


# chapter 18
def first_passing(counts_above, target, rho, nu):
    passed = np.asarray(counts_above) + np.asarray(nu) <= target + rho
    return int(np.argmax(passed)) if passed.any() else len(counts_above)


def add_remove_loss(epsilon, threshold_share, m_n, m_n1):
    d = m_n1 - m_n
    return (1 - threshold_share) * epsilon + threshold_share * epsilon * max(abs(d), abs(1 - d))


def stop_probability(x, eps1, eps2, steps):
    from scipy import integrate

    b1, b2 = 1 / eps1, 1 / eps2

    def integrand(r):
        y = r + x
        log_survival = math.log1p(-0.5 * math.exp(y / b2)) if y < 0 else math.log(0.5) - y / b2
        return math.exp(-abs(r) / b1) / (2 * b1) * -math.expm1(steps * log_survival)

    edges = [-math.inf, *sorted({0.0, -x}), math.inf]
    return sum(integrate.quad(integrand, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
               for lo, hi in zip(edges[:-1], edges[1:]))


# chapter 19
def private_prior_epsilon(epsilon, share):
    localisation = share * epsilon                  # both relations
    depth = (1 - share) * epsilon                   # replace-one; half under add/remove
    return localisation + depth / 2, localisation + depth


def centre_rank_error(epsilon_loc, d, bins, eta):
    eps_c = 0.6 * epsilon_loc / d                   # the centre step's share, per coordinate
    return 2 * math.log(bins / eta) / eps_c         # bins * exp(-eps_c t / 2) <= eta
