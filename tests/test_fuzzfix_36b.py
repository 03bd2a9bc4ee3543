"""Fuzz seed 113701 (program 113701341140): a false refusal new since a2ae706 (52614e3).

``for ...: if c: return a  if d: x += b  else: return x`` is lowered to flags: the second
``if`` runs under ``if not _skip1:``, a test known on the path where the first did not return.
A known test ran its branch alone, and the rest of the block (``if _stop1: break``) followed
the branch's joined facts, so the ``else`` (``_retval1 = x; _stop1 = True``) and the update
were read as reaching the next pass: ``x += b`` was refused as changing the value returned,
for a float ``x`` too. The rest of the block now follows the known branch, so a split inside it
sees the flags the rest tests, as where the test is not known. An update that does reach a
value returned later is still refused.
"""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

X = np.array([0.3, -0.7, 0.45])


def returns_early_or_updates(x, b):
    for _ in range(2):
        if np.sum(x) > 5.0:
            return np.sqrt(b) * x
        if np.sum(x) < 1.0:
            x += b
        else:
            return x
    return x * 2.0


def number_returns_early_or_updates(x, b):
    for _ in range(2):
        if x > 5.0:
            return np.sqrt(b)
        if x < 1.0:
            x += b
        else:
            return x
    return x * 2.0


@pytest.mark.parametrize("x", [X, X + 0.2])  # (updated twice; returned after one update)
def test_an_array_updated_where_the_function_has_not_returned(x):
    check_all_modes(returns_early_or_updates, (x.copy(), 0.3), second=False)  # (an array output)


@pytest.mark.parametrize("x", [0.4, 0.9])
def test_a_number_updated_where_the_function_has_not_returned(x):
    check_all_modes(number_returns_early_or_updates, (x, 0.3))


def test_the_callers_array_is_not_changed():
    x = X.copy()
    y, pullback = srcad.vjp(returns_early_or_updates, x, 0.3)
    pullback(np.ones(3))
    np.testing.assert_array_equal(x, X)
    np.testing.assert_allclose(y, 2.0 * (X + 0.6))


def keeps_then_updates(x, b):
    kept = None
    for _ in range(2):
        if np.sum(x) > 5.0:
            return np.sqrt(b) * x
        if np.sum(x) < 1.0:
            x += b
        else:
            kept = x  # no return: the next pass's update changes what is returned
    return np.sum(kept if kept is not None else x)


def test_an_update_reaching_a_value_returned_later_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="in place"):
        srcad.grad(keeps_then_updates)(X + 0.5, 0.3)
