"""L2-regularised logistic regression in numpy — scikit-learn's ``LogisticRegression``
objective (``class_weight="balanced"``, unpenalised intercept), solved by Newton's method.

Why not import scikit-learn here: importing ``sklearn.linear_model`` costs 1–2 s, which
alone would break the "first ranking in a fresh process under 1.5 s" budget, while the
problem is tiny (a persona's clicks plus a few sampled items, 384 features). The objective
is strictly convex, so both solvers reach the same coefficients;
``tests/test_rank_scorers.py`` checks that against scikit-learn.
"""

from __future__ import annotations

import numpy as np

from .threads import one_blas_thread


def balanced_weights(y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
    """scikit-learn's ``class_weight="balanced"`` (counts weighted by ``sample_weight``, as
    scikit-learn ≥ 1.6 does): total weight / (n_classes · the class's weight)."""
    # sorted set + searchsorted, not np.unique: its first call imports numpy.ma (12-17 ms of
    # a fresh process's first ranking) for a few dozen labels
    classes = np.array(sorted(set(y.tolist())))
    index = np.searchsorted(classes, y)
    per_class = sample_weight.sum() / (len(classes) * np.bincount(index, weights=sample_weight))
    return per_class[index]


def fit(X: np.ndarray, y: np.ndarray, **kwargs) -> tuple[np.ndarray, float]:
    """Return ``(coef, intercept)`` minimising
    ``½‖w‖² + C·Σᵢ sᵢ·log(1 + exp(−ŷᵢ(xᵢ·w + b)))`` with ŷ ∈ {−1, +1}.

    :param y: 0/1 labels; both classes must be present (the caller checks — a classifier
        is never fit on one class).
    :param kwargs: ``C``, ``sample_weight``, ``balanced``, ``max_iter``, ``tol``.
    """
    # problems this small never gain from threads (hermes.ranking.threads)
    with one_blas_thread():
        return _fit(X, y, **kwargs)


def _fit(
    X: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    sample_weight: np.ndarray | None = None,
    balanced: bool = True,
    max_iter: int = 50,
    tol: float = 1e-8,
) -> tuple[np.ndarray, float]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y).astype(np.int64)
    if len(set(y.tolist())) != 2:
        raise ValueError("logistic regression needs both classes")
    s = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if balanced:
        s = s * balanced_weights(y, s)
    s = C * s
    basis = None
    if X.shape[0] < X.shape[1]:
        # The optimal w lies in the span of the samples: solve in that basis (a persona's
        # few dozen clicks give a problem of that many dimensions, not 384).
        # (eigh of the small Gram matrix rather than an SVD of X: LAPACK's SVD stalls for
        # tens of milliseconds on a busy two-core machine.)
        lam, u = np.linalg.eigh(X @ X.T)
        keep = lam > max(lam[-1], 1e-300) * 1e-10
        root = np.sqrt(lam[keep])
        basis = (X.T @ u[:, keep] / root).T  # orthonormal rows spanning the samples
        X = u[:, keep] * root
    n, d = X.shape
    Xb = np.hstack([X, np.ones((n, 1))])
    reg = np.ones(d + 1)
    reg[-1] = 0.0  # the intercept is not penalised
    theta = np.zeros(d + 1)
    t = y.astype(np.float64)

    def loss(th):
        z = Xb @ th
        return 0.5 * np.sum(reg * th * th) + np.sum(s * (np.logaddexp(0.0, z) - t * z))

    current = loss(theta)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(Xb @ theta)))
        grad = reg * theta + Xb.T @ (s * (p - t))
        hess = (Xb * (s * p * (1.0 - p))[:, None]).T @ Xb
        hess[np.diag_indices_from(hess)] += reg + 1e-10
        step = np.linalg.solve(hess, grad)
        rate = 1.0
        while True:  # backtracking keeps every Newton step a descent step
            candidate = theta - rate * step
            value = loss(candidate)
            if value <= current or rate < 1e-6:
                break
            rate *= 0.5
        decrease = current - value
        theta, current = candidate, value
        if decrease <= tol * max(1.0, abs(current)):
            break
    coef = theta[:-1] if basis is None else theta[:-1] @ basis
    return coef, float(theta[-1])
