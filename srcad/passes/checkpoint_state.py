"""What a checkpointed loop's body may change: only what its snapshots hold.

The reverse sweep of a checkpointed loop runs each segment of the loop again from a snapshot
taken when the segment started (``checkpoint_adjoint``). A snapshot holds the loop's own
variables: the names the body binds, and the values it updates in place through a name
(``a[i] = v``, ``L.append(v)``, ``L.pop()``, ``a.sort()``, ``np.copyto(a, b)``,
``np.add.at(a, i, v)``). Any other state the body changes (a random generator, NumPy's global
random state, an object's attributes, a list a helper appends to, a global) is not restored:
the recomputed steps would see it as the last step left it, and change it again, so the
gradient would be silently wrong.

``check_replayable`` accepts a checkpointed loop's body only when every statement of it is
known to change nothing but such names (an allowlist), and refuses anything else at the
user's line, saying what to write instead. Accepted calls:

* NumPy, ``math``, SciPy, ``operator`` and srcad functions that only read their arguments
  (``fresh.known_pure``), random draws excepted (``np.random``, a generator's methods, SciPy's
  ``rvs``, any function taking ``random_state``/``seed``/``rng``); builtins that only read theirs;
  record classes. A library function calling a function it is given (``np.vectorize``,
  ``np.apply_along_axis``, ``scipy.optimize``) is judged by that function, or refused where
  srcad cannot tell which it is; a ufunc made by ``np.frompyfunc`` is refused;
* ``print`` and logging: they run again when a segment is recomputed, so their output repeats;
* a method, an attribute read or an index judged by the value's type (``checkpoint_kinds``):
  on an array or number, a list, tuple or dict, a string, a module, one that only reads it (or
  updates a name the snapshots hold: ``L.append(v)``); on an object of a class of yours an
  attribute it holds plainly, or an index its class does not define (a property, a
  ``__getitem__``, ``__getattr__`` of yours is refused); a generator seeded with a literal in
  the body (``np.random.default_rng(42)``: made again, it draws the same numbers). On a value
  of unknown type they are refused: ``c.item()`` may be a method of yours named like an array's;
* a function of yours whose source srcad reads, checked as the loop is (with what is known of
  its arguments), when all it updates in place is values it made itself or its own arguments
  where srcad differentiates the call (its forward sweep runs on copies of them), never where
  srcad runs the call as written; a function with a derivative rule (``custom_vjp``,
  ``register_vjp``) is read the same way: the recomputation runs the function itself.

Refused: random draws, a method of an object srcad does not know the type of
(``counter.tick()``, ``c.item()``), an attribute read or index running code of yours, a
function srcad runs as written and cannot read, a method changing a global
(``HISTORY.append(v)``), a function of yours storing an attribute or updating a global or (run
as written) an argument; a builtin, a library function, an operator, iteration, a truth test
or formatting given an object of a class of yours that defines the special method it calls
(``float(S)``, ``np.asarray(S)``, ``S * x``, ``for r in S``), a converting builtin or NumPy
function (``float``, ``str``, ``print``, ``np.asarray``) given a value of unknown type, and
``operator.methodcaller``, and ``attrgetter``/``itemgetter`` given anything but arrays,
numbers, lists, dicts and strings. What no rule here sees is caught at run time
(``checkpointing.check_recomputed``). Only a loop srcad checkpoints is checked: in forward
mode, and where the loop's values carry no derivative, it runs once, as written.
"""
import functools
import operator

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from ..checkpointing import checkpointed
from .callees import Callee
from .checkpoint_helpers import answers_number, helper_updates, read_as_helper, where
from .checkpoint_kinds import (GENERATOR, SAFE, Kinds, Obj, attribute_problem, is_seeded_generator, item_problem,
                               special_problem)
from .checkpoint_problems import BEFORE_THE_LOOP, DRAW_BEFORE, IN_A_VARIABLE, PLAIN_LOOP, READ_BEFORE, Problem
from .fresh import (ARRAY_VIEW_METHODS, FRESH_METHODS, NO_EFFECT, effect_call, is_in, known_pure, module_of, only_logs,
                    scatter_add_target, updates_first_argument)
from .memory_values import bind_call
from .random_draws import DRAW_METHODS
from .records import record_fields
from .call_binding import user_function_call
from .shape_values import as_value

# Builtins that only read their arguments (``known_pure`` takes all of ``builtins``, which
# also holds ``next``, ``setattr``, ``exec``, ``open``).
_READING_BUILTINS = {abs, all, any, bool, callable, chr, complex, dict, divmod, enumerate, float, format, frozenset,
                     hash, int, isinstance, issubclass, len, list, max, min, ord, pow, range, repr, reversed, round,
                     set, slice, sorted, str, sum, tuple, type, zip}
# Methods of a list, dict, string or array that only read it, besides those srcad has rules for.
_READING_METHODS = {"get", "items", "values", "keys", "format", "join"}
# The methods of NumPy's random generators: on an object srcad does not know, the advice is
# the one for random draws.
_DRAWING_METHODS = {m for cls in (np.random.Generator, np.random.RandomState) for m in dir(cls) if not m.startswith("_")}
_RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)
# A library function taking one of these draws random numbers (from it, or NumPy's global state).
_RANDOM_PARAMETERS = {"random_state", "seed", "rng"}
# Library functions that call a function they are given (NumPy's, Python's, SciPy's solvers):
# what they change is what that function changes. (``sorted``, ``min``, ``max``: through ``key``.)
_CALLING = {np.vectorize, np.frompyfunc, np.apply_along_axis, np.apply_over_axes, np.piecewise, np.fromfunction,
            functools.reduce, functools.partial, map, filter}
_CALLING_BY_KEY = {sorted, min, max}
# Builtins and NumPy functions that turn a value into a number, a string or an array by its
# special methods (``__float__``, ``__str__``, ``__array__``): given a value srcad does not know
# the type of, they may run code of yours. (Any builtin or library function given an object of
# a class of yours defining such methods is refused; the others, ``len(data[t])``, are left to
# the check of each recomputed segment.)
_CONVERTING = {abs, bool, complex, float, format, hash, int, repr, round, str, print, np.asarray, np.array,
               np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.atleast_1d, np.atleast_2d, np.atleast_3d}
# Special methods the operators, iteration and truth tests call.
_OPERATOR_METHODS = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv",
                     gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow", gast.MatMult: "matmul",
                     gast.LShift: "lshift", gast.RShift: "rshift", gast.BitOr: "or", gast.BitXor: "xor",
                     gast.BitAnd: "and"}
_UNARY_METHODS = {gast.USub: {"__neg__"}, gast.UAdd: {"__pos__"}, gast.Invert: {"__invert__"},
                  gast.Not: {"__bool__", "__len__"}}
_COMPARING = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__", "__bool__"}
_ITERATING = {"__iter__", "__next__", "__getitem__", "__len__"}
_TRUTH = {"__bool__", "__len__"}
_FORMATTING = {"__format__", "__str__", "__repr__"}
_CALLING_MODULES = ("scipy.optimize", "scipy.integrate", "scipy.ndimage", "scipy.interpolate", "scipy.differentiate")

class _Body:
    """What checking a body needs: ``kinds`` of its values, the names it ``updates`` in place
    (the loop's: held by the snapshots; None in a function of yours, whose updates the memory
    analysis follows), ``active`` names (the loop's) and the ``helpers`` read so far."""

    def __init__(self, kinds, helpers, updated=None, active=None):
        self.kinds, self.helpers, self.updated, self.active = kinds, helpers, updated, active


def check_replayable(rv, loop, updated):
    """Refuse, at the user's line, a statement of the checkpointed ``loop``'s body (A-normal
    form) that may change state its snapshots do not hold (see the module doc). ``updated``:
    the names the body updates in place, which the snapshots hold; ``rv``: the reverse
    transform, whose ``active`` names tell which calls srcad differentiates."""
    stored = A.names_stored(rv.node)
    structures = {p: as_value(v) for p, v in (A.anno(rv.node, "param_specs") or {}).items()
                  if isinstance(v, (list, tuple)) and p not in stored}
    helpers = {}
    kinds = Kinds(rv.node, rv.source, rv.spec, rv.containers, A.anno(rv.node, "object_classes"), loop.body,
                  structures, numbers=rv.active,  # (what carries a derivative and is no list: an array, a number)
                  answers_number=functools.partial(answers_number, helpers))
    body = _Body(kinds, helpers, updated, rv.active)
    for s in A.every_statement(loop.body):
        try:
            _check_statement(s, body)
        except Problem as problem:
            raise rv.source.syntax_error(
                f"srcad does not checkpoint this loop: {problem.what}. The reverse sweep runs each segment of the "
                "loop again from a snapshot of the loop's own variables, which does not hold that state, so the "
                "recomputed steps would find it changed (and change it again): the gradient would be wrong. "
                f"{problem.advice[0].upper()}{problem.advice[1:]}", A.anno(s, "origin") or s) from None


def _check_statement(s, body):
    head = s.iter if isinstance(s, gast.For) else s.test if isinstance(s, (gast.If, gast.While)) else s
    nodes = list(A.walk(head))
    called = set()  # the dotted names of the functions called, the attributes naming methods
    for call in (n for n in nodes if isinstance(n, gast.Call)):
        callee = A.anno(call, "callee")
        called |= {id(call.func)} if callee is not None and callee.kind == "method" else {
            id(n) for n in A.walk(call.func)}
    for n in nodes:
        if isinstance(n, gast.Call):
            _check_call(s, n, body)
        elif isinstance(n, (gast.Attribute, gast.Subscript)) and id(n) not in called:
            _check_read(n, body.kinds)
    for operand, methods, what in _implicit_calls(s, nodes):
        kind = body.kinds.of(operand)
        problem = special_problem(kind.cls, methods) if isinstance(kind, Obj) else None
        if problem is not None:
            raise Problem(f"{what} {_named(operand)} runs code of yours ({problem}), which may change anything",
                           READ_BEFORE)


def _implicit_calls(s, nodes):
    """``(operand, the special methods Python calls on it, what calls them)`` for the operators,
    iteration, unpacking, truth tests and formatting of ``s`` (``nodes``: its head's nodes)."""
    if isinstance(s, gast.For):
        yield s.iter, _ITERATING, "iterating over"
    if isinstance(s, (gast.If, gast.While)):
        yield s.test, _TRUTH, "testing"
    if isinstance(s, gast.Assign) and isinstance(s.targets[0], (gast.Tuple, gast.List)):
        yield s.value, _ITERATING, "unpacking"
    if isinstance(s, gast.AugAssign) and type(s.op) in _OPERATOR_METHODS:
        name = _OPERATOR_METHODS[type(s.op)]
        for operand in (s.target, s.value):
            yield operand, {f"__{name}__", f"__r{name}__", f"__i{name}__"}, "an operator on"
    for n in nodes:
        if isinstance(n, gast.BinOp) and type(n.op) in _OPERATOR_METHODS:
            name = _OPERATOR_METHODS[type(n.op)]
            for operand in (n.left, n.right):
                yield operand, {f"__{name}__", f"__r{name}__"}, "an operator on"
        elif isinstance(n, gast.UnaryOp):
            yield n.operand, _UNARY_METHODS[type(n.op)], "an operator on"
        elif isinstance(n, gast.Compare):
            for operand in [n.left] + n.comparators:
                yield operand, _COMPARING | _ITERATING, "comparing"
        elif isinstance(n, gast.BoolOp):
            for operand in n.values:
                yield operand, _TRUTH, "testing"
        elif isinstance(n, gast.IfExp):
            yield n.test, _TRUTH, "testing"
        elif isinstance(n, gast.FormattedValue):
            yield n.value, _FORMATTING, "formatting"
        elif isinstance(n, gast.comprehension):
            yield n.iter, _ITERATING, "iterating over"
        elif isinstance(n, gast.Starred):
            yield n.value, _ITERATING, "unpacking"


def _check_read(n, kinds):
    """An attribute read or stored, an item read or stored: on a value of a class of yours it
    runs your code (a property, ``__getitem__``), which may change anything."""
    if isinstance(n, gast.Attribute) and not isinstance(n.ctx, gast.Load):
        raise Problem(f"it stores the attribute .{n.attr} of an object, which the snapshots do not hold",
                       f"compute what the loop needs from the object before the loop, or keep the value in a "
                       f"variable of the function, {PLAIN_LOOP}")
    kind = kinds.of(n.value)
    if kind in SAFE:
        return
    what = f"reading .{n.attr} of" if isinstance(n, gast.Attribute) else "indexing"
    if isinstance(kind, Obj):
        problem = attribute_problem(kind.cls, n.attr) if isinstance(n, gast.Attribute) else item_problem(
            kind.cls, "__getitem__" if isinstance(n.ctx, gast.Load) else "__setitem__")
        if problem is None:
            return
        raise Problem(f"{what} {_named(n.value)} runs code of yours ({problem}), which may change anything",
                       READ_BEFORE)
    raise Problem(f"{what} {_named(n.value)} may run code of yours (a property, __getitem__ of your class): srcad "
                   "does not know its type here", READ_BEFORE)


def _named(expr):
    text = A.to_source(expr).strip() if isinstance(expr, (gast.Name, gast.Attribute)) else ""
    return f"'{text}'" if text and not text.startswith("_") else "a value"


def _check_call(s, call, body):
    callee = A.anno(call, "callee")
    if _updates_through_a_name(call, callee):
        if callee.kind == "method" and body.kinds.of(call.func.value) not in SAFE:
            _check_method(call, callee.name, body.kinds)  # refused: not a list's, dict's or array's
        changed = call.func.value if callee.kind == "method" else (call.args or [None])[0]
        if body.updated is not None and not (isinstance(changed, gast.Name) and changed.id in body.updated):
            raise Problem(f"{_described(call, callee)} changes a value the snapshots do not hold", IN_A_VARIABLE)
        return
    updates = _call_updates(call, callee, body)
    if updates and body.updated is not None and not _differentiated(s, call, callee, body.active):
        param, arg = updates
        given = arg.id if isinstance(arg, gast.Name) else "x"
        which = f"'{given}'" + ("" if given == param else f" (its parameter '{param}')")
        raise Problem(
            f"{callee.name}(...) changes {which} in place, and srcad runs this call as written (it carries no "
            "derivative)",
            f"make the update in the loop itself ({given}.append(v), {given}[i] = v: the snapshots hold those), "
            f"or have {callee.name} return a new value, {PLAIN_LOOP}")


def _updates_through_a_name(call, callee):
    """An in-place method (``L.append(v)``, ``a.sort()``), ``np.copyto(a, b)``, ``np.add.at(a, i, v)``:
    a call updating its receiver or first argument, which the snapshots hold if it is a name
    the loop updates."""
    if callee is None:
        return False
    if callee.kind == "method":
        return bool(effect_call(callee))
    return callee.kind == "object" and (updates_first_argument(callee.obj) or scatter_add_target(call) is not None)


def _differentiated(s, call, callee, active):
    """Does srcad differentiate the call ``var = f(...)`` through ``f``'s forward sweep (``var``
    and an argument carrying derivatives), which runs on copies of what ``f`` updates?"""
    operands = call.args + [k.value for k in call.keywords]
    return (isinstance(s, gast.Assign) and s.value is call and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in active and user_function_call(callee)
            and any(isinstance(a, gast.Name) and a.id in active for a in operands))


def _call_updates(call, callee, body):
    """Raise ``Problem`` for a call that may change state no snapshot holds. For a function of
    yours that updates some of its parameters in place (srcad undoes that only where it
    differentiates the call): ``(one of them, the argument given for it)``; else None."""
    if callee is None or callee.kind in ("local", "parameter"):
        raise Problem(f"srcad cannot tell what the call of {callee.name if callee else 'this function'} changes",
                       f"call a function defined at the top level of a module by its name, {PLAIN_LOOP}")
    if callee.kind == "method":
        _check_method(call, callee.name, body.kinds)
        return None
    params = _object_updates(callee.obj, callee.name, body, call)
    if not params:
        return None
    param = sorted(params)[0]
    args = (bind_call(callee.obj, call) or {}).get(param) or [None]
    return param, args[0]


def _check_method(call, name, kinds):
    """A method runs code of the receiver's type: accepted where that is an array, a number, a
    list, tuple or dict, a string (reading it), or a generator the body seeds itself."""
    receiver = call.func.value
    kind = kinds.of(receiver)
    if kind == GENERATOR:
        return
    if kind in SAFE and (name in registry.METHODS or name in registry.NONDIFF_METHODS or name in FRESH_METHODS
                         or name in ARRAY_VIEW_METHODS or name in _READING_METHODS):
        return
    if name in _DRAWING_METHODS or isinstance(kind, Obj) and issubclass(kind.cls, _RANDOM_STATES):
        raise Problem(f"the call .{name}() may draw random numbers, and the generator's state is not in the "
                       "snapshots (the recomputed steps would draw other numbers)", DRAW_BEFORE)
    if kind in SAFE:
        raise Problem(f"the call .{name}() may change the object it is called on", BEFORE_THE_LOOP)
    raise Problem(f"the call .{name}() on {_named(receiver)} may change the object it is called on (srcad does "
                   "not know its type here: a method of your class named like an array's runs your code; a "
                   "counter, a random generator, a cache)", BEFORE_THE_LOOP)


def _object_updates(obj, name, body, call=None):
    """Raise ``Problem`` for a call of ``obj`` that may change state no snapshot holds; the
    parameters a function of yours updates in place (for the caller to judge), else None."""
    if call is not None and not user_function_call(Callee("object", obj=obj, name=name)) and \
            module_of(obj).split(".")[0] != "srcad":  # (srcad's helpers in the code it made only read)
        _check_special_methods(obj, name, call, body.kinds)
    if obj is checkpointed or is_in(obj, NO_EFFECT) or only_logs(obj) or record_fields(obj) is not None:
        return None
    if module_of(obj).split(".")[0] == "srcad" and known_pure(obj):
        return None  # srcad's helpers (in_place_result) in the code it made of a function of yours
    if call is not None and is_seeded_generator(call):
        return None  # np.random.default_rng(42): made again, it draws the same numbers
    if call is not None and is_in(obj, DRAW_METHODS) and call.args and body.kinds.of(call.args[0]) == GENERATOR:
        return None  # rng.standard_normal(...) (``random_draws``) of such a generator, as ``_check_method`` says
    if _draws(obj, call):
        raise Problem(f"{name}(...) draws random numbers, and the generator's state is not in the snapshots (the "
                       "recomputed steps would draw other numbers)", DRAW_BEFORE)
    callee = Callee("object", obj=obj, name=name)
    if effect_call(callee):  # HISTORY.append of a list of the module
        raise Problem(f"{name}(...) changes a list, dict or set of your module, which the snapshots do not hold",
                       IN_A_VARIABLE)
    if read_as_helper(callee):
        return helper_updates(obj, name, body, call)
    if isinstance(obj, np.vectorize):
        return _object_updates(obj.pyfunc, f"{name}, made by np.vectorize from {obj.pyfunc.__name__},", body)
    if isinstance(obj, np.ufunc) and obj.__name__.endswith("(vectorized)"):
        raise Problem(f"{name}(...) is made by np.frompyfunc, which calls a function srcad cannot see",
                       BEFORE_THE_LOOP)
    if isinstance(obj, type) and issubclass(obj, BaseException) and module_of(obj) == "builtins":
        return None  # raise ValueError(...) in a check: making the exception changes nothing
    if is_in(obj, _READING_BUILTINS) or (known_pure(obj) and module_of(obj) != "builtins"):
        if call is not None:
            _check_given_functions(obj, name, call, body)
        return None
    raise Problem(f"srcad runs {name}(...) as written and cannot tell what it changes (it knows NumPy, math and "
                   "the functions of yours whose source it reads)", BEFORE_THE_LOOP)


def _check_special_methods(obj, name, call, kinds):
    """A builtin or a library function given an object calls its special methods (``float(S)``:
    ``S.__float__``; ``print(S)``: ``S.__str__``; ``np.asarray(S)``: ``S.__array__``; ``np.sum(S)``:
    ``S.sum``); ``operator``'s ``methodcaller``, ``attrgetter``, ``itemgetter`` call a method, read
    an attribute, an item. Refused where that may be code of yours: an object of your class
    that defines it, or (converting it) a value srcad does not know the type of; a
    ``methodcaller`` always (its method may change any object)."""
    getter = type(obj) if type(obj) in (operator.methodcaller, operator.attrgetter, operator.itemgetter) else None
    converts = is_in(obj, _CONVERTING) or isinstance(obj, type) and issubclass(obj, np.generic)
    for arg in list(call.args) + [k.value for k in call.keywords]:
        arg = arg.value if isinstance(arg, gast.Starred) else arg
        kind = kinds.of(arg)
        if getter is operator.methodcaller or getter is not None and kind not in SAFE:
            raise Problem(f"{name}(...), an operator.{getter.__name__}, given {_named(arg)} calls a method or reads "
                           "an attribute or item of it, which may run code of yours or change it",
                           f"call the method or read the value in the loop itself, {PLAIN_LOOP}")
        problem = special_problem(kind.cls) if isinstance(kind, Obj) else None
        if problem is not None:
            raise Problem(f"{name}(...) given {_named(arg)} runs code of yours ({problem}), which may change "
                           "anything", READ_BEFORE)
        if kind is None and converts:
            raise Problem(f"{name}(...) given {_named(arg)} may run code of yours (__float__, __str__, __array__ "
                           "of your class): srcad does not know its type here", READ_BEFORE)


def _check_given_functions(obj, name, call, body):
    """A library function calls the functions it is given (``np.apply_along_axis(f, ...)``,
    ``scipy.optimize.minimize(f, ...)``): each is judged as the loop's own calls are; where
    srcad cannot tell which function a value holds, refused."""
    calling = is_in(obj, _CALLING) or module_of(obj).startswith(_CALLING_MODULES)
    by_key = is_in(obj, _CALLING_BY_KEY)
    given = [k.value for k in call.keywords if not by_key or k.arg == "key"] + ([] if by_key else call.args)
    for arg in given:
        kind = body.kinds.of(arg)
        if isinstance(kind, Obj) and kind.value is not None and callable(kind.value) \
                and not isinstance(kind.value, type):
            _object_updates(kind.value, f"{name.rsplit('.', 1)[-1]}(...) calls {_named(arg)}, which", body)
        elif (calling or by_key) and kind not in SAFE and not isinstance(kind, Obj):
            raise Problem(f"{name}(...) calls the function it is given, and srcad cannot tell which function "
                           f"{_named(arg)} is", f"pass a function defined at the top level of a module by its name, "
                           f"{PLAIN_LOOP}")


def _draws(obj, call=None):
    """A function of NumPy's random module or Python's, a method of a generator, a SciPy
    distribution's ``rvs``, a function taking ``random_state``, ``seed`` or ``rng``."""
    import inspect

    module = module_of(obj)
    if (module.startswith("numpy.random") or module.split(".")[0] in ("random", "secrets")
            or isinstance(getattr(obj, "__self__", None), _RANDOM_STATES) or getattr(obj, "__name__", "") == "rvs"):
        return True
    if call is not None and any(k.arg in _RANDOM_PARAMETERS for k in call.keywords):
        return True
    try:
        return bool(_RANDOM_PARAMETERS & set(inspect.signature(obj).parameters))
    except (TypeError, ValueError):
        return False


def _described(call, callee):
    return f"the call .{callee.name}()" if callee.kind == "method" else f"{callee.name}(...)"
