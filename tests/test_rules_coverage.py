"""Every argument that carries a derivative into a rule is accounted for by that rule.

A rule template that never names a parameter in ``d[...]`` (``t[...]``) used to give that
parameter a silent zero when the call differentiated it; such calls are now refused at the
user's line, unless the rule declares the derivative zero (``zero=``)."""
import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import os

import srcad
from srcad import optional_rules, registry
from srcad.errors import SrcadError
from srcad.extend import register_jvp, register_partials, register_vjp
from srcad.testing import check_grads, check_jvp


PACKAGE = os.path.dirname(srcad.__file__)


def scaled(x, a):
    return x * a


@register_vjp(scaled)
def scaled_vjp(y, x, a):
    d[x] += d[y] * a  # forgets a


@register_jvp(scaled)
def scaled_jvp(y, x, a):
    t[y] += t[x] * a  # forgets a


def uses_scaled(x, a):
    return np.sum(scaled(x, a))


@pytest.mark.parametrize("how", ["grad", "jvp"])
def test_a_rule_that_forgets_an_active_argument_is_refused_at_the_users_line(how):
    x = np.array([1.0, 2.0])
    with pytest.raises(SrcadError, match=r"does not differentiate its argument 'a'") as info:
        if how == "grad":
            srcad.grad(uses_scaled, wrt=(0, 1))(x, 3.0)
        else:
            srcad.jvp(uses_scaled, (x, 3.0), (x, 1.0))
    assert "test_rules_coverage.py" in str(info.value)


def test_the_same_rule_serves_when_the_forgotten_argument_is_constant():
    x = np.array([1.0, 2.0])
    check_grads(uses_scaled, (x, 3.0), wrt=0, modes=("rev",))
    check_jvp(uses_scaled, (x, 3.0), wrt=0)


def offset_scaled(x, a, b):
    return x * a + b


@register_partials(offset_scaled)
def offset_scaled_partials(y, x, a, b):
    return {x: a, a: x}  # b left out


def test_partials_cover_only_their_keys():
    x = np.array([0.5, -1.0])
    f = lambda x, a, b: np.sum(offset_scaled(x, a, b) ** 2)  # noqa: E731
    check_grads(f, (x, 2.0, 0.3), wrt=(0, 1), modes=("rev",))
    check_jvp(f, (x, 2.0, 0.3), wrt=(0, 1))
    with pytest.raises(SrcadError, match=r"does not differentiate its argument 'b'"):
        srcad.grad(f, wrt=2)(x, 2.0, 0.3)


def test_zero_must_name_a_parameter():
    def g(x):
        return x

    with pytest.raises(SrcadError, match="zero='q' is not a parameter"):
        register_vjp(g, zero="q")(lambda y, x: None)


def generalized_eig(a, b):
    return np.sum(scipy.linalg.eigh(a, b, eigvals_only=True))


def test_a_silent_zero_found_by_the_check_is_now_refused():
    """scipy.linalg.eigh(a, b) never differentiated b: a generalized problem with an active b
    gave its gradient as zero."""
    a = np.array([[2.0, 0.3], [0.3, 1.0]])
    b = np.array([[1.5, 0.1], [0.1, 1.2]])
    with pytest.raises(SrcadError, match="'b'"):
        srcad.grad(generalized_eig, wrt=1)(a, b)


def test_declared_zero_derivatives_are_right():
    x = np.array([0.3, -1.2, 2.2])

    def f(x):
        return np.sum(np.copysign(x * x, x - 0.1) + np.where(x > 0, x, 2 * x) + np.round(x) * x)

    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))


def test_every_library_rule_accounts_for_its_array_parameters():
    """A census: the parameters srcad's library rules neither differentiate nor declare zero
    are configuration (axes, sizes, flags, dtypes) -- calls that make one active are refused."""
    optional_rules.load_optional_rules()
    config = {"axis", "dtype", "keepdims", "out", "order", "ddof", "shape", "axes", "n", "norm", "k", "side",
              "kind", "casting", "subok", "copy", "like", "axis1", "axis2", "mode", "num", "endpoint", "retstep",
              "decimals", "lower", "overwrite_a", "overwrite_b", "check_finite", "device", "which", "options",
              "offset", "s", "indices_or_sections", "trans", "UPLO", "hermitian", "rcond", "axisa", "axisb",
              "axisc", "correction", "full_matrices", "compute_uv", "upper", "edge_order", "period", "minlength",
              "key", "reverse", "strict", "default", "size", "source", "destination", "shift", "kth", "stable",
              "ndmin", "pad_width", "reflect_type", "stat_length", "unit_diagonal", "assume_a", "transposed",
              "eigvals_only", "type", "subset_by_index", "subset_by_value", "driver", "disp", "blocksize",
              "method", "boundary", "fillvalue", "return_sign", "dimension", "allow_singular", "rtol", "index",
              "indices", "name", "newshape", "start", "reps", "repeats", "ord", "density", "args", "end_values",
              "b", "obj", "q",  # q: a quantile's level (np.quantile), refused when it carries a derivative
              "rowvar", "bias", "metric",
              "deg", "full", "cov", "w",  # np.polyfit's degree and options (w, full, cov refused at run time)
              "p",  # np.linalg.cond's norm (other than None, 2, -2 refused at run time)
              "force", "checks",  # squareform's direction and its input validation
              "zi",  # lfilter's initial conditions (refused at run time)
              # ndimage's filters: output type, boundary value, kernel offsets and widths
              "output", "cval", "origin", "sigma", "truncate", "radius",
              "window_shape", "writeable",  # sliding_window_view's window and its flag (True refused)
              "lwork", "pivoting", "permute_l", "p_indices",  # scipy.linalg.qr's, lu's options (refused at run time)
              "N", "increasing",  # np.vander's columns
              "sparse", "indexing",  # np.meshgrid's layout
              "overwrite_x", "workers", "plan",  # scipy.fft's memory, threads and backend plan (refused)
              "derivative", "initial",  # spherical_jn's flag, cumulative_trapezoid's first total (0 or None)
              "rest"}  # scipy.integrate's integrators' other options
    unaccounted = sorted(
        (kind, registry.describe(key), p.name)
        for kind, table in (("vjp", registry.VJP), ("jvp", registry.JVP))
        for key, rule in table.items()
        # srcad's own rules only (the file first: reading a test's rule, whose file may be gone, can raise)
        if getattr(rule, "filename", "").startswith(PACKAGE) and hasattr(rule, "differentiated")
        and not (getattr(key, "__module__", None) or "").startswith("srcad.")
        for p in rule.params if p.name not in rule.differentiated and p.name not in config)
    assert unaccounted == []


@srcad.custom_vjp
def straight_through(x):
    return np.round(x)


@straight_through.defvjp
def straight_through_vjp(y, x):
    d[x] += d[y]


@srcad.custom_vjp
def straight_through_fwd(x):
    return np.round(x)


@straight_through_fwd.defvjp
def straight_through_fwd_vjp(y, x):
    d[x] += d[y]


@straight_through_fwd.defjvp
def straight_through_fwd_jvp(y, x):
    t[y] += t[x]


def quantized(x):
    return np.sum(straight_through(x) * x)


def quantized_fwd(x):
    return np.sum(straight_through_fwd(x) * x)


@pytest.mark.parametrize("call", [
    lambda x: srcad.jvp(straight_through, (x,), (x,)),
    lambda x: srcad.jvp(quantized, (x,), (x,)),
    lambda x: srcad.jacobian(straight_through, mode="fwd")(x),
    lambda x: srcad.hvp(quantized)(x, x),
])
def test_forward_mode_refuses_a_custom_vjp_without_a_forward_rule(call):
    """Forward mode used to differentiate the body (np.round: zero) while reverse mode used the
    rule (identity): the two modes disagreed silently."""
    with pytest.raises(SrcadError, match=r"straight_through has a custom vjp rule but no forward-mode rule"):
        call(np.array([0.3, 1.2]))


def test_forward_mode_uses_the_forward_rule_of_a_custom_vjp():
    x, u = np.array([0.3, 1.2]), np.array([1.0, -2.0])
    _, tangent = srcad.jvp(straight_through_fwd, (x,), (u,))
    np.testing.assert_allclose(tangent, u)  # the rule's identity, not round's zero
    _, tangent = srcad.jvp(quantized_fwd, (x,), (u,))
    np.testing.assert_allclose(tangent, np.dot(srcad.grad(quantized_fwd)(x), u))  # the two modes agree


def test_reverse_over_reverse_follows_the_custom_vjp():
    """hessian goes reverse over reverse where the gradient's adjoint batches: the rule's
    identity is differentiated, not round's zero."""
    np.testing.assert_allclose(srcad.hessian(quantized)(np.array([0.3, 1.2])), 2 * np.eye(2))
