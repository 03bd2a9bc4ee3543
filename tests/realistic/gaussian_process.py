"""Gaussian-process regression: the negative log marginal likelihood through Cholesky solves."""
import numpy as np
import scipy.linalg
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from realistic import Case


def rbf_kernel(X1, X2, lengthscale, variance):
    sq = np.sum(X1 ** 2, 1)[:, None] + np.sum(X2 ** 2, 1)[None, :] - 2 * X1 @ X2.T
    return variance * np.exp(-0.5 * sq / lengthscale ** 2)


def nlml_numpy(log_params, X, y):
    lengthscale, variance, noise = np.exp(log_params)
    K = rbf_kernel(X, X, lengthscale, variance) + noise * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(y) * np.log(2 * np.pi)


def nlml_triangular(log_params, X, y):
    ell, sf2, sn2 = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    K = rbf_kernel(X, X, ell, sf2) + sn2 * np.eye(len(X))
    L = scipy.linalg.cholesky(K, lower=True)
    v = solve_triangular(L, y, lower=True)
    return 0.5 * v @ v + np.log(np.diag(L)).sum()


def nlml_cho(log_params, X, y):
    ell, sf2, sn2 = np.exp(log_params)
    K = rbf_kernel(X, X, ell, sf2) + sn2 * np.eye(len(X))
    c, lower = cho_factor(K, lower=True)
    alpha = cho_solve((c, lower), y)
    return 0.5 * np.dot(y, alpha) + np.sum(np.log(np.diag(c)))


def predictive_mean(Xs, X, y, log_params):
    ell, sf2, sn2 = np.exp(log_params)
    K = rbf_kernel(X, X, ell, sf2) + sn2 * np.eye(len(X))
    Ks = rbf_kernel(Xs, X, ell, sf2)
    return np.sum(Ks @ scipy.linalg.solve(K, y, assume_a="pos"))


def cases():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((6, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(6)
    theta = np.array([0.1, -0.2, -1.0])
    return [
        Case("gp.nlml_numpy", nlml_numpy, (theta, X, y), (0, 1, 2)),
        Case("gp.nlml_solve_triangular", nlml_triangular, (theta, X, y), (0, 2)),
        Case("gp.nlml_cho_factor", nlml_cho, (theta, X, y), (0, 1)),
        Case("gp.predictive_mean", predictive_mean, (rng.standard_normal((3, 2)), X, y, theta), (0, 3)),
    ]
