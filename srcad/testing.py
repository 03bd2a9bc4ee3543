"""Testing helpers shipped for users: check a gradient against finite differences."""
import numpy as np

_CONTAINERS = (list, tuple, dict)


def _flatten(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


def _unflatten(template, leaves):
    if isinstance(template, dict):
        return {k: _unflatten(template[k], leaves) for k in sorted(template)}
    if isinstance(template, (list, tuple)):
        items = [_unflatten(t, leaves) for t in template]
        if hasattr(template, "_fields"):  # a namedtuple, such as np.linalg.slogdet's result
            return type(template)(*items)
        return type(template)(items) if isinstance(template, tuple) else items
    return leaves.pop(0)


def _random_like(x, rng):
    if isinstance(x, (dict, list, tuple)):
        return _unflatten(x, [_random_like(leaf, rng) for leaf in _flatten(x)])
    return rng.standard_normal(np.shape(x)) if np.ndim(x) else float(rng.standard_normal())


def _vdot(a, b):
    return float(sum(np.vdot(np.asarray(u, np.float64), np.asarray(w, np.float64))
                     for u, w in zip(_flatten(a), _flatten(b))))


def _axpy(x, t, direction):
    leaves = [np.asarray(u, np.float64) + t * np.asarray(w, np.float64) if np.ndim(u) else float(u) + t * float(w)
              for u, w in zip(_flatten(x), _flatten(direction))]
    return _unflatten(x, leaves)


def check_grads(fun, args, wrt=0, v=None, eps=1e-6, rtol=1e-5, atol=1e-7, directions=3, seed=0, mode="both"):
    """Check srcad's vᵀJ for ``fun`` at ``args`` against central finite differences.

    For random directions u (over the ``wrt`` arguments) it compares
    ``⟨vᵀJ, u⟩`` with ``⟨v, (f(x + εu) - f(x - εu)) / 2ε⟩`` and raises ``AssertionError``
    with both numbers if they differ. ``mode`` picks which generated code is checked:
    ``"joint"`` (``f.adjoint``), ``"split"`` (``vjp`` then the pullback, called twice)
    or ``"both"``. Returns the gradient it checked.
    """
    from .api import Differentiable

    wrt_tuple = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
    fn = fun.func if isinstance(fun, Differentiable) else fun
    d = Differentiable(fn, wrt)
    args = list(args)
    params = list(__import__("inspect").signature(fn).parameters)
    positions = [w if isinstance(w, int) else params.index(w) for w in wrt_tuple]
    y = fn(*args)
    rng = np.random.default_rng(seed)
    if v is None:
        v = _random_like(y, rng)
    results = []
    if mode in ("joint", "both"):
        results.append(("adjoint", d.adjoint(*args, v)))
    if mode in ("split", "both"):
        y2, pullback = d.vjp(*args)
        _assert_close(y2, y, "vjp's forward value", rtol, atol)
        first = pullback(v)
        again = pullback(v)
        for a, b in zip(_flatten(first), _flatten(again)):
            _assert_close(a, b, "a second pullback call", 0, 0)
        results.append(("pullback", first))
    for name, grads in results:
        grads_t = (grads,) if not isinstance(wrt, (tuple, list)) else grads
        for pos, g in zip(positions, grads_t):
            _assert_structure(g, args[pos], name)
        for k in range(directions):
            direction = [_random_like(args[p], rng) for p in positions]

            def shifted(t):
                moved = list(args)
                for p, u in zip(positions, direction):
                    moved[p] = _axpy(args[p], t, u)
                return fn(*moved)

            numeric = _vdot(v, _sub(shifted(eps), shifted(-eps))) / (2 * eps)
            analytic = sum(_vdot(g, u) for g, u in zip(grads_t, direction))
            if not abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic), 1.0):
                raise AssertionError(
                    f"{name} of {getattr(fn, '__qualname__', fn)}: directional derivative {analytic!r} "
                    f"but finite differences give {numeric!r} (direction {k})")
    return results[0][1]


def _sub(a, b):
    leaves = [np.asarray(u, np.float64) - np.asarray(w, np.float64) for u, w in zip(_flatten(a), _flatten(b))]
    return _unflatten(a, leaves) if isinstance(a, _CONTAINERS) else leaves[0]


def _assert_close(a, b, what, rtol, atol):
    for u, w in zip(_flatten(a), _flatten(b)):
        if not np.allclose(u, w, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{what} differs: {u!r} vs {w!r}")


def _assert_structure(g, x, name):
    if isinstance(x, dict):
        assert isinstance(g, dict) and set(g) == set(x), f"{name}: gradient keys {list(g)} != {list(x)}"
        for k in x:
            _assert_structure(g[k], x[k], name)
    elif isinstance(x, (list, tuple)):
        assert isinstance(g, type(x)) and len(g) == len(x), f"{name}: gradient {type(g).__name__} != {type(x).__name__}"
        for gi, xi in zip(g, x):
            _assert_structure(gi, xi, name)
    else:
        assert np.shape(g) == np.shape(x), f"{name}: gradient shape {np.shape(g)} != argument shape {np.shape(x)}"
