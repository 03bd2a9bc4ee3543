"""Regressions from merging the memory analysis (aliasing) with list adjoints (control2).

- srcad refused its own second-order adjoint: a list adjoint ``container_grad(np.broadcast_to(d, s), L)``
  was taken to possibly *be* the cotangent argument, so ``dL.pop()`` looked like an update of the
  caller's memory. A list grows or shrinks only as the list object; ``np.broadcast_to`` is an array.
- ``names.pop(0)`` on a list without derivatives was refused: the call's own read of its receiver
  counted as an earlier read, as did the list display that built it, and its key argument counted
  as changed.
- A copy taken before an in-place update of a name bound in a branch not taken read an unbound name.
"""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

X = np.array([0.4, 0.3, 0.7])


def view_in_a_branch(x):
    y = x * 1.0
    s = 0.0
    if x[0] > 0.0:
        r = y[1:]
        s = np.sum(np.sin(r))
    y[1] = 0.0
    return s + np.sum(y * y)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_copy_before_an_update_of_a_view_bound_in_a_branch_not_taken(sign):
    x = X * np.array([sign, 1.0, 1.0])
    check_grads(view_in_a_branch, (x,), modes=("rev",))
    check_jvp(view_in_a_branch, (x,))
    check_jvp(srcad.grad(view_in_a_branch), (x,))


def scalars_popped_after_a_reduction(x):
    acc = []
    for i in range(3):
        acc.append(np.sin(x[i]) * x[i])
    m = np.mean(acc)
    last = acc.pop()
    return m * last + np.sum(acc)


def test_second_order_of_a_list_adjoint_made_by_a_reduction():
    check_jvp(srcad.grad(scalars_popped_after_a_reduction), (X.copy(),))
    check_grads(srcad.grad(scalars_popped_after_a_reduction), (X.copy(),), v=np.array([0.3, -1.2, 0.5]))


def pop_keyed_by_a_name(x):
    keys = ["a", "b", "c"]
    key = keys.pop(1)
    scale = {"a": 2.0, "b": 3.0}.pop(key)
    return np.sum(x * scale) * len(keys)


def test_pop_on_containers_without_derivatives_is_supported():
    check_grads(pop_keyed_by_a_name, (X.copy(),), modes=("rev",))
    check_jvp(pop_keyed_by_a_name, (X.copy(),))


def index_list_popped_after_use(x):
    idx = [2, 0, 1]
    y = x[idx]
    idx.pop(0)
    return np.sum(np.sin(y)) * len(idx)


def update_through_a_broadcast_view(x):
    r = np.broadcast_to(x, (2, 3))
    r[0] = 1.0
    return np.sum(r)


def test_refusals_that_protect_values_stay():
    # the reverse sweep reads idx for x[idx]: popping it must still be refused
    with pytest.raises(SrcadSyntaxError, match=r"\.pop\(\) changes in 'idx'"):
        srcad.grad(index_list_popped_after_use)(X.copy())
    # a broadcast view of an argument is the argument's memory
    with pytest.raises(SrcadSyntaxError, match=r"shares memory with the argument 'x'"):
        srcad.grad(update_through_a_broadcast_view)(X.copy())


def pop_index_after_a_read(x):
    items = [x * 2.0, np.sin(x)]
    t = items[0]
    v = items.pop(0)
    return np.sum(v * t)


def test_pop_with_an_index_is_refused_precisely_even_after_a_read():
    # the pop refusal (activity) runs before the memory analysis, whose advice would only lead there
    with pytest.raises(SrcadSyntaxError, match=r"items\.pop\(\.\.\.\) with an index, a key or a default") as info:
        srcad.grad(pop_index_after_a_read)(X.copy())
    assert info.value.lineno == pop_index_after_a_read.__code__.co_firstlineno + 3
    with pytest.raises(SrcadSyntaxError, match=r"items\.pop\(\.\.\.\) with an index"):
        srcad.jvp(pop_index_after_a_read, (X.copy(),), (np.ones(3),))
