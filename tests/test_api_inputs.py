"""What srcad refuses as arguments and cotangents (an allowlist, checked cheaply), and a
pullback that keeps the values its forward pass saw. Values are checked against finite
differences (``check_grads``)."""
import numpy as np
import pytest

import srcad
from srcad import source
from srcad.testing import check_grads

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

X = np.linspace(0.2, 0.9, 3)
M = np.arange(9.0).reshape(3, 3) / 10


def sum_of_squares(x):
    return np.sum(x * x)


def scaled_sum(x, c):
    return np.sum(x * c)


def with_dict(p):
    return np.sum(p["a"] * p["b"])


class Tagged(np.ndarray):
    pass


SUBCLASSES = [
    ("matrix", lambda: np.matrix(M)),
    ("masked", lambda: np.ma.masked_array(X, mask=[False, True, False])),
    ("custom", lambda: X.view(Tagged)),
    ("recarray", lambda: np.rec.fromarrays([X], names="a")),
]


@pytest.mark.parametrize("name, make", SUBCLASSES, ids=[n for n, _ in SUBCLASSES])
def test_ndarray_subclasses_are_refused_anywhere(name, make):
    value = make()
    with pytest.raises(srcad.ArgumentError, match="subclass of np.ndarray"):
        srcad.grad(sum_of_squares)(value)
    with pytest.raises(srcad.ArgumentError, match="argument 'c' .*subclass of np.ndarray"):
        srcad.grad(scaled_sum)(np.ones(np.shape(value)), value)  # held constant: refused too
    with pytest.raises(srcad.ArgumentError, match="dict holding .*subclass of np.ndarray"):
        srcad.grad(with_dict)({"a": np.ones(np.shape(value)), "b": value})
    with pytest.raises(srcad.ArgumentError, match="subclass of np.ndarray"):
        srcad.vjp(sum_of_squares, value)
    with pytest.raises(srcad.ArgumentError, match="subclass of np.ndarray"):
        srcad.jvp(sum_of_squares, (value,), (np.ones(np.shape(value)),))


def test_a_subclass_after_plain_arrays_is_still_refused():
    g = srcad.grad(sum_of_squares)
    np.testing.assert_allclose(g(M), check_grads(sum_of_squares, (M,), v=1.0))  # compiled for (3, 3) float64
    with pytest.raises(srcad.ArgumentError, match="numpy.matrix"):
        g(np.matrix(M))  # the same shape and dtype


@pytest.mark.parametrize("value", [X + 1j, 1 + 2j, np.complex64(1 + 1j)], ids=["array", "complex", "complex64"])
def test_complex_arguments_are_refused(value):
    with pytest.raises(srcad.ArgumentError, match="real arrays only"):
        srcad.grad(sum_of_squares)(value)
    with pytest.raises(srcad.ArgumentError, match="argument 'c' is a complex"):
        srcad.grad(scaled_sum)(X, value)
    with pytest.raises(srcad.ArgumentError, match="real arrays only"):
        srcad.jvp(scaled_sum, (X, value), (X, None))


def vector(x):
    return np.sin(x) * 2.0


def doubled(x):
    return x + x


def pair(x):
    return np.sin(x), x * 2.0


@pytest.mark.parametrize("f", [vector, doubled])
def test_a_list_cotangent_for_an_array_output_is_refused(f):
    d = srcad.differentiable(f)
    with pytest.raises(srcad.CotangentError, match="cotangent v is a list; pass an array"):
        d.adjoint(X, [1.0, 2.0, 3.0])
    _, pullback = d.vjp(X)
    with pytest.raises(srcad.CotangentError, match="cotangent v is a list; pass an array"):
        pullback([1.0, 2.0, 3.0])
    with pytest.raises(srcad.CotangentError, match="cotangent v is a tuple"):
        pullback((1.0, 2.0, 3.0))


def test_containers_of_cotangents_for_container_outputs():
    v = (np.array([1.0, -1.0, 0.5]), np.array([0.25, 2.0, -3.0]))
    reference = check_grads(pair, (X,), v=v)
    np.testing.assert_allclose(srcad.differentiable(pair).adjoint(X, list(v)), reference)
    with pytest.raises(srcad.CotangentError, match="is a list"):
        srcad.differentiable(pair).adjoint(X, (v[0], [0.25, 2.0, -3.0]))


@pytest.mark.parametrize("v, what", [
    (np.array(["a", "b", "c"]), "dtype <U1"),
    (np.array([1, 2, 3], dtype=object), "dtype object"),
    (np.array([True, False, True]), "dtype bool"),
    (X + 0j, "real arrays only"),
    (X.view(Tagged), "ndarray subclass"),
    ("abc", "a str"),
], ids=["str", "object", "bool", "complex", "matrix", "python-str"])
def test_cotangents_of_the_wrong_kind_are_refused(v, what):
    d = srcad.differentiable(vector)
    with pytest.raises(srcad.CotangentError, match=what):
        d.adjoint(X, v)
    _, pullback = d.vjp(X)
    with pytest.raises(srcad.CotangentError, match=what):
        pullback(v)


def test_an_integer_cotangent_is_converted_to_float():
    v = np.array([1, -2, 3])
    reference = check_grads(vector, (X,), v=v.astype(float))
    d = srcad.differentiable(vector)
    np.testing.assert_allclose(d.adjoint(X, v), reference)
    np.testing.assert_allclose(d.vjp(X)[1](v), reference)
    np.testing.assert_allclose(srcad.differentiable(sum_of_squares).adjoint(X, 2), 2 * 2 * X)


def test_integer_tangents_are_converted_and_complex_ones_refused():
    y, t = srcad.jvp(vector, (X,), (np.array([1, 0, 2]),))
    np.testing.assert_allclose(t, 2.0 * np.cos(X) * [1, 0, 2])
    with pytest.raises(srcad.CotangentError, match="tangent is an array of dtype complex128"):
        srcad.jvp(vector, (X,), (X + 1j,))


# ---- a pullback computes at the values its forward pass saw ------------------------------


def sines(x):
    return np.sum(np.sin(x))


def product(x, y):
    return np.sum(np.sin(x) * y)


def tail_view(x):
    h = x[1:]
    return np.sum(np.exp(h) * x[:-1])


def dict_product(p):
    return np.sum(np.sin(p["a"]) * p["b"])


def list_product(ws):
    return np.sum(np.sin(ws[0]) * ws[1])


def _mutate(x):
    if isinstance(x, dict):
        for v in x.values():
            _mutate(v)
    elif isinstance(x, list):
        for v in x:
            _mutate(v)
        x.append(np.zeros(3))
    else:
        x[...] = 0.5


@pytest.mark.parametrize("f, make, wrt", [
    (sines, lambda: (X.copy(),), 0),
    (product, lambda: (X.copy(), X[::-1].copy()), (0, 1)),
    (tail_view, lambda: (np.linspace(0.1, 0.7, 4),), 0),
    (dict_product, lambda: ({"a": X.copy(), "b": X[::-1].copy()},), 0),
    (list_product, lambda: ([X.copy(), X[::-1].copy()],), 0),
], ids=["sin", "product", "view", "dict", "list"])
def test_pullback_ignores_changes_to_the_arguments_after_the_forward_pass(f, make, wrt):
    reference = check_grads(f, make(), wrt=wrt, v=1.0)  # finite differences at the original values
    for vjp in (lambda args: srcad.vjp(f, *args, wrt=wrt), lambda args: srcad.differentiable(f, wrt=wrt).vjp(*args)):
        args = make()
        y, pullback = vjp(args)
        for a in args:
            _mutate(a)  # in place, after the forward pass
        for _ in range(2):
            got = pullback(1.0)
            for g, r in zip(got if isinstance(wrt, tuple) else (got,), reference if isinstance(wrt, tuple) else (reference,)):
                if isinstance(r, dict):
                    for k in r:
                        np.testing.assert_allclose(g[k], r[k])
                elif isinstance(r, list):
                    assert len(g) == len(r)
                    for gi, ri in zip(g, r):
                        np.testing.assert_allclose(gi, ri)
                else:
                    np.testing.assert_allclose(g, r)


def test_vjp_does_not_mutate_or_alias_the_callers_arrays():
    x = X.copy()
    y, pullback = srcad.vjp(lambda a: a * 1.0, x)
    pullback(np.ones(3))
    np.testing.assert_array_equal(x, X)


# ---- lambdas whose source cannot be told apart -------------------------------------------

twins = (lambda t: t * 2.0, lambda t: t * 3.0)  # noqa: E731


def test_lambdas_on_one_line_are_told_apart_by_position():
    if not hasattr(twins[0].__code__, "co_positions"):  # Python 3.10: no columns, look-alikes are refused
        with pytest.raises(srcad.SourceUnavailableError, match="several lambdas on the line"):
            srcad.grad(twins[0])(X)
        return
    np.testing.assert_allclose(check_grads(twins[0], (X,), v=np.ones(3)), 2.0 * np.ones(3))
    np.testing.assert_allclose(check_grads(twins[1], (X,), v=np.ones(3)), 3.0 * np.ones(3))


def test_lambdas_without_positions_that_look_alike_are_refused(monkeypatch):
    monkeypatch.setattr(source, "_code_span", lambda code: None)  # as under python -X no_debug_ranges
    with pytest.raises(srcad.SourceUnavailableError, match="several lambdas on the line"):
        source.capture(twins[1])
