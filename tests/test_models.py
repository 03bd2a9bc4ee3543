"""Small realistic models (a Gaussian process, an integrator, a Kalman filter, logistic
regression, a mixture, attention, a convolution loop) through reverse and forward mode."""
import numpy as np
import pytest

import srcad
from scipy.special import expit, logsumexp
from srcad.testing import check_grads, check_jvp

def gp_nll(log_ell, X, y):
    ell = np.exp(log_ell)
    d = X[:, None, :] - X[None, :, :]
    K = np.exp(-0.5 * np.sum(d ** 2, axis=-1) / ell ** 2) + 0.1 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L)))

def leapfrog(q0, p0, k):
    q = q0.copy()
    p = p0.copy()
    dt = 0.1
    for step in range(20):
        p -= 0.5 * dt * k * q
        q += dt * p
        p -= 0.5 * dt * k * q
    return 0.5 * (p @ p) + 0.5 * k * (q @ q) + q.sum()

def kalman(obs, F, Q):
    n = F.shape[0]
    m = np.zeros(n)
    P = np.eye(n)
    ll = 0.0
    for t in range(obs.shape[0]):
        m = F @ m
        P = F @ P @ F.T + Q
        S = P[0, 0] + 0.5
        r = obs[t] - m[0]
        ll = ll - 0.5 * (r * r / S + np.log(S))
        K = P[:, 0] / S
        m = m + K * r
        P = P - np.outer(K, P[0, :])
    return ll

def logreg(w, X, y):
    z = X @ w
    return -np.mean(y * np.log(expit(z)) + (1 - y) * np.log(expit(-z))) + 0.01 * (w ** 2).sum()

def mixture(means, x):
    comps = [-(x - m) ** 2 for m in means]
    return logsumexp(np.stack(comps), axis=0).sum()

def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[1])
    s = s - s.max(axis=1, keepdims=True)
    a = np.exp(s)
    a = a / a.sum(axis=1, keepdims=True)
    return (a @ V).sum()

def conv_loop(x, k):
    n = len(x) - len(k) + 1
    out = np.empty(n)
    for i in range(n):
        out[i] = np.dot(x[i:i + len(k)], k)
    return np.sum(out ** 2)


rng = np.random.default_rng(1)
X = rng.standard_normal((5, 2))
y = rng.standard_normal(5)
CASES = [
    (gp_nll, (0.3, X, y), 0),
    (leapfrog, (rng.standard_normal(3), rng.standard_normal(3), 1.5), (0, 1, 2)),
    (kalman, (rng.standard_normal(6), np.array([[0.9, 0.1], [0.0, 0.8]]), 0.1 * np.eye(2)), (1, 2)),
    (logreg, (rng.standard_normal(2), X, (y > 0).astype(float)), 0),
    (mixture, ([0.1, -0.5, 1.0], rng.standard_normal(4)), 0),
    (attention, (rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))), (0, 1, 2)),
    (conv_loop, (rng.standard_normal(8), rng.standard_normal(3)), (0, 1)),
]


@pytest.mark.parametrize("fun,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_reverse_and_forward(fun, args, wrt):
    check_grads(fun, args, wrt=wrt, modes=("rev",))
    check_jvp(fun, args, wrt=wrt if isinstance(wrt, int) else wrt[0])


def test_logistic_regression_hessian():
    w = np.array([0.3, -0.2])
    labels = (y > 0).astype(float)
    H = srcad.hessian(logreg)(w, X, labels)
    p = expit(X @ w)
    expected = (X.T * (p * (1 - p))) @ X / len(X) + 0.02 * np.eye(2)
    np.testing.assert_allclose(H, expected, rtol=1e-10)
