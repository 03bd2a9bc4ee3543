"""The numba backend: values frozen into compiled code (a helper's globals, defaults), what it
compiles (a helper's saved values, a copied argument), integer overflow and math domain errors."""
import math
import types

import numpy as np
import pytest

import srcad

pytest.importorskip("numba")

X = np.array([0.5, -1.2, 2.0])
SCALE = 2.0
CONFIG = types.ModuleType("config")
CONFIG.k = 2.0


def energy_global(v):
    return SCALE * v ** 2


def energy_default(v, s=2.0):
    return s * v ** 2


def energy_attribute(v):
    return CONFIG.k * v ** 2


def energy_deeper(v):
    return energy_global(v) + 0.0 * v


def _make_energy_cell():
    c = 2.0

    def energy_cell(v):
        return c * v ** 2

    def set_c(value):
        nonlocal c
        c = value

    return energy_cell, set_c


energy_cell, set_c = _make_energy_cell()


def _check_numba(fn, args, wrt=0):
    """numba's gradient of ``fn`` at ``args`` (argument ``wrt``) against central differences
    in random directions, and against the NumPy backend's."""
    g = srcad.grad(fn, wrt, backend="numba")(*args)
    np.testing.assert_allclose(g, srcad.grad(fn, wrt)(*args), rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(3):
        u = rng.standard_normal(np.shape(args[wrt]))
        moved = [list(args), list(args)]
        moved[0][wrt], moved[1][wrt] = args[wrt] + 1e-6 * u, args[wrt] - 1e-6 * u
        fd = (fn(*moved[0]) - fn(*moved[1])) / 2e-6
        assert np.isclose(np.sum(g * u), fd, rtol=1e-5, atol=1e-7)


def _summing(helper):
    def total(x):
        s = 0.0
        for i in range(x.shape[0]):
            s = s + helper(x[i])
        return s
    return total


def _set_scale(value):
    global SCALE
    SCALE = value


def _set(case, value):
    if case in ("global", "deeper"):
        _set_scale(value)
    elif case == "default":
        energy_default.__defaults__ = (value,)
    elif case == "attribute":
        CONFIG.k = value
    else:
        set_c(value)


HELPERS = {"global": energy_global, "default": energy_default, "attribute": energy_attribute,
           "cell": energy_cell, "deeper": energy_deeper}


@pytest.fixture
def restore():
    yield
    for case in HELPERS:
        _set(case, 2.0)


@pytest.mark.parametrize("case", sorted(HELPERS))
@pytest.mark.parametrize("api", ["value_and_grad", "grad"])
def test_a_value_a_helper_froze_is_read_again_after_it_changes(case, api, restore):
    total = _summing(HELPERS[case])
    made = getattr(srcad, api)(total, backend="numba")
    first = made(X)
    _set(case, 3.0)
    second = made(X)
    fresh = getattr(srcad, api)(total, backend="numba")(X)  # a transform made after the change
    if api == "value_and_grad":
        assert np.isclose(first[0], 2.0 * np.sum(X ** 2)) and np.isclose(second[0], 3.0 * np.sum(X ** 2))
        first, second, fresh = first[1], second[1], fresh[1]
    np.testing.assert_allclose(first, 4.0 * X)
    np.testing.assert_allclose(second, 6.0 * X)
    np.testing.assert_allclose(fresh, 6.0 * X)


def loss_with_default(x, c=2.0):
    return c * np.sum(x ** 2)


def test_the_defaults_the_function_holds_are_bound_not_its_text(restore):
    loss_with_default.__defaults__ = (5.0,)
    try:
        v, g = srcad.value_and_grad(loss_with_default, backend="numba")(X)
        assert np.isclose(v, loss_with_default(X))
        np.testing.assert_allclose(g, 10.0 * X)
        np.testing.assert_allclose(srcad.differentiable(loss_with_default, backend="numba").adjoint(X, 1.0), 10.0 * X)
        loss_with_default.__defaults__ = (3.0,)  # rebound again: compiled again
        np.testing.assert_allclose(srcad.grad(loss_with_default, backend="numba")(X), 6.0 * X)
        np.testing.assert_allclose(srcad.grad(loss_with_default, backend="numba")(X, 1.0), 2.0 * X)  # given
    finally:
        loss_with_default.__defaults__ = (2.0,)


def inner(v):
    return np.sin(v) * 2.0


def total_times_module_float(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + inner(x[i]) * SCALE
    return s


def rhs(y, mu):
    return mu * np.sin(y)


def rk_step(y, h, mu):
    return y + h * rhs(y, mu)


def integrate(y0, mu):
    y = y0
    for i in range(10):
        y = rk_step(y, 0.1, mu)
    return np.sum(y * y)


def test_a_helper_result_times_a_global_compiles_in_every_mode():
    v, g = srcad.value_and_grad(total_times_module_float, backend="numba")(X)
    assert np.isclose(v, total_times_module_float(X))
    np.testing.assert_allclose(g, 2.0 * SCALE * np.cos(X))
    y, pullback = srcad.vjp(total_times_module_float, X, backend="numba")
    np.testing.assert_allclose(pullback(1.0), 2.0 * SCALE * np.cos(X))
    _check_numba(total_times_module_float, (X,))


def test_a_helper_calling_a_helper_compiles():
    y0 = np.array([1.0, 0.5])
    np.testing.assert_allclose(srcad.grad(integrate, backend="numba")(y0, 1.3), srcad.grad(integrate)(y0, 1.3))
    _check_numba(integrate, (y0, 1.3))
    _check_numba(integrate, (y0, 1.3), wrt=1)


def update_a_copy(U0):
    U = U0.copy()
    U[0] -= 0.05
    return U[0] * U[1]


def update_the_argument(U):
    U[0] -= 0.05
    return U[0] * U[1]


def test_an_update_of_an_arrays_copy_compiles_and_of_the_argument_is_refused_at_its_line():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(srcad.grad(update_a_copy, backend="numba")(x), [2.0, 0.95])
    with pytest.raises(srcad.SrcadError, match=r"test_numba_frozen_values\.py:\d+: backend='numba' cannot compile "
                       r"the adjoint of this line: the function updates its argument 'U' in place.*`U1 = U\.copy\(\)`"):
        srcad.grad(update_the_argument, backend="numba")(x)
    np.testing.assert_allclose(srcad.grad(update_the_argument, backend="auto")(x), [2.0, 0.95])  # control
    np.testing.assert_allclose(x, [1.0, 2.0])


def hashed_weights(x):
    s = 0.0
    for i in range(x.shape[0]):
        h = (i * 6364136223846793005 + 1442695040888963407) % 1000
        s = s + x[i] * h
    return s


def cubed_count(x, n):
    k = n * n * n
    return x[0] * (k % 7)


def indexed(x):
    s = 0.0
    n = x.shape[0]
    for i in range(n):
        s = s + x[(i * 3 + 1) % n] * (i - 2)
    return s


def test_integer_overflow_raises_under_numba_and_auto_runs_numpy():
    x = np.linspace(-1.0, 1.0, 6)
    weights = np.array([(i * 6364136223846793005 + 1442695040888963407) % 1000 for i in range(6)], float)
    with pytest.raises(OverflowError, match=r"test_numba_frozen_values\.py:\d+: integer arithmetic passes "
                       r"2\*\*63 here.*\n    h = \(i \* 6364136223846793005"):
        srcad.value_and_grad(hashed_weights, backend="numba")(x)
    v, g = srcad.value_and_grad(hashed_weights, backend="auto")(x)
    assert np.isclose(v, hashed_weights(x))
    np.testing.assert_allclose(g, weights)
    with pytest.raises(srcad.SrcadError, match=r"k = n \* n \* n"):
        srcad.grad(cubed_count, backend="numba")(x, 3037000500)
    np.testing.assert_allclose(srcad.grad(cubed_count, backend="auto")(x, 3037000500)[0], 3037000500 ** 3 % 7)
    # controls: integers that fit compile and run
    np.testing.assert_allclose(srcad.grad(cubed_count, backend="numba")(x, 2 ** 20)[0], 2 ** 60 % 7)
    _check_numba(indexed, (x,))


def sqrt_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + math.sqrt(x[i] + 0.5) + math.log(x[i] + 2.0)
    return s


def test_math_domain_errors_raise_as_in_python():
    with pytest.raises(ValueError, match="math domain error"):
        srcad.value_and_grad(sqrt_sum, backend="numba")(np.array([0.3, -1.1, 0.8]))
    with pytest.raises(ValueError, match="math domain error"):
        srcad.grad(sqrt_sum, backend="numba")(np.array([0.3, -2.5, 0.8]))  # log's domain (sqrt's too)
    _check_numba(sqrt_sum, (np.array([0.3, -0.1, 0.8]),))  # control
