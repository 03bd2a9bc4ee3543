"""Numba lowering: a generated adjoint function rewritten into the subset ``numba.njit`` types.

Generated code is plain Python whose meaning leans on three things numba compiles
differently or not at all; this pass removes each of them by construction, and refuses
(``NotLowerable``, at the generated line) whatever it cannot rewrite:

- *Placeholders.* A value first bound inside a loop is saved with ``_x_stack.append(x)``
  before each assignment, so its first save pushes a ``None`` placeholder bound at entry.
  numba cannot type a name that is ``None`` and later a float, and refuses to read a name
  before its binding. The placeholder is pushed once and restored last, never read: if
  every saved assignment gives a literal number (a trip counter's ``0``) or a ``range``,
  a literal of that type replaces ``None``. Otherwise the stack is turned around: each value is pushed *after* it is
  assigned, and the restore ``x = _x_stack.pop()`` becomes ``x = previous_value(_x_stack, x)``
  (drop the top, read the one below; the placeholder the first save would have restored is
  never read); an assignment that is not saved replaces the top (``numba_stacks``).
- *Maybe None.* A name bound to ``None`` on one path and to a value on another (an adjoint
  that is zero on some paths, a value bound in one branch only) would be an optional in
  numba, which no helper takes: it gets a flag equal to ``x is not None`` that its tests read,
  where every other read is proven to see a value (``numba_none_flags``), else refused (a
  forward sweep saves such a name in a box its backward sweep reads: ``numba_saved_nones``); a
  range loop's variable, bound to ``None`` only so a forward sweep can save it if the loop
  never ran (and then never read), gets the placeholder ``0``.
- *Identity.* numba compiles ``a is b`` on two floats to ``False`` (they are unboxed), which
  would silently zero the derivative of ``min``/``max``. A test against the literal ``None``
  keeps its meaning (numba decides it from the types); any other ``a is b`` becomes
  ``same_value(a, b)`` (equal, or both NaN: what ``min``'s result is to its argument), which
  numba accepts only on numbers. A chained or literal identity test is refused.
- *Reversed loops.* numba has no ``reversed``: ``for i in reversed(r)`` over a range ``r``
  becomes the loop over the reversed ``range`` (a ``r`` that is no range fails to type).
- *Value stacks.* In a forward sweep, a stack the function makes (``_x_stack = []``) and
  only pushes to, pops from, copies or hands on in its saved values becomes ``new_stack()``
  (a numba typed list: it crosses from compiled code to Python and back as a reference,
  where a Python list of tuples would be converted item by item, or not at all).
- *Saved values.* A forward sweep's saved values cross into Python and back, and numba
  cannot convert a ``range`` (a loop's, kept for the reverse loop): each saved value goes
  through ``saved_value`` and comes back through ``restored_value`` (a range as a named
  tuple of its own class, anything else as it is).
- *Decisions numba must make when it compiles* (``numba_static``): a pure shape helper
  called on literals is folded to its result; a branch decided by ``np.ndim`` of values
  becomes a function numba prunes for the types it is called with.
- *Allocations* (``numba_allocations``): a list display read only as values becomes a
  tuple display, and a gradient the function made itself is finished without a copy.
- *Exceptions* (``numba_try``): a ``try`` runs as its body alone; where the compiled code
  raises, the backend runs the NumPy code instead, whose handlers run as Python's do.
- Nothing else is rewritten: calls keep their names, and the backend binds each name to
  something numba compiles (``backends.numba_runtime``) or lets numba refuse it.

>>> import gast, astor
>>> tree = gast.parse('''
... def f_adjoint(x):
...     t = None
...     _t_stack = []
...     r = range(3)
...     for i in r:
...         _t_stack.append(t)
...         t = x * i
...     for i in reversed(r):
...         g = t is x
...         t = _t_stack.pop()
...     return g
... ''').body[0]
>>> print(astor.to_source(gast.gast_to_ast(lower_for_numba(tree))).strip())
def f_adjoint(x):
    _t_stack = []
    r = range(3)
    for i in r:
        t = x * i
        _t_stack.append(t)
    for i in range(r.start + (len(r) - 1) * r.step, r.start - r.step, -r.step):
        g = same_value(t, x)
        t = previous_value(_t_stack, t)
    return g
"""
import gast

from .. import astutil as A
from . import numba_allocations, numba_saved_nones, numba_stacks, numba_static, numba_try
from .numba_none_flags import lower_maybe_none
from .numba_stacks import NotLowerable, turn_around_placeholder_stacks, turned_around

SAME_VALUE = "same_value"
PREVIOUS_VALUE, SET_CURRENT_VALUE = numba_stacks.PREVIOUS_VALUE, numba_stacks.SET_CURRENT_VALUE
UNCHANGED_COPY = numba_stacks.UNCHANGED_COPY
saved_boxes = numba_saved_nones.saved_boxes
NEW_STACK = "new_stack"
SAVED_VALUE, RESTORED_VALUE = "saved_value", "restored_value"
IS_NDARRAY = numba_static.IS_NDARRAY
IS_INTEGER = "is_integer"
DIMS_OF, ARRAY_FLAG = numba_static.DIMS_OF, numba_static.ARRAY_FLAG
FINISH_OWNED = numba_allocations.FINISH_OWNED
CHECKED_MATH = numba_static.CHECKED_MATH
HELPERS = (SAME_VALUE, PREVIOUS_VALUE, SET_CURRENT_VALUE, UNCHANGED_COPY, NEW_STACK, SAVED_VALUE, RESTORED_VALUE,
           IS_NDARRAY, IS_INTEGER, DIMS_OF, ARRAY_FLAG, FINISH_OWNED, CHECKED_MATH)  # what rewritten code calls


def lower_for_numba(fn, sweep="joint", turned=None, resolve=None, boxes=None):
    """Rewrite the generated function ``fn`` (gast ``FunctionDef``) in place so numba can
    compile it with the meaning it has in Python; see the module docstring. Returns ``fn``.

    ``sweep`` is what ``fn`` is: the ``"joint"`` adjoint, or the ``"forward"`` or
    ``"backward"`` sweep of a split pair, whose saved values cross into Python and back. A
    backward sweep pops the stacks its forward sweep pushed: pass ``turned``, the forward
    sweep's ``turned_stacks(forward)``, so its restores match. ``resolve(name)`` is the object
    a free name of the generated code denotes (None if unknown): calls it finds in
    ``numba_static.FOLDABLE`` on literal arguments are folded, and branches decided by
    ``np.ndim`` outlined (``outlined(fn)``). A backward sweep reads the values its forward sweep
    saved in boxes from them: pass ``boxes``, the forward sweep's ``saved_boxes(forward)``."""
    _refuse_checkpointed_loops(fn)
    _refuse_marked(fn)
    _refuse_sharing_checks(fn)
    _plain_assignments(fn)
    numba_try.drop_handlers(fn)  # before the flow: the handlers never run in compiled code
    numba_saved_nones.split_stopped_tuples(fn, resolve)
    _drop_dead_placeholders(fn)  # before the stacks are read: a dead placeholder is not pushed
    if turned is None:
        turned = turn_around_placeholder_stacks(fn)
    else:
        for block in A.blocks(fn.body):
            block[:] = turned_around(block, turned, {})
    A.set_anno(fn, "turned_stacks", turned)
    _lower_maybe_none(fn, sweep, resolve, boxes)
    _lower_identity_tests(fn)
    _lower_ndarray_tests(fn)
    _lower_reversed_loops(fn)
    if resolve is not None:
        numba_static.fold_constant_calls(fn, resolve)
        numba_static.check_math_errors(fn, resolve)
        numba_allocations.fewer_allocations(fn, resolve)
    if sweep != "joint":  # the joint adjoint keeps its stacks to itself: numba's own lists are faster
        _typed_stacks(fn)
        _convertible_saved_values(fn, sweep, turned)
    A.set_anno(fn, "outlined", numba_static.outline_ndim_branches(fn, resolve) if resolve is not None else [])
    return fn


def _refuse_marked(fn):
    """A statement ``passes.integer_growth`` marked (``numba_refuses(reason)``): refused there."""
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id.rstrip("_") == "numba_refuses" and node.args \
                and isinstance(node.args[0], gast.Constant):
            raise NotLowerable(node.args[0].value, node)


def _refuse_sharing_checks(fn):
    """A function updating an argument in place starts with ``check_unshared_arguments`` (the
    argument shares no memory with the others, nor with what the code reads), a Python walk of
    the values numba cannot run: refused, naming the arguments."""
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id.rstrip("_") == "check_unshared_arguments":
            names, count = node.args[0], node.args[2]
            updated = [e.value for e in names.elts[:count.value]] if isinstance(names, gast.Tuple) and isinstance(
                count, gast.Constant) else []
            quoted = ", ".join(f"'{n}'" for n in updated) or "an argument"
            name = updated[0] if updated else "a"
            raise NotLowerable(
                f"the function updates its argument {quoted} in place, and numba cannot run srcad's check that "
                "the argument shares no memory with the others; update a copy under a new name "
                f"(`{name}1 = {name}.copy()`)", _first_update(fn, updated) or node)


def _first_update(fn, names):
    """The first statement of ``fn`` that stores into an item or attribute of one of ``names``
    (``U[0] = _t3``: the user's update), else the first that binds one of them again (the user's
    ``U -= 0.05``, which the generated code computes as ``U = _t2``), or None (an update made by
    a function it calls)."""
    def base(target):
        while isinstance(target, (gast.Subscript, gast.Attribute)):
            target = target.value
        return target

    def targets(s):
        return s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(s, gast.AugAssign) else []

    stores = [s for s in A.walk(fn) if any(isinstance(t, (gast.Subscript, gast.Attribute)) and isinstance(
        base(t), gast.Name) and base(t).id in names for t in targets(s))]
    bindings = [s for s in A.walk(fn) if any(isinstance(t, gast.Name) and t.id in names for t in targets(s))]
    return min(stores or bindings, key=lambda s: s.lineno, default=None)


def _refuse_checkpointed_loops(fn):
    """A checkpointed loop (``srcad.checkpointed``) pushes its values in the reverse sweep,
    which the stack lowering below does not follow: refused, by its call of checkpoint_segments."""
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id.rstrip("_") == "checkpoint_segments":
            raise NotLowerable("a checkpointed loop (srcad.checkpointed) is not lowered to numba", node)


def outlined(fn):
    """The functions ``lower_for_numba`` made from ``fn``'s branches, which its module must define."""
    return A.anno(fn, "outlined")


def turned_stacks(fn):
    """``{name: stack}`` of the stacks ``lower_for_numba`` turned around in ``fn``."""
    return A.anno(fn, "turned_stacks")


def _plain_assignments(fn):
    """``a: np.float64 = S[i, j]`` as ``a = S[i, j]``: the annotation is a fact for srcad
    differentiating its own code again (``codegen._with_element_facts``), never read by numba,
    and the passes below read assignments."""
    for block in A.blocks(fn.body):
        block[:] = [gast.Assign(targets=[s.target], value=s.value, type_comment=None, lineno=s.lineno,
                                col_offset=s.col_offset)
                    if isinstance(s, gast.AnnAssign) and s.simple and s.value is not None
                    and isinstance(s.target, gast.Name) else s for s in block]


def _drop_dead_placeholders(fn):
    """``x = None`` at the top that a later top-level statement rebinds before anything reads ``x``."""
    dead = set()
    for k, s in enumerate(fn.body):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and A.is_none(s.value)):
            continue
        name = s.targets[0].id
        for later in fn.body[k + 1:]:
            if name in A.names_read(later):
                break
            if isinstance(later, gast.Assign) and name in A.names_stored(later):
                dead.add(id(s))
                break
    fn.body[:] = [s for s in fn.body if id(s) not in dead]


def _lower_maybe_none(fn, sweep, resolve, boxes):
    """Names bound to ``None`` and to values: a range loop's variable gets the placeholder ``0``,
    the others a flag (``numba_none_flags``; ``resolve`` tells it the runtime's ``add_grads``);
    those a forward sweep saves go in boxes its backward sweep reads (``numba_saved_nones``)."""
    trusted = set()
    if sweep == "backward":
        unboxed, trusted = numba_saved_nones.unbox_saved(fn, boxes)
        numba_saved_nones.stop_only_if_saved(fn, unboxed, resolve)
    nones, values, ranges = {}, {}, set()
    for node in gast.walk(fn):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                for name in A.names_stored(target):
                    if isinstance(target, gast.Name) and A.is_none(node.value):
                        nones.setdefault(name, node)
                    else:
                        values.setdefault(name, []).append(node)
        elif isinstance(node, (gast.AugAssign, gast.For)):
            for name in A.names_stored(node.target):
                values.setdefault(name, []).append(node)
    for name, bindings in values.items():
        if all(_is_range_call(b.value) for b in bindings if isinstance(b, gast.Assign)) and all(
                isinstance(b, gast.Assign) for b in bindings):
            ranges.add(name)
    maybe_none = {}
    for name, node in nones.items():
        if name not in values:
            continue
        if all(isinstance(b, gast.For) and isinstance(b.target, gast.Name)
               and (_is_range_call(b.iter) or isinstance(b.iter, gast.Name) and b.iter.id in ranges)
               for b in values[name]):
            node.value = A.const(0)  # a range loop's variable, unbound if it never ran: then never read
            continue
        maybe_none[name] = node
    boxed = {}

    def box(fn, names):
        boxed.update(numba_saved_nones.box_saved(fn, names))

    facts = lower_maybe_none(fn, maybe_none, resolve, frozenset(trusted), box if sweep == "forward" else None)
    if sweep == "forward":
        numba_saved_nones.carry(fn, boxed, facts)


def _is_range_call(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "range"


# ---- type tests ----------------------------------------------------------------------------


class _NdarrayTests(gast.NodeTransformer):
    """``isinstance(x, np.ndarray)`` (generic code's test for a NumPy array rather than a Dask
    or CuPy one) as ``is_ndarray(x)``, and ``isinstance(k, int)`` (a rule's test for an integer
    power) as ``is_integer(k)``, which numba decides from the types."""

    def __init__(self, buffers):
        self.buffers = buffers

    def visit_Call(self, node):
        self.generic_visit(node)
        if (isinstance(node.func, gast.Name) and node.func.id == "isinstance" and len(node.args) == 2
                and isinstance(node.args[1], gast.Attribute) and node.args[1].attr == "ndarray"):
            if isinstance(node.args[0], gast.Name) and node.args[0].id in self.buffers:
                raise NotLowerable("an ndarray test of an adjoint made a buffer, which is a 0-d array in Python and "
                                   "a float in numba", node)
            return gast.Call(func=A.load(IS_NDARRAY), args=[node.args[0]], keywords=[])
        if (isinstance(node.func, gast.Name) and node.func.id == "isinstance" and len(node.args) == 2
                and isinstance(node.args[1], gast.Name) and node.args[1].id == "int"):
            return gast.Call(func=A.load(IS_INTEGER), args=[node.args[0]], keywords=[])
        return node


def _lower_ndarray_tests(fn):
    buffers = {t.id for s in A.walk(fn) if isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
               and isinstance(s.value.func, gast.Name) and s.value.func.id.rstrip("_") == "grad_buffer"
               for t in s.targets if isinstance(t, gast.Name)}
    _NdarrayTests(buffers).visit(fn)


# ---- identity tests ----------------------------------------------------------------------


class _Identity(gast.NodeTransformer):
    def visit_Compare(self, node):
        self.generic_visit(node)
        if not any(isinstance(op, (gast.Is, gast.IsNot)) for op in node.ops):
            return node
        if len(node.ops) != 1:
            raise NotLowerable("a chained comparison with 'is' cannot be compiled with the same meaning", node)
        left, right = node.left, node.comparators[0]
        if A.is_none(left) or A.is_none(right):
            return node  # numba decides these from the types, as Python does
        if isinstance(left, gast.Constant) or isinstance(right, gast.Constant):
            raise NotLowerable("an identity test against a literal other than None cannot be compiled with "
                               "the same meaning; compare with == instead", node)
        same = gast.Call(func=A.load(SAME_VALUE), args=[left, right], keywords=[])
        if isinstance(node.ops[0], gast.IsNot):
            return gast.UnaryOp(op=gast.Not(), operand=same)
        return same


def _lower_identity_tests(fn):
    _Identity().visit(fn)
    for node in gast.walk(fn):  # the guarantee, checked: only tests against None are left
        if isinstance(node, gast.Compare) and any(isinstance(op, (gast.Is, gast.IsNot)) for op in node.ops):
            if not (A.is_none(node.left) or A.is_none(node.comparators[0])):
                raise NotLowerable("an identity test is left that numba would compile to a constant", node)


# ---- reversed loops ------------------------------------------------------------------------


def _lower_reversed_loops(fn):
    """``for i in reversed(r)`` -> ``for i in range(r.start + (len(r) - 1) * r.step, r.start - r.step, -r.step)``."""
    for node in gast.walk(fn):
        if not (isinstance(node, gast.For) and isinstance(node.iter, gast.Call)
                and isinstance(node.iter.func, gast.Name) and node.iter.func.id == "reversed"):
            continue
        (r,) = node.iter.args
        count = None  # a loop left early runs back over its first trip-count items: r[:count]
        if (isinstance(r, gast.Subscript) and isinstance(r.slice, gast.Slice) and r.slice.lower is None
                and r.slice.step is None and isinstance(r.slice.upper, gast.Name)):
            r, count = r.value, r.slice.upper
        if not isinstance(r, gast.Name):
            raise NotLowerable("a reversed loop over something other than a named range", node)

        def part(name):
            return gast.Attribute(value=A.load(r.id), attr=name, ctx=gast.Load())

        length = gast.Call(func=A.load("len"), args=[A.load(r.id)], keywords=[])
        if count is not None:  # a trip count is never negative: the slice keeps min(count, len) items
            length = gast.Call(func=A.load("min"), args=[length, A.load(count.id)], keywords=[])
        last = gast.BinOp(left=length, op=gast.Sub(), right=A.const(1))
        first = gast.BinOp(left=part("start"), op=gast.Add(), right=gast.BinOp(left=last, op=gast.Mult(),
                                                                                 right=part("step")))
        stop = gast.BinOp(left=part("start"), op=gast.Sub(), right=part("step"))
        step = gast.UnaryOp(op=gast.USub(), operand=part("step"))
        node.iter = gast.Call(func=A.load("range"), args=[first, stop, step], keywords=[])


# ---- value stacks --------------------------------------------------------------------------


_STACK_METHODS = ("append", "pop")


def _typed_stacks(fn):
    """``S = []`` -> ``S = new_stack()`` for lists used only as value stacks."""
    made = {s.targets[0].id: s for s in fn.body
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.List) and not s.value.elts and s.targets[0].id.endswith("_stack")}
    if not made:
        return
    allowed = set()  # ids of Name nodes in a stack use
    for node in gast.walk(fn):
        if isinstance(node, gast.Attribute) and node.attr in _STACK_METHODS and isinstance(node.value, gast.Name):
            allowed.add(id(node.value))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in (
                PREVIOUS_VALUE, SET_CURRENT_VALUE, "copy_value"):
            allowed.update(id(a) for a in node.args[:1] if isinstance(a, gast.Name))
        elif isinstance(node, gast.Return) and isinstance(node.value, gast.Tuple) and len(node.value.elts) == 2:
            pack = node.value.elts[1]  # a forward sweep's (output, saved values)
            if isinstance(pack, gast.Tuple):
                allowed.update(id(_saved_name(e)) for e in pack.elts if _saved_name(e) is not None)
    for s in made.values():
        allowed.add(id(s.targets[0]))
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and node.id in made and id(node) not in allowed:
            del made[node.id]
    for s in made.values():
        s.value = gast.Call(func=A.load(NEW_STACK), args=[], keywords=[])


# ---- saved values --------------------------------------------------------------------------


def _call(name, arg):
    return gast.Call(func=A.load(name), args=[arg], keywords=[])


def _saved_name(saved):
    """The Name a forward sweep saves as ``saved``: ``x``, or its copy ``copy_value(x)`` or
    ``snapshot(x)``; None for any other expression."""
    if (isinstance(saved, gast.Call) and isinstance(saved.func, gast.Name) and len(saved.args) == 1
            and not saved.keywords and saved.func.id.rstrip("_") in ("copy_value", "snapshot")):
        saved = saved.args[0]
    return saved if isinstance(saved, gast.Name) else None


def _convertible_saved_values(fn, sweep, turned):
    """A forward sweep (``return y, (saved...)``, named ``*_forward``) passes each saved value
    through ``saved_value``; a backward sweep (``(saved...) = _saved`` first) restores each.

    The value of a turned-around name is its stack's top, and unbound if its loop never ran
    (numba would hand Python an uninitialised value): it is not saved, but read back from
    its stack in the backward sweep when the stack holds one."""
    last = fn.body[-1] if fn.body else None
    if (sweep == "forward" and isinstance(last, gast.Return) and isinstance(last.value, gast.Tuple)
            and len(last.value.elts) == 2 and isinstance(last.value.elts[1], gast.Tuple)):
        pack = last.value.elts[1]
        pack.elts = [_call(SAVED_VALUE, e) for e in pack.elts
                     if not (_saved_name(e) is not None and _saved_name(e).id in turned)]
        return
    first = fn.body[0] if fn.body else None
    params = [a.id for a in fn.args.args]
    if (sweep == "backward" and params and isinstance(first, gast.Assign)
            and isinstance(first.value, gast.Name) and first.value.id == params[0]
            and isinstance(first.targets[0], gast.Tuple)):
        unpack = first.targets[0]
        unpack.elts = [e for e in unpack.elts if not (isinstance(e, gast.Name) and e.id in turned)]
        names = sorted(A.names_stored(unpack))
        restores = [A.assign(n, _call(RESTORED_VALUE, A.load(n))) for n in names]
        tops = [gast.If(test=gast.Compare(left=gast.Call(func=A.load("len"), args=[A.load(stack)], keywords=[]),
                                          ops=[gast.Gt()], comparators=[A.const(0)]),
                        body=[A.assign(name, gast.Subscript(value=A.load(stack), slice=A.const(-1),
                                                            ctx=gast.Load()))], orelse=[])
                for name, stack in sorted(turned.items())]
        fn.body[1:1] = restores + tops
