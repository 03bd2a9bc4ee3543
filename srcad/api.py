"""The public API: the decorator and the reverse-mode transformations built on it (forward
mode, Jacobians and Hessians: ``srcad.derivatives``).

How arguments are passed, everywhere:

- Every argument, positional or keyword, is the function's: ``f.grad(x, v=3.0)`` binds the
  function's parameter ``v``. ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``
  and ``hessian`` take no cotangent at all.
- ``adjoint(*args, v)``: the cotangent is the keyword ``v=`` when the function has no
  parameter named ``v`` (and no ``**kwargs``); otherwise, and always when given positionally,
  it is the last positional argument beyond those the function requires.
  ``hvp(f)(*args, v)`` takes its vector last, positionally. ``jacobian``, ``hessian`` and
  ``hvp`` find the arguments they differentiate by position (``Signature.split``).
- A bound method (``srcad.grad(model.loss)``, or a ``@srcad.differentiable`` method used
  through an instance) holds ``self`` constant and ``wrt`` counts the arguments after it;
  a ``functools.partial`` holds its arguments constant; a function wrapped by another
  decorator is read as the wrapper that runs.
- Arguments are checked (``srcad.arguments``): exact ``np.ndarray`` or a NumPy-protocol
  array (a Dask or CuPy array, ``srcad.protocol``), nothing complex,
  floats where a derivative is asked; ``wrt`` is checked when the transform is made.

The wrapper these return is ``srcad.wrapper.Differentiable``; which generated code a call
runs, ``srcad.dispatch``.
"""
import functools
from typing import Any, Callable, Optional, overload

from . import registry
from .arguments import unbind, where
from .errors import ArgumentError, NoRuleError, WrtError
from .passes.forward_calls import refuse_custom_vjp_body
from .source import own_api_error, srcad_api_function, trampoline, unwrap
from .source_text import function_with_source
from .tracebacks import api_boundary
from .wrapper import Differentiable, P, R, Wrt, made_by


def chosen_wrt(wrt: Optional[Wrt], argnums: Optional[Wrt], default: Wrt = 0) -> Wrt:
    """``wrt``, or ``argnums`` (JAX's spelling of the same thing); both given is a ``WrtError``."""
    if argnums is None:
        return default if wrt is None else wrt
    if wrt is not None:
        raise WrtError(f"wrt={wrt!r} and argnums={argnums!r} both given: argnums is JAX's spelling of wrt "
                       "(the arguments to differentiate with respect to); pass one of them")
    return argnums


@overload
def differentiable(fn: Callable[P, R], *, wrt: Optional[Wrt] = None, argnums: Optional[Wrt] = None,
                   source: Optional[str] = None, backend: str = "numpy") -> Differentiable[P, R]: ...


@overload
def differentiable(fn: None = None, *, wrt: Optional[Wrt] = None, argnums: Optional[Wrt] = None,
                   source: Optional[str] = None,
                   backend: str = "numpy") -> Callable[[Callable[P, R]], Differentiable[P, R]]: ...


@api_boundary
def differentiable(fn: Optional[Callable[P, R]] = None, *, wrt: Optional[Wrt] = None,
                   argnums: Optional[Wrt] = None, source: Optional[str] = None, backend: str = "numpy") -> Any:
    """Decorator: ``@srcad.differentiable`` or ``@srcad.differentiable(wrt="x")`` (or ``argnums=``).

    ``source=`` is the text of ``fn``'s definition, for a function Python keeps no source of
    (typed at the interactive prompt, made by ``exec`` or ``python -c``); the result works
    with ``srcad.grad`` and every other transformation. It must define exactly ``fn``'s code.

    Parameters:
        fn: the function (a plain function, a method, a ``functools.partial``, a
            ``srcad.custom_vjp``, or a gradient made by ``srcad.grad``); omitted, the call
            returns the decorator.
        wrt: the argument(s) to differentiate with respect to: a position or a parameter
            name, or a tuple of them (then gradients come as a tuple). Default ``0``.
        argnums: JAX's spelling of ``wrt``; give one of the two.
        source: the text of ``fn``'s definition, when Python keeps none.
        backend: ``"numpy"`` (default), ``"numba"`` (compile the generated code with numba,
            docs/numba.md) or ``"auto"`` (numba where it compiles, NumPy code otherwise).

    Returns: a ``Differentiable``: calling it runs ``fn`` unchanged; its methods ``grad``,
    ``value_and_grad``, ``adjoint``, ``vjp`` and properties ``adjoint_source``,
    ``vjp_source`` give derivatives and the generated code. Code is generated on first use.

    Raises: ``WrtError`` at once for a ``wrt`` that names no parameter (or both ``wrt``
    and ``argnums``); ``ArgumentError`` for a ``source`` that does not compile to ``fn``'s
    code; the first derivative call raises ``SourceUnavailableError``,
    ``SrcadSyntaxError``, ``NoRuleError`` or ``UnsupportedCaseError`` for code srcad cannot
    differentiate.

    >>> import numpy as np, srcad
    >>> @srcad.differentiable(wrt="x")
    ... def f(scale, x):
    ...     return scale * np.sum(np.sin(x))
    >>> np.round(f.grad(2.0, np.array([0.0, 1.0])), 4)
    array([2.    , 1.0806])
    >>> namespace = {}
    >>> exec("def cube(x):\\n    return x ** 3\\n", namespace)
    >>> float(srcad.differentiable(namespace["cube"], source="def cube(x):\\n    return x ** 3\\n").grad(2.0))
    12.0
    """
    wrt = chosen_wrt(wrt, argnums)
    if fn is None:
        return api_boundary(lambda f: differentiable(f, wrt=wrt, source=source, backend=backend))
    return Differentiable(fn if source is None else function_with_source(fn, source), wrt, backend)


def _as_differentiable(fun, wrt, backend="numpy"):
    return Differentiable(fun, wrt, backend)  # a gradient srcad made becomes a _Nested


@api_boundary
def grad(fun: Callable[P, Any], wrt: Optional[Wrt] = None, *, argnums: Optional[Wrt] = None,
         has_aux: bool = False, backend: str = "numpy") -> Callable[P, Any]:
    """``grad(f)(*args)``: the gradient of scalar-valued ``f`` with respect to ``wrt``
    (``argnums``: the same, JAX's spelling).

    With ``has_aux=True``, ``f`` returns ``(output, aux)``: the gradient is the scalar
    ``output``'s, ``aux`` is returned as computed, and the call gives ``(gradient, aux)``.

    Parameters:
        fun: the function to differentiate (anything ``srcad.differentiable`` accepts;
            ``srcad.grad(srcad.grad(f))`` is a second derivative).
        wrt: position(s) or name(s) of the argument(s); a tuple gives a tuple of gradients.
            Default ``0``.
        argnums: JAX's spelling of ``wrt``; give one of the two.
        has_aux: ``fun`` returns ``(output, aux)``; ``aux`` is passed through.

    Returns: a function of ``fun``'s arguments returning the gradient, shaped (and
    structured) like the ``wrt`` argument(s); with ``has_aux``, ``(gradient, aux)``.

    Raises: ``WrtError`` at once for a bad ``wrt``; when called, ``CotangentError`` for a
    non-scalar output, ``ArgumentError`` for arguments srcad does not differentiate with
    (and, with ``has_aux``, an output that is not a pair), and the compile-time errors
    (``SrcadSyntaxError``, ``NoRuleError``, ``SourceUnavailableError``).

    >>> import numpy as np, srcad
    >>> def f(x, y):
    ...     return np.sum(x * y) + y ** 2
    >>> srcad.grad(f)(np.array([1.0, 2.0]), 3.0)
    array([3., 3.])
    >>> float(srcad.grad(f, wrt="y")(np.array([1.0, 2.0]), 3.0))
    9.0
    """
    d = _as_differentiable(fun, chosen_wrt(wrt, argnums), backend)
    if has_aux:
        @functools.wraps(unwrap(fun))
        @api_boundary
        def gradient_and_aux(*args: P.args, **kwargs: P.kwargs) -> tuple[Any, Any]:
            (_, aux), g = d._value_and_grad_with_aux(*d._bind(args, kwargs))
            return g, aux

        gradient_and_aux.__srcad_has_aux__ = True  # not differentiated again (refused inside srcad code too)
        return gradient_and_aux

    @functools.wraps(unwrap(fun))
    @api_boundary
    def gradient(*args: P.args, **kwargs: P.kwargs) -> Any:
        return d.grad(*args, **kwargs)

    gradient.__srcad_differentiable__ = d
    gradient.__srcad_source__ = functools.partial(_nested_source, d)  # what srcad reads when code calls it
    return gradient


def _nested_source(d):
    """The generated adjoint a call of ``srcad.grad(f)`` inside differentiated code reads."""
    if d._prefix or d._fixed:
        raise ArgumentError(f"{d._sig.where}: the gradient of a bound method or functools.partial cannot be "
                            "differentiated again where it is called inside differentiated code; differentiate "
                            "a function that takes the object (or the fixed values) as arguments")
    return unwrap(d._functions(())[0])


grad.__srcad_static__ = True  # srcad.grad(h)(x) inside differentiated code is resolved when compiling


@api_boundary
def value_and_grad(fun: Callable[P, R], wrt: Optional[Wrt] = None, *, argnums: Optional[Wrt] = None,
                   has_aux: bool = False, backend: str = "numpy") -> Callable[P, tuple[R, Any]]:
    """``value_and_grad(f)(*args) -> (f(*args), gradient)``, from one forward pass.

    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the call gives
    ``((output, aux), gradient)`` (JAX's shape): ``aux`` gets no derivative.

    Parameters: ``fun``, ``wrt``, ``argnums``, ``has_aux``: as for ``srcad.grad``.

    Returns: a function of ``fun``'s arguments returning ``(value, gradient)``.

    Raises: as ``srcad.grad``.

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.sum(x ** 2)
    >>> y, dx = srcad.value_and_grad(f)(np.array([1.0, 2.0]))
    >>> float(y), dx
    (5.0, array([2., 4.]))
    """
    d = _as_differentiable(fun, chosen_wrt(wrt, argnums), backend)

    @functools.wraps(unwrap(fun))
    @api_boundary
    def value_and_gradient(*args: P.args, **kwargs: P.kwargs) -> tuple[R, Any]:
        if has_aux:
            return d._value_and_grad_with_aux(*d._bind(args, kwargs))
        return d.value_and_grad(*args, **kwargs)

    return made_by(value_and_gradient, "srcad.value_and_grad", d)


@api_boundary
def vjp(fun: Callable[..., R], *args: Any, wrt: Optional[Wrt] = None, argnums: Optional[Wrt] = None,
        backend: str = "numpy", **kwargs: Any) -> tuple[R, Callable[..., Any]]:
    """``(y, pullback)`` for ``fun(*args)``; ``pullback(v)`` is vᵀJ and may be called many times.

    For an output that is a tuple, list or dict, ``v`` has its structure; ``None`` in place
    of one of its items means a zero cotangent there (an output not differentiated, such as
    a layer's cache).

    Parameters:
        fun: the function to differentiate.
        *args, **kwargs: its arguments (``wrt``, ``argnums`` and ``backend`` are this function's
            keywords: pass a parameter of those names by position).
        wrt, argnums: as for ``srcad.grad``.

    Returns: ``(y, pullback)``: ``y = fun(*args)``; ``pullback(v=None)`` gives vᵀJ for the
    ``wrt`` argument(s), ``v`` optional for a scalar ``y``; ``pullback.batched(V)`` gives
    them for every row of ``V`` (shape ``(B,) + y.shape``), stacked along that axis.

    Raises: ``WrtError`` for a bad ``wrt``; ``ArgumentError`` for arguments srcad does not
    differentiate with; the compile-time errors; ``pullback`` raises ``CotangentError`` for
    a ``v`` not shaped like ``y``.

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.cumsum(x)
    >>> y, pullback = srcad.vjp(f, np.array([1.0, 2.0, 3.0]))
    >>> y, pullback(np.array([1.0, 0.0, 0.0])), pullback(np.ones(3))
    (array([1., 3., 6.]), array([1., 0., 0.]), array([3., 2., 1.]))
    >>> pullback.batched(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    array([[1., 0., 0.],
           [3., 2., 1.]])
    """
    return _as_differentiable(fun, chosen_wrt(wrt, argnums), backend).vjp(*args, **kwargs)


@api_boundary
def adjoint(fun: Callable[..., Any], wrt: Optional[Wrt] = None, *,
            argnums: Optional[Wrt] = None, backend: str = "numpy") -> Callable[..., Any]:
    """The companion ``g(*args, v)`` that returns vᵀJ.

    Parameters: ``fun``, ``wrt``, ``argnums``, ``backend``: as for ``srcad.grad``.

    Returns: a function ``g(*args, v)``: the cotangent ``v`` (shaped like the output,
    optional for a scalar output) is the keyword ``v=`` or the last positional argument,
    as for ``Differentiable.adjoint``.

    Raises: ``WrtError`` at once for a bad ``wrt``; when called, ``CotangentError``,
    ``ArgumentError`` and the compile-time errors, as ``Differentiable.adjoint``.

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return x[::-1] * 2.0
    >>> srcad.adjoint(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([0., 2.])
    """
    d = _as_differentiable(fun, chosen_wrt(wrt, argnums), backend)
    # a partial (C) of the method, which is its own API boundary: no Python frame of its own
    return made_by(functools.wraps(unwrap(fun))(functools.partial(type(d).adjoint, d)), "srcad.adjoint", d)


def source_function(fun, args):
    """The Python function srcad transforms for ``fun(*args)``: ``fun`` itself, or for a
    gradient made by ``srcad.grad`` the generated adjoint that computes it."""
    return _forward_target(fun, tuple(args))[0]


def _forward_target(fun, args, kwargs=None):
    """``(function, prefix, fixed)``: what forward mode transforms for ``fun(*args, **kwargs)``,
    with the arguments bound in front of ``args`` and the keywords fixed (see ``arguments.unbind``)."""
    inner = getattr(fun, "__srcad_differentiable__", None)
    if inner is not None:
        return unwrap(inner._functions(*inner._bind(args, kwargs or {}))[0]), inner._prefix, inner._fixed
    if isinstance(fun, Differentiable):
        return fun._source_function(args), fun._prefix, fun._fixed
    fn, prefix, fixed, _ = unbind(fun)
    if srcad_api_function(fn):  # srcad.hessian(f), srcad.jacobian(...): not read as code of yours
        raise own_api_error(fun)
    if registry.lookup(registry.JVP, fun) is not None:
        return trampoline(fun), (), {}  # a function with a rule (library, custom_vjp): differentiate a call to it
    refuse_custom_vjp_body(fun, lambda message: NoRuleError(f"{where(fn)}: {message}"))
    return fn, prefix, fixed
