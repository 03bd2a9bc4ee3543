"""Logistic regression with an L2 penalty, two ways people write it."""
import numpy as np
from scipy.special import expit, log_expit

from realistic import Case


def logistic_loss(w, X, y, C=1.0):
    z = X @ w[:-1] + w[-1]
    loss = np.sum(np.log1p(np.exp(-y * z)))
    return loss + 0.5 / C * np.dot(w[:-1], w[:-1])


def logistic_expit(w, b, X, t, lam):
    p = expit(X @ w + b)
    eps = 1e-12
    nll = -np.mean(t * np.log(p + eps) + (1 - t) * np.log(1 - p + eps))
    return nll + lam * np.sum(w ** 2)


def softmax_regression(W, X, y, lam):
    logits = X @ W
    logits = logits - logits.max(axis=1)[:, None]
    lse = np.log(np.exp(logits).sum(axis=1))
    picked = logits[np.arange(len(y)), y]
    return np.mean(lse - picked) + lam * np.linalg.norm(W) ** 2 + np.sum(log_expit(X[:, 0]))


def cases():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((10, 3))
    y = np.sign(rng.standard_normal(10))
    return [
        Case("classifiers.logistic_log1p", logistic_loss, (rng.standard_normal(4), X, y), 0),
        Case("classifiers.logistic_expit", logistic_expit, (rng.standard_normal(3), 0.2, X, (y > 0).astype(float), 0.1), (0, 1, 4)),
        Case("classifiers.softmax_regression", softmax_regression, (rng.standard_normal((3, 4)), X, rng.integers(0, 4, 10), 0.05), (0, 1)),
    ]
