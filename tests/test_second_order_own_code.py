"""srcad differentiating code it generated (second order) or code a user wrote with a
string literal over several lines: the text of a function moved left or right (a nested
function read back, a derivative placed inside its factory) keeps its strings as they are,
and what srcad knows of the values its own code makes (a copy of a number is that number; a
reduction's adjoint shares no memory with the array it reads the shape of) is not lost when
that code is read again. Each checked against finite differences, first and second order."""
import numpy as np

import srcad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order

X = np.array([0.3, -0.5, 0.8, 1.1])
M34 = np.random.default_rng(3).normal(size=(3, 4))


def _check_all(f, args, wrt=0):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)
    check_second_order(f, args, wrt=wrt)


# a string over several lines, long enough to be written back as one: its length is in the value
def long_text_scale(x):
    label = """a label long enough that the generated code writes it over several lines, as the user did
    with an indented second line"""
    return np.sum(x ** 3) * len(label)


def test_a_string_over_several_lines_keeps_its_value():
    value, gradient = srcad.value_and_grad(long_text_scale)(X)
    assert value == long_text_scale(X)
    np.testing.assert_allclose(gradient, 3 * X ** 2 * long_text_scale(np.ones(1)))
    _check_all(long_text_scale, (X,))


def _make_nested():
    def nested_with_docstring(x):
        """A nested function whose docstring goes on
        over a second, indented line."""
        return np.sum(np.sin(x) * x ** 2)
    return nested_with_docstring


nested_with_docstring = _make_nested()


class Model:
    def __init__(self, scale):
        self.scale = scale

    def energy(self, x):
        """A method whose docstring goes on
        over a second, indented line."""
        return self.scale * np.sum(np.cos(x) * x ** 2)


def test_a_nested_function_with_a_docstring_over_several_lines():
    _check_all(nested_with_docstring, (X,))


def test_a_method_with_a_docstring_over_several_lines():
    _check_all(Model(1.5).energy, (X,))


def test_source_given_with_a_string_over_several_lines():
    """``srcad.differentiable(fn, source=text)`` of a closure: the text is dedented and put inside
    a def binding its free variables, its string left as it is."""
    namespace = {"np": np}
    exec('def outer(k):\n    def f(x):\n        s = """ab\n  cd"""\n        return np.sum(x ** 2) * len(s) * k\n'
         '    return f\n', namespace)
    f = srcad.differentiable(namespace["outer"](2.0),
                             source='    def f(x):\n        s = """ab\n  cd"""\n        return np.sum(x ** 2) * len(s) * k\n')
    np.testing.assert_allclose(srcad.grad(f)(X), 2 * X * 7 * 2.0)


# a long expression of a constant argument: the derivative checks that it is real, with a
# message quoting it over several lines, which the second order reads back
def long_expression_of_a_constant(x, c):
    k = np.log1p(x.reshape((4, 3)) ** 2) - (np.where(np.mean(c) > 0.13, 0.96, np.prod(0.5 + 0.2 * c)) * np.ones((4, 3))).sum(axis=0, keepdims=True)
    return np.sum(k * x.reshape((4, 3)))


def test_second_order_of_a_derivative_quoting_a_long_expression():
    _check_all(long_expression_of_a_constant, (np.linspace(0.2, 1.3, 12), np.linspace(-1.0, 1.0, 5)))


# a helper of yours updating its parameter (a Python number, rebound) in place: the derivative
# copies the number before the call, and that copy is the number when it is read again
def _powers(p):
    p *= np.tanh(p)
    return np.square(np.linspace(0.5, 1.0, 4) * p)


def number_through_a_helper(a, s):
    t = _powers(s)
    return np.sum(t * a ** 2) * s


def test_second_order_with_a_number_a_helper_updates():
    _check_all(number_through_a_helper, (X, 0.7), wrt=0)


def test_second_order_with_a_number_a_helper_updates_differentiated():
    _check_all(number_through_a_helper, (X, 0.7), wrt=1)


# a reduction with keepdims beside a slice of the same array: its adjoint adds into a buffer
# that a slice store updates, which must not be taken to share the argument's memory
def keepdims_beside_a_slice(r):
    r = r + np.where(r[:, 1:2] > -0.25, np.minimum(r.sum(axis=1, keepdims=True), r[:, 1:2]),
                     np.max(r, axis=1, keepdims=True))
    return np.sum(r ** 3)


def test_second_order_of_a_reduction_beside_a_slice():
    _check_all(keepdims_beside_a_slice, (M34,))
