"""Silent wrong results, crashes and false refusals that probes 10 and 11 found in srcad's
performance machinery, guards and second order, each checked against finite differences."""
import numpy as np
import pytest

import srcad
from loop_checks import all_modes
from srcad.testing import check_grads


def reuse_across_a_loop(x, c):
    t = c * 2.0  # bound once before the loop, read once inside it: not a buffer to update
    s = 0.0
    for _ in range(3):
        s = s + np.sum(x * (t + c))
    return s


def adjoint_reuse_across_a_loop(x):
    s = np.sum(x ** 2) * 0.5
    out = 0.0
    for _ in range(3):
        out = out + s * 2.0
        x = x * 1.5
    return out + np.sum(np.sin(x))


def test_buffer_reuse_never_updates_a_temporary_a_loop_reads_again():
    rng = np.random.default_rng(0)
    x, c = rng.standard_normal(4), rng.standard_normal(4)
    assert srcad.value_and_grad(reuse_across_a_loop)(x, c)[0] == pytest.approx(reuse_across_a_loop(x, c))
    all_modes(reuse_across_a_loop, (x, c), wrt=(0, 1))
    all_modes(adjoint_reuse_across_a_loop, (x,))


def float32_plus_numpy_scalar(t, b):
    z = t * 1000.0 + b  # float32 array + np.float64 promotes to float64 (NEP 50)
    return np.sum(z * z)


def test_a_numpy_float64_scalar_promotes_like_numpy():
    t = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    b = np.float64(0.123456789)
    value, grad = srcad.value_and_grad(float32_plus_numpy_scalar, wrt=1)(t, b)
    assert value == float32_plus_numpy_scalar(t, b)
    eps = 1e-2  # central differences of a quadratic are exact: a large step, little cancellation
    numeric = (float32_plus_numpy_scalar(t, b + eps) - float32_plus_numpy_scalar(t, b - eps)) / (2 * eps)
    assert grad == pytest.approx(numeric, rel=1e-6)


G = np.array([1.0, 2.0, 3.0])


def update_through_an_argument_alias(x):
    v = x
    v -= 0.5  # NumPy writes into x
    return np.sum(x ** 2)


def update_through_a_global_alias(x):
    v = G
    v += x  # NumPy writes into the module's G
    return np.sum(v ** 2)


def test_augmented_updates_through_aliases_are_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="'v -= ...' updates 'v' in place, and 'x'"):
        srcad.grad(update_through_an_argument_alias)(np.ones(3))
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory with the global 'G'"):
        srcad.grad(update_through_a_global_alias)(np.ones(3))
    np.testing.assert_array_equal(G, [1.0, 2.0, 3.0])


def scaled(x, a=2.0):
    return np.sum(a * np.sin(x))


def helper(x, a=2.0):
    return np.sin(a * x)


def calls_helper(x):
    return np.sum(helper(x) * x)


def keyword_scaled(x, a=2.0, *, b=1.0):
    return np.sum(a * b * np.sin(x))


def test_rebinding_defaults_is_seen_when_binding_keywords():
    """The arguments bound with keywords took the defaults the signature was first read with."""
    x = np.array([0.1, 0.2])
    f = srcad.differentiable(keyword_scaled)
    f.grad(x, b=1.0)
    try:
        keyword_scaled.__defaults__ = (3.0,)
        np.testing.assert_allclose(f.grad(x, b=1.0), 3.0 * np.cos(x))
        np.testing.assert_allclose(f.vjp(x, b=1.0)[1](1.0), 3.0 * np.cos(x))
        keyword_scaled.__kwdefaults__ = {"b": 2.0}
        np.testing.assert_allclose(f.grad(x), 6.0 * np.cos(x))
    finally:
        keyword_scaled.__defaults__, keyword_scaled.__kwdefaults__ = (2.0,), {"b": 1.0}


def test_rebinding_defaults_is_seen_by_every_entry_point():
    x = np.array([0.1, 0.2, 0.3])
    f = srcad.differentiable(scaled)
    g = srcad.differentiable(calls_helper)
    try:
        f.grad(x), f.vjp(x), g.grad(x)
        scaled.__defaults__ = (3.0,)
        helper.__defaults__ = (3.0,)
        for got in (f.grad(x), f.adjoint(x), f.vjp(x)[1](1.0)):
            np.testing.assert_allclose(got, 3.0 * np.cos(x))
        check_grads(calls_helper, (x,))
        np.testing.assert_allclose(g.grad(x), np.sin(3.0 * x) + 3.0 * x * np.cos(3.0 * x))
    finally:
        scaled.__defaults__ = (2.0,)
        helper.__defaults__ = (2.0,)


def jacobi(b, n_iter=3):
    u = np.zeros(len(b))
    for _ in range(n_iter):
        u_old = u.copy()
        for i in range(1, len(b) - 1):
            u[i] = 0.5 * (u_old[i - 1] + u_old[i + 1] + b[i])
    return np.sum(u ** 2)


def test_second_order_of_a_jacobi_sweep():
    """Differentiating the adjoint again was refused: the alias check mixed what the inner loop
    made on an earlier pass of the outer loop with what it makes now (probe 10B), and read
    ``grad_buffer``'s result as new memory besides its argument's."""
    all_modes(jacobi, (np.array([0.3, -0.2, 0.5, 0.1, 0.4]),))


def updated_local(x):
    y = x * 1.0
    y[1] = x[0] * 2.0
    return y * x


def through_a_helper_updating_a_local(x):
    return np.sum(np.sin(updated_local(x)))


def test_second_order_of_a_helper_that_updates_a_local():
    """The second order of code calling a helper's forward/backward pair was refused: the alias
    check read ``finish(dx, x)`` as reading x's values (it reads its shape) and ``cotangent_like``'s
    result as maybe a list (probe 11A: 25 of 200 random programs refused at second order)."""
    all_modes(through_a_helper_updating_a_local, (np.array([0.3, -0.7, 1.2, 0.5]),))


def dict_copy_updated(x):
    s = {"h": x[:2] * 1.0, "c": x[2:] * 1.0}
    s2 = dict(s)
    s2["c"] = np.tanh(s["c"])
    return np.sum(np.sin(s2["c"]))


def test_second_order_through_a_dict_copy():
    """vjp of grad raised a CotangentError naming srcad's own file: ``dict_grad`` was
    differentiated as a helper, whose cotangent check met the 0 left in a cleared slot (probe 11A)."""
    all_modes(dict_copy_updated, (np.array([0.3, -0.7, 1.2, 0.5]),))


def store_through_a_stale_alias(x):
    v0 = x * 1.0
    v2 = v0
    v0 += x[0]  # NumPy updates the memory v2 shares; srcad rebinds v0
    v2[2] = x[0]  # in Python this writes v0[2] too
    return np.sum(v0 * x)


def object_array_holding_an_array(x):
    y = x * 1.0
    O = np.empty(1, dtype=object)
    O[0] = y
    t = O[0]
    t[1] = 5.0  # writes y[1]
    return np.sum(y * x)


def object_array_item_of_a_dict(x):
    d = {"a": x * 1.0}
    e = np.asarray(d).item()  # d itself
    e["a"] = x ** 3
    return np.sum(d["a"] * x)


@pytest.mark.parametrize("fn, message", [
    (store_through_a_stale_alias, "shares memory"),
    (object_array_holding_an_array, "object arrays"),
    (object_array_item_of_a_dict, "shares memory with 'd'"),
], ids=lambda a: getattr(a, "__name__", ""))
def test_updates_srcad_cannot_follow_are_refused(fn, message):
    """Probe 12A: each was accepted with a wrong value or gradient (an element store through a
    name an augmented update left stale; object arrays, whose items are references)."""
    x = np.array([0.3, -0.7, 1.1, 0.5])
    for transform in (srcad.grad, lambda f: (lambda a: srcad.jvp(f, (a,), (a,)))):
        with pytest.raises(srcad.SrcadSyntaxError, match=message):
            transform(fn)(x.copy())
