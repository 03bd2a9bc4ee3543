"""User rule templates (custom_vjp.defvjp/defjvp, register_vjp/register_jvp): the stores into
d[...] / t[...] srcad applies (``+=``, ``-=``; any other is refused where the rule is
registered), and statements with several terms of which some read a zero derivative."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.extend import register_jvp, register_vjp
from srcad.testing import check_grads, check_jvp

U, K = np.array([0.3, -0.5, 1.2]), 0.7


def line_of(tag):
    """``"this file:line"`` of the one line that ends with the comment ``# tag``."""
    with open(__file__) as f:
        lines = [i for i, text in enumerate(f, 1) if text.endswith(f"  # {tag}\n")]
    assert len(lines) == 1, tag
    return f"{__file__}:{lines[0]}"


def scaled():
    @srcad.custom_vjp
    def scale(x, c):
        return x * c

    return scale


# ---- stores other than += / -= are refused at registration ---------------------------------

def test_assigning_an_adjoint_is_refused_at_defvjp():
    scale = scaled()
    with pytest.raises(SrcadError) as caught:
        @scale.defvjp
        def scale_vjp(y, x, c):
            d[x] = d[y] * c  # store-assign-vjp
            d[c] += np.sum(d[y] * x)
    message = str(caught.value)
    assert line_of("store-assign-vjp") in message
    assert "`d[x] = d[y] * c" in message and "write `d[x] += ...`" in message


def test_assigning_a_tangent_is_refused_at_defjvp():
    scale = scaled()
    with pytest.raises(SrcadError) as caught:
        @scale.defjvp
        def scale_jvp(y, x, c):
            t[y] = t[x] * c + x * t[c]  # store-assign-jvp
    assert line_of("store-assign-jvp") in str(caught.value)
    assert "write `t[y] += ...`" in str(caught.value)


def store_mult(y, x, c):
    d[x] *= d[y] * c  # store-mult


def store_div(y, x, c):
    d[x] /= c  # store-div


def store_pow(y, x, c):
    d[x] **= 2  # store-pow


def store_tuple(y, x, c):
    d[x], d[c] = d[y] * c, np.sum(d[y] * x)  # store-tuple


def store_item(y, x, c):
    d[x][0] = d[y][0] * c  # store-item
    d[c] += np.sum(d[y] * x)


def store_item_mult(y, x, c):
    d[x][0] *= c  # store-item-mult


def store_nested_item(y, x, c):
    d[x][0][0] += c  # store-nested-item


def store_ufunc_at(y, x, c):
    np.multiply.at(d[x], 0, c)  # store-ufunc-at


def store_out(y, x, c):
    np.multiply(d[y], c, out=d[x])  # store-out


def store_in_loop(y, x, c):
    for k in range(1):
        d[x] += d[y] * c  # store-in-loop


def store_in_while(y, x, c):
    while False:
        d[x] += d[y] * c  # store-in-while


def store_delete(y, x, c):
    del d[x]  # store-delete


def store_marker(y, x, c):
    d = {}  # store-marker


@pytest.mark.parametrize("template, tag", [
    (store_mult, "store-mult"), (store_div, "store-div"), (store_pow, "store-pow"), (store_tuple, "store-tuple"),
    (store_item, "store-item"), (store_item_mult, "store-item-mult"), (store_nested_item, "store-nested-item"),
    (store_ufunc_at, "store-ufunc-at"), (store_out, "store-out"), (store_in_loop, "store-in-loop"),
    (store_in_while, "store-in-while"), (store_delete, "store-delete"), (store_marker, "store-marker"),
])
def test_every_other_store_into_an_adjoint_is_refused(template, tag):
    scale = scaled()
    with pytest.raises(SrcadError, match="write `d\\[") as caught:
        scale.defvjp(template)
    assert line_of(tag) in str(caught.value)
    assert "would be silently lost" in str(caught.value)


def tangent_mult(y, x, c):
    t[y] *= t[x]  # tangent-mult


def tangent_item(y, x, c):
    t[y][0] = t[x][0] * c  # tangent-item


@pytest.mark.parametrize("template, tag", [(tangent_mult, "tangent-mult"), (tangent_item, "tangent-item")])
def test_every_other_store_into_a_tangent_is_refused(template, tag):
    scale = scaled()
    with pytest.raises(SrcadError, match="write `t\\[y\\] \\+= ...`") as caught:
        scale.defjvp(template)
    assert line_of(tag) in str(caught.value)


def blackbox_assigned(a, b):
    return a * np.sin(b)


def test_register_vjp_and_register_jvp_refuse_too_and_register_nothing():
    with pytest.raises(SrcadError) as caught:
        @register_vjp(blackbox_assigned)
        def blackbox_vjp(y, a, b):
            d[a] = d[y] * np.sin(b)  # register-vjp-assign
            d[b] += d[y] * a * np.cos(b)
    assert line_of("register-vjp-assign") in str(caught.value)
    with pytest.raises(SrcadError) as caught:
        @register_jvp(blackbox_assigned)
        def blackbox_jvp(y, a, b):
            t[y] -= -t[a] * np.sin(b)
            t[y] = a * np.cos(b) * t[b]  # register-jvp-assign
    assert line_of("register-jvp-assign") in str(caught.value)

    # the refused rules were not registered: correct ones can be, and are used
    @register_vjp(blackbox_assigned)
    def blackbox_vjp(y, a, b):
        d[a] += d[y] * np.sin(b)
        d[b] += d[y] * a * np.cos(b)

    @register_jvp(blackbox_assigned)
    def blackbox_jvp(y, a, b):
        t[y] += t[a] * np.sin(b)
        t[y] += a * np.cos(b) * t[b]

    def loss(a, b):
        return np.sum(blackbox_assigned(a, b) ** 2)

    check_grads(loss, (U, U[::-1].copy()), wrt=(0, 1), modes=("rev",))
    check_jvp(loss, (U, U[::-1].copy()), wrt=(0, 1))


# ---- -= accumulates, in both directions --------------------------------------------------

@srcad.custom_vjp
def neg2(x):
    return -2.0 * x


@neg2.defvjp
def neg2_vjp(y, x):
    d[x] -= 2.0 * d[y]


@neg2.defjvp
def neg2_jvp(y, x):
    t[y] -= 2.0 * t[x]


def test_subtracting_from_an_adjoint_or_a_tangent():
    def alone(u):
        return np.sum(neg2(u) ** 2)  # d[u] comes from neg2 alone: the first update is the -=

    def shared(u):
        return np.sum(neg2(u) * u)

    np.testing.assert_allclose(srcad.grad(alone)(U), 8.0 * U)
    np.testing.assert_allclose(srcad.jvp(shared, (U,), (np.ones(3),))[1], np.sum(-4.0 * U))
    for f in (alone, shared):
        check_grads(f, (U,), modes=("rev",))
        check_jvp(f, (U,))
    np.testing.assert_allclose(srcad.hvp(alone)(U, np.ones(3)), 8.0 * np.ones(3))


# ---- a term that reads a zero tangent drops out of its sum --------------------------------

@srcad.custom_vjp
def scale(x, c):
    return x * c


@scale.defvjp
def scale_vjp(y, x, c):
    d[x] += d[y] * c
    d[c] += np.sum(d[y] * x)


@scale.defjvp
def scale_jvp(y, x, c):
    t[y] += t[x] * c + x * t[c]


def by_k(u, k):
    return np.sum(scale(u, k) ** 2)


def by_literal(u):
    return np.sum(scale(u, 0.7) ** 2)


def test_sum_of_terms_with_one_zero_tangent():
    np.testing.assert_allclose(srcad.jvp(by_k, (U, K), (np.ones(3), None))[1], np.sum(2 * K * K * U))
    np.testing.assert_allclose(srcad.jvp(by_k, (U, K), (None, 1.0))[1], 2 * K * np.sum(U ** 2))
    np.testing.assert_allclose(srcad.jvp(by_literal, (U,), (np.ones(3),))[1], np.sum(2 * K * K * U))
    check_jvp(by_literal, (U,))
    check_jvp(by_k, (U, K), wrt=0)
    check_jvp(by_k, (U, K), wrt=1)
    check_jvp(by_k, (U, K), wrt=(0, 1))  # control: both tangents live
    np.testing.assert_allclose(srcad.hvp(by_literal)(U, np.ones(3)), 2 * K * K * np.ones(3))
    np.testing.assert_allclose(srcad.hessian(by_literal)(U), 2 * K * K * np.eye(3))
    np.testing.assert_allclose(srcad.jacobian(lambda u: scale(u, 0.7) ** 2, mode="fwd")(U), np.diag(2 * K * K * U))


@srcad.custom_vjp
def shift(x, c):
    return x * c - c * c


@shift.defvjp
def shift_vjp(y, x, c):
    d[x] += d[y] * c
    d[c] += np.sum(d[y] * (x - 2 * c))


@shift.defjvp
def shift_jvp(y, x, c):
    t[y] += -(2 * c * t[c]) + (t[x] * c - x * -t[c]) / 1.0


@srcad.custom_vjp
def affine(A, v):
    return A @ v


@affine.defvjp
def affine_vjp(y, A, v):
    d[A] += np.outer(d[y], v)
    d[v] += A.T @ d[y]


@affine.defjvp
def affine_jvp(y, A, v):
    t[y] += A @ t[v] + t[A] @ v


MATRIX = np.array([[1.0, -0.5, 0.2], [0.3, 0.8, -1.1]])


def shifted(x, c):
    return np.sum(shift(x, c) ** 2)


def shifted_by_literal(x):
    return np.sum(shift(x, 0.7) ** 2)


def mapped(A, v):
    return np.sum(np.tanh(affine(A, v)))


def mapped_by_constant(v):
    return np.sum(np.tanh(affine(MATRIX, v)))


def test_zero_terms_of_differences_negations_quotients_and_matrix_products():
    for wrt in (0, 1, (0, 1)):
        check_jvp(shifted, (U, K), wrt=wrt)
        check_jvp(mapped, (MATRIX, U), wrt=wrt)
    np.testing.assert_allclose(srcad.jvp(shifted_by_literal, (U,), (np.ones(3),))[1], np.sum(2 * (U * K - K * K) * K))
    check_jvp(shifted_by_literal, (U,))
    check_jvp(mapped_by_constant, (U,))
    np.testing.assert_allclose(srcad.jacobian(lambda v: affine(MATRIX, v), mode="fwd")(U), MATRIX)


# ---- temporaries: a zero term leaves a live temporary live, a zero one takes a live term ----

@srcad.custom_vjp
def scale_in_steps(x, c):
    return x * c


@scale_in_steps.defvjp
def scale_in_steps_vjp(y, x, c):
    g = d[y] * c
    g += 0.0 * d[y]
    d[x] += g
    d[c] += np.sum(d[y] * x)


@scale_in_steps.defjvp
def scale_in_steps_jvp(y, x, c):
    first = t[x] * c
    first += x * t[c]  # kept: t[c] may be zero
    second = x * t[c]
    second += t[x] * c  # second = t[x] * c where t[c] is zero
    t[y] += 0.5 * first + 0.5 * second


def test_updates_of_temporaries_with_zero_terms():
    f = lambda u, k: np.sum(scale_in_steps(u, k) ** 2)
    np.testing.assert_allclose(srcad.jvp(f, (U, K), (np.ones(3), None))[1], np.sum(2 * K * K * U))
    for wrt in (0, 1, (0, 1)):
        check_jvp(f, (U, K), wrt=wrt)
        check_grads(f, (U, K), wrt=wrt)
    np.testing.assert_allclose(srcad.hvp(lambda u: f(u, 0.7))(U, np.ones(3)), 2 * K * K * np.ones(3))


# ---- a zero tangent where its term cannot be dropped exactly is refused -------------------

@srcad.custom_vjp
def scale_by_calls(x, c):
    return x * c


@scale_by_calls.defvjp
def scale_by_calls_vjp(y, x, c):
    d[x] += d[y] * c
    d[c] += np.sum(d[y] * x)


@scale_by_calls.defjvp
def scale_by_calls_jvp(y, x, c):
    t[y] += np.multiply(t[x], c) + np.multiply(x, t[c])  # terms-in-calls


def test_a_zero_tangent_inside_a_call_next_to_a_live_one_is_refused():
    f = lambda u, k: np.sum(scale_by_calls(u, k) ** 2)
    with pytest.raises(SrcadError) as caught:
        srcad.jvp(f, (U, K), (np.ones(3), None))
    message = str(caught.value)
    assert line_of("terms-in-calls") in message and "reads t[c], a derivative that is zero here" in message
    assert "write each term as a statement of its own" in message
    check_jvp(f, (U, K), wrt=(0, 1))  # control: both tangents live
    check_grads(f, (U, K), wrt=(0, 1))


@srcad.custom_vjp
def ratio(x, c):
    return x / c


@ratio.defvjp
def ratio_vjp(y, x, c):
    d[x] += d[y] / c
    d[c] += np.sum(-d[y] * x / c ** 2)


@ratio.defjvp
def ratio_jvp(y, x, c):
    t[y] += t[x] / c + c / (c * c / (-x * t[c]))  # zero-denominator


def test_a_zero_denominator_next_to_a_live_term_is_refused():
    with pytest.raises(SrcadError, match="zero-denominator"):
        srcad.jvp(lambda u: np.sum(ratio(u, 2.0)), (U,), (np.ones(3),))


# ---- what the accounted-for check counts -----------------------------------------------------

@srcad.custom_vjp
def scale_reading(x, c):
    return x * c


@scale_reading.defvjp
def scale_reading_vjp(y, x, c):
    d[x] += d[y] * c + 0.0 * d[c]  # reads d[c], never updates it


def test_reading_an_adjoint_does_not_account_for_its_argument():
    f = lambda u, k: np.sum(scale_reading(u, k) ** 2)
    with pytest.raises(SrcadError, match="does not differentiate its argument 'c'"):
        srcad.grad(f, wrt=1)(U, K)
    check_grads(f, (U, K))  # control: c constant, x differentiated


@srcad.custom_vjp
def scatter_scale(x, c):
    return x * c


@scatter_scale.defvjp
def scatter_scale_vjp(y, x, c):
    d[x][0] += d[y][0] * c[0]
    d[x][1:] -= -d[y][1:] * c
    np.add.at(d[c], 0, np.sum(d[y] * x))


def scattered(u, k):
    return np.sum(np.sin(scatter_scale(u, k)) * u)


def test_buffer_updates_stay_allowed():
    check_grads(scattered, (U, np.array([K])), wrt=(0, 1))


# ---- changes to an adjoint through a name, a method or a library function -------------------

def alias_augmented(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    g += 1.0  # alias-augmented


def alias_of_output_scaled(y, x, c):
    g = d[y]
    g *= 2.0  # alias-output-scaled
    d[x] += g * c * 0.5
    d[c] += np.sum(d[y] * x)


def alias_item_store(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    g[0] = 0.0  # alias-item-store


def view_alias(y, x, c):
    d[x] += d[y] * c
    flat = d[x].reshape(-1)
    flat += 1.0  # view-alias


def method_fill(y, x, c):
    d[x] += d[y] * c
    d[y].fill(0.0)  # method-fill


def alias_method_sort(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    g.sort()  # alias-method-sort


def library_copyto(y, x, c):
    d[x] += d[y] * c
    np.copyto(d[y], 0.0)  # library-copyto


def library_multiply_at(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    np.multiply.at(g, 0, 2.0)  # library-multiply-at


def alias_out(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    np.multiply(g, 2.0, out=g)  # alias-out


def alias_in_list(y, x, c):
    d[x] += d[y] * c
    gs = [d[x]]
    gs[0] += 1.0  # alias-in-list


@pytest.mark.parametrize("template, tag", [
    (alias_augmented, "alias-augmented"), (alias_of_output_scaled, "alias-output-scaled"),
    (alias_item_store, "alias-item-store"), (view_alias, "view-alias"), (method_fill, "method-fill"),
    (alias_method_sort, "alias-method-sort"), (library_copyto, "library-copyto"),
    (library_multiply_at, "library-multiply-at"), (alias_out, "alias-out"), (alias_in_list, "alias-in-list"),
])
def test_changing_an_adjoint_through_an_alias_is_refused(template, tag):
    """``g = d[x]; g += 1.0`` changed the adjoint in place (its array), a change srcad does not
    apply as an update: the gradient came out 1 higher, silently."""
    scale = scaled()
    with pytest.raises(SrcadError, match="may change") as caught:
        scale.defvjp(template)
    assert line_of(tag) in str(caught.value)
    assert "compute a new value instead" in str(caught.value)


def fresh_temporaries(y, x, c):
    g = d[y]
    h = g * c  # arithmetic makes a new array: changing it changes no adjoint
    h += 0.0
    h *= 1.0
    d[x] += h
    total = np.sum(g * x)
    d[c] += total


def test_reading_an_adjoint_through_a_name_and_changing_new_values_stay_allowed():
    scale = scaled()
    scale.defvjp(fresh_temporaries)

    def f(x, c):
        return np.sum(np.sin(scale(x, c)))

    check_grads(f, (U, K), wrt=(0, 1))


def _bump(a):
    a += 1.0
    return a


def in_range_loop(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    for i in range(1):
        g += 1.0  # in-range-loop


def in_try(y, x, c):
    d[x] += d[y] * c
    g = d[x]
    try:
        g += 1.0  # in-try
    finally:
        pass


def loop_over_adjoints(y, x, c):
    d[x] += d[y] * c
    for h in [d[x]]:
        h += 1.0  # loop-over-adjoints


def positional_out(y, x, c):
    d[x] += d[y] * c
    np.multiply(d[x], 3.0, d[x])  # positional-out


def operator_iadd(y, x, c):
    d[x] += d[y] * c
    __import__("operator").iadd(d[x], 1.0)  # operator-iadd


def unbound_method(y, x, c):
    d[x] += d[y] * c
    np.ndarray.fill(d[x], 1.0)  # unbound-method


def helper_of_yours(y, x, c):
    d[x] += d[y] * c
    _bump(d[x])  # helper-of-yours


def store_through_call_view(y, x, c):
    d[x] += d[y] * c
    np.reshape(d[x], -1)[...] = 7.0  # store-through-call-view


def walrus_alias(y, x, c):
    d[x] += d[y] * c
    _ = (g := d[x])
    g += 1.0  # walrus-alias


def helper_inside_update(y, x, c):
    d[x] += d[y] * c
    d[x] += _bump(d[x]) * 0.0  # helper-inside-update


@pytest.mark.parametrize("template, tag", [
    (in_range_loop, "in-range-loop"), (in_try, "in-try"), (loop_over_adjoints, "loop-over-adjoints"),
    (positional_out, "positional-out"), (operator_iadd, "operator-iadd"), (unbound_method, "unbound-method"),
    (helper_of_yours, "helper-of-yours"), (store_through_call_view, "store-through-call-view"),
    (walrus_alias, "walrus-alias"), (helper_inside_update, "helper-inside-update"),
])
def test_changes_anywhere_and_by_any_call_are_refused(template, tag):
    """The check covers nested statements, an out given by position, in-place operators, your
    functions (which may write into what they are given) and views made by calls."""
    scale = scaled()
    with pytest.raises(SrcadError, match="may change") as caught:
        scale.defvjp(template)
    assert line_of(tag) in str(caught.value)


def made_new_then_changed(y, x, c):
    a = d[y].copy()
    a *= c
    b = np.zeros_like(d[y])
    b[...] = d[y]
    e = np.where(x > 100.0, 0.0, d[y])
    e *= 0.0
    f = np.multiply(d[y], 1.0)
    f[x > 100.0] = 0.0
    n = len(d[y])
    n += 0
    k = d[y].shape[0]
    k += 1
    total = np.sum(d[y] * x)
    total += 0.0
    d[x] += a + b - f + e
    d[c] += total


def test_new_values_made_from_an_adjoint_may_change():
    scale = scaled()
    scale.defvjp(made_new_then_changed)

    def f(x, c):
        return np.sum(np.sin(scale(x, c)))

    check_grads(f, (U, K), wrt=(0, 1))


def method_reading_an_adjoint(y, x, c):
    d[x] += np.ones_like(x).dot(d[y]) * c * np.ones_like(x) / len(x) + d[y] * c - d[y].sum() * c / len(x)
    d[c] += (x.T).dot(d[y])


def test_a_method_given_an_adjoint_that_only_reads_it_stays_allowed():
    scale = scaled()
    scale.defvjp(method_reading_an_adjoint)

    def f(x, c):
        return np.sum(np.sin(scale(x, c)))

    check_grads(f, (U, K), wrt=(0, 1))
