"""Library calls told to use an argument as scratch space (SciPy's ``overwrite_a=True``,
NumPy's ``overwrite_input=True``) change that argument in place, their result assigned or
not: where the reverse sweep reads the argument's values afterwards, the call is refused
(srcad ran it as written and read the scratch values: a silent wrong gradient before)."""
import numpy as np
import pytest
import scipy.linalg as sl
import scipy.ndimage as nd

import srcad
from srcad.testing import check_grads

A0 = np.array([[2.0, 0.3, 0.1], [0.0, 3.0, 0.2], [0.1, 0.0, 4.0]])


def solve_by_keyword(x):
    b = np.array([3.0, 1.0, 2.0])
    z = x * b  # the reverse sweep reads b
    y = sl.solve(a=A0, b=b, overwrite_b=True)
    return np.sum(z ** 2) + np.sum(y)


def solve_by_position(x):
    b = np.array([3.0, 1.0, 2.0])
    z = x * b
    y = sl.solve(A0, b, False, False, True)  # lower=False, overwrite_a=False, overwrite_b=True
    return np.sum(z ** 2) + np.sum(y)


def median_in_place(x):
    b = np.array([3.0, 1.0, 2.0, 5.0])
    z = x * b
    m = np.median(b, overwrite_input=True)  # partitions b
    return np.sum(z ** 2) * m


def solve_as_statement(x):
    b = np.array([3.0, 1.0, 2.0])
    z = x * b
    sl.solve(A0, b, overwrite_b=True)
    return np.sum(z ** 2)


@pytest.mark.parametrize("fn, n", [(solve_by_keyword, 3), (solve_by_position, 3), (median_in_place, 4),
                                   (solve_as_statement, 3)])
def test_an_overwritten_argument_read_by_the_reverse_sweep_is_refused(fn, n):
    x = np.linspace(0.3, -0.4, n)
    with pytest.raises(srcad.SrcadError, match=r"changes in 'b'.*leave overwrite_\w+ out \(or pass False\)"):
        srcad.grad(fn)(x)


def solve_without_scratch(x):
    b = np.array([3.0, 1.0, 2.0])
    z = x * b
    y = sl.solve(A0, b, overwrite_a=False, overwrite_b=False)
    w = sl.solve(A0, b, False, False, False)
    return np.sum(z ** 2) + np.sum(y * w)


def solve_on_a_fresh_copy(x):
    b = np.array([3.0, 1.0, 2.0])
    z = x * b
    y = sl.solve(A0, b.copy(), overwrite_b=True)  # the copy is scratch: b keeps its values
    w = sl.solve(A0, np.copy(b), overwrite_b=True)
    return np.sum(z ** 2) + np.sum(y * w)


@pytest.mark.parametrize("fn", [solve_without_scratch, solve_on_a_fresh_copy])
def test_calls_that_overwrite_nothing_of_yours_are_differentiated(fn):
    x = np.array([0.3, -0.2, 0.5])
    check_grads(fn, (x,))
    d = np.array([0.6, -1.1, 0.4])
    _, tangent = srcad.jvp(fn, (x,), (d,))
    assert np.isclose(tangent, (fn(x + 1e-6 * d) - fn(x - 1e-6 * d)) / 2e-6, rtol=1e-6)
    assert np.isclose(srcad.value_and_grad(fn)(x)[0], fn(x))


def test_a_differentiated_overwritten_argument_is_refused_by_its_rule():
    def f(x):
        A = A0 + x[0]
        return np.sum(sl.solve(A, x, overwrite_a=True))

    with pytest.raises(srcad.SrcadError, match="(overwrite_a other than False|leave overwrite_a out)"):
        srcad.grad(f)(np.array([0.3, -0.2, 0.5]))


G = np.asfortranarray(A0)  # (Fortran order: LAPACK overwrites it, where it would copy a C-ordered one)


def overwrites_a_global(x):
    z = x @ G
    y = sl.solve(G, np.ones(3), overwrite_a=True)
    return np.sum(z ** 2) + np.sum(y)


def test_a_global_overwritten_after_the_reverse_sweep_kept_it_is_refused():
    with pytest.raises(srcad.SrcadError, match="changes in 'G'.*leave overwrite_a out"):
        srcad.grad(overwrites_a_global)(np.array([0.3, -0.2, 0.5]))
    assert np.array_equal(G, A0)


def filter_into_a_buffer(x):
    b = np.array([3.0, 1.0, 2.0, 5.0])
    z = x * b
    r = nd.uniform_filter1d(np.array([1.0, 2.0, 3.0, 4.0]), 3, output=b)  # writes into b, returns b
    return np.sum(z ** 2) + np.sum(r)


def filter_into_a_type(x):
    z = nd.uniform_filter1d(x, 3, output=np.float64)  # a type, not a buffer
    return np.sum(z ** 2)


def test_scipy_output_buffer_is_refused_like_out():
    with pytest.raises(srcad.SrcadError, match="with output="):
        srcad.grad(filter_into_a_buffer)(np.array([0.3, -0.2, 0.5, 0.1]))


def test_scipy_output_type_is_not_a_buffer():
    check_grads(filter_into_a_type, (np.array([0.3, -0.2, 0.5, 0.1]),))
