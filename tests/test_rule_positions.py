"""Arguments given by position bind to the parameters of the function they are given to, not to
the rule's parameters in the rule's order: a rule that leaves out a parameter in the middle
(``np.median``'s ``overwrite_input``) must not hand that argument to the next one
(``keepdims``), which once gave a silent wrong gradient. Such a call is refused; a positional
call the rule covers is differentiated right (finite differences)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([[0.3, -1.2], [2.5, 0.7], [-0.1, 0.4]])


def median_reordering(x):
    y = x * 1.0
    return np.sum(np.median(y, 0, None, True) * y)  # overwrite_input=True, by position


def average_returned(x):
    return np.sum(np.average(x, 0, None, True)[0])  # returned=True, by position


def quantile_out(x):
    return np.sum(np.quantile(x, 0.5, 0, None))  # out=None, by position


@pytest.mark.parametrize("fn, name", [(median_reordering, "overwrite_input"), (average_returned, "returned"),
                                      (quantile_out, "out")])
def test_an_argument_the_rule_leaves_out_is_refused_by_position_too(fn, name):
    # (overwrite_input=True changes y, which the reverse sweep reads: the memory analysis refuses it first)
    refused = f"does not support the argument '{name}' \\(given by position\\)|leave {name} out"
    with pytest.raises(srcad.SrcadSyntaxError, match=refused):
        srcad.grad(fn)(X)


def by_position(x):
    return (np.sum(np.std(x, 0, None, None, 1)) + np.sum(np.median(x, 1, None)) + np.sum(np.quantile(x, 0.7, 1))
            + np.sum(np.clip(x, -0.5, 0.5)) + np.sum(np.where(x > 0, x, x * x)) + np.sum(np.cumsum(x, 1)))


def test_positional_arguments_the_rules_cover():
    check_grads(by_position, (X,), modes=("rev",))
    check_jvp(by_position, (X,))
