"""np.dot's reverse rule: 1-D and 2-D arrays get the code of ``@`` (decided when shapes are
known, or at run time in generic code); every other operand kind (0-d arrays, NumPy and
Python scalars, lists, N-D arrays) keeps the general helper. Checked against finite
differences in reverse (joint and pullback), forward and second order."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order

RNG = np.random.default_rng(12)


def R(*shape):
    return RNG.standard_normal(shape)


def dot(a, b):
    return np.dot(a, b)


def matmul(a, b):
    return a @ b


def matmul_of_sines(a, b):
    return np.sum(np.sin(a @ b))


def method_dot(a, b):
    return a.dot(b)


def dot_of_sines(a, b):
    return np.sum(np.sin(np.dot(a, b)))


def dot_list_operand(X):
    return np.dot(X.T[1], [row[0] * row[2] for row in X])


CASES = [
    ("1d-1d", [R(3), R(3)]),
    ("2d-1d", [R(2, 3), R(3)]),
    ("1d-2d", [R(3), R(3, 2)]),
    ("2d-2d", [R(2, 3), R(3, 4)]),
    ("1x2-2x2", [R(1, 2), R(2, 2)]),
    ("python-float-2d", [1.5, R(2, 3)]),
    ("2d-python-float", [R(2, 3), -0.5]),
    ("numpy-scalar-1d", [np.float64(0.7), R(3)]),
    ("0d-array-2d", [np.array(1.3), R(2, 2)]),
    ("3d-2d", [R(2, 3, 4), R(4, 2)]),
    ("2d-3d", [R(2, 3), R(2, 3, 4)]),
    ("3d-1d", [R(2, 3, 4), R(4)]),
    ("1d-3d", [R(3), R(2, 3, 4)]),
    ("3d-3d", [R(2, 2, 3), R(2, 3, 2)]),  # not matmul's shape: (2, 2, 2, 2)
    ("3d-3d-other-leading-axes", [R(2, 3, 4), R(5, 4, 2)]),
    ("2d-4d", [R(2, 3), R(2, 1, 3, 2)]),
]


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
def test_dot_reverse_and_forward(name, args):
    check_grads(dot, args, wrt=(0, 1), modes=("rev",))
    check_jvp(dot, args, wrt=(0, 1))


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("wrt", [0, 1])
def test_dot_second_order(name, args, wrt):
    check_second_order(dot_of_sines, args, wrt=wrt)


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((2, 2, 3), (2, 3, 2)), ((3,), (2, 3, 4))])
def test_method_dot(shapes):
    args = [R(*shape) for shape in shapes]
    check_grads(method_dot, args, wrt=(0, 1), modes=("rev",))
    check_jvp(method_dot, args, wrt=(0, 1))


MATMUL_CASES = [c for c in CASES if all(isinstance(a, np.ndarray) and a.ndim for a in c[1])
                and not c[0].startswith(("3d-3d", "2d-4d"))]


@pytest.mark.parametrize("name,args", MATMUL_CASES, ids=[c[0] for c in MATMUL_CASES])
def test_matmul_operator_every_mode(name, args):
    """``@`` has the same branches for 1-D and 2-D arrays (and the general helper beyond)."""
    check_grads(matmul, args, wrt=(0, 1), modes=("rev",))
    check_jvp(matmul, args, wrt=(0, 1))
    check_second_order(matmul_of_sines, args, wrt=0)
    check_second_order(matmul_of_sines, args, wrt=1)


def matmul_list_operand(X):
    return X.T[1] @ np.array([row[0] * row[2] for row in X])


def test_matmul_in_generic_code():
    d = srcad.differentiable(matmul, wrt=(0, 1))
    for n in range(2, 10):
        d.adjoint(R(n, n), R(n, n), R(n, n))
    for name, args in MATMUL_CASES:
        v = RNG.standard_normal(np.shape(args[0] @ args[1]))
        grads = d.adjoint(*args, v)
        for position in (0, 1):
            numeric, u = _finite_difference_vjp(matmul, args, v, position)
            assert np.isclose(np.sum(np.asarray(grads[position]) * u), numeric, rtol=1e-6, atol=1e-8), name


def test_dot_of_a_list_operand():
    X = R(4, 3)
    check_grads(dot_list_operand, (X,), modes=("rev",))
    check_jvp(dot_list_operand, (X,))
    check_second_order(lambda X: np.sin(dot_list_operand(X)), (X,))


def test_dot_of_float32_operands_keeps_each_argument_dtype():
    a, b = R(2, 3).astype(np.float32), R(3)
    da, db = srcad.grad(dot_of_sines, wrt=(0, 1))(a, b)
    assert da.dtype == np.float32 and db.dtype == np.float64
    check_grads(dot_of_sines, (a.astype(np.float64), b), wrt=(0, 1))


def test_dot_on_arrays_generates_the_code_of_matmul():
    d = srcad.differentiable(dot, wrt=(0, 1))
    d.adjoint(R(1, 2), R(2, 2), R(1, 2))
    source = d.adjoint_source
    assert "dot_grad" not in source and "True)" not in source  # no helper, no defensive copy
    assert "M.T" in source.replace("b.T", "M.T")


def _finite_difference_vjp(f, args, v, position, eps=1e-6):
    """⟨v, ∂f/∂args[position] · u⟩ numerically, and the direction u."""
    u = RNG.standard_normal(np.shape(args[position]))

    def at(step):
        moved = list(args)
        moved[position] = args[position] + step * u
        return f(*moved)

    return np.sum(v * (at(eps) - at(-eps))) / (2 * eps), u


def test_dot_in_generic_code_decides_each_case_at_run_time():
    """After eight shape combinations the code is generic: the rule's tests on ndim and type
    run when it is called, for every kind of operand."""
    d = srcad.differentiable(dot, wrt=(0, 1))
    for n in range(2, 10):  # eight specialisations
        d.adjoint(R(n), R(n), 1.0)
    for name, args in CASES:
        v = RNG.standard_normal(np.shape(np.dot(*args)))
        grads = d.adjoint(*args, v)
        for position in (0, 1):
            numeric, u = _finite_difference_vjp(dot, args, v, position)
            assert np.isclose(np.sum(np.asarray(grads[position]) * u), numeric, rtol=1e-6, atol=1e-8), name
            assert np.shape(grads[position]) == np.shape(args[position]), name
