"""A function defined in the function (``def h``, ``h = lambda ...``) whose name is bound again.

srcad inlines a call ``h(x)`` of such a function by its name. Where the name is bound again
(``h = np.sin``, ``for h in fs``, a comprehension's or nested function's own ``h``), Python's
``h`` at the call may be another function: srcad inlined the local definition anyway, a wrong
value and a wrong gradient, or failed with a bare ``UnboundLocalError``. Now a second binding
in the same scope is refused at its line, and a call inside a scope binding the name itself
is not the local function's (``passes/local_functions.py``)."""
import inspect

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, 0.7])


def cube(t):
    return t ** 3


def line_of(fn, text):
    """The file line of the first line of ``fn``'s source containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def rebound_by_assignment(x):
    def h(t):
        return t * 2.0
    h = np.sin
    return np.sum(h(x))


def rebound_by_loop_target(x):
    def h(t):
        return t * 2.0
    s = 0.0
    for h in (np.sin, np.cos):
        s = s + np.sum(h(x))
    return s


def rebound_by_loop_over_itself(x):
    def h(t):
        return t * 2.0
    for h in [h]:
        pass
    return np.sum(h(x))


def defined_in_loop_then_loop_target(x):
    fs = []
    for k in range(3):
        def h(t):
            return t * k
        fs.append(h)
    s = 0.0
    for h in fs:
        s = s + np.sum(h(x))
    return s


def lambda_rebound_in_branch(x):
    h = lambda t: t * 2.0  # noqa: E731
    if x[0] > 0:
        h = np.sin
    return np.sum(h(x))


def lambda_rebound(x):
    h = lambda t: t * 2.0  # noqa: E731
    h = np.sin
    return np.sum(h(x))


def rebound_to_module_function(x):
    def h(t):
        return t * 2.0
    h = cube
    return np.sum(h(x))


def def_rebound_in_branch(x):
    def h(t):
        return t * 2.0
    if x[0] > 0:
        h = np.sin
    return np.sum(h(x))


def defined_twice_in_loop(x):
    def h(t):
        return t * 2.0
    s = 0.0
    for i in range(2):
        s = s + np.sum(h(x))
        def h(t):
            return np.sin(t)
    return s


def defined_in_both_branches(x):
    if x[0] > 0:
        def act(t):
            return np.tanh(t)
    else:
        def act(t):
            return np.sin(t)
    return np.sum(act(x))


def nested_def_of_the_same_name_in_loop(x):
    def h(t):
        return t * 2.0

    def g(y):
        s = 0.0
        for i in range(2):
            if i == 1:
                s = s + h(y)
            def h(t):
                return np.sin(t)
        return s
    return np.sum(g(x)) + np.sum(h(x))


REBINDINGS = [
    (rebound_by_assignment, "h = np.sin"),
    (rebound_by_loop_target, "for h in (np.sin"),
    (rebound_by_loop_over_itself, "for h in [h]"),
    (defined_in_loop_then_loop_target, "for h in fs"),
    (lambda_rebound_in_branch, "h = np.sin"),
    (lambda_rebound, "h = np.sin"),
    (rebound_to_module_function, "h = cube"),
    (def_rebound_in_branch, "h = np.sin"),
    (defined_twice_in_loop, "return np.sin(t)"),
    (defined_in_both_branches, "return np.sin(t)"),
]


@pytest.mark.parametrize("fn, text", REBINDINGS, ids=[f.__name__ for f, _ in REBINDINGS])
def test_a_second_binding_of_a_local_function_is_refused_at_its_line(fn, text):
    fn(X)  # plain Python runs it
    with pytest.raises(srcad.SrcadSyntaxError, match="and again here, and one of them defines a function") as info:
        srcad.grad(fn)(X)
    line = line_of(fn, text) - (1 if text.startswith("return") else 0)  # a def: its `def` line
    assert info.value.lineno == line
    assert "give the function a name of its own" in str(info.value)


def test_a_nested_function_of_the_same_name_is_refused_at_its_def():
    nested_def_of_the_same_name_in_loop(X)
    with pytest.raises(srcad.SrcadSyntaxError, match="also the name of a function defined around it") as info:
        srcad.grad(nested_def_of_the_same_name_in_loop)(X)
    assert info.value.lineno == line_of(nested_def_of_the_same_name_in_loop, "return np.sin(t)") - 1


def comprehension_target_of_the_same_name(x):
    def h(t):
        return t * 2.0
    ys = [h(x) for h in (np.sin,)]  # inside the comprehension, h is np.sin
    return np.sum(ys[0])


def comprehension_target_of_the_same_name_and_outer_call(x):
    def h(t):
        return t * 2.0
    fs = [h(x) for h in (np.sin,)]
    return np.sum(fs[0]) + np.sum(h(x))


def nested_def_binds_the_name(x):
    def h(t):
        return t * 2.0

    def g(y):
        h = np.sin
        return h(y)
    return np.sum(g(x) + h(x))


SHADOWED = [comprehension_target_of_the_same_name, comprehension_target_of_the_same_name_and_outer_call,
            nested_def_binds_the_name]


@pytest.mark.parametrize("fn", SHADOWED, ids=[f.__name__ for f in SHADOWED])
def test_a_call_where_a_scope_binds_the_name_itself_is_not_the_local_function(fn):
    fn(X)
    with pytest.raises(srcad.SrcadSyntaxError, match="variable of the comprehension or function around this call"):
        srcad.grad(fn)(X)


# ---- controls: each must keep giving Python's value and a gradient matching finite differences


def called_in_a_loop(x):
    def h(t):
        return np.sin(t) * t
    s = 0.0
    for i in range(3):
        s = s + np.sum(h(x * (i + 1)))
    return s


def called_once(x):
    def h(t):
        return np.tanh(t) * 2.0
    return np.sum(h(x))


def lambda_once(x):
    h = lambda t: np.exp(t) * t  # noqa: E731
    return np.sum(h(x))


def comprehension_calls_outer_def(x):
    def h(t):
        return np.cos(t) * t
    ys = [h(v) for v in (x, 2.0 * x)]
    return np.sum(ys[0] * ys[1])


def parameter_of_nested_def_shadows_local_def(x):
    def act(t):
        return t * 2.0

    def layer(y, act):
        return act(y)
    return np.sum(layer(x, np.sin) + act(x))


def parameter_of_lambda_shadows_local_def(x):
    def act(t):
        return t * 2.0
    apply = lambda act, y: act(y)  # noqa: E731
    return np.sum(apply(np.sin, x) + act(x))


def nested_def_calls_a_later_def(x):
    def g(y):
        return h(y)

    def h(t):
        return np.sin(t) * 3.0
    return np.sum(g(x))


def sibling_defs_define_the_same_name(x):
    def g(y):
        def k(t):
            return np.sin(t)
        return k(y)

    def m(y):
        def k(t):
            return np.cos(t)
        return k(y)
    return np.sum(g(x) * m(x))


def lambda_in_loop_reads_the_loop_variable(x):
    s = 0.0
    for k in range(3):
        h = lambda t: t * k  # noqa: E731
        s = s + np.sum(np.sin(h(x)))
    return s


CONTROLS = [called_in_a_loop, called_once, lambda_once, comprehension_calls_outer_def,
            parameter_of_nested_def_shadows_local_def, parameter_of_lambda_shadows_local_def,
            nested_def_calls_a_later_def, sibling_defs_define_the_same_name, lambda_in_loop_reads_the_loop_variable]


@pytest.mark.parametrize("fn", CONTROLS, ids=[f.__name__ for f in CONTROLS])
def test_a_local_function_bound_once_keeps_working(fn):
    value, grad = srcad.value_and_grad(fn)(X)
    assert np.isclose(value, fn(X))
    np.testing.assert_allclose(grad, check_grads(fn, (X,), v=1.0), rtol=1e-10)
    check_jvp(fn, (X,))


def local_alias(x):
    act = np.tanh
    return np.sum(act(x))


def test_a_local_alias_of_a_function_stays_refused_at_its_call():
    with pytest.raises(srcad.SrcadSyntaxError, match="'act' is a local variable") as info:
        srcad.grad(local_alias)(X)
    assert info.value.lineno == line_of(local_alias, "act(x)")


# ---- a helper of the module, inlined where it is called with a function: its own functions are its own


def helper_with_own_def(y, fn):
    def h(t):
        return np.sin(t)
    return h(fn(y))


def helper_with_own_lambda(y, fn):
    g = lambda t: np.sin(t)  # noqa: E731
    return g(fn(y))


def helper_rebinding_its_def(y, fn):
    def h(t):
        return np.sin(t)
    h = np.cos
    return h(fn(y))


def passes_its_def_named_like_the_helpers(x):
    def h(t):
        return 2.0 * t
    return np.sum(helper_with_own_def(x, h) + h(x))


def passes_its_def_named_like_the_helpers_lambda(x):
    def g(t):
        return 2.0 * t
    return np.sum(helper_with_own_lambda(x, g))


def passes_a_function_to_a_helper_with_a_lambda(x):
    return np.sum(helper_with_own_lambda(x, np.cos))


HELPERS = [passes_its_def_named_like_the_helpers, passes_its_def_named_like_the_helpers_lambda,
           passes_a_function_to_a_helper_with_a_lambda]


@pytest.mark.parametrize("fn", HELPERS, ids=[f.__name__ for f in HELPERS])
def test_an_inlined_helper_calls_its_own_function_and_the_one_passed(fn):
    value, grad = srcad.value_and_grad(fn)(X)
    assert np.isclose(value, fn(X))
    np.testing.assert_allclose(grad, check_grads(fn, (X,), v=1.0), rtol=1e-10)


def test_a_helper_rebinding_its_def_is_refused_at_its_line():
    def loss(x):
        return np.sum(helper_rebinding_its_def(x, np.sin))
    loss(X)
    with pytest.raises(srcad.SrcadSyntaxError, match="and again here, and one of them defines a function") as info:
        srcad.grad(loss)(X)
    assert info.value.lineno == line_of(helper_rebinding_its_def, "h = np.cos")


def defined_in_a_branch(x, scale):
    if scale > 0.0:
        def h(t):
            return t * scale
    return np.sum(h(x))


def defined_after_its_call_in_a_loop(x):
    s = 0.0
    for k in range(2):
        if k:
            s = s + np.sum(h(x))
        def h(t):
            return np.sin(t) * k
    return s


def defined_in_a_loop_called_in_it(x):
    for k in range(3):
        def h(t):
            return np.sin(t) + k * t
        x = h(x)
    return np.sum(x)


@pytest.mark.parametrize("fn, args", [(defined_in_a_branch, (X, 2.0)), (defined_after_its_call_in_a_loop, (X,))],
                         ids=["branch", "later_in_loop"])
def test_a_call_its_definition_may_not_precede_is_refused_at_the_call(fn, args):
    # Python raises UnboundLocalError where the definition has not run (scale <= 0; the
    # first pass); srcad inlined it anyway and returned a value
    fn(*args)
    with pytest.raises(srcad.SrcadSyntaxError, match="where its definition .* has not run") as info:
        srcad.grad(fn)(*args)
    assert info.value.lineno == line_of(fn, "np.sum(h(x))")


def test_a_function_defined_in_a_loop_and_called_after_it_there_keeps_working():
    check_grads(defined_in_a_loop_called_in_it, (X,), modes=("rev",))
    check_jvp(defined_in_a_loop_called_in_it, (X,))
