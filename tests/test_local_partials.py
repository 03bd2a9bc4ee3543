"""A ``functools.partial`` bound in the function and called by its name (passes/local_partials):
read as the call of its function where that is provably Python's semantics, refused otherwise."""
import functools
from functools import partial

import numpy as np
import pytest

from lang_checks import check_all_modes, refused


def scaled(z, s):
    return z * s


def shifted_power(a, b, z, p=2.0):
    return (a * z + b) ** p


def mixed(z, w, scale=1.0, shift=0.0):
    return np.sin(scale * z) * w + shift


def keyword_partial(x):
    half = functools.partial(scaled, s=0.5)
    return np.sum(half(x) ** 2)


def positional_partial(x, y):
    affine = partial(shifted_power, 1.5, y[0])
    return np.sum(affine(x)) + np.sum(affine(x, p=3.0))


def captured_value(x):
    c = np.cos(x[0])
    tilt = partial(scaled, s=c)
    c = 10.0 * x[1]  # the partial holds the value c had when it was made
    return np.sum(tilt(x) * c)


def overriding_keyword(x):
    wave = functools.partial(mixed, scale=2.0, shift=1.0)
    return np.sum(wave(x, x[::-1], scale=x[0]) + wave(x, 3.0))


def rule_partial(x):
    clip = functools.partial(np.clip, a_min=-0.5, a_max=0.5)
    return np.sum(clip(x) * x)


WAVE = functools.partial(mixed, scale=2.0, shift=1.0)  # a module's partial


def overriding_a_module_partial(x):
    return np.sum(WAVE(x, x[::-1], scale=x[0]) + WAVE(x, 3.0, shift=x[1]) + WAVE(x, 0.5))


CASES = [(keyword_partial, 0), (positional_partial, 0), (positional_partial, 1), (captured_value, 0),
         (overriding_keyword, 0), (rule_partial, 0), (overriding_a_module_partial, 0)]


@pytest.mark.parametrize("f,wrt", CASES, ids=[f"{f.__name__}-{w}" for f, w in CASES])
def test_local_partial_in_every_mode(f, wrt):
    rng = np.random.default_rng(3)
    args = (rng.normal(size=4) * 0.9, rng.normal(size=3))[: f.__code__.co_argcount]
    check_all_modes(f, args, wrt=wrt)


def test_fresh_names_do_not_collide():
    _tilt_s = 100.0  # noqa: F841  (a name the temporary would take)

    def f(x, _tilt_s_):
        _tilt_s = 2.0 * x[0]
        tilt = partial(scaled, s=_tilt_s)
        _tilt_s = 0.0
        return np.sum(tilt(x)) + _tilt_s + _tilt_s_

    check_all_modes(f, (np.array([0.3, -1.2, 0.7]), 0.5))


def passes_it(x):
    half = functools.partial(scaled, s=0.5)
    return np.sum(apply(half, x))


def apply(g, z):
    return g(z)


def bound_twice(x):
    half = functools.partial(scaled, s=0.5)
    half = functools.partial(scaled, s=2.0)
    return np.sum(half(x))


def bound_in_loop(x):
    total = 0.0
    for k in range(2):
        half = functools.partial(scaled, s=k + 0.5)
        total = total + np.sum(half(x))
    return total


def of_a_local_function(x):
    def twice(z, s):
        return 2.0 * z * s
    half = functools.partial(twice, s=0.5)
    return np.sum(half(x))


def returns_it(x):
    half = functools.partial(scaled, s=0.5)
    g = half
    return np.sum(g(x))


def starred_call(x):
    half = functools.partial(scaled, s=0.5)
    return np.sum(half(*[x]))


def test_partial_passed_to_another_function_is_refused():
    refused(passes_it, np.array([0.3, -1.2]), line_text="return g(z)", message="'g' is a parameter of apply that it calls")


@pytest.mark.parametrize("f,line", [(bound_twice, "return np.sum(half(x))"),
                                    (bound_in_loop, "total + np.sum(half(x))"),
                                    (of_a_local_function, "return np.sum(half(x))"),
                                    (returns_it, "return np.sum(g(x))"), (starred_call, "half(*[x])")])
def test_other_local_partials_are_refused(f, line):
    refused(f, np.array([0.3, -1.2]), line_text=line, message="is a local variable")
