"""False refusals the last probes found, now read, checked in every mode against central finite
differences with inputs and globals unchanged: a product ``S.T.dot(x)`` of a transpose (or
conversion) of a global sparse matrix, ``S.dot(y)`` of a computed ``y`` (read before
``check_aliasing``, which cannot read the method ``dot``: ``passes.sparse_operands``); the shape of a transpose of
one in arithmetic (``passes.outside_values``: the shape is checked, not the matrix); a bound
method kept as a value, ``APPLY = H.apply``, called, given as a helper's default or argument,
or held by a dispatch table (``passes.stored_methods``), the object it holds read when the code
runs."""
import numpy as np
import pytest
import scipy.sparse as sp

import srcad
from srcad.errors import UnsupportedCaseError
from srcad.testing import check_grads

import lang_checks

G = sp.random(5, 4, density=0.5, random_state=3, format="csr")
G_DENSE = G.toarray()
X4 = np.array([0.3, -0.7, 1.1, 0.4])
X5 = np.array([0.2, -0.5, 0.9, 1.3, -0.1])


def check_unchanged(f, *args):
    lang_checks.check_unchanged(f, *args)
    np.testing.assert_array_equal(G.toarray(), G_DENSE)


def transposed_dot(x):
    return np.sum(np.sin(G.T.dot(x)))


def twice_transposed_dot(x):
    return np.sum(np.sin(G.T.T.dot(x)) ** 2)


def transposed_converted_dot(x):
    return np.sum(np.tanh(G.T.tocsr().dot(x)) ** 2)


def dot_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(G.T.dot(x * i)))
    return s


def dot_in_a_branch(x):
    if x[0] > 0:
        y = G.T.dot(x)
    else:
        y = G.T.dot(-x)
    return np.sum(y ** 2)


def transposed_product_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(G.T @ (x * i))) + np.sum(np.cos((x[:4] * i) @ G.T.tocsr()))
    return s


def dot_of_a_computed_operand(x):
    y = x * 2.0
    return np.sum(np.sin(G.dot(y)) + G.dot(x ** 2))


@pytest.mark.parametrize("f, x", [(transposed_dot, X5), (twice_transposed_dot, X4), (transposed_converted_dot, X5),
                                  (dot_in_a_loop, X5), (dot_in_a_branch, X5), (dot_of_a_computed_operand, X4),
                                  (transposed_product_in_a_loop, X5)])
def test_dot_of_a_transposed_sparse_global(f, x):
    check_unchanged(f, x)
    assert np.isclose(srcad.value_and_grad(f)(x)[0], f(x))


def times_transposed_rows(x):
    return np.sum(x ** 2) * G.T.shape[0] + G.shape[1]


def unpacked_transposed_shape(x):
    m, n = G.T.shape
    return np.sum(np.sin(x)) * m + n * x[0]


def transposed_shape_in_range(x):
    s = 0.0
    for i in range(G.T.shape[0] - 1):
        s = s + x[i] * x[i + 1] * G.T.shape[1]
    return s


def transposed_ndim_and_size(x):
    return np.sum(x) * G.T.ndim + G.T.size * x[1]


@pytest.mark.parametrize("f", [times_transposed_rows, unpacked_transposed_shape, transposed_shape_in_range,
                               transposed_ndim_and_size])
def test_shape_of_a_transposed_sparse_global(f):
    check_unchanged(f, X4)


class Box:
    pass


class MatrixShaped:
    shape = (np.matrix([[2.0]]),)  # (not integers: the shape itself is checked)


BOX = Box()
BOX.held = MatrixShaped()


def odd_shape(x):
    return np.sum(x) * BOX.held.shape[0]


def test_a_shape_that_is_no_number_is_still_refused():
    with pytest.raises(UnsupportedCaseError, match="BOX.held.shape"):
        srcad.grad(odd_shape)(X4)


class Layer:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return np.tanh(self.w * x)

    def step(self, x):
        return x + 0.1 * np.sin(self.w * x) * self.scale()

    def scale(self):
        return 2.0

    @classmethod
    def doubled(cls, x):
        return cls.factor() * x ** 2

    @classmethod
    def factor(cls):
        return 3.0


class Squared(Layer):
    def apply(self, x):
        return self.w * x ** 2


W3 = np.array([1.0, 2.0, 0.5, -0.3])
H = Layer(W3.copy())
MODEL = Layer(np.array([0.3, -1.0, 2.0, 0.7]))
APPLY = H.apply
STEP = MODEL.step
DOUBLED = Layer.doubled


def call_alias(x):
    return np.sum(APPLY(x) * STEP(x))


def call_alias_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(APPLY(x + i))
    return s


def call_class_method_alias(x):
    return np.sum(DOUBLED(x))


def stepped(x, step=STEP):
    return step(step(x))


def call_with_default(x):
    return np.sum(stepped(x))


def applied(g, x):
    return g(x) * x


def call_passing_alias(x):
    return np.sum(applied(APPLY, x))


@pytest.mark.parametrize("f", [call_alias, call_alias_in_a_loop, call_class_method_alias, call_with_default,
                               call_passing_alias])
def test_bound_method_kept_at_module_level(f):
    w = H.w.copy()
    check_unchanged(f, X4)
    np.testing.assert_array_equal(H.w, w)


def alias_only(x):
    return np.sum(APPLY(x))


def test_bound_method_reads_its_object_when_run():
    global APPLY
    gradient = srcad.grad(alias_only)
    try:
        for held in (Layer(np.array([0.5, 1.0, -2.0, 1.5])), Squared(np.array([1.0, 2.0, 3.0, 4.0])), H):
            APPLY = held.apply
            np.testing.assert_allclose(gradient(X4), check_grads(alias_only, (X4,), v=1.0), rtol=1e-12)
        H.w = np.array([3.0, -1.0, 0.2, 0.1])  # an attribute rebound: read when the code runs
        np.testing.assert_allclose(gradient(X4), (1 - np.tanh(H.w * X4) ** 2) * H.w)
        check_grads(alias_only, (X4,))
    finally:
        APPLY, H.w = H.apply, W3.copy()


TABLE = {"apply": H.apply, "step": MODEL.step, "sin": np.sin}
LAYERS = [H.apply, MODEL.step]


def call_table_item(x, key):
    return np.sum(TABLE[key](x) * x)


def call_bound_table_item(x, key):
    fn = TABLE[key]
    return np.sum(fn(x) * fn(x))


def call_list_items(x):
    return np.sum(LAYERS[0](x) + LAYERS[-1](x) ** 2)


@pytest.mark.parametrize("f, args", [(call_table_item, (X4, "apply")), (call_table_item, (X4, "step")),
                                     (call_table_item, (X4, "sin")), (call_bound_table_item, (X4, "step")),
                                     (call_list_items, (X4,))])
def test_bound_methods_in_dispatch_tables(f, args):
    check_unchanged(f, *args)


def test_dispatch_table_of_bound_methods_changed_between_calls():
    gradient = srcad.grad(call_table_item)
    gradient(X4, "apply")
    TABLE["apply"] = Squared(np.array([1.0, 2.0, 3.0, 4.0])).apply  # not the method the code was made for
    try:
        with pytest.raises(Exception, match="TABLE"):
            gradient(X4, "apply")
    finally:
        TABLE["apply"] = H.apply
