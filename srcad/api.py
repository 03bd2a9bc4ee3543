"""The public API: the decorator and the function transformations built on it.

How arguments are passed, everywhere:

- Every argument, positional or keyword, is the function's: ``f.grad(x, v=3.0)`` binds the
  function's parameter ``v``. ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``
  and ``hessian`` take no cotangent at all.
- ``adjoint(*args, v)``: the cotangent is the keyword ``v=`` when the function has no
  parameter named ``v`` (and no ``**kwargs``); otherwise, and always when given positionally,
  it is the last positional argument beyond those the function requires.
  ``hvp(f)(*args, v)`` takes its vector last, positionally.
- A bound method (``srcad.grad(model.loss)``, or a ``@srcad.differentiable`` method used
  through an instance) holds ``self`` constant and ``wrt`` counts the arguments after it;
  a ``functools.partial`` holds its arguments constant; a function wrapped by another
  decorator is read as the wrapper that runs.
- Arguments are checked (``srcad.arguments``): exact ``np.ndarray`` only, nothing complex,
  floats where a derivative is asked; ``wrt`` is checked when the transform is made.
"""
import functools
import inspect
import types

import numpy as np

from . import registry
from .backends.numba_backend import accelerate, check_backend
from .arguments import CONTAINERS, check_arguments, checked_cotangent, signature, snapshot, unbind, where
from .compile import compile_function, compile_jvp, guards_hold
from .errors import ArgumentError, CotangentError, WrtError, SourceUnavailableError
from .passes.shapes import arg_spec, spec_key
from .pipeline import check_parameters, param_names
from .source import capture, trampoline, unwrap

_MAX_SPECIALISATIONS = 8  # shape/dtype combinations compiled per function before going generic


def _normalize_wrt(wrt):
    single = not isinstance(wrt, (tuple, list))
    return (wrt,) if single else tuple(wrt), single


class Differentiable(functools.partial):
    """A function with its adjoint: calling it runs the original function unchanged.

    ``f.adjoint(*args, v)`` gives vᵀJ for the ``wrt`` arguments (``v`` may be omitted
    for a scalar output); ``f.vjp(*args)`` gives ``(y, pullback)``; ``f.grad``,
    ``f.value_and_grad``; ``f.adjoint_source`` is the generated code. How arguments and
    the cotangent are passed: see ``srcad.api``.
    """

    _backend = "numpy"  # or "numba", "auto": what runs the generated code (backends.numba_backend)

    def __new__(cls, fn, wrt=0, backend="numpy"):
        inner = getattr(fn, "__srcad_differentiable__", None)
        if inner is not None and cls is Differentiable:  # a gradient srcad made: its generated adjoint
            return _Nested(fn, inner, wrt)
        func, prefix, fixed, descriptor = unbind(fn)
        self = super().__new__(cls, func, *prefix, **fixed)
        functools.update_wrapper(self, func)
        self._original = fn  # what calls resolve to: a custom_vjp keeps its rule
        self.__srcad_function__ = func if not (prefix or fixed) else functools.partial(func, *prefix, **fixed)
        self._descriptor = descriptor
        source = self._source_function(())
        sig = signature(source, len(prefix)) if isinstance(source, types.FunctionType) else None
        self._backend = check_backend(backend)
        return self._setup(prefix, fixed, sig, wrt)  # sig None: srcad cannot read it (the first call says why)

    def _setup(self, prefix, fixed, sig, wrt):
        self._prefix, self._fixed, self._sig = prefix, fixed, sig
        self._wrt, self._single = _normalize_wrt(wrt)
        self._one_tuple = not self._single and len(self._wrt) == 1
        source = self._source_function(())
        if sig is not None and not sig.wrapper_hint and isinstance(source, types.FunctionType):
            try:
                _params(source)  # *args, **kwargs, keyword-only: refused at the def line, before wrt
            except SourceUnavailableError:
                pass  # the first call says why srcad cannot read it
        self._names = sig.wrt_names(self._wrt) if sig is not None else None  # a misspelled wrt fails now
        self._bound = {}  # argument shapes and dtypes -> (joint, forward, backward)
        self._guards = {}  # the same key -> globals the code was made for (checked per call)
        self._method = None  # bound to a self: its (_sig, _names, _bound, _guards), shared by every self
        self._plan()
        return self

    def _plan(self):
        """What every call would otherwise work out again from the signature alone: the
        common call (plain positional parameters, nothing fixed by keyword, no keywords
        given) then binds without ``inspect`` and finds its cotangent by counting."""
        sig = self._sig
        self._where = sig.where if sig is not None else self.func.__qualname__
        self._plain = sig is not None and sig.simple and not self._fixed
        if self._plain:
            self._needed = sig.needed({})  # adjoint: beyond these positional arguments comes v
            self._fewest, self._most = sig.required, len(sig.names)  # with the prefix, as sig.bind counts

    def __repr__(self):
        return f"<srcad.differentiable {self.func.__qualname__} wrt={self._wrt if not self._single else self._wrt[0]}>"

    def __get__(self, obj, objtype=None):
        if self._descriptor == "static":
            return self
        if self._descriptor == "class":
            return self._bound_to(objtype if objtype is not None else type(obj))
        return self if obj is None else self._bound_to(obj)

    def _bound_to(self, first):
        """This function with its first parameter bound to ``first`` (a method's ``self``):
        it shares the compiled code, and ``wrt`` counts the arguments after ``first``."""
        method = self._method
        if method is None:  # wrt names other parameters than in unbound calls: its own caches
            sig = self._sig.shifted(1) if self._sig is not None else None
            method = self._method = (sig, sig.wrt_names(self._wrt) if sig is not None else None, {}, {})
        new = functools.partial.__new__(type(self), self.func, first, *self._prefix, **self._fixed)
        new.__dict__.update(self.__dict__)
        new._prefix = (first,) + self._prefix
        new.__srcad_function__ = functools.partial(self.func, *new._prefix, **self._fixed)
        new._descriptor = new._method = None
        new._sig, new._names, new._bound, new._guards = method
        new._plan()
        return new

    def _bind(self, args, kwargs):
        """The caller's arguments as (positional, keywords) for the generated code."""
        if self._plain and not kwargs:  # every argument positional already: what sig.bind returns
            full = self._prefix + args if self._prefix else args
            if self._fewest <= len(full) <= self._most:
                return full, kwargs
        args = self._prefix + args if self._prefix else args
        if self._fixed:
            kwargs = {**self._fixed, **kwargs}
        if self._sig is None:
            return args, kwargs
        return self._sig.bind(args, kwargs)

    def _functions(self, args, kwargs=None):
        """The generated (joint, forward, backward) for arguments like ``args``, ``kwargs``."""
        key = ()
        containers = False
        for a in args:
            cls = a.__class__
            if cls is np.ndarray:
                key += ((a.shape, a.dtype),)
            elif cls in CONTAINERS:
                key += (spec_key(a),)
                containers = True
            else:
                key += (cls,)
                containers = containers or isinstance(a, CONTAINERS)  # a named tuple: its items vary
        if kwargs:
            key += tuple((k, spec_key(a)) for k, a in sorted(kwargs.items()))
            containers = True
        bound = self._bound.get(key)
        if bound is not None and not containers:  # arrays seen before: only the guards to check
            guards = self._guards.get(key)
            if guards is None or guards_hold(guards):
                return bound
        if (bound is None or containers) and self._sig is not None and (args or kwargs):
            self._check(args, kwargs or {})  # array keys hold class, shape, dtype: checked once
        if bound is None or (self._guards and key in self._guards and not guards_hold(self._guards[key])):
            bound = self._bound[key] = self._compile(args, kwargs or {}, key)  # new shapes, or a global was rebound
        return bound

    def _check(self, args, kwargs):
        names = self._sig.names
        values = self._sig.values(args, kwargs, names)
        check_arguments(self._sig.where, names, values, self._names)

    def _source_function(self, args):
        """The Python function whose code is differentiated (nested derivatives differ)."""
        if registry.lookup(registry.VJP, self._original) is not None:
            return trampoline(self._original)  # a custom rule: differentiate a call to it
        return self.func

    def _compile(self, args, kwargs, key):
        fn = self._source_function(args)
        if not isinstance(fn, types.FunctionType):
            capture(fn)  # raises the error that says why srcad cannot read it
        params = _params(fn)
        names = self._names if self._names is not None else param_names(params, self._wrt)
        containers = tuple(p for p, a in zip(params, args) if isinstance(a, CONTAINERS))
        containers += tuple(p for p, a in kwargs.items() if isinstance(a, CONTAINERS))
        specialised = len(self._bound) < _MAX_SPECIALISATIONS
        if specialised and len(args) == len(params) and not kwargs:
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
        return accelerate(compiled.bind(fn), compiled, fn, self._backend)

    def adjoint(self, *args, **kwargs):
        """vᵀJ for the ``wrt`` arguments: ``f.adjoint(*args, v)`` (``v`` optional if y is scalar).

        ``v`` is the keyword ``v=`` unless the function has a parameter named ``v`` (then
        ``v=`` is that parameter), or else the last positional argument beyond those the
        function requires (so with defaults, ``f.adjoint(x, v)`` works).
        """
        if self._plain and not kwargs:  # the common call: v is last, or absent
            full = self._prefix + args if self._prefix else args
            v = None
            if len(args) > self._needed:
                v, full = full[-1], full[:-1]
            if self._fewest <= len(full) <= self._most:
                return self._joint(full, kwargs, v)
        v = None
        by_keyword = self._sig is None or self._sig.cotangent_by_keyword()
        if by_keyword and "v" in kwargs:
            v = kwargs.pop("v")
        else:
            needed = self._sig.needed({**self._fixed, **kwargs}) if self._sig is not None else len(args)
            if needed is not None and len(args) > needed:
                *args, v = args
            elif needed is None and not by_keyword:
                raise ArgumentError(f"{self._where}: with *{self._sig.varargs} and a parameter v (or **kwargs), "
                               "adjoint cannot tell the cotangent apart: use vjp(...) and its pullback")
        return self._joint(*self._bind(tuple(args), kwargs), v)

    def _joint(self, args, kwargs, v):
        joint = self._functions(args, kwargs)[0]
        if v is not None:
            v = checked_cotangent(v, self._where)
        try:
            if not kwargs and v is None:
                grads = joint(*args)
            elif not kwargs and len(args) == _positional_cotangent(joint):
                grads = joint(*args, v)  # every parameter given: the next position is the cotangent
            else:
                kwargs = dict(kwargs)
                kwargs[_cotangent_param(joint)] = v
                grads = joint(*args, **kwargs)
        except CotangentError as exc:
            raise self._located(exc) from None
        return (grads,) if self._one_tuple else grads  # wrt=(0,) asks for a tuple

    def _located(self, exc):
        code = self.func.__code__
        return CotangentError(f"{code.co_filename}:{code.co_firstlineno}: {self.func.__qualname__}: {exc}")

    def vjp(self, *args, **kwargs):
        """``(y, pullback)``: one forward pass; ``pullback(v)`` may be called many times.

        The forward pass runs on a copy of the arrays among the arguments, so changing them
        afterwards does not change what the pullback computes."""
        args, kwargs = self._bind(args, kwargs)
        return self._vjp(snapshot(args), snapshot(kwargs) if kwargs else kwargs)

    def _vjp(self, args, kwargs):
        _, forward, backward = self._functions(args, kwargs)
        y, saved = forward(*args, **kwargs)

        def pullback(v=None):
            try:
                grads = backward(saved, checked_cotangent(v, self._where))
            except CotangentError as exc:
                raise self._located(exc) from None
            return (grads,) if self._one_tuple else grads

        return y, pullback

    def grad(self, *args, **kwargs):
        """The gradient of a scalar output with respect to the ``wrt`` arguments; every
        argument (keyword ``v=`` too) is the function's."""
        return self._joint(*self._bind(args, kwargs), None)

    def value_and_grad(self, *args, **kwargs):
        """``(f(*args), gradient)`` from one forward pass; arguments as for ``grad``."""
        y, pullback = self._vjp(*self._bind(args, kwargs))  # the pullback runs at once: no copy
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


def _cotangent_param(joint):
    """The name of the generated joint adjoint's cotangent parameter (``v``, or ``v_`` when
    the function has a parameter ``v``): its last parameter."""
    code = joint.__code__
    return code.co_varnames[code.co_argcount + code.co_kwonlyargcount - 1]


def _positional_cotangent(joint):
    """How many arguments precede the cotangent when every parameter of the generated joint
    adjoint is passed by position (-1: it cannot be passed by position)."""
    code = joint.__code__
    return code.co_argcount - 1 if not code.co_kwonlyargcount else -1


def differentiable(fn=None, *, wrt=0, backend="numpy"):
    """Decorator: ``@srcad.differentiable`` or ``@srcad.differentiable(wrt="x")``.

    ``backend="numba"`` compiles the generated code with numba (docs/numba.md); ``"auto"``
    does where numba can, and runs NumPy code otherwise."""
    if fn is None:
        return lambda f: Differentiable(f, wrt, backend)
    return Differentiable(fn, wrt, backend)


def _as_differentiable(fun, wrt, backend="numpy"):
    return Differentiable(fun, wrt, backend)  # a gradient srcad made becomes a _Nested


def grad(fun, wrt=0, backend="numpy"):
    """``grad(f)(*args)``: the gradient of scalar-valued ``f`` with respect to ``wrt``."""
    d = _as_differentiable(fun, wrt, backend)

    @functools.wraps(unwrap(fun))
    def gradient(*args, **kwargs):
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


def value_and_grad(fun, wrt=0, backend="numpy"):
    """``value_and_grad(f)(*args) -> (f(*args), gradient)``."""
    d = _as_differentiable(fun, wrt, backend)

    @functools.wraps(unwrap(fun))
    def value_and_gradient(*args, **kwargs):
        return d.value_and_grad(*args, **kwargs)

    return value_and_gradient


def vjp(fun, *args, wrt=0, backend="numpy"):
    """``(y, pullback)`` for ``fun(*args)``; ``pullback(v)`` is vᵀJ and may be called many times."""
    return _as_differentiable(fun, wrt, backend).vjp(*args)


def adjoint(fun, wrt=0, backend="numpy"):
    """The companion ``g(*args, v)`` that returns vᵀJ."""
    d = _as_differentiable(fun, wrt, backend)

    @functools.wraps(unwrap(fun))
    def companion(*args, **kwargs):
        return d.adjoint(*args, **kwargs)

    return companion


def show(fun, *args):
    """Print the generated adjoint of ``fun``: for arguments like ``args`` if given (code is
    specialised on their shapes and dtypes), else the last one generated, else the generic one."""
    d = fun if isinstance(fun, Differentiable) else _as_differentiable(fun, 0)
    if args:
        d._functions(*d._bind(args, {}))
    print(d.adjoint_source)


# ---- derivatives of derivatives, forward mode, Jacobians and Hessians --------------------


class _Nested(Differentiable):
    """The derivative of a gradient made by ``srcad.grad``: the generated adjoint ``f_adjoint``
    (valid srcad input itself) is what gets differentiated."""

    def __new__(cls, gradient, inner, wrt=0):
        self = functools.partial.__new__(cls, gradient)
        functools.update_wrapper(self, gradient)
        self._original = self.__srcad_function__ = gradient
        self._descriptor = None
        self._inner = inner
        return self._setup(inner._prefix, inner._fixed, inner._sig, wrt)

    def _source_function(self, args):
        return unwrap(self._inner._functions(args)[0])  # the NumPy code, whatever runs it


def source_function(fun, args):
    """The Python function srcad transforms for ``fun(*args)``: ``fun`` itself, or for a
    gradient made by ``srcad.grad`` the generated adjoint that computes it."""
    return _forward_target(fun, tuple(args))[0]


def _forward_target(fun, args):
    """``(function, prefix, fixed)``: what forward mode transforms for ``fun(*args)``, with
    the arguments bound in front of ``args`` and the keywords fixed (see ``arguments.unbind``)."""
    inner = getattr(fun, "__srcad_differentiable__", None)
    if inner is not None:
        return unwrap(inner._functions(*inner._bind(args, {}))[0]), inner._prefix, inner._fixed
    if isinstance(fun, Differentiable):
        return fun._source_function(args), fun._prefix, fun._fixed
    fn, prefix, fixed, _ = unbind(fun)
    if not isinstance(fn, types.FunctionType) and registry.lookup(registry.JVP, fun) is not None:
        return trampoline(fun), (), {}  # a library function with a rule: differentiate a call to it
    return fn, prefix, fixed


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
    containers = tuple(p for p, a in zip(params, primals) if isinstance(a, CONTAINERS))
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


def jacobian(fun, wrt=0, mode="rev"):
    """``jacobian(f)(*args)``: J of ``f`` with respect to argument ``wrt``, shaped ``y.shape + x.shape``.

    ``mode="rev"`` runs ``f`` forward once and pulls back one basis cotangent per output
    entry (cheap when outputs are few); ``mode="fwd"`` pushes one basis tangent per input
    entry through ``jvp`` (cheap when inputs are few).
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', not {mode!r}")
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


def hessian(fun, wrt=0):
    """``hessian(f)(*args)``: the Hessian of scalar ``f`` with respect to argument ``wrt``,
    shaped ``x.shape + x.shape``: forward mode over the generated adjoint (one jvp per entry of x)."""
    _one_wrt(fun, wrt)
    return jacobian(grad(fun, wrt), wrt, mode="fwd")


def hvp(fun, wrt=0):
    """``hvp(f)(*args, v)``: H·v for scalar ``f`` without forming H (one jvp of the gradient).
    ``v`` is the last positional argument, always."""
    _one_wrt(fun, wrt)
    gradient = grad(fun, wrt)

    def hessian_vector_product(*args):
        *args, v = args
        tangents = [None] * len(args)
        tangents[_wrt_position(fun, args, wrt)] = v
        return jvp(gradient, args, tangents)[1]

    return hessian_vector_product
