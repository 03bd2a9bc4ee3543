"""Operators on objects of yours: refuse an operator whose derivative srcad would take as the
number's or the array's where an operand's class defines that operator itself.

srcad's rules for ``*``, ``+``, ``@``, ``-x``... are the derivatives of arithmetic on numbers
and arrays. An object of a class of yours with its own ``__mul__`` (a schedule, a linear
operator) makes ``S * x`` something else, and the rule's ``d[x] += d[y] * S`` calls that
method again on the cotangent: a plausible wrong gradient. Guarantee: afterwards, every
operator statement that carries a derivative and reads a global or closure value whose class
(not a library's) defines the operator, or its reflected or in-place form, has raised
``SrcadSyntaxError`` at the user's line, as has one reading a parameter given an object of
such a class, or an attribute of an argument's object holding one (``self.sched``: the code is
made for the classes of its arguments' objects and of those they hold, ``param_classes``), and
an item ``s[i]`` of such a parameter or attribute whose class defines ``__getitem__`` (a
dataclass's derivative is by field, not by item).
Values srcad does not type when it makes the code (an item of a container, an attribute of a
global, a helper's result) are checked when the function runs (``passes.outside_values``).

>>> import gast
>>> [operator_method(gast.parse(text).body[0]) for text in ("y = S * x", "y = -x", "y = f(x)")]
['mul', 'neg', None]
"""
import collections
import dataclasses

import gast

from .. import astutil as A
from ..code_reading import defines_operator, installed_class
from ..errors import UnsupportedCaseError
from ..runtime import numeric_constant
from .callees import dotted

_METHODS = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv", gast.FloorDiv: "floordiv",
            gast.Mod: "mod", gast.Pow: "pow", gast.MatMult: "matmul", gast.USub: "neg", gast.UAdd: "pos"}


def check_operators(node, source, param_classes=()):
    """Refuse operator statements on objects of yours (see the module doc); ``param_classes``:
    ``(parameter, class)`` of the arguments the code is made for that are objects of yours."""
    active = A.anno(node, "active") or set()
    local = A.names_stored(node) | {a.id for a in node.args.args}
    param_classes = {name: cls for name, cls in param_classes if isinstance(cls, type)}  # (not a function held)
    classes = {name: (name, cls) for name, cls in param_classes.items()}
    classes.update(_held_objects(node, param_classes))
    for s in A.walk_statements(node.body):
        method = operator_method(s)
        item_of = classes.get(_item_of_name(s))
        if method is None and item_of is not None and _record_class(item_of[1]) and A.names_stored(s.targets[0]) & active:
            _refuse_defined(source, *item_of, "getitem", s)  # (a record's derivative is by field, not by item)
        if method is None or not A.names_stored(s.targets[0]) & active:
            continue
        for name in sorted(_operands(s)):
            if name in classes:
                _refuse_defined(source, *classes[name], method, s)
            elif name not in local:
                try:
                    value = source.lookup(name)
                except KeyError:
                    continue
                _refuse_defined(source, name, type(value), method, s)
                _refuse_unlisted(source, name, value, s)
    return node


def _refuse_unlisted(source, name, value, s):
    """A global or closure value an operator reads, as it is now, must be one srcad's rules are
    right for (the allowlist of ``runtime.numeric_constant``: no ``np.matrix``, no object of an
    installed library's class without NumPy's protocols)."""
    try:
        numeric_constant(value, f"'{name}'")
    except UnsupportedCaseError as exc:
        raise source.syntax_error(str(exc), A.anno(s, "origin") or s) from None


def _held_objects(node, param_classes):
    """name -> (``"self.sched"``, class) for each name bound once, to an attribute of an
    argument whose object's class the code is made for (``param_classes``)."""
    if not param_classes:
        return {}
    stores = collections.Counter(n.id for n in A.walk(node)
                                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    held = {}
    for s in A.walk_statements(node.body):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and stores[s.targets[0].id] == 1:
            parts = dotted(s.value) if isinstance(s.value, gast.Attribute) else None
            path = ".".join(parts) if parts else None
            if path in param_classes:
                held[s.targets[0].id] = (path, param_classes[path])
    return held


def operator_method(s):
    """The special method's name (``"mul"``) of the operator statement ``s``, else None."""
    rhs = s.value if isinstance(s, gast.Assign) else None
    if isinstance(rhs, gast.BinOp):
        return _METHODS.get(type(rhs.op))
    if isinstance(rhs, gast.UnaryOp):
        return _METHODS.get(type(rhs.op))
    return None


def _record_class(cls):
    """A dataclass or a named tuple: srcad differentiates its objects field by field (a duck
    array's items are its own: ``protocol.protocol_array``)."""
    return dataclasses.is_dataclass(cls) or issubclass(cls, tuple) and hasattr(cls, "_fields")


def _item_of_name(s):
    """``a`` where ``s`` is ``y = a[...]``, else None."""
    rhs = s.value if isinstance(s, gast.Assign) else None
    return rhs.value.id if isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name) else None


def _operands(s):
    rhs = s.value
    atoms = [rhs.left, rhs.right] if isinstance(rhs, gast.BinOp) else [rhs.operand]
    return {a.id for a in atoms if isinstance(a, gast.Name)}


def _refuse_defined(source, name, cls, method, s):
    if installed_class(cls) or not defines_operator(cls, method):
        return
    raise source.syntax_error(
        f"srcad differentiates operators on numbers and arrays; '{name}' is an object of your class "
        f"{cls.__qualname__}, whose __{method}__ makes this something else (its derivative is not the "
        "number's): give srcad its derivative (srcad.custom_vjp on a function doing the operation) or write "
        "the operation out on arrays", A.anno(s, "origin") or s)
