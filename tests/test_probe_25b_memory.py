"""Round 25B's silent wrong gradients in the memory analysis, fixed as classes.

1. The result of a callable srcad cannot read (an ``lru_cache``'d function, ``CACHE.get``,
   ``BUF.view``, a ``functools.partial``, a ``weakref``, a classmethod returning ``cls.buf``, an
   object of yours holding a module's array) was taken as new memory: srcad wrote into the
   module's array and missed the update in the derivative. Now only calls known to return new
   memory or their operands' do; an in-place update of any other call's result is refused.
2. A function of yours storing into an attribute (``STATE.last = y``, ``obj.last = y``,
   ``STATE.last += y``) was not counted as updating that object: run as written, the derivative
   through the attribute was lost. Now it is, and the call is refused.
3. A call changing its arguments in place with its result assigned (``r = operator.setitem(y, 0,
   v)``, ``r = heapq.heapify(L)``, ``r = rng.shuffle(y)``) was taken to only read them; now it is
   refused as its statement is (``r = operator.delitem(L, 0)`` crashed with an IndexError).
"""
import bisect
import functools
import heapq
import operator
import random
import re
import types
import weakref

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads

X = np.array([0.3, -0.2, 0.5])
D = np.array([0.7, -0.4, 1.1])


def line_of(marker):
    return next(i for i, text in enumerate(open(__file__), 1) if text.rstrip().endswith(f"# {marker}"))


def check(fn):
    """Reverse mode against finite differences (``check_grads``), and forward mode along ``D``."""
    check_grads(fn, (X,))
    eps = 1e-6
    want = (fn(X + eps * D) - fn(X - eps * D)) / (2 * eps)
    np.testing.assert_allclose(srcad.jvp(fn, (X,), (D,))[1], want, rtol=1e-5, atol=1e-8)


def refused(fn, marker, text, mode="grad", args=(X,)):
    with pytest.raises(SrcadError, match=rf"test_probe_25b_memory\.py:{line_of(marker)}: .*{text}"):
        if mode == "grad":
            srcad.grad(fn)(*[np.array(a, copy=True) for a in args])
        else:
            srcad.jvp(fn, (*args,), (D, *[None] * (len(args) - 1)))


# ---- 1. results of callables srcad cannot read ----------------------------------------------------

@functools.lru_cache(None)
def workspace(n):
    return np.zeros(n)


BUF = np.zeros(3)
CACHE = {"buf": BUF}
get_buf = CACHE.get
BUFS = [np.zeros(3)]
first_buf = functools.partial(operator.getitem, BUFS, 0)
buf_ref = weakref.ref(BUF)


class Pool:
    buf = np.zeros(3)

    @classmethod
    def get(cls):
        return cls.buf


class Holder:
    def __init__(self):
        self.buf = BUF


def cached_workspace(x):
    b = workspace(3)
    b[:] = x  # ws-store
    return np.sum(workspace(3) * x)


def cached_accumulate(x):
    b = workspace(3)
    b[:] = 0.0  # ws-zero
    b += x ** 2
    return np.sum(workspace(3) * x)


def cached_augmented(x):
    b = workspace(3)
    b += x ** 2  # ws-aug
    return np.sum(workspace(3) * x)


def bound_get(x):
    b = get_buf("buf")
    b[:] = x  # get-store
    return np.sum(BUF * x)


def bound_view(x):
    b = BUF.view()
    b[:] = x  # view-store
    return np.sum(BUF * x)


def partial_item(x):
    b = first_buf()
    b[:] = x  # partial-store
    return np.sum(BUFS[0] * x)


def weak_reference(x):
    b = buf_ref()
    b[:] = x  # weakref-store
    return np.sum(BUF * x)


def class_buffer(x):
    b = Pool.get()
    b[:] = x  # classmethod-store
    return np.sum(Pool.buf * x)


def held_buffer(x):
    h = Holder()
    b = h.buf
    b[:] = x  # held-store
    return np.sum(BUF * x)


@pytest.fixture(autouse=True)
def clean_buffers():
    yield
    workspace(3)[:] = 0.0
    BUF[:] = 0.0
    BUFS[0][:] = 0.0
    Pool.buf[:] = 0.0


@pytest.mark.parametrize("fn, marker", [
    (cached_workspace, "ws-store"), (cached_accumulate, "ws-zero"), (bound_get, "get-store"),
    (bound_view, "view-store"), (partial_item, "partial-store"), (weak_reference, "weakref-store")])
def test_an_update_of_what_an_unread_callable_returns_is_refused(fn, marker):
    refused(fn, marker, "may share memory that '.*' keeps: srcad cannot read that call.*copy first")
    assert not np.any(BUF) and not np.any(workspace(3)) and not np.any(Pool.buf) and not np.any(BUFS[0])


def test_an_update_of_what_a_local_object_holds_is_refused_as_the_global_it_is():
    # (the local object is read as its attributes, passes.local_objects: h.buf is BUF itself)
    refused(held_buffer, "held-store", r"shares memory with the global 'BUF'.*copy first \('b = h\.buf\.copy\(\)'\)")
    assert not np.any(BUF)


def direct_class_buffer(x):
    b = Pool.buf
    b[:] = x  # class-attribute-store
    return np.sum(Pool.buf * x)


@pytest.mark.parametrize("fn, marker, copy", [(class_buffer, "classmethod-store", r"np\.array\(Pool\.get\(\)\)"),
                                              (direct_class_buffer, "class-attribute-store", r"Pool\.buf\.copy\(\)")])
def test_an_update_of_a_class_attribute_is_refused(fn, marker, copy):  # a class of yours holds memory
    refused(fn, marker, rf"shares memory with the global 'Pool'.*copy first \('b = {copy}'\)")
    assert not np.any(BUF) and not np.any(workspace(3)) and not np.any(Pool.buf) and not np.any(BUFS[0])


def test_the_refusal_names_the_call_and_the_copy_and_holds_in_forward_mode():
    refused(cached_workspace, "ws-store", r"'workspace\(\.\.\.\)' keeps.*'b = np\.array\(workspace\(3\)\)'")
    refused(cached_workspace, "ws-store", r"'workspace\(\.\.\.\)' keeps", mode="jvp")
    refused(cached_augmented, "ws-aug", r"'workspace\(\.\.\.\)' keeps", mode="jvp")


def copied_workspace(x):  # the advice followed: a copy is the function's own
    b = np.array(workspace(3))
    b[:] = x
    return np.sum(b * x) + np.sum(workspace(3) * x)


def fresh_numpy_results(x):  # NumPy's new arrays, a random draw, updated in place
    b = np.zeros(3)
    b[:] = x
    n = np.random.default_rng(0).normal(size=3) * 0.0
    n += x
    m = np.random.normal(size=3) * 0.0 + 1.0
    m *= x
    return np.sum(b * x) + np.sum(n ** 2) + np.sum(m)


def new_array(y):
    return y * 2.0


def helper_result_updated(x):  # a function srcad reads, returning a new array, updated in place
    b = new_array(x)
    b[0] = 3.0 * x[1]
    b += x
    return np.sum(b * x)


@pytest.mark.parametrize("fn", [copied_workspace, fresh_numpy_results, helper_result_updated])
def test_results_known_to_be_new_memory_are_still_updated_in_place(fn):
    check(fn)
    assert not np.any(workspace(3))


# ---- 2. a function of yours storing into an attribute ---------------------------------------------

STATE = types.SimpleNamespace(last=np.zeros(3))


class Stats:
    last = np.zeros(3)


def remember(y):
    STATE.last = y
    return y


def remember_in_class(y):
    Stats.last = y
    return y


def remember_on(obj, y):
    obj.last = y
    return y


def accumulate(y):
    STATE.last += y
    return y


def remember_through(y):
    remember(y)
    return y


def stored_on_global(x):
    z = remember(x * 2.0)  # attr-global
    return np.sum(STATE.last * x)


def stored_on_class(x):
    z = remember_in_class(x * 2.0)  # attr-class
    return np.sum(Stats.last * x)


def stored_augmented(x):
    z = accumulate(x * 2.0)  # attr-aug
    return np.sum(STATE.last * x)


def stored_through_a_helper(x):
    z = remember_through(x * 2.0)  # attr-nested
    return np.sum(STATE.last * x)


def stored_on_argument(x, st):
    z = remember_on(st, x * 2.0)  # attr-arg
    return np.sum(st.last * x)


@pytest.fixture(autouse=True)
def clean_state():
    yield
    STATE.last = np.zeros(3)
    Stats.last = np.zeros(3)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("fn, marker, where", [
    (stored_on_global, "attr-global", "STATE"), (stored_on_class, "attr-class", "Stats"),
    (stored_augmented, "attr-aug", "STATE"), (stored_through_a_helper, "attr-nested", "STATE")])
def test_a_helper_storing_in_an_attribute_of_a_global_is_refused(fn, marker, where, mode):
    refused(fn, marker, rf"stores what it computes in an attribute of '{where}', a global, and srcad runs the call as "
                        "written", mode=mode)


def test_a_helper_storing_in_an_attribute_of_an_argument_is_refused():
    st = types.SimpleNamespace(last=np.zeros(3))
    refused(stored_on_argument, "attr-arg", r"remember_on\(\.\.\.\), given a value carrying a derivative, stores what "
                                            "it computes in an attribute of 'st' and", args=(X, st))


class Record:
    pass


def tag(y):  # stores on an object of its own
    r = Record()
    r.value = y
    return y * 2.0


def tagged(x):
    z = tag(x * 3.0)
    w = new_array(x)
    w[1] = 2.0 * x[0]
    return np.sum(w * x)


class Counter:
    def __init__(self):
        self.n = 0

    def tick(self):  # (counts the calls; answers the same each time, for the finite differences)
        self.n = self.n + 1
        return 2.0


COUNTER = Counter()


def counted(x):  # a method of yours storing what carries no derivative, each pass
    for _ in range(3):
        x = x * (1.0 + 0.1 * COUNTER.tick())
    return np.sum(x ** 2)


@pytest.mark.parametrize("fn", [tagged, counted])
def test_a_helper_storing_in_its_own_object_or_no_derivative_is_run(fn):
    check(fn)


# ---- 3. in-place calls with their result assigned -------------------------------------------------

def set_first(x):
    y = x * 1.0
    r = operator.setitem(y, 0, x[1] * 3.0)  # op-setitem
    return np.sum(y * x)


def scale_in_place(x):
    y = x * 1.0
    r = operator.imul(y, x)  # op-imul
    return np.sum(y)


def shuffled(x):
    y = x * 1.0
    rng = np.random.default_rng(0)
    r = rng.shuffle(y)  # rng-shuffle
    return np.sum(y * x)


def heap_min(x):
    L = [x[0], x[1] * 2.0, x[2] * 3.0]
    r = heapq.heapify(L)  # heapify
    return L[0] * 2.0 + L[1]


def heap_push(x):
    L = [x[0], x[1] * 2.0]
    r = heapq.heappush(L, x[2] * 0.1)  # heappush
    return L[0] * 2.0 + L[-1]


def insort_last(x):
    L = [x[0], x[1] * 2.0]
    r = bisect.insort(L, x[2] * 3.0)  # insort
    return L[0] * 2.0 + L[-1]


def random_shuffle(x):
    L = [x[0], x[1] * 2.0, x[2]]
    r = random.Random(0).shuffle(L)  # random-shuffle
    return L[0] * 2.0 + L[1]


def mapped_setitem(x):
    y = x * 1.0
    r = list(map(operator.setitem, [y], [0], [x[1] * 3.0]))  # map-setitem
    return np.sum(y * x)


def drop_first(x):
    L = [x[0], x[1] * 2.0, x[2]]
    r = operator.delitem(L, 0)  # delitem
    return L[0] * 2.0 + L[1]


@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("fn, marker, what", [
    (set_first, "op-setitem", "operator.setitem(...)"), (scale_in_place, "op-imul", "operator.imul(...)"),
    (shuffled, "rng-shuffle", ".shuffle()"), (heap_min, "heapify", "heapq.heapify(...)"),
    (heap_push, "heappush", "heapq.heappush(...)"), (insort_last, "insort", "bisect.insort(...)"),
    (random_shuffle, "random-shuffle", ".shuffle()"), (mapped_setitem, "map-setitem", "operator.setitem(...)"),
    (drop_first, "delitem", "operator.delitem(...)")])
def test_an_assigned_call_that_changes_its_arguments_is_refused(fn, marker, what, mode):
    what = re.escape(what)
    refused(fn, marker, rf"(cannot see what the call {what} changes|the call {what} made for its effect)", mode=mode)


def reading_calls(x):  # assigned calls known to leave their arguments alone
    y = x * 2.0
    a = operator.getitem(y, 0)
    b = operator.mul(y, x)
    c = list(map(float, [x[0], x[1]]))
    d = {"k": y}.get("k")
    e = np.random.normal(size=3) * 0.0
    L = [x[0], x[1] * 2.0, x[2] * 3.0]
    k = bisect.bisect_left(L, 10.0)  # (run as written: their results carry no derivative)
    t = functools.reduce(operator.add, L)
    return np.sum(b) + a * c[0] + np.sum(d * x) + np.sum(e) + L[0] * L[1]


def test_assigned_calls_that_only_read_are_differentiated():
    check(reading_calls)
