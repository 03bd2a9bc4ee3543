"""Red-team programs for the constructs srcad accepts since 33ef700 (dispatch tables, class
reads, sparse operands, base calls): each checked in every mode against central finite
differences and Python's value, inputs unchanged, or refused clearly."""
import functools

import numpy as np
import pytest

import srcad

import lang_checks

X = np.array([0.3, -0.5, 1.1, 0.7])


check_unchanged = functools.partial(lang_checks.check_unchanged, value=True)


# ---- dispatch tables ---------------------------------------------------------------------------

SWAPPED = {"a": np.tanh, "b": np.sin}


def swap_items():
    SWAPPED["a"], SWAPPED["b"] = SWAPPED["b"], SWAPPED["a"]


def bound_then_table_changed_by_a_helper(x, k="a"):
    fn = SWAPPED[k]  # Python keeps tanh in fn, whatever the table holds later
    h = fn(x)
    swap_items()
    y = fn(h)
    swap_items()
    return np.sum(y ** 2)


def test_an_item_bound_to_a_name_is_the_item_python_read_though_a_helper_changes_the_table():
    check_unchanged(bound_then_table_changed_by_a_helper, X)
    assert SWAPPED == {"a": np.tanh, "b": np.sin}


# ---- classes -----------------------------------------------------------------------------------

class AnswersAnyName(type):
    def __getattr__(cls, name):
        return 7.0


class WithMetaclass(metaclass=AnswersAnyName):
    c = 2.0

    def energy(self, x):
        return np.sum(self.c * x ** 2)


def object_of_a_class_whose_metaclass_answers_any_name(x):
    return WithMetaclass().energy(x)


def test_a_class_whose_metaclass_answers_any_name_is_refused_not_a_crash():
    with pytest.raises(srcad.SrcadError, match="WithMetaclass"):
        srcad.grad(object_of_a_class_whose_metaclass_answers_any_name)(X)


def test_methods_of_a_class_whose_metaclass_answers_any_name_every_mode():
    model = WithMetaclass()
    check_unchanged(lambda x: WithMetaclass.energy(model, x) + np.sum(WithMetaclass.c * x), X)


# ---- sparse operands ---------------------------------------------------------------------------

def _sparse():
    from scipy import sparse
    return sparse.csr_matrix(np.random.default_rng(3).normal(size=(4, 4)) + 4 * np.eye(4))


SPARSE = _sparse()


def product_then_operand_updated(x):
    y = x.copy()
    y[0] = 2.0 * y[1]
    z = SPARSE @ y  # a new array: updating y after it changes nothing z holds
    y[1] = 5.0
    return np.sum(z ** 2) + np.sum(SPARSE @ y)


def test_a_sparse_product_is_new_memory_at_second_order_too():
    check_unchanged(product_then_operand_updated, X)
