"""Dispatch tables (``passes.dispatch_tables``): a call of an item of a module-level dict, list or
tuple of functions, by a literal key, a parameter, a loop's name, or through ``fn = ACTS[act]``
bound once, checked in every mode against finite differences, inputs unchanged; a table changed
between calls gives a clear error (never the old function's derivative), a new table bound to
the name the new function's; a missing key raises what Python raises; the near forms stay
refused at the user's line, saying what works."""
import functools
import weakref

import numpy as np
import pytest

import srcad
from srcad.errors import UnsupportedCaseError

from lang_checks import check_all_modes, check_unchanged, refused

X = np.array([0.3, -0.5, 1.1, 0.7])
M = np.random.default_rng(8).normal(size=(4, 3))
W = np.random.default_rng(7).normal(size=(3, 2))


def relu(h):
    return np.maximum(h, 0.0)


def softplus(h):
    return np.log1p(np.exp(h))


def swish(h):
    return h / (1 + np.exp(-h))


ACTS = {"tanh": np.tanh, "relu": relu, "softplus": softplus, "swish": swish, "soft": lambda z: np.logaddexp(0.0, z)}


# ---- accepted ----------------------------------------------------------------------------------

def literal_keys(x):
    h = ACTS["tanh"](x)
    return np.sum(ACTS["relu"](h - 0.1) ** 2)


def mlp(x, W, *, act="tanh"):
    return np.sum(ACTS[act](x @ W) ** 2)


def mlp_bound(x, W, act="tanh"):
    fn = ACTS[act]
    y = fn(x @ W)
    return np.sum(fn(y) ** 2)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_a_key_given_by_keyword_every_mode(act):
    check_unchanged(lambda x, W: mlp(x, W, act=act), M, W, wrt=1)
    check_unchanged(lambda x, W: mlp_bound(x, W, act=act), M, W, wrt=0)


def test_literal_keys_every_mode():
    check_unchanged(literal_keys, X)


def test_a_key_passed_to_grad_directly():
    rng = np.random.default_rng(9)
    for act in ("softplus", "tanh", "soft"):
        g = srcad.grad(mlp_bound, wrt=1)(M, W, act)
        u, eps = rng.normal(size=W.shape), 1e-6
        fd = (mlp_bound(M, W + eps * u, act) - mlp_bound(M, W - eps * u, act)) / (2 * eps)
        assert abs(fd - np.vdot(g, u)) < 1e-6 * (1 + abs(fd))


LAYERS = [("tanh", 1.0), ("swish", 0.5), ("soft", 2.0), ("tanh", 0.7)]


def in_a_loop(x):
    h = x
    for name, gain in LAYERS:
        h = ACTS[name](gain * h)
    return np.sum(h ** 2)


STEPS = (np.sin, swish, lambda z: z * np.tanh(z), swish)  # a tuple, one function twice


def by_index(x):
    h = x
    for i in range(len(STEPS)):
        h = STEPS[i](h) + 0.1 * h
    return np.sum(h ** 2)


def test_a_loop_over_keys_and_indices_every_mode():
    check_unchanged(in_a_loop, X)
    check_unchanged(by_index, X)


def test_names_of_a_comprehension_every_mode():
    check_unchanged(lambda x: np.sum([ACTS[n](x * 1.5) for n in ("tanh", "relu", "soft")]), X)


def test_a_missing_key_raises_what_python_raises():
    with pytest.raises(KeyError, match="gelu"):
        srcad.grad(mlp, wrt=1)(M, W, act="gelu")
    with pytest.raises(KeyError, match="gelu"):
        srcad.grad(mlp_bound, wrt=1)(M, W, "gelu")


# ---- a table changed between calls -------------------------------------------------------------

SWAP = {"a": np.tanh, "b": np.sin}


def swapped(x, k="b"):
    return np.sum(SWAP[k](x) ** 2)


def swapped_bound(x, k="b"):
    fn = SWAP[k]
    return np.sum(fn(x) ** 2)


def test_a_changed_table_is_never_the_old_functions_derivative():
    global SWAP
    old = dict(SWAP)
    try:
        for f in (swapped, swapped_bound):
            grad = srcad.grad(f)
            np.testing.assert_allclose(grad(X), 2 * np.sin(X) * np.cos(X), rtol=1e-12)
            SWAP["b"] = np.cos  # a function the code was not made for
            with pytest.raises(UnsupportedCaseError, match="the table was changed since"):
                grad(X)
            SWAP["b"] = np.tanh  # a function the code branches to: what Python calls
            np.testing.assert_allclose(grad(X), 2 * np.tanh(X) * (1 - np.tanh(X) ** 2), rtol=1e-12)
            SWAP = {"a": np.tanh, "b": np.cos}  # a new table: compiled anew
            np.testing.assert_allclose(grad(X), -2 * np.cos(X) * np.sin(X), rtol=1e-12)
            SWAP = dict(old)
    finally:
        SWAP = old


# ---- near forms, refused -----------------------------------------------------------------------

PARTIALS = {"a": np.tanh, "b": functools.partial(np.multiply, 2.0)}
CLASSES = [np.tanh, np.float64]
MANY = [lambda z, k=k: z * k for k in range(17)]


def of_partials(x):
    return np.sum(PARTIALS["a"](x))


def of_classes(x):
    return np.sum(CLASSES[0](x))


def of_many(x):
    return np.sum(MANY[3](x))


def by_expression(x, keys=("tanh",)):
    return np.sum(ACTS[keys[0]](x))


def built_here(x):
    table = {"tanh": np.tanh}
    fn = table["tanh"]
    return np.sum(fn(x))


def bound_in_a_branch(x, act="tanh"):
    if x[0] > 0:
        fn = ACTS[act]
    else:
        fn = ACTS["relu"]
    return np.sum(fn(x))


def key_rebound(x, act="tanh"):
    fn = ACTS[act]
    act = "relu"
    return np.sum(fn(x)) + np.sum(ACTS[act](x))


def test_near_forms_stay_refused_saying_what_works():
    works = "srcad differentiates a call of an item of a module-level dict, list or tuple of at most 16 functions"
    refused(of_partials, X, line_text='PARTIALS["a"](x)',
            message="not a function srcad reads or has a rule for; " + works)
    refused(of_classes, X, line_text="CLASSES[0](x)", message="not a function srcad reads")
    refused(of_many, X, line_text="MANY[3](x)", message="which holds 17 functions; " + works)
    refused(by_expression, X, line_text="ACTS[keys[0]](x)", message="bind the key to a name first")
    refused(built_here, X, line_text="fn(x)", message="'fn' is a local variable")
    bound_once = "an item of a dispatch table, which srcad reads only as 'fn = ACTS[act]' at the top level"
    refused(bound_in_a_branch, X, line_text="fn(x)", message=bound_once)
    refused(key_rebound, X, line_text="fn(x)", message=bound_once)


class Gain:
    """Objects of a class with a ``__call__`` and another method: a list of them is no table of
    functions (their calls and methods are read as a list of objects is)."""

    def __init__(self, g):
        self.g = g

    def __call__(self, v):
        return np.tanh(self.g * v)

    def scaled(self, v):
        return self.g * v


GAINS = [Gain(0.9), Gain(1.3)]


def calls_a_list_of_callable_objects(x):
    h = GAINS[0].scaled(x)
    for k in range(len(GAINS)):
        h = GAINS[k](h)
    return np.sum(h ** 2)


def test_a_list_of_callable_objects_is_no_dispatch_table():
    """Fuzz seed 113692341177: the table pass claimed such a list (its items are callable) and
    refused 'GAINS[0]', which the derivative of a derivative reads as a name bound to an item."""
    check_all_modes(calls_a_list_of_callable_objects, (np.array([0.3, -0.6, 1.1]),))


def _dead_proxy():
    def g(v):
        return v * 2.0
    return weakref.proxy(g)


DEAD = [_dead_proxy(), _dead_proxy()]


def calls_a_dead_proxy(x, k=0):
    return np.sum(DEAD[k](x))


def test_a_table_of_weak_proxies_whose_objects_are_gone_is_refused_not_a_crash():
    """ReferenceError from inspecting the items: the old refusal stands."""
    with pytest.raises(srcad.SrcadSyntaxError, match="cannot tell which function this call calls"):
        srcad.grad(calls_a_dead_proxy)(np.ones(3))
