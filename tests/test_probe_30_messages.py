"""A refusal for a call with no rule tells the user how to name it in a registration. For a
ufunc's method (``np.add.reduce``) forward mode said ``register_jvp(ufunc.reduce)``, which names
nothing the user can import; it now spells it as the call does, as reverse mode did. (The probe
used ``np.add.reduce``, then ``np.subtract.reduce``, which have rules now: ``np.power.reduce``
has none.)"""
import numpy as np
import pytest

import srcad
from srcad.errors import NoRuleError


def folds(x):
    return np.power.reduce(x ** 2, axis=0).sum()


@pytest.mark.parametrize("mode, register", [("jvp", "register_jvp"), ("grad", "register_vjp")])
def test_a_ufunc_method_without_a_rule_is_named_as_the_call_spells_it(mode, register):
    x = np.array([[1.0, 2.0], [0.5, -1.0]])
    with pytest.raises(NoRuleError) as info:
        if mode == "jvp":
            srcad.jvp(folds, (x,), (np.ones_like(x),))
        else:
            srcad.grad(folds)(x)
    message = str(info.value)
    assert "test_probe_30_messages.py" in message
    assert f"@srcad.extend.{register}(np.power.reduce)" in message
    assert f"{register}(ufunc" not in message
