"""A pullback made by ``vjp`` saves as copies the forward values that may be the user's memory;
it skips that analysis when the forward sweep reads nothing of the user's but a few builtins
(``range``, ``len``: first use is faster). The builtins are known by identity, not by name: a
global list named ``max`` is the user's memory, and an item of it changed after ``vjp`` must not
reach the pullback."""
import numpy as np

import srcad

max = [np.array([1.0, 2.0, 3.0])]  # noqa: A001 -- a global named like a builtin, on purpose
X = np.array([0.3, -0.5, 0.8])


def weighted_by_global_named_max(x):
    w = max[0]
    return np.sum(np.sin(w * x)) * len(x)


def only_builtins(x):
    total = 0.0
    for i in range(len(x)):
        total = total + abs(x[i]) ** 3
    return total


def test_global_named_like_a_builtin_is_saved_as_a_copy():
    old = max[0].copy()
    y, pullback = srcad.vjp(weighted_by_global_named_max, X)
    try:
        max[0] *= 3.0
        np.testing.assert_allclose(pullback(1.0), 3 * old * np.cos(old * X))
    finally:
        max[0][:] = old


def test_forward_reading_only_builtins():
    y, pullback = srcad.vjp(only_builtins, X)
    np.testing.assert_allclose(y, np.sum(np.abs(X) ** 3))
    np.testing.assert_allclose(pullback(2.0), 2.0 * 3 * np.abs(X) * X)
    srcad.testing.check_grads(only_builtins, (X,))
