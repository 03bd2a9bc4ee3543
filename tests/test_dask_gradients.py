"""Generated adjoints on Dask arrays: lazy (no computation inside the call, one per
``compute()``), the shapes of NumPy's, and the values of NumPy's and of finite differences."""
import warnings

import dask
import dask.array as da
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads



class CountingScheduler:
    """A Dask scheduler that counts the graphs it is asked to compute."""

    def __init__(self):
        self.computations = 0

    def __call__(self, dsk, keys, **kwargs):
        self.computations += 1
        return dask.get(dsk, keys, **kwargs)


@pytest.fixture
def scheduler():
    counting = CountingScheduler()
    with dask.config.set(scheduler=counting), warnings.catch_warnings():
        warnings.simplefilter("error")  # Dask's FutureWarning for a NumPy function it lacks fails the test
        yield counting


def elementwise(x):
    return np.sum(np.tanh(x) * np.exp(-x ** 2) + np.sin(x) / 2.0 - np.log1p(x ** 2))


def matmul_vector(w, X):
    return np.sum(np.tanh(X @ w))


def matmul_matrix(A, B):
    return np.sum((A @ B) ** 2)


def reductions(x):
    return np.sum(np.mean(x, axis=0) ** 2) + np.sum(np.sum(x ** 3, axis=1, keepdims=True)) + x.mean()


def extremum(x):
    return np.sum(np.max(x, axis=1) ** 2) + np.min(x)


def broadcasting(x, b, c):
    return np.sum(np.tanh(x + b) * c)


def slicing(x):
    return np.sum(x[1:4, ::2] ** 2) + np.sum(x[0] * x[-1]) + np.sum(x.T[2])


def joined(x):
    return np.sum(np.concatenate([x, x ** 2], axis=1) ** 2) + np.sum(np.stack([x, 2 * x], axis=-1) ** 3)


def statistics(x):
    return np.var(x) + np.sum(np.std(x, axis=0)) + np.sum(np.prod(x, axis=1)) + np.linalg.norm(x)


def contractions(A, B):
    return np.sum(np.einsum("ij,jk->ik", A, B) ** 2) + np.sum(np.cumsum(A, axis=0) * np.where(A > 0, A, 0.1))


def scaled(s, x):
    return np.sum(np.tanh(s * x))


def logistic_loss(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.01 * np.sum(w ** 2)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "x": rng.uniform(0.1, 0.9, (6, 4)), "b": rng.normal(size=4), "c": rng.normal(size=(6, 1)),
        "w": rng.normal(size=4), "X": rng.normal(size=(6, 4)), "A": rng.normal(size=(6, 4)),
        "B": rng.normal(size=(4, 3)), "y": np.sign(rng.normal(size=6)),
    }


CHUNKS = {"x": (3, 4), "b": 2, "c": (3, 1), "w": 4, "X": (3, 2), "A": (2, 4), "B": (4, 3), "y": 3}

# (function, its parameters, wrt): every argument is a Dask array
PROGRAMS = [
    (elementwise, ("x",), 0),
    (matmul_vector, ("w", "X"), (0, 1)),
    (matmul_matrix, ("A", "B"), (0, 1)),
    (reductions, ("x",), 0),
    (extremum, ("x",), 0),
    (broadcasting, ("x", "b", "c"), (0, 1, 2)),
    (slicing, ("x",), 0),
    (logistic_loss, ("w", "X", "y"), (0, 1)),
    (joined, ("x",), 0),
    (statistics, ("x",), 0),
    (contractions, ("A", "B"), (0, 1)),
]
IDS = [p[0].__name__ for p in PROGRAMS]


def _arguments(params, lazy):
    data = _data()
    return [da.from_array(data[p], chunks=CHUNKS[p]) if lazy else data[p] for p in params]


def _as_tuple(g, wrt):
    return g if isinstance(wrt, tuple) else (g,)


def test_the_issue_broadcast_example_has_the_operand_shape(scheduler):
    def f(x, b):
        return np.sum(np.tanh(x + b))

    x = da.ones((6, 4), chunks=(3, 4)) * 0.5
    b = da.from_array(np.array([.1, .2, .3, .4]), chunks=4)
    g = srcad.grad(f, wrt=1)(x, b)
    assert g.shape == (4,)
    expected = srcad.grad(f, wrt=1)(np.full((6, 4), 0.5), np.array([.1, .2, .3, .4]))
    np.testing.assert_allclose(g.compute(), expected, rtol=1e-12)
    np.testing.assert_allclose(expected, 6 * (1 - np.tanh(0.5 + np.array([.1, .2, .3, .4])) ** 2), rtol=1e-12)


@pytest.mark.parametrize("fn, params, wrt", PROGRAMS, ids=IDS)
def test_gradient_is_lazy_and_computed_once(scheduler, fn, params, wrt):
    args = _arguments(params, lazy=True)
    grads = _as_tuple(srcad.grad(fn, wrt=wrt)(*args), wrt)
    assert scheduler.computations == 0, "the gradient call computed a graph"
    for g, p in zip(grads, wrt if isinstance(wrt, tuple) else (wrt,)):
        assert isinstance(g, da.Array) and g.shape == args[p].shape and g.dtype == np.float64
    values = dask.compute(*grads)  # all gradients together: forward and reverse once
    assert scheduler.computations == 1
    expected = _as_tuple(srcad.grad(fn, wrt=wrt)(*_arguments(params, lazy=False)), wrt)
    for got, want in zip(values, expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, params, wrt", PROGRAMS, ids=IDS)
def test_vjp_and_adjoint_are_lazy(scheduler, fn, params, wrt):
    args = _arguments(params, lazy=True)
    d = srcad.differentiable(fn, wrt=wrt)
    y, pullback = d.vjp(*args)
    first, again = pullback(), pullback(2.0)
    joint = d.adjoint(*args, da.from_array(np.array(3.0)))
    assert scheduler.computations == 0
    for g1, g2, g3 in zip(_as_tuple(first, wrt), _as_tuple(again, wrt), _as_tuple(joint, wrt)):
        a, b, c = dask.compute(g1, g2, g3)
        np.testing.assert_allclose(b, 2 * a, rtol=1e-12)
        np.testing.assert_allclose(c, 3 * a, rtol=1e-12)


@pytest.mark.parametrize("fn, params, wrt", PROGRAMS, ids=IDS)
def test_gradients_match_finite_differences(scheduler, fn, params, wrt):
    # on the NumPy arguments, and on the Dask ones (joint adjoint and pullback called twice)
    check_grads(fn, _arguments(params, lazy=False), wrt=wrt)
    check_grads(fn, _arguments(params, lazy=True), wrt=wrt)


def test_numpy_and_dask_arguments_mixed(scheduler):
    data = _data()
    X = da.from_array(data["X"], chunks=(3, 4))
    g = srcad.grad(matmul_vector)(data["w"], X)  # the weights in NumPy, the data in Dask
    assert scheduler.computations == 0 and isinstance(g, da.Array) and g.shape == (4,)
    np.testing.assert_allclose(g.compute(), srcad.grad(matmul_vector)(data["w"], data["X"]), rtol=1e-12)


def test_numpy_weights_with_dask_data_in_every_mode(scheduler):
    # the cotangent (a number, or None) is placed where the output lives: NumPy adjoints
    # never receive a Dask value in place
    data = _data()
    X, y = da.from_array(data["X"], chunks=(3, 4)), da.from_array(data["y"], chunks=3)
    d = srcad.differentiable(logistic_loss)
    value, g = d.value_and_grad(data["w"], X, y)
    _, pullback = d.vjp(data["w"], X, y)
    twice = pullback(2.0)
    assert scheduler.computations == 0
    expected = srcad.grad(logistic_loss)(data["w"], data["X"], data["y"])
    got, got_twice, got_value = dask.compute(g, twice, value)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got_twice, 2 * expected, rtol=1e-12)
    np.testing.assert_allclose(got_value, logistic_loss(data["w"], data["X"], data["y"]), rtol=1e-12)
    check_grads(logistic_loss, [data["w"], X, y])


def test_the_gradient_for_a_number_is_a_lazy_0d_array(scheduler):
    data = _data()
    g = srcad.grad(scaled)(0.3, da.from_array(data["x"], chunks=(3, 2)))
    assert isinstance(g, da.Array) and g.shape == () and scheduler.computations == 0
    np.testing.assert_allclose(g.compute(), srcad.grad(scaled)(0.3, data["x"]), rtol=1e-12)
    check_grads(scaled, [0.3, da.from_array(data["x"], chunks=(3, 2))])


def test_a_gradient_that_does_not_depend_on_the_data_is_a_dask_array_too(scheduler):
    def linear(x):
        return np.sum(3.0 * x)

    g = srcad.grad(linear)(da.ones((4, 2), chunks=2))
    assert isinstance(g, da.Array) and g.shape == (4, 2) and scheduler.computations == 0
    np.testing.assert_array_equal(g.compute(), np.full((4, 2), 3.0))


def test_compiled_code_is_keyed_by_shape_dtype_and_chunks(scheduler):
    d = srcad.differentiable(elementwise)
    x = _data()["x"]
    d.grad(da.from_array(x, chunks=(3, 4)))
    d.grad(da.from_array(x, chunks=(3, 4)))
    assert len(d._bound) == 1
    d.grad(da.from_array(x, chunks=(2, 2)))
    d.grad(da.from_array(x[:4], chunks=(2, 2)))
    d.grad(da.from_array(x.astype(np.float32), chunks=(2, 2)))
    assert len(d._bound) == 4


def test_refusals_still_hold_for_dask_arrays():
    x = da.ones((3,), chunks=3)
    with pytest.raises(srcad.errors.ArgumentError, match="dtype int64"):
        srcad.grad(lambda x: np.sum(x))(da.ones((3,), dtype=np.int64, chunks=3))
    with pytest.raises(srcad.errors.ArgumentError, match="complex"):
        srcad.grad(lambda x: np.sum(x))(x + 1j)
    unknown = x[x > 0]  # unknown shape: nan in it
    with pytest.raises(srcad.errors.ArgumentError, match="unknown shape"):
        srcad.grad(lambda x: np.sum(x))(unknown)


def test_subclasses_of_ndarray_stay_refused():
    with pytest.raises(srcad.errors.ArgumentError, match="subclass"):
        srcad.grad(lambda x: np.sum(x))(np.ma.ones(3))
    with pytest.warns(PendingDeprecationWarning):
        matrix = np.asmatrix(np.ones((2, 2)))
    with pytest.raises(srcad.errors.ArgumentError, match="subclass"):
        srcad.grad(lambda x: np.sum(x))(matrix)


def test_a_list_of_values_of_unknown_shape_is_not_a_list_of_objects():
    # found here (a Dask argument's shape is unknown to the shape inference), but NumPy's own:
    # np.stack([p, 2 * p]) of a data-dependent p was inferred as shape (2,)
    def f(x):
        p = x[x > 0]
        return np.sum(np.stack([p, 2 * p]) ** 2)

    x = np.random.default_rng(0).normal(size=(5, 3))
    np.testing.assert_allclose(srcad.grad(f)(x), np.where(x > 0, 10 * x, 0.0), rtol=1e-12)
    check_grads(f, [x])


def _loop_over_dask_data(w, X):
    h = X * 1.0
    for _ in range(3):
        h = np.tanh(h * w)  # w's adjoint, summed over the loop, derives from Dask data
    return np.sum(h ** 2)


def test_a_numpy_argument_whose_adjoint_accumulates_dask_values_in_a_loop():
    rng = np.random.default_rng(3)
    w, X_np = rng.normal(size=5) * 0.3, rng.normal(size=(40, 5))
    X = da.from_array(X_np, chunks=(10, 5))
    lazy = srcad.grad(_loop_over_dask_data)(w, X)  # was a NotImplementedError: out= into a NumPy buffer
    np.testing.assert_allclose(np.asarray(lazy), srcad.grad(_loop_over_dask_data)(w, X_np), rtol=1e-12)
    check_grads(_loop_over_dask_data, (w, X_np))
