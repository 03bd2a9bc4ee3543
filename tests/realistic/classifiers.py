"""Logistic regression with an L2 penalty, two ways people write it."""
import numpy as np
from scipy.special import expit, log_expit, log_ndtr

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


def probit_nll(beta, X, y, prior_scale):
    z = X @ beta
    ll = np.sum(y * log_ndtr(z) + (1 - y) * log_ndtr(-z))
    return -ll + 0.5 * np.sum(beta ** 2) / prior_scale ** 2


def top_k_margin(scores, labels, k=2):
    order = np.argsort(-scores, axis=1)[:, :k]
    top = np.take_along_axis(scores, order, axis=1)
    true = np.take_along_axis(scores, labels[:, None], axis=1)
    return np.sum(np.logaddexp(0.0, top - true))


def cases():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((10, 3))
    y = np.sign(rng.standard_normal(10))
    return [
        Case("classifiers.logistic_log1p", logistic_loss, (rng.standard_normal(4), X, y), 0),
        Case("classifiers.logistic_expit", logistic_expit, (rng.standard_normal(3), 0.2, X, (y > 0).astype(float), 0.1), (0, 1, 4)),
        Case("classifiers.probit_log_ndtr", probit_nll, (rng.standard_normal(3) * 0.3, X, (y > 0).astype(float), 2.0), (0, 3)),
        Case("classifiers.top_k_take_along_axis", top_k_margin, (rng.standard_normal((5, 4)), rng.integers(0, 4, 5)), 0),
        Case("classifiers.softmax_regression", softmax_regression, (rng.standard_normal((3, 4)), X, rng.integers(0, 4, 10), 0.05), (0, 1)),
    ]
