"""Memory analysis: which names may share memory, decided fail closed.

What a value may share is decided in ``passes.memory_values`` (an allowlist of operations
that make new memory). A user function whose source srcad reads is summarised: which
arguments its result may share and which it updates in place.

The analysis is flow-sensitive (loops to a fixpoint). For each name it keeps the abstract
memory its value owns and the memory reachable inside it (items of a list), as sets of
locations: an argument, a global, or what a statement allocated, told apart as its latest
run (``new``) or earlier ones (``old``), so the array ``un = u.copy()`` makes in this pass of
a loop is not last pass's. ``passes.aliasing`` checks the primal with it;
``passes.record_values`` runs it on the forward sweep (``memory_flow``).

The facts at a program point (``memory_state.State``) are updated in place as statements are read, so a
statement costs what it touches, not the size of the state: a state passed to ``block`` or
``stmt`` belongs to them, and a caller that needs the facts afterwards passes a copy (branches
and loop passes do).

>>> import gast, numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> def f(x):
...     y = x * 2.0
...     v = y[1:]
...     c = y.copy()
...     return v
>>> src = capture(f)
>>> node = normalize(resolve_calls(src.node, src), src)
>>> at_return = []
>>> _ = memory_flow(node.body, ["x"], lambda s, state: isinstance(s, gast.Return) and at_return.append(state))
>>> state = at_return[0]
>>> sorted(n for n, m in state.names.items() if n != "y" and m.all() & state.names["y"].own)  # sharing y's memory
['v']
"""
import copy
import functools
import types

import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..sharing import copy_for_calls
from .call_options import makes_object_array, overwritten_arguments
from .fresh import MUTATING_METHODS, known_pure, observes_nothing, shape_query, value_reads
from .memory_refusals import object_array_refusal, out_argument_refusal
from .memory_paths import Paths
from .memory_state import MAX_PATHS, State, flag_value, sets_a_tested_flag
from .memory_summaries import helper_summary, summaries_kept
from .memory_updates import globals_of
from .memory_scan import makes_index_array
from .memory_locations import Memory
from .memory_values import string_key



class _Flow(Paths):
    """The flow analysis over A-normal form; ``check`` raises refusals (see module doc)."""

    def __init__(self, params, stmts, check, on_statement=None, arrays=(), lookup=None, numbers=(), keyed=(),
                 compiled=()):
        super().__init__(params, stmts, arrays, lookup, numbers, keyed)
        self.check = check
        self.compiled = set(compiled)  # ids of the calls of functions of yours srcad compiles apart
        self.on_statement = on_statement  # called with (statement, state before); last with the fixpoint's (``loop``)
        self.bindings = 0
        self.paths = 1  # paths followed apart at once (``block``), bounded by MAX_PATHS
        self.breaks = []  # per loop being read, checking: the facts at each break of its body
        self.mutated = set()  # every location an in-place update may reach
        self.by_calls = set()  # ... that a call srcad runs as written may reach (a helper's own update)
        # statement id -> every name that may have held what its runs made (new or old), in any
        # state: a statement that runs again ages only those names' memory, and an update of that
        # memory makes only those stale
        self.holders = {}
        self.attributes = False  # summarising with attribute stores read as updates (``helper_summary``)

    def summary(self, fn, arrays=(), call=None):
        """``fn``'s summary (``helper_summary``), for ``call`` if given: one srcad compiles apart
        (``compiled``) runs the function's compiled code and its checks. A call that takes
        them for granted is marked ``"trusts_compiled_checks"``: run as written after all, it
        is refused (``passes.array_receivers.refuse_run_as_written``)."""
        if call is not None and not arrays:  # (as the call's callee, and the tree, do: fixed per analysis)
            return self.once("summary", call, lambda: self._summary(fn, call))
        return self._summary(fn, call, arrays)

    def _summary(self, fn, call, arrays=()):
        if call is None or id(call) not in self.compiled:
            return helper_summary(fn, _summary_flow, arrays, self.attributes)
        trusted = helper_summary(fn, _summary_flow, arrays, self.attributes, compiled=True)
        plain = helper_summary(fn, _summary_flow, arrays, self.attributes)
        if trusted is not None and (plain is None or (trusted[1], trusted[3]) != (plain[1], plain[3])):
            A.set_anno(call, "trusts_compiled_checks", True)
        return trusted

    # ---- statements -------------------------------------------------------------------
    def block(self, stmts, state):
        """The facts after ``stmts``; None where no path reaches their end (a ``break`` does
        not: checking, its facts go to the loop's exit, ``breaks``)."""
        for k, s in enumerate(stmts):
            if state is None:
                return None
            if not isinstance(s, _PATHS):  # (a simple statement: none of the paths below)
                state = self.stmt(s, state)
                continue
            if self.check and isinstance(s, gast.Break) and self.breaks:
                self.breaks[-1].append(state)
                return None
            known = self.known_test(s, state) if isinstance(s, gast.If) else None
            if known is not None:
                # one branch runs, and the rest of the block follows it: a split inside the
                # branch sees the flags the rest tests (``if not _skip1: ... _stop1 = True``
                # then ``if _stop1: break``), as it does where the test is not known
                self.reads(s, self.names_read(s.test), state)
                return self.block(list(s.body if known else s.orelse) + list(stmts[k + 1:]), state)
            if (self.check and isinstance(s, gast.If) and self.paths * 2 <= MAX_PATHS
                    and sets_a_tested_flag(s, stmts[k + 1:])):  # (the rest sliced for an ``if`` only)
                # ``if c: ...; skip = True`` then ``if not skip: ...``: the rest of the block is
                # followed on each path, where the flag is known (a return or break out of a
                # loop, lowered to flags, does not meet the updates after it)
                self.reads(s, self.names_read(s.test), state)
                if A.anno(s.test, "region") is not None:  # (as ``stmt``) it turns False where the body raises
                    state.flags.pop(s.test.id, None)
                rest = list(stmts[k + 1:])
                with self.split(2):
                    taken = self.block(list(s.body) + rest, state.copy())
                    return self.branches_joined(s, taken, self.block(list(s.orelse) + rest, state))
            if self.check and isinstance(s, (gast.For, gast.While)):
                exits = self.loop_exits(s, state)
                by_flags = self.exits_by_tested_flags(exits, stmts[k + 1:])
                if len(by_flags) > 1:
                    # a return in a nested loop breaks out with its flags set (``_skip1 = True``)
                    # and the returned value bound: the rest of the block, which tests those
                    # flags, is followed from each kind of exit, where the flags are known
                    after = None
                    with self.split(len(by_flags)):
                        for exit_state in by_flags:
                            after = self.joined(after, self.block(stmts[k + 1:], exit_state))
                    return after
                state = functools.reduce(self.joined, exits)
                continue
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state):
        if isinstance(s, gast.If):
            self.reads(s, self.names_read(s.test), state)
            region = isinstance(s.test, gast.Name) and A.anno(s.test, "region") is not None
            # outside a loop's pass, the branches note what they write from here (``memory_state.Names``)
            untracked = state.names.written is None
            if untracked:
                state.names.written = set()
            after = self.branches_joined(s, self.block(s.body, state.copy()), self.block(s.orelse, state))
            if untracked and after is not None:
                after.names.written = None
            if region and after is not None:  # a try region's flag turns False where its body raises
                after.flags.pop(s.test.id, None)
            return after
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, state)
        if self.on_statement is not None:
            self.on_statement(s, state)
        if isinstance(s, gast.Assign):
            flag = flag_value(state, s.value) if isinstance(s.targets[0], gast.Name) and isinstance(
                s.value, (gast.Constant, gast.UnaryOp)) else None  # (only these may be True or False)
            state = self.assign(s, state)  # (which forgets the flag the name held: ``bind``)
            if flag is not None:
                state.flags[s.targets[0].id] = flag
            return state
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            return self.effect(s, state)
        self.reads(s, self.names_read(s), state)
        return state

    def reads(self, s, names, state, observe=True):
        if self.check and not state.stale.keys().isdisjoint(names):  # (the first stale name, in order, is refused)
            for name in sorted(names):
                if name in state.stale:
                    self.refuse_stale(name, state, s)
        if observe:
            for name in names:
                state.observed |= self.name_memory(state, name).all()

    def bind(self, state, name, memory, s):
        state.names[name] = memory
        state.flags.pop(name, None)  # any binding but ``name = True`` (``stmt``): a loop's target too
        self.note_holder(name, memory.own, memory.inner, memory.listy)
        state.stale.pop(name, None)
        self.bindings += 1
        state.bound[name] = (self.bindings, s)
        state.ambiguous.discard(name)
        state.indices.discard(name)
        state.stacks_of_arrays.discard(name)
        state.stacks_of_sequences.discard(name)
        return state

    def assign(self, s, state):
        target = s.targets[0]
        rhs = s.value
        if isinstance(rhs, gast.Call) and self.check:
            out = self.out_argument(rhs)
            if out is not None:
                raise out_argument_refusal(rhs, s)
            if makes_object_array(rhs):
                raise object_array_refusal(rhs, s)
        if isinstance(rhs, gast.Call):
            state = self.written_through_out(s, state, rhs)
        nondiff = observes_nothing(rhs)
        copied = _copies(rhs) or self.copies_an_array(state, rhs)
        observe = not nondiff and not shape_query(rhs) and not copied
        callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
        if callee is not None and callee.kind == "method" and callee.name in MUTATING_METHODS:
            # the call's own read of its receiver is not an earlier statement's: observe it after
            self.reads(s, self.names_read(rhs), state, observe=False)
            receiver = rhs.func.value.id
            if callee.name == "pop" and not rhs.args:  # y = L.pop(): the reverse sweep pushes y back
                state = self.update(s, state, receiver, exempt={receiver}, structure=True)
            else:
                state = self.changes(s, state, rhs)
        elif callee is not None and not nondiff and self.may_change_arguments(state, rhs, callee):
            # its result assigned, a call that may change its own values in place is the statement it
            # would be (``effect_refusals.refuse_helper_storing_outside`` refuses it given values carrying
            # derivatives); run as written, it may change an argument's or a global's as Python would
            A.set_anno(rhs, "changes_arguments", True)
            self.reads(s, self.names_read(rhs), state, observe=False)
            # (a library's scratch argument is changed as by the statement: a global's too)
            state = self.changes(s, state, rhs, local_only=not overwritten_arguments(rhs))
        is_array = lambda name: self.name_memory(state, name).array  # noqa: E731
        self.reads(s, value_reads(rhs, self.names_read(rhs), is_array), state, observe=observe)
        if nondiff and callee is not None and callee.kind == "object" and not known_pure(callee.obj):
            # a function declared without derivative may still change its arguments in place
            state = self.changes(s, state, rhs)
        summary = self.summary(callee.obj, call=rhs) if callee is not None and callee.kind == "object" else None
        if summary is not None:
            self.mutated |= globals_of(summary)
        if summary is not None and summary[1]:
            # srcad runs a differentiated helper on copies of what it updates: the caller must not
            # read those arrays afterwards (it would see them changed without srcad)
            for param, args in (self.bind_call(callee.obj, rhs) or {}).items():
                for arg in args:
                    if param in summary[1] and isinstance(arg, gast.Name):
                        state = self.update(s, state, self.tracked(state, arg.id), exempt=set(), writes=False,
                                            by_call=True, call=rhs)
        in_place = A.anno(s, "in_place")
        if in_place is not None:  # ``z += e`` on an array updates z's memory (srcad rebinds z instead)
            updated, exempt, _ = in_place
            state = self.update(s, state, updated, exempt={updated, exempt}, writes=False)
        if isinstance(target, gast.Name):
            if id(s) in state.made:  # this statement ran before: what it made then is old now
                state = self.age(state, id(s))
            memory, made = self.value(state, rhs, id(s))
            state = self.bind(state, target.id, memory, s)
            if makes_index_array(rhs) or isinstance(rhs, gast.Name) and rhs.id in state.indices:
                state.indices.add(target.id)
            if target.id in self.stacks:  # (bound to [] only)
                state.stacks_of_arrays.add(target.id)
                state.stacks_of_sequences.add(target.id)
            if made:
                state.made.add(id(s))
            if not nondiff and not isinstance(rhs, _DISPLAYS) and not copied:
                state.observed |= memory.own  # (a display's derivative, a copy's or a name's reads only its adjoint)
            return state
        if isinstance(target, gast.Tuple):  # the forward sweep's ``y, saved = f_forward(...)``
            if id(s) in state.made:
                state = self.age(state, id(s))
            memory, _ = self.value(state, rhs, id(s))
            # each target its item where they are known (a helper's tuple), else all the tuple may hold
            items = memory.items if memory.items is not None and len(memory.items) == len(target.elts) else None
            for k, elt in enumerate(target.elts):
                item = items[k] if items is not None else Memory(memory.own, memory.inner, memory.array, memory.listy)
                state = self.bind(state, elt.id, item, s)
            state.made.add(id(s))
            return state
        base = target.value.id  # S[index] = value
        self.reads(s, self.names_read(target.slice), state)
        overwrites = self.overwrites_change(state, base, target.slice)
        if base in state.stale and not overwrites and self.check:
            # S no longer holds what Python's S holds (an update in place through another name was
            # rebound by srcad): a store into it would miss the names that still share with it
            self.refuse_stale(base, state, s)
        state = self.update(s, state, base, exempt={base}, stored=self.memory(state, rhs),
                            key=string_key(target.slice))
        if overwrites:
            del state.stale[base]
        return state

    def copies_an_array(self, state, rhs):
        """Is ``rhs`` ``a.copy()`` or ``np.copy(a)`` of an array ``a``, whose derivative reads no value?"""
        callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
        if callee is None or not (rhs.args or isinstance(rhs.func, gast.Attribute)):
            return False
        if callee.kind == "method" and callee.name == "copy" and isinstance(rhs.func, gast.Attribute):
            return self.memory(state, rhs.func.value).array
        return callee.kind == "object" and callee.obj is np.copy and self.memory(state, rhs.args[0]).array

    def overwrites_change(self, state, base, index):
        """``r = S[i]; r *= 2.0; S[i] = ...``: the store overwrites all that the update through
        ``r`` changed in ``S`` (same basic index, its names not bound again since)."""
        if base not in state.stale:
            return False
        made = state.stale[base][2]  # the binding of the name the update went through
        if made is None or not isinstance(made[1], gast.Assign):
            return False
        view = made[1].value
        if not (isinstance(view, gast.Subscript) and isinstance(view.value, gast.Name) and view.value.id == base):
            return False
        if gast.dump(view.slice) != gast.dump(index) or self.advanced(index, state):
            return False
        return all(state.bound.get(n, (0,))[0] < made[0] for n in self.names_read(index))

def _copies(rhs):
    """Is ``rhs`` a name, or a copy (``copy_value``, ``copy.deepcopy``, ``copy.copy``,
    ``copy_for_calls``), whose derivative reads no value?"""
    if isinstance(rhs, gast.Name):
        return True
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    return callee is not None and callee.kind == "object" and (
        callee.obj is copy_for_calls or callee.obj is copy.deepcopy or callee.obj is copy.copy
        or callee.obj is runtime.copy_value)


_DISPLAYS = (gast.List, gast.Tuple, gast.Dict, gast.Set)
_PATHS = (gast.If, gast.For, gast.While, gast.Break)  # the statements ``block`` may follow apart


def _summary_flow(params, body, at_return, arrays=(), attributes=False, receivers_checked=False):
    """The facts after a helper's ``body`` (``memory_summaries``): where an update may reach
    (``mutated``) and, through ``at_return(statement, state, flow)``, what it returns.
    ``receivers_checked``: ``a.copy()``, ``a.astype(float)``... is new memory (``Values.receivers_checked``)."""
    flow = _Flow(params, body, check=False, on_statement=lambda s, state: at_return(s, state, flow), arrays=arrays)
    flow.attributes = attributes
    flow.receivers_checked = receivers_checked
    flow.block(body, State())
    return flow


def memory_flow(stmts, params, on_statement):
    """Run the memory analysis over ``stmts`` without refusing anything; ``on_statement``
    gets every simple statement with the facts before it (``memory_state.State``). Returns the set of
    locations in-place updates may reach."""
    flow = _Flow(params, stmts, check=False, on_statement=on_statement)
    with summaries_kept():
        flow.block(stmts, State())
    return flow.mutated


def updated_arguments(stmts, params, arrays=()):
    """``(updated, by_calls)``: the parameters whose memory (or an item's) an in-place update in
    ``stmts`` may reach, through any name, and those of them a call may change (a helper
    updating what it is given, ``rng.shuffle(a)``), which srcad runs as written where it
    carries no derivative: the caller's array, unless the parameter is copied first. ``arrays``
    are the parameters only ever given arrays or numbers (whose ``.copy()`` shares nothing)."""
    flow = _updates(stmts, params, arrays)
    reaching = [{p for p in params if locations & {("arg", p), ("arg-item", p)}}
                for locations in (flow.mutated, flow.by_calls)]
    return tuple(reaching)


def updated_outside(stmts, params):
    """What an in-place update in ``stmts`` (a function's body) may reach outside the function,
    through any name: ``("arg", p)`` for the parameter ``p``'s memory or an item's, ``("global",
    name)`` for a global's. A call of that function changes them."""
    outside = {"arg": "arg", "arg-item": "arg", "global": "global", "global-item": "global"}
    return {(outside[kind], owner) for kind, owner in _updates(stmts, params).mutated if kind in outside}


def _updates(stmts, params, arrays=()):
    flow = _Flow(params, stmts, check=False, arrays=arrays)
    with summaries_kept():
        flow.block(stmts, State())
    return flow


def may_change_later(memory, mutated):
    """May an in-place update reach ``memory`` (locations of a value at some point)? An array
    made by the latest run of a statement may be updated after it ages."""
    aged = {("new", loc[1]) for loc in mutated if loc[0] == "old"}
    return bool(memory & (mutated | aged))


def check_memory(stmts, params, arrays=(), lookup=None, numbers=(), keyed=(), unproven=None, compiled=()):
    """Run the analysis over a function body in A-normal form, raising ``Refusal`` at the first
    in-place update srcad cannot follow (see ``passes.aliasing``); ``arrays`` are the parameters
    known to be given arrays or numbers (whose ``.copy()`` shares nothing), ``lookup(name)`` the
    object a global name denotes (types and modules hold nothing an update reaches), ``numbers``
    the parameters given Python numbers (immutable: no update reaches them either), ``keyed``
    those given dicts whose keys are strings. Annotates each call of a function of yours with
    ``"array_arguments"``: the names it is given that are arrays or numbers on every path.
    ``unproven`` (a dict), refused or not, gets the calls read up to there whose result would be
    new memory were their receiver known to be an array (``passes.array_receivers``). ``compiled``:
    the ids of the calls of functions of yours srcad compiles apart (``_Flow.summary``)."""
    known = {}  # id(call) -> (call, the names it is given that are arrays or numbers on every path)

    def note_array_arguments(s, state):
        call = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        if callee is not None and callee.kind == "object" and isinstance(callee.obj, types.FunctionType):
            names = {a.id for a in call.args + [k.value for k in call.keywords]
                     if isinstance(a, gast.Name) and flow.memory(state, a).array}
            known[id(call)] = (call, names & known[id(call)][1] if id(call) in known else names)

    flow = _Flow(params, stmts, check=True, on_statement=note_array_arguments, arrays=arrays, lookup=lookup,
                 numbers=numbers, keyed=keyed, compiled=compiled)
    try:
        with summaries_kept():
            flow.block(stmts, State())
    finally:
        if unproven is not None:
            unproven.update(flow.unproven_receivers)
    for call, names in known.values():  # a function of yours is compiled knowing them (forward mode)
        A.set_anno(call, "array_arguments", names)
