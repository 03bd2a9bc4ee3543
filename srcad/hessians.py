"""Second derivatives of a scalar function: ``hessian``, ``hvp`` and SciPy's ``hessp``, built
from ``srcad.grad`` and the forward mode and Jacobians of ``srcad.derivatives``."""
from typing import Any, Callable, Optional

import numpy as np

from .api import P, Wrt, _as_differentiable, chosen_wrt, grad
from .batching import batched_backward
from .derivatives import by_position, jacobian, jvp_with_keywords, reverse_jacobian, wrt_position, wrt_positions
from .errors import SrcadError
from .pytrees import is_node
from .tracebacks import api_boundary
from .wrapper import made_by


@api_boundary
def hessian(fun: Callable[P, Any], wrt: Optional[Wrt] = None, *, argnums: Optional[Wrt] = None) -> Callable[P, Any]:
    """``hessian(f)(*args)``: the Hessian of scalar ``f`` with respect to argument ``wrt`` (or
    ``argnums``), shaped ``x.shape + x.shape``: for one array or number argument whose
    gradient's adjoint batches (``srcad.batching``), reverse mode over the generated adjoint
    with every row in one batched pullback; otherwise forward mode over the generated
    adjoint (one jvp per entry of x, random generators rewound before each: ``jacobian``). For a tuple ``wrt`` the blocks nest as JAX's do:
    ``H[i][j]`` is ∂²f/∂xᵢ∂xⱼ; structured arguments give structured blocks.

    Parameters:
        fun: a scalar-valued function.
        wrt: position(s) or name(s) of the argument(s); default ``0``.
        argnums: JAX's spelling of ``wrt``; give one of the two.

    Returns: a function of ``fun``'s arguments returning the Hessian (keywords as ``jacobian``).

    Raises: ``WrtError`` for a bad ``wrt``; when called, ``CotangentError`` for a
    non-scalar output, ``ArgumentError`` and the compile-time errors as ``srcad.grad``.

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> srcad.hessian(f)(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    wrt = chosen_wrt(wrt, argnums)
    gradient = grad(fun, wrt)
    forward = jacobian(gradient, wrt, mode="fwd")
    if isinstance(wrt, (tuple, list)):
        return made_by(forward, "srcad.hessian", gradient.__srcad_differentiable__)
    reverse = _as_differentiable(gradient, wrt)

    @api_boundary
    def hessian_fn(*args: P.args, **kwargs: P.kwargs) -> Any:
        args, kwargs = by_position(fun, args, kwargs)
        if not any(a.__class__ is not np.ndarray and is_node(a) for a in (*args, *kwargs.values())):
            try:
                position = wrt_position(fun, args, kwargs, wrt)
                batches = batched_backward(reverse._functions(*reverse._bind(args, kwargs))) is not None
            except SrcadError:  # what reverse over reverse refuses: forward mode says what it can do
                batches = False
            if batches:
                return reverse_jacobian(reverse, args, kwargs, [args[position]], True)
        return forward(*args, **kwargs)

    return made_by(hessian_fn, "srcad.hessian", gradient.__srcad_differentiable__)


@api_boundary
def hvp(fun: Callable[..., Any], wrt: Optional[Wrt] = None, *,
        argnums: Optional[Wrt] = None) -> Callable[..., Any]:
    """``hvp(f)(*args, v, **kwargs)``: H·v for scalar ``f`` without forming H (one jvp of the
    gradient). ``v`` is the last positional argument, always (a tuple of vectors for a tuple
    ``wrt``); keywords are ``f``'s, as for ``jacobian``.

    Parameters:
        fun: a scalar-valued function.
        wrt: position(s) or name(s) of the argument(s); default ``0``.
        argnums: JAX's spelling of ``wrt``; give one of the two.

    Returns: a function ``(*args, v, **kwargs)`` returning H·v, shaped like the ``wrt`` argument (a
    tuple for a tuple ``wrt``).

    Raises: ``WrtError`` for a bad ``wrt``; ``ValueError`` when a tuple ``wrt`` is not
    given a tuple of as many vectors; ``CotangentError``, ``ArgumentError`` and the
    compile-time errors as ``srcad.grad`` and ``srcad.jvp``.

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> srcad.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    array([ 6., 12.])
    """
    wrt = chosen_wrt(wrt, argnums)
    gradient = grad(fun, wrt)

    @api_boundary
    def hessian_vector_product(*args: Any, **kwargs: Any) -> Any:
        *args, v = args
        args, kwargs = by_position(fun, tuple(args), kwargs)
        positions, single = wrt_positions(fun, args, kwargs, wrt)
        vectors = (v,) if single else v
        if not isinstance(vectors, (tuple, list)) or len(vectors) != len(positions):
            raise ValueError(f"hvp with wrt={wrt!r} takes a tuple of {len(positions)} vectors, one per argument")
        tangents = [None] * len(args)
        for p, u in zip(positions, vectors):
            tangents[p] = u
        return jvp_with_keywords(gradient, args, tuple(tangents), kwargs)[1]

    return made_by(hessian_vector_product, "srcad.hvp", gradient.__srcad_differentiable__)


@api_boundary
def hessp(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``hessp(f)(x, p, *args, **kwargs)``: H·p for scalar ``f(x, *args, **kwargs)`` with respect to its first
    argument, in SciPy's order (``scipy.optimize.minimize(f, x0, jac=srcad.grad(f),
    hessp=srcad.hessp(f), method="trust-ncg")``); ``hvp`` takes its vector last instead.

    Parameters:
        fun: a scalar-valued function ``f(x, *args)``.

    Returns: a function ``(x, p, *args, **kwargs)`` returning H·p, shaped like ``x``.

    Raises: when called, as ``srcad.hvp``.

    >>> import numpy as np, srcad
    >>> def f(x, a):
    ...     return a * np.sum(x ** 3)
    >>> srcad.hessp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0]), 2.0)
    array([12.,  0.])
    """
    product = hvp(fun, 0)

    @api_boundary
    def hessian_vector_product(x: Any, p: Any, *args: Any, **kwargs: Any) -> Any:
        return product(x, *args, p, **kwargs)

    return made_by(hessian_vector_product, "srcad.hessp", _as_differentiable(fun, 0))
