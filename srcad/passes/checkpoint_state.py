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
  (``fresh.known_pure``), random draws excepted; builtins that only read theirs; record classes;
* ``print`` and logging: they run again when a segment is recomputed, so their output repeats;
* a method of a list, dict or array that only reads it, or that updates a name the snapshots
  hold (``L.append(v)``);
* a function of yours whose source srcad reads, when all it updates in place is values it
  made itself (checked the same way through the functions it calls) or its own arguments where
  srcad differentiates the call (its forward sweep runs on copies of them), never where srcad
  runs the call as written;
* a function of yours with a derivative rule (``register_vjp``): the rule declares it a
  function of its arguments.

Refused: random draws (``rng.standard_normal()``, ``np.random.randn()``), a method of an object
srcad does not know (``counter.tick()``), a function srcad runs as written and cannot read, a
method changing a global (``HISTORY.append(v)``), a function of yours storing an attribute or
updating a global or (run as written) an argument. Only a loop srcad checkpoints is checked: in
forward mode, and where the loop's values carry no derivative, it runs once, as written.
"""
import gast
import numpy as np

from .. import astutil as A
from .. import registry
from ..checkpointing import checkpointed
from ..errors import SrcadError
from ..source import capture
from .callees import Callee, parameter_names
from .fresh import (ARRAY_VIEW_METHODS, FRESH_METHODS, NO_EFFECT, effect_call, is_in, known_pure, module_of, only_logs,
                    scatter_add_target, updates_first_argument)
from .memory import updated_outside
from .memory_values import bind_call
from .normalize import normalize
from .records import record_fields
from .resolve_calls import resolve_calls
from .reverse_calls import is_python_function, user_function_call

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

_PLAIN_LOOP = "or use a plain loop (drop srcad.checkpointed)"
_DRAW_BEFORE = ("draw the numbers before the loop (noise = rng.standard_normal((n, ...))) and index them in it "
                f"(noise[t]), {_PLAIN_LOOP}")
_BEFORE_THE_LOOP = f"compute what the loop needs from it before the loop, {_PLAIN_LOOP}"
_IN_A_VARIABLE = f"keep the value in a variable of the function and update it there, {_PLAIN_LOOP}"


class _Problem(Exception):
    """State a call or a store may change that no snapshot holds: ``what`` (a clause naming
    it) and ``advice`` (what to write instead)."""

    def __init__(self, what, advice):
        super().__init__(what)
        self.what, self.advice = what, advice


def check_replayable(rv, loop, updated):
    """Refuse, at the user's line, a statement of the checkpointed ``loop``'s body (A-normal
    form) that may change state its snapshots do not hold (see the module doc). ``updated``:
    the names the body updates in place, which the snapshots hold; ``rv``: the reverse
    transform, whose ``active`` names tell which calls srcad differentiates."""
    helpers = {}  # a function of yours -> the parameters it updates, or its _Problem
    for s in A.every_statement(loop.body):
        try:
            _check_statement(s, rv.active, updated, helpers)
        except _Problem as problem:
            raise rv.source.syntax_error(
                f"srcad does not checkpoint this loop: {problem.what}. The reverse sweep runs each segment of the "
                "loop again from a snapshot of the loop's own variables, which does not hold that state, so the "
                "recomputed steps would find it changed (and change it again): the gradient would be wrong. "
                f"{problem.advice[0].upper()}{problem.advice[1:]}", A.anno(s, "origin") or s) from None


def _check_statement(s, active, updated, helpers):
    head = s.iter if isinstance(s, gast.For) else s.test if isinstance(s, (gast.If, gast.While)) else s
    for call in (n for n in A.walk(head) if isinstance(n, gast.Call)):
        callee = A.anno(call, "callee")
        if _updates_through_a_name(call, callee):
            changed = call.func.value if callee.kind == "method" else (call.args or [None])[0]
            if not (isinstance(changed, gast.Name) and changed.id in updated):
                raise _Problem(f"{_described(call, callee)} changes a value the snapshots do not hold",
                               _IN_A_VARIABLE)
            continue
        updates = _call_updates(call, callee, helpers)
        if updates and not _differentiated(s, call, callee, active):
            param, arg = updates
            given = arg.id if isinstance(arg, gast.Name) else "x"
            which = f"'{given}'" + ("" if given == param else f" (its parameter '{param}')")
            raise _Problem(
                f"{callee.name}(...) changes {which} in place, and srcad runs this call as written (it carries no "
                "derivative)",
                f"make the update in the loop itself ({given}.append(v), {given}[i] = v: the snapshots hold those), "
                f"or have {callee.name} return a new value, {_PLAIN_LOOP}")


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


def _call_updates(call, callee, helpers):
    """Raise ``_Problem`` for a call that may change state no snapshot holds. For a function of
    yours that updates some of its parameters in place (srcad undoes that only where it
    differentiates the call): ``(one of them, the argument given for it)``; else None."""
    if callee is None or callee.kind in ("local", "parameter"):
        raise _Problem(f"srcad cannot tell what the call of {callee.name if callee else 'this function'} changes",
                       f"call a function defined at the top level of a module by its name, {_PLAIN_LOOP}")
    if callee.kind == "method":
        _check_method(callee.name)
        return None
    params = _object_updates(callee.obj, callee.name, helpers)
    if not params:
        return None
    param = sorted(params)[0]
    args = (bind_call(callee.obj, call) or {}).get(param) or [None]
    return param, args[0]


def _check_method(name):
    if name in registry.METHODS or name in registry.NONDIFF_METHODS or name in FRESH_METHODS \
            or name in ARRAY_VIEW_METHODS or name in _READING_METHODS:
        return
    if name in _DRAWING_METHODS:
        raise _Problem(f"the call .{name}() may draw random numbers, and the generator's state is not in the "
                       "snapshots (the recomputed steps would draw other numbers)", _DRAW_BEFORE)
    raise _Problem(f"the call .{name}() may change the object it is called on (srcad does not know its type: a "
                   "counter, a random generator, a cache)", _BEFORE_THE_LOOP)


def _object_updates(obj, name, helpers):
    """Raise ``_Problem`` for a call of ``obj`` that may change state no snapshot holds; the
    parameters a function of yours updates in place (for the caller to judge), else None."""
    if obj is checkpointed or is_in(obj, NO_EFFECT) or only_logs(obj) or record_fields(obj) is not None:
        return None
    if _draws(obj):
        raise _Problem(f"{name}(...) draws random numbers, and the generator's state is not in the snapshots (the "
                       "recomputed steps would draw other numbers)", _DRAW_BEFORE)
    callee = Callee("object", obj=obj, name=name)
    if effect_call(callee):  # HISTORY.append of a list of the module
        raise _Problem(f"{name}(...) changes a list, dict or set of your module, which the snapshots do not hold",
                       _IN_A_VARIABLE)
    if user_function_call(callee):
        return _helper_updates(obj, name, helpers)
    if is_python_function(obj) and registry.lookup(registry.VJP, obj) is not None:
        return None  # its rule declares it a function of its arguments
    if is_in(obj, _READING_BUILTINS) or (known_pure(obj) and module_of(obj) != "builtins"):
        return None
    raise _Problem(f"srcad runs {name}(...) as written and cannot tell what it changes (it knows NumPy, math and "
                   "the functions of yours whose source it reads)", _BEFORE_THE_LOOP)


def _draws(obj):
    """A function of NumPy's random module or Python's, or a method of a generator."""
    module = module_of(obj)
    return (module.startswith("numpy.random") or module.split(".")[0] in ("random", "secrets")
            or isinstance(getattr(obj, "__self__", None), _RANDOM_STATES))


def _helper_updates(obj, name, helpers):
    """The parameters the function of yours ``obj`` updates in place; raise ``_Problem`` if it
    may change anything else (each function read once, the functions it calls with it)."""
    fn = getattr(obj, "__srcad_function__", obj)
    if fn not in helpers:
        helpers[fn] = None  # a recursive call: the rest of the function answers for it
        try:
            helpers[fn] = _read_helper(fn, helpers)
        except _Problem as problem:
            helpers[fn] = problem
    found = helpers[fn]
    if isinstance(found, _Problem):
        raise _Problem(f"{name}(...) {found.what}", found.advice)
    return found


def _read_helper(fn, helpers):
    """The parameters ``fn`` updates in place: its calls are checked as the loop's are (an update
    through a name is left to the memory analysis, which follows it to what it reaches), and an
    attribute store or an update reaching a global is refused."""
    try:
        source = capture(fn)
        node = resolve_calls(source.node, source)
    except (SrcadError, SyntaxError, OSError, TypeError):
        raise _Problem("is a function whose source srcad cannot read, so it cannot tell what it changes",
                       _BEFORE_THE_LOOP) from None
    for n in A.walk(node):
        where = f"{source.filename}:{getattr(n, 'lineno', node.lineno)}"
        if isinstance(n, gast.Attribute) and isinstance(n.ctx, gast.Store):
            raise _Problem(f"stores the attribute .{n.attr} of an object (at {where})",
                           f"compute what the loop needs from the object before the loop, or keep the value in a "
                           f"variable of the function, {_PLAIN_LOOP}")
        callee = A.anno(n, "callee") if isinstance(n, gast.Call) else None
        if isinstance(n, gast.Call) and not _updates_through_a_name(n, callee):
            try:
                _call_updates(n, callee, helpers)  # what a callee updates in its arguments: read below
            except _Problem as problem:
                raise _Problem(f"reaches {where}, where {problem.what}", problem.advice) from None
    try:
        body = normalize(node, source).body
    except SrcadError:
        raise _Problem("is a function srcad cannot read, so it cannot tell what it changes", _BEFORE_THE_LOOP) from None
    reached = updated_outside(body, sorted(parameter_names(node)))
    globals_ = sorted(owner for kind, owner in reached if kind == "global")
    if globals_:
        raise _Problem(f"updates '{globals_[0]}', a global, in place ({source.filename}:{node.lineno})",
                       _IN_A_VARIABLE)
    return {owner for kind, owner in reached if kind == "arg"}


def _described(call, callee):
    return f"the call .{callee.name}()" if callee.kind == "method" else f"{callee.name}(...)"
