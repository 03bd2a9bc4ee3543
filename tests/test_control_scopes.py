"""Inlined scopes (comprehensions, local ``def`` helpers, lambdas) never capture or clobber
the caller's names.

Regression tests of issue 9: a comprehension variable leaked into the function when the
comprehension was inlined. Every function here reuses the caller's names inside the inlined
scope; each is checked against finite differences in reverse mode (joint adjoint, and the
pullback called twice) and in forward mode.
"""
import numpy as np
import pytest

from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(5)


def vec(*shape):
    return rng.uniform(0.2, 1.0, shape)


def comprehension_variable_shadows_local(y):
    e = y[0] * 2.0
    pieces = [e * 3.0 for e in y]
    return np.sum(e * e) + np.sum(pieces[1])


def comprehension_variable_shadows_parameter(x, y):
    doubled = [x * 2.0 for x in y]
    return np.sum(x * doubled[0]) + np.sum(x)


def nested_comprehensions_reuse_a_name(y):
    e = np.sin(y[1])
    grid = [sum([np.sin(e) for e in y * e]) * e for e in y]  # y * e: the outer e
    return sum(grid) + e


def generator_and_conditions_reuse_names(y):
    i = 1
    total = sum(np.sin(y[i]) * i for i in range(len(y)) if i != 2)
    return total + y[i] * 3.0


def comprehension_second_iterable_is_inner(X):
    row = X[0]
    flat = [v * 2.0 for row in X for v in row]
    return sum(flat) + np.sum(row)


def helper_locals_collide(x):
    t = x * 2.0
    s = 1.0

    def h(v):
        t = v * 3.0
        s = t + 1.0
        return s * t
    a = h(x[0])
    b = h(t)
    return np.sum(a * t * s) + np.sum(b)


def helper_reads_caller_name_at_call_time(x):
    w = 2.0

    def scaled(v):
        return v * w
    a = scaled(x)
    w = x[0] * 3.0
    b = scaled(x)
    return np.sum(a * b)


def lambda_parameter_collides(x):
    t = np.cos(x)
    sq = lambda t: t * t  # noqa: E731
    return np.sum(sq(x) + t) + np.sum(sq(t))


def helper_comprehension_and_loop_collide(x):
    i = 2
    v = x[1]

    def mix(v):
        parts = [v * i for i in range(3)]
        for i in range(2):
            v = v + parts[i]
        return v
    out = mix(x) + mix(v)
    return np.sum(out) * i + np.sum(v)


def helper_called_in_loop_with_loop_names(x):
    acc = 0.0

    def step(k):
        acc = 0.5
        for j in range(2):
            acc = acc + x[k] * j
        return acc
    for k in range(3):
        acc = acc + step(k) * x[k]
    return acc


def nested_helpers_shadow(x):
    def outer(v):
        def inner(v):
            return v * 2.0
        w = inner(v) + v
        return w * inner(w)
    w = x * 0.5
    return np.sum(outer(x) * w)


def dict_comprehension_scope(x, d):
    k = "b"
    v = x * 2.0
    scaled = {k: v * x for k, v in d.items() if k != "skip"}
    squares = {name: np.sum(scaled[name] ** 2) for name in scaled}
    return sum([squares[name] for name in squares]) + np.sum(d[k] * v)


def defaults_are_evaluated_where_defined(x):
    scale = x[0] * 2.0

    def h(v, s=scale, t=np.sin(x[1])):
        return v * s + t
    fixed = lambda v, s=scale: v * s  # noqa: E731
    scale = x[2] * 5.0
    return np.sum(h(x) + fixed(x) * scale)


def arguments_are_evaluated_in_call_order(x):
    stack = [x * 1.0, np.sin(x), x ** 2]

    def h(a, b):
        return a * 3.0 + b
    first = h(b=stack.pop(), a=stack.pop())
    return np.sum(first * stack.pop())


@pytest.mark.parametrize("f,args,wrt", [
    (arguments_are_evaluated_in_call_order, (vec(3),), 0),
    (defaults_are_evaluated_where_defined, (vec(3),), 0),
    (dict_comprehension_scope, (vec(3), {"a": vec(3), "b": vec(3), "skip": vec(3)}), (0, 1)),
    (comprehension_variable_shadows_local, (vec(3),), 0),
    (comprehension_variable_shadows_parameter, (vec(3), vec(2, 3)), (0, 1)),
    (nested_comprehensions_reuse_a_name, (vec(3),), 0),
    (generator_and_conditions_reuse_names, (vec(4),), 0),
    (comprehension_second_iterable_is_inner, (vec(3, 2),), 0),
    (helper_locals_collide, (vec(3),), 0),
    (helper_reads_caller_name_at_call_time, (vec(3),), 0),
    (lambda_parameter_collides, (vec(3),), 0),
    (helper_comprehension_and_loop_collide, (vec(3),), 0),
    (helper_called_in_loop_with_loop_names, (vec(3),), 0),
    (nested_helpers_shadow, (vec(3),), 0),
])
def test_inlined_scopes_keep_their_names_to_themselves(f, args, wrt):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)
