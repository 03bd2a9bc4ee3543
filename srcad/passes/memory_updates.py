"""In-place updates, for the memory analysis (``passes.memory``): what an update changes (every
other name sharing the memory is stale), and what a call may change: a call made for its
effect, a write through ``out=``, a function of yours updating what it is given (its summary),
a method of a value srcad does not know.
"""
import gast

from .. import astutil as A
from ..runtime_stores import check_array_receiver
from .call_options import overwritten_arguments
from .fresh import (MUTATING_METHODS, NO_EFFECT, is_in, is_ufunc, may_change_arguments, new_array_call, only_logs,
                    scatter_add_target, stores_in_a_global, updates_first_argument)
from .memory_refusals import Refusals, out_argument_refusal, unseen_change_refusal
from .memory_locations import Memory

_ARGUMENT_CHANGING_METHODS = {"shuffle"}  # (a random generator's: rng.shuffle(y))


def globals_of(summary):
    """The globals a function of yours updates in place (its summary's), which its caller updates too."""
    return {("global", owner) for owner in summary[3]}


class Updates(Refusals):
    """The updates of ``memory._Flow`` (which supplies ``summary``, ``reads`` and the sets
    ``mutated``, ``by_calls`` and ``holders`` it fills)."""

    def may_change_arguments(self, state, call, callee):
        """May ``call``, its result assigned, change its arguments in place? Where its callee,
        or a global callable it is given (``map(operator.setitem, ...)``), may
        (``fresh.may_change_arguments``). Of methods of a value srcad does not know, only
        ``shuffle`` is taken to (``rng.shuffle(y)``): the others run as written."""
        if callee.kind == "object":
            return self.once("changes arguments", call, lambda: bool(
                may_change_arguments(callee.obj) or overwritten_arguments(call) or any(
                    may_change_arguments(self.global_object(a)) for a in self.operands(call))))
        if callee.kind == "method" and callee.name in _ARGUMENT_CHANGING_METHODS:
            receiver = self.memory(state, call.func.value)
            return not (receiver.array or receiver.sequence)
        return False

    def effect(self, s, state):
        call = s.value
        callee = A.anno(call, "callee")
        if self.check:
            out = self.out_argument(call)
            if out is not None:
                raise out_argument_refusal(call, s)
        state = self.written_through_out(s, state, call)
        self.reads(s, self.names_read(call), state, observe=False)
        if callee is not None and callee.kind == "object" and callee.obj is check_array_receiver and isinstance(
                call.args[0], gast.Name):  # past the check, the receiver is an array or a number: it holds no items
            state.names[call.args[0].id] = Memory(self.memory(state, call.args[0]).own, array=True, listy=())
            return state
        if callee is not None and callee.kind == "object" and (is_in(callee.obj, NO_EFFECT) or only_logs(callee.obj)):
            return state
        if callee is not None and callee.kind == "method" and callee.name == "append" and len(call.args) == 1:
            pushed = self.memory(state, call.args[0])
            if not pushed.array:
                state.stacks_of_arrays.discard(call.func.value.id)
            if not pushed.sequence:
                state.stacks_of_sequences.discard(call.func.value.id)
            return self.update(s, state, call.func.value.id, exempt={call.func.value.id},
                               stored=self.memory(state, call.args[0]), structure=True)
        if callee is not None and callee.kind == "method" and callee.name == "pop" and not call.args:
            # L.pop() for its effect: reverse binds the item, as for y = L.pop(), and pushes it back
            return self.update(s, state, call.func.value.id, exempt={call.func.value.id}, structure=True)
        scatter = scatter_add_target(call)
        if scatter is not None:
            return self.update(s, state, scatter.id, exempt={scatter.id})
        return self.changes(s, state, call)

    def written_through_out(self, s, state, call):
        """A call writing into its ``out`` argument (``np.multiply(a, b, out=dst)``) updates it
        in place. (Checking, such a call is refused; a helper's summary counts the update, so a
        call of it is known to change what it is given.)"""
        if A.anno(call, "callee") is not None:
            out = self.out_argument(call)
        else:  # srcad's own calls (a value stack's append), read by keyword
            out = next((k.value for k in call.keywords if k.arg == "out"), None)
        for target in (out.elts if isinstance(out, gast.Tuple) else [out]) if out is not None else ():
            if isinstance(target, gast.Name):
                state = self.update(s, state, target.id, exempt={target.id}, writes=False, by_call=True, whole=True)
        return state

    def changes(self, s, state, call, local_only=False):
        """A call that may change its operands in place, with no save srcad can undo;
        ``local_only``: only the values the function itself binds."""
        callee = A.anno(call, "callee")
        # a call for its effect may change its arguments (np.copyto(a, b), rng.shuffle(a)), and
        # its receiver if it is a known in-place method (a.sort())
        changed = [a for a in call.args if isinstance(a, gast.Name)]
        scratch = overwritten_arguments(call)
        if scratch:  # scipy.linalg.solve(A, b, overwrite_b=True): b
            changed = [a for _, a in scratch if isinstance(a, gast.Name)]
        elif callee is not None and callee.kind == "object":
            summary = self.summary(callee.obj, call=call)
            if summary is not None:  # a user function: the arguments it updates in place
                self.mutated |= globals_of(summary)
                bound = self.bind_call(callee.obj, call) or {}
                changed = [a for p in summary[1] for a in bound.get(p, ()) if isinstance(a, gast.Name)]
                for a in changed:
                    self.tracked(state, a.id)
            elif new_array_call(callee.obj, call) or is_ufunc(callee.obj):
                changed = []  # without out= these only read their arguments
            elif updates_first_argument(callee.obj):  # np.copyto(dst, src), np.multiply.at(a, i, v): the first
                changed = [call.args[0]] if call.args and isinstance(call.args[0], gast.Name) else []
            elif stores_in_a_global(callee.obj):
                changed = []  # HISTORY.append(y) changes the list only (refused if y carries a derivative)
                if isinstance(call.func, gast.Attribute) and isinstance(call.func.value, gast.Name):
                    self.mutated.add(("global", call.func.value.id))  # what a helper stores there escapes it
        if callee is not None and callee.kind == "method" and callee.name in MUTATING_METHODS:
            changed = [call.func.value]  # y.fill(v), L.insert(i, v), L.pop(i): the arguments are only read
        elif callee is not None and callee.kind == "method" and isinstance(call.func.value, gast.Name):
            # obj.step() of an object srcad does not know may change it: srcad runs it as written, on a
            # copy where the object is (or is held by) an argument
            reached = {loc for loc in self.memory(state, call.func.value).all() if loc[0] in ("arg", "arg-item")}
            self.mutated |= reached
            self.by_calls |= reached
        if local_only:
            changed = [a for a in changed if a.id in self.local and a.id not in self.params]
        for arg in changed:
            seen = self.memory(state, arg).own & state.observed
            if seen and self.check:
                raise unseen_change_refusal(call, arg, s)
        yours = call if callee is not None and callee.kind == "object" and not scratch else None
        for arg in changed:
            state = self.update(s, state, arg.id, exempt={arg.id}, writes=False, by_call=True, call=yours)
        return state

    def update(self, s, state, name, exempt, stored=None, writes=True, structure=False, by_call=False, whole=False,
               key=None, call=None):
        """``name``'s memory changes in place at ``s``: every other name sharing it is stale.
        ``writes``: srcad's own code writes there (an element update), so it must not be an
        argument's memory reached through another name, nor a global's. ``structure``: a list
        grows or shrinks (append, pop), which changes only the list object. ``by_call``: a call
        changes it, which srcad runs as written where it carries no derivative. ``whole``: what
        it holds changes too (the arrays of an ``out=(a, b)`` tuple). ``key``: ``stored`` is stored
        under this constant string key (``name["S"] = value``). ``call``: the call of a function
        of yours that changes it (for the refusal's words)."""
        memory = self.name_memory(state, name)
        changed = memory.listy if structure else memory.all() if whole else memory.own
        self.mutated |= changed
        if by_call:
            self.by_calls |= changed
        if self.check:  # srcad's own writes may not reach an argument through another name; nothing may reach a global
            self.check_caller_memory(s, state, name, changed, arguments=writes, call=call)
        names = state.names
        if all(kind in ("new", "old") for kind, _ in changed):
            # memory statements made: only the names noted holding it (``holders``) may share it
            noted = sorted(set().union(*(self.holders.get(m, ()) for _, m in changed)))
            in_state = [(n, names[n]) for n in noted if n in names]
            sharers = in_state
        else:
            in_state = list(names.items())
            # a parameter not rebound yet is in no state: its memory is the argument's (v = x; v -= 1)
            unbound = sorted(self.params - set(names))
            sharers = [*in_state, *((p, self.name_memory(state, p)) for p in unbound)]
        for other, m in sharers:
            if other not in exempt and not m.all().isdisjoint(changed) and other not in state.stale:
                # (the binding of the name updated through, where one statement made it on every path)
                state.stale[other] = (name, s, None if name in state.ambiguous else state.bound.get(name))
        # (the names whose memory changes are rewritten in place: the state's dict is its own)
        if stored is not None and (stored.all() or key is not None):  # a list keeps what is stored in it
            added = stored.all()
            holders = [(n, m) for n, m in in_state if not m.array and not m.all().isdisjoint(changed)]
            for n, m in holders:
                names[n] = Memory(m.own, m.inner | added, sequence=m.sequence,
                                  keys=_keys_after_store(m, changed, key, stored, n == name))
            for n, m in holders:
                self.note_holder(n, added)
        elif changed:  # a dict changed otherwise (d.update(...), a call): which key holds what is unknown
            for n, m in [(n, m) for n, m in in_state if m.keys is not None and not m.own.isdisjoint(changed)]:
                names[n] = Memory(m.own, m.inner, m.array, m.listy, m.sequence, m.items)
        return state

    def note_holder(self, name, *held):
        """``name`` may hold the locations in each set of ``held`` (``holders``)."""
        for locations in held:
            for kind, made_by in locations:
                if kind == "new" or kind == "old":
                    self.holders.setdefault(made_by, set()).add(name)

    def tracked(self, state, name):
        """``name``, entered in ``state`` if it is an argument or a global not bound yet, so a
        helper srcad runs on a copy of it makes it stale as it makes a local."""
        if name not in state.names:
            state.names[name] = self.name_memory(state, name)
        return name


def _keys_after_store(memory, changed, key, stored, through_it):
    """The known keys (``Memory.keys``) of a name sharing the memory ``changed`` after ``stored`` is
    stored there (under the constant ``key``, or None): the name the store goes through holds
    ``stored`` under ``key``; another that may be the same dict may hold it under ``key`` (or under
    any key); one that holds the changed dict as an item keeps its own keys."""
    keys = memory.keys
    if keys is None or not memory.own & changed:
        return keys
    if key is None:
        return {k: m | stored for k, m in keys.items()}
    if through_it:
        return {**keys, key: stored}
    return {**keys, key: keys[key] | stored} if key in keys else keys
