"""Programs for tests/test_lang_*.py that must not live in a test module: pytest rewrites the
``assert`` statements of test modules, so their source is not the code that runs, and a
helper here is "another module" for a function defined in a test module."""
import numpy as np


def product_of(*factors):
    out = 1.0
    for f in factors:
        out = out * f
    return out


def checked_norm(x):
    assert x.ndim == 1, "a vector"
    assert np.all(np.isfinite(x))
    return np.sqrt(np.sum(x * x))


def tested_energy(x):
    np.testing.assert_array_equal(x.shape, (3,))
    np.testing.assert_allclose(x, x)
    np.testing.assert_equal(len(x), 3)
    e = np.sum(np.sin(x) * x)
    np.testing.assert_array_less(-1e9, e)
    return e
