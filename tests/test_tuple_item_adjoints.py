"""A tuple result read only by literal items (``sign, logdet = np.linalg.slogdet(S)``) keeps one
adjoint per item instead of a tuple of zeros (``reverse_stores.split_tuple_results``). Every
program here is checked in every mode against finite differences; the shapes of use that
must not be split (read whole, read in another block, bound twice) are among them, and the
names of the item adjoints are taken by the user's own variables."""
import numpy as np
import pytest

import srcad

from lang_checks import check_all_modes


def unpacked(x):
    sign, logdet = np.linalg.slogdet(np.outer(x, x) + np.eye(4) * 3.0)
    return sign * logdet + logdet ** 2


def item_read_twice(x):
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    a = r[1]
    b = r[1]
    return a * b + np.sin(a)


def only_the_sign(x):
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    return r[0] * np.sum(x ** 2)


def in_a_loop(x):
    total = 0.0
    m = np.outer(x, x) + np.eye(4) * 3.0
    for k in range(3):
        r = np.linalg.slogdet(m * (1.0 + 0.1 * k))
        total = total + r[1] * (k + 1.0)
    return total


def read_in_a_branch(x):  # a read in another block: kept whole
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    if x[0] > 0:
        out = r[1] * 2.0
    else:
        out = r[1] * 3.0
    return out


def read_whole(x):  # the tuple itself is used: kept whole
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    return np.sum(np.stack(r) * np.array([0.5, 2.0])) + r[1]


def bound_twice(x):  # two bindings: kept whole
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    first = r[1]
    r = np.linalg.slogdet(m * 2.0)
    return first * r[1]


def names_taken(x):  # the user's names are those of the item adjoints
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    dr_1 = r[1]
    dr_0 = dr_1 * 2.0
    dm = np.sum(m) * dr_0
    return dm + dr_1


def stacked(x):  # a stack of matrices: the items are arrays
    m = np.stack([np.outer(x, x) + np.eye(4) * 3.0, np.outer(x, x) * 0.5 + np.eye(4) * 2.0])
    r = np.linalg.slogdet(m)
    return np.sum(r[1] * np.array([1.0, -2.0]))


PROGRAMS = [unpacked, item_read_twice, only_the_sign, in_a_loop, read_in_a_branch, read_whole, bound_twice,
            names_taken, stacked]
X = np.array([0.3, -0.7, 1.1, 0.45])


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_every_mode(f):
    check_all_modes(f, (X,))
    check_all_modes(f, (-X,))


def test_split_items_leave_no_tuple_of_zeros():
    source = srcad.differentiable(item_read_twice)
    source.adjoint(X)
    text = source.adjoint_source
    assert "zeros_like" not in text and "item_grad" not in text
    # the result is not needed by the reverse sweep: slogdet runs once, in the forward sweep
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert sum("slogdet(" in line for line in code) == 1


def test_kept_whole_where_read_whole():
    source = srcad.differentiable(read_whole)
    source.adjoint(X)
    assert "item_grad" in source.adjoint_source
