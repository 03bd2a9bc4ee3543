"""The checks every library-call rule gets (tests/test_library_*.py): reverse mode (joint
adjoint, and the vjp pullback called twice), forward mode, float32 arguments keeping float32
gradients, and second order (forward over reverse: ``srcad.hvp``), all against central finite
differences in random directions."""
import numpy as np

import srcad
from srcad.testing import check_grads, check_jvp


def samplers(seed, positive=(0.5, 2.5), unit=(0.15, 0.85)):
    """Argument makers drawing from one seeded generator: ``R(*shape)`` standard normal,
    ``positive(*shape)`` and ``unit(*shape)`` uniform in the given ranges."""
    rng = np.random.default_rng(seed)
    return (lambda *shape: rng.standard_normal(shape), lambda *shape: rng.uniform(*positive, shape),
            lambda *shape: rng.uniform(*unit, shape))


def wrt_all(args):
    return tuple(range(len(args))) if len(args) > 1 else 0


def check_first_order(fun, args, rtol=1e-5, atol=1e-7):
    check_grads(fun, args, wrt=wrt_all(args), rtol=rtol, atol=atol, modes=("rev",))
    check_jvp(fun, args, wrt_all(args), rtol=max(rtol, 1e-4), atol=atol)


def check_float32(fun, args):
    """float32 arguments: the gradient of each is float32, and right to float32 accuracy."""
    args32 = [np.asarray(a, np.float32) if isinstance(a, np.ndarray) else a for a in args]
    # (reverse mode: forward mode is checked in float64 by check_first_order; a step of 1e-2 reorders
    # a median's window in some directions)
    grads = check_grads(fun, args32, wrt=wrt_all(args32), eps=1e-2, rtol=2e-2, atol=2e-3, mode="joint",
                        modes=("rev",))
    grads = grads if isinstance(grads, tuple) else (grads,)
    for a, g in zip(args32, grads):
        if isinstance(a, np.ndarray):
            assert np.asarray(g).dtype == np.float32, f"{np.asarray(g).dtype} gradient for a float32 argument"


def _scalar(fun, arity):
    """``Σ sin(fun(...))``, a scalar function of ``fun``'s ``arity`` arguments srcad can read."""
    if arity == 1:
        def total(a):
            return np.sum(np.sin(fun(a)))
    elif arity == 2:
        def total(a, b):
            return np.sum(np.sin(fun(a, b)))
    else:
        def total(a, b, c):
            return np.sum(np.sin(fun(a, b, c)))
    return total


def check_second_order(fun, args, seed=0):
    """``hvp`` of ``Σ sin(fun(*args))`` in ``args[0]`` against finite differences of its gradient."""
    total = _scalar(fun, len(args))
    u = np.random.default_rng(seed).standard_normal(np.shape(args[0]))
    gradient = srcad.grad(total)
    eps = 1e-5
    numeric = (gradient(args[0] + eps * u, *args[1:]) - gradient(args[0] - eps * u, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(total)(*args, u), numeric, rtol=1e-4, atol=1e-6)
