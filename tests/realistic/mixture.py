"""Gaussian mixtures: EM-style log-likelihood and responsibilities with logsumexp."""
import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from realistic import Case


def log_gaussian(X, mu, var):
    d = X.shape[1]
    return -0.5 * (np.sum((X - mu) ** 2, axis=1) / var + d * np.log(2 * np.pi * var))


def gmm_loglik(means, X, log_weights, variances):
    K = means.shape[0]
    log_w = log_weights - logsumexp(log_weights)
    comps = np.zeros((X.shape[0], K))
    for k in range(K):
        comps[:, k] = log_w[k] + log_gaussian(X, means[k], variances[k])
    return np.sum(logsumexp(comps, axis=1))


def em_step_objective(means, X, variances):
    log_p = np.stack([log_gaussian(X, means[k], variances[k]) for k in range(len(means))], axis=1)
    resp = np.exp(log_p - logsumexp(log_p, axis=1, keepdims=True))
    Nk = resp.sum(axis=0)
    new_means = (resp.T @ X) / Nk[:, None]
    return np.sum(new_means ** 2) + np.sum(resp * log_p)


def mvn_mixture(means, X, cov):
    parts = [multivariate_normal.logpdf(X, mean=m, cov=cov) for m in means]
    return logsumexp(np.array(parts), axis=0).sum()


def cases():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((8, 2))
    means = rng.standard_normal((3, 2))
    A = rng.standard_normal((2, 2))
    return [
        Case("mixture.gmm_loglik", gmm_loglik, (means, X, rng.standard_normal(3), rng.uniform(0.5, 2, 3)), (0, 2, 3)),
        Case("mixture.em_step", em_step_objective, (means, X, rng.uniform(0.5, 2, 3)), (0, 2)),
        Case("mixture.multivariate_normal", mvn_mixture, (means, X, A @ A.T + np.eye(2)), (0, 1)),
    ]
