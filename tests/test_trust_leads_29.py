"""What compiled code depends on and can change in place after it is compiled: a global
``functools.partial``'s keywords (and a frozen scipy.stats distribution's ``kwds``), whose
names the code passes on one by one, and the closure cell a pass-through ``functools.wraps``
wrapper calls. A change is seen (the code is made again) or refused, never differentiated
stale. Every gradient against finite differences."""
import functools

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads, check_jvp

X = np.array([[0.5, -0.3, 1.2], [0.7, 0.2, -0.9]])


# ---- a global functools.partial of a NumPy function ---------------------------------------

TOTAL = functools.partial(np.sum, axis=0)
CLIP = functools.partial(np.clip, a_min=-0.4, a_max=None)
POWER = functools.partial(np.power, 2.0)


def squared_total(x):
    return np.sum(TOTAL(x) ** 2 * np.arange(1.0, 4.0))


def clipped(x):
    return np.sum(CLIP(x) ** 3)


def powered(x):
    return np.sum(POWER(x))


def test_a_keyword_added_to_a_global_partial_is_seen(monkeypatch):
    """The code passes the partial's keywords by name: one added later (``where=``) was left
    out, a silent stale gradient."""
    made = srcad.differentiable(squared_total)
    made.grad(X)
    monkeypatch.setitem(TOTAL.keywords, "where", np.array([True, False, True]))
    expected = 2 * np.sum(X * [True, False, True], axis=0) * [1.0, 2.0, 3.0] * [True, False, True]
    np.testing.assert_allclose(made.grad(X), np.broadcast_to(expected, X.shape))
    np.testing.assert_allclose(srcad.grad(squared_total)(X), np.broadcast_to(expected, X.shape))
    check_all_modes(squared_total, (X,))


def test_a_keyword_deleted_from_a_global_partial_is_seen(monkeypatch):
    """A key the code reads by name deleted: it failed with a KeyError inside generated code."""
    made = srcad.differentiable(squared_total)
    made.grad(X)
    monkeypatch.delitem(TOTAL.keywords, "axis")
    np.testing.assert_allclose(made.grad(X), np.full(X.shape, 2 * np.sum(X) * 6.0))
    check_all_modes(squared_total, (X,))


def test_a_keyword_value_changed_in_place_is_read_when_the_code_runs(monkeypatch):
    """Values, unlike names, are read from the partial as the code runs: no new code needed."""
    made = srcad.differentiable(squared_total)
    made.grad(X)
    monkeypatch.setitem(TOTAL.keywords, "axis", 1)
    x = X.T.copy()  # three rows: the sums over axis 1 meet the three weights
    expected = 2 * np.sum(x, axis=1) * [1.0, 2.0, 3.0]
    np.testing.assert_allclose(made.grad(x), np.broadcast_to(expected[:, None], x.shape))
    check_all_modes(squared_total, (x,))
    clipping = srcad.differentiable(clipped)
    clipping.grad(X)
    monkeypatch.setitem(CLIP.keywords, "a_max", 0.6)
    np.testing.assert_allclose(clipping.grad(X), 3 * np.clip(X, -0.4, 0.6) ** 2 * ((X > -0.4) & (X < 0.6)))
    check_all_modes(clipped, (X,))


def test_a_partials_arguments_replaced_are_seen(monkeypatch):
    """``partial.args`` is a tuple, replaced whole (``__setstate__``), so guarded by identity."""
    made = srcad.differentiable(powered)
    np.testing.assert_allclose(made.grad(X), np.log(2.0) * 2.0 ** X)
    state = POWER.__reduce__()[2]
    try:
        POWER.__setstate__((np.power, (3.0,), {}, None))
        np.testing.assert_allclose(made.grad(X), np.log(3.0) * 3.0 ** X)
        check_all_modes(powered, (X,))
    finally:
        POWER.__setstate__(state)


# ---- a frozen scipy.stats distribution's kwds ---------------------------------------------

def test_a_keyword_added_to_a_frozen_distribution_is_seen(monkeypatch):
    stats = pytest.importorskip("scipy.stats")
    monkeypatch.setitem(globals(), "PRIOR", stats.norm(loc=0.5))
    made = srcad.differentiable(log_prior)
    np.testing.assert_allclose(made.grad(X), -(X - 0.5))
    monkeypatch.setitem(PRIOR.kwds, "scale", 2.0)
    np.testing.assert_allclose(made.grad(X), -(X - 0.5) / 4.0)
    check_grads(log_prior, (X,), modes=("rev",))
    check_jvp(log_prior, (X,))


def log_prior(x):
    return np.sum(PRIOR.logpdf(x))  # noqa: F821 (bound by the test)


# ---- the closure cell of a pass-through functools.wraps wrapper ----------------------------

SWAPS = {}  # name -> the function that rebinds what the wrapper of that name calls


def swappable(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    def swap(g):
        nonlocal fn
        fn = g
        wrapper.__wrapped__ = g
    SWAPS[fn.__name__] = swap
    return wrapper


@swappable
def shaped(v):
    return v * v


_original_shaped = shaped.__wrapped__


def cubed(v):
    return v * v * np.sin(v)


def quartic(v):
    return v ** 4


def uses_shaped(x):
    return np.sum(shaped(x) * x[0])


def uses_shaped_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(shaped(x * (i + 1.0)))
    return total


@pytest.fixture
def restored():
    yield
    SWAPS["shaped"](_original_shaped)


V = np.array([0.4, -0.7, 1.1])


@pytest.mark.parametrize("f", [uses_shaped, uses_shaped_in_a_loop])
def test_a_wrappers_function_rebound_by_nonlocal_is_seen(f, restored):
    made = srcad.differentiable(f)
    made.grad(V)
    SWAPS["shaped"](cubed)  # nonlocal fn; fn = cubed (and __wrapped__ with it)
    gradient = made.grad(V)
    check_all_modes(f, (V,))
    np.testing.assert_allclose(gradient, srcad.grad(f)(V))
    y, _ = made.vjp(V)
    assert y == pytest.approx(f(V))


def test_a_wrappers_closure_cell_set_from_outside_is_seen(restored):
    """``wrapper.__closure__[0].cell_contents = g`` without ``__wrapped__``: the wrapper no
    longer calls what it says it wraps, so it is no pass-through wrapper any more: refused."""
    made = srcad.differentiable(uses_shaped)
    np.testing.assert_allclose(made.grad(V), 2 * V * V[0] + np.eye(3)[0] * np.sum(V * V))
    (cell,) = [c for name, c in zip(shaped.__code__.co_freevars, shaped.__closure__) if name == "fn"]
    cell.cell_contents = quartic
    with pytest.raises(srcad.SrcadError, match="a decorator's wrapper that does more than"):
        made.grad(V)


def swaps_then_calls(x):
    swap_shaped(quartic)
    return np.sum(shaped(x))


swap_shaped = SWAPS["shaped"]


def swapping(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    def swap(g):
        nonlocal fn
        fn = g
        wrapper.__wrapped__ = g
    wrapper.swap = swap
    return wrapper


@swapping
def squared(v):
    return v * v


def swaps_by_the_wrappers_attribute(x):
    squared.swap(quartic)
    return np.sum(squared(x))


@pytest.mark.parametrize("f", [swaps_then_calls, swaps_by_the_wrappers_attribute])
def test_a_wrappers_function_rebound_while_the_call_runs_is_refused(f, restored):
    """The swap runs after the call's guards were checked: the code would differentiate the
    old function. A function's attributes are what it holds, like an object's (``squared.swap``)."""
    original = squared.__wrapped__
    try:
        with pytest.raises(srcad.SrcadSyntaxError, match="rebinds the variable 'fn' of an enclosing function"):
            srcad.grad(f)(V)
    finally:
        squared.swap(original)


def test_a_wrapped_function_is_never_read_from_a_stale_cache_entry(cache_dir, monkeypatch, restored):
    """The persistent cache described a wrapper by its own code only: code made for the
    function it wrapped was used for another it wraps now (as after an edit, in a new process)."""
    from srcad import code_cache
    from srcad import compile as srcad_compile

    np.testing.assert_allclose(srcad.grad(uses_shaped_in_a_loop)(V), 28 * V)
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    SWAPS["shaped"](quartic)
    np.testing.assert_allclose(srcad.grad(uses_shaped_in_a_loop)(V), 4 * V ** 3 * (1 + 16 + 81))


# ---- a for loop over a vector binds its items, NumPy scalars, never views ----------------

def last_item_after_an_update(x):
    acc = x * 2.0
    total = 0.0
    for kernel in acc:
        total = total + kernel ** 2
    acc[0] = 5.0
    return total * kernel + np.sum(acc * x)


def items_kept_then_scaled(x):
    acc = np.sin(x)
    kept = []
    for i, v in enumerate(acc):
        kept.append(v * i)
    acc *= 2.0
    return sum(kept) * np.sum(acc)


def reversed_and_zipped(x):
    acc = x * 3.0
    for k in reversed(acc):
        first = k
    for a, b in zip(acc[::-1], x):
        last = a * b
    acc += x
    return first * last * np.sum(acc)


def parameter_copy_iterated(x):
    y = x.copy()
    for v in y:
        last = v
    y[-1] = 3.0
    return last * np.sum(y * x)


@pytest.mark.parametrize("f", [last_item_after_an_update, items_kept_then_scaled, reversed_and_zipped,
                               parameter_copy_iterated])
def test_a_loops_items_of_a_vector_are_no_views(f):
    """``for kernel in acc`` of a 1-D array: each item is a NumPy scalar, a copy, so updating
    ``acc`` after the loop leaves it as it was (it was refused as a view of ``acc``)."""
    x = np.array([0.3, -0.2, 0.7, 1.1])
    check_all_modes(f, (x,))


def rows_after_an_update(x):
    acc = np.outer(x, x)
    for row in acc:
        pass
    acc[0] = 1.0
    return np.sum(row * x)


def changed_ahead_of_the_loop(x):
    acc = np.sin(x)
    total = 0.0
    for k in acc:
        acc[2] = 5.0  # Python's loop reads acc[2] after this: the items are not those of a copy
        total = total + k
    return total


def test_rows_of_a_matrix_and_items_changed_ahead_stay_refused():
    x = np.array([0.3, -0.2, 0.7])
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory with 'row'"):
        srcad.grad(rows_after_an_update)(x)
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory with 'row'"):
        srcad.jvp(rows_after_an_update, (x,), (x,))
    for mode in (lambda: srcad.grad(changed_ahead_of_the_loop)(x),
                 lambda: srcad.jvp(changed_ahead_of_the_loop, (x,), (x,))):
        with pytest.raises(srcad.SrcadSyntaxError, match="in-place update of 'acc'"):
            mode()


def iterates_a_parameter(x):
    y = x * 1.0
    for item in y:
        last = item
    y[0] = 2.0
    return np.sum(last * y)


def test_code_proved_for_a_vector_is_not_run_for_a_matrix():
    """Forward mode's code is made once for every shape, except code accepted because the
    shapes proved the items scalars: a matrix argument is checked again (its rows are views)."""
    v, m = np.array([0.3, -0.2, 0.7]), np.array([[0.3, -0.2], [0.7, 1.1]])
    check_jvp(iterates_a_parameter, (v,))
    check_grads(iterates_a_parameter, (v,))
    for mode in (lambda: srcad.jvp(iterates_a_parameter, (m,), (m,)), lambda: srcad.grad(iterates_a_parameter)(m)):
        with pytest.raises(srcad.SrcadSyntaxError, match="shares memory with 'last'"):
            mode()
    check_jvp(iterates_a_parameter, (v[:2],))


# ---- a value that is no function, handed to srcad -----------------------------------------

@pytest.mark.parametrize("make", [lambda f: srcad.vjp(f, V), lambda f: srcad.grad(f), lambda f: srcad.hessian(f),
                                  lambda f: srcad.differentiable(f), lambda f: srcad.jvp(f, (V,), (V,))])
def test_a_value_that_is_no_function_is_refused_saying_what_it_is(make):
    """The fuzzer once made a bound entry 'obj.b', an attribute holding a float: srcad.vjp
    failed inside functools.partial with "the first argument must be callable"."""
    with pytest.raises(srcad.ArgumentError, match=r"srcad differentiates a function, and was given float 0\.93"):
        make(0.93)


def test_the_fuzzers_bound_entries_are_methods(tmp_path):
    """Seeds whose entry was once named like an attribute the generated class sets (``b``)."""
    from fuzz.oracle import load
    from fuzz.program import generate

    for seed in (20261385, 20263108, 20263208):
        program = generate(seed)
        assert callable(load(program.source, tmp_path, program.entry)), program.entry
