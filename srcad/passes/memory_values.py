"""What memory a value may share: the value half of the memory analysis (``passes.memory``).

A value is new memory only if it comes from an allowlist of operations known to return a
fresh array (arithmetic, ufuncs and reductions without ``out``, ``np.zeros``, ``.copy()``,
``np.concatenate``, ``@`` ... checked against NumPy's docs and ``np.shares_memory``); any
other value (``x.T``, ``np.flip(x)``, ``np.asarray(x)``, ``x.reshape(...)``, a basic slice,
an item of a container, a call of a function srcad cannot read) may share the memory of
every value it was computed from.

>>> import gast
>>> from types import SimpleNamespace
>>> values, state = Values(["x"], []), SimpleNamespace(names={})  # nothing bound yet: x is the argument
>>> view = gast.parse("x[1:]").body[0].value
>>> sorted(values.value(state, view, "here")[0].own)  # a basic slice may be x itself
[('arg', 'x'), ('arg-item', 'x'), ('new', 'here')]
>>> sorted(values.value(state, gast.parse("x * 2.0").body[0].value, "here")[0].own)
[('new', 'here')]
"""
import builtins
import copy
import inspect
import types

import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..sharing import copy_for_calls
from ..code_reading import attribute_now
from .call_options import call_argument, copies, out_argument
from .fresh import (ARRAY_RESULTS, ARRAY_VIEW_METHODS, ARRAY_VIEWS, CONTAINER_BUILDERS, FRESH_METHODS, KEY_LISTS,
                    LISTS_OF_VIEWS, NUMPY_FUNCTION, PLAIN_ATTRIBUTES, RETURNS_ARGUMENTS, SHALLOW_COPIES,
                    SPLITS_OVER_ITEMS, VIEWS_OF_ARRAYS, is_in, is_ufunc, keeps_no_memory, new_array_call)
from .memory_locations import EMPTY, Memory, shallow_copy_keeps
from .memory_scan import bindings, made_by_yours, stacks


class Values:
    """The memory of values at one program point (a state's ``names``); a subclass supplies
    ``summary(fn)`` (what a user function's result shares and what it updates, or None)."""

    def __init__(self, params, stmts, arrays=(), lookup=None, numbers=(), keyed=()):
        self.params = set(params)
        self.keyed = set(keyed)  # parameters known to be given a dict whose keys are strings
        self.arrays = set(arrays)  # parameters known to be given an array or a number: no items to share
        self.numbers = set(numbers)  # parameters known to be given a Python number: no memory at all
        self.lookup = lookup  # the object a global name denotes (KeyError if none), where known
        # names the function binds (unbound on a first pass, not globals), and those indexing with copies
        self.local, self.index_arrays = bindings(stmts)
        self.stacks = stacks(stmts)
        self.outer_globals = set()  # globals and defaults a helper's result may be (``helper_result``)
        self.made_by_yours = made_by_yours(stmts)  # their objects' methods named copy, sum, ... may lie
        self._read = {}  # id(node) -> names it loads: loops revisit the same nodes to a fixpoint
        self._once = {}  # (what, id(node)) -> a fact of the node alone (``once``), likewise
        self._unbound = {}  # name -> its memory where no state binds it (``name_memory``: fixed per analysis)
        # id(statement) -> how many allocations of a user function its call made, each a location
        # ("new", (id, k)) of its own (``helper_result``)
        self.item_counts = {}
        # id(call) -> ``a.copy()``, ``a.sum()``... whose receiver (a name) is not known to be an
        # array: new memory once a check makes it one (``passes.array_receivers``)
        self.unproven_receivers = {}
        # a helper's updates (``memory_summaries``): its ``a.copy()``, ``a.astype(float)``... is new
        # memory, as the check its compiled code makes (``passes.array_receivers``) ensures
        self.receivers_checked = False

    def summary(self, fn, arrays=(), call=None):
        return None

    def once(self, what, node, read):
        """``read()``, a fact of ``node`` that no state changes (what a call passes, its callee's
        summary), read once per analysis: loops revisit the same nodes to a fixpoint, and the
        tree does not change while it is read."""
        key = (what, id(node))
        found = self._once.get(key, _UNREAD)
        if found is _UNREAD:
            found = self._once[key] = read()
        return found

    def bind_call(self, fn, call):
        """``bind_call(fn, call)`` (``fn`` is the call's callee's: fixed per analysis)."""
        return self.once("bound", call, lambda: bind_call(fn, call))

    def out_argument(self, call):
        """``call_options.out_argument(call)``."""
        return self.once("out", call, lambda: out_argument(call))

    def names_read(self, node):
        found = self._read.get(id(node))
        if found is None:
            found = self._read[id(node)] = A.names_read(node)
        return found

    # ---- values ---------------------------------------------------------------------
    def name_memory(self, state, name):
        found = state.names.get(name)
        if found is None:
            found = self._unbound.get(name)
        if found is None:
            found = self._unbound[name] = self._unbound_memory(name)
        return found

    def _unbound_memory(self, name):
        """The memory of a name no state binds: a parameter's argument, a global's value, or
        none (a local not bound yet)."""
        if name in self.local and name not in self.params:
            return Memory()
        if name in self.numbers and name in self.params:
            return Memory(array=True)
        if name in self.arrays and name in self.params:
            return Memory({("arg", name)}, array=True)
        if name not in self.params and _holds_no_values(self._global(name)):
            return Memory(array=True)  # float, np: a type or a module is no memory an update can reach
        kind = "arg" if name in self.params else "global"
        return Memory({(kind, name)}, {(kind + "-item", name)})

    def known_global(self, name):
        """Is ``name`` a global of the function's module (not a name only srcad's code binds), or
        one a helper's result may be?"""
        return name in self.outer_globals or self._global(name) is not _UNKNOWN

    def _global(self, name):
        try:
            return self.lookup(name) if self.lookup is not None else _UNKNOWN
        except KeyError:
            return _UNKNOWN

    def global_object(self, atom):
        """The object a name of a global (``F``) or a module's attribute (``operator.setitem``) denotes, else ``_UNKNOWN``."""
        if isinstance(atom, gast.Name) and atom.id not in self.local and atom.id not in self.params:
            return self._global(atom.id)
        if isinstance(atom, gast.Attribute) and isinstance(atom.value, gast.Name):
            module = self.global_object(atom.value)
            if isinstance(module, types.ModuleType):
                return _attribute_or_unknown(module, atom.attr)
        return _UNKNOWN

    def memory(self, state, atom):
        if isinstance(atom, gast.Name):
            return self.name_memory(state, atom.id)
        if isinstance(atom, gast.Starred):
            return self.memory(state, atom.value)
        if isinstance(atom, (gast.Tuple, gast.List)):
            inner = frozenset()
            for e in atom.elts:
                inner |= self.memory(state, e).all()
            return Memory(frozenset(), inner)
        return Memory()

    def value(self, state, rhs, here):
        """The memory of ``rhs``'s value, and whether it is new memory made here."""
        new = frozenset({("new", here)})
        if isinstance(rhs, gast.Name):
            return self.memory(state, rhs), False
        if isinstance(rhs, (gast.Constant, gast.JoinedStr)):
            return Memory(array=True), False
        if isinstance(rhs, (gast.Compare, gast.UnaryOp)):
            return Memory(new, array=True), True
        if isinstance(rhs, gast.BinOp):
            if isinstance(rhs.op, (gast.Add, gast.Mult)) and not (self.numeric(state, rhs.left)
                                                                  or self.numeric(state, rhs.right)):
                # list + list and list * n keep the items
                return Memory(new, self.memory(state, rhs.left).inner | self.memory(state, rhs.right).inner), True
            return Memory(new, array=True), True
        if isinstance(rhs, gast.Attribute):
            if rhs.attr in PLAIN_ATTRIBUTES:
                return Memory(array=True), False
            module = self._global(rhs.value.id) if isinstance(rhs.value, gast.Name) and not (
                rhs.value.id in self.params or rhs.value.id in self.local) else _UNKNOWN
            if isinstance(module, types.ModuleType):  # np.float64, or a module's array: as a global of its own
                dotted = f"{rhs.value.id}.{rhs.attr}"
                if _holds_no_values(_attribute_or_unknown(module, rhs.attr)):
                    return Memory(array=True), False
                return Memory({("global", dotted)}, {("global-item", dotted)}), False
            base = self.memory(state, rhs.value)
            if base.array:
                return Memory(base.own | new, array=True), True
            return Memory(base.all() | new, base.inner), True
        if isinstance(rhs, gast.Subscript):
            if A.anno(rhs, "one_element") is not None:  # a NumPy scalar (``record_values``): no view
                return Memory(new, array=True), True
            base = self.memory(state, rhs.value)
            if base.items is not None and _position(rhs.slice, len(base.items)) is not None:
                return base.items[_position(rhs.slice, len(base.items))], False
            item = base.key_item(string_key(rhs.slice))
            if item is not None:
                return item, False
            if base.sequence:  # a slice of a list is a new list of its items; an item is never the list
                if isinstance(rhs.slice, gast.Slice):
                    return Memory(new, base.inner, sequence=True), True
                return Memory(base.inner | new, base.inner), True
            own = new if self.advanced(rhs.slice, state) else base.all() | new
            return Memory(own, base.inner, base.array), True
        if isinstance(rhs, gast.Set):
            return Memory(new, self.memory(state, rhs).inner), True
        if isinstance(rhs, (gast.Tuple, gast.List)):
            items = None  # a tuple's items are known one by one (a list's may be rebound)
            if isinstance(rhs, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in rhs.elts):
                items = tuple(self.memory(state, e) for e in rhs.elts)
            return Memory(new, self.memory(state, rhs).inner, sequence=True, items=items), True
        if isinstance(rhs, gast.Dict):  # a container as a list is: an item is never the dict itself
            inner, keys = frozenset(), {}
            for k, v in zip(rhs.keys, rhs.values):
                held = self.memory(state, v)
                inner |= held.all()
                if keys is not None and string_key(k) is not None:
                    keys[string_key(k)] = held  # (the last of a repeated key is the one kept)
                else:  # ``{**m}`` or a key that is not a constant string
                    keys = None
            return Memory(new, inner, sequence=True, keys=keys), True
        if isinstance(rhs, gast.Call):
            return self.call_value(state, rhs, here), True
        shared = frozenset()
        for name in self.names_read(rhs):
            shared |= self.name_memory(state, name).all()
        return Memory(shared | new, shared), True

    def operands(self, call):
        ops = list(call.args) + [k.value for k in call.keywords]
        callee = A.anno(call, "callee")
        if callee is not None and callee.kind == "method":
            ops.append(call.func.value)
        return ops

    def call_value(self, state, call, here):
        new = frozenset({("new", here)})
        callee = A.anno(call, "callee")
        reached = frozenset()
        for op in self.operands(call):
            reached |= self.memory(state, op).all()
        if callee is not None and callee.kind == "object":
            obj = callee.obj
            if is_in(obj, CONTAINER_BUILDERS):
                if obj in KEY_LISTS and len(call.args) == 1 and self.string_keys(state, call.args[0]):
                    return Memory(new)  # list(d) of a dict: its keys, strings
                # dict(a=x) holds x itself; list(L) and zip(L, M) hold only the items of a list or tuple
                held = frozenset().union(*(self.memory(state, k.value).all() for k in call.keywords))
                own = new
                for arg in call.args:
                    given = self.memory(state, arg)
                    held |= given.inner if given.sequence else given.all()
                    if A.anno(call, "iterates"):  # a for loop's list(L): it stands for L itself (``loops``)
                        own = own | given.own
                keys = None
                if obj is builtins.dict and len(call.args) <= 1:  # dict(S=x, I=y), dict(d, I=y): a new dict
                    keys = self.memory(state, call.args[0]).keys if call.args else {}
                    keys = None if keys is None else {**keys, **{k.arg: self.memory(state, k.value)
                                                                 for k in call.keywords}}
                return Memory(own, held, sequence=any(obj is b for b in _SEQUENCE_BUILDERS), keys=keys)
            if obj is runtime.copy_value or obj is copy_for_calls or obj is copy.deepcopy and len(call.args) == 1:
                copied = self.memory(state, call.args[0])
                if not copied.all():  # a copy of what has no memory (a parameter given a number) is that value
                    return copied
                if obj is runtime.copy_value:  # shallow: the items are shared, and what it may return as is
                    # (a tuple, which no update changes as an object) holds what the value holds
                    return Memory(new, copied.inner | shallow_copy_keeps(copied), copied.array,
                                  sequence=copied.sequence)
                return Memory(new, frozenset(), copied.array, sequence=copied.sequence)  # new all the way down
            if obj is copy.copy and len(call.args) == 1 and not call.keywords:
                copied = self.memory(state, call.args[0])
                if copied.array or copied.sequence:  # a new array, or a new list or dict of the same items
                    return Memory(new, copied.inner, copied.array, sequence=copied.sequence)
                if self.string_keys(state, call.args[0]):  # a dict parameter's copy, as d.copy() below
                    return Memory(new, copied.inner, sequence=True, keys=copied.keys)
                # (anything else: its __copy__ may return what it likes, even itself)
            if obj is runtime.as_real and len(call.args) == 1:
                # a derivative's ``x = as_real(x)``: x, or a new array, list, tuple or dict (of x's
                # type) of its items or new arrays; a dict parameter's stays a dict, whose copy is new
                given = self.memory(state, call.args[0])
                return Memory(given.own | new, given.inner, given.array, given.listy | new,
                              sequence=given.sequence or self.string_keys(state, call.args[0]))
            returned = RETURNS_ARGUMENTS.get(obj, ()) if is_in(obj, RETURNS_ARGUMENTS) else ()
            if (obj is builtins.min or obj is builtins.max) and len(call.args) > 1 and all(
                    k.arg == "key" for k in call.keywords):
                returned = range(len(call.args))  # min(a, b, c) is one of a, b, c: no list of them
            if is_in(obj, LISTS_OF_VIEWS) and call.args:  # a new list whose items are views of g
                return Memory(new, self.memory(state, call.args[0]).all())
            if obj is runtime.grad_buffer and call.args:
                # its argument itself, or a new 0-d array of a number: where the argument has memory,
                # say the result is that memory (too much sharing is safe; one location less is
                # what keeps the loops of code differentiated again precise)
                given = self.memory(state, call.args[0])
                if given.own:
                    return Memory(given.own, given.inner, given.array, given.listy)
            if returned and len(call.args) > max(returned):
                shared = [self.memory(state, call.args[k]) for k in returned]
                return Memory(frozenset().union(*(m.own for m in shared)) | new,
                              frozenset().union(*(m.inner for m in shared)), all(m.array for m in shared),
                              frozenset().union(*(m.listy for m in shared)) | new)
            if call.args and (is_in(obj, ARRAY_VIEWS) or (
                    is_in(obj, VIEWS_OF_ARRAYS) and self.memory(state, call.args[0]).array)):
                # an array, never a list: sharing, not being, its argument
                return Memory(self.memory(state, call.args[0]).all() | new, array=True, listy=())
            if is_in(obj, ARRAY_RESULTS):
                shared = ARRAY_RESULTS[obj]
                if shared is not None and len(call.args) > max(shared):
                    reached = frozenset().union(*(self.memory(state, call.args[k]).all() for k in shared))
                return Memory(reached | new, array=True, listy=())
            if obj is runtime.container_grad and len(call.args) == 2:
                g = self.memory(state, call.args[0])
                if self.memory(state, call.args[1]).keys is not None:
                    # laid out like a dict: g itself, or a new dict of the fields of g, a dataclass (no array)
                    return Memory(g.own | new, g.inner, g.array, g.listy | new, sequence=g.sequence)
                # g itself, or a new list of g's rows: a list only if new when g is an array
                return Memory(g.own | new, g.all(), listy=new if g.array else g.listy | new)
            if is_in(obj, SPLITS_OVER_ITEMS) and len(call.args) >= 2:  # a new list (its items g), or an array
                g = self.memory(state, call.args[0]).all()
                view = g if SPLITS_OVER_ITEMS[obj] else EMPTY
                if self.memory(state, call.args[1]).array:
                    return Memory(view | new, array=True, listy=())
                return Memory(view | new, g, listy=new)
            if (new_array_call(obj, call) or is_ufunc(obj)) and copies(call):
                return Memory(new, array=True)
            start = call_argument(call, "start") if obj is builtins.sum else None
            if start is not None:  # sum(items, start): start itself where items is empty, else new
                began = self.memory(state, start)
                if began.array:  # a number or an array: so are the items, and the sum of them
                    return Memory(began.own | new, array=True)
                # a list or tuple start: a new one of its items and the items' (sum(groups, []))
                return Memory(began.own | new, began.inner | self.memory(state, call.args[0]).inner)
        summary = None
        if callee is not None and callee.kind == "object":  # read knowing which arguments are arrays
            given = self.bind_call(callee.obj, call) or {}
            summary = self.summary(callee.obj, [p for p, args in given.items()
                                                if args and all(self.memory(state, a).array for a in args)])
        if summary is not None:
            returned = self.helper_result(state, call, callee.obj, summary, here)
            if returned is not None:
                return returned
        if (callee is not None and callee.kind == "method" and callee.name == "keys" and not call.args
                and self.string_keys(state, call.func.value)):
            return Memory(new)
        if callee is not None and callee.kind == "method" and callee.name in _DICT_VIEWS and not call.args:
            viewed = self.memory(state, call.func.value)
            if viewed.sequence or viewed.keys is not None:  # surely a list, tuple or dict: only a dict has these
                # a live view of the dict (it changes with it) of its keys (never arrays, which are
                # unhashable), values or (key, value) pairs made as it is read
                pairs = new if callee.name == "items" else EMPTY
                return Memory(viewed.own | new, viewed.inner | pairs, sequence=True)
        if (callee is not None and callee.kind == "method" and callee.name == "pop" and isinstance(
                call.func.value, gast.Name) and call.func.value.id in state.stacks_of_arrays):  # one of the arrays pushed
            return Memory(self.memory(state, call.func.value).inner | new, array=True, listy=())
        if (callee is not None and callee.kind == "method" and callee.name == "pop" and isinstance(
                call.func.value, gast.Name) and call.func.value.id in state.stacks_of_sequences):  # a list pushed
            items = self.memory(state, call.func.value).inner
            return Memory(items | new, items, sequence=True)
        if callee is not None and callee.kind == "method" and callee.name in ("pop", "get"):  # an item
            items = self.memory(state, call.func.value).inner
            for arg in call.args[1:]:  # a default
                items |= self.memory(state, arg).all()
            return Memory(items | new, items)
        if callee is not None and callee.kind == "method" and callee.name in ARRAY_VIEW_METHODS:
            receiver = self.memory(state, call.func.value)
            if receiver.array:  # a view of an array is an array: its copy holds nothing
                return Memory(receiver.all() | new, array=True, listy=())
        if callee is not None and callee.kind == "method" and callee.name in ("item", "tolist"):
            receiver = self.memory(state, call.func.value)  # an object array's item is the object itself
            return Memory(new, array=True) if receiver.array else Memory(receiver.all() | new, receiver.all())
        if callee is not None and callee.kind == "method" and callee.name in FRESH_METHODS and copies(call):
            # only where the receiver is known to be an array or number, or (``copy``) a list,
            # tuple or dict: a method of yours named ``copy`` or ``sum`` may return the object itself
            copied = self.memory(state, call.func.value)
            if copied.array:
                return Memory(new, array=True)
            if callee.name in SHALLOW_COPIES and (copied.sequence or self.string_keys(state, call.func.value)):
                return Memory(new, copied.inner, sequence=True, keys=copied.keys)  # (a dict's copy: the same items)
            if all(kind == "arg" or kind in ("new", "old") and (made[0] if isinstance(made, tuple) else made)
                   not in self.made_by_yours for kind, made in copied.own):
                # a value of unknown type that is a parameter (compiled for its class: an object of
                # yours is refused where it is used) or made by no function of yours; not an item of
                # a list or dict, nor a global, which may be your objects
                if callee.name in SHALLOW_COPIES:
                    return Memory(new, copied.inner, copied.array, sequence=copied.sequence)
                return Memory(new, array=True)
            if isinstance(call.func.value, gast.Name):
                if self.receivers_checked:  # (``a.astype(float)`` too: ``copies`` said it copies)
                    return Memory(new, array=True)
                self.unproven_receivers[id(call)] = call
        if callee is not None and callee.kind == "object" and not keeps_no_memory(callee.obj):
            # a callable srcad cannot read (a cached function, a bound method, a partial) may
            # return memory it keeps: a module's array, which no update may reach
            kept = frozenset({("global", unread_result(callee))})
            self.outer_globals.add(unread_result(callee))
            if isinstance(callee.obj, type) and not isinstance(callee.obj.__new__, types.FunctionType):
                # a new object (no __new__ of yours returns a kept one), whose attributes may be anything
                return Memory(new, reached | kept)
            return Memory(reached | new | kept, reached | kept)
        return Memory(reached | new, reached)

    def string_keys(self, state, atom):
        """Is ``atom`` a parameter given a dict whose keys are strings, not bound again (its keys
        hold no memory: ``for k in d`` reads no array)?"""
        return isinstance(atom, gast.Name) and atom.id in self.keyed and atom.id not in state.names

    def helper_result(self, state, call, fn, summary, here):
        """The memory of a user function's result (``memory_summaries``), location by location in
        the caller's terms: a parameter's is its argument's; what the function made, a location
        of this call for each of its allocations (so a tuple of new arrays keeps them apart);
        a global's, the call's own. None where the call cannot be bound."""
        bound = self.bind_call(fn, call)
        if bound is None:
            return None
        result, _, made, _ = summary
        self.item_counts[here] = len(made)

        def caller(locations):
            found = set()
            for location in locations:
                if location[0] in ("arg", "arg-item"):
                    found.update(*(self.memory(state, arg).all() for arg in bound.get(location[1], ())))
                    if location[1] not in bound:  # the parameter's default: an object that outlives the call
                        owner = f"{location[1]}=..., the default of {getattr(fn, '__qualname__', '?')}"
                        self.outer_globals.add(owner)
                        found.add(("global", owner))
                elif location[0] in ("global", "global-item"):  # a global's memory stays the global's
                    self.outer_globals.add(location[1])  # (of the helper's module, maybe not this one's)
                    found.add(location)
                else:
                    found.add(("new", (here, made[location]) if location in made else here))
            return frozenset(found)

        return result.mapped(caller)

    def numeric(self, state, atom):
        """Is ``atom`` surely a number or an array (so ``+`` and ``*`` make a new array)?"""
        if isinstance(atom, gast.Constant):
            return isinstance(atom.value, (float, complex, bool))
        return isinstance(atom, gast.Name) and self.memory(state, atom).array

    def advanced(self, index, state):
        """Does this index copy (a list or an index array in it)? A name holds an index array
        if every binding of it does, or the bindings reaching ``state`` do (srcad's adjoint
        code binds ``_t3 = None`` first, ``_t3 = [1, k]`` before each use in a loop)."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return any(isinstance(p, gast.List) or (isinstance(p, gast.Name) and (
            p.id in self.index_arrays or p.id in state.indices)) for p in parts)



_UNKNOWN = object()
_UNREAD = object()


_SEQUENCE_BUILDERS = (builtins.list, builtins.tuple, builtins.sorted)
_DICT_VIEWS = {"keys", "values", "items"}


def string_key(index):
    """The constant string an index is (``d["S"]``), else None."""
    return index.value if isinstance(index, gast.Constant) and isinstance(index.value, str) else None


def _position(index, length):
    """The position a constant integer ``index`` selects among ``length`` items, or None."""
    if isinstance(index, gast.Constant) and type(index.value) is int and -length <= index.value < length:
        return index.value % length
    return None


def _attribute_or_unknown(module, attr):
    """``module.attr`` read as ``code_reading.attribute_now`` reads it (no ``__getattr__`` of
    your module runs now), else ``_UNKNOWN``."""
    try:
        return attribute_now(module, attr)
    except AttributeError:
        return _UNKNOWN


def _holds_no_values(obj):
    """Is ``obj`` a library's type, a function or a module: nothing an in-place update can change?
    (A class of yours may hold arrays: ``Pool.buf``.)"""
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, np.ufunc,
                            NUMPY_FUNCTION)) or isinstance(obj, type) and keeps_no_memory(obj)


def unread_result(callee):
    """The owner (as a global's name) of the memory a call of ``callee`` srcad cannot read may
    return: ``workspace(...)``. (A name of a global never ends in a call.)"""
    return f"{callee.name or getattr(callee.obj, '__qualname__', 'the function')}(...)"


def is_unread_result(owner):
    return owner.endswith("(...)")


def bind_call(fn, call):
    """parameter -> [argument atoms] for a call of ``fn`` (a ``*args`` parameter gets several)."""
    fn = getattr(fn, "__srcad_function__", fn)
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(
            *call.args, **{k.arg: k.value for k in call.keywords})
    except (TypeError, ValueError):
        return None
    return {p: list(v) if isinstance(v, tuple) else [v] for p, v in bound.arguments.items()}
