"""False refusals of the memory analysis (fuzz campaign h159): ``np.einsum`` of two or more
operands is new memory (``fresh.new_array_call``), and ``list(L)``/``tuple(L)`` of a list keeps
its items' shapes (``shapes``), so a row of ``list([a])[0]`` iterated is proven elements, as
``[a][0]`` is. Each accepted program is checked in every mode against finite differences, its
inputs unchanged; the aliased neighbours (a one-operand einsum, a view of its operand; rows
iterated, which are views) stay refused."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from lang_checks import check_all_modes

A = np.linspace(-0.8, 1.1, 12).reshape(3, 4)


def einsum_matvec_updated(x):
    y = np.einsum('ij,j->i', A, x)
    y *= 2.0
    return np.sum(y * y)


def einsum_product_updated(x):
    y = np.einsum('i,i->i', x, x)
    y += 1.0
    return np.sum(y * x)


def einsum_outer_stored(x):
    P = np.einsum('i,j->ij', x, x)
    P[0, :] = np.sin(x)
    return np.sum(P * P) + np.sum(x * x)


def einsum_scaled_trace_updated(x):
    M = np.outer(x, x)
    d = np.einsum('ii,->i', M, 3.0)  # a diagonal of one operand times a number: new memory
    d *= x
    return np.sum(M * M) + np.sum(d)


def listed_row_iterated(x):
    q = list([x * np.ones((3, 4))])[0]
    t = 0.0
    for p in q[-1, :]:
        p /= 2.0
        t = t + p * p
    return t


def tupled_row_iterated(x):
    q = tuple([np.outer(x, x)])[0]
    t = 0.0
    for p in q[1, :]:
        p *= 3.0
        t = t + p * x[0]
    return t


ACCEPTED = [(einsum_matvec_updated, lambda: np.linspace(0.2, 1.0, 4)),
            (einsum_product_updated, lambda: np.linspace(0.2, 1.0, 4)),
            (einsum_outer_stored, lambda: np.linspace(0.3, 1.2, 3)),
            (einsum_scaled_trace_updated, lambda: np.linspace(0.3, 1.2, 3)),
            (listed_row_iterated, lambda: 0.7),
            (tupled_row_iterated, lambda: np.linspace(0.3, 1.2, 3))]


@pytest.mark.parametrize("f,make", ACCEPTED, ids=[f.__name__ for f, _ in ACCEPTED])
def test_accepted_in_every_mode(f, make):
    x = make()
    before, A_before = np.copy(x), A.copy()
    check_all_modes(f, (x,))
    srcad.grad(f)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(A, A_before)


def einsum_diagonal_updated(x):
    M = np.outer(x, x)
    d = np.einsum('ii->i', M)  # one operand: a view of M's diagonal
    d *= 2.0
    return np.sum(M * M) + np.sum(d)


def einsum_transpose_updated(x):
    M = np.outer(x, x[:2])
    T = np.einsum('ij->ji', M)  # a view of M
    T += 1.0
    return np.sum(M * M) + np.sum(T)


def einsum_of_a_global_updated(x):
    D = np.einsum('ij->ij', A)  # A itself, as a view
    D *= x[0]
    return np.sum(D)


def listed_rows_iterated(x):
    q = list([x * np.ones((3, 4, 2))])[0]
    t = 0.0
    for p in q[-1]:  # rows of q: views, updated in place while iterated
        p /= 2.0
        t = t + np.sum(p * p)
    return t


REFUSED = [(einsum_diagonal_updated, lambda: np.linspace(0.3, 1.2, 3)),
           (einsum_transpose_updated, lambda: np.linspace(0.3, 1.2, 3)),
           (einsum_of_a_global_updated, lambda: np.linspace(0.3, 1.2, 3)),
           (listed_rows_iterated, lambda: 0.7)]


@pytest.mark.parametrize("f,make", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_aliased_neighbours_refused(f, make):
    with pytest.raises(SrcadError, match="in-place update|updates '.*' in place"):
        srcad.grad(f)(make())


def test_one_operand_einsum_is_not_new_memory():
    import gast
    from srcad.passes.fresh import new_array_call

    def call(text):
        return gast.parse(text).body[0].value

    assert new_array_call(np.einsum, call("np.einsum('ij,j->i', a, b)"))
    assert not new_array_call(np.einsum, call("np.einsum('ii->i', a)"))
    assert not new_array_call(np.einsum, call("np.einsum(a, [0, 1], b, [1])"))  # operands by position: not read
    assert not new_array_call(np.einsum, call("np.einsum('ij,j->i', *ops)"))
    a, b = np.arange(9.0).reshape(3, 3), np.arange(3.0)
    for sub in ('ii->i', 'ij->ji', 'ij'):  # why one operand is refused: NumPy returns a view of it
        assert np.shares_memory(np.einsum(sub, a), a)
    for sub in ('ij,j->i', 'ii,i->i', 'ij,->ji', 'ii,->i'):
        for optimize in (False, True):
            ops = (a, b) if ',j' in sub or ',i' in sub else (a, 2.0)
            assert not np.shares_memory(np.einsum(sub, *ops, optimize=optimize), a)
