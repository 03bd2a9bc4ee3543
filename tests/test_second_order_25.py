"""Round 25: derivatives srcad refused (or got wrong) through its own memory analysis, and
itertools.accumulate / copy.copy. Each fix is checked against finite differences in every
mode; each refusal that is right stays, with a message naming the user's code."""
import copy
import itertools
import operator

import numpy as np
import pytest

import srcad

from lang_checks import check_all_modes, refused


def assert_hessian_matches(f, x, eps=1e-6):
    gradient = srcad.grad(f)
    columns = [(gradient(x + eps * e.reshape(x.shape)) - gradient(x - eps * e.reshape(x.shape))).ravel() / (2 * eps)
               for e in np.eye(x.size)]
    np.testing.assert_allclose(np.asarray(srcad.hessian(f)(x)).reshape(x.size, x.size), np.array(columns).T,
                               rtol=1e-5, atol=1e-6)


# ---- a helper returning a tuple, called in a loop, its first item updated in place ---------
# copy_value (a shallow snapshot) returns a tuple as it is: the forward sweep's snapshot of the
# helper's result before the update kept the updated array, so the reverse sweep read its new
# value (a wrong gradient), and srcad's derivative, differentiated again, was refused.

def new_and_view(u):
    return u * 1.0, u[1:]


def tuple_helper_in_a_loop(u):
    for t in range(3):
        a, b = new_and_view(u)
        a[0] = a[0] + 0.1 * b[0]
        u = u + 0.1 * np.sin(a)
    return np.sum(u ** 2)


def exp_and_view(u):
    return np.exp(u), u[1:]  # exp's derivative reads its result, kept for the backward sweep


def tuple_helper_whose_result_is_read_back(u):
    for t in range(3):
        a, b = exp_and_view(u)
        a[0] = a[0] * 3.0 + 0.1 * b[0]
        u = u + 0.1 * np.sin(a)
    return np.sum(u ** 2)


U3 = np.array([0.3, -0.5, 0.8])


def test_hessian_of_a_tuple_helper_in_a_loop():
    check_all_modes(tuple_helper_in_a_loop, (U3,))
    assert_hessian_matches(tuple_helper_in_a_loop, U3)


def test_a_tuple_helper_result_read_by_its_backward_is_saved_before_the_update():
    check_all_modes(tuple_helper_whose_result_is_read_back, (U3,))
    assert_hessian_matches(tuple_helper_whose_result_is_read_back, U3)


def test_a_tuple_helper_result_read_by_its_backward_under_numba():
    pytest.importorskip("numba")
    fast = srcad.differentiable(tuple_helper_whose_result_is_read_back, backend="numba")
    np.testing.assert_allclose(srcad.grad(fast)(U3), srcad.grad(tuple_helper_whose_result_is_read_back)(U3),
                               rtol=1e-12)
    srcad.testing.check_grads(fast, (U3,))


def one_array_twice(u):
    w = u * 1.0
    return w, w[1:]


def tuple_helper_sharing_its_items(u):
    for t in range(3):
        a, b = one_array_twice(u)
        a[1] = a[0] * 2.0  # changes b too
        u = u + 0.1 * np.sin(b[0])
    return np.sum(u ** 2)


def test_control_items_of_a_helper_result_that_share_memory_stay_refused():
    refused(tuple_helper_sharing_its_items, U3, line_text="a[1] = a[0] * 2.0", message="shares memory with 'b'")


def bound_to_none_before_the_loop(u):
    s = 0.0
    v = None
    w = None
    for t in range(3):
        if t > 0:
            s = s + np.sum(w)
        v = u * 1.0
        w = v[1:]
        v[0] = 2.0
    return s + np.sum(v)


def test_advice_never_copies_a_none_bound_before_the_loop():
    # the binding of a name before a loop (w = None) was taken for the one that made it share:
    # "write 'w = (None).copy()'", at the line of 'w = None'
    message = refused(bound_to_none_before_the_loop, U3, line_text="v[0] = 2.0", message="shares memory with 'w'")
    assert "None" not in message
    assert "shares memory with 'w', and" in message  # (not at the line of 'w = None')
    assert "make 'v' a copy where it is assigned" in message


# ---- a name bound in one branch, held over to the next pass of a loop ---------------------
# What a branch made in an earlier pass stayed "new" on the path through the other branch, so
# after the two joined, last pass's array (held in prev, or in srcad's d_mu) and this pass's
# (in a) looked like the same memory.

def taking_turns(x):
    acc = x * 0.0
    prev = x * 1.0
    for i in range(3):
        if i % 2 == 0:
            a = x * 2.0
        else:
            a = np.sin(x)
        a[0] = a[0] * a[1]
        acc = acc + prev * x
        prev = a
    return np.sum(acc ** 2)


def test_last_pass_s_array_of_a_branch_is_not_this_pass_s():
    check_all_modes(taking_turns, (U3,))


def really_shared(x):
    acc = x * 0.0
    for i in range(3):
        if i % 2 == 0:
            a = x * 2.0
        else:
            a = np.sin(x)
        prev = a
        a[0] = a[0] * a[1]
        acc = acc + prev * x
    return np.sum(acc ** 2)


def test_control_this_pass_s_array_read_through_another_name_stays_refused():
    refused(really_shared, U3, line_text="a[0] = a[0] * a[1]", message="shares memory with 'prev'")


X_EM = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]])


def e_step(mu, logits):
    ll = X_EM @ mu.T + logits
    return np.exp(ll), np.sum(ll)


def m_step(r):
    return r.T @ X_EM, np.log(r.sum(axis=0))


def em(mu0):
    mu, lg = mu0, np.zeros(2)
    for it in range(3):
        r, ll = e_step(mu, lg)
        if it > 10:  # a convergence test: srcad's adjoint makes d_r in a branch, d_mu from it
            break
        mu, lg = m_step(r)
    return ll


def test_hvp_of_an_em_loop_with_a_convergence_break():
    mu0 = 0.03 * np.array([[0.1, 0.0], [0.5, -0.3]])
    check_all_modes(em, (mu0,))
    assert_hessian_matches(em, mu0)


# ---- itertools.accumulate --------------------------------------------------------------------

def joint_angles(q):
    return np.sum(np.cos(list(itertools.accumulate(q))))


def running_products(q):
    return np.sum(np.array(list(itertools.accumulate(q, operator.mul))) ** 2)


def with_a_lambda_and_initial(q):
    return sum(itertools.accumulate(q, lambda a, b: a * np.sin(b) + b, initial=0.5))


def over_rows(W):
    s = 0.0
    for r in itertools.accumulate(W):
        s = s + np.sum(np.tanh(r) * r)
    return s


def running_max_by_keyword(q):
    return np.sum(np.array(list(itertools.accumulate(q, func=max, initial=0.1))) ** 2)


@pytest.mark.parametrize("f, shape", [(joint_angles, (4,)), (running_products, (4,)),
                                      (with_a_lambda_and_initial, (4,)), (over_rows, (3, 2)),
                                      (running_max_by_keyword, (4,))])
def test_itertools_accumulate_in_every_mode(f, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    check_all_modes(f, (x,))


def accumulate_kept(q):
    it = itertools.accumulate(q)
    return np.sum(np.array(list(it)))


def test_an_accumulate_iterator_kept_in_a_name_is_refused():
    refused(accumulate_kept, U3, line_text="it = itertools.accumulate(q)", message="list(itertools.accumulate(...))")


# ---- copy.copy -------------------------------------------------------------------------------

def copied_array(q):
    z = copy.copy(q)  # new memory: updating it leaves the argument as it was
    z[0] = z[0] * 2.0
    return np.sum(z ** 2 * q)


def copied_list(q):
    L = [q[0] * 1.0, q[1] * 2.0]
    M = copy.copy(L)
    M[0] = M[0] * 3.0  # a new list: rebinding its item leaves L's
    return np.sum(L[0] * M[0]) + np.sum(M[1])


def copied_dict(q):
    d = {"a": q * 1.0, "b": np.sin(q)}
    e = copy.copy(d)
    e["a"] = e["a"] ** 2
    return np.sum(d["a"] * e["a"] + e["b"])


@pytest.mark.parametrize("f", [copied_array, copied_list, copied_dict])
def test_copy_copy_in_every_mode(f):
    check_all_modes(f, (U3,))


def copied_list_items_shared(x):
    L = [x * 1.0, x * 2.0]
    M = copy.copy(L)
    row = M[0]
    row[0] = 5.0  # a shallow copy holds L's arrays
    return np.sum(L[0] * x)


def test_control_a_shallow_copy_shares_its_items():
    refused(copied_list_items_shared, U3, line_text="row[0] = 5.0", message="shares memory with 'L'")
