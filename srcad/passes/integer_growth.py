"""Integer growth: Python integer (and float) arithmetic numba would compute otherwise is refused or checked.

Python's integers grow without bound; numba's are 64-bit and wrap. A hash, a linear
congruential generator, a factorial or a Fibonacci number kept as an ``int`` (``c = c *
1000003`` in a loop), or ``10 ** t``, takes other values compiled, and with them other
branches and weights: a silently different gradient. Guarantee: afterwards, right before
each statement of the forward sweep that computes an integer (its spec, or its bindings,
say so) in one of these ways, there is ``numba_refuses(reason)``; in Python it does nothing,
and the numba lowering refuses the code at that line (``backend="auto"`` runs NumPy code):

- a value carried around a loop (it flows back into its own operands) by anything but a
  copy, adding or subtracting a literal (a counter), or ``% literal`` / ``// literal``;
- a power of integers, unless of literals or to a literal exponent of 0 to 3 (``i ** 2``):
  ``2 ** (t - 3)`` is a float in Python, ``0`` compiled;
- a left shift of integers, unless of literals;
- ``round(x, n)`` of a Python float (Python rounds its exact decimal value, numba a scaled copy).

Every other sum, difference or product of integers (``i * 6364136223846793005``, ``n * n``,
index arithmetic ``i * n + j``) has ``check_integer_range(op, a, b, message)`` right before
it: nothing in Python; compiled, it raises ``IntegerOverflowError`` at the user's line where
the result would pass 64 bits (``backend="auto"`` then runs NumPy code). No bound on a value
is assumed: an argument, a length or a literal may be as large as 64 bits allow. A division,
remainder or power of Python numbers not both integers has ``check_python_float(op, a, b,
message)`` before it, which raises compiled where Python's float arithmetic raises (``1.0 / 0.0``)
and numba's gives inf or nan.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> fn = gast.parse('''
... def f_adjoint(x, v=None):
...     c = 1
...     for t in r:
...         k = c * 3
...         c = c * 7
... ''').body[0]
>>> _ = A.set_anno(fn, "n_forward", 2)
>>> print(A.to_source(mark_integer_growth(fn)).strip())  # doctest: +ELLIPSIS
def f_adjoint(x, v=None):
    c = 1
    for t in r:
        check_integer_range('*', c, 3,
            "integer arithmetic passes 2**63 here, where numba's 64-bit integers wrap and Python's grow; ..."
            )
        k = c * 3
        numba_refuses(
            "a loop-carried integer may pass 2**63: numba's integers are 64-bit and wrap there, where Python's grow"
            )
        c = c * 7
"""
import builtins

import gast

from .. import astutil as A
from .. import runtime
from ..naming import BUILTIN
from .shape_values import Spec

_GROWS = ": numba's integers are 64-bit and wrap there, where Python's grow"
CARRIED = "a loop-carried integer may pass 2**63" + _GROWS
POWER = "an integer power may pass 2**63" + _GROWS
ROUNDING = ("round(x, n) of a Python float: Python rounds its exact decimal value (round(2.675, 2) is 2.67), "
            "numba a scaled copy (2.68)")
NARROW = ("arithmetic of NumPy integers narrower than 64 bits: NumPy computes it at their width (and wraps), "
          "numba at 64 bits")
OVERFLOW = ("integer arithmetic passes 2**63 here, where numba's 64-bit integers wrap and Python's grow; "
            "use backend='numpy' (or backend='auto', which runs NumPy code then)")  # what a check raises
_INTEGER_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod, gast.Pow, gast.LShift, gast.RShift,
                gast.BitAnd, gast.BitOr, gast.BitXor)
_KEEPS = (runtime.in_place_result, runtime.copy_value)  # their result is their first argument's kind


def mark_integer_growth(node, source=None):
    """Mark the integer arithmetic of the generated function ``node``'s forward sweep that
    numba computes otherwise (annotated ``"specs"`` where known), and check the rest; see the
    module doc. ``source`` (the user's) names the file in the checks' messages. Returns ``node``."""
    specs = A.anno(node, "specs") or {}
    n_forward = A.anno(node, "n_forward")
    top = len(node.body) if n_forward is None else n_forward
    reverse_start = node.body[top] if top < len(node.body) else None
    forward = node.body[:top]
    in_forward = {id(s) for s in A.every_statement(forward)}
    assignments = []  # (statement, block, target, value), in the forward sweep and the reverse
    for block in A.blocks(node.body):
        for s in block:
            target, value = _assignment(s)
            if target is not None:
                assignments.append((s, block, target, value))
    lines = {}  # id of a statement -> the "line N: text" comment it comes under
    _comment_lines(node.body, lines, None)
    forward_assignments = [a for a in assignments if id(a[0]) in in_forward]
    integers = _integers(forward_assignments, _loop_counters(forward), specs)
    flows = {}
    for s, block, target, value in forward_assignments:
        for name in A.names_read(value):
            flows.setdefault(name, set()).add(target)
    refused = set()
    for s, block, target, value in forward_assignments:
        reason = _power(value, integers, specs) or _narrow(value, integers, specs)
        if reason is None and target in integers and not _counter_step(value) and _reaches(
                flows, target, A.names_read(value)):
            reason = CARRIED
        if reason:
            block.insert(block.index(s), _marker(reason))
            refused.add(id(s))
    for s, block, target, value in forward_assignments:
        if id(s) in refused:
            continue
        if _python_rounding(value, specs):
            block.insert(block.index(s), _marker(ROUNDING))
            continue
        checked = _python_float_operation(value, integers, specs)
        if checked is not None:
            block.insert(_before_saves(block, block.index(s)), _check(runtime.check_python_float, *checked, _message(
                source, lines.get(id(s)))))
    # the reverse sweep computes integers again (``_t3_again = i * n``): checked as well
    everywhere = _integers(assignments, _loop_counters(node.body), specs)
    for s, block, target, value in assignments:
        checked = None if id(s) in refused else _checked_operation(value, everywhere, specs)
        if checked is not None:
            block.insert(_before_saves(block, block.index(s)), _check(
                runtime.check_integer_range, *checked, _message(source, lines.get(id(s)))))
    if n_forward is not None:
        A.set_anno(node, "n_forward", len(node.body) if reverse_start is None else next(
            k for k, s in enumerate(node.body) if s is reverse_start))
    return node


def _assignment(s):
    """``(target, value)`` of ``t = value`` or ``t op= value`` (as ``t op value``) to a name."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
        return s.targets[0].id, s.value
    if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
        return s.target.id, gast.BinOp(left=A.load(s.target.id), op=s.op, right=s.value)
    return None, None


def _loop_counters(stmts):
    """Targets of ``for`` loops over a ``range`` (written in the loop, or bound to a name): integers."""
    ranges = {s.targets[0].id for s in A.every_statement(stmts) if isinstance(s, gast.Assign)
              and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and _is_range(s.value)}
    return {s.target.id for s in A.every_statement(stmts) if isinstance(s, gast.For) and isinstance(s.target, gast.Name)
            and (_is_range(s.iter) or isinstance(s.iter, gast.Name) and s.iter.id in ranges)}


def _is_range(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
        A.anno(node.func, BUILTIN) == "range" or A.anno(node.func, "denotes") is builtins.range)


def _integers(assignments, counters, specs):
    """The names every assignment gives a Python or NumPy integer (an optimistic fixpoint: a
    loop's integer is one if it is one on entry)."""
    candidates = {target for _, _, target, _ in assignments} | counters
    integers = set(candidates)
    while True:
        kept = {name for name in integers if name in counters and not _bound(name, assignments)
                or _all_integer(name, assignments, integers, specs)}
        if kept == integers:
            return integers
        integers = kept


def _bound(name, assignments):
    return any(target == name for _, _, target, _ in assignments)


def _all_integer(name, assignments, integers, specs):
    spec = specs.get(name)
    if isinstance(spec, Spec):
        return spec.shape == () and spec.dtype.kind in "iu" and spec.python is not bool
    return all(_integer(value, integers, specs) for _, _, target, value in assignments if target == name)


def _integer(expr, integers, specs):
    if isinstance(expr, gast.Constant):
        return type(expr.value) is int
    if isinstance(expr, gast.Name):
        spec = specs.get(expr.id)
        if isinstance(spec, Spec):
            return spec.shape == () and spec.dtype.kind in "iu" and spec.python is not bool
        return expr.id in integers
    if isinstance(expr, gast.BinOp):
        return isinstance(expr.op, _INTEGER_OPS) and _integer(expr.left, integers, specs) and _integer(
            expr.right, integers, specs)
    if isinstance(expr, gast.UnaryOp):
        return isinstance(expr.op, (gast.USub, gast.UAdd, gast.Invert)) and _integer(expr.operand, integers, specs)
    if isinstance(expr, gast.Call) and expr.args:
        obj = _callee(expr)
        if obj in _KEEPS or obj is builtins.abs:
            return _integer(expr.args[0], integers, specs)
        return obj is builtins.len or obj is builtins.int
    return False


def _literal(node):
    return isinstance(node, gast.Constant) and type(node.value) is int or (
        isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and _literal(node.operand))


def _literal_value(node):
    """The value of the integer literal ``node`` (``_literal``): ``-1`` is a minus and a 1."""
    return -_literal_value(node.operand) if isinstance(node, gast.UnaryOp) else node.value


def _power(value, integers, specs):
    """Why a power or left shift of integers is refused (``2 ** (t - 3)`` is a float in Python
    and ``0`` compiled; ``10 ** t`` wraps), or None."""
    if not isinstance(value, gast.BinOp) or _literal(value.left) and _literal(value.right) or not (
            _integer(value.left, integers, specs) and _integer(value.right, integers, specs)):
        return None
    if isinstance(value.op, gast.LShift):
        return POWER
    if isinstance(value.op, gast.Pow) and not (isinstance(value.right, gast.Constant) and value.right.value in (0, 1, 2, 3)):
        return POWER
    return None


def _narrow(value, integers, specs):
    """Why arithmetic of integers one of which is a NumPy integer narrower than 64 bits (an
    item of an ``int32`` or ``uint8`` array) is refused, or None."""
    operands = [value.left, value.right] if isinstance(value, gast.BinOp) else [value.operand] if isinstance(
        value, gast.UnaryOp) and isinstance(value.op, gast.USub) else []
    if operands and all(_integer(e, integers, specs) for e in operands) and any(
            isinstance(e, gast.Name) and isinstance(specs.get(e.id), Spec) and specs[e.id].dtype.itemsize < 8
            for e in operands):
        return NARROW
    return None


def _counter_step(value):
    """Does ``value`` step a counter: a copy, ``± literal``, ``% literal``, ``// literal``, or a
    value passed through unchanged (an in-place update's result)?"""
    if isinstance(value, gast.Name):
        return True
    if isinstance(value, gast.BinOp):
        if isinstance(value.op, (gast.Add, gast.Sub)):
            return _literal(value.right) or isinstance(value.op, gast.Add) and _literal(value.left)
        if isinstance(value.op, (gast.Mod, gast.FloorDiv)):
            return _literal(value.right) and _literal_value(value.right) not in (0, -1)
        return False
    if isinstance(value, gast.Call) and value.args and _callee(value) in _KEEPS:
        return True  # in_place_result(new, old): the step is ``new``'s statement
    return False


def _reaches(flows, start, goals):
    """Does a value assigned to ``start`` flow, through assignments, into one of ``goals``?"""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in goals:
            return True
        if name not in seen:
            seen.add(name)
            todo.extend(flows.get(name, ()))
    return False


def _checked_operation(value, integers, specs):
    """``(op, a, b)`` for the check of ``value``, an operation on integers (not of literals
    only) that numba's 64-bit integers may compute otherwise than Python (a value past 64 bits,
    a division by zero, a negative shift count); None for any other ``value``."""
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub) and not _literal(value.operand) \
            and _integer(value.operand, integers, specs):
        return "neg", value.operand, A.const(0)  # -(-2**63)
    if isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords and _callee(value) is builtins.abs \
            and _integer(value.args[0], integers, specs):
        return "abs", value.args[0], A.const(0)  # abs(-2**63)
    if not (isinstance(value, gast.BinOp) and not (_literal(value.left) and _literal(value.right))
            and _integer(value.left, integers, specs) and _integer(value.right, integers, specs)):
        return None
    op = _CHECKED_OPS.get(type(value.op))
    if op in ("//", "%", "/") and (_numpy_integer(value.left, specs) or _numpy_integer(value.right, specs)):
        op = _NUMPY_OPS.get(op, op)  # NumPy's integers divide by zero as numba's do (0, or inf)
    if op == "**" and not (_literal(value.right) and _literal_value(value.right) in (2, 3)):
        return None  # other powers are refused or exact (``x ** 0``, ``x ** 1``)
    if op in ("//", "%", "/") and _literal(value.right) and _literal_value(value.right) not in (0, -1):
        return None
    return (op, value.left, value.right) if op is not None else None


_CHECKED_OPS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.FloorDiv: "//", gast.Mod: "%", gast.Div: "/",
                gast.Pow: "**", gast.RShift: ">>"}
_NUMPY_OPS = {"//": "numpy //", "%": None, "/": None}  # only -2**63 // -1 differs there


def _numpy_integer(expr, specs):
    """Is ``expr`` a NumPy integer (not a Python ``int``), as its spec says?"""
    spec = specs.get(expr.id) if isinstance(expr, gast.Name) else None
    return isinstance(spec, Spec) and spec.python is None and spec.dtype.kind in "iu"


def _python_float_operation(value, integers, specs):
    """``(op, a, b)`` for the check of ``value``, a division, remainder or power (``/``, ``//``,
    ``%``, ``**``, ``divmod``, ``pow``) of two Python numbers not both integers, which Python
    computes as floats and raises where numba's give inf or nan (``1.0 / 0.0``); None otherwise.
    An operand whose kind is unknown counts as a Python number (fail closed: the check does
    nothing on arrays); a NumPy scalar (its spec says so) divides as numba's do."""
    if isinstance(value, gast.BinOp):
        op, operands = _FLOAT_OPS.get(type(value.op)), [value.left, value.right]
    elif isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords:
        op, operands = _FLOAT_CALLS.get(_callee(value)), value.args
    else:
        return None
    if op is None or any(isinstance(e, gast.Starred) or not _python_number(e, specs) for e in operands) or all(
            _integer(e, integers, specs) for e in operands):
        return None
    return (op, *operands)


_FLOAT_OPS = {gast.Div: "/", gast.FloorDiv: "//", gast.Mod: "%", gast.Pow: "**"}
_FLOAT_CALLS = {builtins.divmod: "divmod", builtins.pow: "**"}


def _python_rounding(value, specs):
    """Is ``value`` ``round(x, n)`` of a Python float (or of a number of unknown kind)?"""
    return isinstance(value, gast.Call) and _callee(value) is builtins.round and len(value.args) == 2 \
        and _python_number(value.args[0], specs)


def _python_number(expr, specs):
    """May ``expr`` be a Python number (not a NumPy scalar or array, as its spec or literal says)?"""
    if isinstance(expr, gast.Constant):
        return type(expr.value) in (int, float, bool)
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _python_number(expr.operand, specs)
    if isinstance(expr, gast.Name):
        spec = specs.get(expr.id)
        return not isinstance(spec, Spec) or spec.python is not None
    return False


def _callee(call):
    return A.anno(call.func, "denotes") or getattr(A.anno(call, "callee"), "obj", None)


def _before_saves(block, at):
    """Where a check of ``block[at]`` goes: before the pushes that save values just before it
    (``_t1_stack.append(_t1)``; the numba lowering reads a push and its assignment together)."""
    while at and _is_push(block[at - 1]):
        at -= 1
    return at


def _is_push(s):
    return (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name)
            and s.value.func.value.id.endswith("_stack"))


def _comment_lines(stmts, lines, current):
    """Note in ``lines`` the ``line N: text`` comment each statement of ``stmts`` (nested
    blocks too) comes under; ``current`` is the one before ``stmts``."""
    for s in stmts:
        if A.is_comment(s):
            current = s.value.value[len(A.COMMENT_MARK):].strip()
            continue
        lines[id(s)] = current
        for field in ("body", "orelse", "finalbody"):
            _comment_lines(getattr(s, field, None) or [], lines, current)


def _message(source, comment):
    """What an overflow at the statement under ``comment`` (``line N: text``) raises."""
    head, text = "", ""
    if comment and comment.startswith("line ") and ":" in comment:
        number, text = comment[len("line "):].split(":", 1)
        head = f"{source.filename}:{number}: " if source is not None else f"line {number}: "
    shown = f"\n    {text.strip()}" if text.strip() else ""
    return f"{head}{OVERFLOW}{shown}"


def _check(check, op, a, b, message):
    """``check(op, a, b, message)``, for ``check`` one of the runtime's checks of an operation."""
    name = check.__name__
    call = gast.Call(func=A.set_anno(A.load(name), BUILTIN, (name, check)),
                     args=[A.const(op), A.deepcopy(a), A.deepcopy(b), A.const(message)], keywords=[])
    return gast.Expr(value=call)


def _marker(reason):
    call = gast.Call(func=A.set_anno(A.load("numba_refuses"), BUILTIN, ("numba_refuses", runtime.numba_refuses)),
                     args=[A.const(reason)], keywords=[])
    return gast.Expr(value=call)
