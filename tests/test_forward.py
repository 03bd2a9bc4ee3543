"""Forward mode (srcad.jvp) against central finite differences in random directions."""
import math

import numpy as np
import pytest

import srcad
import srcad.extend
from srcad.pipeline import Options, transform_jvp
from srcad.testing import check_jvp


# ---- straight-line code -------------------------------------------------------------------
def mlp(x, W, b):
    h = np.tanh(W @ x + b)
    return (h ** 2).sum() / np.exp(b).sum()


def broadcasting(x, s):
    return (x * s + s - x / (1.0 + s ** 2)).mean(axis=0)


def elementary(x):
    return np.sqrt(np.abs(x) + 1.0) * np.log(x ** 2 + 2.0) + np.maximum(x, 0.3) + np.where(x > 0, x ** 3, -x)


def builtins_and_methods(x):
    a = abs(x[0]) + float(x[1]) + max(x[0], x[1], 0.5) + min([x[2], x[0]])
    b = sum([x[0] * 2.0, x[1]]) + x.item(1)
    c = sum(list(x)) + sum(reversed(list(x))) + sum(x.tolist()) + sum(tuple(x))
    return a * b + c


@pytest.mark.parametrize("fun, shapes", [
    (mlp, [(3,), (4, 3), (4,)]),
    (broadcasting, [(5, 3), ()]),
    (elementary, [(6,)]),
    (builtins_and_methods, [(3,)]),
])
def test_straight_line_matches_finite_differences(fun, shapes, rng):
    primals = [rng.standard_normal(s) if s else float(rng.standard_normal()) for s in shapes]
    for k in range(len(primals)):  # one argument at a time, then all together
        check_jvp(fun, primals, wrt=k)
    check_jvp(fun, primals, wrt=tuple(range(len(primals))))


def test_pytorch_tutorial_example_one_jvp_gives_the_whole_column():
    def f(x):
        y = np.zeros(2)
        y[0] = -x ** 3
        y[1] = 5 * x
        return y

    y, y_dot = srcad.jvp(f, (1.0,), (1.0,))
    np.testing.assert_allclose(y, [-1.0, 5.0])
    np.testing.assert_allclose(y_dot, [-3.0, 5.0])


# ---- control flow -------------------------------------------------------------------------
def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def branches(x, c):
    y = 2.0  # a constant on one path: its tangent is zero there
    if c > 0:
        y = np.sin(x) * x
    elif c < -1:
        y = np.exp(x)
    return y * x


def early_exit(x, n):
    total = x * 0.0
    for i in range(n):
        if total.sum() > 3.0:
            break
        if i % 2 == 1:
            continue
        total = total + np.cos(x * i) ** 2 + x
    return total


def while_loop(x):
    y = x
    k = 0
    while np.abs(y).sum() < 10.0 and k < 20:
        y = y * 1.5 + np.sin(y)
        k = k + 1
    return y


def loop_assigned_later(x):
    out = 0.0
    for i in range(4):
        if i > 0:
            out = out + prev * x  # noqa: F821  (bound in an earlier iteration)
        prev = np.tanh(x + i)
    return out


def test_loop_matches_finite_differences(rng):
    x = rng.standard_normal(6)
    check_jvp(rosenbrock, (x,), rtol=1e-4)


@pytest.mark.parametrize("c", [1.0, 0.0, -2.0])
def test_every_branch_matches_finite_differences(c, rng):
    x = rng.standard_normal(4)
    check_jvp(branches, (x, c))


@pytest.mark.parametrize("n", [0, 3, 9])
def test_break_and_continue(n, rng):
    x = rng.standard_normal(3) * 0.5
    check_jvp(early_exit, (x, n))


def test_while_loop_and_values_from_earlier_iterations(rng):
    x = rng.standard_normal(3)
    check_jvp(while_loop, (x,))
    check_jvp(loop_assigned_later, (x,))


# ---- containers and element updates -------------------------------------------------------
def element_updates(x, w):
    S = np.zeros((3, 2))
    S[0] = x * w
    S[1, :] = np.sin(x)
    S[2, 1] = 4.0  # a constant into a live tangent: zero there
    S[2, 0] += x.sum()
    return S


def lists_and_stacks(x):
    values = []
    for i in range(4):
        values.append(np.sin(x * (i + 1)))
    values.append(1.0)
    first = values.pop()  # noqa: F841  (pops the constant)
    last = values.pop()
    pair = (last, values[0])
    table = {"a": pair[0] * 2.0, "b": values[1] + pair[1]}
    return table["a"] * table["b"] + sum(values)


def container_argument(params, x):
    W, b = params["W"], params["b"]
    return np.tanh(W @ x + b), [b * 2.0, W.sum()]


def test_element_updates(rng):
    x, w = rng.standard_normal(2), rng.standard_normal(2)
    check_jvp(element_updates, (x, w), wrt=(0, 1))
    check_jvp(element_updates, (x, w), wrt=1)


def test_lists_stacks_tuples_and_dicts(rng):
    x = rng.standard_normal(3)
    check_jvp(lists_and_stacks, (x,))


def test_container_arguments_and_outputs(rng):
    params = {"W": rng.standard_normal((2, 3)), "b": rng.standard_normal(2)}
    x = rng.standard_normal(3)
    y_dot = check_jvp(container_argument, (params, x), wrt=0)
    assert isinstance(y_dot, tuple) and isinstance(y_dot[1], list)


def test_callers_tangent_is_not_changed(rng):
    x = rng.standard_normal(2)
    t = rng.standard_normal(2)
    before = t.copy()

    def g(x):
        x[0] = 3.0  # srcad updates a copy: neither x nor its tangent changes for the caller
        return x * 2.0

    y, y_dot = srcad.jvp(g, (x,), (t,))
    np.testing.assert_array_equal(t, before)
    np.testing.assert_allclose(y_dot, [0.0, 2 * t[1]])


# ---- calls ----------------------------------------------------------------------------------
def softplus_sum(z, k):
    total = 0.0
    for i in range(k):
        total = total + np.log1p(np.exp(z * (i + 1)))
    return total


def calls_user_function(x, w):
    def inner(a):  # inlined helper
        return a * w

    return softplus_sum(inner(x), 3) + softplus_sum(w, 2) * 0.5


def test_calls_of_the_users_functions(rng):
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    check_jvp(calls_user_function, (x, w), wrt=0)
    check_jvp(calls_user_function, (x, w), wrt=1)


def test_integer_argument_is_refused_and_constant_output():
    def f(n, x):
        return n * x ** 2, 7.0

    with pytest.raises(srcad.ArgumentError, match="integer .* pass 3.0"):
        srcad.jvp(f, (3, 2.0), (1.0, 0.5))  # a tangent for an integer: pass a float (as JAX asks)
    y, (d_first, d_const) = srcad.jvp(f, (3.0, 2.0), (1.0, 0.5))
    assert y == (12.0, 7.0)
    assert d_first == pytest.approx(4.0 + 6.0)
    assert d_const == 0.0
    y, (d_first, _) = srcad.jvp(f, (3, 2.0), (None, 0.5))  # an integer held constant is fine
    assert d_first == pytest.approx(6.0)


class Opaque:
    def __call__(self, x):
        return x * 2


opaque = np.frompyfunc(lambda v: v * 2, 1, 1)  # a ufunc made from a lambda: no source, no rule


def calls_opaque(x):
    y = np.sin(x)
    return opaque(y)


def test_missing_jvp_rule_is_a_precise_error():
    with pytest.raises(srcad.NoRuleError) as info:
        srcad.jvp(calls_opaque, (1.0,), (1.0,))
    message = str(info.value)
    assert "test_forward.py:" in message and "opaque(y)" in message
    assert "register_jvp" in message


def scatters_into(x):
    S = np.zeros(3)
    np.add.at(S, [0, 0], x)
    return S


def copies_into(x):
    S = np.zeros(3)
    np.copyto(S, x)  # the store S[...] = x
    return S


def puts_into(x):
    S = np.zeros(3)
    np.put(S, [0, 2], x)
    return S


def test_add_at_adds_tangents_and_other_effect_calls_are_errors():
    y, y_dot = srcad.jvp(scatters_into, (1.5,), (1.0,))
    np.testing.assert_array_equal(y, [3.0, 0.0, 0.0])
    np.testing.assert_array_equal(y_dot, [2.0, 0.0, 0.0])
    y, y_dot = srcad.jvp(copies_into, (1.5,), (2.0,))
    np.testing.assert_array_equal(y, [1.5, 1.5, 1.5])
    np.testing.assert_array_equal(y_dot, [2.0, 2.0, 2.0])
    with pytest.raises(srcad.SrcadError):
        srcad.jvp(puts_into, (1.0,), (1.0,))


def test_generated_source_is_readable_and_materializes_zeros_where_paths_join():
    source = transform_jvp(branches, Options(wrt=("x",))).source
    assert source.startswith("def branches_jvp(x, c, x_dot):")
    assert "y_dot = zeros_like(y)" in source
    text = transform_jvp(rosenbrock, Options(wrt=(0,))).source
    assert "s_dot = zeros_like(s)" in text and "stack" not in text  # nothing saved in forward mode


def test_tangents_must_match_primals():
    with pytest.raises(ValueError):
        srcad.jvp(rosenbrock, (np.ones(3),), ())


def test_math_functions():
    def f(x):
        return math.sin(x) * math.exp(x) + math.log(x, 2.0) + math.sqrt(x)

    check_jvp(f, (1.3,))


def halved_square(x):
    return x ** 2 if np.sum(x) > 0 else x * 0.0


@srcad.extend.register_jvp(halved_square)
def _halved_square_jvp(y, x):
    if np.sum(x) > 0:  # decided at run time: the other path's tangent is zeros
        t[y] += 2 * x * t[x]


def calls_rule_with_branch(x):
    z = halved_square(x)
    return z * 3.0


@pytest.mark.parametrize("x", [[1.0, 2.0], [-1.0, -2.0]])
def test_rule_with_a_run_time_branch(x):
    x = np.array(x)
    y, y_dot = srcad.jvp(calls_rule_with_branch, (x,), (np.ones(2),))
    np.testing.assert_allclose(y_dot, 6 * x if x.sum() > 0 else np.zeros(2))


# ---- srcad.testing.check_jvp itself --------------------------------------------------------
slightly_wrong = Opaque()  # doubles, with a rule that says 2.001


@srcad.extend.register_jvp(slightly_wrong)
def _slightly_wrong_jvp(y, x):
    t[y] += t[x] * 2.001  # noqa: F821


def calls_slightly_wrong(x):
    return slightly_wrong(x) + x


def test_check_jvp_reports_a_wrong_tangent_with_both_numbers():
    with pytest.raises(AssertionError, match=r"tangent 3\.001 but finite differences give (3\.0|2\.99)"):
        check_jvp(calls_slightly_wrong, (np.array([0.5, -1.0]),), direction=np.ones(2))


def test_check_jvp_wants_a_tangent_shaped_like_the_result(monkeypatch):
    def summed_jvp(fun, primals, tangents):  # a forward mode that loses the result's shape
        return fun(*primals), np.sum(tangents[0]) * 3.0

    monkeypatch.setattr(srcad.derivatives, "jvp", summed_jvp)
    with pytest.raises(AssertionError, match=r"tangent shape \(\) != result shape \(2,\)"):
        check_jvp(calls_slightly_wrong, (np.array([0.5, -1.0]),))


def linear(x, A):
    return A @ x


def test_check_jvp_along_a_given_direction_of_a_named_argument(rng):
    x, A, U = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    np.testing.assert_allclose(check_jvp(linear, (x, A), wrt="A", direction=U), U @ x)
    x_dot, A_dot = rng.standard_normal(3), rng.standard_normal((2, 3))
    np.testing.assert_allclose(check_jvp(linear, (x, A), wrt=(0, 1), direction=(x_dot, A_dot)), A @ x_dot + A_dot @ x)


def test_a_library_function_with_a_rule_directly():
    y, y_dot = srcad.jvp(np.sin, (1.0,), (2.0,))
    assert y == np.sin(1.0) and y_dot == 2.0 * np.cos(1.0)


def test_a_tangent_larger_than_its_output_is_an_error():
    from srcad.runtime import finish_tangent

    np.testing.assert_array_equal(finish_tangent(0.0, np.ones(3)), np.zeros(3))
    with pytest.raises(ValueError, match="tangent of shape"):
        finish_tangent(np.ones((2, 2)), np.ones(2))
