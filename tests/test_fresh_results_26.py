"""What SciPy's functions srcad lists as returning new memory return is new memory, and an
in-place update of such a result (or of its argument afterwards) is differentiated, not
refused as if the two shared memory."""
import numpy as np
import pytest
import scipy.linalg
import scipy.special as sp

import srcad
from srcad.passes import fresh
from srcad.testing import check_grads


@pytest.mark.parametrize("name", fresh._SCIPY_FRESH)
def test_each_listed_scipy_function_returns_memory_of_its_own(name):
    module, attr = name.rsplit(".", 1)
    fn = getattr({"special": sp, "linalg": scipy.linalg}[module], attr)
    a = np.random.default_rng(0).standard_normal((3, 3)) * 0.3
    out = fn(a)
    assert not np.shares_memory(out, a)
    assert fresh.returns_new_array(fn)


def softmax_scaled(x):
    h = x * 1.0
    p = sp.softmax(h)
    p *= 2.0
    return np.sum(h * p)


def logsumexp_then_update(x):
    h = x * 1.0
    r = sp.logsumexp(h)
    h *= 0.9
    return r * np.sum(h ** 2)


def log_softmax_rows(x):
    q = sp.log_softmax(x.reshape(2, 2), axis=1)
    q[0] += 1.0
    return np.sum(q * x.reshape(2, 2))


def expm_updated(x):
    e = scipy.linalg.expm(x.reshape(2, 2) * 0.3)
    e[0, 0] += 1.0
    return np.sum(e ** 2)


@pytest.mark.parametrize("fn", [softmax_scaled, logsumexp_then_update, log_softmax_rows, expm_updated])
def test_updating_a_fresh_scipy_result_in_place_is_differentiated(fn):
    x = np.array([0.3, -0.2, 0.5, 0.1])
    before = x.copy()
    check_grads(fn, (x,))
    assert np.isclose(srcad.value_and_grad(fn)(x)[0], fn(x))
    assert np.array_equal(x, before)


def copy_as_scratch(x):
    b = x * 2.0
    z = np.tanh(b)  # the reverse sweep reads z, not b
    c = b.copy()
    c += 1.0
    return np.sum(z * c)


def test_the_copy_of_an_array_is_not_a_value_the_reverse_sweep_keeps():
    x = np.array([0.3, -0.2, 0.5])
    check_grads(copy_as_scratch, (x,))
    d = np.array([0.5, 1.0, -0.7])
    _, tangent = srcad.jvp(copy_as_scratch, (x,), (d,))
    fd = (copy_as_scratch(x + 1e-6 * d) - copy_as_scratch(x - 1e-6 * d)) / 2e-6
    assert np.isclose(tangent, fd, rtol=1e-6)
