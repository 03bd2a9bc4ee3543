"""Regression from the fuzzer (seed 71123214057): an array taken out of a tuple (a helper's
result) and read with an index array that repeats a position got its adjoint by
``db[idx] = db[idx] + g``, where NumPy keeps only the last write to a repeated position: a
silent wrong gradient. An index array now always scatters with ``np.add.at``."""
import numpy as np
import pytest

from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order


def pair(v, scale):
    return (v, v * scale)


def repeated_rows_of_a_helper_result(x):
    first, second = pair(x.reshape(3, 4), 0.5)
    return second[[0, 1, 2, 0]] + first[[2, 2]].sum()


def repeated_items_of_a_tuple(x):
    t = (x * 2.0, np.sin(x))
    chosen = t[1]
    return chosen[[1, 1, 3]] * t[0][[0, 0, 0]]


@pytest.mark.parametrize("fun", [repeated_rows_of_a_helper_result, repeated_items_of_a_tuple],
                         ids=lambda f: f.__name__)
def test_an_index_array_that_repeats_a_position_accumulates(fun):
    x = np.random.default_rng(3).standard_normal(12)
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))
    check_second_order(lambda_free_sum(fun), (x,))


def lambda_free_sum(fun):
    return SUMS[fun.__name__]


def sum_of_rows(x):
    return np.sum(repeated_rows_of_a_helper_result(x) ** 2)


def sum_of_items(x):
    return np.sum(repeated_items_of_a_tuple(x) ** 2)


SUMS = {"repeated_rows_of_a_helper_result": sum_of_rows, "repeated_items_of_a_tuple": sum_of_items}
