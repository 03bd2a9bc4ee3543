"""The rule-author API: user rules, custom_vjp, non-differentiable functions, stop_gradient."""
import numpy as np
import pytest
import scipy.special

import srcad
from srcad import registry
from srcad.errors import SrcadError
from conftest import load_example
from srcad.testing import check_grads

@pytest.fixture(scope="module")
def example():
    return load_example("custom_rules")


def test_rule_for_a_library_function(example):
    z = np.array([-1.0, 0.5, 2.0])
    check_grads(example.omega_energy, (z,))


def test_custom_vjp_is_used_inside_and_alone(example):
    X = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, -3.0]])
    w = np.array([0.3, -0.2])
    check_grads(example.smooth_hinge, (w, X))
    assert "expit" in srcad.differentiable(example.smooth_hinge).adjoint_source
    # the hand-written rule is stable where the derived one would overflow
    assert srcad.grad(example.softplus)(1000.0) == 1.0
    with np.errstate(over="raise"):
        assert srcad.grad(example.softplus)(-1000.0) == 0.0


def test_nondifferentiable_and_stop_gradient(example):
    x = np.array([0.3, 0.9])
    np.testing.assert_allclose(srcad.grad(example.quantized_energy)(x), example.bucket(x) + x)


def test_registering_twice_is_an_error(example):
    with pytest.raises(SrcadError, match="already registered"):
        @srcad.extend.register_vjp(scipy.special.wrightomega)
        def again(y, x):
            d[x] += d[y]  # noqa: F821


def test_rule_with_unknown_name_is_an_error():
    def fake(x):
        return x

    @srcad.extend.register_vjp(fake)
    def fake_rule(y, x):
        d[x] += d[y] * not_defined_anywhere(x)  # noqa: F821

    def uses(x):
        return fake(x) * 2.0

    with pytest.raises(SrcadError, match="not_defined_anywhere"):
        srcad.grad(uses)(1.0)
    del registry.VJP[fake]
