"""A list or dict whose items are one array (``[np.zeros(n)] * k``, ``[z, z]``, ``L.append(z)``
twice), updated in place through one item (``L[0] += v``): NumPy changes every item holding
that array, srcad would differentiate the update of one item alone. Refused when it runs, with
the user's line (probe 16B); lists and dicts of separate arrays, the common case (parameters
in a dict updated in place), are differentiated as before. Values against finite differences."""
import copy
import dataclasses
import types

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError, UnsupportedCaseError
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -0.7, 1.1, 0.5])


def repeated(x):
    L = [np.zeros(4)] * 3
    for i in range(3):
        L[i] += x * (i + 1.0)
    return np.sum(L[0] * x)


def appended_twice(x):
    z = x * 2.0
    L = []
    for i in range(2):
        L.append(z)
    L[1] *= x
    return np.sum(L[0] * x)


def same_array_twice_in_a_dict(x):
    z = x * 2.0
    d = {"a": z, "b": z}
    d["a"] *= x
    return np.sum(d["b"] * x)


def views_of_one_array(x):
    buf = np.zeros(6)
    L = [buf[:4], buf[2:]]
    L[0] += x
    return np.sum(L[1] * x)


@pytest.mark.parametrize("f", [repeated, appended_twice, same_array_twice_in_a_dict, views_of_one_array])
def test_an_update_of_an_array_another_item_holds_is_refused(f):
    with pytest.raises(UnsupportedCaseError, match="another item of the same list or dict") as e:
        srcad.value_and_grad(f)(X)  # before: even the value was not the function's
    assert f.__code__.co_filename in str(e.value)


def separate_arrays(x):
    L = [np.zeros(4) for _ in range(3)]
    for i in range(3):
        L[i] += x * (i + 1.0)
    return np.sum(L[0] * L[2])


def parameters_updated(x):
    params = {"w": x * 1.0, "b": x[:2] * 0.5}
    grads = {"w": np.cos(x), "b": np.sin(x[:2])}
    for name in ("w", "b"):
        params[name] -= 0.1 * grads[name]
    return np.sum(params["w"] ** 2) + np.sum(params["b"])


@pytest.mark.parametrize("f", [separate_arrays, parameters_updated])
def test_separate_arrays_are_updated_and_differentiated(f):
    x = X.copy()
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
    np.testing.assert_array_equal(x, X)


def item_stored_into_another(x):
    L = [np.zeros(3), np.zeros(3)]
    L[1] = L[0]
    L[0] += x
    return np.sum(L[1] ** 2)


def entry_stored_into_another(x):
    d = {"a": np.zeros(3)}
    d["b"] = d["a"]
    d["a"] += x
    return np.sum(d["b"] ** 2)


def nested_twice(x):
    z = np.zeros(3)
    L = [z, [z]]
    L[0] += x
    return np.sum(L[1][0] ** 2)


def appended_inside(x):
    L = [np.zeros(3)]
    L.append([L[0]])
    L[0] += x
    return np.sum(L[1][0] ** 2)


def stored_inside_a_list(x):
    L = [x * 1.0, None]
    L[1] = [L[0]]
    L[0] += x
    return np.sum(L[1][0] * x)


@pytest.mark.parametrize("f", [item_stored_into_another, entry_stored_into_another, nested_twice, appended_inside,
                               stored_inside_a_list])
def test_sharing_made_by_a_store_or_nested_is_refused(f):
    # probe 17A: srcad's forward sweep keeps a stored value as stored, so the update of one
    # item no longer reached the other: the value and the gradient were wrong
    with pytest.raises(UnsupportedCaseError, match="another item of the same list or dict"):
        srcad.value_and_grad(f)(X[:3])


def columns(x):
    Y = np.outer(x, x)
    cols = np.hsplit(Y, 3)
    cols[0] += 1.0
    return np.sum(cols[0] ** 2) + np.sum(cols[1])


def interleaved(x):
    y = np.concatenate([x, x])
    L = [y[::2], y[1::2]]
    L[0] += x
    return np.sum(L[0] ** 2) + np.sum(L[1])


@pytest.mark.parametrize("f", [columns, interleaved])
def test_views_of_one_array_with_no_element_in_common_are_differentiated(f):
    check_grads(f, (X[:3].copy(),))


def advance(state, x):
    state["x"] += 0.5 * state["v"]
    return np.sum(x ** 2)


def scale_then_read(x, y):
    x *= 2.0
    return np.sum(y ** 2)


W0 = np.array([1.0, 2.0])


def scale_global(w):
    w *= 3.0
    return np.sum(W0 * w)


def test_an_argument_updated_in_place_while_another_shares_it_is_refused():
    # probe 18A: srcad updates a copy (your arrays never change), so the other name kept the
    # old values: value_and_grad's value was 5 where Python gives 4.5, d/dv was 0
    s = {"x": np.array([1.0, 2.0]), "v": np.array([1.0, -1.0])}
    x = np.array([1.0, 2.0])
    cases = [(advance, (s, s["x"]), 0), (scale_then_read, (x, x), 0), (scale_then_read, (x, x[1:]), 0),
             (scale_global, (W0,), 0)]
    for f, args, wrt in cases:
        with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
            srcad.value_and_grad(f, wrt=wrt)(*args)
        with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
            srcad.jvp(f, args, tuple(np.ones_like(a) if isinstance(a, np.ndarray) else
                                     {k: np.ones_like(v) for k, v in a.items()} for a in args))
    np.testing.assert_array_equal(s["x"], [1.0, 2.0])
    np.testing.assert_array_equal(W0, [1.0, 2.0])


def _fd(f, args, wrt, eps=1e-6):
    """Central differences of ``f`` in its array argument ``wrt``, each call on fresh copies
    (these functions update their arguments when Python runs them)."""
    out = []
    for e in np.eye(args[wrt].size):
        def at(step):
            moved = copy.deepcopy(list(args))
            moved[wrt] = moved[wrt] + step * e
            return f(*moved)
        out.append((at(eps) - at(-eps)) / (2 * eps))
    return np.array(out)


@pytest.mark.parametrize("f, args, wrt", [
    (advance, ({"x": np.array([1.0, 2.0]), "v": np.array([1.0, -1.0])}, np.array([0.3, 0.4])), 1),
    (scale_then_read, (np.array([1.0, 2.0]), np.array([0.5, -0.5])), 1),
    (scale_global, (np.array([0.5, 0.7]),), 0)])
def test_arguments_that_share_nothing_are_differentiated(f, args, wrt):
    kept = copy.deepcopy(args)
    np.testing.assert_allclose(srcad.grad(f, wrt=wrt)(*args), _fd(f, kept, wrt), rtol=1e-6)
    np.testing.assert_allclose(srcad.jvp(f, args, tuple(np.ones_like(a) if i == wrt else None
                                                         for i, a in enumerate(args)))[1],
                               np.sum(_fd(f, kept, wrt)), rtol=1e-6)


def store_into_one(x, L, M):
    L[0] = 2.0 * x[0]
    return np.sum(x) * M[0]


def sorted_in_place(x, w):
    w.sort()
    return np.sum(x * w)


def ordered_twice(x, d):
    d["a"] += x
    return np.sum(d["b"] * x)


NODES = [np.array([1.0, 2.0, 3.0])]
NODES.append(NODES)  # a list that holds itself


def reads_a_cyclic_global(x, w):
    w *= 2.0
    return np.sum(x * NODES[0]) + np.sum(w)


def test_probe_19a_sharing_and_the_callers_arrays():
    import collections

    x = np.array([0.7, -1.0, 2.0])
    L = [1.0, 2.0]  # one list passed twice: no array in common, but one list
    for run in (lambda: srcad.grad(store_into_one)(x, L, L), lambda: srcad.jvp(store_into_one, (x, L, L),
                                                                                 (np.ones(3), None, None))):
        with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
            run()
    z = np.zeros(3)  # an OrderedDict holding one array twice
    with pytest.raises(UnsupportedCaseError, match="another item of the same list or dict"):
        srcad.grad(ordered_twice)(x, collections.OrderedDict(a=z, b=z))
    w = np.array([3.0, 1.0, 2.0])  # w.sort() on an argument not differentiated: a copy is sorted
    np.testing.assert_allclose(srcad.grad(sorted_in_place)(x, w), np.sort(w))
    srcad.jvp(sorted_in_place, (x, w), (np.ones(3), None))
    np.testing.assert_array_equal(w, [3.0, 1.0, 2.0])
    value, g = srcad.value_and_grad(reads_a_cyclic_global)(x, np.ones(3))  # returned: no endless walk
    assert value == pytest.approx(reads_a_cyclic_global(x, np.ones(3)))


# probe 19A: an argument updated through another name, or sharing memory with a global only a
# helper reads, a module attribute, a dataclass field, an object's attribute or a closure value,
# was not checked: srcad updated a copy and the other name kept the old values (silently wrong)
def through_another_name(w, b):
    v = w
    v *= 2.0
    return np.sum(v * b)


def _doubles(a):
    a *= 2.0
    return a


def through_a_helper(w, b):
    v = _doubles(w)
    return np.sum(v * b)


def _reads_w0(a):
    return np.sum(a * W0)


def global_read_in_a_helper(w):
    w *= 2.0
    return _reads_w0(w)


CFG_MODULE = types.ModuleType("cfg")
CFG_MODULE.W = np.array([1.0, 2.0])


def module_attribute(w):
    w *= 2.0
    return np.sum(w * CFG_MODULE.W)


@dataclasses.dataclass
class Params:
    W: np.ndarray
    b: np.ndarray


CFG = Params(np.array([1.0, 2.0]), np.array([0.5, 0.5]))


def dataclass_field(w):
    w *= 2.0
    return np.sum(w * CFG.W)


def object_argument(p, w):
    w *= 2.0
    return np.sum(w * p.W) + np.sum(p.b)


def _closing_over(K):
    def f(w):
        w *= 2.0
        return np.sum(w * K)
    return f


class _Box:
    def __init__(self, a):
        self.a = a


def item_held_by_an_object(x):
    z = np.zeros(2)
    L = [z, _Box(z)]
    L[0] += x
    return np.sum(L[1].a * x)


SHARED_CASES = [
    (through_another_name, lambda: (W0, W0)), (through_a_helper, lambda: (W0, W0[:])),
    (global_read_in_a_helper, lambda: (W0,)), (module_attribute, lambda: (CFG_MODULE.W,)),
    (dataclass_field, lambda: (CFG.W,)), (object_argument, lambda: (CFG, CFG.W)),
    (_closing_over(W0), lambda: (W0,))]


@pytest.mark.parametrize("f, args", SHARED_CASES, ids=lambda c: getattr(c, "__qualname__", ""))
def test_an_argument_shared_through_names_helpers_and_objects_is_refused(f, args):
    wrt = len(args()) - 1
    with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
        srcad.value_and_grad(f, wrt=wrt)(*args())
    with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
        srcad.jvp(f, args(), tuple(np.ones(2) if i == wrt else None for i in range(len(args()))))
    np.testing.assert_array_equal(W0, [1.0, 2.0])
    np.testing.assert_array_equal(CFG.W, [1.0, 2.0])


@pytest.mark.parametrize("f, args", SHARED_CASES, ids=lambda c: getattr(c, "__qualname__", ""))
def test_the_same_functions_given_their_own_arrays_are_differentiated(f, args):
    fresh = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args())
    wrt = len(fresh) - 1
    np.testing.assert_allclose(srcad.grad(f, wrt=wrt)(*fresh), _fd(f, fresh, wrt), rtol=1e-6)
    np.testing.assert_allclose(srcad.jvp(f, fresh, tuple(np.ones(2) if i == wrt else None
                                                         for i in range(len(fresh))))[1],
                               np.sum(_fd(f, fresh, wrt)), rtol=1e-6)


def test_an_item_an_object_in_the_same_list_holds_is_refused():
    # (the object of yours may keep what it was given: refused as that, first, since round 25B)
    with pytest.raises(SrcadError, match=r"another item of the same list or dict|may share memory that "
                                                   r"'_Box\(\.\.\.\)' keeps"):
        srcad.value_and_grad(item_held_by_an_object)(np.array([1.0, 2.0]))


def test_an_argument_a_helper_updates_is_not_the_callers_when_not_differentiated():
    # probe of this fix: _doubles(w) carries no derivative when only b is differentiated, so
    # srcad ran it as written, on the caller's array (doubled by grad and by jvp)
    w, b = np.array([1.0, 2.0]), np.array([0.5, -1.5])
    np.testing.assert_allclose(srcad.grad(through_a_helper, wrt=1)(w, b), 2.0 * w)
    np.testing.assert_allclose(srcad.jvp(through_a_helper, (w, b), (None, np.ones(2)))[1], np.sum(2.0 * w))
    np.testing.assert_allclose(srcad.vjp(through_a_helper, w, b, wrt=1)[1](1.0), 2.0 * w)
    np.testing.assert_array_equal(w, [1.0, 2.0])
