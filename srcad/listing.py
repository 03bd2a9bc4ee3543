"""``srcad.show``: the generated code a user reads, with the adjoints of the helpers it calls."""
from typing import Any, Callable, Iterator

from .api import Differentiable, _as_differentiable
from .tracebacks import api_boundary


@api_boundary
def show(fun: Callable[..., Any], *args: Any) -> None:
    """Print the generated adjoint of ``fun``: for arguments like ``args`` if given (code is
    specialised on their shapes and dtypes), else the last one generated, else the generic one.

    The user functions it calls are listed after it, each as the forward/backward pair its
    adjoint calls.

    Parameters:
        fun: the function (a ``srcad.differentiable`` shows its own ``wrt``; anything else is
            shown with respect to its first argument).
        *args: example arguments, optional.

    Returns: None; the code goes to standard output.

    Raises: ``WrtError``, ``ArgumentError`` and the compile-time errors
    (``SourceUnavailableError``, ``SrcadSyntaxError``, ``NoRuleError``) as ``srcad.grad``.

    >>> import srcad
    >>> def cube(x):
    ...     return x ** 3
    >>> srcad.show(cube, 2.0)
    def cube_adjoint(x, v=None):
        # line 2: return x ** 3
        _t1 = x ** 3
        d_t1 = cotangent(v, _t1)
        # line 2: return x ** 3
        dx = d_t1 * 3 * x ** 2
        return finish(dx, x)
    <BLANKLINE>
    """
    d = fun if isinstance(fun, Differentiable) else _as_differentiable(fun, 0)
    if args:
        d._functions(*d._bind(args, {}))
    print(d.adjoint_source)
    for helper, generated in callee_pairs(d._compiled):
        print(f"\n# called above: {helper.__qualname__}'s adjoint, as a forward/backward pair\n")
        print(generated.forward_source + "\n" + generated.backward_source)


def callee_pairs(compiled: Any) -> Iterator[tuple[Callable[..., Any], Any]]:
    """``(fn, generated)`` for each user function whose adjoint ``compiled``'s code calls,
    directly or through each other, its forward/backward pair made."""
    from .export import callees

    for helper, helper_compiled in callees(compiled):
        generated = helper_compiled.generated
        generated.ensure_pair()  # reverse mode makes the pair when first needed
        yield helper, generated
