"""Arguments srcad could not see (probe 24B bug_01, bug_04, bug_05, bug_06):

- builtin ``sum(items, start)`` is ``start`` itself where ``items`` is empty: its result shares
  ``start``'s memory, so an in-place update of it is refused where ``start`` is read after
  (it was differentiated as if ``start`` were unchanged);
- a library call's ``*seq`` or ``**mapping`` whose contents srcad cannot read when it compiles
  the code (a global, a parameter) is refused where it may fill ``out``, ``copy`` or the like
  (``np.array(y, **OPTS)`` with ``copy=False``, ``np.sin(x, **kw)`` with ``out=``, ``np.clip(x,
  *bounds)`` with three bounds), in forward mode as in reverse; a display (written there, or
  bound just before) is read as the arguments it holds;
- ``sum(groups, [])`` joins lists: refused in forward mode as in reverse (it crashed there).
"""
import numpy as np
import pytest

import srcad

from lang_checks import check_all_modes

X = np.array([0.3, -1.2, 0.8])
OPTS = {"copy": False}
BOUNDS = (-0.5, 0.5, np.zeros(3))
SHAPE = (3,)
HERE = __file__.rsplit("/", 1)[-1]


def line_of(fn, text):
    """``file:line`` of the first line of ``fn`` holding ``text``, as srcad's messages name it."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return f"{HERE}:{first + next(k for k, line in enumerate(lines) if text in line)}"


def every_mode(f, x=X):
    check_all_modes(f, (x,))
    np.testing.assert_allclose(srcad.jacobian(f, mode="fwd")(x), srcad.jacobian(f, mode="rev")(x), rtol=1e-10)


def refused_in_every_mode(f, message, where, x=X):
    """Refused, with ``message`` at ``where``, by grad, vjp, jvp, jacobian (both) and hvp."""
    runs = [lambda: srcad.grad(f)(x), lambda: srcad.vjp(f, x)[1](1.0), lambda: srcad.jvp(f, (x,), (np.ones_like(x),)),
            lambda: srcad.jacobian(f, mode="fwd")(x), lambda: srcad.jacobian(f, mode="rev")(x),
            lambda: srcad.hvp(f)(x, np.ones_like(x))]
    for run in runs:
        with pytest.raises(srcad.SrcadError, match=message) as caught:
            run()
        assert where in str(caught.value)


# ---- sum(items, start) may be start itself ------------------------------------------------------

def total_field(x):  # bug_01: no couplings, so total IS base
    base = np.sin(x)
    couplings = []
    total = sum((c * x for c in couplings), base)
    total *= 0.5
    return np.sum(total) + np.sum(base ** 2)


def total_field_by_keyword(x):
    base = np.sin(x)
    total = sum([], start=base)
    total[0] = 5.0 * total[1]
    return np.sum(total * base)


def list_start(x):  # sum([], L) is L: appending to the result appends to L
    L = [x * 1.0]
    M = sum([], L)
    M.append(x ** 2)
    return np.sum(L[-1])


def flattened_then_updated(x):  # the flattened list holds the arrays themselves
    y = np.sin(x)
    groups = [[y], [x ** 2]]
    flat = sum(groups, [])
    flat[0] *= 2.0
    return np.sum(y * x)


@pytest.mark.parametrize("f, shared, update", [
    (total_field, "base", "total *= 0.5"), (total_field_by_keyword, "base", "total[0] ="),
    (list_start, "L", "M.append("), (flattened_then_updated, "y", "flat[0] *=")])
def test_an_update_of_a_sum_with_a_start_is_refused_where_the_start_is_read_after(f, shared, update):
    refused_in_every_mode(f, f"'{shared}'", line_of(f, update))


def start_not_read_after(x):
    base = np.sin(x)
    total = sum([], base)
    total *= 0.5
    return np.sum(total * x)


def fresh_start(x):
    terms = [np.sin(x), x ** 2]
    total = sum(terms, np.zeros(3))
    total *= 0.5
    return np.sum(total * x) + np.sum(terms[0])


def no_start(x):
    terms = [np.sin(x), x ** 2]
    total = sum(terms)
    total *= 0.5
    return np.sum(total * x) + np.sum(terms[1] * terms[0])


def literal_start(x):
    terms = [np.sin(x), x ** 2]
    total = sum(terms, 1.0)
    total *= 0.5
    return np.sum(total * x) + np.sum(terms[0])


@pytest.mark.parametrize("f", [start_not_read_after, fresh_start, no_start, literal_start])
def test_sums_whose_update_reaches_nothing_read_after_are_differentiated(f):
    every_mode(f)


# ---- sum(groups, []) joins lists: refused in forward mode as in reverse -------------------------

def energy(x):  # bug_06
    groups = [[x[0], x[1] ** 2], [np.sin(x[2])]]
    terms = sum(groups, [])
    return terms[0] * terms[1] + terms[2]


def one_group(x):  # the joined list as long as the one group: reverse mode refused it by chance only
    terms = sum([[x[0] * x[1]]], [])
    return terms[0] * 2.0


@pytest.mark.parametrize("f", [energy, one_group])
def test_a_sum_that_joins_lists_is_refused_in_every_mode(f):
    refused_in_every_mode(f, "join or repeat the sequences", line_of(f, "sum("))


# ---- *seq and **mapping whose contents srcad cannot read --------------------------------------------

def copy_through_options(x):  # bug_04: a IS y
    y = np.sin(x)
    a = np.array(y, **OPTS)
    a[0] = 5.0 * a[1]
    return np.sum(y ** 2)


def out_through_a_display(x):  # bug_05: forward mode did not see z written
    z = np.zeros(3)
    np.sin(x * 2.0, **{"out": z})
    return np.sum(z * x)


def out_through_bounds(x):
    y = np.cos(x)
    np.clip(x, *BOUNDS)
    return np.sum(y * BOUNDS[2])


def out_through_a_bound_display(x):
    z = np.zeros(3)
    bounds = (-0.5, 0.5, z)
    a = np.clip(x, *bounds)
    return np.sum(z * x) + np.sum(a)


@pytest.mark.parametrize("f, message, call", [
    (copy_through_options, r"srcad cannot read what \*\*OPTS passes to np\.array\(\.\.\.\).*pass the arguments by name",
     "np.array("),
    (out_through_bounds, r"srcad cannot read what \*BOUNDS passes to np\.clip\(\.\.\.\)", "np.clip("),
    (out_through_a_display, r"np\.sin\(\.\.\.\) with out=", "np.sin("),
    (out_through_a_bound_display, r"np\.clip\(\.\.\.\) with out=", "np.clip(")])
def test_hidden_arguments_that_may_write_or_share_are_refused_in_every_mode(f, message, call):
    refused_in_every_mode(f, message, line_of(f, call))


def nan_to_num_given_options(x, **kw):
    y = np.sin(x)
    a = np.nan_to_num(y, **kw)
    a[0] = 5.0 * a[1]
    return np.sum(y ** 2)


def add_given_the_rest(x, *rest):
    y = np.cos(x)
    np.add(x, x, *rest)
    return np.sum(y * x)


def test_parameters_spread_into_a_library_call_are_refused():
    where = line_of(nan_to_num_given_options, "nan_to_num(")
    for run in (lambda: srcad.grad(nan_to_num_given_options)(X, copy=False),
                lambda: srcad.jacobian(nan_to_num_given_options, mode="fwd")(X, copy=False)):
        with pytest.raises(srcad.SrcadError, match=r"\*\*kw passes to np\.nan_to_num") as caught:
            run()
        assert where in str(caught.value)
    with pytest.raises(srcad.SrcadError, match=r"\*rest passes to np\.add") as caught:
        srcad.jvp(add_given_the_rest, (X, np.zeros(3)), (X, None))
    assert line_of(add_given_the_rest, "np.add(") in str(caught.value)


# ---- what keeps working -------------------------------------------------------------------------------

def spelled_out(x):  # displays: srcad reads their items as the arguments
    pair = (np.sin(x), x ** 2)
    axis = {"axis": 0}
    largest = max(*[x[0] * x[1], x[2]])
    return np.sum(np.maximum(*pair), **axis) + np.einsum("i,i->", *(x, pair[1])) + np.sum(x * x, **{"axis": 0}) + largest


def harmless_spreads(x):  # no parameter these can fill writes or shares: zip, np.zeros' shape
    rows = [np.sin(x), x ** 2]
    total = np.zeros(*SHAPE)
    for a, b in zip(*rows):
        total = total + a * b
    return np.sum(total)


def plain_copy(x):
    y = np.sin(x)
    a = np.array(y)
    a[0] = 5.0 * a[1]
    return np.sum(y ** 2) + np.sum(a * x)


def scaled(a, *, by=1.0, **options):
    return np.sum(np.sin(a) * by) + sum(options.values())


def helper_given_options(x):  # ** to a function of yours: inlined, bound as Python binds it
    opts = {"by": 2.0, "shift": 0.5}
    return scaled(x ** 2, **opts)


@pytest.mark.parametrize("f", [spelled_out, harmless_spreads, plain_copy, helper_given_options])
def test_readable_and_harmless_spreads_are_differentiated(f):
    every_mode(f)
