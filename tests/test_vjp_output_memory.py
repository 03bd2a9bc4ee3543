"""``y, pullback = vjp(f, x)``: the caller owns ``y``. Changing it in place (``y -= target``,
the residual step of least squares) must not change what ``pullback`` computes, though the
pullback reads what the forward sweep saved, which may be ``y``'s own memory (the rules of
exp, tanh and sqrt read their output; a layer's cache holds its intermediates)."""
import numpy as np
import pytest

import srcad


def exp_model(w):
    return np.exp(w)


def tanh_layer(W, x):
    return np.tanh(W @ x)


def root(x):
    return np.sqrt(x * x + 1.0)


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def view_of_saved(x):
    t = np.exp(x)
    return t[1:]


def layer_with_cache(W, x):
    h = np.tanh(W @ x)
    out = h * 2.0
    return out, {"h": h, "pre": W @ x}


def pair(x):
    s = np.sin(x)
    return s, np.exp(s)


FUNCTIONS = [exp_model, tanh_layer, root, softmax, view_of_saved, layer_with_cache, pair]
CHANGES = {
    "subtract": lambda a: a.__isub__(0.75),
    "zero": lambda a: a.fill(0.0),
    "nan": lambda a: a.fill(np.nan),
}


def _arguments(fn, rng):
    n = fn.__code__.co_argcount
    return (rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)) if n == 2 else (rng.standard_normal(3),)


def _arrays(y):
    if isinstance(y, np.ndarray):
        return [y]
    if isinstance(y, dict):
        return [a for item in y.values() for a in _arrays(item)]
    if isinstance(y, (tuple, list)):
        return [a for item in y for a in _arrays(item)]
    return []


def _cotangent(y, rng):
    if isinstance(y, tuple):
        return tuple(_cotangent(item, rng) for item in y)
    if isinstance(y, dict):
        return None  # a cache: no cotangent
    return rng.standard_normal(np.shape(y))


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_changing_the_output_leaves_the_pullback_alone(fn, change):
    rng = np.random.default_rng(11)
    args = _arguments(fn, rng)
    wrt = tuple(range(len(args)))
    y, pullback = srcad.vjp(fn, *args, wrt=wrt)
    v = _cotangent(y, rng)
    _, fresh = srcad.vjp(fn, *args, wrt=wrt)
    expected = fresh(v)
    for a in _arrays(y):
        CHANGES[change](a)
    for got, want in zip(pullback(v), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    for got, want in zip(pullback(v), expected):  # and again: nothing the first call changed
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_the_residual_step_of_least_squares():
    w, target = np.array([0.1, -0.4, 0.3]), np.array([1.0, 0.5, 2.0])
    y, pullback = srcad.vjp(exp_model, w)
    np.testing.assert_array_equal(y, np.exp(w))
    y -= target
    np.testing.assert_allclose(pullback(y), (np.exp(w) - target) * np.exp(w), rtol=1e-12)


def test_the_method_form_and_the_structure_of_y():
    d = srcad.differentiable(layer_with_cache, wrt=(0, 1))
    rng = np.random.default_rng(4)
    W, x = rng.standard_normal((3, 3)), rng.standard_normal(3)
    (out, cache), pullback = d.vjp(W, x)
    assert set(cache) == {"h", "pre"}
    np.testing.assert_allclose(out, 2.0 * np.tanh(W @ x), rtol=1e-14)
    v = rng.standard_normal(3)
    before = pullback((v, None))
    cache["h"][:] = 5.0
    out *= -1.0
    after = pullback((v, None))
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    h = np.tanh(W @ x)
    np.testing.assert_allclose(after[1], W.T @ (2.0 * v * (1 - h ** 2)), rtol=1e-12)
