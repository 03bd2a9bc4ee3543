"""Loops of the reverse transform: the forward sweep counts trips where it must, and the
reverse sweep runs the body backwards with each adjoint in one state at the top of the body
(iterated to a fixpoint).

>>> import gast
>>> from srcad import astutil as A
>>> body = [A.assign("y", A.const(1))]
>>> print(A.to_source(gast.Module(body=trip_counter("_n1", body) + body, type_ignores=[])).strip())
_n1 = 0
_n1 = _n1 + 1
y = 1
"""
import gast
import numpy as np

from .. import astutil as A
from ..naming import builtin
from . import checkpoint_adjoint
from .reverse_state import ZERO, loop_entry_state, placeholder
from .shapes import Spec


class Loops:
    """The loop handling of ``_Reverse``."""

    def forward_loop(self, s, loops):
        """The forward sweep of a loop, with a trip counter where the reverse loop needs one
        (a ``while``, or a ``for`` that may break)."""
        if isinstance(s, gast.For) and checkpoint_adjoint.checkpointed_loop(self.node, s) is not None:
            checkpointed = checkpoint_adjoint.forward_loop(self, s, loops)
            if checkpointed is not None:
                return checkpointed
        if isinstance(s, gast.For):
            site = self.site("name", s.target.id, loops, origin=A.anno(s, "origin"))
            A.set_anno(s, "site", site)
            out = [placeholder("save", site)]
            body = self.forward(s.body, loops + (s,))
            if any(isinstance(n, gast.Break) for n in gast.walk(gast.Module(body=s.body, type_ignores=[]))):
                out.extend(self.new_counter(s, loops))
                out.extend(trip_counter(A.anno(s, "counter")[0], body))
            return out + [gast.For(target=s.target, iter=s.iter, body=body, orelse=[], type_comment=None)]
        out = self.new_counter(s, loops)
        body = self.forward(s.body, loops + (s,))
        out.extend(trip_counter(A.anno(s, "counter")[0], body))
        return out + [gast.While(test=s.test, body=body, orelse=[])]

    def new_counter(self, s, loops):
        """A trip counter for loop ``s`` (annotation ``"counter"``), recorded like any value."""
        counter = self.namer.fresh("_n")
        site = self.site("name", counter, loops)
        A.set_anno(s, "counter", (counter, site))
        return [placeholder("save", site)]

    def reverse_loop(self, s):
        assigned = A.names_stored(gast.Module(body=s.body, type_ignores=[]))
        if isinstance(s, gast.For):
            assigned.add(s.target.id)
        entry = dict(self.state)
        start = dict(entry)
        snapshot = (dict(self.namer.counters), set(self.namer.taken), dict(self.adjoint_names))
        for _ in range(6):
            self.namer.counters, self.namer.taken, self.adjoint_names = (
                dict(snapshot[0]), set(snapshot[1]), dict(snapshot[2]))
            self.adjoint_of = {name: var for var, name in snapshot[2].items()}
            self.state = dict(start)
            body = self.reverse(s.body)
            end = self.state
            target = {}
            defined = A.anno(s, "defined_before") or set()
            for var in set(start) | set(end):
                a, b = start.get(var, ZERO), end.get(var, ZERO)
                target[var] = loop_entry_state(a, b, var not in assigned, var in defined)
            if all(target[v] == start.get(v, ZERO) for v in target):
                break
            start = target
        body[:0] = self.recomputed_indices(s, body)
        pre = []
        for var, want in sorted(start.items()):
            pre.extend(self.convert(var, entry.get(var, ZERO), want))
        for var, want in sorted(start.items()):
            body.extend(self.convert(var, end.get(var, ZERO), want))
        self.state = dict(start)
        counter = A.anno(s, "counter")
        if isinstance(s, gast.For):
            rng = A.load(s.iter.id)
            if counter is not None:
                rng = gast.Subscript(value=rng, slice=gast.Slice(None, A.load(counter[0]), None), ctx=gast.Load())
            it = gast.Call(func=builtin("reversed"), args=[rng], keywords=[])
            loop = gast.For(target=A.store(s.target.id), iter=it, body=body or [gast.Pass()], orelse=[],
                            type_comment=None)
            post = [placeholder("restore", A.anno(s, "site"))]
            if A.anno(s, "checkpoint") is not None:  # segment by segment, each recomputed first
                return pre + checkpoint_adjoint.reverse_loop(self, s, loop) + post
        else:
            it = gast.Call(func=builtin("range"), args=[A.load(counter[0])], keywords=[])
            loop = gast.For(target=A.store(self.namer.fresh("_i")), iter=it, body=body or [gast.Pass()],
                            orelse=[], type_comment=None)
            post = []
        if counter is not None:
            post.append(placeholder("restore", counter[1]))
        return pre + [loop] + post


    def recomputed_indices(self, s, reverse_body):
        """Index arithmetic on the counter of the ``for`` loop ``s`` (``k = i - 1``, a Python
        int by its spec, of the counter, int constants, names the loop does not assign or
        update and index arithmetic before it), recomputed at the top of ``reverse_body``
        where it reads the result: the reverse sweep then reads no saved ``k``
        (``record_values`` keeps none), where a value stack would push and pop one per trip.
        Only a name bound once in the function, in the run of assignments that starts the
        loop body (every trip runs it), and not read in the body before it is bound: its
        value is then the same everywhere in the reverse body, which reads it under a name of
        its own."""
        if not isinstance(s, gast.For) or A.anno(s, "checkpoint") is not None:
            return []
        assigned = A.names_stored(gast.Module(body=s.body, type_ignores=[]))
        bindings = self.bindings

        def unchanged(name):
            return name not in assigned and name not in self.updated_in_place

        read_before, recomputed = set(), []
        for t in s.body:
            if not isinstance(t, gast.Assign):
                break  # only the straight run of assignments at the top of the body, which every trip runs
            if (isinstance(t.targets[0], gast.Name) and isinstance(t.value, gast.BinOp)
                    and isinstance(t.value.op, _INDEX_ARITHMETIC)):
                name = t.targets[0].id
                # the counter, where the body leaves it as the loop set it, and what is recomputed before
                known = {r.targets[0].id for r in recomputed} | ({s.target.id} - assigned)
                if (bindings.get(name) == 1 and name not in read_before and self.spec(name) == _INT and all(
                        _stable_operand(o, known, unchanged) for o in (t.value.left, t.value.right))):
                    recomputed.append(A.assign(name, A.deepcopy(t.value)))
            read_before |= A.names_read(t)
        read = A.names_read(gast.Module(body=reverse_body, type_ignores=[]))
        out = []
        for t in reversed(recomputed):  # only what the reverse body reads, directly or through another
            if t.targets[0].id in read:
                out.insert(0, t)
                read |= A.names_read(t)
        if not out:
            return []
        # under a name of its own: the forward's value stays where the code after the loop reads it
        renamed = {t.targets[0].id: self.namer.unique(f"{t.targets[0].id}_again") for t in out}
        reverse_body[:] = A.deepcopy(reverse_body)  # a rule may have placed a node of the forward sweep
        for node in A.walk(gast.Module(body=out + reverse_body, type_ignores=[])):
            if isinstance(node, gast.Name) and node.id in renamed:
                node.id = renamed[node.id]
        return out


_INDEX_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)
_INT = Spec((), np.int64, int)


def _stable_operand(node, known, unchanged):
    """An operand the reverse body sees as the forward did: an int constant, the loop counter
    or a name recomputed before it (``known``), or a name the loop leaves ``unchanged``."""
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    return isinstance(node, gast.Name) and (node.id in known or unchanged(node.id))


def binding_counts(node):
    """How many statements bind each name of the function (assignments, loop targets)."""
    counts = {}
    for n in A.walk(node):
        if isinstance(n, gast.Assign):
            targets = n.targets
        else:
            targets = [n.target] if isinstance(n, (gast.For, gast.AugAssign)) else []
        for t in targets:
            for name in A.walk(t):
                if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
                    counts[name.id] = counts.get(name.id, 0) + 1
    return counts


def trip_counter(name, body):
    """``name = 0`` before a loop and ``name = name + 1`` first in its body."""
    step = A.assign(name, gast.BinOp(left=A.load(name), op=gast.Add(), right=A.const(1)))
    body.insert(0, A.set_anno(step, "counter_init", True))
    return [A.set_anno(A.assign(name, A.const(0)), "counter_init", True)]


def mark_defined_before_loops(stmts, defined):
    """Annotate each loop with the names bound on every path that reaches it."""
    defined = set(defined)
    for s in stmts:
        if isinstance(s, (gast.For, gast.While)):
            A.set_anno(s, "defined_before", set(defined))
            inner = defined | ({s.target.id} if isinstance(s, gast.For) else set())
            mark_defined_before_loops(s.body, inner)
        elif isinstance(s, gast.If):
            defined |= mark_defined_before_loops(s.body, defined) & mark_defined_before_loops(s.orelse, defined)
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            defined.add(s.targets[0].id)
    return defined
