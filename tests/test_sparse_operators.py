"""SciPy sparse matrices and arrays as constant linear operators (``passes.sparse_operands``,
``rules.scipy_sparse``): ``S @ x``, ``x @ S``, ``S.T @ x``, ``S @ X``, ``S.dot(x)`` and
``spsolve(S, b)`` of a sparse ``S`` srcad does not differentiate (a global, a closure value
or an argument) and a dense array, in every mode against central differences and against
the same program with ``S.toarray()``; the arguments are left as they were. Every other use
of a sparse value, and a sparse value that carries a derivative, is refused."""
import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError
from srcad.errors import SrcadError
from lang_checks import check_all_modes

sp = pytest.importorskip("scipy.sparse")
spsolve = pytest.importorskip("scipy.sparse.linalg").spsolve

FORMATS = [f"{fmt}_{kind}" for fmt in ("csr", "csc", "coo", "dia") for kind in ("matrix", "array")]
N = 5


def laplacian(name):
    dense = 2 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1)
    dense[0, N - 1] = 0.5  # not symmetric: a transpose taken wrongly shows
    return getattr(sp, name)(dense)


L = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(N, N), format="csr")
L_DENSE = L.toarray()


def energy(u):
    return 0.5 * u @ (L @ u) - np.sum(np.sin(u))


def energy_dense(u):
    return 0.5 * u @ (L_DENSE @ u) - np.sum(np.sin(u))


def _programs(S):
    """Programs reading ``S`` from their closure."""
    def left(u):
        return np.sum(np.tanh(S @ u) * u)

    def right(u):
        return np.sum((u @ S) ** 2 * np.cos(u))

    def transposed(u):
        return np.sum(np.exp(S.T @ u) * u)

    def matrix_rhs(X):
        return np.sum(np.sin(S @ X) * X)

    return {"left": left, "right": right, "transposed": transposed, "matrix_rhs": matrix_rhs}


def step(u, K):
    return np.sum((u + 0.1 * (K @ u)) ** 2 * u)


def step_right(u, K):
    return np.sum(np.sin(u @ K.T) * (u @ K))


def _args(kind, rng):
    return rng.normal(size=(N, 3)) if kind == "matrix_rhs" else rng.normal(size=N)


def _same_gradients(f, f_dense, args, wrt=0):
    kept = [np.copy(a) if isinstance(a, np.ndarray) else a.copy() for a in args]
    check_all_modes(f, args, wrt=wrt)
    np.testing.assert_allclose(srcad.grad(f, wrt=wrt)(*args), srcad.grad(f_dense, wrt=wrt)(
        *[a.toarray() if sp.issparse(a) else a for a in args]), rtol=1e-12, atol=1e-12)
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a.toarray() if sp.issparse(a) else a, k.toarray() if sp.issparse(k) else k)


def test_module_level_operator():
    u = np.linspace(-1.0, 1.0, N)
    _same_gradients(energy, energy_dense, (u,))
    np.testing.assert_allclose(srcad.grad(energy)(u), L_DENSE @ u - np.cos(u), rtol=1e-12)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("kind", ["left", "right", "transposed", "matrix_rhs"])
def test_closure_operator(name, kind):
    S = laplacian(name)
    f, f_dense = _programs(S)[kind], _programs(S.toarray())[kind]
    _same_gradients(f, f_dense, (_args(kind, np.random.default_rng(1)),))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("program", [step, step_right])
def test_argument_operator(name, program):
    u = np.random.default_rng(2).normal(size=N)
    _same_gradients(program, program, (u, laplacian(name)))


def test_refused_with_respect_to_the_sparse_matrix():
    u = np.ones(N)
    for wrt, name in ((1, "csr_array"), ((0, 1), "csr_matrix")):
        with pytest.raises(SrcadError, match="a scipy.sparse matrix is taken only as the constant operand"):
            srcad.grad(step, wrt=wrt)(u, laplacian(name))


def test_refused_sparse_matrix_of_a_differentiated_value():
    def f(u):
        S = sp.diags(u)
        return np.sum(S @ u)

    with pytest.raises(SrcadError):
        srcad.grad(f)(np.ones(N))


S_MATRIX = laplacian("csr_matrix")


def elementwise(u):
    return np.sum(S_MATRIX * u)  # a matrix product for a *_matrix


def row(u):
    return np.sum(S_MATRIX[0] * u)


def np_dot(u):
    return np.sum(np.dot(S_MATRIX, u))  # an array of objects


def dot_method_of_the_array(u):
    return np.sum(u.dot(S_MATRIX))


def multiply_method(u):
    return np.sum(S_MATRIX.multiply(u))


def added(u):
    return np.sum(S_MATRIX + u)


def transpose_elementwise(u):
    return np.sum(np.sin(S_MATRIX.T * u))


@pytest.mark.parametrize("f", [elementwise, row, np_dot, dot_method_of_the_array, multiply_method, added,
                               transpose_elementwise])
def test_other_uses_refused(f):
    with pytest.raises(SrcadError, match="scipy.sparse"):
        srcad.grad(f)(np.linspace(0.0, 1.0, N))


S_ARRAY = laplacian("csr_array")
W = np.linspace(1.0, 2.0, N)


def product_of_sparse(u):
    return np.sum((S_ARRAY @ S_ARRAY) @ u)


def scaled(u):
    A = 2 * S_ARRAY
    return np.sum((A * u) ** 2)


def scaled_matrix(u):
    A = S_MATRIX * 1.0
    return np.sum(np.sin(A @ u))


@pytest.mark.parametrize("f", [product_of_sparse, scaled, scaled_matrix])
def test_sparse_value_made_from_one_refused_when_run(f):
    """A sparse value computed without derivative from one is checked where it is made (these
    crashed inside the derivative before)."""
    with pytest.raises(SrcadError, match=r"scipy\.sparse.*\.toarray\(\)"):
        srcad.grad(f)(np.linspace(0.0, 1.0, N))


def weighted(u):
    c = S_ARRAY @ W  # a dense array made from the sparse one: checked, and read as an array
    n = S_ARRAY.shape[0]
    return np.sum(c * u ** 2) / n


def weighted_dense(u):
    c = S_ARRAY.toarray() @ W
    return np.sum(c * u ** 2) / N


def dot_method(u):
    return np.sum(np.tanh(S_ARRAY.dot(u)) * u)


def dot_method_dense(u):
    return np.sum(np.tanh(S_ARRAY.toarray() @ u) * u)


@pytest.mark.parametrize("f, f_dense", [(weighted, weighted_dense), (dot_method, dot_method_dense)])
def test_dense_values_of_a_sparse_one(f, f_dense):
    _same_gradients(f, f_dense, (np.linspace(-1.0, 1.0, N),))


def test_argument_other_use_refused():
    def f(u, K):
        return np.sum((K @ u) * (K * u))

    with pytest.raises(SrcadSyntaxError, match="'K' is a scipy.sparse matrix, and an operation srcad differentiates"):
        srcad.grad(f)(np.ones(N), laplacian("csr_matrix"))


def test_rebound_global_checked_when_run():
    global L
    u = np.linspace(-1.0, 1.0, N)
    saved = L
    try:
        srcad.grad(energy)(u)
        L = np.matrix(L_DENSE)
        with pytest.raises(SrcadError, match="made for a real 2-D scipy.sparse"):
            srcad.grad(energy)(u)
    finally:
        L = saved


SOLVED = sp.csc_array(laplacian("csr_array") + 3 * sp.eye_array(N))


def solved(b):
    return np.sum(np.sin(spsolve(SOLVED, b)) * b)


def solved_dense(b):
    return np.sum(np.sin(np.linalg.solve(SOLVED.toarray(), b)) * b)


def solved_argument(b, A):
    return np.sum(spsolve(A, b * b) ** 2)


def solved_argument_dense(b, A):
    return np.sum(np.linalg.solve(A, b * b) ** 2)


@pytest.mark.parametrize("shape", [(N,), (N, 1), (N, 2)])
def test_spsolve_of_a_constant_matrix(shape):
    b = np.random.default_rng(3).normal(size=shape)
    if shape != (N, 1):  # (np.linalg.solve reads b of shape (n, 1) as a matrix, spsolve as a vector)
        _same_gradients(solved, solved_dense, (b,))
    else:
        check_all_modes(solved, (b,))


@pytest.mark.parametrize("name", ["csr_matrix", "csc_array", "coo_array"])
def test_spsolve_of_an_argument(name):
    A = getattr(sp, name)(SOLVED)
    b = np.random.default_rng(4).normal(size=N)
    check_all_modes(solved_argument, (b, A))
    np.testing.assert_allclose(srcad.grad(solved_argument)(b, A), srcad.grad(solved_argument_dense)(b, A.toarray()),
                               rtol=1e-10, atol=1e-12)


def solved_matrix(b):
    return np.sum(spsolve(SOLVED * b[0], b))


def test_spsolve_of_a_differentiated_matrix_refused():
    with pytest.raises(SrcadSyntaxError, match="'SOLVED' is a scipy.sparse matrix, and an operation srcad"):
        srcad.grad(solved_matrix)(np.ones(N))
