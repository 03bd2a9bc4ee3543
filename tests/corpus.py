"""Small functions covering the Python and NumPy that srcad differentiates.

Each entry: (function, argument factory, wrt). Arguments are made from a seeded
generator so every run checks the same points.
"""
import math

import numpy as np

SCALE = 1.5
TABLE = np.linspace(0.5, 1.5, 4)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def helper_with_default(a, power=2):
    return a**power


# ---- straight-line -----------------------------------------------------------------


def ops(x, y):
    return (x * y + x / (y + 3.0) - x**2 + (-y) @ np.ones(3) * 0.5 + (+x)).sum()


def broadcasting(x, b):
    return (x * b + b - x / (b + 5.0)).sum()


def scalar_math(a, b):
    return math.sin(a) * math.exp(b) + math.sqrt(a * a + 1.0) - math.log(b + 3.0) + abs(a) + max(a, b) + float(b)


def numpy_core(x):
    return (np.sin(x) + np.cos(x) * np.tan(x / 4) + np.exp(-x) + np.log(x * x + 1) + np.sqrt(x * x + 1)
            + np.tanh(x) + np.abs(x) + np.power(x * x + 1, 1.5) + np.maximum(x, 0.1) + np.minimum(x, -0.2)).sum()


def where_select(x):
    return np.where(x > 0, x**2, -x).sum()


def reductions(X):
    return (X.sum(axis=0) @ np.arange(3.0) + X.mean() + X.max(axis=1).sum() + np.min(X, axis=0, keepdims=True).sum()
            + np.prod(X[:2, :2]) + np.sum(X * X, axis=(0, 1)))


def products(X, w):
    return (np.dot(X, w) + X @ w + np.matmul(X, w)).sum() + np.einsum("ij,j->", X, w) + X.dot(w).sum()


def shapes(X):
    Y = X.T.reshape(2, -1)
    Z = np.transpose(np.reshape(X, (3, 4)))
    S = np.stack([X[0], X[1]], axis=1)
    C = np.concatenate([X, X * 2], axis=0)
    return (Y**2).sum() + (Z * np.arange(3.0)).sum() + S.sum() + (C**3).sum() + X.trace()


def indexing(X):
    return (X[0] * 2).sum() + X[1:3, ::2].sum() + X[..., 1].sum() + X[None, 0, :].sum() + (X[[0, 2, 2]] ** 2).sum() + X[X > 0].sum()


def methods_attrs(X):
    n = X.shape[0]
    m = len(X)
    return X.sum(axis=1).mean() * n / m + X.copy().max() + X.T.dot(X).trace()


def builtin_sum(x):
    return sum(x) * 2.0


def keywords_defaults(x, scale=2.0):
    """A docstring; keyword arguments and defaults."""
    y: np.ndarray = np.sum(a=x * scale, axis=0, keepdims=False)  # annotated
    return helper_with_default(y).sum() + helper_with_default(a=y, power=3).sum()


def globals_and_helpers(x):
    return (sigmoid(x * SCALE) * TABLE[: len(x)]).sum()


def make_closure(w):
    def f(x):
        return (x * w).sum()

    return f


closure_over_array = make_closure(np.arange(4.0))


def integer_bookkeeping(x):
    n = len(x) // 2
    k = int(np.argmax(x))
    count = 0
    for i in range(n):
        count += 1
    return x[k] * count + x[:n].sum()


def nondiff_values(x):
    z = np.zeros_like(x)
    print("shape", x.shape)
    assert x.ndim == 1
    pass
    return (x + z).sum() * x.size


def float32_function(x):
    return (np.tanh(x) * 2).sum()


def tuple_output(x):
    return x * 2, (x**2).sum()


def unpacking(x):
    a, (b, c) = x[0], (x[1], x[2])
    first, *_ = [x[0], x[1]]
    return a * b + c


# ---- control flow --------------------------------------------------------------------


def branches(x):
    s = 0.0
    if x[0] > 0:
        s = s + np.sin(x[0])
    elif x[1] > 0:
        s = s + x[1] ** 2
    else:
        s = s - x[2]
    return s + (x[0] if x[1] > x[2] else x[2] * 3)


def boolean_ops(x):
    y = x[0] if (x[0] > 0 and x[1] < 1) or not x[2] > 0 else x[1]
    return y * 2 + (0 < x[0] < 1) * x[1]


def while_doubling(x):
    y = x * 2
    while np.linalg.norm(y) < 1000:
        y = y * 2
    return y


def for_range(x):
    s = 0.0
    for i in range(len(x)):
        s = s + np.sin(x[i]) * x[i]
    return s


def range_bounds(x):
    s = 0.0
    for i in range(1, x.shape[0], 2):
        s = s + x[i] * x[i - 1]
    for j in np.arange(2):
        s = s * 1.5 + x[j]
    return s


def nested_dependent_bounds(x):
    rows, cols = x.shape
    s = 0.0
    for i in np.arange(rows):
        for j in np.arange(i, cols):
            s = s + x[i, j]
    return s


def slices_in_loop(x):
    total = 0.0
    for f in range(x.shape[2]):
        r = x[:, :, f]
        total = total + (r * r).sum() + x[0, :, f].sum() * x[:, 1, f].sum()
    return total


def subscript_updates(x):
    S = np.zeros((3, 3))
    d = x * 2
    for i in range(3):
        S[i, 2] = 1.0
        if i == 2:
            S[i, i] += d[i]
        S[i, 0] = d[i] ** 2
    return (S * S).sum()


def max_tracking(a):
    largest = a[0]
    for i in range(len(a)):
        if a[i] > largest:
            largest = a[i]
    result = 0.0
    for i in range(len(a)):
        result += np.exp(a[i] - largest)
    return np.log(result) + largest


def repeated_index(x):
    return x[[0, 2, 2]] * np.array([1.0, 2.0, 3.0])


def loop_overwrite(x):
    y = x
    for k in range(3):
        y = np.sin(y) * 1.1
    return y


def iterate_rows(X):
    out = []
    for row in X:
        out.append(np.tanh(row @ np.ones(3)))
    return np.stack(out)


def enumerate_zip(x, y):
    s = 0.0
    for i, a in enumerate(x):
        s = s + a * i
    for a, b in zip(x, y):
        s = s + a * b
    return s


def break_continue(x):
    s = 0.0
    for i in range(len(x)):
        if i == 1:
            continue
        s = s + x[i] ** 2
        if s > 3.0:
            break
    return s


def return_in_loop(x):
    for i in range(len(x)):
        if x[i] > 0.5:
            return x[i] * 3
    return x.sum()


def in_place(x):
    y = x.copy()
    y[1:3] = y[1:3] * 10
    y += x
    y *= 2
    y /= 3
    y -= x * 0.5
    return y


def fill_buffer(x):
    n = len(x)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = x[i] * x[j]
    return out.sum() + out[0, 1]


def nested_def_closure_lambda(x):
    w = x * 2

    def scaled(z, k=1.0):
        return z * w * k

    sq = lambda t: t**2
    return scaled(sq(x), k=0.5).sum()


def list_comprehension(x):
    parts = [x[i] * i for i in range(len(x)) if i != 1]
    return sum(parts) + np.stack([p * 2 for p in parts]).sum()


def dict_params(p, x):
    h = np.tanh(x @ p["W"] + p["b"])
    return (h**2).sum()


def list_params(ws, x):
    h = x
    for w in ws:
        h = np.tanh(h @ w)
    return h.sum()


def tuple_params(t):
    a, b = t
    return (a * b).sum()


def integer_argument(n, x):
    return n * x


def while_break_continue(x):
    s = 0.0
    k = 0
    while True:
        k = k + 1
        if k == 2:
            continue
        s = s + np.sin(x[k % len(x)]) * k
        if k > 4:
            break
    return s


def dict_output(x):
    return {"double": x * 2, "norm": (x * x).sum()}


def list_output(x):
    return [x[0] * x[1], x * 3]


def add_at(x):
    out = np.zeros(3)
    np.add.at(out, np.array([0, 2, 2]), x * 2)
    return (out * out).sum()


def view_then_update(X):
    Y = np.zeros_like(X)
    for i in range(X.shape[0]):
        Y[i, :] = X[i, :] * (i + 1)
    Y[:, 0] = Y[:, 0] ** 2
    return Y.sum()


def nested_params(p):
    total = 0.0
    for layer in p["layers"]:
        total = total + (layer["W"] ** 2).sum() * layer["s"]
    return total


def returns_pair(x):
    return x * 2, x.sum()


def unpacks_helper_result(x):
    a, b = returns_pair(x)
    return (a * b).sum()


def repeated_store(x, e):
    S = np.zeros(3)
    S[[0, 0, 2]] = e
    S[np.array([1, 1])] = x[0] * 3
    return (S * x).sum()


def aug_repeated(x):
    y = x.copy()
    y[[0, 0, 2]] += x[1] * x[:3]
    return (y ** 2).sum()

def fancy_2d(X):
    rows = np.array([0, 2, 2])
    cols = np.array([1, 0, 1])
    return (X[rows, cols] ** 2).sum() + X[rows].sum() + X[:, [1, 1]].sum()

def bool_read_write(x):
    m = x > 0
    y = np.zeros_like(x)
    y[m] = x[m] ** 2
    y[~m] = -x[~m]
    return (y * x).sum()

def ellipsis_newaxis(T):
    return (T[..., 0] * T[:, None, 1, :].sum(axis=1)[..., 0][:, None]).sum()

def slice_assign_loop(x):
    out = np.zeros(6)
    for i in range(3):
        out[2 * i:2 * i + 2] = x[i] * np.array([1.0, -1.0]) + out[max(0, 2 * i - 2)]
    return (out ** 2).sum()
