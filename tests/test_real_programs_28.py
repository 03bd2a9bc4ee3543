"""Real programs refused before (batch 28): a try body filling memory it made itself (a list
comprehension's list, a local array), a try in a module-level helper with **kwargs called from
a loop (refused, with the reason), a class method called through a module-level object.
Gradients against central differences; refusals checked for message and line."""
import math

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused

X = np.array([0.1, -0.4, 0.7])


# ---- a try body that fills memory it made -------------------------------------------------
def comprehension_in_try(x):
    try:
        s = sum([v * 2.0 for v in x])
    except ValueError:
        s = 0.0
    return s * x[0]


def comprehension_raises_half_way(x):  # math.sqrt of the second item raises: the handler's path
    try:
        s = sum([math.sqrt(v) for v in x])
    except ValueError:
        s = np.sum(x ** 2)
    return s


def local_array_filled(x):
    try:
        y = np.zeros(3)
        for i in range(3):
            y[i] = x[i] * x[(i + 1) % 3]
        s = np.sum(y)
    except FloatingPointError:
        s = np.sum(x)
    return s


def dict_comprehension_in_branch(x):
    try:
        if x[2] > 0:
            d = {i: x[i] ** 2 for i in range(3)}
            s = d[0] + d[2]
        else:
            s = np.sum(x)
    except KeyError:
        s = 0.0
    return s


@pytest.mark.parametrize("f", [comprehension_in_try, comprehension_raises_half_way, local_array_filled,
                               dict_comprehension_in_branch])
def test_try_body_fills_memory_it_made(f):
    # (second order differentiates the derivative's own stacks, pushed in the try body: refused)
    check_all_modes(f, (X,), second=False)


def argument_updated_in_try(x):
    y = x * 1.0
    try:
        y[0] = 2.0 * x[1]
    except IndexError:
        pass
    return np.sum(y * x)


def list_made_before_try(x):
    items = []
    try:
        items.append(x * 2.0)
    except ValueError:
        pass
    return np.sum(x)


def made_then_rebound(x, items):
    try:
        a = []
        if x[0] > 0:
            a = items  # the caller's list on this path
        a.append(x * 2.0)
        s = np.sum(a[0])
    except ValueError:
        s = 0.0
    return s


@pytest.mark.parametrize("f, line", [(argument_updated_in_try, "y[0] = 2.0 * x[1]"),
                                     (list_made_before_try, "items.append(x * 2.0)"),
                                     (made_then_rebound, "a.append(x * 2.0)")])
def test_try_body_updating_other_memory_refused_at_its_line(f, line):
    args = (X, []) if f is made_then_rebound else (X,)
    refused(f, *args, line_text=line, message="updates no array, list or dict in place other than those the body made")


# ---- a try in an inlined module-level helper, called from a loop -----------------------------
def scaled_sine(x, **opts):
    k = opts.get("k", 0.5)
    try:
        y = np.sin(x) * k
    except ValueError:
        y = x
    return y


def loop_over_kwargs_helper(x):
    t = 0.0
    for i in range(2):
        t = t + np.sum(scaled_sine(x, k=0.3))
    return t


def plain_sine(x, k=0.5):
    try:
        y = np.sin(x) * k
    except ValueError:
        y = x
    return y


def loop_over_plain_helper(x):
    t = 0.0
    for i in range(2):
        t = t + np.sum(plain_sine(x, 0.3))
    return t


def test_try_in_inlined_helper_called_from_loop_refused_with_reason():
    message = refused(loop_over_kwargs_helper, X, line_text="try:", message="this one is in scaled_sine, which "
                      "srcad inlines into the loop that calls it")
    assert "give scaled_sine plain parameters" in message


def test_same_helpers_without_loop_or_packing():
    check_all_modes(loop_over_plain_helper, (X,))
    check_all_modes(lambda x: np.sum(scaled_sine(x, k=0.3)) * 2.0, (X,))


# ---- a class method through a module-level object ------------------------------------------
class Gain:
    G = 0.5

    @classmethod
    def gain(cls, z):
        return z * cls.G

    @staticmethod
    def fixed(z):
        return z * 0.25


class BigGain(Gain):
    G = 2.0


MODEL = Gain()
BIG = BigGain()


def class_method_through_object(x):
    return np.sum(MODEL.gain(x) ** 2)


def class_method_in_a_test(x):
    if np.sum(MODEL.gain(x)) > 0:
        return np.sum(x ** 2)
    return np.sum(x)


def class_method_of_subclass_object(x):
    return np.sum(BIG.gain(x) * x)


def class_method_in_a_loop(x):
    t = 0.0
    for i in range(2):
        t = t + np.sum(MODEL.gain(x) * x)
    return t


def static_method_through_object(x):
    return np.sum(MODEL.fixed(x) ** 2)


@pytest.mark.parametrize("f", [class_method_through_object, class_method_in_a_test, class_method_of_subclass_object,
                               class_method_in_a_loop, static_method_through_object])
def test_class_method_through_module_level_object(f):
    check_all_modes(f, (X,))


def test_class_method_reads_the_class_it_is_bound_to():
    np.testing.assert_allclose(srcad.grad(class_method_of_subclass_object)(X), 2 * 2.0 * X)


def array_asked_not_to_copy(x):
    y = x * 1.0
    try:
        z = np.array(y, copy=None)  # y itself: its update is one of memory made before the body
        z[0] = 2.0 * x[1]
    except IndexError:
        pass
    return np.sum(y * x)


def test_try_body_updating_an_array_asked_not_to_copy_refused():
    refused(array_asked_not_to_copy, X, line_text="z[0] = 2.0 * x[1]",
            message="updates no array, list or dict in place other than those the body made")


# ---- a decorator on a function defined in the differentiated function (probe 28B): srcad inlined
# the def as written, so `@twice def step(s)` gave sin where Python computes 2 sin, silently

def twice(fn):
    def inner(s):
        return 2.0 * fn(s)
    return inner


@twice
def module_step(s):
    return np.sin(s)


def decorated_local_def(q):
    @twice
    def step(s):
        return np.sin(s)
    return np.sum(step(q))


def decorated_local_lambda_result(q):
    @np.vectorize
    def g(z):
        return z * z
    return np.sum(g(q))


def decorated_module_helper(q):
    return np.sum(module_step(q))


@pytest.mark.parametrize("f", [decorated_local_def, decorated_local_lambda_result])
def test_a_decorated_local_def_is_refused(f):
    q = np.array([-0.3, 0.45, 0.55])
    for mode in (srcad.grad(f), srcad.jacobian(f, mode="fwd")):
        with pytest.raises(srcad.SrcadSyntaxError, match="a function defined in the function with a decorator") as info:
            mode(q)
        assert info.value.filename == __file__ and "@" in info.value.text


def test_a_decorated_module_helper_runs_what_the_decorator_returns():
    q = np.array([-0.3, 0.45, 0.55])
    value, grad = srcad.value_and_grad(decorated_module_helper)(q)
    np.testing.assert_allclose(value, decorated_module_helper(q))
    np.testing.assert_allclose(grad, 2.0 * np.cos(q))


# ---- a method called on a property of a module-level object (M.V.copy()): the property is read
# when the code runs, so the method is its value's; it was refused "name 'M.V.copy' is not defined"
# (found by the fuzzer's methods feature)

class Scaled:
    def __init__(self, s):
        self.W = np.arange(1.0, 4.0) * s

    @property
    def V(self):
        return self.W * 2.0


SCALED = Scaled(0.5)


def method_of_a_property(x):
    return np.sum(SCALED.V.copy() * np.sin(x)) + SCALED.V.sum() * np.sum(x ** 2)


def test_a_method_of_a_property_of_a_module_level_object():
    x = np.array([0.3, -0.4, 0.9])
    check_all_modes(method_of_a_property, (x,))
    before = srcad.grad(method_of_a_property)(x)
    SCALED.W = SCALED.W * 3.0  # the property reads the object's array as it is when the code runs
    try:
        after = srcad.grad(method_of_a_property)(x)
        np.testing.assert_allclose(after, 3.0 * before)
    finally:
        SCALED.W = SCALED.W / 3.0
