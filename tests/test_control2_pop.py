"""``pop`` with an index, a key or a default (issue 9).

Forward mode gave a wrong tangent for ``d.pop(key, default)`` (the default's value stood for
its tangent) and reverse mode had no rule: both modes now refuse ``pop`` with arguments on a
container that carries derivatives, at the user's line. ``L.pop()`` (the last item) stays
supported in both modes, and ``pop`` on a container without derivatives is left alone.
"""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, 0.7])


def dict_pop_key(x):
    d = {"a": x * 2.0, "b": x}
    v = d.pop("a")
    return np.sum(v * d["b"])


def dict_pop_default(x):
    d = {"a": x * 2.0, "b": x}
    w = d.pop("c", x * 3.0)
    return np.sum(d["b"] * w)


def list_pop_index(x):
    items = [x * 2.0, np.sin(x)]
    v = items.pop(0)
    return np.sum(v * items[0])


def argument_dict_pop(d):
    v = d.pop("a")
    return np.sum(v * d["b"])


@pytest.mark.parametrize("f", [dict_pop_key, dict_pop_default, list_pop_index])
def test_pop_with_arguments_is_refused_in_both_modes(f):
    with pytest.raises(SrcadSyntaxError, match=r"pop\(\.\.\.\) with an index, a key or a default") as info:
        srcad.grad(f)(X.copy())
    assert info.value.lineno == f.__code__.co_firstlineno + 2
    with pytest.raises(SrcadSyntaxError, match=r"pop\(\.\.\.\) with an index"):
        srcad.jvp(f, (X.copy(),), (np.ones(2),))


def test_pop_from_an_argument_dict_is_refused_before_it_runs():
    d = {"a": X.copy(), "b": X * 3.0}
    with pytest.raises(SrcadSyntaxError, match=r"d\.pop\(\.\.\.\)"):
        srcad.jvp(argument_dict_pop, ({"a": X.copy(), "b": X * 3.0},), ({"a": np.ones(2), "b": np.ones(2)},))
    with pytest.raises(SrcadSyntaxError, match=r"d\.pop\(\.\.\.\)"):
        srcad.grad(argument_dict_pop)(d)
    assert set(d) == {"a", "b"}  # refused before anything ran


def last_item_pop(x):
    items = [x * 2.0, np.sin(x), x ** 2]
    last = items.pop()
    return np.sum(last * items[1]) + np.sum(items[0])


def pop_from_a_list_without_derivatives(x):
    names = ["a", "b", "c"]
    first = names.pop(0)
    scale = {"a": 2.0, "b": 3.0}.pop(first)
    return np.sum(x * scale) * len(names)


@pytest.mark.parametrize("f", [last_item_pop, pop_from_a_list_without_derivatives])
def test_supported_pops(f):
    check_grads(f, (X.copy(),), modes=("rev",))
    check_jvp(f, (X.copy(),))
    check_jvp(srcad.grad(f), (X.copy(),))
