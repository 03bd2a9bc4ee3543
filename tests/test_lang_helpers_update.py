"""A helper that updates an array argument in place, called from a solver loop (issue 10):
``iterate(field, alpha)`` in a heat-equation solver was refused ("cannot see what the call
changes"); a helper of the same module (or of the function) called for its effect is now
inlined with its parameters standing for the caller's arrays, so the update is the caller's
own and the aliasing check judges it as such. Checked against finite differences in reverse
(joint and pullback twice), forward and second order."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from lang_checks import check_all_modes

U0 = np.array([0.0, 1.0, 0.5, 0.2, 0.0])


def iterate(field, alpha):
    field[1:-1] = field[1:-1] + alpha * (field[2:] - 2.0 * field[1:-1] + field[:-2])


def heat(u0, alpha):
    u = u0.copy()
    for _ in range(4):
        iterate(u, alpha)
    return np.sum(u ** 2)


def relax(field, weights, *, rate=0.5):
    field[:] = field + rate * np.tanh(weights * field)


def relaxed(u0, w):
    u = u0 * 1.0
    for _ in range(3):
        relax(u, w, rate=0.3)
    return np.sum(u * w)


def local_update(u0):
    def damp(values, factor):
        values[0] = values[0] * factor
        values[-1] = values[-1] * factor
    u = u0 + 1.0
    damp(u, 0.5)
    damp(u, u0[2])
    return np.sum(np.sin(u))


@pytest.mark.parametrize("wrt", [0, 1])
def test_heat_equation_solver(wrt):
    check_all_modes(heat, (U0, 0.2), wrt=wrt)


@pytest.mark.parametrize("wrt", [0, 1])
def test_update_with_keyword_only_rate(wrt):
    check_all_modes(relaxed, (U0, U0[::-1] + 0.5), wrt=wrt)


def test_local_helper_updating_its_argument():
    check_all_modes(local_update, (U0,))


def test_argument_array_not_changed():
    before = U0.copy()
    srcad.grad(heat)(U0, 0.2)
    srcad.jvp(heat, (U0, 0.2), (U0, None))
    np.testing.assert_array_equal(U0, before)


def test_update_seen_through_another_name_refused():
    def f(u0):
        u = u0 * 1.0
        kept = u
        iterate(u, 0.1)
        return np.sum(kept)

    with pytest.raises(SrcadSyntaxError, match="shares memory") as e:
        srcad.grad(f)(U0)
    assert e.value.filename == __file__


def bump(field, amount):
    field += amount  # in place for an array (the caller sees it), a rebinding for a number


def bumped(u0):
    u = u0 * 1.0
    bump(u, u0 ** 2)
    return np.sum(u ** 3)


def test_augmented_assignment_to_a_parameter_updates_the_callers_array():
    check_all_modes(bumped, (U0,))


def test_augmented_assignment_to_a_number_parameter_is_refused():
    def f(x):
        s = x * 1.0
        bump(s, 0.5)  # Python: s unchanged (bump rebinds its own name)
        return s

    with pytest.raises(srcad.SrcadError, match="'field \\+= \\.\\.\\.' in bump, which is called for its effect, "
                                               "changes the caller's value in place only where it is a NumPy array; "
                                               "here it is a float"):
        srcad.grad(f)(2.0)


# ---- a helper whose result is used, updating the caller's *parameter* in place -------------------
# Fuzzer seed 112901341868: srcad runs such a helper on a copy, so where the caller's argument
# was read again it saw the value before the update, a silent wrong value and gradient. A local
# argument was refused already; a parameter of the caller now is too.

def rescale(a, array=1.05):
    array /= 1.5
    return array.sum() * a


def rescale_twice(x, c):
    first = rescale(x, c)
    return rescale(first, array=c)


def calls_rescale_twice(x):
    return rescale_twice(np.sum(x), np.where(0.5, 0.73, 0.63))


@pytest.mark.parametrize("fn, args", [(rescale_twice, (np.array([0.5, -0.2]), np.where(0.5, 0.73, 0.63))),
                                      (calls_rescale_twice, (np.array([0.5, -0.2]),))])
def test_a_parameter_read_after_a_helper_updated_it_is_refused(fn, args):
    with pytest.raises(SrcadSyntaxError, match=r"rescale\(\.\.\.\) updates its argument 'c' in place, and 'c' is "
                                               r"read after the call"):
        srcad.value_and_grad(fn)(*args)


def test_a_parameter_the_helper_updates_but_nobody_reads_again_is_fine():
    def once(x, c):
        return rescale(np.sum(x), c)

    x = np.array([0.5, -0.2])
    value, grad = srcad.value_and_grad(once)(x, np.array(0.73))
    assert value == pytest.approx(once(x, np.array(0.73)))
    np.testing.assert_allclose(grad, np.full(2, 0.73 / 1.5))


HISTORY = []
LOGGER = __import__("logging").getLogger("srcad.tests.effects")


def logs_its_loss(x):
    y = np.sum(np.sin(x) ** 2)
    LOGGER.debug("loss=%s", y)  # a logging call only formats its arguments
    HISTORY.append(srcad.stop_gradient(y))  # a global list keeps a value without derivative
    return y * np.sum(x)


def keeps_its_loss(x):
    y = np.sin(x)
    HISTORY.append(y)  # read back below as a global: it would carry no derivative
    return np.sum(HISTORY[-1] * 2.0)


def test_a_value_logged_or_kept_without_derivative_is_differentiated_through():
    HISTORY.clear()
    check_all_modes(logs_its_loss, (np.array([0.3, -1.2, 0.8]),))
    assert HISTORY and all(np.ndim(h) == 0 for h in HISTORY)


def test_a_value_with_a_derivative_stored_in_a_global_list_is_refused_with_what_to_do():
    x = np.array([0.3, 0.5])
    for attempt in (lambda: srcad.grad(keeps_its_loss)(x), lambda: srcad.jvp(keeps_its_loss, (x,), (x,))):
        with pytest.raises(SrcadSyntaxError, match="srcad.stop_gradient\\(y\\)") as info:
            attempt()
        assert info.value.lineno == keeps_its_loss.__code__.co_firstlineno + 2


def default_rate(p, k=1.0):
    return np.tanh(p) * k


def falls_back_to_a_default(x):
    a = x[0]
    a = default_rate(0.8)  # a helper of constants, into a name that held a derivative
    return x[1] * a + np.sum(x ** 2)


def test_a_helper_of_constants_rebinding_a_differentiated_name():
    x = np.array([0.3, 0.9])
    check_all_modes(falls_back_to_a_default, (x,))
    np.testing.assert_allclose(srcad.grad(falls_back_to_a_default)(x), [0.6, np.tanh(0.8) + 1.8], rtol=1e-12)
