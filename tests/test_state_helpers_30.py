"""A simulation's state built as an array of numbers and stepped by a helper of yours that
unpacks it and updates the parts with augmented assignments (``pos, vel = state[0], state[1]``;
``vel -= ...``): refused before as an update of memory ``pos`` shares (the helper was compiled
without its argument's shape). Shape inference now knows the state array's shape through the
helper's call, so the element reads are NumPy scalars (``passes.shape_containers``)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def pendulum_step(state, dt):
    pos, vel = state[0], state[1]
    vel -= 9.8 * dt * np.sin(pos)
    pos += dt * vel
    return np.array([pos, vel])


def pendulum(theta, dt):
    s = np.array([theta, 0.0])
    total = 0.0
    for _ in range(12):
        s = pendulum_step(s, dt)
        total = total + s[0] ** 2
    return total


def spring_step(state, k, dt):
    x, v = state[0], state[1]
    v += -k * x * dt
    x += v * dt
    return np.array([x, v])


def springs(x0, k):
    s = np.array([x0, 0.0])
    for _ in range(8):
        s = spring_step(s, k, 0.1)
    return s[0] * s[1] + s[0] ** 2


def weighted(items):
    return items[0] * 2.0 + items[1]


def given_a_list(w):
    items = [w * 1.0, w ** 2]
    t = weighted(items)  # a list given to a helper: shape inference takes its structure as unknown
    return np.sum(t * items[1])


def shear_step(state, k):
    a, b = state[0], state[1]
    b += k * a  # a scalar where state is a vector; a row of state (updated in place) where it is a matrix
    return np.stack([a, b])


def sheared(x, k):
    s = np.stack([x, x * 0.5])
    s2 = shear_step(s, k)
    return np.sum(s2 ** 2 * x)


CASES = [(pendulum, (0.4, 0.05), (0, 1)), (springs, (0.7, 1.3), (0, 1))]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_reverse_and_second_order_against_finite_differences(f, args, wrt):
    check_grads(f, args, wrt=wrt)
    check_grads(srcad.grad(f, wrt=0), args, wrt=wrt)  # the gradient differentiated again


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_numba_backend_equals_numpy(f, args, wrt):
    pytest.importorskip("numba")
    compiled = srcad.grad(f, wrt=wrt, backend="numba")(*args)
    np.testing.assert_allclose(compiled, srcad.grad(f, wrt=wrt)(*args), rtol=1e-12)


def test_a_list_given_to_a_helper_is_read_with_its_structure_unknown():
    check_grads(given_a_list, (np.array([0.5, -1.5, 2.0]),))


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_forward_mode_gets_the_helpers_argument_shapes(f, args, wrt):
    check_jvp(f, args, wrt=wrt)
    jacobian = srcad.jacobian(f, wrt=wrt, mode="fwd")(*args)
    np.testing.assert_allclose(jacobian, srcad.grad(f, wrt=wrt)(*args), rtol=1e-10)


def test_forward_code_made_for_a_helpers_shapes_is_not_run_for_others():
    """The jvp of ``sheared`` holds for a scalar ``x`` only (the helper's reads are scalars
    there): a vector ``x`` makes rows of ``s`` that the helper updates in place, and gets code
    of its own, right or refused, never the scalar's; and the scalar's is found again."""
    check_jvp(sheared, (0.7, 1.3), wrt=(0, 1))
    x = np.array([0.7, -0.4, 1.1])
    try:
        check_jvp(sheared, (x, 1.3), wrt=(0, 1))
    except srcad.SrcadError:
        pass
    check_jvp(sheared, (0.3, -0.8), wrt=(0, 1))
