"""The public API: the decorator and the function transformations built on it."""
import functools

from .compile import compile_function
from .errors import CotangentError
from .pipeline import param_names
from .source import capture, unwrap

_CONTAINERS = (list, tuple, dict)


def _normalize_wrt(wrt):
    single = not isinstance(wrt, (tuple, list))
    return (wrt,) if single else tuple(wrt), single


class Differentiable(functools.partial):
    """A function with its adjoint: calling it runs the original function unchanged.

    ``f.adjoint(*args, v)`` gives vᵀJ for the ``wrt`` arguments (``v`` may be omitted
    for a scalar output); ``f.vjp(*args)`` gives ``(y, pullback)``; ``f.grad``,
    ``f.value_and_grad``; ``f.adjoint_source`` is the generated code.
    """

    def __new__(cls, fn, wrt=0):
        self = super().__new__(cls, fn)
        functools.update_wrapper(self, fn)
        wrt_tuple, single = _normalize_wrt(wrt)
        self.__srcad_function__ = fn
        self._wrt = wrt_tuple
        self._single = single
        code = getattr(fn, "__code__", None)  # not a Python function: capture() explains
        self._required = code.co_argcount - len(fn.__defaults__ or ()) if code else 0
        self._bound = {}  # container signature -> (joint, forward, backward)
        return self

    def __repr__(self):
        return f"<srcad.differentiable {self.func.__qualname__} wrt={self._wrt if not self._single else self._wrt[0]}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def _functions(self, args):
        kinds = ()
        for i, a in enumerate(args):
            if a.__class__ in _CONTAINERS:
                kinds += (i,)
        bound = self._bound.get(kinds)
        if bound is None:
            fn = self.func
            node = capture(fn).node
            names = param_names(node, self._wrt)
            params = [a.id for a in node.args.args]
            containers = tuple(params[i] for i in kinds if i < len(params))
            compiled = compile_function(fn, names, containers)
            bound = compiled.bind(fn)
            self._bound[kinds] = bound
            self._compiled = compiled
        return bound

    def adjoint(self, *args, **kwargs):
        """vᵀJ for the ``wrt`` arguments: ``f.adjoint(*args, v)`` (``v`` optional if y is scalar).

        ``v`` is the keyword ``v=`` or else the last positional argument beyond the
        function's required parameters (so with defaults, ``f.adjoint(x, v)`` works).
        """
        if "v" not in kwargs and len(args) > self._required:
            kwargs["v"] = args[-1]
            args = args[:-1]
        joint = self._functions(args)[0]
        try:
            return joint(*args, **_rename_v(kwargs, joint))
        except CotangentError as exc:
            code = self.func.__code__
            raise CotangentError(f"{code.co_filename}:{code.co_firstlineno}: {self.func.__qualname__}: {exc}") from None

    def vjp(self, *args, **kwargs):
        """``(y, pullback)``: one forward pass; ``pullback(v)`` may be called many times."""
        _, forward, backward = self._functions(args)
        y, saved = forward(*args, **kwargs)

        def pullback(v=None):
            return backward(saved, v)

        return y, pullback

    def grad(self, *args, **kwargs):
        """The gradient of a scalar output with respect to the ``wrt`` arguments."""
        return self._functions(args)[0](*args, **kwargs)

    def value_and_grad(self, *args, **kwargs):
        y, pullback = self.vjp(*args, **kwargs)
        return y, pullback()

    @property
    def adjoint_source(self):
        """The generated source of the joint adjoint ``f_adjoint(*params, v=None)``."""
        self._ensure_compiled()
        return self._compiled.generated.joint_source

    @property
    def vjp_source(self):
        """The generated forward/backward pair that ``vjp`` uses."""
        self._ensure_compiled()
        g = self._compiled.generated
        return g.forward_source + "\n" + g.backward_source

    def _ensure_compiled(self):
        if not self._bound:
            self._functions(())


def _rename_v(kwargs, joint):
    if "v" in kwargs:
        name = joint.__code__.co_varnames[joint.__code__.co_argcount - 1]
        if name != "v":
            kwargs[name] = kwargs.pop("v")
    return kwargs


def differentiable(fn=None, *, wrt=0):
    """Decorator: ``@srcad.differentiable`` or ``@srcad.differentiable(wrt="x")``."""
    if fn is None:
        return lambda f: Differentiable(unwrap(f), wrt)
    return Differentiable(unwrap(fn), wrt)


def _as_differentiable(fun, wrt):
    fn = unwrap(fun)
    return Differentiable(fn, wrt)


def grad(fun, wrt=0):
    """``grad(f)(*args)``: the gradient of scalar-valued ``f`` with respect to ``wrt``."""
    d = _as_differentiable(fun, wrt)

    @functools.wraps(unwrap(fun))
    def gradient(*args, **kwargs):
        return d.grad(*args, **kwargs)

    gradient.__srcad_differentiable__ = d
    return gradient


def value_and_grad(fun, wrt=0):
    """``value_and_grad(f)(*args) -> (f(*args), gradient)``."""
    d = _as_differentiable(fun, wrt)

    @functools.wraps(unwrap(fun))
    def value_and_gradient(*args, **kwargs):
        return d.value_and_grad(*args, **kwargs)

    return value_and_gradient


def vjp(fun, *args, wrt=0):
    """``(y, pullback)`` for ``fun(*args)``; ``pullback(v)`` is vᵀJ and may be called many times."""
    return _as_differentiable(fun, wrt).vjp(*args)


def adjoint(fun, wrt=0):
    """The companion ``g(*args, v)`` that returns vᵀJ."""
    d = _as_differentiable(fun, wrt)

    @functools.wraps(unwrap(fun))
    def companion(*args, **kwargs):
        return d.adjoint(*args, **kwargs)

    return companion


def show(fun):
    """Print the generated adjoint of ``fun``."""
    d = fun if isinstance(fun, Differentiable) else _as_differentiable(fun, 0)
    print(d.adjoint_source)
