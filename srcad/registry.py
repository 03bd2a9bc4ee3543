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
import functools
import inspect
import types
from typing import Any, Callable, Sequence, TypeVar, Union

import gast

from . import optional_rules
from .errors import SrcadError, SrcadSyntaxError
from .rule_templates import ElementwiseRule, PartialsRule, Rule, describe, function_body
from .source import GENERATED_FILENAME

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


def _checked(rule):
    """``rule``, its stores into ``d[...]`` (``t[...]``) checked now if it is a user's: a store
    srcad does not apply is an error where the rule is registered, not a silently lost
    statement (srcad's own rules are parsed, and checked, on first use)."""
    if not (rule.fn.__module__ or "").startswith(__package__ + "."):
        try:
            rule.body  # parsed, and checked, now
        except OSError:
            pass  # no source to read: that fails where the rule is used, as before
    return rule


def check_parameters(key, template):
    """A rule of yours for a function of yours takes the result and then exactly the function's
    parameters (bound by name): one it leaves out (``scale``) would be differentiated as if it
    did not exist, and the rule would keep assuming its default when the call or a rebound
    ``f.__defaults__`` gives another value. Refused where the rule is registered. (Rules for
    installed libraries' functions may leave out options they refuse when a call passes them.)
    A bound method's or a callable object's parameters are those a call passes (without ``self``)."""
    from .code_reading import installed_file

    target = inspect.unwrap(key)
    fn = code_called(target)
    if (fn is None or (template.__module__ or "").startswith(__package__ + ".")
            or (fn.__module__ or "").startswith(__package__ + ".") or installed_file(fn.__code__.co_filename)):
        return
    parameters = inspect.signature(target).parameters
    wanted = list(parameters)
    result, *given = inspect.signature(template).parameters
    if sorted(given) != sorted(wanted):
        code = template.__code__
        spelled = ", ".join([result] + [str(p) for p in parameters.values()])
        raise SrcadSyntaxError(f"{code.co_filename}:{code.co_firstlineno}: the rule {template.__qualname__} of "
                               f"{getattr(target, '__qualname__', fn.__qualname__)} takes ({', '.join(given)}) after "
                               f"the result, but the function takes ({', '.join(wanted)}); a rule takes the result and "
                               f"then the function's parameters: def {template.__name__}({spelled})")


def code_called(target):
    """The Python function a call of ``target`` runs: itself, a bound method's function, or a
    callable object's ``__call__`` (its defaults, rebound, change the call as a function's do);
    None for anything else (a class, a builtin, a ``functools.partial``, which srcad reads through)."""
    if isinstance(target, types.FunctionType):
        return target
    if isinstance(target, types.MethodType):
        return target.__func__ if isinstance(target.__func__, types.FunctionType) else None
    if isinstance(target, (type, functools.partial)):
        return None
    call = getattr(type(target), "__call__", None)
    return call if isinstance(call, types.FunctionType) else None


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
            check_parameters(key, fn)
            _register(VJP, key, _checked(Rule(key, fn, "d", zero, dtype_aware)), "vjp")
        return fn

    return decorate


def register_jvp(*keys: Any, zero: Union[str, Sequence[str]] = (),
                 dtype_aware: bool = False) -> Callable[[_Template], _Template]:
    """Register a forward-mode rule (template) for each of ``keys``; every parameter that can
    carry a tangent is read (``t[p]``) or listed in ``zero``, and ``dtype_aware`` is, as for
    ``register_vjp``."""

    def decorate(fn):
        for key in _distinct(keys):
            check_parameters(key, fn)
            _register(JVP, key, _checked(Rule(key, fn, "t", zero, dtype_aware)), "jvp")
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
            check_parameters(key, fn)
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
            check_parameters(key, fn)
            _register(VJP, key, PartialsRule(key, fn, "d"), "vjp")
            _register(JVP, key, PartialsRule(key, fn, "t"), "jvp")
        return fn

    return decorate


#: rules right for complex operands, with a complex cotangent ``∂L/∂Re + i ∂L/∂Im`` (reverse)
#: and a complex tangent (forward); every other rule is refused a complex operand
COMPLEX_SAFE = set()
COMPLEX_SAFE_SUMMARY = ("np.fft and scipy.fft transforms, np.real, np.imag, np.abs, np.conj, +, -, sums, indexing, reshaping, "
                        "joining and products with real constants")


def register_complex_safe(*keys):
    """Mark the rules of ``keys`` as right for complex operands (see ``COMPLEX_SAFE``)."""
    global GENERATION
    COMPLEX_SAFE.update(_distinct(keys))
    # (as for a rule: srcad's own optional modules, loaded on demand, make nothing made stale, and
    # a bump while the first function reading SciPy compiles made it compile again on the next call)
    if not all(optional_rules.registered_by_optional_module(key) for key in keys):
        GENERATION += 1


#: srcad's own helpers that check the class of each operand when they run and return a NumPy
#: array whatever they are given (``rules.scipy_sparse``'s products): a value they read
#: reaches no operator through them, so ``passes.outside_values`` need not check it
CHECKED_OPERANDS = set()


def is_complex_safe(key):
    try:
        return key in COMPLEX_SAFE
    except TypeError:
        return False


#: calls of optional libraries (registered by their rule modules) that may return a complex
#: value for real operands, and those whose result is real whatever their operands; the
#: complex-values pass reads them with its own sets of NumPy's
COMPLEX_MAKERS = set()
REAL_RESULTS = set()


def register_complex_makers(*keys):
    COMPLEX_MAKERS.update(_distinct(keys))


def register_real_results(*keys):
    REAL_RESULTS.update(_distinct(keys))


#: functions of optional libraries whose result's shape and dtype follow from the shapes and
#: dtypes of the arguments at these positions (``passes.standins``: shape inference may run them
#: on stand-ins), registered by their rule modules
STANDIN_POSITIONS = {}


def register_standin_positions(positions, *keys):
    STANDIN_POSITIONS.update(dict.fromkeys(_distinct(keys), tuple(positions)))


def standin_positions_of(key):
    return STANDIN_POSITIONS.get(key) if _registered_in(STANDIN_POSITIONS, key) else None


def makes_complex(key):
    return _registered_in(COMPLEX_MAKERS, key)


def gives_real(key):
    return _registered_in(REAL_RESULTS, key)


def _registered_in(group, key):
    """``key`` in ``group``, after loading the optional rules that could register it."""
    try:
        found = key in group
    except TypeError:  # unhashable objects are in none of these sets
        return False
    return found or (optional_rules.load_rules_for(key) and key in group)


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


def registration_name(key, what):
    """How a message tells the user to name ``key`` in a registration: as the call spelled it
    where that is a dotted path (``np.subtract.reduce``, as the user's module names it), else
    ``describe(key)``."""
    return what if "." in what and " " not in what else describe(key)


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
    return found.current() if isinstance(found, Rule) else found


#: modules whose functions are srcad's derivative machinery, not user code: ``srcad.runtime``
#: and the ``srcad.runtime_*`` modules it re-exports, and the rule modules
_HELPER_MODULES = ("srcad.runtime", "srcad.rules.")


def _is_srcad_helper(key):
    """A function of srcad's modules written by hand. The code srcad generated for a pure helper
    (its adjoint's forward and backward sweeps, which keep the helper's module) is not one: it
    is differentiated again by reading it, as any generated adjoint is (third order)."""
    module = getattr(key, "__module__", None) or ""
    return (inspect.isfunction(key) and module.startswith(_HELPER_MODULES)
            and not key.__code__.co_filename.startswith(GENERATED_FILENAME))


@functools.lru_cache(maxsize=None)
def _pure(fn):
    """Does ``fn`` only compute values? Every statement binds plain names, returns, or is an
    ``if``/``for`` of such statements, and no call passes ``out=``. A helper that stores into
    an element or attribute, updates in place (``+=``), or calls for an effect
    (``np.add.at(view, ...)``) is not: its source cannot be trusted to differentiate."""
    try:
        body, _ = function_body(fn)
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
