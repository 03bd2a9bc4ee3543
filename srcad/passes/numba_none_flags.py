"""Maybe-None names lowered to a flag, for the numba backend (``numba_lowering``'s *Maybe None*).

Generated code binds a name to ``None`` where its value is zero or absent (an adjoint reset in
the reverse of ``if x[i] > m: m = x[i]``, an adjoint no path reached yet, a value bound in one
branch only), and tests ``if dm is not None`` before it reads it. numba gives a variable one
type: ``None`` and a float unify to an optional, which no helper's overload takes
(``copy_grad(dm)`` fails to type). So each such name ``dm`` gets a flag ``_dm_set``, kept equal
to what Python's ``dm is not None`` would be:

- ``dm = None`` becomes ``_dm_set = False``: ``dm`` keeps the value it had (or stays unbound,
  which numba allows where nothing reads it);
- every other binding of ``dm`` is kept and followed by ``_dm_set = dm is not None`` (numba
  decides it from the type: ``True`` for a number or an array);
- a test ``dm is not None`` (``dm is None``) becomes ``_dm_set`` (``not _dm_set``);
- a statement that gives ``dm`` to a runtime helper taking None for zero (``dm = add_grads(dm,
  g)``, ``return finish(dm, m)``) becomes ``if dm is None:`` the statement given ``None``,
  ``else:`` the statement, whose read of ``dm`` is proven; a conditional expression that reads a
  flagged name becomes an ``if`` statement (numba's bytecode analysis refuses to read a name
  unbound on some path in one, not in a branch).

This is exact by construction if ``dm`` is read only where it holds the value Python's ``dm``
holds, that is where the last binding run is one that was kept: a flow analysis over the
branches and loops of the function proves this of every read (other than the tests above),
using that a read inside ``if dm is not None:`` follows a kept binding, and that a read inside
``if c:`` (``if not c:``) follows one if every path on which ``c`` is true (false) there went
through one since ``c`` was last bound (``if c: t = ...`` then ``if c: y = y + t``). That needs
``c``'s truth to stay what it was while ``c`` is not rebound (``numba_conditions``). A
forward sweep's ``return`` that saves a name where it may be None saves it in a box instead
(``numba_saved_nones``), with what is known there, which its backward sweep starts from. A
read it cannot prove (``add_grads(dm, g)`` where ``dm`` may have been reset), a binding other
than an assignment, or a name inside a ``with`` or nested function is refused (a ``try`` is gone
by then: ``numba_try``). The flow knows a condition name bound to a constant too (``_returned1 =
False``: no path has it true), so an early return's ``_retval1`` is proven where it is read.
Two other designs were set aside: a zero of ``dm``'s type in place of ``None``, with the tests
made true, runs the guarded code on the zero (``dw + dm * t`` is NaN for an infinite ``t``
where Python skips it) and needs the type; numba's own optional types are unwrapped implicitly
where a helper is called, which the runtime's overloads do not take.
"""
import gast

from .. import astutil as A
from ..runtime_adjoints import add_grads
from ..runtime_boundary import finish
from .numba_conditions import condition_names, copied, is_not
from .numba_stacks import NotLowerable


def lower_maybe_none(fn, names, resolve=None, trusted=frozenset(), box=None):
    """Give each name of ``names`` (``{name: its first `name = None`}``) in ``fn`` a flag, as
    the module docstring says, or raise ``NotLowerable`` at the first statement that is not proven.
    ``resolve(name)`` is the object a free name of ``fn`` denotes (None: unknown, and no
    ``add_grads`` call is rewritten); ``trusted``, names of a backward sweep's saved values
    that were condition names in its forward sweep (``condition_names``); ``box(fn, names)``,
    given names the last statement (a forward sweep's ``return``) reads where they may be None
    and nothing else does, rewrites it so it does not (``numba_saved_nones.box_saved``). Returns
    the facts the flow knows at ``fn``'s last statement if it is a ``return`` (``_State``).

    >>> from srcad.astutil import to_source
    >>> fn = gast.parse('''
    ... def f_adjoint(x):
    ...     dm = None
    ...     if x > 0:
    ...         dm = x * 2.0
    ...     if dm is not None:
    ...         x = x + dm
    ...     return x
    ... ''').body[0]
    >>> facts = lower_maybe_none(fn, {"dm": fn.body[0]})
    >>> print(to_source(fn).strip())
    def f_adjoint(x):
        _dm_set = False
        if x > 0:
            dm = x * 2.0
            _dm_set = dm is not None
        if _dm_set:
            x = x + dm
        return x

    A read under the condition its binding was made under is proven too:

    >>> fn = gast.parse('''
    ... def f_forward(x):
    ...     t = None
    ...     c = x > 0
    ...     if c:
    ...         t = x * 2.0
    ...     if c:
    ...         x = x + t
    ...     return x
    ... ''').body[0]
    >>> facts = lower_maybe_none(fn, {"t": fn.body[0]})
    >>> print(to_source(fn).strip())
    def f_forward(x):
        _t_set = False
        c = x > 0
        if c:
            t = x * 2.0
            _t_set = t is not None
        if c:
            x = x + t
        return x
    """
    if not names:
        return frozenset()
    if resolve is not None:
        _split_on_none(fn, names, resolve)
    _check_bindings(fn, names)
    params = {a.id for a in fn.args.args} & set(names)
    flow = _Flow(names, condition_names(fn, trusted, resolve), resolve)
    flow.block(fn.body, _State(params))
    at_return = {name for name, stmt in flow.unproven if stmt is fn.body[-1]}
    if box is not None and at_return and not {name for name, stmt in flow.unproven if stmt is not fn.body[-1]}:
        box(fn, at_return)
        flow = _Flow(names, condition_names(fn, trusted, resolve), resolve)
        flow.block(fn.body, _State(params))
    returned = flow.returned.get(id(fn.body[-1]))
    if flow.unproven:
        name, stmt = flow.unproven[0]
        raise NotLowerable(f"{name!r} is None on some paths and a value on others, and is read here where it may "
                           "be None (an adjoint that is zero on some paths, or a value bound in one branch only), "
                           "which numba cannot type", stmt)
    taken = A.all_names(fn)
    flags = {}
    for name in sorted(names):
        flag = f"_{name}_set"
        while flag in taken:
            flag += "_"
        flags[name] = flag
    _FlagTests(flags).visit(fn)  # before the flags' own updates, which test the names
    for block in A.blocks(fn.body):
        block[:] = [_branched(s, flags) for s in block]
    for block in A.blocks(fn.body):
        block[:] = [new for s in block for new in _flagged(s, flags)]
    fn.body[:0] = [A.assign(flags[p], _is_not_none(p)) for p in sorted(params)]
    return returned.facts if returned is not None else frozenset()


def _check_bindings(fn, names):
    """Only assignments bind the names, and none is inside a ``try``, ``with`` or nested function."""
    for node in A.walk(fn):
        if isinstance(node, (gast.Try, gast.With, gast.FunctionDef, gast.Lambda)) and node is not fn:
            inside = sorted(A.all_names(node) & set(names))
            if inside:
                raise NotLowerable(f"{inside[0]!r} is None on some paths and a value on others, and is used inside "
                                   "a construct the lowering does not follow, which numba cannot type", node)
    for s in A.every_statement(fn.body):
        if isinstance(s, (gast.Assign, gast.AugAssign)):
            continue
        own = [getattr(s, f) for f in s._fields if f not in ("body", "orelse", "finalbody", "handlers")]
        bound = sorted({n.id for part in own for tree in (part if isinstance(part, list) else [part])
                        if isinstance(tree, gast.AST) for n in A.walk(tree)
                        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load) and n.id in names})
        if bound:  # a loop's target, ``del``, ``x := ...``
            raise NotLowerable(f"{bound[0]!r} is None on some paths and a value on others, and is bound here "
                               "other than by an assignment, which numba cannot type", s)


# srcad's runtime helpers that take None for zero, and the positions where they do (their numba
# versions too): ``add_grads(None, g)`` is ``g``, ``finish(None, x)`` zeros like ``x``
_NONE_TAKING = {add_grads: (0, 1), finish: (0,)}


def _split_on_none(fn, names, resolve):
    """Each simple statement that gives a name of ``names`` to a helper taking None there
    (``dm = add_grads(dm, g)``, ``return finish(dx, x)``) as ``if dm is None:`` the statement
    given ``None`` there, ``else:`` the statement: the same value on each path, and the read
    in the second is proven."""
    for block in list(A.blocks(fn.body)):  # (not the statements made here: they are split already)
        block[:] = [_split(s, frozenset(names), resolve) for s in block]


def _split(stmt, names, resolve, depth=0):
    if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)) or depth == 3:
        return stmt
    for node in A.walk(stmt):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and not node.keywords):
            continue
        positions = _NONE_TAKING.get(resolve(node.func.id), ())
        for k in positions:
            arg = node.args[k] if k < len(node.args) else None
            if isinstance(arg, gast.Name) and arg.id in names:
                given_none = A.deepcopy(stmt)
                _replace_read(given_none, stmt, node, k)
                test = gast.Compare(left=A.load(arg.id), ops=[gast.Is()], comparators=[A.const(None)])
                return gast.If(test=test, body=[_split(given_none, names, resolve, depth + 1)],
                               orelse=[_split(stmt, names - {arg.id}, resolve, depth + 1)])
    return stmt


def _replace_read(copy, original, call, k):
    """In ``copy`` (a deep copy of ``original``), the ``k``th argument of the copy of ``call`` becomes ``None``."""
    for copied, node in zip(A.walk(copy), A.walk(original)):
        if node is call:
            copied.args[k] = A.const(None)
            return


def _is_none_assignment(stmt):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and A.is_none(stmt.value))


def _is_not_none(name):
    return gast.Compare(left=A.load(name), ops=[gast.IsNot()], comparators=[A.const(None)])


def _flagged(stmt, flags):
    """``stmt`` rewritten: a ``name = None`` as its flag cleared, another binding followed by its flag's update."""
    if _is_none_assignment(stmt) and stmt.targets[0].id in flags:
        return [A.assign(flags[stmt.targets[0].id], A.const(False))]
    if not isinstance(stmt, (gast.Assign, gast.AugAssign)):
        return [stmt]
    bound = sorted(A.names_stored(stmt) & set(flags))
    return [stmt] + [A.assign(flags[n], _is_not_none(n)) for n in bound]


def _branched(stmt, flags):
    """``dm = ds if not _dm_set else dm + ds`` as an ``if`` statement: numba's bytecode analysis
    refuses a conditional expression that reads a name unbound on some path (``dm`` before its
    first value), which it accepts in a branch. The same evaluation order, so the same values."""
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    if not (isinstance(value, gast.IfExp) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and A.names_read(gast.Tuple(elts=[value.body, value.orelse], ctx=gast.Load())) & set(flags)):
        return stmt
    name = stmt.targets[0].id
    return gast.If(test=value.test, body=[_branched(A.assign(name, value.body), flags)],
                   orelse=[_branched(A.assign(name, value.orelse), flags)])


def _none_test(node):
    """``(name, negated)`` if ``node`` is ``name is None`` (negated False) or ``name is not None``."""
    if not (isinstance(node, gast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot))):
        return None
    left, right = node.left, node.comparators[0]
    other = right if A.is_none(left) else left if A.is_none(right) else None
    if not isinstance(other, gast.Name):
        return None
    return other.id, isinstance(node.ops[0], gast.IsNot)


class _FlagTests(gast.NodeTransformer):
    def __init__(self, flags):
        self.flags = flags

    def visit_Compare(self, node):
        test = _none_test(node)
        if test is None or test[0] not in self.flags:
            return self.generic_visit(node)
        flag = A.load(self.flags[test[0]])
        return flag if test[1] else gast.UnaryOp(op=gast.Not(), operand=flag)


def _proven_by(test, outcome, facts=frozenset()):
    """The names ``test`` being ``outcome`` proves are not None: by a test ``d is not None``, or by
    a condition name of ``facts`` (``(c, outcome, name)``: ``name`` holds a value if ``c`` is ``outcome``)."""
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        return _proven_by(test.operand, not outcome, facts)
    if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And if outcome else gast.Or):
        return frozenset().union(*(_proven_by(v, outcome, facts) for v in test.values))
    if isinstance(test, gast.Name):
        return frozenset(name for cond, told, name in facts if cond == test.id and told == outcome)
    named = _none_test(test)
    return frozenset([named[0]]) if named is not None and named[1] == outcome else frozenset()


def _tested_name(test):
    """``(c, outcome)`` if ``test`` is true exactly when the name ``c`` is ``outcome`` (``c``, ``not c``)."""
    if is_not(test):
        inner = _tested_name(test.operand)
        return None if inner is None else (inner[0], not inner[1])
    return (test.id, True) if isinstance(test, gast.Name) else None


def _rebound(node):
    """Names ``node`` binds or deletes anywhere in it."""
    return {n.id for n in A.walk(node) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}


class _State:
    """What the flow knows at a point: ``proven``, the names holding the value Python's name holds;
    ``facts``, triples ``(c, outcome, name)``: ``name`` holds it if the condition name ``c`` is
    ``outcome``; ``constants``, pairs ``(c, truth)``: the condition name ``c`` is bound to a constant
    of that truth (``_returned1 = False``), so every fact ``(c, not truth, name)`` holds, there being
    no path on which ``c`` is ``not truth``. Facts are kept only where they say more than ``proven``
    and ``constants``, so equal knowledge is an equal state."""

    __slots__ = ("proven", "facts", "constants")

    def __init__(self, proven, facts=frozenset(), constants=frozenset()):
        self.proven = frozenset(proven)
        self.constants = frozenset(constants)
        self.facts = frozenset(f for f in facts if f[2] not in self.proven and (f[0], not f[1]) not in self.constants)

    def __eq__(self, other):
        return isinstance(other, _State) and (self.proven, self.facts, self.constants) == (
            other.proven, other.facts, other.constants)

    def __hash__(self):
        return hash((self.proven, self.facts, self.constants))

    def holds(self, fact):
        return fact in self.facts or fact[2] in self.proven or (fact[0], not fact[1]) in self.constants

    def knowing(self, names):
        return _State(self.proven | names, self.facts, self.constants)

    def forgetting(self, names):
        """``names`` rebound: a fact or constant about one of them no longer holds."""
        return _State(self.proven, {f for f in self.facts if f[0] not in names},
                      {c for c in self.constants if c[0] not in names})


def _meet(*states):
    """What holds on every path that reaches here (None: no path does). A fact may hold on every
    path without being stored on any: ``name`` proven on the paths where ``c`` may be ``outcome``,
    ``c`` constantly ``not outcome`` on the others (``if d: r = ...; _returned = True`` after
    ``_returned = False`` tells that ``r`` holds a value where ``_returned`` is true)."""
    reached = [s for s in states if s is not None]
    if not reached:
        return None
    proven = frozenset.intersection(*(s.proven for s in reached))
    unreached = {(c, not truth) for s in reached for c, truth in s.constants}
    somewhere = frozenset().union(*(s.proven for s in reached))
    candidates = {f for s in reached for f in s.facts} | {(c, o, n) for c, o in unreached for n in somewhere}
    facts = {f for f in candidates if all(s.holds(f) for s in reached)}
    return _State(proven, facts, frozenset.intersection(*(s.constants for s in reached)))


class _Flow:
    """What ``_State`` holds, statement by statement; reads where a name may not hold its value are
    collected in ``unproven`` as ``(name, statement)``. ``conditions`` are the names whose facts
    may be kept (``condition_names``)."""

    def __init__(self, names, conditions, resolve=None):
        self.names = frozenset(names)
        self.conditions = frozenset(conditions)
        self.resolve = resolve
        self.returned = {}  # id of a return statement: the state there
        self.loops = []  # per enclosing loop: the states at its breaks and at its continues
        self.unproven = []

    def reads(self, node, state, stmt):
        """Collect the reads in the expression ``node`` of names not proven in ``state``; an operand
        of ``is None`` is not read, and ``a if d is not None else b`` or ``d is not None and a``
        reads ``a`` where ``d`` holds a value."""
        if _none_test(node) is not None:
            return
        if isinstance(node, gast.IfExp):
            self.reads(node.test, state, stmt)
            self.reads(node.body, state.knowing(_proven_by(node.test, True, state.facts)), stmt)
            self.reads(node.orelse, state.knowing(_proven_by(node.test, False, state.facts)), stmt)
        elif isinstance(node, gast.BoolOp):
            for value in node.values:
                self.reads(value, state, stmt)
                state = state.knowing(_proven_by(value, isinstance(node.op, gast.And), state.facts))
        elif isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Load) and node.id in self.names - state.proven:
                self.unproven.append((node.id, stmt))
        else:
            for child in gast.iter_child_nodes(node):
                self.reads(child, state, stmt)

    def block(self, stmts, state):
        for s in stmts:
            if state is None:
                return None  # after a return, break or continue
            state = self.statement(s, state)
        return state

    def statement(self, s, state):
        if isinstance(s, gast.If):
            self.reads(s.test, state, s)
            body = self.block(s.body, state.knowing(_proven_by(s.test, True, state.facts)))
            orelse = self.block(s.orelse, state.knowing(_proven_by(s.test, False, state.facts)))
            return _meet(body, orelse) if body is None or orelse is None else self.branches(s, state, body, orelse)
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, state)
        if isinstance(s, (gast.Break, gast.Continue)):
            self.reads(s, state, s)
            self.loops[-1][isinstance(s, gast.Continue)].append(state)
            return None
        self.reads(s, state, s)
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and s.target.id in self.names - state.proven:
            self.unproven.append((s.target.id, s))  # ``dm += g`` reads dm
        if isinstance(s, (gast.Return, gast.Raise)):
            self.returned[id(s)] = state
            return None
        state = state.forgetting(_rebound(s))
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) \
                and s.targets[0].id in self.conditions:
            cond, value = s.targets[0].id, s.value
            negated = is_not(value)
            source = value.operand if negated else copied(value, self.resolve)
            if isinstance(source, gast.Name) and source.id in self.conditions:
                # ``c = d`` (``c = not d``): what ``d`` being true tells, ``c`` being true (false) does
                return _State(state.proven, state.facts | {(cond, told != negated, n)
                                                           for test, told, n in state.facts if test == source.id},
                              state.constants | {(cond, truth != negated) for test, truth in state.constants
                                                 if test == source.id})
            if isinstance(value, gast.Constant) and not A.is_none(value):
                state = _State(state.proven, state.facts, state.constants | {(cond, bool(value.value))})
        if _is_none_assignment(s):
            name = s.targets[0].id
            return _State(state.proven - {name}, {f for f in state.facts if f[2] != name}, state.constants)
        return state.knowing(A.names_stored(s) & self.names)

    def branches(self, s, before, body, orelse):
        """The state after ``if c:`` (reached in ``before``) whose branches end in ``body`` and
        ``orelse``: what holds on both, and, if ``c`` is a condition name the ``if`` does not
        rebind, that what holds on one branch only holds where ``c`` has that branch's outcome. If
        ``c`` is ``d is not None`` (``d is None``), what holds on its branch where ``d`` holds a value
        holds wherever ``d`` did before (``c = stop_gradient(d)`` of a saved ``d`` boxed as may be None)."""
        state = _meet(body, orelse)
        named = _none_test(s.test)
        if named is not None and named[0] in self.names:
            valued = body if named[1] else orelse
            told = {(cond, outcome, n) for cond, outcome, d in before.facts if d == named[0]
                    and cond not in _rebound(s) for n in valued.proven - state.proven}
            return _State(state.proven, state.facts | told, state.constants)
        tested = _tested_name(s.test)
        if tested is None or tested[0] not in self.conditions or tested[0] in _rebound(s):
            return state
        cond, outcome = tested
        told = {(cond, outcome, n) for n in body.proven - orelse.proven}
        told |= {(cond, not outcome, n) for n in orelse.proven - body.proven}
        return _State(state.proven, state.facts | told, state.constants)

    def loop(self, s, state):
        """A loop's exit state, its body followed until the state at its head no longer shrinks
        (reads are collected on every pass: a state only shrinks, so a later pass finds them all)."""
        head = state
        while True:
            self.reads(s.iter if isinstance(s, gast.For) else s.test, head, s)
            self.loops.append(([], []))
            end = self.block(s.body, head)  # (a loop's target is no condition name)
            breaks, continues = self.loops.pop()
            again = _meet(head, end, *continues)
            if again == head:
                break
            head = again
        return _meet(self.block(s.orelse, head), *breaks)
