"""Refusals whose advice was wrong: what they say to do now works."""
import numpy as np
import pytest

import srcad


def shadowing_module_parameter(x, np=np):
    return np.sum(np.sin(x))


def module_parameter(x, xp=np):
    return xp.sum(xp.sin(x))


def test_a_parameter_named_like_its_module_default_is_refused_with_advice_that_works():
    x = np.array([0.3, 0.7])
    with pytest.raises(srcad.SrcadError, match=r"give the parameter a name of its own: xp=np") as refusal:
        srcad.grad(shadowing_module_parameter)(x)
    assert "(np=np)" not in str(refusal.value)
    assert np.allclose(srcad.grad(module_parameter)(x), np.cos(x))  # what it advises
