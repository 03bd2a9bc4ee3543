"""Forward mode and the derivatives built from it and from ``srcad.api``: ``jvp``,
``jacobian``, ``hessian``, ``hvp``, ``hessp``.

Arguments are passed as everywhere in srcad (see ``srcad.api``); ``wrt`` is checked when
the transform is made.
"""
import types

import numpy as np

from .api import _as_differentiable, _forward_target, _params, chosen_wrt, grad
from .arguments import check_arguments, checked_cotangent, is_structure, where
from .compile import compile_jvp
from .errors import WrtError
from .source import capture


def jvp(fun, primals, tangents):
    """``(y, y_dot)``: ``fun(*primals)`` and its directional derivative J·t, by forward mode.

    ``tangents`` has one entry per primal: an array (or number, list, dict) shaped like that
    argument, or None for an argument that is held constant. ``fun`` may itself be a gradient
    made by ``srcad.grad`` (then ``y_dot`` is a Hessian-vector product).
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(tangents) != len(primals):
        raise ValueError(f"jvp needs one tangent per primal (None for a constant argument); got "
                         f"{len(primals)} primals and {len(tangents)} tangents")
    fn, prefix, fixed = _forward_target(fun, primals)
    if not isinstance(fn, types.FunctionType):
        capture(fn)  # raises the error that says why srcad cannot read it
    primals, tangents = prefix + primals, (None,) * len(prefix) + tangents
    params = _params(fn)
    if len(primals) > len(params):
        raise TypeError(f"{fn.__qualname__} takes {len(params) - len(prefix)} arguments but jvp got "
                        f"{len(primals) - len(prefix)} primals")
    wrt = tuple(p for p, t in zip(params, tangents) if t is not None)
    check_arguments(where(fn), params, primals, wrt)
    containers = tuple(p for p, a in zip(params, primals) if is_structure(a))
    compiled = compile_jvp(fn, wrt, containers)
    keywords = {compiled.tangent_params[p]: checked_cotangent(t, where(fn), "tangent")
                for p, t in zip(params, tangents) if t is not None}
    return compiled.bind(fn)[0](*primals, **fixed, **keywords)


def _wrt_position(fun, args, wrt):
    """The position among ``args`` of the one argument ``wrt`` denotes."""
    if isinstance(wrt, str):
        fn, prefix, _ = _forward_target(fun, args)
        params = _params(fn)[len(prefix):]
        if wrt not in params:
            raise WrtError(f"{where(fn)}: wrt={wrt!r} is not a parameter (parameters: {', '.join(params)})")
        return params.index(wrt)
    if not -len(args) <= wrt < len(args):
        raise WrtError(f"wrt={wrt} but the function was given {len(args)} arguments")
    return wrt % len(args)


def _one_wrt(fun, wrt):
    """Check, when the transform is made, that ``wrt`` is one argument ``fun`` has."""
    if isinstance(wrt, (tuple, list)):
        raise WrtError("jacobian, hessian and hvp take one argument at a time: wrt must be an index or a name")
    _as_differentiable(fun, wrt)


def _basis(shape):
    """The unit arrays of ``shape``, in C order."""
    size = int(np.prod(shape, dtype=np.int64))
    for k in range(size):
        e = np.zeros(size)
        e[k] = 1.0
        yield e.reshape(shape)


def jacobian(fun, wrt=None, mode="rev", *, argnums=None):
    """``jacobian(f)(*args)``: J of ``f`` with respect to argument ``wrt`` (or ``argnums``,
    JAX's spelling), shaped ``y.shape + x.shape``.

    ``mode="rev"`` runs ``f`` forward once and pulls back one basis cotangent per output
    entry (cheap when outputs are few); ``mode="fwd"`` pushes one basis tangent per input
    entry through ``jvp`` (cheap when inputs are few).
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', not {mode!r}")
    wrt = chosen_wrt(wrt, argnums)
    _one_wrt(fun, wrt)
    reverse = _as_differentiable(fun, wrt) if mode == "rev" else None

    def jacobian_fn(*args):
        pos = _wrt_position(fun, args, wrt)
        x_shape = np.shape(args[pos])
        if mode == "rev":
            y, pullback = reverse._vjp(*reverse._bind(args, {}))  # pulled back at once: no copy
            rows = [np.asarray(pullback(e), np.float64) for e in _basis(np.shape(y))]
            return np.stack(rows).reshape(np.shape(y) + x_shape) if rows else np.zeros(np.shape(y) + x_shape)
        tangents = [None] * len(args)
        columns, y = [], None
        for e in _basis(x_shape):
            tangents[pos] = e
            y, y_dot = jvp(fun, args, tangents)
            columns.append(np.asarray(y_dot, np.float64))
        if y is None:  # x has no entries
            y = fun(*args)
        y_shape = np.shape(y)
        if not columns:
            return np.zeros(y_shape + x_shape)
        return np.stack(columns, axis=-1).reshape(y_shape + x_shape)

    return jacobian_fn


def hessian(fun, wrt=None, *, argnums=None):
    """``hessian(f)(*args)``: the Hessian of scalar ``f`` with respect to argument ``wrt`` (or
    ``argnums``), shaped ``x.shape + x.shape``: forward mode over the generated adjoint (one
    jvp per entry of x)."""
    wrt = chosen_wrt(wrt, argnums)
    _one_wrt(fun, wrt)
    return jacobian(grad(fun, wrt), wrt, mode="fwd")


def hvp(fun, wrt=None, *, argnums=None):
    """``hvp(f)(*args, v)``: H·v for scalar ``f`` without forming H (one jvp of the gradient).
    ``v`` is the last positional argument, always."""
    wrt = chosen_wrt(wrt, argnums)
    _one_wrt(fun, wrt)
    gradient = grad(fun, wrt)

    def hessian_vector_product(*args):
        *args, v = args
        tangents = [None] * len(args)
        tangents[_wrt_position(fun, args, wrt)] = v
        return jvp(gradient, args, tangents)[1]

    return hessian_vector_product


def hessp(fun):
    """``hessp(f)(x, p, *args)``: H·p for scalar ``f(x, *args)`` with respect to its first
    argument, in SciPy's order (``scipy.optimize.minimize(f, x0, jac=srcad.grad(f),
    hessp=srcad.hessp(f), method="trust-ncg")``); ``hvp`` takes its vector last instead."""
    product = hvp(fun, 0)

    def hessian_vector_product(x, p, *args):
        return product(x, *args, p)

    return hessian_vector_product
