"""srcad.testing.check_grads checks what a user's rule can get wrong: reverse mode (defvjp),
forward mode (defjvp), and with order=2 the derivative of the gradient (a rule right to first
order whose own derivative is wrong)."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads

X = np.array([0.3, 0.7, -1.2])


def _sine(wrong_vjp=False, wrong_jvp=False, frozen=False):
    """sin with its rules; ``frozen``: their slope cos(x) has no derivative of its own (right to
    first order only)."""
    s = srcad.custom_vjp(lambda x: np.sin(x))
    if frozen:
        @s.defvjp
        def s_vjp(y, x):
            d[x] += d[y] * np.cos(srcad.stop_gradient(x))  # noqa: F821 (a template)

        @s.defjvp
        def s_jvp(y, x):
            t[y] += t[x] * np.cos(srcad.stop_gradient(x))  # noqa: F821
        return s

    @s.defvjp
    def s_vjp(y, x):
        d[x] += d[y] * (np.sin(x) if wrong_vjp else np.cos(x))  # noqa: F821

    @s.defjvp
    def s_jvp(y, x):
        t[y] += t[x] * (np.sin(x) if wrong_jvp else np.cos(x))  # noqa: F821
    return s


def _loss_of(s):
    def loss(x):
        return np.sum(s(x) ** 2)
    return loss


def test_a_wrong_vjp_rule_fails():
    with pytest.raises(AssertionError, match="directional derivative"):
        check_grads(_loss_of(_sine(wrong_vjp=True)), (X.copy(),))


def test_a_wrong_jvp_rule_fails_by_default_and_in_forward_mode():
    loss = _loss_of(_sine(wrong_jvp=True))
    check_grads(loss, (X.copy(),), modes=("rev",))  # its vjp is right
    for modes in (None, ("fwd",)):
        with pytest.raises(AssertionError, match="jvp of .*finite differences give"):
            check_grads(loss, (X.copy(),), modes=modes)


def test_a_rule_right_to_first_order_only_fails_at_second_order_in_each_mode():
    loss = _loss_of(_sine(frozen=True))
    check_grads(loss, (X.copy(),))  # first order: right
    for modes in (("rev",), ("fwd",)):
        with pytest.raises(AssertionError, match="second order"):
            check_grads(loss, (X.copy(),), order=2, modes=modes)


def test_a_right_rule_passes_in_both_modes_to_second_order():
    loss = _loss_of(_sine())
    g = check_grads(loss, (X.copy(),), v=1.0, order=2)
    np.testing.assert_allclose(g, 2 * np.sin(X) * np.cos(X))


def test_forward_mode_srcad_refuses_is_left_out_by_default_and_raised_when_asked():
    s = srcad.custom_vjp(lambda x: np.sin(x))

    @s.defvjp
    def s_vjp(y, x):
        d[x] += d[y] * np.cos(x)  # noqa: F821

    loss = _loss_of(s)
    check_grads(loss, (X.copy(),))
    with pytest.raises(SrcadError, match="no forward-mode rule"):
        check_grads(loss, (X.copy(),), modes=("fwd",))


def test_modes_and_order_are_checked():
    with pytest.raises(ValueError, match="modes"):
        check_grads(np.sin, (X.copy(),), modes=("reverse",))
    with pytest.raises(ValueError, match="order"):
        check_grads(np.sin, (X.copy(),), order=3)
