"""A closure made anew at every step of a loop (``srcad.grad(make(a))`` per step): memory stays
bounded, the captured values are not kept alive, and the code is right for each value captured.

A closure whose cells hold only values (arrays, numbers) shares its compiled code with every other
closure of the same code: no compilation per step. One whose cells hold what the compiler resolved
(a helper function made with it, an object whose method it calls, a dict it indexes) needs code of
its own; the cache keeps at most ``code_cache.MAX_VARIANTS`` of those per code, the least recently
used dropped first."""
import functools
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import srcad
from srcad.code_cache import MAX_VARIANTS
from srcad.compile import _CACHE
from srcad.testing import check_grads


def helper(x):
    return np.tanh(x) * np.sin(x)


def make_valued(a):
    def f(x):
        return np.sum(helper(x) * a)
    return f


def make_with_helper(a):
    def h(x):
        return np.sin(x) * a
    def f(x):
        return np.sum(h(x) * x)
    return f


def make_with_dict(a):
    p = {"w": a}
    def f(x):
        return np.sum(helper(x) * p["w"])
    return f


class Model:
    def __init__(self, W):
        self.W = W

    def loss(self, x):
        return np.sum(helper(x) * self.W)


def make_with_object(a):
    m = Model(a)
    def f(x):
        return m.loss(x) ** 2
    return f


def two_args(x, a):
    return np.sum(helper(x) * a)


def nested_gradient(a, x):
    def inner(y):
        return np.sum(helper(y) * a)
    return srcad.grad(inner)(x)


X = np.linspace(0.1, 1.0, 5)
V = np.linspace(-1.0, 1.0, 5)

VALUED_FORMS = {
    "closure grad": lambda a: srcad.grad(make_valued(a))(X),
    "closure hvp": lambda a: srcad.hvp(make_valued(a))(X, V),
    "lambda": lambda a: srcad.grad(lambda x: two_args(x, a))(X),
    "partial": lambda a: srcad.grad(functools.partial(two_args, a=a))(X),
    "bound method": lambda a: srcad.grad(Model(a).loss)(X),
    "nested def": lambda a: nested_gradient(a, X),
}


def _captured(i):
    return np.full(5, 1.0 + 1e-3 * i)


@pytest.mark.parametrize("form", sorted(VALUED_FORMS))
def test_fresh_closures_of_values_make_no_code_and_keep_no_memory(form):
    call = VALUED_FORMS[form]
    for i in range(5):
        call(_captured(i))
    gc.collect()
    made = _CACHE.made_in_this_thread()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(300):
            call(_captured(i))
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert _CACHE.made_in_this_thread() == made
    assert grown / 300 < 1000  # bytes per call (about 1 measured; a compiled entry is ~50 KB)


def _variants_of(fn):
    return sum(len(v) for v in _CACHE._entries[id(fn.__code__)][1].values())


@pytest.mark.parametrize("make", [make_with_helper, make_with_dict, make_with_object])
def test_fresh_closures_of_resolved_objects_keep_a_bounded_cache(make):
    for i in range(3 * MAX_VARIANTS):
        srcad.grad(make(_captured(i)))(X)
    gc.collect()
    assert _variants_of(make(1.0)) <= MAX_VARIANTS


def test_a_closure_in_use_is_not_dropped_by_fresh_ones():
    kept = make_with_helper(_captured(-1))
    srcad.grad(kept)(X)
    made = _CACHE.made_in_this_thread()
    for i in range(2 * MAX_VARIANTS):
        srcad.grad(make_with_helper(_captured(i)))(X)
        srcad.grad(kept)(X)
    assert _CACHE.made_in_this_thread() - made == 2 * MAX_VARIANTS  # the fresh ones only, never ``kept`` again


@pytest.mark.parametrize("make", [make_valued, make_with_helper, make_with_object])
def test_a_captured_array_is_freed_after_the_loop(make):
    refs = []
    for i in range(20):
        big = np.full((5,), 2.0 + i)
        refs.append(weakref.ref(big))
        srcad.grad(make(big))(X)
        srcad.hvp(make(big))(X, V)
        del big
    gc.collect()
    # a cache entry holds what it was resolved through weakly: nothing captured lives on
    assert [r for r in refs if r() is not None] == []


def _hvp_by_differences(f, x, v, eps=1e-5):
    g = srcad.grad(f)
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


@pytest.mark.parametrize("make", [make_valued, make_with_helper, make_with_dict, make_with_object])
def test_code_is_right_for_each_captured_value_alternating(make):
    first, second = np.linspace(0.5, 1.5, 5), np.linspace(-2.0, 3.0, 5)
    for step in range(6):
        a = first if step % 2 else second
        f = make(a.copy())
        check_grads(f, (X,))
        got = srcad.hvp(make(a.copy()))(X, V)
        np.testing.assert_allclose(got, _hvp_by_differences(f, X, V), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(srcad.grad(f)(X), srcad.grad(make(a))(X), rtol=1e-12)
