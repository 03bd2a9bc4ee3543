"""A module's object whose method updates in place what the object holds (or a copy srcad cannot
tell is one) is refused naming the method, where it is defined and the user's line, and saying
to compute a new array or copy with ``np.copy``; that spelling is accepted and its gradient
matches finite differences in every mode, and the module's object is unchanged."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes


class Block:
    def __init__(self, rate):
        self.rate = rate
        self.W = np.linspace(0.1, 0.9, 5)

    def step_on_a_method_copy(self, x):
        s = self.W.copy()  # (its compiled code checks that self.W is an array first)
        s -= x
        s *= self.rate
        return np.sum(np.tanh(s) ** 2)

    def step_on_np_copy(self, x):
        s = np.copy(self.W)
        s -= x
        s *= self.rate
        return np.sum(np.tanh(s) ** 2)

    def step_in_place(self, x):
        s = self.W  # the object's own array: Python changes it at each call
        s -= x
        return np.sum(s ** 2)


BLOCK = Block(0.6)
GLOBAL = np.linspace(-1.0, 1.0, 5)


def shift(a, x):
    a += x
    return np.sum(a ** 2)


def method_copy(x):
    return BLOCK.step_on_a_method_copy(x)


def np_copy(x):
    return BLOCK.step_on_np_copy(x)


def in_place(x):
    return BLOCK.step_in_place(x)


def global_array_shifted(x):
    return shift(GLOBAL, x)


X = np.array([0.3, -0.2, 0.5, 0.1, -0.7])


@pytest.mark.parametrize("fn, method", [(in_place, "Block.step_in_place"),
                                        (global_array_shifted, "shift")])
def test_a_method_updating_what_a_module_object_holds_is_refused_with_advice(fn, method):
    with pytest.raises(srcad.SrcadSyntaxError) as refused:
        srcad.grad(fn)(X)
    message = str(refused.value)
    assert f"the call of {method} (" in message and __file__ in message
    assert "np.copy(self.W)" in message and "Compute a new array there instead" in message
    assert f"return {fn.__code__.co_names[0]}" in message or "return shift(GLOBAL, x)" in message


@pytest.mark.parametrize("fn", [np_copy, method_copy])
def test_the_advised_copy_is_accepted_and_leaves_the_object_unchanged(fn):
    before = BLOCK.W.copy()
    check_all_modes(fn, (X,))
    assert np.array_equal(BLOCK.W, before)


def drops_a_sum(x):
    np.sum(x ** 2)  # (a forgotten assignment)
    return np.sum(np.sin(x))


def drops_a_ufunc(x):
    np.exp(x)
    return np.sum(np.sin(x))


@pytest.mark.parametrize("fn, call", [(drops_a_sum, "np.sum(...)"), (drops_a_ufunc, "np.exp(...)")])
def test_a_pure_call_whose_result_is_dropped_says_so(fn, call):
    """Not "it cannot see what the call changes": NumPy's function changes nothing."""
    with pytest.raises(srcad.SrcadSyntaxError) as refused:
        srcad.grad(fn)(X)
    message = str(refused.value)
    assert f"the result of {call} is not used" in message and "assign it" in message
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}" in message


def doubles_dict_items_in_place(x):
    c = {"a": x * 1.0, "b": x ** 2}
    for k, v in c.items():
        v *= 2.0
    return np.sum(c["a"] * c["b"])


def shifts_list_items_in_place(x):
    L = [x * 1.0, x ** 2]
    for v in L.copy():  # (a copy of the list holds the same arrays)
        v += 1.0
    return np.sum(L[0] * L[1])


def stores_over_dict_items(x):
    c = {"a": x * 1.0, "b": x ** 2}
    for k, v in c.items():  # (a live view of c)
        c[k] = v * 2.0
    return np.sum(c["a"] * c["b"])


def stores_over_dict_keys(x):
    c = {"a": x * 1.0, "b": x ** 2}
    for k in c.keys():
        c[k] = c[k] * 2.0
    return np.sum(c["a"] * c["b"])


def listed_dict_items(x):  # (a new list of c's pairs, as list(c) is of its keys)
    c = {"a": x * 1.0, "b": x ** 2}
    for k, v in list(c.items()):
        c[k] = v * 2.0
    return np.sum(c["a"] * c["b"])


def listed_dict_keys(x):
    c = {"a": x * 1.0, "b": x ** 2}
    for k in list(c.keys()):
        c[k] = c[k] * 2.0
    return np.sum(c["a"] * c["b"])


def advised_for_a_dict(x):
    c = {"a": x * 1.0, "b": x ** 2}
    for k in list(c):
        c[k] = c[k] * 2.0
    return np.sum(c["a"] * c["b"])


def advised_for_a_list(x):
    L = [x * 1.0, x ** 2]
    for i, v in enumerate(L.copy()):
        L[i] = v + 1.0
    return np.sum(L[0] * L[1])


def advised_for_rows(x):
    A = np.outer(x, x)
    for i, row in enumerate(A.copy()):
        A[i] = row + x
    return np.sum(A ** 2)


@pytest.mark.parametrize("fn, advice", [
    (doubles_dict_items_in_place, "'for k in list(d): d[k] = d[k] * ...'"),
    (shifts_list_items_in_place, "'for i, v in enumerate(L.copy()): L[i] = v + ...' for a list"),
    (stores_over_dict_items, "'for k in list(c):', then 'v = c[k]'"),
    (stores_over_dict_keys, "'for k in list(c):', then 'v = c[k]'"),
])
def test_a_loop_updating_its_container_says_what_works(fn, advice):
    """Not "iterate over a copy" of a list of arrays (it holds the same arrays), nor over
    'list(c.keys())' given to a loop over list(c.keys())."""
    with pytest.raises(srcad.SrcadSyntaxError) as refused:
        srcad.grad(fn)(X)
    assert advice in str(refused.value)


@pytest.mark.parametrize("fn", [advised_for_a_dict, advised_for_a_list, advised_for_rows, listed_dict_items,
                                listed_dict_keys])
def test_the_advised_loops_are_accepted(fn):
    check_all_modes(fn, (X,))
