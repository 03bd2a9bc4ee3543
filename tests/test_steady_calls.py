"""A second call with arguments of the same shapes runs the code the first call made: every
guard of freshly compiled code holds. A guard that cannot hold (a weak reference to a bound
method that Python makes anew at every attribute read, ``np.multiply.outer``) made srcad
compile again on every call, 0.1-0.3 s each, and keep every copy. ``srcad.testing``'s checks
now assert this for every function they are given; here it is checked for each way a
function names what it calls, in every mode, and the guards still see a rebinding."""
import math

import numpy as np
import pytest

import srcad
from srcad.compile import _CACHE
from srcad.testing import check_grads, check_jvp

from lang_checks import made_by

WEIGHTS = np.array([0.5, -1.0, 2.0, 0.25])
MATRIX = np.arange(12.0).reshape(3, 4) / 10  # rebound below
CFG = {"scale": 2.0}
ADD_OUTER = np.add.outer
UFUNC = np.multiply  # rebound below


def outer(a):
    return np.sum(np.cos(np.multiply.outer(a, a)))


def reduce_(a):
    return np.add.reduce(a * a) + np.multiply.reduce(a)


def accumulate(a):
    return np.sum(np.maximum.accumulate(a) * np.logaddexp.accumulate(a))


def reduceat(a):
    return np.sum(np.add.reduceat(a * a, [0, 2]))


def aliased_method(a):
    return np.sum(ADD_OUTER(a, a) ** 2)


def dict_method(a):
    return np.sum(a * CFG.get("scale"))


def array_method(a):
    return WEIGHTS.dot(a * a) * np.sum(a)


def view_method(a):  # C.T is a new view at every read, and .dot a new method of it
    return np.sum(MATRIX.T.dot(MATRIX.dot(a)) * a) + MATRIX[1:, ::-1].sum(axis=0).dot(a)


def module_function(a):
    return math.fsum([a[0], a[1] * a[2]]) * a[3]


def rebindable(a):
    return np.sum(np.sin(UFUNC.outer(a, a)))


FUNCTIONS = [outer, reduce_, accumulate, reduceat, aliased_method, dict_method, array_method, view_method,
             module_function, rebindable]


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_second_call_compiles_nothing(fun):
    x = np.array([0.3, -0.2, 0.5, 0.9])
    grad, second, tangent = srcad.grad(fun), srcad.hessian(fun), np.ones(4)
    for mode in (lambda y: grad(y), lambda y: srcad.jvp(fun, (y,), (tangent,)), lambda y: second(y)):
        mode(x)
        assert made_by(lambda: mode(x)) == 0
        assert made_by(lambda: mode(x + 0.25)) == 0  # other values, the same shapes


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradients_in_every_mode(fun):
    x = np.array([0.3, -0.2, 0.5, 0.9])
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))
    check_grads(srcad.grad(fun), (x,), rtol=1e-4, atol=1e-6)


def test_a_rebound_method_owner_compiles_again():
    global UFUNC
    x = np.array([0.3, -0.2, 0.5, 0.9])
    before = srcad.grad(rebindable)(x)
    try:
        UFUNC = np.add
        after = check_grads(rebindable, (x,), v=1.0)
    finally:
        UFUNC = np.multiply
    expected = 2 * np.cos(np.add.outer(x, x)).sum(axis=1)
    np.testing.assert_allclose(after, expected, rtol=1e-12)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(srcad.grad(rebindable)(x), before, rtol=1e-12)


@pytest.mark.parametrize("check", [check_grads, check_jvp])
def test_the_checks_report_code_compiled_on_every_call(monkeypatch, check):
    from srcad import compile as srcad_compile

    def fresh(a):  # compiled here first, with every resolved object held as gone
        return np.sum(np.sin(a) * np.cos(a))

    monkeypatch.setattr(srcad_compile, "hold_path", lambda root, attrs, obj: lambda: object())
    with pytest.raises(AssertionError, match="compiled its code again"):
        check(fresh, (np.array([0.3, -0.2, 0.5, 0.9]),))


def test_an_array_rebound_or_viewed_otherwise_compiles_again():
    global MATRIX
    x, kept = np.array([0.3, -0.2, 0.5, 0.9]), MATRIX
    grad = srcad.grad(view_method)
    first = check_grads(view_method, (x,), v=1.0)
    np.testing.assert_array_equal(grad(x), first)
    try:
        for other in (MATRIX * 2.0, MATRIX[::-1], MATRIX[:, ::-1] + 1.0):
            MATRIX = other
            made = _CACHE.made_in_this_thread()
            np.testing.assert_array_equal(grad(x), check_grads(view_method, (x,), v=1.0))
            assert _CACHE.made_in_this_thread() > made
        MATRIX = kept
        np.testing.assert_array_equal(grad(x), first)
    finally:
        MATRIX = kept
