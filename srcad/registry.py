"""Derivative rules as data: tables keyed by the real Python object (``numpy.sin``),
by a method or attribute name of arrays (``"sum"``, ``"T"``), or by a gast node type
(``gast.Mult``), each filled by a decorator. Registering a key twice is an error.

A rule is a template function whose body reads like the math::

    @register_vjp(np.sin)
    def sin(y, x):
        d[x] += d[y] * np.cos(x)

The first parameter names the call's result; the others bind like the call's own
parameters, defaults included. ``d[x]`` is the adjoint of whatever variable ``x`` is
bound to (``t[x]`` its tangent in forward-mode rules); a statement that would update the
adjoint of a constant or of a value that does not need one is dropped.

An elementwise function of one argument states its derivative once, and gets both rules::

    @register_elementwise(np.sinh)
    def sinh(y, x):
        return np.cosh(x)  # registers d[x] += d[y] * np.cosh(x) and t[y] += t[x] * np.cosh(x)
"""
import builtins
import functools
import inspect
import sys
import textwrap
from typing import Any, Callable, Sequence, TypeVar, Union

import gast

from . import astutil as A
from . import optional_rules
from .errors import SrcadError

_Template = TypeVar("_Template", bound=Callable[..., Any])  # a rule template, returned as it is

VJP = {}  # key -> Rule
JVP = {}
NONDIFFERENTIABLE = {}  # key -> reason (str)
#: array methods and attributes that stand for a function of the array: "sum" -> np.sum
METHODS = {}
ATTRIBUTES = {}
NONDIFF_METHODS = set()
NONDIFF_ATTRIBUTES = set()
# counts the registrations after srcad's own: code generated before one may have differentiated a
# function's source where a rule now applies, so compiled code is keyed and guarded on it
GENERATION = 0


class Rule:
    """A rule template: its parameters and defaults now; its body, parsed on first use
    (parsing hundreds of templates at import would make ``import srcad`` slow)."""

    def __init__(self, key, fn, marker, zero=(), dtype_aware=False):
        self.key = key
        self.fn = fn
        self.marker = marker
        self.dtype_aware = dtype_aware  # the template itself gives an integer or boolean result no derivative
        params = list(inspect.signature(fn).parameters.values())
        self.result = params[0].name
        self.params = params[1:]
        self.zero = _zero_params(zero, self.params, fn)
        self._globals = None

    @functools.cached_property
    def _parsed(self):
        return _function_body(self.fn)

    @functools.cached_property
    def positions(self):
        """``(name, the rule's parameter it binds)`` per positional parameter of the function,
        None where the rule lacks it (``np.median(a, 0, None, True)`` passes
        ``overwrite_input``, never ``keepdims``); None for an unreadable signature or ``*args``."""
        try:
            real = list(inspect.signature(self.key).parameters.values())
        except (TypeError, ValueError):
            return None
        if any(p.kind == p.VAR_POSITIONAL for p in real):
            return None
        names = {p.name for p in self.params}
        real_names = {p.name for p in real}
        mine = [p.name for p in self.params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        out = []
        for i, p in enumerate(q for q in real if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)):
            if p.name in names:
                out.append((p.name, p.name))
            elif i < len(mine) and mine[i] not in real_names:  # the rule's own name for it
                out.append((p.name, mine[i]))
            else:
                out.append((p.name, None))
        return out

    @property
    def body(self):
        return self._parsed[0]

    @property
    def lineno(self):
        return self._parsed[1]

    @property
    def filename(self):
        return inspect.getsourcefile(self.fn)

    @functools.cached_property
    def locals(self):
        """Names the template assigns: its temporaries, renamed at each call site."""
        stored = A.names_stored(gast.Module(body=self.body, type_ignores=[]))
        return sorted(stored - {p.name for p in self.params} - {self.result})

    @property
    def globals(self):
        """The module-level names the template uses (helpers may be defined after the rule)."""
        if self._globals is None:
            module = gast.Module(body=self.body, type_ignores=[])
            local = {p.name for p in self.params} | {self.result, self.marker} | A.names_stored(module)
            builtin_names = set(dir(builtins))
            found, provided = {}, self.provided()
            for name in sorted(A.names_read(module) - local):
                if name in provided:
                    found[name] = provided[name]
                elif name in self.fn.__globals__:
                    found[name] = self.fn.__globals__[name]
                elif name not in builtin_names:
                    raise SrcadError(f"{self.filename}:{self.lineno}: rule for {describe(self.key)} "
                                     f"uses unknown name {name!r}")
            self._globals = found
        return self._globals

    @functools.cached_property
    def differentiated(self):
        """The parameters the rule accounts for: declared ``zero=``, or named in ``d[...]``
        (``t[...]``), directly or as the loop variable of ``for p in params`` /
        ``for i, p in enumerate(params)``. ``template.instantiate`` refuses a call that
        differentiates any other parameter."""
        module = gast.Module(body=self.body, type_ignores=[])
        named = set(self.zero) | {n.slice.id for n in gast.walk(module)
                 if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and n.value.id == self.marker
                 and isinstance(n.slice, gast.Name)}
        for loop in gast.walk(module):
            if not isinstance(loop, gast.For):
                continue
            over = loop.iter.args[0] if isinstance(loop.iter, gast.Call) and loop.iter.args else loop.iter
            targets = {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
            if isinstance(over, gast.Name) and targets & named:
                named.add(over.id)
        return named

    def provided(self):
        """Names the rule's generated statements use that its module need not define."""
        return {}

    def __repr__(self):
        return f"<{self.marker}-rule for {describe(self.key)} at {self.filename}:{self.lineno}>"


def _function_body(fn):
    """The statements of ``fn`` without its docstring, and the line it starts on."""
    source, lineno = inspect.getsourcelines(fn)
    body = gast.parse(textwrap.dedent("".join(source))).body[0].body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    return body, lineno


class ElementwiseRule(Rule):
    """A rule made from a derivative template ``def f(y, x): return <dy/dx>``: the vjp
    ``d[x] += d[y] * <dy/dx>`` or the jvp ``t[y] += t[x] * <dy/dx>`` (for a slope that may be
    infinite, ``t[y] += t[x] * resting_zero(t[x], <dy/dx>)``)."""

    infinite_slopes = False

    @functools.cached_property
    def _parsed(self):
        body, lineno = _function_body(self.fn)
        if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
            raise SrcadError(f"{self.filename}:{lineno}: the elementwise rule for {describe(self.key)} must be "
                             "a single `return <derivative>` (dy/dx in terms of the result and the argument)")
        x = self.params[0].name
        # reverse mode pulls d[y] back into d[x]; forward mode pushes t[x] forward into t[y]
        source, target = (self.result, x) if self.marker == "d" else (x, self.result)
        slope = body[0].value
        if self.marker == "t" and self.infinite_slopes:
            slope = gast.Call(func=A.load("resting_zero"), args=[_marked("t", x, gast.Load()), slope], keywords=[])
        update = gast.AugAssign(target=_marked(self.marker, target, gast.Store()), op=gast.Add(),
                                value=_times(_marked(self.marker, source, gast.Load()), slope))
        gast.copy_location(update, body[0])
        return [gast.fix_missing_locations(update)], lineno

    def provided(self):
        from .runtime import resting_zero

        return {"resting_zero": resting_zero} if self.marker == "t" and self.infinite_slopes else {}


class PartialsRule(Rule):
    """A rule made from a template that returns the partial derivative of the result in each
    parameter, ``return {x: <dy/dx>, loc: <dy/dloc>}``, after any statements they share: the
    vjp ``d[x] += unbroadcast(d[y] * <dy/dx>, x)`` or the jvp ``t[y] += t[x] * <dy/dx>`` per
    entry. A ``no_derivative(...)`` entry refuses that parameter, if it is differentiated."""

    @functools.cached_property
    def _parsed(self):
        body, lineno = _function_body(self.fn)
        names = {p.name for p in self.params}
        last = body[-1] if body else None
        partials = last.value if isinstance(last, gast.Return) else None
        if (not isinstance(partials, gast.Dict)
                or not all(isinstance(k, gast.Name) and k.id in names for k in partials.keys)
                or len({k.id for k in partials.keys}) != len(partials.keys)):
            raise SrcadError(f"{self.filename}:{lineno}: the rule for {describe(self.key)} must end with "
                             "`return {param: <d result / d param>, ...}`, each key a parameter once")
        updates = [self._update(k.id, v) for k, v in zip(partials.keys, partials.values)]
        for update in updates:
            gast.copy_location(update, last)
        return body[:-1] + [gast.fix_missing_locations(u) for u in updates], lineno

    def _update(self, param, partial):
        refused = isinstance(partial, gast.Call) and isinstance(partial.func, gast.Name) \
            and partial.func.id == "no_derivative"
        if self.marker == "t":  # forward: push t[param] into t[y]
            return gast.AugAssign(target=_marked("t", self.result, gast.Store()), op=gast.Add(),
                                  value=_times(_marked("t", param, gast.Load()), partial))
        value = partial if refused else gast.Call(  # reverse: pull d[y] back into d[param]
            func=A.load("unbroadcast"), args=[_times(_marked("d", self.result, gast.Load()), partial), A.load(param)],
            keywords=[])
        return gast.AugAssign(target=_marked("d", param, gast.Store()), op=gast.Add(), value=value)

    def provided(self):
        from .runtime import unbroadcast

        return {"unbroadcast": unbroadcast}  # what the reverse updates call


def _marked(marker, name, ctx):
    """``d[name]`` (or ``t[name]``)."""
    return gast.Subscript(value=A.load(marker), slice=A.load(name), ctx=ctx)


def _times(factor, derivative):
    """``factor * derivative`` written as by hand, so that elementwise rules generate the same
    code as their two-rule form: ``g * a * b`` for ``a * b``, ``g / b`` for ``1 / b``,
    ``-g * a`` for ``-a``."""
    if isinstance(derivative, gast.UnaryOp) and isinstance(derivative.op, gast.USub):
        return _times(gast.UnaryOp(op=gast.USub(), operand=factor), derivative.operand)
    if isinstance(derivative, gast.BinOp) and isinstance(derivative.op, (gast.Mult, gast.Div)):
        return gast.BinOp(left=_times(factor, derivative.left), op=derivative.op, right=derivative.right)
    if isinstance(derivative, gast.Constant) and type(derivative.value) is int and derivative.value == 1:
        return factor
    return gast.BinOp(left=factor, op=gast.Mult(), right=derivative)


def describe(key):
    if isinstance(key, type) and issubclass(key, gast.AST):
        return f"the operator {key.__name__}"
    if isinstance(key, tuple):
        return f"the {key[0]} .{key[1]}"
    owner = getattr(key, "__self__", None)
    if getattr(key, "__name__", None) == "__getitem__" and owner is not None:  # np.r_[...]
        import numpy

        names = [name for name, value in vars(numpy).items() if value is owner]
        if names:
            return f"numpy.{names[0]}[...]"
    if owner is not None and not inspect.ismodule(owner) and not isinstance(owner, type):
        instance = _public_name(owner, type(owner).__module__)
        if instance is not None:  # scipy.stats.norm.logpdf, not rv_continuous.logpdf
            return f"{instance}.{key.__name__}"
    module = getattr(key, "__module__", None) or ""
    if "._" in module and _public_name(key, module) is not None:  # scipy.linalg, not scipy.linalg._basic
        return _public_name(key, module)
    name = getattr(key, "__qualname__", None) or getattr(key, "__name__", None) or repr(key)
    if module in ("builtins", ""):
        return name
    return f"{module}.{name}"


def _public_name(obj, module):
    """``"scipy.stats.norm"`` for an object a package on the path of ``module`` holds under a
    public name (``scipy.linalg._basic`` → ``scipy.linalg``); None if none does."""
    parts = (module or "").split(".")
    for cut in range(len(parts) - 1, 0, -1):
        package = sys.modules.get(".".join(parts[:cut]))
        for name, value in vars(package).items() if package is not None else ():
            if value is obj and not name.startswith("_"):
                return f"{package.__name__}.{name}"
    return None


def _register(table, key, rule, what):
    try:
        existing = table.get(key)
    except TypeError:
        raise SrcadError(f"cannot register a {what} rule for unhashable {key!r}") from None
    if existing is not None:
        raise SrcadError(f"a {what} rule for {describe(key)} is already registered ({existing})")
    table[key] = rule
    if not optional_rules.note_registered(what, key, rule):  # srcad's own optional rules change nothing made
        global GENERATION
        GENERATION += 1


def _distinct(keys):
    """Aliases such as ``np.abs`` and ``np.absolute`` are one object: register it once."""
    out = []
    for key in keys:
        if not any(key is k for k in out):
            out.append(key)
    return out


def _zero_params(zero, params, fn):
    zero = (zero,) if isinstance(zero, str) else tuple(zero)
    unknown = sorted(set(zero) - {p.name for p in params})
    if unknown:
        code = fn.__code__
        raise SrcadError(f"{code.co_filename}:{code.co_firstlineno}: zero={unknown[0]!r} is not a parameter of the "
                         f"rule {fn.__qualname__}")
    return zero


def register_vjp(*keys: Any, zero: Union[str, Sequence[str]] = (),
                 dtype_aware: bool = False) -> Callable[[_Template], _Template]:
    """Register a reverse-mode rule (template) for each of ``keys``.

    Every parameter that can carry a derivative must be updated (``d[p] += ...``) or listed
    in ``zero``: its derivative is zero (only its shape is used, or the function is piecewise
    constant in it). A call that differentiates any other parameter is refused, never given
    a silent zero. A call that passes ``dtype`` checks at run time that its result is a float
    (an integer result's derivative is zero, which the template does not know), unless
    ``dtype_aware`` says the template itself gives such a result a zero derivative."""

    def decorate(fn):
        for key in _distinct(keys):
            _register(VJP, key, Rule(key, fn, "d", zero, dtype_aware), "vjp")
        return fn

    return decorate


def register_jvp(*keys: Any, zero: Union[str, Sequence[str]] = (),
                 dtype_aware: bool = False) -> Callable[[_Template], _Template]:
    """Register a forward-mode rule (template) for each of ``keys``; every parameter that can
    carry a tangent is read (``t[p]``) or listed in ``zero``, and ``dtype_aware`` is, as for
    ``register_vjp``."""

    def decorate(fn):
        for key in _distinct(keys):
            _register(JVP, key, Rule(key, fn, "t", zero, dtype_aware), "jvp")
        return fn

    return decorate


def register_elementwise(*keys: Any, infinite_slopes: bool = False) -> Callable[[_Template], _Template]:
    """Register the vjp and the jvp rule of an elementwise function of one argument, for each
    of ``keys``, from one template that returns the derivative dy/dx::

        @register_elementwise(np.sinh, math.sinh)
        def sinh(y, x):
            return np.cosh(x)

    registers ``d[x] += d[y] * np.cosh(x)`` and ``t[y] += t[x] * np.cosh(x)``. The derivative
    may use the result (the first parameter) and the argument. ``infinite_slopes=True`` (``sqrt``
    at 0): a zero tangent pushes zero, never 0 · ∞ (``runtime.resting_zero``).
    """

    def decorate(fn):
        params = list(inspect.signature(fn).parameters.values())
        if len(params) != 2 or any(p.kind != p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
            code = fn.__code__
            raise SrcadError(f"{code.co_filename}:{code.co_firstlineno}: the elementwise rule {fn.__qualname__} "
                             "must take exactly the result and the argument: `def f(y, x): return <dy/dx>`")
        for key in _distinct(keys):
            _register(VJP, key, ElementwiseRule(key, fn, "d"), "vjp")
            jvp = ElementwiseRule(key, fn, "t")
            jvp.infinite_slopes = infinite_slopes
            _register(JVP, key, jvp, "jvp")
        return fn

    return decorate


def register_partials(*keys: Any) -> Callable[[_Template], _Template]:
    """Register the vjp and the jvp rule of a function, for each of ``keys``, from one
    template that returns its partial derivatives (statements before the return are shared)::

        @register_partials(scipy.stats.norm.cdf)
        def norm_cdf(y, x, loc=0.0, scale=1.0):
            slope = scipy.stats.norm.pdf(x, loc, scale)
            return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    registers ``d[x] += unbroadcast(d[y] * slope, x)`` (and so on per entry) and
    ``t[y] += t[x] * slope``. An entry ``p: no_derivative(what, instead)`` refuses
    differentiating in ``p``.
    """

    def decorate(fn):
        for key in _distinct(keys):
            _register(VJP, key, PartialsRule(key, fn, "d"), "vjp")
            _register(JVP, key, PartialsRule(key, fn, "t"), "jvp")
        return fn

    return decorate


#: rules right for complex operands, with a complex cotangent ``∂L/∂Re + i ∂L/∂Im`` (reverse)
#: and a complex tangent (forward); every other rule is refused a complex operand
COMPLEX_SAFE = set()
COMPLEX_SAFE_SUMMARY = ("np.fft transforms, np.real, np.imag, np.abs, np.conj, +, -, sums, indexing, reshaping, "
                        "joining and products with real constants")


def register_complex_safe(*keys):
    """Mark the rules of ``keys`` as right for complex operands (see ``COMPLEX_SAFE``)."""
    global GENERATION
    COMPLEX_SAFE.update(_distinct(keys))
    GENERATION += 1


def is_complex_safe(key):
    try:
        return key in COMPLEX_SAFE
    except TypeError:
        return False


def register_method(name, function):
    """``x.name(...)`` on an array is differentiated as ``function(x, ...)``."""
    _register(METHODS, name, function, "method")


def register_attribute(name, function):
    """``x.name`` on an array is differentiated as ``function(x)``."""
    _register(ATTRIBUTES, name, function, "attribute")


def register_nondifferentiable(*keys, reason="its output does not depend smoothly on its input"):
    """Calls to ``keys`` produce values that carry no derivative (shapes, indices, flags)."""
    for key in _distinct(keys):
        _register(NONDIFFERENTIABLE, key, reason, "non-differentiable")


def no_derivative(what, instead):
    """A marker for rule templates of functions that have a derivative srcad does not compute:
    ``d[start] += no_derivative("the start of np.logspace", "write ...")`` refuses the call,
    when the template is instantiated, if and only if ``start`` is differentiated (an inactive
    argument drops the statement). Never called at run time."""
    raise SrcadError(f"srcad does not differentiate {what}; {instead}")


def is_nondifferentiable(key):
    try:
        found = key in NONDIFFERENTIABLE
    except TypeError:
        return False
    return found or (optional_rules.load_rules_for(key) and key in NONDIFFERENTIABLE)


def lookup(table, key):
    """The rule for ``key`` in ``table``; None if there is none (the caller may then read
    ``key``'s Python source). srcad's own helpers, which rules call in the derivative code
    they generate, are read as source only if they are pure (``_pure``): any other without a
    rule gets a ``Refusal``."""
    try:
        found = table.get(key)
    except TypeError:
        return None
    if found is None and optional_rules.load_rules_for(key):
        found = table.get(key)
    if found is None and _is_srcad_helper(key) and key not in NONDIFFERENTIABLE and not _pure(key):
        return Refusal(key, "d" if table is VJP else "t")
    return found


#: modules whose functions are srcad's derivative machinery, not user code: ``srcad.runtime``
#: and the ``srcad.runtime_*`` modules it re-exports, and the rule modules
_HELPER_MODULES = ("srcad.runtime", "srcad.rules.")


def _is_srcad_helper(key):
    module = getattr(key, "__module__", None) or ""
    return inspect.isfunction(key) and module.startswith(_HELPER_MODULES)


@functools.lru_cache(maxsize=None)
def _pure(fn):
    """Does ``fn`` only compute values? Every statement binds plain names, returns, or is an
    ``if``/``for`` of such statements, and no call passes ``out=``. A helper that stores into
    an element or attribute, updates in place (``+=``), or calls for an effect
    (``np.add.at(view, ...)``) is not: its source cannot be trusted to differentiate."""
    try:
        body, _ = _function_body(fn)
    except (OSError, TypeError):
        return False
    for node in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, (gast.AugAssign, gast.Expr, gast.Global, gast.Nonlocal, gast.With, gast.Try,
                             gast.Delete, gast.Lambda, gast.FunctionDef)):
            return False
        if isinstance(node, gast.Assign) and not all(isinstance(t, (gast.Name, gast.Tuple)) for t in node.targets):
            return False
        if isinstance(node, gast.Tuple) and isinstance(node.ctx, gast.Store) and not all(
                isinstance(e, gast.Name) for e in node.elts):
            return False
        if isinstance(node, gast.keyword) and node.arg == "out":
            return False
    return True


class Refusal:
    """The rule of a srcad helper that has none: binding it is an error (fail closed).

    Such a helper appears in code srcad generated, so a derivative of it is a derivative of a
    derivative. Only a helper that computes values without updating anything in place
    (``_pure``) is read as source; another, read as source, could come out silently wrong (it
    may update a view in place, as ``np.add.at(np.moveaxis(out, ...))`` does), so srcad
    refuses instead."""

    def __init__(self, key, marker):
        self.key, self.marker = key, marker

    def message(self):
        mode = "reverse-mode (vjp)" if self.marker == "d" else "forward-mode (jvp)"
        return (f"srcad cannot differentiate its own helper {describe(self.key)} ({mode}): it has no derivative "
                "rule, so this derivative of a derivative (grad of grad, hessian, hvp) through it is not "
                "supported")

    def __repr__(self):
        return f"<refusal for {describe(self.key)}>"
