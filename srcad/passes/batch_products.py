"""Batched weight adjoints: what a reverse loop adds up step by step, computed once after it.

A recurrent model's reverse loop adds one small product per step to a weight's adjoint,
``dW += h.T @ d`` (and ``db += np.sum(d, axis=(0,))`` to a bias's): fifty 16×64 products
cost more than one 800×64 product, which is what an expert writes. Guarantee: afterwards
such a statement of a reverse loop keeps its operands instead (``_d_steps.append(d)``), and
right after the loop one product over the operands stacked by rows adds the same sum:
ΣP_tᵀD_t = [P_1; …; P_T]ᵀ[D_1; …; D_T]. Only the order of the floating-point additions
changes. It is done where all of these hold, each known when the code is generated:

- the loop is a statement of the reverse sweep itself (not nested, not in a ``try`` or
  ``with`` region), with no jump, no ``raise`` and no ``else``: each pass runs every
  statement of its body once, and the statement after it runs next;
- the accumulator is read nowhere in the loop and nowhere before it, and holds a new array
  of known float dtype (``zeros_like``, an arithmetic result): no other name sees its
  partial sums;
- the operands are names of float arrays of known shape (two dimensions for a product, at
  least one for a sum). One updated in place (``d += e``, ``d[:, :H] += e``) is kept only
  where it alone holds its array, is made anew in each pass, and every update of it comes
  after that and before the statement keeping it. A name bound again between two
  statements that keep it is kept in a list per value;
- nothing in the loop can change a kept array before the sum after it: the loop updates in
  place (``x += y``, ``x[i] = y``) only names whose array no kept name may hold (it
  passes between names only by ``x = y``, each bound otherwise by arithmetic or
  ``zeros_like`` and read otherwise only by arithmetic), and calls only NumPy ufuncs and
  reductions without ``out=``, srcad's adjoint helpers that write nothing, and the value
  stacks' ``append`` and ``pop``.

Code differentiated again reads lists of arrays and ``np.concatenate`` as any code.

>>> import gast, numpy as np
>>> from srcad import astutil as A, runtime
>>> from srcad.naming import Namer
>>> from srcad.passes.shapes import Spec
>>> fn = gast.parse('''
... def f_adjoint(W, xs, v=None):
...     dW = zeros_like(W)
...     for t in reversed(_range1):
...         x = xs[t]
...         d = v * x
...         dW += x.T @ d
...     return finish(dW, W)
... ''').body[0]
>>> spec = Spec((3, 2), np.float64)
>>> _ = A.set_anno(fn, "specs", {"W": Spec((2, 2), np.float64), "x": spec, "d": spec})
>>> _ = A.set_anno(fn, "adjoint_of", {"dW": "W"})
>>> _ = A.set_anno(fn, "n_forward", 0)
>>> _ = A.set_anno(fn, "namer", Namer(["W", "xs", "v", "dW", "x", "d", "t", "_range1"]))
>>> print(A.to_source(batch_products(fn, lambda name, obj: name)).strip())
def f_adjoint(W, xs, v=None):
    dW = zeros_like(W)
    _x_steps = []
    _d_steps = []
    for t in reversed(_range1):
        x = xs[t]
        d = v * x
        _x_steps.append(x)
        _d_steps.append(d)
    if _x_steps:
        _x_all = np.concatenate(_x_steps)
        _d_all = np.concatenate(_d_steps)
        dW += _x_all.T @ _d_all
    return finish(dW, W)
"""
import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from .shapes import Spec

_ARITHMETIC = (gast.BinOp, gast.UnaryOp)
_STACK_METHODS = ("append", "pop")
# srcad's adjoint helpers that write into no array (some return an argument itself)
_UNCHANGING_HELPERS = ("full_of", "zeros_like", "unbroadcast", "add_grads", "sum_to_reduced")


def batch_products(node, ref):
    """Add each reverse loop's per-step weight adjoints after the loop, in one product; see
    the module doc. ``ref(name, obj)`` names an object in generated code. Returns ``node``."""
    n = A.anno(node, "n_forward")
    fwd, rev = node.body[:n], node.body[n:]
    np_name = ref("np", np)
    if not any(isinstance(s, gast.For) and any(_candidate(t, np_name) for t in s.body) for s in rev):
        return node  # the common case: the facts below cost a walk of the whole function
    facts = _Facts(node, A.anno(node, "specs") or {}, A.anno(node, "adjoint_of") or {}, ref)
    out = []
    for position, s in enumerate(rev):
        first, after = _batch(s, rev[:position], facts) if isinstance(s, gast.For) else ([], [])
        out.extend(first + [s] + after)
    node.body = fwd + out
    return node


class _Facts:
    """What the pass reads off the whole function: bindings, reads and specs by name."""

    def __init__(self, node, specs, adjoint_of, ref):
        self.namer = A.anno(node, "namer")
        self.np = ref("np", np)
        self.makers = {ref(name, getattr(runtime, name)) for name in ("zeros_like", "full_of")}
        self.helpers = {ref(name, getattr(runtime, name)) for name in _UNCHANGING_HELPERS}
        self.bindings, self.reads = {}, {}  # name -> [statement], [Name node]
        self.updates = {}  # name -> the statements updating its array in place
        for s in A.walk_statements(node.body):
            for target in _bound(s):
                self.bindings.setdefault(target, []).append(s)
            for target in _updated(s):
                self.updates.setdefault(target, []).append(s)
        for name in A.walk(node):
            if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Load):
                self.reads.setdefault(name.id, []).append(name)
        self.parents = {}
        for parent in A.walk(node):
            for child in gast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
        self.specs, self.adjoint_of = specs, adjoint_of

    def spec(self, name):
        spec = self.specs.get(name)
        if not isinstance(spec, Spec):
            spec = self.specs.get(self.adjoint_of.get(name))
        if isinstance(spec, Spec) and spec.python is None and spec.dtype.kind == "f":
            return spec
        return None

    def fresh_binding(self, s):
        """Is ``s`` ``name = <arithmetic>``, ``name = zeros_like(...)`` or ``name =
        full_of(...)``: a new array?"""
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)):
            return False
        value = s.value
        return isinstance(value, _ARITHMETIC) or (
            isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id in self.makers)

    def read_by_arithmetic_at(self, read):
        """Is the name ``read`` an operand of arithmetic (directly or as ``name.T``), or the
        array ``np.sum`` reduces: a read that passes its array on to nothing?"""
        parent = self.parents.get(id(read))
        if isinstance(parent, gast.Subscript) and parent.value is read and isinstance(parent.ctx, gast.Store):
            return True  # an update of its items (``passes.batch_products._updated``)
        if isinstance(parent, gast.Attribute) and parent.attr == "T":
            read, parent = parent, self.parents.get(id(parent))
        return (isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare))
                or isinstance(parent, gast.AugAssign) and parent.value is read
                or _reduced(parent, self.np) is read)



def _updated(s):
    """The names whose array statement ``s`` updates in place (``x += y``, ``x[i] = y``, ``x[i] += y``)."""
    targets = s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(s, gast.AugAssign) else []
    names = [t.id for t in targets if isinstance(s, gast.AugAssign) and isinstance(t, gast.Name)]
    for t in targets:
        names.extend(n.value.id for n in A.walk(t) if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
                     and isinstance(n.value, gast.Name))
    return names


def _bound(s):
    """The names statement ``s`` binds (or updates in place) itself, not in nested statements."""
    targets = []
    if isinstance(s, gast.Assign):
        targets = s.targets
    elif isinstance(s, (gast.AugAssign, gast.AnnAssign, gast.For)):
        targets = [s.target]
    names = []
    for t in targets:
        names.extend(n.id for n in A.walk(t) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    return names


def _reduced(node, np_name):
    """The array of ``np.sum(a, axis=(0,))``, else None."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "sum"
            and isinstance(node.func.value, gast.Name) and node.func.value.id == np_name
            and len(node.args) == 1 and isinstance(node.args[0], gast.Name)):
        return None
    if [k.arg for k in node.keywords] != ["axis"]:
        return None
    axis = node.keywords[0].value
    if isinstance(axis, gast.Tuple) and len(axis.elts) == 1:
        axis = axis.elts[0]
    return node.args[0] if isinstance(axis, gast.Constant) and axis.value == 0 and type(axis.value) is int else None


def _candidate(s, np_name):
    """``(accumulator, kind, operands)`` of ``acc += P.T @ D`` ("product", (P, D)) or ``acc +=
    np.sum(D, axis=(0,))`` ("sum", (D,)), else None."""
    if not (isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add) and isinstance(s.target, gast.Name)):
        return None
    value = s.value
    if (isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult)
            and isinstance(value.left, gast.Attribute) and value.left.attr == "T"
            and isinstance(value.left.value, gast.Name) and isinstance(value.right, gast.Name)):
        return s.target.id, "product", (value.left.value.id, value.right.id)
    array = _reduced(value, np_name)
    return (s.target.id, "sum", (array.id,)) if array is not None else None


def _loop_is_plain(loop, facts):
    """No jump, no ``else``, no region, only NumPy ufuncs, reductions and value stacks: each
    pass runs every statement of the body once."""
    if loop.orelse:
        return False
    for node in A.walk(gast.Module(body=loop.body, type_ignores=[])):
        if isinstance(node, (gast.Return, gast.Break, gast.Continue, gast.Raise, gast.Try, gast.With,
                             gast.FunctionDef, gast.Lambda, gast.Yield)):
            return False
        if isinstance(node, gast.If) and A.anno(node.test, "region") is not None:
            return False
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and not isinstance(node.value, gast.Name):
            return False  # an update of an item of an item: the name it reaches is not known
        if isinstance(node, gast.Call) and not _harmless_call(node, facts):
            return False
    return True


def _harmless_call(call, facts):
    """A call that changes no array: a NumPy ufunc or reduction without ``out=``, one of
    srcad's adjoint helpers that write nothing, or a value stack's ``append``/``pop`` (the
    stacks hold saved values; nothing here is pushed)."""
    func = call.func
    if isinstance(func, gast.Name):
        return func.id in facts.helpers
    if not isinstance(func, gast.Attribute) or not isinstance(func.value, gast.Name):
        return False
    if func.attr in _STACK_METHODS:
        return func.value.id.endswith("_stack")
    if func.value.id != facts.np or any(k.arg == "out" for k in call.keywords):
        return False
    obj = getattr(np, func.attr, None)
    return isinstance(obj, np.ufunc) or obj in (np.sum, np.mean, np.dot, np.matmul, np.transpose)


def _batch(loop, before, facts):
    """Rewrite ``loop``'s batchable statements in place; return the statements to run before
    it and after it."""
    if not _loop_is_plain(loop, facts):
        return [], []
    found = [(s, c) for s in loop.body if (c := _candidate(s, facts.np)) is not None]
    if not found:
        return [], []
    accumulators = {acc for _, (acc, _, _) in found}
    kept = {name for _, (_, _, operands) in found for name in operands}
    finished = [u for name in kept for u in _updates_before_kept(name, loop, found, facts) or ()]
    # any other in-place update in the loop must not reach a kept array or an accumulator
    for statement in A.walk_statements(loop.body):
        if any(statement is t for t, _ in found) or any(statement is u for u in finished):
            continue
        for name in _updated(statement):
            sharing = _sharing_names(name, facts)
            if sharing is None or sharing & (kept | accumulators):
                return [], []
    read_before = {n.id for n in A.walk(gast.Module(body=before, type_ignores=[])) if isinstance(n, gast.Name)
                   and isinstance(n.ctx, gast.Load)}
    targets = [s.target for s, _ in found]
    for acc in accumulators:
        spec = facts.spec(acc)
        if spec is None or not spec.shape or acc in read_before or acc in kept:
            return [], []
        if not all(facts.fresh_binding(s) or (isinstance(s, gast.AugAssign) and s.target.id == acc)
                   for s in facts.bindings.get(acc, ())):
            return [], []
        in_loop = [n for n in A.walk(gast.Module(body=loop.body, type_ignores=[]))
                   if isinstance(n, gast.Name) and n.id == acc]
        if any(not any(n is t for t in targets) for n in in_loop):
            return [], []
    for s, (acc, kind, operands) in found:
        for name in operands:
            spec = facts.spec(name)
            if spec is None or not spec.shape or (kind == "product" and len(spec.shape) != 2):
                return [], []
    return _rewrite(loop, found, facts)


def _updates_before_kept(name, loop, found, facts):
    """The in-place updates of a kept ``name`` that finish its array before it is kept: where
    ``name`` alone holds its array, is bound once in the loop's body (by arithmetic or
    ``zeros_like``/``full_of``: a new array each pass) and every update of it in the function
    is a statement of that body between the binding and the first statement keeping it, so
    each pass keeps an array no later statement changes. None where it has no updates or
    they are not so."""
    updates = facts.updates.get(name, [])
    if not updates or _sharing_names(name, facts) != {name}:
        return None
    position = {id(s): i for i, s in enumerate(loop.body)}
    made = [s for s in loop.body if name in _bound(s) and not isinstance(s, gast.AugAssign)]
    nested = [s for t in loop.body for s in A.walk_statements([t])
              if s is not t and (name in _bound(s) or name in _updated(s))]
    first_kept = min((position[id(s)] for s, (_, _, operands) in found if name in operands), default=None)
    if len(made) != 1 or nested or not facts.fresh_binding(made[0]) or first_kept is None:
        return None
    start = position[id(made[0])]
    if all(id(u) in position and start < position[id(u)] < first_kept for u in updates):
        return updates
    return None


def _sharing_names(name, facts):
    """The names that may hold ``name``'s array, if only ``x = y`` passes it on: each of them
    bound by arithmetic, ``zeros_like``, an in-place update or another of them, and read
    only by arithmetic or such an assignment; else None (not known)."""
    found, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in found:
            continue
        found.add(n)
        for s in facts.bindings.get(n, ()):
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.Name):
                todo.append(s.value.id)
            elif not (facts.fresh_binding(s) or isinstance(s, gast.AugAssign)):
                return None
        for read in facts.reads.get(n, ()):
            parent = facts.parents.get(id(read))
            if isinstance(parent, gast.Assign) and parent.value is read and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0], gast.Name):
                todo.append(parent.targets[0].id)
            elif not facts.read_by_arithmetic_at(read):
                return None
    return found


def _rewrite(loop, found, facts):
    """Keep the operands in lists, one per value a name holds where it is kept (a name bound
    again between two statements keeping it gets a second list); return the statements
    making the lists, and those adding the batched sums."""
    lists = []  # (list name, operand name)
    current = {}  # operand name -> its list, while the name is not bound again
    uses = {}  # id of a statement kept -> its operands' lists
    body = []
    for s in loop.body:
        match = next((c for t, c in found if t is s), None)
        if match is not None:
            uses[id(s)] = []
            for name in match[2]:
                if name not in current:
                    current[name] = len(lists)
                    lists.append((facts.namer.unique(f"_{name.lstrip('_')}_steps"), name))
                    push = gast.Attribute(value=A.load(lists[-1][0]), attr="append", ctx=gast.Load())
                    body.append(gast.copy_location(gast.Expr(value=gast.Call(func=push, args=[A.load(name)],
                                                                               keywords=[])), s))
                uses[id(s)].append(current[name])
        else:
            body.append(s)
        for bound in (n for t in A.walk_statements([s]) for n in _bound(t)):
            current.pop(bound, None)
    loop.body = body
    creations = [A.assign(rows, gast.List(elts=[], ctx=gast.Load())) for rows, _ in lists]
    stacked = [facts.namer.unique(f"_{name.lstrip('_')}_all") for _, name in lists]
    after = [A.assign(all_rows, gast.Call(func=gast.Attribute(value=A.load(facts.np), attr="concatenate",
                                                              ctx=gast.Load()), args=[A.load(rows)], keywords=[]))
             for (rows, _), all_rows in zip(lists, stacked)]
    for s, (acc, kind, _) in found:
        operands = [A.load(stacked[i]) for i in uses[id(s)]]
        if kind == "product":
            value = gast.BinOp(left=gast.Attribute(value=operands[0], attr="T", ctx=gast.Load()), op=gast.MatMult(),
                               right=operands[1])
        else:
            axis = gast.keyword(arg="axis", value=gast.Tuple(elts=[A.const(0)], ctx=gast.Load()))
            value = gast.Call(func=gast.Attribute(value=A.load(facts.np), attr="sum", ctx=gast.Load()),
                              args=operands, keywords=[axis])
        after.append(gast.AugAssign(target=A.store(acc), op=gast.Add(), value=value))
    guard = gast.If(test=A.load(lists[0][0]), body=after, orelse=[])  # the loop ran at least once
    A.set_anno(guard, "origin", A.anno(loop, "origin"))  # commented as the loop's line
    return creations, [guard]
