"""The public API: the decorator and the reverse-mode transformations built on it (forward
mode, Jacobians and Hessians: ``srcad.derivatives``).

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
- Arguments are checked (``srcad.arguments``): exact ``np.ndarray`` or a NumPy-protocol
  array (a Dask or CuPy array, ``srcad.protocol``), nothing complex,
  floats where a derivative is asked; ``wrt`` is checked when the transform is made.
"""
import functools
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, ParamSpec, Sequence, TypeVar, Union, overload

import numpy as np

from . import registry
from .backends.numba_backend import accelerate, check_backend
from .batching import batched_pullback
from .arguments import (CONTAINERS, check_arguments, checked_cotangent, is_structure, signature, snapshot, unbind,
                        where)
from .compile import compile_function, guards_hold
from .errors import ArgumentError, CotangentError, NoRuleError, WrtError
from .passes.shapes import arg_spec, spec_key
from .passes.forward_calls import refuse_custom_vjp_body
from .pipeline import param_names
from .runtime import default_cotangent
from .guards import GuardList, protocol_array_key
from .protocol import protocol_array
from .source import capture, trampoline, unwrap
from .source_text import function_with_source
from .tracebacks import api_boundary

P = ParamSpec("P")
R = TypeVar("R")
Wrt = Union[int, str, Sequence[Union[int, str]]]  # an argument's position or name, or a tuple of them

_MAX_SPECIALISATIONS = 8  # shape/dtype combinations compiled per function before going generic


def _normalize_wrt(wrt):
    single = not isinstance(wrt, (tuple, list))
    return (wrt,) if single else tuple(wrt), single


class Differentiable(functools.partial, Generic[P, R]):  # type: ignore[type-arg]
    """A function with its adjoint: calling it runs the original function unchanged.

    ``f.adjoint(*args, v)`` gives vᵀJ for the ``wrt`` arguments (``v`` may be omitted
    for a scalar output); ``f.vjp(*args)`` gives ``(y, pullback)``; ``f.grad``,
    ``f.value_and_grad``; ``f.adjoint_source`` is the generated code. How arguments and
    the cotangent are passed: see ``srcad.api``.
    """

    _backend = "numpy"  # or "numba", "auto": what runs the generated code (backends.numba_backend)

    def __new__(cls, fn, wrt=0, backend="numpy"):
        if getattr(fn, "__srcad_has_aux__", False):
            raise ArgumentError(f"{where(fn.__wrapped__)}: a gradient made with has_aux=True returns (gradient, aux) "
                                "and is not differentiated again; differentiate srcad.grad of a function that "
                                "returns only the output")
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
        self._last = None  # the key, code and guards of the last call (_recent); a bound method's are its own
        self._where = sig.where if sig is not None else self.func.__qualname__
        self._plain = sig is not None and sig.simple and not self._fixed
        if self._plain:
            self._needed = sig.needed({})  # adjoint: beyond these positional arguments comes v
            self._fewest, self._most = sig.required, len(sig.names)  # with the prefix, as sig.bind counts

    def __repr__(self):
        return f"<srcad.differentiable {self.func.__qualname__} wrt={self._wrt if not self._single else self._wrt[0]}>"

    def __reduce__(self):
        """Pickled by reference, as functions are: the module attribute it is (a decorated
        module-level function or method), else the function it was made from, made
        differentiable again when unpickled."""
        found = sys.modules.get(self.__module__)
        for part in self.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is self:
            return self.__qualname__
        if self._original is self.func and (self._prefix or self._fixed):
            raise TypeError(f"{self._where}: a srcad.differentiable method bound to an object is not pickled; "
                            "pickle the object and read the method from it again")
        return Differentiable, (self._original, self._wrt[0] if self._single else self._wrt)

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
        containers = foreign = False
        for a in args:
            cls = a.__class__
            if cls is np.ndarray:
                key += ((a.shape, a.dtype),)
            elif cls in CONTAINERS:
                key += (spec_key(a),)
                containers = True
            elif protocol_array(a):  # a Dask array: by shape, dtype and chunks
                key += (protocol_array_key(a),)
                foreign = True
            else:
                key += (cls,)
                containers = containers or is_structure(a)  # a named tuple or dataclass: its items vary
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
        if not (containers or foreign):  # every key item an (array shape, dtype) or a class: _recent can check it
            guards = self._guards.get(key)
            if guards is not None:
                guards = guards.hold if isinstance(guards, GuardList) else functools.partial(guards_hold, guards)
            joint = bound[0]
            self._last = (key, guards, joint, _positional_cotangent(joint))
        return bound

    def _recent(self, args):
        """``(key, guards, joint, cotangent position)`` of the last call if ``args`` have its
        key (the same classes, array shapes and dtypes, checked item by item as ``_functions``
        encodes them) and its guards still hold; else None (``_functions`` decides)."""
        last = self._last
        if last is None:
            return None
        key = last[0]
        if len(args) != len(key):
            return None
        i = 0
        for a in args:
            k = key[i]
            i += 1
            if a.__class__ is np.ndarray:
                if k.__class__ is not tuple or a.shape != k[0] or (a.dtype is not k[1] and a.dtype != k[1]):
                    return None
            elif a.__class__ is not k:
                return None
        if last[1] is not None and not last[1]():
            return None
        return last

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
        containers = tuple(p for p, a in zip(params, args) if is_structure(a))
        containers += tuple(p for p, a in kwargs.items() if is_structure(a))
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

    if TYPE_CHECKING:  # calling runs the original function (functools.partial's own __call__)
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    @api_boundary
    def adjoint(self, *args: Any, **kwargs: Any) -> Any:
        """vᵀJ for the ``wrt`` arguments: ``f.adjoint(*args, v)`` (``v`` optional if y is scalar).

        ``v`` is the keyword ``v=`` unless the function has a parameter named ``v`` (then
        ``v=`` is that parameter), or else the last positional argument beyond those the
        function requires (so with defaults, ``f.adjoint(x, v)`` works).

        Parameters: ``*args, **kwargs``, the function's arguments, then the cotangent ``v``
        shaped like the output (for a tuple, list or dict output: that structure, ``None``
        for a zero item); omitted, a scalar output gets ``1.0``.

        Returns: vᵀJ shaped like the ``wrt`` argument; a tuple of them for a tuple ``wrt``.

        Raises: ``CotangentError`` (``v`` left out for a non-scalar output, or not shaped
        like it); ``ArgumentError`` (an argument srcad does not differentiate with: an
        integer array in ``wrt``, ``np.matrix``, complex values, a call that does not bind);
        when first compiled, ``SrcadSyntaxError``, ``NoRuleError``,
        ``SourceUnavailableError`` for code srcad cannot differentiate.

        >>> import numpy as np, srcad
        >>> @srcad.differentiable
        ... def double(x):
        ...     return 2.0 * x
        >>> double.adjoint(np.array([1.0, 2.0]), np.array([1.0, -1.0]))
        array([ 2., -2.])
        """
        if self._plain and not kwargs:  # the common call: v is last, or absent
            full = self._prefix + args if self._prefix else args
            v = None
            if len(args) > self._needed:
                v, full = full[-1], full[:-1]
            if self._fewest <= len(full) <= self._most:
                recent = self._recent(full)
                if recent is not None and not self._one_tuple and (v is None or (
                        v.__class__ is np.ndarray and v.dtype.kind == "f" and len(full) == recent[3])):
                    try:  # the last call's kind of arguments, no cotangent or a float array: _joint, inline
                        return recent[2](*full) if v is None else recent[2](*full, v)
                    except CotangentError as exc:
                        raise self._located(exc) from None
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
        recent = None if kwargs else self._recent(args)
        if recent is None:
            joint = self._functions(args, kwargs)[0]
            positional = _positional_cotangent(joint)
        else:
            joint, positional = recent[2], recent[3]
        if v is not None and not (v.__class__ is np.ndarray and v.dtype.kind == "f"):  # else: as it is
            v = checked_cotangent(v, self._where)
        try:
            if not kwargs and v is None:
                grads = joint(*args)
            elif not kwargs and len(args) == positional:
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

    @api_boundary
    def vjp(self, *args: P.args, **kwargs: P.kwargs) -> tuple[R, Callable[..., Any]]:
        """``(y, pullback)``: one forward pass; ``pullback(v)`` may be called many times.

        The forward pass runs on a copy of the arrays among the arguments, so changing them
        afterwards does not change what the pullback computes.

        Parameters: ``*args, **kwargs``, the function's arguments (no cotangent).

        Returns: ``(y, pullback)``: ``y`` is ``f(*args)``; ``pullback(v=None)`` returns vᵀJ
        for the ``wrt`` arguments (a tuple for a tuple ``wrt``), ``v`` shaped like ``y``
        (optional for a scalar ``y``); ``pullback.batched(V)`` pulls back every row of ``V``
        (shape ``(B,) + y.shape``) and stacks the results (``srcad.batching``).

        Raises: ``ArgumentError`` for arguments srcad does not differentiate with;
        ``pullback`` raises ``CotangentError`` for a ``v`` not shaped like ``y``; code srcad
        cannot differentiate raises ``SrcadSyntaxError`` or ``NoRuleError`` when compiled.

        >>> import numpy as np, srcad
        >>> @srcad.differentiable
        ... def square(x):
        ...     return x ** 2
        >>> y, pullback = square.vjp(np.array([1.0, 3.0]))
        >>> y, pullback(np.ones(2)), pullback(np.array([0.0, 1.0]))
        (array([1., 9.]), array([2., 6.]), array([0., 6.]))
        """
        args, kwargs = self._bind(args, kwargs)
        y, pullback = self._vjp(snapshot(args), snapshot(kwargs) if kwargs else kwargs, batched=True)
        pullback.batched = api_boundary(pullback.batched)
        return y, pullback

    def _vjp(self, args, kwargs, batched=False):
        functions = self._functions(args, kwargs)
        forward, backward = functions[1], functions[2]  # the pair: made when vjp is first used
        y, saved = forward(*args, **kwargs)

        @api_boundary
        def pullback(v=None):
            try:
                grads = backward(saved, checked_cotangent(v, self._where))
            except CotangentError as exc:
                raise self._located(exc) from None
            return (grads,) if self._one_tuple else grads

        if batched:  # pullback.batched(V): a stack of cotangents at once (srcad.batching)
            pullback.batched = batched_pullback(pullback, functions, saved, y, self._one_tuple, self._located)
        return y, pullback

    @api_boundary
    def grad(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """The gradient of a scalar output with respect to the ``wrt`` arguments; every
        argument (keyword ``v=`` too) is the function's.

        Parameters: ``*args, **kwargs``, the function's arguments.

        Returns: the gradient, shaped (and structured) like the ``wrt`` argument; a tuple of
        gradients for a tuple ``wrt``.

        Raises: ``CotangentError`` if the output is not a scalar (use ``adjoint`` or
        ``vjp``); ``ArgumentError`` for arguments srcad does not differentiate with;
        ``SrcadSyntaxError``, ``NoRuleError``, ``SourceUnavailableError`` when the code
        cannot be differentiated (raised by the first call, which compiles).

        >>> import numpy as np, srcad
        >>> @srcad.differentiable(wrt=(0, 1))
        ... def loss(w, b):
        ...     return np.sum((w * 2.0 + b) ** 2)
        >>> dw, db = loss.grad(np.array([1.0, 0.0]), 1.0)
        >>> dw, float(db)
        (array([12.,  4.]), 8.0)
        """
        return self._joint(*self._bind(args, kwargs), None)

    @api_boundary
    def value_and_grad(self, *args: P.args, **kwargs: P.kwargs) -> tuple[R, Any]:
        """``(f(*args), gradient)`` from one forward pass; arguments as for ``grad``.

        Parameters: ``*args, **kwargs``, the function's arguments.

        Returns: ``(value, gradient)``; the gradient as ``grad`` gives it.

        Raises: as ``grad``: ``CotangentError`` for a non-scalar output, ``ArgumentError``,
        and the compile-time errors (``SrcadSyntaxError``, ``NoRuleError``, ...).

        >>> import numpy as np, srcad
        >>> @srcad.differentiable
        ... def energy(x):
        ...     return 0.5 * np.sum(x ** 2)
        >>> y, dx = energy.value_and_grad(np.array([1.0, 2.0]))
        >>> float(y), dx
        (2.5, array([1., 2.]))
        """
        y, pullback = self._vjp(*self._bind(args, kwargs))  # the pullback runs at once: no copy
        return y, pullback()

    def _value_and_grad_with_aux(self, args, kwargs):
        """``((output, aux), gradient)`` for a function that returns ``(output, aux)``: aux
        gets a zero cotangent, so no derivative flows from it."""
        y, pullback = self._vjp(args, kwargs)  # the pullback runs at once: no copy
        if not (isinstance(y, (tuple, list)) and len(y) == 2):
            raise ArgumentError(f"{self._where}: has_aux=True but the function returned a "
                                f"{type(y).__name__}{'' if not isinstance(y, (tuple, list)) else f' of {len(y)}'}; "
                                "with has_aux it returns a pair (output, aux)")
        try:
            v = default_cotangent(y[0])
        except CotangentError as exc:
            raise self._located(exc) from None
        return (y[0], y[1]), pullback(type(y)((v, None)))

    @property
    @api_boundary
    def adjoint_source(self) -> str:
        """The generated source of the joint adjoint ``f_adjoint(*params, v=None)``: for the
        arguments of the last call (code is specialised on shapes and dtypes), or generic.

        Returns: the Python source text (a ``str``) of the code ``adjoint`` and ``grad`` run.

        Raises: the compile-time errors (``SrcadSyntaxError``, ``NoRuleError``,
        ``SourceUnavailableError``) for code srcad cannot differentiate.

        >>> import numpy as np, srcad
        >>> @srcad.differentiable
        ... def cube(x):
        ...     return x ** 3
        >>> cube.adjoint_source.splitlines()[0]
        'def cube_adjoint(x, v=None):'
        """
        self._ensure_compiled()
        return self._compiled.generated.joint_source

    @property
    @api_boundary
    def vjp_source(self) -> str:
        """The generated forward/backward pair that ``vjp`` uses.

        Returns: the Python source text of both functions: the forward pass, which returns
        the output and what the backward pass needs, and the backward pass, which turns
        that and a cotangent into vᵀJ.

        Raises: the compile-time errors, as ``adjoint_source``.

        >>> import numpy as np, srcad
        >>> @srcad.differentiable
        ... def cube(x):
        ...     return x ** 3
        >>> [line for line in cube.vjp_source.splitlines() if line.startswith("def ")]
        ['def cube_forward(x):', 'def cube_backward(_saved, v=None):']
        """
        self._ensure_compiled()
        g = self._compiled.generated
        g.ensure_pair()
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

    return value_and_gradient


@api_boundary
def vjp(fun: Callable[..., R], *args: Any, wrt: Optional[Wrt] = None, argnums: Optional[Wrt] = None,
        backend: str = "numpy") -> tuple[R, Callable[..., Any]]:
    """``(y, pullback)`` for ``fun(*args)``; ``pullback(v)`` is vᵀJ and may be called many times.

    For an output that is a tuple, list or dict, ``v`` has its structure; ``None`` in place
    of one of its items means a zero cotangent there (an output not differentiated, such as
    a layer's cache).

    Parameters:
        fun: the function to differentiate.
        *args: its arguments (positional only: ``wrt`` and ``argnums`` are keywords here).
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
    return _as_differentiable(fun, chosen_wrt(wrt, argnums)).vjp(*args)


@api_boundary
def adjoint(fun: Callable[..., Any], wrt: Optional[Wrt] = None, *,
            argnums: Optional[Wrt] = None) -> Callable[..., Any]:
    """The companion ``g(*args, v)`` that returns vᵀJ.

    Parameters: ``fun``, ``wrt``, ``argnums``: as for ``srcad.grad``.

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
    d = _as_differentiable(fun, chosen_wrt(wrt, argnums))
    adjoint_of = type(d).adjoint.__wrapped__  # the method itself: the companion is the API boundary

    @functools.wraps(unwrap(fun))
    @api_boundary
    def companion(*args: Any, **kwargs: Any) -> Any:
        return adjoint_of(d, *args, **kwargs)

    return companion


# ---- derivatives of derivatives ----------------------------------------------------------


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
    if registry.lookup(registry.JVP, fun) is not None:
        return trampoline(fun), (), {}  # a function with a rule (library, custom_vjp): differentiate a call to it
    refuse_custom_vjp_body(fun, lambda message: NoRuleError(f"{where(fn)}: {message}"))
    return fn, prefix, fixed


def _params(fn):
    """The parameters of the code generated for ``fn``: all of them, in order (``*args`` and
    ``**kwargs`` as one tuple and one dict parameter, keyword-only ones as plain ones)."""
    code = fn.__code__
    names, n = code.co_varnames, code.co_argcount
    if not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) and not code.co_kwonlyargcount:
        return names[:n]
    keyword_only, rest = names[n:n + code.co_kwonlyargcount], n + code.co_kwonlyargcount
    varargs = names[rest:rest + 1] if code.co_flags & inspect.CO_VARARGS else ()
    rest += len(varargs)
    varkw = names[rest:rest + 1] if code.co_flags & inspect.CO_VARKEYWORDS else ()
    return names[:n] + varargs + keyword_only + varkw
