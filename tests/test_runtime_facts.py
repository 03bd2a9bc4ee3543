"""Facts srcad cannot read when it makes the code are checked when the code runs (probes 21A,
21B): a dtype given as a parameter, a default, an argument's attribute or a global of yours
may make a complex value on any call; a number a module of yours defines may be rebound; a
function run once per input entry by a forward-mode Jacobian may draw new random numbers on
each run. Each gave a plausible wrong gradient before; each is now right or refused."""
import re
import types
import warnings

import numpy as np
import pytest

import srcad
from srcad import UnsupportedCaseError

X = np.array([0.3, 0.7])


def numeric_gradient(f, x, *rest, eps=1e-6):
    return np.array([(f(x + eps * e, *rest) - f(x - eps * e, *rest)) / (2 * eps) for e in np.eye(len(x))])


# ---- dtypes read when the function runs -------------------------------------------------------

def by_parameter(x, dt):
    return np.sum(np.imag(np.sqrt(x.astype(dt) - 1.0)))


def by_default(x, dt=np.complex128):
    return np.sum(np.imag(np.sqrt(np.asarray(x, dt) - 1.0)))


def by_keyword(x, dt):
    y = np.zeros(2, dtype=dt) + x - 1.0
    return np.sum(np.imag(np.sqrt(y)))


class Options:
    dt = "complex128"


def by_attribute(x, opts):
    return np.sum(np.imag(np.sqrt(x.astype(opts.dt) - 1.0)))


DT = "float64"


def by_global(x):
    return np.sum(np.imag(np.sqrt(x.astype(DT) - 1.0)))


@pytest.mark.parametrize("f,rest,text", [
    (by_parameter, ("complex128",), "x.astype(dt)"),
    (by_default, (), "np.asarray(x, dt)"),
    (by_keyword, (np.dtype("c16"),), "np.zeros(2, dtype=dt)"),
    (by_attribute, (Options(),), "x.astype(opts.dt)"),
])
def test_a_complex_dtype_read_when_the_function_runs_is_refused(f, rest, text):
    # the real-only rule of np.sqrt ran on complex values: [0.598, 0.913] for [-0.598, -0.913]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        with pytest.raises(UnsupportedCaseError) as info:
            srcad.grad(f)(X, *rest)
    message = str(info.value)
    assert f"'{text}' is complex" in message and __file__ in message and "pass a real dtype" in message


class Settings:
    def __init__(self, dtype):
        self.dtype = dtype


def by_dtype_attribute(x, settings):
    return np.sum(np.imag(np.sqrt(-x.astype(settings.dtype))))


def by_options(x, options):
    return np.sum(np.imag(np.sqrt(np.zeros(2, **options) - x)))


def zeros_of(n, dt):
    return np.zeros(n, dt)


def by_helper(x, dt):
    return np.sum(np.imag(np.sqrt(zeros_of(2, dt) - x)))


@pytest.mark.parametrize("f,rest,text", [
    (by_dtype_attribute, (Settings(np.complex128),), "x.astype(settings.dtype)"),
    (by_options, ({"dtype": np.complex128},), "np.zeros(2, **options)"),
    (by_helper, (np.complex128,), "zeros_of(2, dt)"),
])
def test_a_complex_value_made_where_srcad_cannot_see_its_dtype_is_refused(f, rest, text):
    # probe 21C: an attribute named dtype was taken for an array's, **options and a helper's
    # dtype were not read at all: the slope's sign flipped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        with pytest.raises(UnsupportedCaseError, match=f"'{re.escape(text)}' is complex"):
            srcad.grad(f)(X, *rest)


def real_by_attribute(x, settings):
    return np.sum(np.sqrt(x.astype(settings.dtype) + 1.0))


def real_by_helper(x, dt):
    return np.sum(np.sqrt(zeros_of(2, dt) + x + 1.0))


def real_by_options(x, options):
    return np.sum(np.sqrt(np.zeros(2, **options) + x + 1.0))


@pytest.mark.parametrize("f,rest", [(real_by_attribute, (Settings(np.float64),)), (real_by_helper, (np.float64,)),
                                    (real_by_options, ({"dtype": np.float64},))])
def test_a_real_value_made_where_srcad_cannot_see_its_dtype_is_differentiated(f, rest):
    np.testing.assert_allclose(srcad.grad(f)(X, *rest), numeric_gradient(f, X, *rest), rtol=1e-6, atol=1e-9)


def test_a_global_dtype_rebound_to_complex_is_refused():
    global DT
    g = srcad.grad(by_global)
    x = np.array([1.3, 1.7])
    np.testing.assert_allclose(g(x), numeric_gradient(by_global, x), rtol=1e-6, atol=1e-9)  # real: both 0
    DT = "complex128"
    try:
        with pytest.raises(UnsupportedCaseError, match="x.astype"):
            g(X)  # the code made for the real dtype: the sign of the slope was flipped
    finally:
        DT = "float64"


def real_sqrt(x, dt):
    return np.sum(np.sqrt(x.astype(dt) + 1.0))


def complex_safe(x, dt):
    return np.real(np.sum(x.astype(dt) * 2.0))


@pytest.mark.parametrize("f,dt", [(real_sqrt, "float64"), (real_sqrt, np.float64), (complex_safe, "float64")])
def test_a_real_dtype_read_when_the_function_runs_is_differentiated(f, dt):
    np.testing.assert_allclose(srcad.grad(f)(X, dt), numeric_gradient(f, X, dt), rtol=1e-6)
    _, tangent = srcad.jvp(f, (X, dt), (np.array([1.0, -2.0]), None))
    np.testing.assert_allclose(tangent, numeric_gradient(f, X, dt) @ np.array([1.0, -2.0]), rtol=1e-6)


# ---- a number a module of yours defines -------------------------------------------------------

cfg = types.ModuleType("srcad_test_cfg")  # as `import cfg` of a cfg.py holding C = 2.0
cfg.C = 2.0


def scaled_by_module_number(x):
    return np.sum(np.imag(x * cfg.C))


def test_a_module_number_rebound_to_complex_is_refused():
    # it was read like np.pi, a constant: after cfg.C = 1 + 2j the real code gave [-2, -2] for [2, 2]
    g = srcad.grad(scaled_by_module_number)
    np.testing.assert_allclose(g(X), [0.0, 0.0])
    cfg.C = 1.0 + 2.0j
    try:
        with pytest.raises(UnsupportedCaseError, match="'cfg.C' is complex"):
            g(X)
    finally:
        cfg.C = 2.0


# ---- a forward-mode Jacobian runs the function once per input entry ---------------------------

def noisy(x, rng):
    return x * rng.standard_normal(3)


def noisy_quadratic(x, rng):
    w = rng.standard_normal(3)
    return np.einsum("i,i->", x ** 2, w)  # a pullback that does not batch: hessian goes forward


def test_forward_jacobian_of_a_function_drawing_from_a_generator_argument():
    # each column drew new numbers: diagonal [0.126, -0.536, -0.704] for one call's [0.126, -0.132, 0.640]
    x = np.ones(3)
    draws = np.random.default_rng(0).standard_normal(3)
    rng = np.random.default_rng(0)
    J = srcad.jacobian(noisy, mode="fwd")(x, rng)
    np.testing.assert_allclose(J, np.diag(draws))
    after_one_call = np.random.default_rng(0)
    after_one_call.standard_normal(3)
    assert rng.standard_normal() == after_one_call.standard_normal()  # the caller's generator moved once
    np.testing.assert_allclose(srcad.jacobian(noisy, mode="rev")(x, np.random.default_rng(0)), J)


def test_hessian_of_a_function_drawing_from_a_generator_argument():
    x = np.ones(3)
    w = np.random.default_rng(0).standard_normal(3)
    np.testing.assert_allclose(srcad.hessian(noisy_quadratic)(x, np.random.default_rng(0)), np.diag(2 * w))


def global_noise(x):
    return x * np.random.randn(3)


def slope_noise(x):
    r = np.random.randn(3)
    return x + r * (x - 1.0)  # at x = 1 the value does not show the draws; the slope does


def test_forward_jacobian_of_a_function_drawing_from_global_state_rewinds_it():
    # probe 21C: draws that change the slope but not the value passed the value check
    # (diagonal [2.76, 1.40, 1.98] for one call's constant 2.76)
    x = np.ones(3)
    np.random.seed(0)
    J = srcad.jacobian(slope_noise, mode="fwd")(x)
    after = np.random.randn()
    np.random.seed(0)
    np.testing.assert_allclose(J, np.diag(1.0 + np.random.randn(3)))
    assert np.random.randn() == after  # the global generator moved as one call moves it
    np.random.seed(1)
    J = srcad.jacobian(global_noise, mode="fwd")(x)
    np.random.seed(1)
    np.testing.assert_allclose(J, np.diag(np.random.randn(3)))


DEFAULT_OPTIONS = {"scale": 2.0}


def scaled_unless_default(x, options):
    return x * (options["scale"] if options is DEFAULT_OPTIONS else 1.0)


def test_forward_jacobian_passes_the_caller_s_objects_themselves():
    # probe 21C: every run but the last got deep copies, so `options is DEFAULT_OPTIONS` failed
    # in them: diagonal [1, 1, 2] for [2, 2, 2]
    J = srcad.jacobian(scaled_unless_default, mode="fwd")(np.ones(3), DEFAULT_OPTIONS)
    np.testing.assert_allclose(J, 2.0 * np.eye(3))


class Counter:
    def __init__(self):
        self.count = 0

    def tick(self):
        self.count += 1
        return self.count


def counted(x, counter):
    return x * counter.tick()


def test_forward_jacobian_of_a_function_changing_state_of_yours_is_refused():
    with pytest.raises(UnsupportedCaseError) as info:
        srcad.jacobian(counted, mode="fwd")(np.ones(3), Counter())
    message = str(info.value)
    assert "gave different values on two runs" in message and "test_runtime_facts.py" in message
    assert "mode='rev'" in message


# ---- a loop that may stop early over a one-pass iterator ------------------------------------

def first_of_each_pass(x, it):
    for t in range(4):
        for v in it:
            x = x * v
            break  # Python takes one item of `it` a pass; srcad read all of `it` at once
    return x


def paired(x, scales, it):
    total = 0.0
    for s, v in zip(scales, it):  # zip stops at the shorter: `it` is read only in part
        total = total + s * v * x
    return total


ITEMS = [1.1, 1.2, 1.3, 1.4, 1.5, 1.6]


@pytest.mark.parametrize("f,rest", [(first_of_each_pass, lambda: (iter(ITEMS),)),
                                    (paired, lambda: ([1.0, 2.0], iter(ITEMS)))])
def test_a_loop_reading_a_one_pass_iterator_in_part_is_refused(f, rest):
    # probe 21C: the value was 1.43 and the slope 1.1 where Python gives 7.50 and 5.77
    with pytest.raises(UnsupportedCaseError, match="one-pass iterator") as info:
        srcad.value_and_grad(f)(1.3, *rest())
    assert "test_runtime_facts.py" in str(info.value)


@pytest.mark.parametrize("f,rest", [(first_of_each_pass, lambda: (list(ITEMS),)),
                                    (paired, lambda: ([1.0, 2.0], list(ITEMS)))])
def test_a_loop_reading_a_list_in_part_is_differentiated(f, rest):
    value, slope = srcad.value_and_grad(f)(1.3, *rest())
    assert value == f(1.3, *rest())
    np.testing.assert_allclose(slope, (f(1.3 + 1e-6, *rest()) - f(1.3 - 1e-6, *rest())) / 2e-6, rtol=1e-6)


def every_item(x, it):
    for v in it:
        x = x * v
    return x


def test_a_loop_reading_all_of_a_one_pass_iterator_is_differentiated():
    value, slope = srcad.value_and_grad(every_item)(1.3, iter(ITEMS))
    np.testing.assert_allclose([value, slope], [1.3 * np.prod(ITEMS), np.prod(ITEMS)])


# ---- probe 21D ----------------------------------------------------------------------------------

COEF = [1.0]


def scaled_by_an_item(x):
    return np.sum(np.imag(x * COEF[0]))


def test_an_item_of_a_global_changed_to_complex_in_place_is_refused():
    # the item was decided real when the code was made: [-1, -1] for [1, 1] after COEF[0] = 1j
    g = srcad.grad(scaled_by_an_item)
    np.testing.assert_allclose(g(X), [0.0, 0.0])
    COEF[0] = 1j
    try:
        with pytest.raises(UnsupportedCaseError, match=r"'COEF\[0\]' is complex"):
            g(X)
    finally:
        COEF[0] = 1.0


GENERATOR = np.random.default_rng(0)


def noisy_by_a_global_generator(x):
    return (x - 1.0) * GENERATOR.standard_normal(3)  # at x = 1 the value hides the draws


def test_forward_jacobian_rewinds_a_generator_the_function_reads_by_name():
    global GENERATOR
    GENERATOR = np.random.default_rng(0)
    J = srcad.jacobian(noisy_by_a_global_generator, mode="fwd")(np.ones(3))
    one_call = np.random.default_rng(0)
    np.testing.assert_allclose(J, np.diag(one_call.standard_normal(3)))  # before: [0.126, -0.536, -0.704]
    assert GENERATOR.standard_normal() == one_call.standard_normal()  # moved as one call moves it


def any_then_rest(x, it):
    big = any(v > 1.5 for v in it)  # Python stops at the first item above 1.5
    return x * sum(it) + (1.0 if big else 0.0)


def first_match(x, values):
    return x * next(v for v in values if v > 1.5)


def test_any_of_a_one_pass_iterator_is_refused():
    # srcad read all of `it`: value 0.0 and slope 0 where Python gives -1.5 and 3
    with pytest.raises(UnsupportedCaseError, match="one-pass iterator"):
        srcad.grad(any_then_rest)(1.3, iter([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(srcad.grad(any_then_rest)(1.3, [1.0, 2.0, 3.0]), 6.0)


def test_next_of_a_generator_expression_is_refused_at_its_line():
    # it crashed in the generated code (TypeError: 'list' object is not an iterator)
    with pytest.raises(srcad.SrcadSyntaxError, match="next\\(\\) of a generator expression") as info:
        srcad.grad(first_match)(X, [1.0, 2.0, 3.0])
    assert info.value.filename == __file__
