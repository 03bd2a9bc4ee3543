"""Regression tests for issue 9's aliasing cases: each in-place update srcad cannot follow is
refused at the user's line; each it can is differentiated right (finite differences, joint
adjoint, vjp pullback called twice, forward mode)."""
import math

import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order, refused

X3 = np.array([0.3, 0.5, 0.7])
X4 = np.array([0.3, 0.5, 0.7, 0.9])
BUFFER = np.zeros(3)


def checked(f, *args, wrt=0):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)


# ---- augmented assignment: in place on arrays, a rebinding on numbers -----------------------

def iadd_through_alias(x):
    y = x * 1.0
    z = y
    z += 1.0
    return np.sum(y * y)


def iadd_without_alias_read(x):
    y = x * 1.0
    z = y
    z *= x
    return np.sum(z * z)


def iadd_on_numbers(x):
    s = 0.0
    t = s
    s += 1.0
    return np.sum(x) * t + s


def iadd_on_list_alias(x):
    acc = [x * 1.0]
    keep = acc
    acc += [x * 2.0]
    return sum(keep[-1])


def test_augmented_assignment_through_an_alias_is_refused():
    refused(iadd_through_alias, X3, line_text="z += 1.0", message="'z += ...' updates 'z' in place")
    refused(iadd_on_list_alias, X3, line_text="acc += [x * 2.0]", message="'acc += ...' updates 'acc' in place")


def test_augmented_assignment_without_a_later_alias_read():
    checked(iadd_without_alias_read, X3)
    checked(iadd_on_numbers, X3)


# ---- fail closed: views are whatever is not known to be fresh -------------------------------

def update_through_flip(x):
    A = x * 1.0
    B = np.flip(A)
    B[0] = 0.0
    return np.sum(A * x)


def update_through_helper_result(x):
    w = x * 2.0
    d = returns_argument(w)
    w[0] = 0.0
    return np.sum(d * x)


def returns_argument(a):
    return a


def update_list_item_alias(x):
    items = [x * 1.0]
    first = items[0]
    first[0] = 5.0
    return np.sum(items[0] * x)


def update_global(x):
    BUFFER[0] = x[0]
    return np.sum(BUFFER)


def test_updates_through_views_are_refused():
    message = refused(update_through_flip, X3, line_text="B[0] = 0.0", message="shares memory with 'A'")
    assert "B = np.flip(A).copy()" in message
    message = refused(update_through_helper_result, X3, line_text="w[0] = 0.0", message="shares memory with 'd'")
    assert "d = returns_argument(w).copy()" in message
    refused(update_list_item_alias, X3, line_text="first[0] = 5.0", message="shares memory with 'items'")
    refused(update_global, X3, line_text="BUFFER[0] = x[0]", message="shares memory with the global 'BUFFER'")


# ---- out arguments, by keyword or by position -----------------------------------------------

def cumsum_positional_out(x):
    a = np.zeros(4)
    np.cumsum(x, 0, None, a)
    return a * 1.0


def ufunc_positional_out(x):
    a = np.zeros(4)
    b = np.add(x, 1.0, a)
    return a * b


def method_positional_out(x):
    a = np.zeros(4)
    b = x.cumsum(0, None, a)
    return a * b


@pytest.mark.parametrize("f,text", [(cumsum_positional_out, "np.cumsum(x, 0, None, a)"),
                                    (ufunc_positional_out, "np.add(x, 1.0, a)"),
                                    (method_positional_out, "x.cumsum(0, None, a)")])
def test_positional_out_is_refused(f, text):
    refused(f, X4, line_text=text, message="with out= (it writes into an existing array)")


# ---- values the reverse sweep reads, changed in place later ---------------------------------

def tanh_then_update(x):
    x = np.tanh(x)
    x[0] *= 2.0
    return np.sum(x)


def normalise_then_update(x):
    p = np.exp(x)
    p = p / np.sum(p)
    p[0] = p[1] * 3.0
    return np.sum(p * p)


def helper(u, w):
    return np.sin(u) * w


def helper_then_update(b, x):
    w = x * 1.0
    d = helper(b, w)
    w[0] = 0.0
    return d * x


def helper_then_update_summed(b, x):
    w = x * 1.0
    s = np.sum(helper(b, w))
    w[0] = 0.0
    return s * np.sum(w)


def saved_value_updated_through_alias(x):
    y = x * 1.0
    z = y
    y = np.sin(y)
    z[0] = 0.0
    return np.sum(y) + np.sum(z * x)


def tanh_update_in_loop(x):
    for i in range(3):
        x = np.tanh(x)
        x[0] *= 2.0
    return np.sum(x * x)


def test_values_read_by_the_reverse_sweep_are_copied_before_an_update():
    checked(tanh_then_update, X3)
    checked(normalise_then_update, X3)
    checked(helper_then_update, X3, X3 + 1, wrt=(0, 1))
    checked(helper_then_update_summed, X3, X3 + 1, wrt=(0, 1))
    checked(saved_value_updated_through_alias, X3)
    checked(tanh_update_in_loop, X3)


def test_second_order_through_a_copied_value():
    H = srcad.hessian(tanh_then_update)(X3)
    eps = 1e-6
    grad = srcad.grad(tanh_then_update)
    numeric = np.array([(grad(X3 + eps * e) - grad(X3 - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-7)


def mutating_helper(a):
    a[0] = 1.0
    return np.sum(a * a)


def calls_mutating_helper(x):
    w = x * 2.0
    s = mutating_helper(w)
    return s + np.sum(w * x)


def sort_after_read(x):
    c = np.array([3.0, 1.0, 2.0])
    y = np.sum(x * c)
    c.sort()
    return y + np.sum(c * x)


def test_changes_srcad_cannot_undo_are_refused():
    refused(calls_mutating_helper, X3, line_text="s = mutating_helper(w)",
            message="mutating_helper(...) updates its argument 'w' in place")
    refused(sort_after_read, X3, line_text="c.sort()", message="cannot see what the call .sort() changes in 'c'")


# ---- no false refusals ------------------------------------------------------------------------

def stencil(u, c):
    for n in range(4):
        un = u.copy()
        un[1:-1] = u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2]) + 0.1 * u[1:-1] ** 2
        u = un
    return np.sum(u * u)


def outer_fill(x):
    n = x.shape[0]
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            S[i, j] = np.sin(x[i]) * x[j]
    return np.sum(S ** 2)


def head_update(x):
    buf = np.ones(3) * 2.0
    buf[:2] = buf[:2] * x[:2]
    return np.sum(buf * x)


def index_copy_then_update(x):
    idx = np.argsort(x)
    y = x[idx]
    y[0] = 5.0
    return np.sum(y * x)


def row_update_in_place(X):
    Y = X * 1.0
    for i in range(3):
        r = Y[i]
        r *= 2.0
        Y[i] = np.tanh(r)  # overwrites all that r *= 2.0 changed in Y
    return np.sum(Y ** 2)


def copy_then_update_in_loop(x):
    A = np.sin(x) + 1.0
    s = 0.0
    for i in range(2):
        B = A.copy()  # forward mode: B's tangent must not stay A's, which A[0] *= 2.0 updates
        s = s + np.sum(np.exp(A) * np.sum(np.tanh(B) * B))
        A[0] *= 2.0
    return s + np.sum(B ** 2)


def test_common_in_place_patterns_are_not_refused():
    checked(stencil, np.linspace(0.1, 1.0, 6), 0.2, wrt=(0, 1))
    checked(outer_fill, X3)
    checked(head_update, X3)
    checked(index_copy_then_update, X3)
    checked(row_update_in_place, np.arange(9.0).reshape(3, 3) / 10)
    checked(copy_then_update_in_loop, X4)


# ---- rebinding loops save nothing the reverse sweep does not read ----------------------------

def scale_loop(x, c):
    for i in range(4):
        x = x * c
    return np.sum(x)


def double_loop(x):
    for i in range(4):
        x = x * 2.0
    return np.sum(x)


def test_rebinding_loop_saves_no_old_values():
    d = srcad.differentiable(scale_loop, wrt=0)
    np.testing.assert_allclose(d.grad(X3, 2.0), np.full(3, 16.0))
    assert "_stack" not in d.adjoint_source
    d = srcad.differentiable(double_loop)
    np.testing.assert_allclose(d.grad(X3), np.full(3, 16.0))
    assert "_stack" not in d.adjoint_source
    checked(scale_loop, X3, 1.5, wrt=(0, 1))


def view_of_a_copy(x):
    y = x.copy()
    z = y.reshape(-1)
    z[0] = 2.0 * z[1]
    return np.sum(np.cos(z) * z)


def view_of_the_argument(x):
    z = x.reshape(-1)
    z[0] = 2.0
    return np.sum(z * z)


def row_of_a_list_copy(rows):
    copied = rows.copy()  # a list's copy shares its rows
    r = copied[0]
    r[0] = 1.0
    return np.sum(copied[1] * r)


def test_the_copy_of_an_array_argument_shares_nothing():
    # an array argument (the compiled code is made for arrays there) is copied whole by .copy()
    x = np.array([[0.3, 0.5], [-0.2, 0.4]])
    checked(view_of_a_copy, x)
    refused(view_of_the_argument, x, line_text="z[0] = 2.0", message="shares memory with the argument 'x'")
    with pytest.raises(SrcadSyntaxError, match="shares memory with the argument 'rows'"):
        srcad.grad(row_of_a_list_copy)([np.array([0.1, 0.2]), np.array([0.3, 0.4])])


TABLE = np.array([1.0, 2.0, 3.0])


def cast_without_a_copy_then_updated(x):
    y = np.asarray(np.sin(x), dtype=float)
    w = np.cos(x).astype(np.float64, copy=False)
    y[0] = 3.0 * x[1]
    w[1] = 2.0 * x[2]
    return np.sum(y) + np.sum(w * y)


def view_of_a_global_updated(x):
    y = np.asarray(TABLE, dtype=np.float64)
    y[0] = x[0]
    return np.sum(y * x)


def test_types_and_modules_an_argument_names_share_no_memory():
    # float and np.float64 were taken for arrays the update might reach ("copy first: float.copy()")
    checked(cast_without_a_copy_then_updated, X3)
    refused(view_of_a_global_updated, X3,
            line_text="y[0] = x[0]", message="shares memory with the global 'TABLE'")


def jitter_on_the_diagonal(A):
    K = A @ A.T
    K[np.diag_indices_from(K)] += 1.0  # a Gaussian process's jitter, as written in real code
    return np.sum(np.sin(K))


def halve_upper_triangle(A):
    K = A @ A.T
    K[np.triu_indices(3, 1)] *= 0.5
    return np.sum(K ** 2)


@pytest.mark.parametrize("f", [jitter_on_the_diagonal, halve_upper_triangle])
def test_index_arrays_from_numpy_share_no_memory(f):
    """``np.diag_indices_from(K)`` and the triangle indices are new index arrays: updating
    ``K`` at them was refused as "'np.diag_indices_from(K)' shares memory with it" (found by
    an adversarial probe)."""
    A = np.random.default_rng(0).standard_normal((3, 2))
    checked(f, A)
    check_second_order(f, (A,))  # np.diag_indices_from had no forward rule: second order was refused


# probe 20B: a return (or break) out of a loop, lowered to flags, was followed on into the
# updates it skips: the accumulator returned early looked updated after it was returned
def partial_sum(x):
    s = 0.0
    for v in x:
        if v < 0:
            return s
        s += np.exp(v)
    return s


def rows_until(X):
    acc = np.zeros(X.shape[1])
    for i in range(X.shape[0]):
        if np.sum(X[i]) < 0:
            return acc
        acc += X[i] ** 2
    return acc


def grows_until_big(x):
    total = np.zeros(2)
    for k in range(len(x)):
        total += x[k] * np.ones(2)
        if total[0] > 1.0:
            break
        total *= 1.5
    return np.sum(total ** 2)


@pytest.mark.parametrize("f, x", [
    (partial_sum, np.array([0.5, 1.0, -1.0, 2.0])),
    (rows_until, np.array([[0.5, 1.0], [0.2, 0.1], [-3.0, 0.5], [1.0, 1.0]])),
    (grows_until_big, np.array([0.3, 0.4, 0.9]))], ids=lambda c: getattr(c, "__name__", ""))
def test_what_a_return_or_break_leaves_a_loop_with_is_not_updated_after_it(f, x):
    checked(f, x)
    if f is not rows_until:  # (a vector)
        check_second_order(f, (x,))


def kept_across_updates(x):
    acc = x * 1.0
    keep = acc
    for k in range(3):
        if k == 5:
            keep = acc
            break
        acc += 1.0
    return np.sum(keep * x)


def test_an_alias_updated_on_a_path_that_does_not_break_is_still_refused():
    refused(kept_across_updates, X3, line_text="acc += 1.0", message="shares memory")


def updated_in_a_handler(x):
    a = x * 2.0
    b = a[1:]
    try:
        t = math.sqrt(x[0])
    except ValueError:
        a += 1.0  # changes b too (a view)
        t = 0.0
    return np.sum(b * b) + t


def test_an_update_in_an_except_handler_is_checked():
    # probe 20D: the try region's flag (set True before the body, False where it raises) was
    # taken for a flag known True, and the handler for code that never runs: 52 where Python gives 74
    refused(updated_in_a_handler, np.array([-1.0, 2.0, 3.0]), line_text="a += 1.0", message="shares memory")


def row_chosen_by_a_branch(x):
    S = x * 1.0
    if x[0, 0] < 0:
        r = S[0]
    else:
        r = S[1]
    r *= 2.0  # doubles the row r is, S[1] here
    S[0] = r
    return np.sum(S * S)


def test_a_store_after_an_update_through_a_name_bound_on_two_paths_is_refused():
    # probe 20D (also in the code before): the facts after the branch kept one path's binding of
    # r (S[0]), so the store S[0] = r seemed to overwrite what r *= 2.0 changed: 125 for Python's 200
    refused(row_chosen_by_a_branch, np.array([[1.0, 2.0], [3.0, 4.0]]), line_text="r *= 2.0",
            message="shares memory")


# ---- copy= passed by position; one element read from a table filled cell by cell ------------

def nan_to_num_in_place(x):
    y = np.exp(x)
    z = np.nan_to_num(y, False)  # copy=False by position: z is y itself
    z[0] = 5.0
    return np.sum(y * x)


def astype_in_place(x):
    y = np.exp(x)
    z = y.astype(np.float64, "K", "unsafe", True, False)  # copy=False by position: z is y itself
    z[0] = 5.0
    return np.sum(y * x)


@pytest.mark.parametrize("f,text", [(nan_to_num_in_place, "z[0] = 5.0"), (astype_in_place, "z[0] = 5.0")])
def test_copy_false_by_position_is_an_alias(f, text):
    # probe 21A: only copy=False by keyword was read; by position the result counted as new
    # memory, so the store through z was no update of y: grad[0] 6.5 where Python's slope is 5.0
    message = refused(f, X3, line_text=text, message="shares memory with 'y'")
    assert ".copy()" in message


def table_recursion(x):
    n = x.shape[0]
    R = np.zeros(n + 1)
    for i in range(1, n + 1):
        a = R[i - 1]
        R[i] = np.sin(a) + x[i - 1] * a + x[i - 1] ** 2
    return R[n]


def element_kept_across_stores(x):
    R = np.zeros(3)
    R[0] = x[0] * x[1]
    a = R[0]
    R[1] = np.sin(a)
    return R[1] + x[2] * R[0]


@pytest.mark.parametrize("f", [table_recursion, element_kept_across_stores])
def test_an_element_read_before_its_table_is_stored_into(f):
    # an element of a float array is a NumPy scalar, which no store changes: the forward sweep
    # keeps it without a copy and says so in the code (``a: np.float64 = R[i - 1]``), which the
    # derivative of the derivative reads back instead of refusing the store as an alias
    checked(f, X3)
    check_second_order(f, (X3,))
    d = srcad.differentiable(f)
    d.grad(X3)
    assert "a: np.float64 = R[" in d.adjoint_source and "copy_value(a)" not in d.adjoint_source, d.adjoint_source


DATA = np.array([0.1, 0.4, 0.45, 0.9])


def histogram_edges_updated(x):
    edges = np.linspace(0.0, 1.0, 3)
    y = np.sum(x * edges)
    counts, e = np.histogram(DATA, edges)  # e is edges itself
    e[2] = 5.0
    return y


def test_histogram_s_edges_are_its_argument():
    # probe 21C: np.histogram counted as new memory, so e[2] = 5.0 was no update of edges:
    # the slope read the changed edges, [0, 0.5, 5.0] for [0, 0.5, 1.0]
    refused(histogram_edges_updated, X3, line_text="e[2] = 5.0", message="shares memory with")


def table_step(R, i, x):
    a = R[i - 1]
    R[i] = np.sin(a) + x * a
    return R


def table_by_steps(x):
    R = np.zeros(4)
    for i in range(1, 4):
        R = table_step(R, i, x[i - 1])
    return R[3]


def test_an_element_read_in_a_helper_compiled_apart_at_second_order():
    # the helper's forward function (the pair's) kept the element without a copy but without the
    # fact in its source: srcad's own alias check refused the derivative of the derivative
    checked(table_by_steps, X3)
    check_second_order(table_by_steps, (X3,))
