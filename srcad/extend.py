"""The rule-author API: teach srcad derivatives of code it cannot (or should not) read.

Rules are templates written like the math; see ``docs/extending.md``::

    from srcad.extend import register_vjp

    @register_vjp(scipy.special.ndtr)
    def ndtr(y, x):
        d[x] += d[y] * np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)

An elementwise function of one argument needs only its derivative, from the result ``y``
and the argument ``x``; that gives both the vjp and the jvp rule::

    @register_elementwise(scipy.special.ndtri)
    def ndtri(y, x):
        return np.sqrt(2 * np.pi) * np.exp(y**2 / 2)
"""
import functools
import types
from typing import Any, Callable, Generic, ParamSpec, TypeVar

from .passes.statements import register_context_manager
from .registry import (no_derivative, register_attribute, register_elementwise, register_jvp, register_method,
                       register_nondifferentiable, register_partials, register_vjp)

__all__ = ["register_vjp", "register_jvp", "register_elementwise", "register_partials", "register_method", "register_attribute",
           "register_nondifferentiable", "nondifferentiable", "no_derivative", "custom_vjp", "stop_gradient",
           "register_context_manager"]


P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
_Template = TypeVar("_Template", bound=Callable[..., Any])


def nondifferentiable(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: calls to ``fn`` carry no derivative (their values pass through)."""
    register_nondifferentiable(fn)
    return fn


def stop_gradient(x: T) -> T:
    """``x`` itself, with no derivative flowing through it.

    Inside differentiated code the value passes through and its cotangent stops there: the
    argument is treated as a constant.

    Parameters:
        x: any value (an array, a number, a structure).

    Returns: ``x``, unchanged.

    Raises: nothing.

    >>> import srcad
    >>> def f(x):
    ...     return x * srcad.stop_gradient(x)
    >>> float(srcad.grad(f)(3.0))
    3.0
    """
    return x


register_nondifferentiable(stop_gradient, reason="stop_gradient blocks derivatives on purpose")


class custom_vjp(Generic[P, R]):
    """Replace the derived adjoint of a function with a hand-written rule.

        @srcad.custom_vjp
        def softplus(x):
            return np.log1p(np.exp(x))

        @softplus.defvjp
        def softplus_vjp(y, x):
            d[x] += d[y] * scipy.special.expit(x)

    Calls to ``softplus`` inside differentiated code, and ``srcad.grad(softplus)``, use the
    rule — for numerical stability, or to wrap code srcad cannot read.

    The rule is a template (``docs/extending.md``): its parameters are the result and then
    the function's parameters; ``d[y]`` is the result's cotangent and ``d[x] += ...``
    accumulates an argument's. ``defjvp`` registers a forward-mode rule the same way;
    without one, forward mode (``srcad.jvp``, ``hvp``, ``hessian``, ``jacobian(mode="fwd")``)
    refuses the function: differentiating its body could disagree with the vjp rule.

    Parameters:
        fn: the function; calling the ``custom_vjp`` calls it unchanged.

    Returns: a callable with ``defvjp`` and ``defjvp`` decorators.

    Raises: when differentiated, ``SrcadSyntaxError`` for a template srcad cannot read, and
    the errors of differentiating ``fn``'s body in a mode that has no rule.

    >>> import numpy as np, scipy.special, srcad
    >>> def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> softplus = srcad.custom_vjp(softplus)
    >>> @softplus.defvjp
    ... def softplus_vjp(y, x):
    ...     d[x] += d[y] * scipy.special.expit(x)
    >>> float(srcad.grad(softplus)(0.0))
    0.5
    """

    def __init__(self, fn: Callable[P, R]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = self.__srcad_function__ = fn

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        """A method of a class binds its object, as the function it decorates would."""
        return self if obj is None else types.MethodType(self, obj)

    def defvjp(self, template: _Template) -> _Template:
        """Register ``template`` (a rule in srcad's template form) as this function's vjp."""
        register_vjp(self)(template)  # (its parameters checked: registry.check_parameters)
        return template

    def defjvp(self, template: _Template) -> _Template:
        """Register ``template`` as this function's forward-mode (tangent) rule."""
        register_jvp(self)(template)
        return template

