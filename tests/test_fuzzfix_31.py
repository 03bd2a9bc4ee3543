"""Fuzz campaign 31 (seeds 113648...): regressions for what it found."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused

W = np.linspace(-0.5, 0.7, 4)


# ---- a try nested in a try body reads the outer body's names as the outer lowering renamed them -----
# (seed 113648341065, hvp: the adjoint's own try around a user's try; the inner try started the
# outer body's '_try1_r' as None, "bound nowhere else": a TypeError, or a wrong gradient where None
# was only tested for truth)

def inner_reads_outer_body_name(r, w):
    try:
        s = r * 2.0
        try:
            t = np.sin(w) * (s if s > 0.77 else 0.5)
            s = 0.45
        except ValueError:
            t = w
    except ArithmeticError:
        t = w * 2.0
    return np.sum(t * t)


def inner_tests_outer_body_name_for_truth(r, w):
    try:
        s = r - 0.6
        try:
            t = np.sin(w) * r * (1.0 if s else 2.0)
            s = 0.45
        except ValueError:
            t = w
    except ArithmeticError:
        t = w * 2.0
    return np.sum(t)


def inner_reads_name_bound_before_both(r, w):
    a = w * r
    try:
        try:
            a = a * w
            b = np.tanh(a)
        except ValueError:
            a, b = w, w
    except ArithmeticError:
        a, b = w, w
    return np.sum(b * a)


def inner_handler_leaves_a_name_stale(r, w):
    a = w * r
    try:
        try:
            a = a * w
            b = np.tanh(a)
        except ValueError:
            b = w
    except ArithmeticError:
        a, b = w, w
    return np.sum(b * a)


def inner_handler_runs(r, w):
    try:
        s = r * w
        try:
            if np.sum(s) > -10.0:
                raise ValueError("always")
            t = s
        except ValueError:
            t = np.cos(s) * r
    except ArithmeticError:
        s, t = w, w
    return np.sum(t * s)


def nothing(z):
    pass


def spread_call_in_finally(r, w):
    # the adjoint wraps this try in one of its own: a nested try at second order
    try:
        t = np.sin(w) * (r if r > 0.77 else 0.5) * r
        r = 0.45
    except (ValueError, ArithmeticError):
        t = w
    finally:
        u = nothing(*[w])
    return np.sum(t * w)


@pytest.mark.parametrize("fn", [inner_reads_outer_body_name, inner_tests_outer_body_name_for_truth,
                                inner_reads_name_bound_before_both, inner_handler_runs, spread_call_in_finally])
@pytest.mark.parametrize("r", [0.3, 0.9])
def test_a_try_nested_in_a_try_body_sees_the_outer_body_names(fn, r):
    for wrt in (0, 1):
        check_all_modes(fn, (r, W), wrt=wrt)


def test_a_nested_handler_leaving_a_name_stale_is_refused_naming_the_users_name():
    message = refused(inner_handler_leaves_a_name_stale, 0.3, W, line_text="except ValueError:",
                      message="'a' is bound in this try body and read after the exception handler")
    assert "_try" not in message


# ---- f(*seq, **mapping): seq fills the parameters it has items for, the mapping the rest -----------
# (seed 113651340954: self.act(*(x,)) of a held functools.partial(radius, c=1.27) is
# radius(*(x,), **self.act.keywords); srcad demanded seq fill every parameter, raising its own
# TypeError "*(x,) must hold 2 items for radius()" where Python binds c from the mapping)

import functools  # noqa: E402


def radius(z, c, shift=0.25):
    return c * np.sin(z) + shift * z


KW = {"c": 1.27}


def short_sequence_global_mapping(x):
    return np.sum(radius(*(x,), **KW))


def short_sequence_argument_mapping(x, kw):
    return np.sum(radius(*[x * 2.0], **kw))


def full_sequence_mapping_of_the_default(x):
    return np.sum(radius(*(x, x[0]), **{"shift": x[1]}))


class Held:
    def __init__(self):
        self.act = functools.partial(radius, c=1.27)

    def total(self, x):
        return np.sum(self.act(*(x,)) + self.act(*(x[::-1],), shift=0.5))


HELD = Held()


def held_partial_spread(x):
    return HELD.total(x)


@pytest.mark.parametrize("fn, extra", [(short_sequence_global_mapping, ()),
                                       (short_sequence_argument_mapping, ({"c": 0.7, "shift": -0.3},)),
                                       (full_sequence_mapping_of_the_default, ()), (held_partial_spread, ())])
def test_a_short_sequence_leaves_its_parameters_to_the_mapping(fn, extra):
    check_all_modes(fn, (W,) + extra)


def spread_against(x, seq, kw):
    return np.sum(radius(*seq, **kw) * x)


@pytest.mark.parametrize("seq, kw, message", [
    ((0.5,), {"z": 0.1, "c": 2.0}, "multiple values for argument 'z'"),
    ((0.5, 1.0, 2.0, 3.0), {}, "positional argument"),
    ((0.5,), {"shift": 2.0}, "argument: 'c'"),
])
def test_a_bad_sequence_and_mapping_raise_as_in_python(seq, kw, message):
    with pytest.raises(TypeError) as plain:
        spread_against(W, seq, kw)
    assert message in str(plain.value)
    with pytest.raises(TypeError):
        srcad.grad(spread_against)(W, seq, kw)


# ---- a method inlined for its * arguments is made for its object's class ---------------------------
# (seed 113650340952: OBJ.outer(*(x,)) of a module-level object whose class overrides the method
# outer calls was inlined resolving self.special as the defining class's, then refused when it ran:
# "self.special(...) on this Smooth object calls Smooth.special, not Plain.special")

class Plain:
    def special(self, x):
        return x * 2.0

    def outer(self, x):
        return self.special(x) * x


class Smooth(Plain):
    def special(self, x):
        return np.sin(x)

    def through_self(self, x):
        return np.sum(self.outer(*(x,)))


SMOOTH = Smooth()


def spread_call_of_a_global_objects_method(x):
    return np.sum(SMOOTH.outer(*(x,)))


@pytest.mark.parametrize("fn", [spread_call_of_a_global_objects_method, SMOOTH.through_self])
def test_a_method_inlined_for_a_spread_calls_its_objects_overrides(fn):
    check_all_modes(fn, (W,))
    np.testing.assert_allclose(srcad.grad(fn)(W), np.sin(W) + W * np.cos(W))


def test_a_global_object_of_another_class_later_gets_that_classs_derivative(monkeypatch):
    gradient = srcad.grad(spread_call_of_a_global_objects_method)
    np.testing.assert_allclose(gradient(W), np.sin(W) + W * np.cos(W))
    monkeypatch.setitem(globals(), "SMOOTH", Plain())
    try:
        got = gradient(W)
    except srcad.SrcadError:
        return  # refused: never the other class's derivative
    np.testing.assert_allclose(got, 4.0 * W)


# ---- a function compiled apart with keyword-only parameters keeps its positional defaults ----------
# (seed 113653341137: a module-level `lambda a, c=0.91, *, deg: deg` called leaving c out: its code
# takes every parameter as a plain one, without defaults, and the caller passed only the
# keyword-only defaults: "lambda__forward() missing 1 required positional argument: 'c'", or,
# with two positional defaults and one left out, the value of another parameter's default)

scaled_by_keyword = lambda a, b=1.0, c=2.0, *, deg: a * b * c * deg  # noqa: E731
scaled_with_defaults = lambda a, c=0.91, *, deg=2.0: deg * a * c  # noqa: E731


def leaves_the_last_positional_default_out(x):
    return np.sum(scaled_by_keyword(np.sin(x), 5.0, deg=1.5))


def leaves_every_default_out(x):
    return np.sum(scaled_with_defaults(np.sin(x)))


@pytest.mark.parametrize("fn, factor", [(leaves_the_last_positional_default_out, 15.0),
                                        (leaves_every_default_out, 1.82)])
def test_positional_defaults_of_a_function_with_keyword_only_parameters(fn, factor):
    check_all_modes(fn, (W,))
    np.testing.assert_allclose(srcad.grad(fn)(W), factor * np.cos(W))


LAYERS = [Plain(), Smooth()]


def spread_calls_of_the_items_of_a_global_list(x):
    total = 0.0
    for layer in LAYERS:
        total = total + np.sum(layer.outer(*(x,)))
    return total


def test_an_items_method_inlined_for_a_spread_calls_its_classs_overrides():
    # (seed 113653341174: each branch of the items' classes was inlined as the defining class's)
    check_all_modes(spread_calls_of_the_items_of_a_global_list, (W,))
    np.testing.assert_allclose(srcad.grad(spread_calls_of_the_items_of_a_global_list)(W),
                               4.0 * W + np.sin(W) + W * np.cos(W))
