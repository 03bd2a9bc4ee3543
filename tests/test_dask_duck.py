"""A duck array of our own (NumPy's protocols, no ndarray subclass) goes through generated
adjoints without a single conversion to NumPy: the path CuPy arrays take (they must stay on
their device). Conversions are counted: ``__array__`` and the scalar casts."""
import numpy as np
import pytest

import srcad
from srcad.protocol import protocol_array
from srcad.testing import check_grads


def _unwrap(x):
    if isinstance(x, Duck):
        return x.data
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    if isinstance(x, (np.ndarray, np.generic)):  # NumPy's results come back as ducks, scalars too (as CuPy's)
        return Duck(np.asarray(x))
    if isinstance(x, (list, tuple)):
        return type(x)(_wrap(v) for v in x)
    return x


class Duck(np.lib.mixins.NDArrayOperatorsMixin):
    """An array that computes with NumPy inside but, like a GPU array, counts every time
    someone takes its values out (``np.asarray``, ``float``, ``bool``, ``.item()``...)."""

    conversions = 0

    def __init__(self, data):
        self.data = data

    @classmethod
    def _converted(cls):
        cls.conversions += 1

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    T = property(lambda self: Duck(self.data.T))

    def __array__(self, dtype=None, copy=None):
        self._converted()
        return np.asarray(self.data, dtype)

    def __float__(self):
        self._converted()
        return float(self.data)

    def __int__(self):
        self._converted()
        return int(self.data)

    def __bool__(self):
        self._converted()
        return bool(self.data)

    def __index__(self):
        self._converted()
        return self.data.__index__()

    def item(self, *args):
        self._converted()
        return self.data.item(*args)

    def tolist(self):
        self._converted()
        return self.data.tolist()

    def __len__(self):
        return len(self.data)

    def __iter__(self):
        return (Duck(row) for row in self.data)

    def __getitem__(self, index):
        return _wrap(self.data[_unwrap(index)])

    def __setitem__(self, index, value):
        self.data[_unwrap(index)] = _unwrap(value)

    def copy(self):
        return Duck(self.data.copy())

    def astype(self, dtype):
        return Duck(self.data.astype(dtype))

    def reshape(self, *shape):
        return Duck(self.data.reshape(*shape))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            return NotImplemented
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def __repr__(self):
        return f"Duck({self.data!r})"


def elementwise(x):
    return np.sum(np.tanh(x) * np.exp(-x ** 2) + np.sin(x) / 2.0)


def matmul_and_broadcast(w, X, b):
    return np.sum(np.tanh(X @ w + b) ** 2)


def reductions(x):
    return np.sum(np.mean(x, axis=0) ** 2) + np.sum(np.max(x, axis=1)) + np.mean(x)


def slicing(x):
    return np.sum(x[1:4, ::2] ** 2) + np.sum(x[0] * x[-1]) + np.sum(x.T[2])


def logistic_loss(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w)))


def joined(x):
    return np.sum(np.concatenate([x, x ** 2], axis=1) ** 2) + np.sum(np.stack([x, 2 * x], axis=-1) ** 3)


def statistics(x):
    return np.var(x) + np.sum(np.std(x, axis=0)) + np.sum(np.prod(x, axis=1)) + np.linalg.norm(x)


def contractions(A, B):
    return np.sum(np.einsum("ij,jk->ik", A, B) ** 2) + np.sum(np.cumsum(A, axis=0) * np.where(A > 0, A, 0.1))


rng = np.random.default_rng(1)
DATA = {"x": rng.uniform(0.1, 0.9, (6, 4)), "w": rng.normal(size=4), "X": rng.normal(size=(6, 4)),
        "b": rng.normal(size=1), "y": np.sign(rng.normal(size=6)), "B": rng.normal(size=(4, 3))}
PROGRAMS = [
    (elementwise, ("x",), 0),
    (matmul_and_broadcast, ("w", "X", "b"), (0, 1, 2)),
    (reductions, ("x",), 0),
    (slicing, ("x",), 0),
    (logistic_loss, ("w", "X", "y"), (0, 1)),
    (joined, ("x",), 0),
    (statistics, ("x",), 0),
    (contractions, ("X", "B"), (0, 1)),
]


def test_the_duck_array_is_accepted_by_the_protocol_rule():
    assert protocol_array(Duck(np.ones(2)))
    assert not protocol_array(np.ma.ones(2)) and not protocol_array([1.0]) and not protocol_array(1.0)


@pytest.mark.parametrize("fn, params, wrt", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_no_conversion_through_the_adjoint(fn, params, wrt):
    ducks = [Duck(DATA[p].copy()) for p in params]
    d = srcad.differentiable(fn, wrt=wrt)
    Duck.conversions = 0
    grads = d.grad(*ducks)
    _, pullback = d.vjp(*ducks)
    split = pullback()
    assert Duck.conversions == 0
    grads = grads if isinstance(wrt, tuple) else (grads,)
    split = split if isinstance(wrt, tuple) else (split,)
    expected = srcad.grad(fn, wrt=wrt)(*[DATA[p] for p in params])
    expected = expected if isinstance(wrt, tuple) else (expected,)
    for g, s, want, p in zip(grads, split, expected, wrt if isinstance(wrt, tuple) else (wrt,)):
        assert isinstance(g, Duck) and g.shape == ducks[p].shape
        np.testing.assert_allclose(g.data, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(s.data, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn, params, wrt", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_duck_gradients_match_finite_differences(fn, params, wrt):
    check_grads(fn, [Duck(DATA[p].copy()) for p in params], wrt=wrt)


def test_the_callers_duck_arrays_are_not_changed():
    x = Duck(DATA["x"].copy())
    srcad.grad(slicing)(x)
    np.testing.assert_array_equal(x.data, DATA["x"])
