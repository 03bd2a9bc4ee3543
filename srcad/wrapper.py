"""``Differentiable``, what ``srcad.differentiable`` returns (entry points: ``srcad.api``): a
function with its adjoint. Calling it runs the function unchanged; its methods bind the
caller's arguments to the function's parameters (a bound method's ``self``, a partial's
values), run the generated code (``srcad.dispatch`` finds it) and check the cotangent. A
gradient made by ``srcad.grad`` is differentiated again through its generated adjoint
(``_Nested``).
"""
import functools
import sys
import types
from typing import TYPE_CHECKING, Any, Callable, Generic, ParamSpec, Sequence, TypeVar, Union

import numpy as np

from .arguments import check_callable, checked_cotangent, signature, snapshot, unbind, where
from .backends.numba_backend import check_backend
from .batching import batched_pullback
from .dispatch import MISS, CompiledCache, positional_cotangent
from .errors import ArgumentError, CotangentError
from .guards import GuardList
from .runtime import default_cotangent
from .source import own_api_error, srcad_api_function, unwrap
from .tracebacks import HAS_NOTES, api_boundary, relocate

P = ParamSpec("P")
R = TypeVar("R")
Wrt = Union[int, str, Sequence[Union[int, str]]]  # an argument's position or name, or a tuple of them


def _normalize_wrt(wrt):
    single = not isinstance(wrt, (tuple, list))
    return (wrt,) if single else tuple(wrt), single


def _named(fn):
    """``fn``'s qualified name, or what it is (an object srcad cannot read: the first call says why)."""
    return getattr(fn, "__qualname__", repr(fn))


class Differentiable(CompiledCache, functools.partial, Generic[P, R]):  # type: ignore[type-arg]
    """A function with its adjoint: calling it runs the original function unchanged.

    ``f.adjoint(*args, v)`` gives vᵀJ for the ``wrt`` arguments (``v`` may be omitted
    for a scalar output); ``f.vjp(*args)`` gives ``(y, pullback)``; ``f.grad``,
    ``f.value_and_grad``; ``f.adjoint_source`` is the generated code. How arguments and
    the cotangent are passed: see ``srcad.api``.
    """

    _backend = "numpy"  # or "numba", "auto": what runs the generated code (backends.numba_backend)

    _made_from = ()  # guards that the callable it was made from still runs the same (arguments.unbind)

    def __new__(cls, fn, wrt=0, backend="numpy"):
        check_callable(fn)  # (functools.partial's own TypeError would not say what was passed)
        if getattr(fn, "__srcad_has_aux__", False):
            raise ArgumentError(f"{where(fn.__wrapped__)}: a gradient made with has_aux=True returns (gradient, aux) "
                                "and is not differentiated again; differentiate srcad.grad of a function that "
                                "returns only the output")
        inner = getattr(fn, "__srcad_differentiable__", None)
        if inner is not None and cls is Differentiable:  # a gradient srcad made: its generated adjoint
            return _Nested(fn, inner, wrt)
        made_from = []  # checked per call: a changed partial or __call__ asks for a new derivative
        func, prefix, fixed, descriptor = unbind(fn, made_from)
        if srcad_api_function(func):  # srcad.hessian(f), srcad.jacobian(...): not read as code of yours
            raise own_api_error(fn)
        self = super().__new__(cls, func, *prefix, **fixed)
        self._made_from = made_from
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
        self._checkers = {}  # the same key -> dispatch.key_checker(key): a pure function of the key
        self._method = None  # bound to a self: its (_sig, _names, _bound, _guards), shared by every self
        self._plan()
        return self

    def _plan(self):
        """What every call would otherwise work out again from the signature alone: the
        common call (plain positional parameters, nothing fixed by keyword, no keywords
        given) then binds without ``inspect`` and finds its cotangent by counting."""
        sig = self._sig
        self._last = None  # the key, code and guards of the last call (_recent); a bound method's are its own
        self._fast = None  # dispatch.fast_entry of the last call, where it applies
        self._where = sig.where if sig is not None else _named(self.func)
        self._plain = sig is not None and sig.simple and not self._fixed
        if self._plain:
            self._needed = sig.needed({})  # adjoint: beyond these positional arguments comes v
            self._fewest, self._most = sig.required, len(sig.names)  # with the prefix, as sig.bind counts

    def _description(self):
        """What this differentiates, for messages: the function's name (``srcad.grad(f)`` nested)."""
        return _named(self.func)

    def __repr__(self):
        return f"<srcad.differentiable {_named(self.func)} wrt={self._wrt if not self._single else self._wrt[0]}>"

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

    if TYPE_CHECKING:  # calling runs the original function (functools.partial's own __call__)
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    def adjoint(self, *args: Any, **kwargs: Any) -> Any:
        """vᵀJ for the ``wrt`` arguments: ``f.adjoint(*args, v)`` (``v`` optional if y is scalar).

        ``v`` is the keyword ``v=`` unless the function has a parameter named ``v`` (then
        ``v=`` is that parameter) or ``**kwargs`` (then ``v=`` is refused as ambiguous), or
        else the last positional argument beyond those the function requires (so with
        defaults, ``f.adjoint(x, v)`` works).

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
        try:  # api_boundary, inline: this call is the hot one, and a frame costs 0.2 µs
            fast = self._fast  # (made for a plain signature only: dispatch)
            if fast is not None and not kwargs:  # the last call's kind of arguments: one generated frame
                try:
                    grads = fast(args)
                except CotangentError as exc:
                    raise self._located(exc) from None
                if grads is not MISS:
                    return grads
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
            elif "v" in kwargs and "v" not in self._sig.names:  # v= would go into **kwargs: a guess either way
                raise ArgumentError(f"{self._where}: v= is ambiguous: it may be the cotangent or an item of "
                                    f"**{self._sig.varkw}; pass the cotangent by position after the arguments "
                                    f"(f.adjoint(x, v)), or use vjp(...) and its pullback")
            else:
                needed = self._sig.needed({**self._fixed, **kwargs}) if self._sig is not None else len(args)
                if needed is not None and len(args) > needed:
                    *args, v = args
                elif needed is None and not by_keyword:
                    raise ArgumentError(f"{self._where}: with *{self._sig.varargs} and a parameter v (or **kwargs), "
                                   "adjoint cannot tell the cotangent apart: use vjp(...) and its pullback")
            return self._joint(*self._bind(tuple(args), kwargs), v)
        except Exception as error:
            relocate(error)
            if HAS_NOTES:
                raise
            raise error

    def _joint(self, args, kwargs, v):
        recent = None if kwargs else self._recent(args)
        if recent is None:
            joint = self._functions(args, kwargs)[0]
            positional = positional_cotangent(joint)
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
        if self._sig is not None and not kwargs:  # a default array is a value of the forward pass too
            args = self._sig.with_defaults(args)
        y, pullback = self._vjp(snapshot(args), snapshot(kwargs) if kwargs else kwargs, batched=True)
        pullback.batched = api_boundary(pullback.batched)
        # the pullback reads what the forward sweep saved, which may be the output's own arrays
        # (exp, tanh, a layer's cache): the caller gets copies to change (y -= target) at will
        return snapshot(y), pullback

    def _vjp(self, args, kwargs, batched=False):
        functions, y, saved = self._forward_pass(args, kwargs)
        return y, self._pullback(functions, y, saved, batched)

    def _forward_pass(self, args, kwargs):
        """``(functions, y, saved)``: the generated functions for these arguments, and what
        their forward sweep returns (the pair is made when first used)."""
        functions = self._functions(args, kwargs)
        y, saved = functions[1](*args, **kwargs)
        return functions, y, saved

    def _pullback(self, functions, y, saved, batched=False):
        backward = functions[2]

        @api_boundary
        def pullback(v=None):
            try:
                grads = backward(saved, checked_cotangent(v, self._where))
            except CotangentError as exc:
                raise self._located(exc) from None
            return (grads,) if self._one_tuple else grads

        if batched:  # pullback.batched(V): a stack of cotangents at once (srcad.batching)
            pullback.batched = batched_pullback(pullback, functions, saved, y, self._one_tuple, self._located)
        return made_by(pullback, "the pullback of srcad.vjp", self)

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


def made_by(function, transform, d):
    """``function``, a derivative ``transform`` made of what ``d`` differentiates, marked with
    it: differentiated again, srcad's message names the user's function (``source.own_api_error``)."""
    function.__srcad_made__ = (transform, d)
    return function


def _cotangent_param(joint):
    """The name of the generated joint adjoint's cotangent parameter (``v``, or ``v_`` when
    the function has a parameter ``v``): its last parameter."""
    code = joint.__code__
    return code.co_varnames[code.co_argcount + code.co_kwonlyargcount - 1]


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

    def _description(self):
        return f"srcad.grad({self._inner._description()})"

    def _compile(self, args, kwargs, key):
        """Also guarded by what the inner code was made for (a helper it calls or inlined,
        rebound or its code swapped): then both are made again."""
        bound = super()._compile(args, kwargs, key)
        inner = self._inner._guards.get(self._inner._key(args, kwargs)[0])
        if inner:
            self._guards[key] = GuardList(list(self._guards.get(key, ())) + list(inner))
        return bound
