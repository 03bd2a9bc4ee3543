"""Regression tests for the fuzzer's findings F12, F13, R2, R3 and R4 (/tmp/fuzz_findings.md):
values are checked against central finite differences (joint adjoint, vjp pullback called
twice, jvp, and a Hessian-vector product where the output is a scalar); refusals must name
the user's code, never srcad's temporaries."""
import linecache
import re

import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

X4 = np.array([0.3, 0.5, -0.2, 0.9])


def checked(f, *args):
    check_grads(f, args, modes=("rev",))
    check_jvp(f, args)


def hvp_matches_differences(f, x, eps=1e-5):
    """srcad.hvp against central differences of srcad.grad (itself checked above)."""
    rng = np.random.default_rng(0)
    u = rng.standard_normal(np.shape(x))
    g = srcad.grad(f)
    expected = (g(x + eps * u) - g(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(f)(x, u), expected, rtol=1e-5, atol=1e-7)


def refusal(f, *args):
    with pytest.raises(SrcadSyntaxError) as info:
        srcad.grad(f)(*args)
    err = info.value
    assert err.filename == __file__
    message = str(err).splitlines()[0]
    assert not re.search(r"\b_(t|seq|list|range|k|n)\d+\b", message), message  # no srcad temporaries
    return message, linecache.getline(err.filename, err.lineno)


# ---- F12: a store whose value is its own target -----------------------------------------------

def self_store_ellipsis(w):
    t = w * np.arange(1.0, 5.0)
    t[...] = t
    return t


def self_store_full_slice(w):
    t = w * np.arange(1.0, 5.0)
    t[:] = t
    return t


def self_store_index_array(w):
    t = w * np.arange(1.0, 5.0)
    t[[3, 2, 1, 0]] = t
    return t


def self_store_overlapping_slices(w):
    t = w * np.arange(1.0, 5.0)
    t[1:] = t[:-1]
    t[:] = t[::-1]
    t[1:] = t[1:]
    t[:] = t * 2.0
    return t


def self_store_in_loop(x):
    t = np.sin(x)
    for k in range(3):
        t[...] = t
        t = t * x
    return t


def self_store_scalar(x):
    t = x * x
    t[...] = t
    return np.sum(np.tanh(t) * x)


@pytest.mark.parametrize("f", [self_store_ellipsis, self_store_full_slice, self_store_index_array,
                               self_store_overlapping_slices])
def test_self_store_gradient(f):
    checked(f, 0.3)


def test_self_store_in_loop_and_second_order():
    checked(self_store_in_loop, X4)
    checked(self_store_scalar, X4)
    hvp_matches_differences(self_store_scalar, X4)


# ---- F13: a loop body rebinds the name it iterates ---------------------------------------------

def rebinds_iterated_list(p):
    r = [p, p]
    for o in r:
        r = o
    return r


def rebinds_iterated_array(p):
    r = p * 2
    for o in r:
        r = r * o
    return r


def rebinds_iterated_to_list(p):
    r = [p, p * 2]
    s = 0.0
    for i, o in enumerate(r):
        r = [o * 3, o]
        s = s + o.sum() * i
    return s


def shrinks_iterated(p):
    r = p
    for o in r:
        r = r[1:] * o
    return r


@pytest.mark.parametrize("f", [rebinds_iterated_list, rebinds_iterated_array, rebinds_iterated_to_list,
                               shrinks_iterated])
def test_loop_rebinding_its_iterable(f):
    checked(f, X4)


def test_loop_rebinding_its_iterable_values():
    """The value srcad's jvp and vjp compute is Python's: the iterable is the one bound when
    the loop started."""
    for f in (rebinds_iterated_list, rebinds_iterated_array, shrinks_iterated):
        value, _ = srcad.jvp(f, (X4,), (X4,))
        np.testing.assert_allclose(value, f(X4))
        value, _ = srcad.vjp(f, X4)
        np.testing.assert_allclose(value, f(X4))


# ---- R2: helpers calling a method of their own parameter ---------------------------------------

def lambda_calls_parameter_method(x):
    reps = lambda u: u.reshape(3)  # noqa: E731
    return reps(x).sum() + reps(x * x).max()


def def_calls_parameter_method(x):
    def reps(u, w=2.0):
        v = u * w
        return v.reshape(3, 1).sum(axis=1)
    return np.sum(reps(x) * reps(x, 3.0))


def lambda_with_default_calls_methods(x):
    g = lambda u, w=2.0: (u * w).sum() + u.max()  # noqa: E731
    return g(x) + g(x, 3.0)


@pytest.mark.parametrize("f", [lambda_calls_parameter_method, def_calls_parameter_method,
                               lambda_with_default_calls_methods])
def test_helper_calls_method_of_its_parameter(f):
    checked(f, X4[:3])
    hvp_matches_differences(f, X4[:3])


def lambda_calls_its_parameter(x):
    apply = lambda h: h(x)  # noqa: E731
    return apply(np.sin)


def test_helper_calling_its_parameter_is_specialised_on_the_function_passed():
    # once refused ("'h' is a local variable"); the lambda is now inlined with h = np.sin (issue 10)
    checked(lambda_calls_its_parameter, X4)


# ---- R3: refusals name the user's code -----------------------------------------------------------

def chained_update_then_read(r, b):
    P = np.array(np.reshape(b, (3, 4)))
    P[1][3] += r
    return r * P.sum()


def single_subscript_update(r, b):
    P = np.array(np.reshape(b, (3, 4)))
    P[1, 3] += r
    return r * P.sum()


def appends_to_iterated_list(p):
    r = [p, p * 2]
    total = p * 0.0
    for o in r:
        total = total + o
        if len(r) < 4:
            r.append(o * 3)  # Python's loop goes on over the items appended
    return np.sum(total)


def appends_then_leaves_the_loop(p):
    r = [p, p * 2]
    for o in r:
        r.append(o)
        break  # (the loop does not go on: nothing differs from iterating over a copy)
    return r[2]


def appends_to_copy_of_iterated_list(p):
    r = [p, p * 2]
    for o in r.copy():
        r.append(o)
        break
    return r[2]


def updates_argument_through_slice(x):
    x[0:2][1] += 1.0
    return x.sum()


def sorts_slice_read_before(x):
    y = x * 1.0
    s = np.sum(y[0:2])
    y[0:2].sort()
    return s + y.sum()


def test_refusal_of_chained_update_names_the_expression_and_the_fix_works():
    message, line = refusal(chained_update_then_read, 0.3, np.arange(12.0))
    assert "'P[1][3] += ...'" in message and "'P[i, j] += ...'" in message, message
    assert "P[1][3] += r" in line
    check_grads(single_subscript_update, (0.3, np.arange(12.0)), modes=("rev",))
    check_jvp(single_subscript_update, (0.3, np.arange(12.0)))


def test_refusal_of_update_of_iterated_list_names_the_loop_and_the_fix_works():
    message, line = refusal(appends_to_iterated_list, X4)
    assert "for loop at line" in message and "'for ... in r.copy()'" in message, message
    assert "r.append(o * 3)" in line
    checked(appends_to_copy_of_iterated_list, X4)
    np.testing.assert_allclose(srcad.jacobian(appends_then_leaves_the_loop)(X4), np.eye(4))


def test_other_refusals_name_the_expression():
    message, _ = refusal(updates_argument_through_slice, X4.copy())
    assert "'x[0:2]'" in message and "argument 'x'" in message, message
    message, _ = refusal(sorts_slice_read_before, X4)
    assert "'y[0:2]'" in message, message


# ---- R4: fancy indexing copies, so updating the copy is not an update of the argument ------------

def gathers_then_updates(b, operands):
    c = operands[[3, 1, 1]]
    c[1] += 1.14
    return b * np.sum(c * c)


def masks_then_updates(b, operands):
    c = operands[operands > 0.0]
    c[0] += 1.14
    return b * np.sum(c * c)


def takes_then_updates(b, operands):
    c = np.take(operands, [0, 2])
    c[0] += 1.14
    return b * np.sum(c * operands[1:3])


def argsorts_then_updates(b, operands):
    c = operands[np.argsort(operands)]
    c[0] *= b
    return np.sum(c * operands)


@pytest.mark.parametrize("f", [gathers_then_updates, masks_then_updates, takes_then_updates,
                               argsorts_then_updates])
def test_fancy_indexed_copy_may_be_updated(f):
    x = X4.copy()
    for wrt in (0, 1):
        check_grads(f, (0.7, x), wrt=wrt, modes=("rev",))
        check_jvp(f, (0.7, x), wrt=wrt)
    np.testing.assert_array_equal(x, X4)  # the caller's array is unchanged


def test_fancy_indexing_copies_in_numpy():
    """What the allowlist relies on."""
    x = X4.copy()
    assert not np.shares_memory(x, x[[3, 1, 1]])
    assert not np.shares_memory(x, x[x > 0.0])
    assert not np.shares_memory(x, np.take(x, [0, 2]))
    assert not np.shares_memory(x, x[np.argsort(x)])
    assert np.shares_memory(x, x[1:3])


def slices_then_updates(b, operands):
    c = operands[1:3]
    c[1] += 1.14
    return b * np.sum(c * c)


def test_basic_slice_of_argument_is_still_refused():
    message, line = refusal(slices_then_updates, 0.7, X4.copy())
    assert "argument 'operands'" in message and "c[1] += 1.14" in line


def element_update_under_a_view(x):
    A = np.full((4, 3), 1.5)
    for a, e in zip(A.reshape(12), x):
        A[..., -2] *= np.tanh(e)
        b = a * 2.0
    return b * x.sum()


def update_after_early_return(x, s):
    for k in range(2):
        if s > 0.61:
            return s
        s *= s
    return 0.42 * x.sum()


def returned_then_updated(x, s):
    r = s
    for k in range(2):
        s *= s
    return r * x.sum()


def test_refusals_of_element_updates_and_returns_name_user_code():
    message, line = refusal(element_update_under_a_view, X4)
    assert "'A[..., -2] *= ...'" in message and "make 'a' a copy" in message, message
    assert "A[..., -2] *=" in line
    # what is returned early is not updated after the return (the loop is left): differentiated
    s = np.array(0.4)
    np.testing.assert_allclose(srcad.grad(update_after_early_return, wrt=1)(X4, s),
                               (update_after_early_return(X4, s + 1e-6) - update_after_early_return(X4, s - 1e-6))
                               / 2e-6, rtol=1e-6)
    message, line = refusal(returned_then_updated, X4, np.array([0.4, 0.5]))
    assert "and 'r', which shares memory" in message and "'s = s * ...'" in message, message
    assert "s *= s" in line


def scales_in_place(acc, t):
    acc *= np.tanh(t)
    return acc


def comprehension_passes_item_to_updating_helper(x, M):
    return x + sum([scales_in_place(d, d) for d in np.prod(0.9 + 0.1 * M, axis=1)])


def comprehension_passes_row_to_updating_helper(x, M):
    P = 0.9 + 0.1 * M
    return x + sum([np.sum(scales_in_place(d, d)) for d in P]) + np.sum(P)


def test_refusal_inside_comprehension_names_its_variable_and_line():
    # the rows of a matrix are views, which the helper updates while the loop reads P
    message, line = refusal(comprehension_passes_row_to_updating_helper, 0.3, np.ones((3, 4)))
    assert "'d'" in message and "'P'" in message and "P.copy()" in message, message
    assert "for d in P" in line
    # the items of a vector are NumPy scalars, which the helper's *= rebinds (refused before the
    # nineteenth stop, when srcad did not know the vector's items were no views)
    M = np.random.default_rng(5).uniform(0.5, 1.5, (3, 4))
    check_grads(comprehension_passes_item_to_updating_helper, (0.3, M), wrt=(0, 1))
