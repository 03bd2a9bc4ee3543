"""A rule registered for a function of yours (register_vjp, register_jvp, register_partials,
register_elementwise) takes all of its parameters, as custom_vjp's defvjp does: a rule that
left one out assumed its default, also after f.__defaults__ was rebound (a wrong gradient, no error)."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.extend import register_elementwise, register_jvp, register_partials, register_vjp
from srcad.registry import check_parameters


def scaled(x, scale=2.0):
    return x * scale


def loss(x):
    return np.sum(scaled(x))


@pytest.mark.parametrize("register", [register_vjp, register_jvp])
def test_a_rule_leaving_out_a_parameter_of_your_function_is_refused_where_it_is_registered(register):
    def rule(y, x):
        d[x] += d[y] * 2.0  # noqa: F821 (a template)

    with pytest.raises(SrcadSyntaxError, match=r"takes \(x\) after the result, but the function takes \(x, scale\)"
                                               r".*def rule\(y, x, scale=2.0\)"):
        register(scaled)(rule)


def test_partials_and_elementwise_rules_of_your_function_take_all_its_parameters_too():
    with pytest.raises(SrcadSyntaxError, match="but the function takes"):
        register_partials(scaled)(lambda y, x: {x: 2.0})
    with pytest.raises(SrcadSyntaxError, match="but the function takes"):
        register_elementwise(scaled)(lambda y, x: 2.0)


def doubled(x, scale=2.0):
    return x * scale


def doubled_loss(x):
    return np.sum(doubled(x))


@register_vjp(doubled)
def doubled_vjp(y, x, scale):
    d[x] += d[y] * scale  # noqa: F821 (a template)


def test_a_rule_taking_every_parameter_follows_a_rebound_default():
    x = np.ones(3)
    np.testing.assert_allclose(srcad.grad(doubled_loss)(x), 2.0 * x)
    doubled.__defaults__ = (3.0,)
    try:
        np.testing.assert_allclose(srcad.grad(doubled_loss)(x), 3.0 * x)
    finally:
        doubled.__defaults__ = (2.0,)


def test_a_rule_for_an_installed_library_function_may_leave_out_its_options():
    import scipy.special

    def rule(y, a):
        d[a] += d[y] * np.exp(a - y)  # noqa: F821 (a template)

    check_parameters(scipy.special.logsumexp, rule)  # no error (a call passing axis= is refused at the call)
