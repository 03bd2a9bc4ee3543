"""What probe 29 found in ordinary numeric code, now differentiated or honoured: a state vector
unpacked into numbers that are then updated with ``+=`` (NumPy scalars, no views), a 0-d array
updated in place and then stored into (``acc[...] = ...``: it stays a 0-d array), ``math.fsum``,
and the ``backend`` keyword of ``srcad.vjp`` (it was ignored)."""
import math

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

numba = pytest.importorskip("numba")


def predator_prey(params, y0):
    a, b, c, d = params[0], params[1], params[2], params[3]
    prey, pred = y0[0], y0[1]
    out = np.zeros(12)
    for i in range(12):
        dprey = a * prey - b * prey * pred
        dpred = d * prey * pred - c * pred
        prey += 0.05 * dprey
        pred += 0.05 * dpred
        out[i] = prey - pred
    return out


def unpacked_state(y):
    x, v = y
    x += 0.1 * v
    v -= 0.1 * x
    return x * v + x ** 3


PARAMS = np.array([1.0, 0.5, 0.8, 0.3])
Y0 = np.array([2.0, 1.0])


@pytest.mark.parametrize("wrt", [0, 1])
def test_numbers_unpacked_from_a_state_vector_and_updated_in_place(wrt):
    args = (PARAMS.copy(), Y0.copy())
    check_grads(predator_prey, args, wrt=wrt)
    np.testing.assert_array_equal(args[0], PARAMS)
    np.testing.assert_array_equal(args[1], Y0)
    jac = srcad.jacobian(predator_prey, wrt=wrt)(*args)
    eps, u = 1e-6, np.array([0.3, -0.7, 0.2, 0.5])[:len(args[wrt])]
    moved = [list(args), list(args)]
    moved[0][wrt], moved[1][wrt] = args[wrt] + eps * u, args[wrt] - eps * u
    np.testing.assert_allclose(jac @ u, (predator_prey(*moved[0]) - predator_prey(*moved[1])) / (2 * eps),
                               rtol=1e-5, atol=1e-8)


def test_numbers_unpacked_by_tuple_assignment_second_order_and_numba():
    y = np.array([0.7, -1.3])
    check_grads(unpacked_state, (y,))
    u, w, e = np.array([0.4, 0.9]), np.array([-0.6, 0.2]), 1e-4
    f = unpacked_state
    numeric = (f(y + e * u + e * w) - f(y + e * u - e * w) - f(y - e * u + e * w) + f(y - e * u - e * w)) / (4 * e * e)
    assert srcad.hvp(unpacked_state)(y, u) @ w == pytest.approx(numeric, rel=1e-5)
    v = np.linspace(-1.0, 1.0, 12)
    _, compiled = srcad.vjp(predator_prey, PARAMS, Y0, wrt=1, backend="numba")
    _, pullback = srcad.vjp(predator_prey, PARAMS, Y0, wrt=1)
    np.testing.assert_allclose(compiled(v), pullback(v), rtol=1e-12)


def row_updated_in_place(Y):
    r = Y[0]
    r += 1.0
    return np.sum(Y * r)


def test_a_row_unpacked_from_a_matrix_is_still_a_view():
    with pytest.raises(srcad.SrcadError, match=r"'r \+= \.\.\.'"):
        srcad.grad(row_updated_in_place)(np.ones((2, 3)))


def decayed_sum_of_squares(x):
    acc = np.zeros(())
    for xi in x:
        acc += xi ** 2
        acc[...] = acc * 0.9
    return float(acc)


def scaled_product(x):
    acc = np.array(0.0)
    acc += x[0] * x[1]
    acc[()] = acc * 2.0
    acc *= x[2]
    return acc + 0.0


def zero_d_argument(a):
    a += 1.0
    a[...] = a * a
    return a * 3.0


X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("fun, x", [(decayed_sum_of_squares, X), (scaled_product, X),
                                    (zero_d_argument, np.array(0.7))])
def test_a_zero_d_array_updated_in_place_stays_an_array(fun, x):
    kept = x.copy()
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))
    np.testing.assert_array_equal(x, kept)


def test_zero_d_array_in_place_result_keeps_the_array():
    y, pullback = srcad.vjp(decayed_sum_of_squares, X)
    assert y == decayed_sum_of_squares(X)
    np.testing.assert_allclose(pullback(1.0), 2 * X * 0.9 ** np.array([3, 2, 1]))


def exact_sums(x):
    return math.fsum(x ** 2) + math.fsum(float(t) * 2.0 for t in x) + math.fsum([x[0] * x[1], 1.0])


def test_math_fsum_is_differentiated_as_sum():
    check_grads(exact_sums, (X,), modes=("rev",))
    check_jvp(exact_sums, (X,))
    np.testing.assert_allclose(srcad.grad(exact_sums)(X), 2 * X + 2.0 + np.array([X[1], X[0], 0.0]))


def test_vjp_runs_the_backend_it_is_given():
    with pytest.raises(ValueError, match="backend"):
        srcad.vjp(exact_sums, X, backend="bogus")
    with pytest.raises(srcad.SrcadError, match=r"backend='numba'.*fsum"):
        srcad.vjp(exact_sums, X, backend="numba")
    y, pullback = srcad.vjp(predator_prey, PARAMS, Y0, backend="numba")
    np.testing.assert_array_equal(y, predator_prey(PARAMS, Y0))
    v = np.linspace(-1.0, 1.0, 12)
    np.testing.assert_allclose(pullback(v), srcad.vjp(predator_prey, PARAMS, Y0)[1](v), rtol=1e-12)


def bouncing_ball(h0, v0, g, e):
    h, v = h0, v0
    for _ in range(150):
        v -= g * 0.01
        h += v * 0.01
        if h < 0.0:
            h = -h
            v = -e * v
    return h + 0.1 * v


def test_numbers_given_as_arguments_and_updated_with_augmented_assignment_compile_with_numba():
    """``h += ...`` on a Python float argument rebinds it: no argument is updated in place, so no
    run-time sharing check (which numba cannot run) is made."""
    args = (1.0, 0.0, 9.81, 0.8)
    compiled = srcad.grad(bouncing_ball, wrt=(0, 3), backend="numba")(*args)
    np.testing.assert_allclose(compiled, srcad.grad(bouncing_ball, wrt=(0, 3))(*args), rtol=1e-12)
    check_grads(bouncing_ball, args, wrt=(0, 3), modes=("rev",))
    check_jvp(bouncing_ball, args, wrt=(0, 3))
    with pytest.raises(srcad.SrcadError, match="updates its argument 'h0' in place"):
        srcad.grad(bouncing_ball, backend="numba")(np.array(1.0), *args[1:])
