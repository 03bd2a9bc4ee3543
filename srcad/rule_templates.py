"""Rule templates: a rule's function, parsed on first use into the statements instantiated at
each call site (``template``); the rule made from an elementwise derivative
(``ElementwiseRule``: ``d[x] += d[y] * <dy/dx>``) or from partial derivatives
(``PartialsRule``); and how a rule's key is named in messages (``describe``). The tables
they are registered in are ``registry``'s."""
import builtins
import functools
import inspect
import sys

import gast
import numpy as np

from . import astutil as A
from .errors import SrcadError
from .facts import record
from .guards import _MISSING, _cell_contents, _follow
from .indentation import dedent_code
from .rule_stores import check_stores, is_marker, updated_params
from .source import capture
from .source_check import check_source_is_code


class Rule:
    """A rule template: its parameters and defaults now; its body, parsed on first use
    (parsing hundreds of templates at import would make ``import srcad`` slow)."""

    def __init__(self, key, fn, marker, zero=(), dtype_aware=False):
        self.key = key
        self.fn = fn
        self.marker = marker
        self.dtype_aware = dtype_aware  # the template itself gives an integer or boolean result no derivative
        self._zero_given = zero
        self._read_signature()

    def _read_signature(self):
        params = list(inspect.signature(self.fn).parameters.values())
        self.result = params[0].name
        self.params = params[1:]
        self.zero = zero_params(self._zero_given, self.params, self.fn)
        self._read_from = _template_parts(self.fn)

    def current(self):
        """This rule as its function is now. A user's template whose code or defaults were
        replaced since they were read (``h_vjp.__code__ = ...``, as IPython's ``%autoreload``
        does; ``h_vjp.__defaults__ = ...``) is read again, and what it is read from is a fact
        of the compilation in progress (``facts.record``): code generated from the old
        template is not used once it changes."""
        if self._own:
            return self
        fn = self.fn
        if not all(now is then for now, then in zip(_template_parts(fn), self._read_from)):
            for name in [n for n in vars(self) if isinstance(getattr(type(self), n, None), functools.cached_property)]:
                del self.__dict__[name]
            self._read_signature()
        record(fn, ("__code__",), fn.__code__)
        record(fn, ("__defaults__",), fn.__defaults__)
        for name, value in (fn.__kwdefaults__ or {}).items():
            record(fn, ("__kwdefaults__", name), value)
        return self

    @functools.cached_property
    def _parsed(self):
        return function_body(self.fn)

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

    @functools.cached_property
    def body(self):
        body = self._parsed[0]
        check_stores(self, body)
        return body

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

    @functools.cached_property
    def _free_names(self):
        """The names the template reads that it does not bind itself."""
        module = gast.Module(body=self.body, type_ignores=[])
        local = {p.name for p in self.params} | {self.result, self.marker} | A.names_stored(module)
        return sorted(A.names_read(module) - local)

    @property
    def globals(self):
        """The module-level names the template uses and what they denote *now* (helpers may be
        defined after the rule, and the module may rebind them). Each read of a user rule's
        module is a fact of the compilation in progress (``facts.record``): the code generated
        from the template holds the value, so it is guarded on it."""
        own = self._own_globals
        if own is not None:
            return own
        found, provided, scope = {}, self.provided(), self.fn.__globals__
        for name in self._free_names:
            if name in provided:
                found[name] = provided[name]
            elif name in scope or name in self._cells:
                found[name] = self.read((name,))
            elif not hasattr(builtins, name):
                raise SrcadError(f"{self.filename}:{self.lineno}: rule for {describe(self.key)} "
                                 f"uses unknown name {name!r}, which is neither a name of its module nor of "
                                 f"the function around it; define it at module level (or pass it as a parameter)")
        if self._own:  # srcad's modules are not state a user changes: read once
            self._own_globals = found
        return found

    _own_globals = None

    @functools.cached_property
    def _own(self):
        """Is the rule srcad's own (its module is not state a user changes)?"""
        return (self.fn.__module__ or "").startswith(__package__ + ".")

    def read(self, path):
        """What the dotted name ``path`` (``("cfg", "SQUARE")``) denotes in the template's scope
        now (a closure variable of a rule made in a factory, else its module's), recorded as a
        fact of the compilation in progress unless the rule is srcad's own (whose modules are not
        state a user changes); None if it denotes nothing."""
        cell = self._cells.get(path[0])
        scope = self.fn.__globals__ if cell is None else cell
        root = scope.get(path[0], _MISSING) if cell is None else _cell_contents(cell)
        value = _follow(root, path[1:])
        if not self._own:
            record(scope, path, value)
        return None if value is _MISSING else value

    @functools.cached_property
    def _cells(self):
        """The closure cells of the template's function, by name (a rule made in a factory)."""
        return dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))

    @functools.cached_property
    def differentiated(self):
        """The parameters the rule accounts for: declared ``zero=``, updated (``d[p] += ...``),
        or in a forward rule read (``t[p]``), directly or as the loop variable of
        ``for p in params`` / ``for i, p in enumerate(params)``. A vjp rule that only reads
        ``d[p]`` gives ``p`` no derivative. ``template.instantiate`` refuses a call that
        differentiates any other parameter."""
        module = gast.Module(body=self.body, type_ignores=[])
        named = set(self.zero) | updated_params(self)
        if self.marker == "t":
            named |= {n.slice.id for n in gast.walk(module) if is_marker(n, "t") and isinstance(n.slice, gast.Name)}
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


def _template_parts(fn):
    """What a template is read from: its code, its defaults, its keyword-only defaults (whose
    dict may be changed in place: its items)."""
    return (fn.__code__, fn.__defaults__, *(fn.__kwdefaults__ or {}).values())


def function_body(fn):
    """The statements of ``fn`` without its docstring, and the line it starts on. A user's
    template is read only where its text is the code that runs: the file of a rule parsed on
    first use may have been edited since its module was imported."""
    source, lineno = inspect.getsourcelines(fn)
    if not (fn.__module__ or "").startswith(__package__ + "."):
        check_source_is_code(capture(fn))
    body = gast.parse(dedent_code("".join(source))).body[0].body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    return body, lineno


class ElementwiseRule(Rule):
    """A rule made from a derivative template ``def f(y, x): return <dy/dx>``: the vjp
    ``d[x] += d[y] * <dy/dx>`` or the jvp ``t[y] += t[x] * <dy/dx>`` (for a slope that may be
    infinite, ``t[y] += t[x] * resting_zero(t[x], <dy/dx>) if moves(t[x]) else t[x] * 0.0``:
    a number that does not move never meets its slope, which Python floats would raise on)."""

    infinite_slopes = False

    @functools.cached_property
    def _parsed(self):
        body, lineno = function_body(self.fn)
        if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
            raise SrcadError(f"{self.filename}:{lineno}: the elementwise rule for {describe(self.key)} must be "
                             "a single `return <derivative>` (dy/dx in terms of the result and the argument)")
        x = self.params[0].name
        # reverse mode pulls d[y] back into d[x]; forward mode pushes t[x] forward into t[y]
        source, target = (self.result, x) if self.marker == "d" else (x, self.result)
        slope = body[0].value
        value = _times(_marked(self.marker, source, gast.Load()), slope)
        if self.marker == "t" and self.infinite_slopes:
            resting = gast.Call(func=A.load("resting_zero"), args=[_marked("t", x, gast.Load()), slope], keywords=[])
            value = gast.IfExp(test=gast.Call(func=A.load("moves"), args=[_marked("t", x, gast.Load())], keywords=[]),
                               body=_times(_marked("t", x, gast.Load()), resting),
                               orelse=gast.BinOp(left=_marked("t", x, gast.Load()), op=gast.Mult(), right=A.const(0.0)))
        update = gast.AugAssign(target=_marked(self.marker, target, gast.Store()), op=gast.Add(), value=value)
        gast.copy_location(update, body[0])
        return [gast.fix_missing_locations(update)], lineno

    def provided(self):
        from .runtime import moves, resting_zero

        return {"resting_zero": resting_zero, "moves": moves} if self.marker == "t" and self.infinite_slopes else {}


class PartialsRule(Rule):
    """A rule made from a template that returns the partial derivative of the result in each
    parameter, ``return {x: <dy/dx>, loc: <dy/dloc>}``, after any statements they share: the
    vjp ``d[x] += unbroadcast(d[y] * <dy/dx>, x)`` or the jvp ``t[y] += t[x] * <dy/dx>`` per
    entry. A ``no_derivative(...)`` entry refuses that parameter, if it is differentiated."""

    @functools.cached_property
    def _parsed(self):
        body, lineno = function_body(self.fn)
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
    if isinstance(owner, np.ufunc):  # numpy.add.reduce, not ufunc.reduce
        return f"{describe(owner)}.{key.__name__}"
    if getattr(key, "__name__", None) == "__getitem__" and owner is not None:  # np.r_[...]
        names = [name for name, value in vars(np).items() if value is owner]
        if names:
            return f"numpy.{names[0]}[...]"
    if owner is not None and not inspect.ismodule(owner) and not isinstance(owner, type):
        instance = _public_name(owner, type(owner).__module__)
        if instance is not None:  # scipy.stats.norm.logpdf, not rv_continuous.logpdf
            return f"{instance}.{key.__name__}"
    module = getattr(key, "__module__", None) or ""
    if "._" in module and _public_name(key, module) is not None:  # scipy.linalg, not scipy.linalg._basic
        return _public_name(key, module)
    name = getattr(key, "__qualname__", None) or getattr(key, "__name__", None)
    if name is None:  # a callable object (a functools.partial): its repr spells its type
        return repr(key)
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


def zero_params(zero, params, fn):
    zero = (zero,) if isinstance(zero, str) else tuple(zero)
    unknown = sorted(set(zero) - {p.name for p in params})
    if unknown:
        code = fn.__code__
        raise SrcadError(f"{code.co_filename}:{code.co_firstlineno}: zero={unknown[0]!r} is not a parameter of the "
                         f"rule {fn.__qualname__}")
    return zero
