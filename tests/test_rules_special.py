"""scipy.special rules (srcad/rules/scipy_special.py) against finite differences."""
import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from scipy import special

from srcad import registry
from srcad.rules import scipy_special
from srcad.testing import check_grads, check_jvp
from library_check import samplers
from test_rules_shapes import check_call_jvp, wrt_all

R, positive, unit = samplers(4, positive=(0.5, 3.0), unit=(0.1, 0.9))


def f_expit(x):
    return special.expit(x)


def f_logit(x):
    return special.logit(x)


def f_erf(x):
    return special.erf(x)


def f_erfc(x):
    return special.erfc(x)


def f_gamma(x):
    return special.gamma(x)


def f_gammaln(x):
    return special.gammaln(x)


def f_digamma(x):
    return special.digamma(x)


def f_psi(x):
    return special.psi(x)


def f_xlogy(x, y):
    return special.xlogy(x, y)


def f_xlog1py(x, y):
    return special.xlog1py(x, y)


def f_logsumexp(a):
    return special.logsumexp(a)


def f_logsumexp_axis(a):
    return special.logsumexp(a, axis=1)


def f_logsumexp_axes_keepdims(a):
    return special.logsumexp(a, axis=(0, 2), keepdims=True)


def f_logsumexp_b(a, b):
    return special.logsumexp(a, axis=0, b=b)


def f_logsumexp_sign(a, b):
    value, sign = special.logsumexp(a, b=b, axis=-1, return_sign=True)
    return value * sign


def f_softmax(x):
    return special.softmax(x)


def f_softmax_axis(x):
    return special.softmax(x, axis=0)


def f_log_softmax(x):
    return special.log_softmax(x)


def f_log_softmax_axis(x):
    return special.log_softmax(x, axis=-1)


VJP_CASES = [
    ("expit", f_expit, [R(3, 2)]),
    ("expit-scalar", f_expit, [0.3]),
    ("logit", f_logit, [unit(4)]),
    ("erf", f_erf, [R(4)]),
    ("erfc", f_erfc, [R(2, 2)]),
    ("gamma", f_gamma, [positive(4)]),
    ("gamma-negative", f_gamma, [np.array([-0.5, -1.5, -2.3])]),
    ("gammaln", f_gammaln, [positive(3)]),
    ("gammaln-negative", f_gammaln, [np.array([-0.5, -2.3])]),
    ("digamma", f_digamma, [positive(3)]),
    ("psi", f_psi, [positive(3)]),
    ("xlogy", f_xlogy, [R(3), positive(3)]),
    ("xlogy-broadcast", f_xlogy, [R(2, 3), positive(3)]),
    ("xlog1py", f_xlog1py, [R(3), positive(3)]),
    ("logsumexp", f_logsumexp, [R(3, 4)]),
    ("logsumexp-axis", f_logsumexp_axis, [R(3, 4)]),
    ("logsumexp-axes-keepdims", f_logsumexp_axes_keepdims, [R(2, 3, 2)]),
    ("logsumexp-b", f_logsumexp_b, [R(3, 2), positive(3, 2)]),
    ("logsumexp-b-broadcast", f_logsumexp_b, [R(3, 2), positive(3, 1)]),
    ("logsumexp-return-sign", f_logsumexp_sign, [R(2, 3), R(2, 3)]),
    ("softmax", f_softmax, [R(2, 3)]),
    ("softmax-axis", f_softmax_axis, [R(2, 3)]),
    ("log_softmax", f_log_softmax, [R(4)]),
    ("log_softmax-axis", f_log_softmax_axis, [R(2, 3)]),
]


@pytest.mark.parametrize("name, fun, args", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_vjp(name, fun, args):
    check_grads(fun, args, wrt=wrt_all(args))


FORWARD_CASES = [c for c in VJP_CASES if not c[0].startswith("logsumexp-return-sign")]


@pytest.mark.parametrize("name, fun, args", FORWARD_CASES, ids=[c[0] for c in FORWARD_CASES])
def test_forward_mode(name, fun, args):
    check_jvp(fun, args, wrt_all(args), rtol=1e-4)


def test_forward_mode_adds_the_tangents_of_a_tuple_result():
    """With return_sign, logsumexp's tangent is a tuple with one statement for a and one for b."""
    check_jvp(f_logsumexp_sign, [R(2, 3), R(2, 3)], (0, 1))


def test_xlogy_at_zero():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 0.5])
    gx, gy = check_grads(f_xlogy, [x, y], wrt=(0, 1), v=np.ones(3), directions=0)
    assert np.allclose(gx, [0.0, np.log(3.0), np.log(0.5)])
    assert np.allclose(gy, [0.0, 0.0, 4.0])
    gx, gy = check_grads(f_xlog1py, [x, y - 1.0], wrt=(0, 1), v=np.ones(3), directions=0)
    assert np.allclose(gx, [0.0, np.log(3.0), np.log(0.5)]) and np.allclose(gy, [0.0, 0.0, 4.0])


def f32_special(x):
    return special.expit(x) + special.erf(x) + special.logsumexp(x) + special.softmax(x)


def test_float32_gradients_stay_float32():
    x = R(4).astype(np.float32)
    grad = check_grads(f32_special, [x], wrt=0, eps=1e-3, rtol=2e-3, atol=1e-4)
    assert grad.dtype == np.float32


JVP_CASES = [
    ("expit", special.expit, [R(3)], {}),
    ("logit", special.logit, [unit(3)], {}),
    ("erf", special.erf, [R(3)], {}),
    ("erfc", special.erfc, [R(3)], {}),
    ("gamma", special.gamma, [positive(3)], {}),
    ("gammaln", special.gammaln, [positive(3)], {}),
    ("digamma", special.digamma, [positive(3)], {}),
    ("rgamma", special.rgamma, [np.array([0.0, -1.0, 0.7, -1.5])], {}),  # 0 and -1: the poles of Γ
    ("rgamma_slope", scipy_special.rgamma_slope, [np.array([0.3, -0.6, 0.7, -1.5])], {}),  # its second order
    ("exprel_slope", scipy_special.exprel_slope, [np.array([-0.9, 4e-4, 0.0, 1.6])], {}),  # exprel's second order
    ("spence_slope", scipy_special.spence_slope, [np.array([0.4, 1.0, 2.1])], {}),  # spence's second order
    ("xlogy", special.xlogy, [R(2, 3), positive(3)], {}),
    ("xlog1py", special.xlog1py, [R(3), positive(3)], {}),
    ("logsumexp", special.logsumexp, [R(3, 4)], {"axis": 0}),
    ("logsumexp-keepdims", special.logsumexp, [R(3, 4)], {"axis": 1, "keepdims": True}),
    ("logsumexp-b", special.logsumexp, [R(3, 2)], {"b": positive(3, 2)}),
    ("logsumexp-sign", special.logsumexp, [R(2, 3)], {"b": R(2, 3), "axis": 1, "return_sign": True}),
    ("softmax", special.softmax, [R(2, 3)], {"axis": 1}),
    ("log_softmax", special.log_softmax, [R(2, 3)], {}),
]


@pytest.mark.parametrize("name, function, args, kwargs", JVP_CASES, ids=[c[0] for c in JVP_CASES])
def test_jvp(name, function, args, kwargs):
    wrt = tuple(range(len(args))) + tuple(k for k, v in kwargs.items() if isinstance(v, np.ndarray))
    check_call_jvp(function, args, wrt, kwargs)


def test_every_special_function_has_both_directions():
    for name in ["expit", "logit", "logsumexp", "softmax", "log_softmax", "erf", "erfc", "gamma", "gammaln",
                 "digamma", "xlogy", "xlog1py"]:
        key = getattr(special, name)
        assert registry.lookup(registry.VJP, key) is not None and registry.lookup(registry.JVP, key) is not None


def test_srcad_imports_without_scipy(tmp_path):
    code = textwrap.dedent("""
        import sys
        sys.modules["scipy"] = None  # any import of scipy now fails
        import numpy as np
        import srcad
        from srcad import registry
        from srcad.rules import scipy_special
        assert scipy_special.special is None
        assert not any(rule.fn.__module__ == "srcad.rules.scipy_special" for rule in registry.VJP.values())

        @srcad.differentiable
        def f(x):
            return np.sum(np.sin(x))

        print(f.grad(np.zeros(3)))
    """)
    script = tmp_path / "without_scipy.py"
    script.write_text(code)
    root = str(pathlib.Path(importlib.util.find_spec("srcad").origin).parents[1])
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=root,
                            env={"PYTHONPATH": root, "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert "[1. 1. 1.]" in result.stdout
