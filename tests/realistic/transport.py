"""Entropic optimal transport: Sinkhorn iterations in the log domain."""
import numpy as np
from scipy.special import logsumexp

from realistic import Case


def sinkhorn_cost(C, a, b, *, eps=0.5, n_iter=30):
    f = np.zeros_like(a)
    g = np.zeros_like(b)
    for _ in range(n_iter):
        f = -eps * logsumexp((g[None, :] - C) / eps, b=b[None, :], axis=1)
        g = -eps * logsumexp((f[:, None] - C) / eps, b=a[:, None], axis=0)
    P = a[:, None] * b[None, :] * np.exp((f[:, None] + g[None, :] - C) / eps)
    return np.sum(P * C)


def sinkhorn_positional(x, y, a, b, eps=0.5, n_iter=30):
    C = np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    log_a, log_b = np.log(a), np.log(b)
    f = np.zeros(len(a))
    g = np.zeros(len(b))
    for it in range(n_iter):
        f = eps * log_a - eps * logsumexp((g[None, :] - C) / eps, axis=1)
        g = eps * log_b - eps * logsumexp((f[:, None] - C) / eps, axis=0)
    return np.sum(f * a) + np.sum(g * b)


def cases():
    rng = np.random.default_rng(7)
    a = np.full(4, 0.25)
    b = rng.uniform(0.5, 1.5, 5)
    b = b / b.sum()
    C = rng.uniform(0, 1, (4, 5))
    return [
        Case("transport.sinkhorn_keyword_only", sinkhorn_cost, (C, a, b), (0, 2)),
        Case("transport.sinkhorn_points", sinkhorn_positional,
             (rng.standard_normal((4, 2)), rng.standard_normal((5, 2)), a, b), (0, 1)),
    ]
