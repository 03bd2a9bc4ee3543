"""Representative functions whose generated adjoints are checked in as golden files."""
import numpy as np


def mlp_loss(x, W, b):
    h = np.tanh(x @ W + b)
    return (h**2).mean()


def for_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + np.sin(x[i]) * x[i]
    return s


def while_loop(x):
    y = x * 2
    while np.linalg.norm(y) < 1000:
        y = y * 2
    return y


def branch(x, t):
    if t > 0:
        y = np.exp(x) * t
    else:
        y = x**2
    return y.sum()


def logsumexp_loop(a):
    largest = a[0]
    for i in range(len(a)):
        if a[i] > largest:
            largest = a[i]
    total = 0.0
    for i in range(len(a)):
        total += np.exp(a[i] - largest)
    return np.log(total) + largest


def table_recursion(x, gamma):
    """A table filled cell by cell from its neighbours, as dynamic programming does."""
    n = x.shape[0]
    R = np.zeros(n + 1)
    for i in range(1, n + 1):
        a = R[i - 1]
        R[i] = min(a, gamma) + x[i - 1] * a
    return R[n]
