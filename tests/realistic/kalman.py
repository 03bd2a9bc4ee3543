"""A linear Kalman filter with predict/update helpers accumulating the log-likelihood."""
import numpy as np
import scipy.linalg

from realistic import Case


def predict(x, P, F, Q):
    x = F @ x
    P = F @ P @ F.T + Q
    return x, P


def update(x, P, z, H, R):
    y = z - H @ x
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    x = x + K @ y
    P = (np.eye(len(x)) - K @ H) @ P
    sign, logdet = np.linalg.slogdet(S)
    ll = -0.5 * (y @ np.linalg.solve(S, y) + logdet + len(y) * np.log(2 * np.pi))
    return x, P, ll


def kalman_loglik(q, zs, F, H, r):
    n = F.shape[0]
    x = np.zeros(n)
    P = np.eye(n)
    Q = q * np.eye(n)
    R = r * np.eye(H.shape[0])
    total = 0.0
    for z in zs:
        x, P = predict(x, P, F, Q)
        x, P, ll = update(x, P, z, H, R)
        total += ll
    return total


def update_cholesky(x, P, z, H, R):
    y = z - H @ x
    S = H @ P @ H.T + R
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        raise ValueError("innovation covariance is not positive definite")
    w = scipy.linalg.solve_triangular(L, y, lower=True)
    K = scipy.linalg.cho_solve((L, True), H @ P).T
    x = x + K @ y
    P = P - K @ S @ K.T
    ll = -0.5 * (w @ w) - np.sum(np.log(np.diag(L)))
    return x, P, ll


def kalman_cholesky(F, zs, H, q, r):
    n = F.shape[0]
    x = np.zeros(n)
    P = np.eye(n)
    total = 0.0
    for t in range(zs.shape[0]):
        x, P = predict(x, P, F, q * np.eye(n))
        x, P, ll = update_cholesky(x, P, zs[t], H, r * np.eye(len(zs[t])))
        total = total + ll
    return total


def cases():
    rng = np.random.default_rng(5)
    F = np.array([[1.0, 0.1], [0.0, 0.95]])
    H = np.array([[1.0, 0.0]])
    zs = rng.standard_normal((6, 1))
    return [
        Case("kalman.loglik_helpers", kalman_loglik, (0.3, zs, F, H, 0.5), (0, 1, 4)),
        Case("kalman.cholesky_try", kalman_cholesky, (F, zs, H, 0.3, 0.5), (0, 3)),
    ]
