"""The public API: the decorator and the function transformations built on it."""
import functools
import inspect
import linecache
import types

import numpy as np

from . import registry
from .compile import compile_function, compile_jvp, guards_hold
from .errors import CotangentError
from .passes.shapes import arg_spec, spec_key
from .pipeline import check_parameters, param_names
from .source import capture, unwrap

_CONTAINERS = (list, tuple, dict)
_MAX_SPECIALISATIONS = 8  # shape/dtype combinations compiled per function before going generic


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
        original, fn = fn, unwrap(fn)
        self = super().__new__(cls, fn)
        functools.update_wrapper(self, fn)
        self._original = original  # what calls resolve to: a custom_vjp keeps its rule
        wrt_tuple, single = _normalize_wrt(wrt)
        self.__srcad_function__ = fn
        self._wrt = wrt_tuple
        self._single = single
        self._one_tuple = not single and len(wrt_tuple) == 1
        code = getattr(fn, "__code__", None)  # not a Python function: capture() explains
        self._required = code.co_argcount - len(fn.__defaults__ or ()) if code else 0
        self._bound = {}  # argument shapes and dtypes -> (joint, forward, backward)
        self._guards = {}  # the same key -> globals the code was made for (checked per call)
        return self

    def __repr__(self):
        return f"<srcad.differentiable {self.func.__qualname__} wrt={self._wrt if not self._single else self._wrt[0]}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def _functions(self, args):
        """The generated (joint, forward, backward) for arguments like ``args``."""
        key = ()
        for a in args:
            cls = a.__class__
            key += ((a.shape, a.dtype),) if cls is np.ndarray else (spec_key(a) if cls in _CONTAINERS else cls,)
        bound = self._bound.get(key)
        if bound is None or (self._guards and key in self._guards and not guards_hold(self._guards[key])):
            bound = self._bound[key] = self._compile(args, key)  # new shapes, or a global was rebound
        return bound

    def _source_function(self, args):
        """The Python function whose code is differentiated (nested derivatives differ)."""
        if registry.lookup(registry.VJP, self._original) is not None:
            return _trampoline(self._original)  # a custom rule: differentiate a call to it
        return self.func

    def _compile(self, args, key):
        fn = self._source_function(args)
        if not isinstance(fn, types.FunctionType):
            capture(fn)  # raises the error that says why srcad cannot read it
        params = _params(fn)
        names = param_names(params, self._wrt)
        containers = tuple(p for p, a in zip(params, args) if isinstance(a, _CONTAINERS))
        specialised = len(self._bound) < _MAX_SPECIALISATIONS
        if specialised and len(args) == len(params):
            specs = {p: arg_spec(a) for p, a in zip(params, args)}
            compiled = compile_function(fn, names, containers, specs, key)
        else:  # many shapes seen: one generic version that checks shapes at run time
            compiled = compile_function(fn, names, containers)
        self._compiled = compiled
        rebindable = compiled.global_guards(fn)
        if rebindable:
            self._guards[key] = rebindable
        else:
            self._guards.pop(key, None)
        return compiled.bind(fn)

    def adjoint(self, *args, **kwargs):
        """vᵀJ for the ``wrt`` arguments: ``f.adjoint(*args, v)`` (``v`` optional if y is scalar).

        ``v`` is the keyword ``v=`` or else the last positional argument beyond the
        function's required parameters (so with defaults, ``f.adjoint(x, v)`` works).
        """
        if "v" not in kwargs and len(args) > self._required:
            kwargs["v"] = args[-1]
            args = args[:-1]
        return self._joint(args, kwargs)

    def _joint(self, args, kwargs):
        joint = self._functions(args)[0]
        try:
            grads = joint(*args, **_rename_v(kwargs, joint)) if kwargs else joint(*args)
        except CotangentError as exc:
            raise self._located(exc) from None
        return (grads,) if self._one_tuple else grads  # wrt=(0,) asks for a tuple

    def _located(self, exc):
        code = self.func.__code__
        return CotangentError(f"{code.co_filename}:{code.co_firstlineno}: {self.func.__qualname__}: {exc}")

    def vjp(self, *args, **kwargs):
        """``(y, pullback)``: one forward pass; ``pullback(v)`` may be called many times."""
        _, forward, backward = self._functions(args)
        y, saved = forward(*args, **kwargs)

        def pullback(v=None):
            try:
                grads = backward(saved, v)
            except CotangentError as exc:
                raise self._located(exc) from None
            return (grads,) if self._one_tuple else grads

        return y, pullback

    def grad(self, *args, **kwargs):
        """The gradient of a scalar output with respect to the ``wrt`` arguments."""
        return self._joint(args, kwargs)

    def value_and_grad(self, *args, **kwargs):
        y, pullback = self.vjp(*args, **kwargs)
        return y, pullback()

    @property
    def adjoint_source(self):
        """The generated source of the joint adjoint ``f_adjoint(*params, v=None)``: for the
        arguments of the last call (code is specialised on shapes and dtypes), or generic."""
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
        return lambda f: Differentiable(f, wrt)
    return Differentiable(fn, wrt)


def _as_differentiable(fun, wrt):
    inner = getattr(fun, "__srcad_differentiable__", None)
    if inner is not None:  # a gradient srcad made: differentiate its generated adjoint
        return _Nested(fun, inner, wrt)
    return Differentiable(fun, wrt)


def grad(fun, wrt=0):
    """``grad(f)(*args)``: the gradient of scalar-valued ``f`` with respect to ``wrt``."""
    d = _as_differentiable(fun, wrt)

    @functools.wraps(unwrap(fun))
    def gradient(*args, **kwargs):
        return d.grad(*args, **kwargs)

    gradient.__srcad_differentiable__ = d
    gradient.__srcad_source__ = lambda: d._functions(())[0]  # what srcad reads when code calls it
    return gradient


grad.__srcad_static__ = True  # srcad.grad(h)(x) inside differentiated code is resolved when compiling


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


def show(fun, *args):
    """Print the generated adjoint of ``fun``: for arguments like ``args`` if given (code is
    specialised on their shapes and dtypes), else the last one generated, else the generic one."""
    d = fun if isinstance(fun, Differentiable) else _as_differentiable(fun, 0)
    if args:
        d._functions(args)
    print(d.adjoint_source)


_TRAMPOLINES = {}


def _trampoline(target):
    """A small Python function that calls ``target`` (which has a rule), for srcad to read."""
    fn = _TRAMPOLINES.get(target)
    if fn is None:
        params, call = _trampoline_params(target)
        name = getattr(target, "__name__", "custom")
        text = f"def {name}({', '.join(params)}):\n    return __srcad_target__({', '.join(call)})\n"
        filename = f"<srcad-trampoline {name}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
        namespace = {"__srcad_target__": target}
        exec(compile(text, filename, "exec"), namespace)
        fn = _TRAMPOLINES[target] = namespace[name]
    return fn


def _trampoline_params(target):
    """Parameters (with literal defaults) to declare, and the arguments to pass on."""
    if isinstance(target, np.ufunc):
        names = [f"x{i + 1}" for i in range(target.nin)]
        return names, names
    params, call = [], []
    for p in inspect.signature(target).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            params.append(p.name)
        elif isinstance(p.default, (type(None), bool, int, float, str)):
            params.append(f"{p.name}={p.default!r}")
        else:
            continue
        call.append(p.name if p.kind != p.KEYWORD_ONLY else f"{p.name}={p.name}")
    return params, call


# ---- derivatives of derivatives, forward mode, Jacobians and Hessians --------------------


class _Nested(Differentiable):
    """The derivative of a gradient made by ``srcad.grad``: the generated adjoint ``f_adjoint``
    (valid srcad input itself) is what gets differentiated."""

    def __new__(cls, gradient, inner, wrt=0):
        self = super().__new__(cls, gradient, wrt)
        self._inner = inner
        self._required = inner._required
        return self

    def _source_function(self, args):
        return self._inner._functions(args)[0]


def source_function(fun, args):
    """The Python function srcad transforms for ``fun(*args)``: ``fun`` itself, or for a
    gradient made by ``srcad.grad`` the generated adjoint that computes it."""
    inner = getattr(fun, "__srcad_differentiable__", None)
    if inner is not None:
        return inner._functions(tuple(args))[0]
    if isinstance(fun, Differentiable):
        return fun._source_function(tuple(args))
    fn = unwrap(fun)
    if not isinstance(fn, types.FunctionType) and registry.lookup(registry.JVP, fun) is not None:
        return _trampoline(fun)  # a library function with a rule: differentiate a call to it
    return fn


def _params(fn):
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
        check_parameters(capture(fn))  # refused at the user's def line, before arguments are bound
    return code.co_varnames[: code.co_argcount]


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
    fn = source_function(fun, primals)
    params = _params(fn)
    if len(primals) > len(params):
        raise TypeError(f"{fn.__qualname__} takes {len(params)} arguments but jvp got {len(primals)} primals")
    wrt = tuple(p for p, t in zip(params, tangents) if t is not None)
    containers = tuple(p for p, a in zip(params, primals) if isinstance(a, _CONTAINERS))
    compiled = compile_jvp(fn, wrt, containers)
    keywords = {compiled.tangent_params[p]: t for p, t in zip(params, tangents) if t is not None}
    return compiled.bind(fn)[0](*primals, **keywords)


def _wrt_position(fun, args, wrt):
    if isinstance(wrt, (tuple, list)):
        raise ValueError("jacobian, hessian and hvp take one argument at a time: wrt must be an index or a name")
    if isinstance(wrt, str):
        params = _params(source_function(fun, args))
        if wrt not in params:
            raise ValueError(f"wrt={wrt!r} is not a parameter of the function (parameters: {list(params)})")
        return params.index(wrt)
    if not -len(args) <= wrt < len(args):
        raise IndexError(f"wrt={wrt} but the function was given {len(args)} arguments")
    return wrt % len(args)


def _basis(shape):
    """The unit arrays of ``shape``, in C order."""
    size = int(np.prod(shape, dtype=np.int64))
    for k in range(size):
        e = np.zeros(size)
        e[k] = 1.0
        yield e.reshape(shape)


def jacobian(fun, wrt=0, mode="rev"):
    """``jacobian(f)(*args)``: J of ``f`` with respect to argument ``wrt``, shaped ``y.shape + x.shape``.

    ``mode="rev"`` runs ``f`` forward once and pulls back one basis cotangent per output
    entry (cheap when outputs are few); ``mode="fwd"`` pushes one basis tangent per input
    entry through ``jvp`` (cheap when inputs are few).
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', not {mode!r}")
    reverse = _as_differentiable(fun, wrt) if mode == "rev" else None

    def jacobian_fn(*args):
        pos = _wrt_position(fun, args, wrt)
        x_shape = np.shape(args[pos])
        if mode == "rev":
            y, pullback = reverse.vjp(*args)
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


def hessian(fun, wrt=0):
    """``hessian(f)(*args)``: the Hessian of scalar ``f`` with respect to argument ``wrt``,
    shaped ``x.shape + x.shape``: forward mode over the generated adjoint (one jvp per entry of x)."""
    return jacobian(grad(fun, wrt), wrt, mode="fwd")


def hvp(fun, wrt=0):
    """``hvp(f)(*args, v)``: H·v for scalar ``f`` without forming H (one jvp of the gradient)."""
    gradient = grad(fun, wrt)

    def hessian_vector_product(*args):
        *args, v = args
        tangents = [None] * len(args)
        tangents[_wrt_position(fun, args, wrt)] = v
        return jvp(gradient, args, tangents)[1]

    return hessian_vector_product
