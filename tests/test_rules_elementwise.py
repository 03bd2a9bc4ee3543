"""Elementwise NumPy and math functions: vjp and jvp rules against finite differences
through srcad, ties, zero derivatives, float32, and ``register_elementwise``."""
import math

import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad import registry
from srcad.errors import SrcadError
from srcad.extend import register_elementwise
from srcad.rules import numpy_elementwise, numpy_exponential, numpy_trigonometric
from srcad.testing import check_grads, check_jvp
from test_rules_shapes import check_call_jvp, jvp_of

SHAPES = [(), (3,), (2, 3)]
PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]

# (key the rule is registered for, function for srcad, domain); key None: the same
# function through an operator, method or attribute
UNARY = [
    (np.sin, lambda x: np.sin(x), (-2, 2)),
    (np.cos, lambda x: np.cos(x), (-2, 2)),
    (np.tan, lambda x: np.tan(x), (-1.2, 1.2)),
    (np.arcsin, lambda x: np.arcsin(x), (-0.9, 0.9)),
    (np.arccos, lambda x: np.arccos(x), (-0.9, 0.9)),
    (np.arctan, lambda x: np.arctan(x), (-3, 3)),
    (np.sinh, lambda x: np.sinh(x), (-2, 2)),
    (np.cosh, lambda x: np.cosh(x), (-2, 2)),
    (np.tanh, lambda x: np.tanh(x), (-2, 2)),
    (np.arcsinh, lambda x: np.arcsinh(x), (-3, 3)),
    (np.arccosh, lambda x: np.arccosh(x), (1.1, 3)),
    (np.arctanh, lambda x: np.arctanh(x), (-0.9, 0.9)),
    (np.exp, lambda x: np.exp(x), (-2, 2)),
    (np.exp2, lambda x: np.exp2(x), (-2, 2)),
    (np.expm1, lambda x: np.expm1(x), (-2, 2)),
    (np.log, lambda x: np.log(x), (0.1, 3)),
    (np.log2, lambda x: np.log2(x), (0.1, 3)),
    (np.log10, lambda x: np.log10(x), (0.1, 3)),
    (np.log1p, lambda x: np.log1p(x), (-0.9, 3)),
    (np.sqrt, lambda x: np.sqrt(x), (0.1, 3)),
    (np.cbrt, lambda x: np.cbrt(x), (0.2, 3)),
    (np.cbrt, lambda x: np.cbrt(-x), (0.2, 3)),
    (np.square, lambda x: np.square(x), (-2, 2)),
    (np.reciprocal, lambda x: np.reciprocal(x), (0.2, 3)),
    (np.reciprocal, lambda x: np.reciprocal(-x), (0.2, 3)),
    (np.negative, lambda x: np.negative(x), (-2, 2)),
    (np.positive, lambda x: np.positive(x), (-2, 2)),
    (np.abs, lambda x: np.abs(x), (-2, 2)),
    (np.absolute, lambda x: np.absolute(x), (-2, 2)),
    (np.fabs, lambda x: np.fabs(x), (-2, 2)),
    (np.deg2rad, lambda x: np.deg2rad(x), (-90, 90)),
    (np.rad2deg, lambda x: np.rad2deg(x), (-2, 2)),
    (np.degrees, lambda x: np.degrees(x), (-2, 2)),
    (np.radians, lambda x: np.radians(x), (-90, 90)),
    (np.sinc, lambda x: np.sinc(x), (-2, 2)),
    (numpy_trigonometric.sinc_slope, lambda x: numpy_trigonometric.sinc_slope(x), (-2, 2)),  # sinc's second order
    (np.nan_to_num, lambda x: np.nan_to_num(x), (-2, 2)),
    (np.real, lambda x: np.real(x), (-2, 2)),
    (np.imag, lambda x: np.imag(x) + x, (-2, 2)),
    (np.conj, lambda x: np.conj(x), (-2, 2)),
    (np.conjugate, lambda x: np.conjugate(x), (-2, 2)),
    (np.i0, lambda x: np.i0(x), (-3, 3)),
    (np.i0, lambda x: np.i0(x), (8, 30)),
    (numpy_exponential.bessel_i1, lambda x: numpy_exponential.bessel_i1(x), (-3, 3)),
    (np.round, lambda x: np.round(x), (-3, 3)),
    (np.around, lambda x: np.around(x), (-3, 3)),
    (None, lambda x: -x, (-2, 2)),
    (None, lambda x: +x, (-2, 2)),
    (None, lambda x: x.conjugate() * x.real + x.imag, (-2, 2)),
]

# array methods and attributes (not on Python floats)
METHODS = [
    lambda x: x.conj() * x.real + x.imag,
    lambda x: x.clip(-0.5, 0.5),
    lambda x: x.clip(max=0.5) * x.clip(min=-0.5),
    lambda x: x.clip(x[0] - 0.5, x[1] + 0.5),
]

MATH_UNARY = [
    (math.sin, lambda x: math.sin(x), (-2, 2)),
    (math.cos, lambda x: math.cos(x), (-2, 2)),
    (math.tan, lambda x: math.tan(x), (-1.2, 1.2)),
    (math.asin, lambda x: math.asin(x), (-0.9, 0.9)),
    (math.acos, lambda x: math.acos(x), (-0.9, 0.9)),
    (math.atan, lambda x: math.atan(x), (-3, 3)),
    (math.sinh, lambda x: math.sinh(x), (-2, 2)),
    (math.cosh, lambda x: math.cosh(x), (-2, 2)),
    (math.tanh, lambda x: math.tanh(x), (-2, 2)),
    (math.asinh, lambda x: math.asinh(x), (-3, 3)),
    (math.acosh, lambda x: math.acosh(x), (1.1, 3)),
    (math.atanh, lambda x: math.atanh(x), (-0.9, 0.9)),
    (math.exp, lambda x: math.exp(x), (-2, 2)),
    (math.expm1, lambda x: math.expm1(x), (-2, 2)),
    (math.erf, lambda x: math.erf(x), (-2, 2)),
    (math.erfc, lambda x: math.erfc(x), (-2, 2)),
    (math.log, lambda x: math.log(x), (0.1, 3)),
    (math.log2, lambda x: math.log2(x), (0.1, 3)),
    (math.log10, lambda x: math.log10(x), (0.1, 3)),
    (math.log1p, lambda x: math.log1p(x), (-0.9, 3)),
    (math.sqrt, lambda x: math.sqrt(x), (0.1, 3)),
    (math.fabs, lambda x: math.fabs(x), (-2, 2)),
    (math.degrees, lambda x: math.degrees(x), (-2, 2)),
    (math.radians, lambda x: math.radians(x), (-90, 90)),
]
if hasattr(math, "exp2"):  # Python 3.11+
    MATH_UNARY.append((math.exp2, lambda x: math.exp2(x), (-2, 2)))
    MATH_UNARY.append((math.cbrt, lambda x: math.cbrt(x), (0.2, 3)))

# (key, function for srcad, domain of x, domain of y)
BINARY = [
    (np.add, lambda x, y: np.add(x, y), (-2, 2), (-2, 2)),
    (np.subtract, lambda x, y: np.subtract(x, y), (-2, 2), (-2, 2)),
    (np.multiply, lambda x, y: np.multiply(x, y), (-2, 2), (-2, 2)),
    (np.divide, lambda x, y: np.divide(x, y), (-2, 2), (0.5, 2)),
    (np.true_divide, lambda x, y: np.true_divide(x, y), (-2, 2), (0.5, 2)),
    (np.power, lambda x, y: np.power(x, y), (0.5, 2), (-2, 2)),
    (np.float_power, lambda x, y: np.float_power(x, y), (0.5, 2), (-2, 2)),
    (np.maximum, lambda x, y: np.maximum(x, y), (-2, 2), (-2, 2)),
    (np.minimum, lambda x, y: np.minimum(x, y), (-2, 2), (-2, 2)),
    (np.fmax, lambda x, y: np.fmax(x, y), (-2, 2), (-2, 2)),
    (np.fmin, lambda x, y: np.fmin(x, y), (-2, 2), (-2, 2)),
    (np.arctan2, lambda x, y: np.arctan2(x, y), (-2, 2), (-2, 2)),
    (np.hypot, lambda x, y: np.hypot(x, y), (0.3, 2), (-2, -0.3)),
    (np.logaddexp, lambda x, y: np.logaddexp(x, y), (-2, 2), (-2, 2)),
    (np.logaddexp2, lambda x, y: np.logaddexp2(x, y), (-2, 2), (-2, 2)),
    (np.mod, lambda x, y: np.mod(x, y), (-3, 3), (0.7, 2)),
    (np.remainder, lambda x, y: np.remainder(x, -y), (-3, 3), (0.7, 2)),
    (np.fmod, lambda x, y: np.fmod(x, y), (-3, 3), (0.7, 2)),
    (np.fmod, lambda x, y: np.fmod(x, -y), (-3, 3), (0.7, 2)),
    (np.copysign, lambda x, y: np.copysign(x, y), (-2, 2), (-2, 2)),
    (np.where, lambda x, y: np.where(x > y, x * 2, y), (-2, 2), (-2, 2)),
    (np.clip, lambda x, y: np.clip(x, y, 1.0), (-2, 2), (-1, 0.5)),
    (np.clip, lambda x, y: np.clip(x, -1.0, y), (-2, 2), (-0.5, 1)),
    (np.clip, lambda x, y: np.clip(x * y, None, 0.5), (-2, 2), (-2, 2)),
    (np.select, lambda x, y: np.select([x > 0, y > 0], [x, y * 2], default=x * y), (-2, 2), (-2, 2)),
    (None, lambda x, y: x + y, (-2, 2), (-2, 2)),
    (None, lambda x, y: x - y, (-2, 2), (-2, 2)),
    (None, lambda x, y: x * y, (-2, 2), (-2, 2)),
    (None, lambda x, y: x / y, (-2, 2), (0.5, 2)),
    (None, lambda x, y: x ** y, (0.5, 2), (-2, 2)),
    (None, lambda x, y: x % y, (-3, 3), (0.7, 2)),
]
if np.lib.NumpyVersion(np.__version__) >= "2.1.0":  # clip's min=/max= keywords
    BINARY.append((np.clip, lambda x, y: np.clip(x, min=y, max=1.0), (-2, 2), (-1, 0.5)))

MATH_BINARY = [
    (math.log, lambda x, y: math.log(x, y), (0.2, 3), (1.5, 4)),
    (math.pow, lambda x, y: math.pow(x, y), (0.5, 2), (-2, 2)),
    (math.atan2, lambda x, y: math.atan2(x, y), (-2, 2), (-2, 2)),
    (math.hypot, lambda x, y: math.hypot(x, y, x * y), (0.3, 2), (0.3, 2)),
    (math.fmod, lambda x, y: math.fmod(x, y), (-3, 3), (0.7, 2)),
    (math.remainder, lambda x, y: math.remainder(x, y), (-3, 3), (0.7, 2)),
    (math.copysign, lambda x, y: math.copysign(x, y), (-2, 2), (-2, 2)),
]


def sample(rng, domain, shape):
    low, high = domain
    return float(rng.uniform(low, high)) if shape == () else rng.uniform(low, high, shape)


def label(row):
    key, fun = row[0], row[1]
    return getattr(key, "__name__", None) or f"line{fun.__code__.co_firstlineno}"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("row", UNARY, ids=label)
def test_unary(row, shape):
    _, fun, domain = row
    x = sample(np.random.default_rng(1), domain, shape)
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


@pytest.mark.parametrize("shape", SHAPES[1:])
@pytest.mark.parametrize("fun", METHODS, ids=lambda f: f"line{f.__code__.co_firstlineno}")
def test_methods(fun, shape):
    x = np.random.default_rng(8).uniform(-1, 1, shape)
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


@pytest.mark.parametrize("row", MATH_UNARY, ids=label)
def test_math_unary(row):
    _, fun, domain = row
    x = sample(np.random.default_rng(2), domain, ())
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("row", BINARY, ids=label)
def test_binary(row, shapes):
    _, fun, x_domain, y_domain = row
    rng = np.random.default_rng(3)
    x = sample(rng, x_domain, shapes[0])
    y = sample(rng, y_domain, shapes[1])
    for wrt in ((0, 1), 1):  # y alone: its tangent (maybe smaller than the result) still gives a result-shaped one
        check_grads(fun, (x, y), wrt=wrt, modes=("rev",))
        check_jvp(fun, (x, y), wrt=wrt)


@pytest.mark.parametrize("row", MATH_BINARY, ids=label)
def test_math_binary(row):
    _, fun, x_domain, y_domain = row
    rng = np.random.default_rng(4)
    args = (sample(rng, x_domain, ()), sample(rng, y_domain, ()))
    check_grads(fun, args, wrt=(0, 1), modes=("rev",))
    check_jvp(fun, args, wrt=(0, 1))


def nan_to_num_with_replacements(x, big):
    return np.nan_to_num(x, nan=big, posinf=2 * big, neginf=-big) * x[1]


def test_nan_to_num_replacements():
    x = np.array([np.nan, 0.5, np.inf, -np.inf, -1.5])
    v = np.arange(1.0, 6.0)
    gx, gbig = srcad.differentiable(nan_to_num_with_replacements, wrt=(0, 1)).adjoint(x, 3.0, v)
    # d/dbig of [big, 0.5, 2 big, -big, -1.5] * x[1]; d/dx: only finite entries, plus x[1]'s factor
    y = np.nan_to_num(x, nan=3.0, posinf=6.0, neginf=-3.0)
    assert gbig == pytest.approx(0.5 * (1 * 1 + 3 * 2 - 4 * 1))
    np.testing.assert_allclose(gx, np.array([0, 0.5 * 2, 0, 0, 0.5 * 5]) + np.array([0, np.dot(v, y), 0, 0, 0]))


def test_i0_derivative_is_i1():
    from scipy import special

    x = np.array([-700.0, -30.0, -1.5, -1e-9, 0.0, 1e-300, 2e-5, 0.3, 1.0, 1.0000001, 7.5, 80.0, 709.0])
    np.testing.assert_allclose(numpy_exponential.bessel_i1(x), special.i1(x), rtol=1e-13, atol=0)


# ---- ties, kinks and zero derivatives ----------------------------------------------------
def max_of(x, y):
    return np.maximum(x, y)


def min_of(x, y):
    return np.minimum(x, y)


def fmax_of(x, y):
    return np.fmax(x, y)


def fmin_of(x, y):
    return np.fmin(x, y)


@pytest.mark.parametrize("fun, x_share, y_share", [
    (max_of, [1, 0.5, 0, 0, 0], [0, 0.5, 1, 0, 0]),
    (min_of, [0, 0.5, 1, 0, 0], [1, 0.5, 0, 0, 0]),
    (fmax_of, [1, 0.5, 0, 0, 1], [0, 0.5, 1, 1, 0]),
    (fmin_of, [0, 0.5, 1, 0, 1], [1, 0.5, 0, 1, 0]),
], ids=lambda p: getattr(p, "__name__", ""))
def test_binary_extremum_ties_split_equally(fun, x_share, y_share):
    """Ties split equally; with a NaN, maximum/minimum give neither operand anything (the
    result is NaN), fmax/fmin give it all to the other operand (the one they return)."""
    x = np.array([3.0, 2.0, -1.0, np.nan, 4.0])
    y = np.array([1.0, 2.0, 5.0, 1.0, np.nan])
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    gx, gy = srcad.differentiable(fun, wrt=(0, 1)).adjoint(x, y, v)
    np.testing.assert_array_equal(gx, v * np.array(x_share))
    np.testing.assert_array_equal(gy, v * np.array(y_share))


def clip_between(x, lo, hi):
    return np.clip(x, lo, hi)


def test_clip_ties_split_equally():
    x = np.array([-2.0, -1.0, 0.5, 1.0, 3.0])
    lo, hi = -1.0, 1.0
    v = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    gx, glo, ghi = srcad.differentiable(clip_between, wrt=(0, 1, 2)).adjoint(x, lo, hi, v)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 4.0, 4.0, 0.0])
    assert glo == 1.0 + 1.0  # all of x[0]'s, half of x[1]'s
    assert ghi == 4.0 + 16.0  # half of x[3]'s, all of x[4]'s


# (rounding function, its value times x, its value alone): gradients rounding(x) and 0
ROUNDING = [
    (np.sign, lambda x: np.sum(np.sign(x) * x), lambda z: np.sum(np.sign(z) + 0 * z)),
    (np.floor, lambda x: np.sum(np.floor(x) * x), lambda z: np.sum(np.floor(z) + 0 * z)),
    (np.ceil, lambda x: np.sum(np.ceil(x) * x), lambda z: np.sum(np.ceil(z) + 0 * z)),
    (np.round, lambda x: np.sum(np.round(x) * x), lambda z: np.sum(np.round(z) + 0 * z)),
    (np.round, lambda x: np.sum(x.round() * x), lambda z: np.sum(z.round() + 0 * z)),
    (np.trunc, lambda x: np.sum(np.trunc(x) * x), lambda z: np.sum(np.trunc(z) + 0 * z)),
    (np.rint, lambda x: np.sum(np.rint(x) * x), lambda z: np.sum(np.rint(z) + 0 * z)),
    (np.fix, lambda x: np.sum(np.fix(x) * x), lambda z: np.sum(np.fix(z) + 0 * z)),
]


@pytest.mark.parametrize("rounding, times_x, alone", ROUNDING, ids=lambda p: getattr(p, "__name__", ""))
def test_rounding_has_zero_derivative(rounding, times_x, alone):
    x = np.array([-1.7, -0.2, 0.4, 1.5, 2.6])
    np.testing.assert_array_equal(srcad.grad(times_x)(x), rounding(x))
    np.testing.assert_array_equal(srcad.grad(alone)(x), np.zeros(5))


def test_complex_arguments_are_refused():
    def conj_sum(z):
        return np.sum(np.conj(z) * 2.0)

    with pytest.raises(srcad.SrcadError, match="complex"):
        srcad.grad(conj_sum)(np.array([1 + 2j, 3.0]))


FLOAT32 = [
    lambda x: np.sin(x) * np.arcsin(x / 3),
    lambda x: np.exp2(x) + np.log10(x + 2) + np.cbrt(x + 2),
    lambda x: np.maximum(x, 0.1) + np.hypot(x, 2.0) + np.clip(x, -0.5, 0.5),
    lambda x: np.sinc(x) + np.i0(x) + np.fmod(x, 0.7) + np.logaddexp(x, 0.2),
]


@pytest.mark.parametrize("fun", FLOAT32, ids=lambda f: f"line{f.__code__.co_firstlineno}")
def test_float32_keeps_float32(fun):
    x = np.array([-0.8, 0.3, 1.1], dtype=np.float32)
    v = np.ones(3, np.float32)
    g32 = srcad.differentiable(fun).adjoint(x, v)
    g64 = srcad.differentiable(fun).adjoint(x.astype(np.float64), v.astype(np.float64))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-5)


# ---- jvp rules: calls with some operands constant, and coverage --------------------------
def jvp_calls():
    """(key, args, keyword arguments, the operands that move) for ``check_call_jvp``."""
    rng = np.random.default_rng(6)
    a, b, c = rng.uniform(-2, 2, (3, 2, 3))
    calls = [
        (math.hypot, [0.5, -1.5, 2.0], {}, (0, 1, 2)),
        (np.matmul, [a, b.T], {}, (0, 1)),
        (np.where, [a > 0, a, b[0]], {}, (1, 2)),
        (np.where, [a > 0, a, b[0]], {}, (2,)),
        (np.clip, [a, b, 1.5], {}, (0, 1)),
        (np.clip, [a, -1.5, c], {}, (0, 2)),
        (np.select, [[a > 0, b > 0], [a, b], c], {}, (2,)),
        (numpy_exponential.logistic_weight, [a, b[0] + 40.0], {}, (0, 1)),  # logaddexp's adjoints call it
        # np.imag's adjoint, of a real x here (0); of a complex one: test_second_order_library_23's FFT losses
        (numpy_elementwise.imag_cotangent, [a, b], {}, (0,)),
        (numpy_exponential.logistic_weight, [a, b], {}, (1,)),
        (np.nan_to_num, [np.array([np.nan, np.inf, -np.inf, 0.5])], dict(nan=1.0, posinf=2.0, neginf=3.0),
         (0, "nan", "posinf", "neginf")),
    ]
    if np.lib.NumpyVersion(np.__version__) >= "2.1.0":
        calls.append((np.clip, [a], dict(min=b, max=c + 3), (0, "min", "max")))
    return calls


def call_id(part):
    return registry.describe(part) if callable(part) else ""


@pytest.mark.parametrize("key, args, kwargs, wrt", jvp_calls(), ids=call_id)
def test_jvp_of_calls(key, args, kwargs, wrt):
    check_call_jvp(key, args, wrt, kwargs)


def rule_calls():
    """(key, args, keyword arguments, the operands that move) for every jvp rule by itself."""
    rng = np.random.default_rng(5)
    calls = [(key, [sample(rng, domain, (2, 3))], {}, (0,)) for key, _, domain in UNARY if key is not None]
    calls += [(key, [sample(rng, domain, ())], {}, (0,)) for key, _, domain in MATH_UNARY]
    for key, _, x_domain, y_domain in BINARY:
        if key not in (None, np.where, np.select, np.clip):  # rows that call key(x, y) as it is
            args = [sample(rng, x_domain, (2, 3)), sample(rng, y_domain, (3,))]
            calls += [(key, args, {}, (0, 1)), (key, args, {}, (1,))]
    calls += [(key, [sample(rng, x_domain, ()), sample(rng, y_domain, ())], {}, (0, 1))
              for key, _, x_domain, y_domain in MATH_BINARY if key is not math.hypot]
    return calls + jvp_calls()


@pytest.mark.parametrize("key, args, kwargs, wrt", rule_calls(), ids=call_id)
def test_jvp_rule_alone_gives_a_result_shaped_tangent(key, args, kwargs, wrt):
    """Each forward rule broadcasts its tangent to the result's shape (``broadcast_like``),
    even from a smaller operand alone: srcad fits a tangent to its value only where it
    leaves the function, so a smaller one would be wrong in the code after the call."""
    tangents = {k: np.ones(np.shape(args[k] if isinstance(k, int) else kwargs[k])) for k in wrt}
    tangent = jvp_of(key, args, kwargs, tangents)
    assert tangent is None or np.shape(tangent) == np.shape(key(*args, **kwargs))  # None: no statement, zero


def select_first_true(a, b):
    return np.select([a > 0, b > 0], [a, b])


def test_select_jvp_uses_choice_tangents():
    a = np.array([1.0, -2.0, 3.0])
    b = np.array([4.0, 5.0, -6.0])
    tangent = check_jvp(select_first_true, (a, b), wrt=(0, 1), direction=(np.ones(3), 10 * np.ones(3)))
    np.testing.assert_array_equal(tangent, [1.0, 10.0, 1.0])


MODULES = ("srcad.rules.numpy_elementwise", "srcad.rules.numpy_trigonometric", "srcad.rules.numpy_exponential")
ALSO_COVERED = {  # elementwise vjp rules in numpy_core.py and operators.py, checked here
    np.sin, np.cos, np.tan, np.exp, np.log, np.sqrt, np.tanh, np.abs, np.maximum, np.minimum, np.where,
    np.add, np.subtract, np.multiply, np.divide, np.power, np.negative, np.positive, np.mod, np.matmul,
    math.sin, math.cos, math.tan, math.exp, math.log, math.sqrt, math.tanh, math.fabs, math.pow,
    gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.MatMult, gast.USub, gast.UAdd, gast.Mod,
}


def covered_keys(modules, also):
    keys = [k for k, rule in registry.VJP.items() if rule.fn.__module__ in modules]
    keys += [k for k in registry.VJP if any(k is a for a in also)]
    return keys


def test_every_covered_vjp_rule_has_a_jvp_rule():
    keys = covered_keys(MODULES, ALSO_COVERED)
    assert len(keys) > 80
    missing = [registry.describe(k) for k in keys if registry.lookup(registry.JVP, k) is None]
    assert not missing
    for key in keys:
        rule = registry.JVP[key]
        assert rule.marker == "t" and (rule.body or key in numpy_elementwise.ROUNDS)
        assert rule.globals is not None  # every name the template uses resolves


def test_jvp_checks_cover_the_jvp_rules():
    rows = UNARY + MATH_UNARY + BINARY + MATH_BINARY + jvp_calls()  # end to end through srcad.jvp
    checked = {registry.JVP[row[0]].fn for row in rows if row[0] is not None}
    assert checked == {registry.JVP[call[0]].fn for call in rule_calls()}  # and each rule by itself
    rules = {registry.JVP[key].fn for key in covered_keys(MODULES, ALSO_COVERED)}
    rules |= {rule.fn for rule in registry.JVP.values() if rule.fn.__module__ in MODULES}
    assert not {fn.__name__ for fn in rules - checked}


# ---- register_elementwise: the derivative once, both rules ---------------------------------
@pytest.mark.parametrize("key, vjp, jvp", [
    (np.sin, "d[x] += d[y] * np.cos(x)", "t[y] += t[x] * np.cos(x)"),
    (np.cos, "d[x] += -d[y] * np.sin(x)", "t[y] += -t[x] * np.sin(x)"),
    (np.log, "d[x] += d[y] / x", "t[y] += t[x] / x"),
    (np.arccos, "d[x] += -d[y] / np.sqrt(1 - x ** 2)",  # infinite at ±1: a resting tangent pushes 0
     "t[y] += t[x] * resting_zero(t[x], -1 / np.sqrt(1 - x ** 2)) if moves(t[x]) else t[x] * 0.0"),
    (np.tan, "d[x] += d[y] * (1 + y ** 2)", "t[y] += t[x] * (1 + y ** 2)"),
    (np.exp2, "d[x] += d[y] * y * LN2", "t[y] += t[x] * y * LN2"),
    (np.reciprocal, "d[x] += -d[y] * y ** 2", "t[y] += -t[x] * y ** 2"),
    (np.deg2rad, "d[x] += d[y] * RAD_PER_DEG", "t[y] += t[x] * RAD_PER_DEG"),
], ids=lambda p: getattr(p, "__name__", ""))
def test_elementwise_rules_are_written_out_as_by_hand(key, vjp, jvp):
    def same(body, text):  # the same statements, however the printer wraps a long line
        return gast.dump(gast.parse(A.to_source(body).strip())) == gast.dump(gast.parse(text))

    assert same(registry.VJP[key].body, vjp)
    assert same(registry.JVP[key].body, jvp)


class Softsign:
    """x / (1 + |x|), as an object: srcad cannot read its source, so it needs a rule."""

    def __call__(self, x):
        return x / (1 + np.abs(x))


softsign = Softsign()


@register_elementwise(softsign)
def softsign_derivative(y, x):
    return (1 - np.abs(y)) ** 2  # 1 / (1 + |x|)², from the result


def softsign_energy(x, w):
    return np.sum(softsign(x * w) ** 2)


def test_users_elementwise_rule_in_both_modes():
    rng = np.random.default_rng(9)
    x, w = rng.uniform(-2, 2, 4), rng.uniform(-2, 2, 4)
    check_grads(softsign_energy, (x, w), wrt=(0, 1), modes=("rev",))
    check_jvp(softsign_energy, (x, w), wrt=(0, 1))
    assert registry.VJP[softsign].marker == "d" and registry.JVP[softsign].marker == "t"


def test_elementwise_rule_errors():
    with pytest.raises(SrcadError, match="already registered"):
        @register_elementwise(np.sin)
        def sin_again(y, x):
            return np.cos(x)

    with pytest.raises(SrcadError, match="exactly the result and the argument"):
        @register_elementwise(Softsign())
        def two_arguments(z, x, y):
            return y

    statements = Softsign()

    @register_elementwise(statements)
    def not_one_return(y, x):
        slope = 1 - np.abs(y)
        return slope**2

    try:  # the template is read on first use
        with pytest.raises(SrcadError, match="single `return <derivative>`"):
            registry.VJP[statements].body
    finally:
        del registry.VJP[statements], registry.JVP[statements]
