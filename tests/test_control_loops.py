"""for loops over anything: the iterable is evaluated once into fresh names; enumerate and
zip nest in any combination; dicts iterate their keys, views and ``get`` differentiate.

Regression tests of issue 9 (``for x in x``, ``enumerate(zip(...))``, ``for k in d``,
``d.items()``, ``d.get``), each checked against finite differences in reverse mode (joint
adjoint, and the pullback called twice) and in forward mode.
"""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError, SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(11)


def vec(*shape):
    return rng.uniform(0.2, 1.0, shape)


def check_both_modes(f, args, wrt=0):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)


# ---- the loop variable rebinds the sequence's own name ----------------------------------


def loop_variable_rebinds_sequence(x):
    s = 0.0
    for x in x:
        s = s + np.sum(np.sin(x))
    return s


def loop_variable_rebinds_reversed(x):
    s = 0.0
    for x in reversed(x):
        s = s * 0.5 + x
    return s


def body_rebinds_sequence(x):
    s = 0.0
    for row in x:
        x = row * 2.0
        s = s + np.sum(x * row)
    return s


def range_variable_rebound_in_body(x):
    s = 0.0
    for i in range(3):
        i = i * 2
        s = s + x[i] * x[0]
    return s


def nested_loops_share_a_variable(x):
    s = 0.0
    for i in range(3):
        for i in range(i, 4):
            s = s + np.sin(x[i]) * x[0]
        s = s * x[i]
    return s


@pytest.mark.parametrize("f,arg", [(range_variable_rebound_in_body, vec(6)),
                                   (nested_loops_share_a_variable, vec(4)),
                                   (loop_variable_rebinds_sequence, vec(3, 3)),
                                   (loop_variable_rebinds_sequence, [vec(2), vec(3)]),
                                   (loop_variable_rebinds_reversed, vec(4)),
                                   (body_rebinds_sequence, vec(3, 2))])
def test_iterable_is_evaluated_once(f, arg):
    check_both_modes(f, (arg,))


# ---- enumerate and zip, nested ----------------------------------------------------------


def enumerate_zip(x, y):
    acc = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        acc = acc + (i + 1) * a * b
    return acc


def zip_enumerate(x, y):
    acc = 0.0
    for (i, a), b in zip(enumerate(x, 1), y):
        acc = acc + i * a * np.sin(b)
    return acc


def enumerate_enumerate_zip(x, y, z):
    acc = 0.0
    for i, (j, [a, (b, c)]) in enumerate(enumerate(zip(x, zip(y, z))), start=2):
        acc = acc + i * j * a * b + c
    return acc


def zip_three_unequal_with_range(x, y):
    acc = 0.0
    for a, b, k in zip(x, y[1:], range(10)):
        acc = acc + a * b * k
    return acc


def zip_of_rows_and_list(X, ws):
    acc = 0.0
    for row, w in zip(X, ws):
        acc = acc + np.sum(np.tanh(row * w))
    return acc


def pairs_unpacked(pairs):
    acc = 0.0
    for a, b in pairs:
        acc = acc + np.sum(a * b)
    return acc


def starred_target_over_zip(x, y, z):
    acc = 0.0
    for a, *rest in zip(x, y, z):
        acc = acc + a * rest[0] * np.sin(rest[1])
    return acc


def comprehension_over_enumerate_zip(x, y):
    return sum([i * a * b for i, (a, b) in enumerate(zip(x, y))])


@pytest.mark.parametrize("f,args,wrt", [
    (enumerate_zip, (vec(3), vec(3)), (0, 1)),
    (zip_enumerate, (vec(4), vec(3)), (0, 1)),
    (enumerate_enumerate_zip, (vec(3), vec(4), vec(3)), (0, 1, 2)),
    (zip_three_unequal_with_range, (vec(5), vec(3)), (0, 1)),
    (zip_of_rows_and_list, (vec(3, 2), [vec(2), vec(2), vec(1)]), (0, 1)),
    (pairs_unpacked, ([(vec(2), vec(2)), (vec(2), vec(2))],), 0),
    (comprehension_over_enumerate_zip, (vec(3), vec(3)), (0, 1)),
    (starred_target_over_zip, (vec(3), vec(3), vec(4)), (0, 1, 2)),
])
def test_enumerate_zip_nest_in_any_combination(f, args, wrt):
    check_both_modes(f, args, wrt)


def unpacks_too_many(x, y):
    acc = 0.0
    for a, b, c in zip(x, y):
        acc = acc + a * b * c
    return acc


def test_unpacking_a_zip_into_the_wrong_number_of_names_is_refused_at_its_line():
    with pytest.raises(SrcadSyntaxError, match="unpacks 2 values into 3 names") as info:
        srcad.grad(unpacks_too_many, wrt=(0, 1))(vec(2), vec(2))
    assert info.value.lineno == unpacks_too_many.__code__.co_firstlineno + 2


# ---- dicts ------------------------------------------------------------------------------


def dict_iteration(d):
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] ** 2)
    return s


def dict_int_keys(d):
    s = 0.0
    for k in d:  # the keys, not d[0], d[1]
        s = s + np.sum(d[k]) * (k + 1)
    return s


def dict_views(d):
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v ** 2) * len(k)
    for v in d.values():
        s = s + np.sum(np.sin(v))
    for k in d.keys():
        s = s * 0.9 + np.sum(d[k])
    return s


def dict_get(d, x):
    present = d.get("a", x)
    absent = d.get("zz", x * 3.0)
    maybe = d.get("b")
    extra = 0.0 if maybe is None else np.sum(maybe)
    return np.sum(present * 2.0) + np.sum(absent ** 2) + extra


def dict_built_inside(x, y):
    d = dict(a=x, b=y * 2.0)
    e = {"c": x * y, "d": np.sin(y)}
    s = 0.0
    for k, v in e.items():
        s = s + np.sum(v * d["a"])
    return s + sum([np.sum(v) for v in d.values()])


def dict_display_in_python_order(x, y):
    parts = [x * 2.0, "a", np.sin(y), "b"]
    d = {parts.pop(): parts.pop(), parts.pop(): parts.pop()}  # key, value, key, value
    return np.sum(d["b"] * 3.0 + d["a"])


def nested_dict_iteration(p):
    total = 0.0
    for name, layer in p.items():
        for k in layer:
            total = total + np.sum(layer[k] ** 2) * len(name)
    return total


@pytest.mark.parametrize("f,args,wrt", [
    (dict_iteration, ({"a": vec(3), "b": vec(4)},), 0),
    (dict_int_keys, ({0: vec(2), 1: vec(2), 5: vec(2)},), 0),
    (dict_views, ({"a": vec(3), "bb": vec(2)},), 0),
    (dict_get, ({"a": vec(3), "b": vec(3)}, vec(3)), (0, 1)),
    (dict_get, ({"a": vec(3)}, vec(3)), (0, 1)),
    (dict_built_inside, (vec(3), vec(3)), (0, 1)),
    (dict_display_in_python_order, (vec(3), vec(3)), (0, 1)),
    (nested_dict_iteration, ({"one": {"W": vec(2, 2), "b": vec(2)}, "three": {"W": vec(3)}},), 0),
])
def test_dicts_iterate_and_get_like_python(f, args, wrt):
    check_both_modes(f, args, wrt)


def dict_setdefault(d):
    return np.sum(d.setdefault("a", 2.0))


def dict_update(d, x):
    d.update(a=x)
    return np.sum(d["a"])


def dict_values_outside_a_loop(d):
    return np.sum(np.stack(list(d.values())))


@pytest.mark.parametrize("f,args", [(dict_setdefault, ({"a": vec(3)},)),
                                    (dict_update, ({"a": vec(3)}, vec(3)))])
def test_other_dict_methods_are_refused(f, args):
    with pytest.raises(SrcadError):
        check_grads(f, args)
    with pytest.raises(SrcadError):
        check_jvp(f, args)


def test_a_builtin_consuming_a_dict_view_is_differentiated():
    args = ({"a": vec(3), "b": vec(3) * 2.0},)
    check_grads(dict_values_outside_a_loop, args, modes=("rev",))
    check_jvp(dict_values_outside_a_loop, args)


# ---- the items of the iterable share its memory ------------------------------------------


def writes_into_rows_of_argument(X):
    s = 0.0
    for row in X:
        row[0] = 1.0
        s = s + np.sum(row * row)
    return s


def writes_into_iterated_array(X):
    Y = X * 1.0
    s = 0.0
    for row in Y:
        Y[2] = Y[2] * 2.0
        s = s + np.sum(row * row)
    return s


@pytest.mark.parametrize("f", [writes_into_rows_of_argument, writes_into_iterated_array])
def test_updates_through_loop_items_are_refused(f):
    X = vec(4, 3)
    with pytest.raises(SrcadSyntaxError, match="in-place update"):
        srcad.grad(f)(X)
    with pytest.raises(SrcadSyntaxError, match="in-place update"):
        srcad.jvp(f, (X,), (X,))
