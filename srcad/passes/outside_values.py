"""Values srcad does not compute: where they come from in a function, and which of them may
reach an operator srcad differentiates.

srcad knows the type of what it computes: an argument passed the allowlist of
``srcad.arguments``, the result of an operation it has a rule for. A value is made outside
where srcad reads it from somewhere else: an attribute of an object, an item of a global or
of an argument it does not differentiate, the result of a call made without derivative (a
function of yours run as written, a library call without a rule), an item of a loop over
such a value. ``passes.complex_values`` checks such values at run time where they are made:
real where they may reach a rule right for real values only, a number or a NumPy array where
they may reach an operator (``untyped_operands``).

>>> import gast
>>> s = gast.parse("y = S * x").body[0]
>>> sorted(operands(s)), target(s)
(['S', 'x'], {'y'})
"""
import builtins
import types

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from ..code_reading import installed_object, not_yours
from .call_options import call_argument
from .callees import Callee
from .fresh import CONTAINER_BUILDERS, PLAIN_ATTRIBUTES, is_in, is_ufunc
from .operators import operator_method
from .random_draws import DRAW_METHODS

#: calls whose result is a number or a range whatever their operands (``len(self.layers)``):
#: what they read reaches no operator through them
# (a generator's draws: NumPy's arrays and floats, whatever the generator object is)
_FIXED_RESULTS = {builtins.int, builtins.float, builtins.bool, builtins.len, builtins.range, builtins.isinstance,
                  np.shape, np.ndim, np.size} | DRAW_METHODS


def made_outside(statements, active, local, source, fixed_real, computed):
    """name -> the statement that binds it to a value srcad does not compute: an attribute of
    an object, an item of a global's (``COEF[0]``, which may change in place after the code is
    made), the result of a call for which ``computed(obj)`` is false (a function of yours run
    as it is). ``fixed_real``: parameters whose transpose (``H.T``) is a real array."""
    found = {}
    for s in statements:
        bound = statements.bound(s)
        if bound is None or bound & active or not isinstance(s, gast.Assign):
            continue
        rhs = s.value
        if isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name) and (
                rhs.value.id not in local and not code_value(source, rhs.value.id) or rhs.value.id in found):
            found.update(dict.fromkeys(bound, s))
        elif isinstance(rhs, gast.Attribute) and rhs.attr not in PLAIN_ATTRIBUTES | {"real", "imag"} \
                and not _module_constant(rhs, source, local) and not _real_transpose(rhs, fixed_real):
            found.update(dict.fromkeys(bound, s))
        elif isinstance(rhs, gast.Call):
            callee = A.anno(rhs, "callee")
            if not computed(callee.obj if callee is not None and callee.kind == "object" else None):
                found.update(dict.fromkeys(bound, s))
    return found


def untyped_operands(statements, active, varied, params, outside, containers=(), proven=()):
    """``(checks, at_entry)``: ``checks`` maps id(statement) -> the names it binds, checked
    where it binds them: a value srcad does not type (one of ``outside``; an item of a
    parameter not in ``varied`` or ``proven``, of a global in ``containers``, of one of those or of a
    sequence built of one, as a loop's items are) that may reach an operand of an operator or
    a ufunc carrying a derivative, passed on by the statements between. Those that read it (an
    attribute, an item, a call run as written) make another value: each is checked itself,
    and what holds it (``self.layers``, whose items may be functions) is not; an operand read
    as an attribute, or as an item of a list, tuple or dict the function builds, is checked
    where it is read, never the object or the items it is read off. ``at_entry``: the
    parameters not in ``varied`` or ``proven`` (arrays, by the code's key) that are such an
    operand themselves, or bound to one by name (a default left out of the call: ``ww * x``),
    checked when the function starts."""
    made = {id(s): s for s in outside.values()}
    untyped = set(outside) | (set(params) - set(varied) - set(proven)) | set(containers)
    bound_of = {id(s): statements.bound(s) or frozenset() for s in statements}  # (each found once, read every round)
    arithmetic = {id(s): _arithmetic_operands(s, statements) for s in statements}
    fixed = {id(s) for s in statements if _fixed_result(s)}
    changed = True
    while changed:  # what a seed binds, its aliases, and sequences built of one (list(self.layers), zip(...)) hold untyped items
        changed = False
        for s in statements:
            bound = bound_of[id(s)]
            if id(s) not in made and _reads_item(s, untyped):
                made[id(s)] = s
            alias = isinstance(s, gast.Assign) and isinstance(s.value, gast.Name) and s.value.id in untyped
            if (id(s) in made or alias or _builds_sequence(s) and statements.read(s) & untyped) \
                    and not bound <= untyped:
                untyped |= bound
                changed = True
    reaching = set()
    for s in statements:
        bound = bound_of[id(s)]
        if bound & active:
            reaching |= arithmetic[id(s)]
    sequences = {n for s in statements if isinstance(s, gast.Assign) and (
        isinstance(s.value, (gast.List, gast.Tuple, gast.Dict)) or _builds_sequence(s)) for n in bound_of[id(s)]}
    direct = set(reaching)  # operands themselves, and what is bound to one by name (y = p)
    copies = [s for s in statements if isinstance(s, gast.Assign) and isinstance(s.value, gast.Name)]
    changed = True
    while changed:
        changed = False
        for s in copies:
            if bound_of[id(s)] & direct and s.value.id not in direct:
                direct.add(s.value.id)
                changed = True
    passed_on = {}
    changed = True
    while changed:
        changed = False
        for s in statements:
            bound = bound_of[id(s)]
            if id(s) in made or not bound & reaching or id(s) in fixed:
                continue
            if (_attribute_read(s) or _item_read(s, sequences)) and bound & direct:
                made[id(s)] = s  # an operand itself: its value is checked, not what holds it
                changed = True
                continue
            if _shape_query(s, untyped):  # (a sparse matrix's shape: integers, its operators not NumPy's)
                made[id(s)] = s  # its value is checked, not the object it describes
                changed = True
                continue
            if id(s) not in passed_on:
                passed_on[id(s)] = _passed_on(s, statements)
            new = passed_on[id(s)] - reaching
            if new:
                reaching |= new
                changed = True
    # an operand bound from such a value by anything but arithmetic (k = w, w if c else 1.0,
    # np.array([w, w]), copy.deepcopy(w), arr[:, None] of one) is checked where it is bound:
    # arithmetic on checked operands makes numbers, so it passes nothing on
    tainted = set(untyped)
    passing = [s for s in statements if bound_of[id(s)] and id(s) not in fixed and not arithmetic[id(s)]]
    changed = True
    while changed:
        changed = False
        for s in passing:
            bound = bound_of[id(s)]
            if not bound <= tainted and statements.read(s) & tainted:
                tainted |= bound
                changed = True
    for s in passing:
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and bound_of[id(s)] & direct & tainted
                and id(s) not in made):
            made[id(s)] = s
    checks = {i: bound_of[i] & reaching for i in made if bound_of[i] & reaching}
    return checks, sorted(direct & (set(params) - set(varied) - set(proven)))


def _item_read(s, sequences):
    """``y = c[k]`` of a list, tuple or dict the function builds (``sequences``): which item
    it reads is not known, so its value is checked, not every item put in ``c``."""
    return (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Subscript)
            and isinstance(s.value.value, gast.Name) and s.value.value.id in sequences)


def _attribute_read(s):
    """``y = obj.attr`` of an attribute other than an array's transpose or parts (whose type
    is the array's: the array is checked) or its shape, size or dtype."""
    return (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Attribute)
            and s.value.attr not in PLAIN_ATTRIBUTES | {"T", "mT", "real", "imag"})


def _shape_query(s, untyped):
    """``y = v.shape`` (or ``ndim``, ``size``) of a value in ``untyped``."""
    return (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Attribute)
            and s.value.attr in ("shape", "ndim", "size") and isinstance(s.value.value, gast.Name)
            and s.value.value.id in untyped)


def _reads_item(s, untyped):
    """Does ``s`` bind an item of a value in ``untyped`` (``y = c[k]``; a loop over ``c`` reads
    its items so: ``passes.loops``)?"""
    return (isinstance(s, gast.Assign) and isinstance(s.value, gast.Subscript)
            and isinstance(s.value.value, gast.Name) and s.value.value.id in untyped)


def _builds_sequence(s):
    rhs = s.value if isinstance(s, gast.Assign) else None
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    return callee is not None and callee.kind == "object" and is_in(callee.obj, CONTAINER_BUILDERS)


def _arithmetic_operands(s, statements):
    """Names an operator statement (``y = a * b``) or a ufunc call (``np.multiply(a, b)``,
    its positional operands) computes with."""
    if operator_method(s) is not None:
        return statements.read(s)
    rhs = s.value if isinstance(s, gast.Assign) else None
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    if callee is not None and callee.kind == "object" and is_ufunc(callee.obj):
        return set().union(*(A.names_read(a) for a in rhs.args))
    return set()


def _passed_on(s, statements):
    """Names whose values may make the type of what ``s`` binds: not an index (``x[i]``), nor
    what a function of yours is given (srcad computes its result: values it makes are checked
    in its own code) or a method of yours is called on."""
    if not isinstance(s, gast.Assign):
        return statements.read(s)
    rhs = s.value.value if isinstance(s.value, (gast.Subscript, gast.Attribute)) else s.value
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    if callee is not None and not (callee.kind == "object" and installed_object(callee.obj)
                                   or callee.kind == "method" and callee.name in registry.METHODS):
        return set()
    return _values_read(rhs)


def _fixed_result(s):
    rhs = s.value if isinstance(s, gast.Assign) else None
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    return callee is not None and callee.kind == "object" and (
        is_in(callee.obj, _FIXED_RESULTS) or is_in(callee.obj, registry.CHECKED_OPERANDS))


def unknown_dtypes(statements, source, local, params, tracked):
    """The statements ``y = call(...)`` whose call is given a dtype srcad cannot read when it
    makes the code: only a literal, a local name bound to literals or to ``v.dtype`` (complex
    where ``v`` may be), ``float``/``int``/``bool`` and a library's type (``np.float64``) are
    read now; a parameter, a global of yours (rebound later), an argument's attribute are not."""
    bindings = {}
    for s in statements:
        for name in statements.bound(s) or ():
            one = isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            bindings.setdefault(name, []).append(s.value if one else None)

    def known(d):
        if isinstance(d, gast.Constant):
            return True
        if isinstance(d, gast.Attribute):  # np.float64; v.dtype of a value srcad computes (complex where v may be)
            return (d.attr == "dtype" and isinstance(d.value, gast.Name) and d.value.id in tracked
                    or library_module(d.value, source, local) is not None)
        if not isinstance(d, gast.Name) or d.id in params:
            return False
        if d.id in local:
            return all(isinstance(v, gast.Constant) or isinstance(v, gast.Attribute) and known(v)
                       for v in bindings.get(d.id, [None]))
        return d.id in ("float", "int", "bool") and d.id not in source.globals and d.id not in source.closure

    found = []
    for s in statements:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call):
            dtype = call_argument(s.value, "dtype") if A.anno(s.value, "callee") is not None else None
            if dtype is not None and not known(dtype) or any(k.arg is None for k in s.value.keywords):
                found.append(s)  # (**options may hold a dtype)
    return found


def unverified(statements, active, local, source, outside):
    """Names an active statement reads whose values srcad does not compute: globals, and the
    names ``outside`` binds (attributes of objects, results of calls made without
    derivative)."""
    read = set()
    for s in statements:
        bound = statements.bound(s)
        if bound is not None and bound & active:
            read |= statements.read(s)
    return {n: outside[n].value if n in outside else A.load(n)
            for n in read if n not in active and (n in outside or n not in local and not code_value(source, n))}


def _real_transpose(rhs, fixed_real):
    """``H.T`` (or ``H.mT``) of a parameter in ``fixed_real``: NumPy's view of a real array."""
    return rhs.attr in ("T", "mT") and isinstance(rhs.value, gast.Name) and rhs.value.id in fixed_real


def code_value(source, name):
    """Does a global or closure name denote a module, class or function (never a value)?"""
    try:
        value = source.lookup(name)
        return isinstance(value, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType))
    except Exception:  # (no such name; a weak proxy whose object is gone)
        return False


def _module_constant(rhs, source, local):
    """``np.pi``, ``math.e``: a real number an installed library's module defines. A module of
    yours may rebind its attribute (``cfg.c = 1j``) after the code is made, which nothing
    would notice: its value is checked at each call, as a global's is."""
    owner = library_module(rhs.value, source, local)
    return owner is not None and isinstance(getattr(owner, rhs.attr, None), (float, int))


def library_module(atom, source, local):
    """The installed or built-in module ``atom`` names (``np``, ``math``), else None."""
    if not isinstance(atom, gast.Name) or atom.id in local:
        return None
    try:
        owner = source.lookup(atom.id)
    except Exception:
        return None
    if isinstance(owner, types.ModuleType) and not_yours(owner.__name__, getattr(owner, "__file__", None)):
        return owner
    return None


class Statements(list):
    """Statements, with what each binds (``target``) and computes with (``operands``) found
    once: the checks reading them ask again and again (fixpoints) and change none meanwhile.
    The sets are frozen: every reader shares them."""

    def __init__(self, statements):
        super().__init__(statements)
        self._bound = {id(s): None if bound is None else frozenset(bound)
                       for s in self for bound in (target(s),)}
        self._read = {id(s): frozenset(operands(s)) for s in self}

    def bound(self, s):
        return self._bound[id(s)]

    def read(self, s):
        return self._read[id(s)]


def target(s):
    """Names a simple statement binds (None for other statements)."""
    if isinstance(s, gast.Assign):
        t = s.targets[0]
        if isinstance(t, gast.Subscript):
            return {t.value.id} if isinstance(t.value, gast.Name) else None
        return A.names_stored(t)
    if isinstance(s, gast.For):
        return A.names_stored(s.target)
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
        callee = A.anno(s.value, "callee")
        if callee is not None and callee.kind == "method" and isinstance(s.value.func.value, gast.Name):
            return {s.value.func.value.id}
    return None


def operands(s):
    """Names whose values the statement computes with (not the function a call names)."""
    if isinstance(s, gast.For):
        return A.names_read(s.iter)
    if isinstance(s, gast.Assign):
        t = s.targets[0]
        return _values_read(s.value) | (A.names_read(t.slice) if isinstance(t, gast.Subscript) else set())
    if isinstance(s, gast.Expr):
        return _values_read(s.value)
    return A.names_read(s)


def _values_read(rhs):
    if not isinstance(rhs, gast.Call):
        return A.names_read(rhs)
    names = set()
    for a in list(rhs.args) + [k.value for k in rhs.keywords]:
        names |= A.names_read(a)
    callee = A.anno(rhs, "callee")
    if callee is not None and callee.kind == "method":
        names |= A.names_read(rhs.func.value)
    return names


def runtime_check(check, args, ref, at):
    """The statement ``check(*args)``, a check of ``runtime`` (named in generated code by
    ``ref(name, obj)``), placed at ``at``'s line and tied to the user's line it stands for."""
    call = gast.Call(func=A.load(ref(check.__name__, check)), args=args, keywords=[])
    A.set_anno(call, "callee", Callee("object", obj=check, name=check.__name__))
    statement = gast.copy_location(gast.Expr(value=call), at)
    if A.anno(at, "origin") is not None:
        A.set_anno(statement, "origin", A.anno(at, "origin"))
    return statement
