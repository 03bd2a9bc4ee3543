"""Red team of the day's merges: a user's rule registered for a bound method or a callable
object takes all its parameters too (one left out kept its default after ``__defaults__`` was
rebound: a wrong gradient, no error), and code pasting the method's defaults into the rule is
guarded on them (compiled code kept the old default); ``max``/``min`` over arguments that are tuples (a
TypeError, or a length error in forward mode, from generated code), and the items ``max`` did
not choose from a list get zeros where the cotangent is infinite (0 * inf gave them NaN)."""
import warnings

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.extend import register_jvp, register_vjp
from lang_checks import check_all_modes

X = np.array([0.7, 0.2, 1.1, 0.4])


class Scaler:
    def scaled(self, x, scale=2.0):
        return x * scale

    def __call__(self, x, scale=2.0):
        return x * scale


@pytest.mark.parametrize("register", [register_vjp, register_jvp])
@pytest.mark.parametrize("key", [Scaler().scaled, Scaler()], ids=["bound method", "callable object"])
def test_a_rule_leaving_out_a_parameter_of_a_method_or_callable_object_is_refused(register, key):
    def rule(y, x):
        d[x] += d[y] * 2.0  # noqa: F821 (a template)

    with pytest.raises(SrcadSyntaxError, match=r"takes \(x\) after the result, but the function takes \(x, scale\)"
                                               r".*def rule\(y, x, scale=2.0\)"):
        register(key)(rule)


class Doubler:
    def doubled(self, x, scale=2.0):
        return x * scale

    def __call__(self, x, scale=2.0):
        return x * scale


doubler = Doubler()


@register_vjp(doubler.doubled)
def doubled_vjp(y, x, scale):
    d[x] += d[y] * scale  # noqa: F821 (a template)


@register_vjp(doubler)
def doubler_vjp(y, x, scale):
    d[x] += d[y] * scale  # noqa: F821 (a template)


@pytest.mark.parametrize("method", [Doubler.doubled, Doubler.__call__], ids=["bound method", "callable object"])
def test_a_method_rule_taking_every_parameter_follows_a_rebound_default(method):
    x = np.ones(3)
    call = doubler.doubled if method is Doubler.doubled else doubler
    loss = lambda v: np.sum(call(v))  # noqa: E731 (one function, compiled once, called again)
    np.testing.assert_allclose(srcad.grad(loss)(x), 2.0 * x)
    np.testing.assert_allclose(srcad.grad(lambda v: np.sum(call(v, 4.0)))(x), 4.0 * x)
    method.__defaults__ = (3.0,)
    try:
        np.testing.assert_allclose(srcad.grad(loss)(x), 3.0 * x)
    finally:
        method.__defaults__ = (2.0,)


def max_of_pairs(x):
    m = max((x[0], x[1]), (x[2], x[3]), (x[1], x[0]))
    return m[0] * np.sin(m[1])


def min_of_pairs_with_a_key(x):
    m = min((x[0], x[1]), (x[2], x[3]), key=lambda p: p[0] * p[1])
    return m[0] * m[1] ** 2


@pytest.mark.parametrize("f", [max_of_pairs, min_of_pairs_with_a_key])
def test_max_and_min_of_tuples_given_as_arguments(f):
    check_all_modes(f, (X.copy(),))


@pytest.mark.parametrize("f", [lambda x: np.sqrt(max([x[0], x[1]])), lambda x: np.sqrt(max(x[0], x[1])),
                               lambda x: np.sqrt(max((x[0], 1.0), (x[1], 2.0))[0])],
                         ids=["list", "arguments", "tuple arguments"])
def test_the_items_max_did_not_choose_get_zero_where_the_cotangent_is_infinite(f):
    x = np.array([0.0, -1.0])  # sqrt's derivative at max(...) = 0 is infinite
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(srcad.grad(f)(x), [np.inf, 0.0])
        assert srcad.jvp(f, (x,), (np.array([0.0, 1.0]),))[1] == 0.0
