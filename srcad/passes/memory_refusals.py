"""What the memory analysis refuses, in words: ``Refusal`` (which ``passes.aliasing`` makes a
srcad error), the texts of the updates and calls it cannot follow, and where to copy instead.
"""
import inspect
import types

import gast
import numpy as np

from .. import astutil as A
from ..errors import NoRuleError
from .call_options import call_argument
from .effect_calls import assignment_instead, grown_list_advice
from .local_objects import unlowered_object
from .memory_values import Values, is_unread_result, string_key


class Refusal(Exception):
    """An in-place update srcad cannot follow; ``check_aliasing`` makes it a srcad error.
    ``message`` is text, or for a stale read (updated, reader, binding, copied name, line,
    the binding of the updated name the update went through or None, whether the reader is
    surely a list, tuple or dict)."""

    def __init__(self, message, node, error=None):
        super().__init__(message)
        self.message, self.node = message, node
        self.error = error  # the srcad error class to raise, if not SrcadSyntaxError


def describe_call(call):
    """``np.add(...)`` or ``.sort()``, for messages."""
    callee = A.anno(call, "callee")
    if callee is not None and callee.kind == "method":
        return f".{callee.name}()"
    return f"{callee.name if callee is not None else 'the function'}(...)"


def out_argument_refusal(call, s):
    option = "out=" if call_argument(call, "out") is not None else "output="
    return Refusal(f"srcad does not differentiate {describe_call(call)} with {option} (it writes into an "
                   "existing array); assign the result instead", s)


def object_array_refusal(call, s):
    return Refusal(f"srcad does not differentiate object arrays ({describe_call(call)} makes one): they hold "
                   "references to other values, whose updates srcad cannot follow; use a list, or an "
                   "array of numbers", s)


def unseen_change_refusal(call, arg, s):
    if unlowered_object(call):
        return Refusal(unlowered_object(call), s)
    callee = A.anno(call, "callee")
    if callee is not None and callee.kind == "object" and _pure_without_rule(callee.obj):
        # a library call with no rule: that, not what it may change, is what to fix
        return Refusal(
            f"{describe_call(call)} has no derivative rule, and srcad cannot read it (nor see what it changes "
            "in its arguments); register a rule for it (srcad.extend.register_vjp or register_partials, "
            "docs/extending.md)", s, NoRuleError)
    return Refusal(
        f"srcad cannot see what the call {describe_call(call)} changes in '{arg.id}', whose value before "
        "the call the derivative may need (the statement that made it, or one that read it, may keep it "
        f"for the reverse sweep); {assignment_instead(call, arg.id)}", s)


def _grows(s, name):
    """Is ``s`` a call growing the list ``name`` (``name.append(v)``, ``extend``, ``insert``)?"""
    call = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    return (callee is not None and callee.kind == "method" and callee.name in ("append", "extend", "insert")
            and isinstance(call.func.value, gast.Name) and call.func.value.id == name)


def _global_container_store(s, owner, held):
    """Why ``CACHE[k] = v`` into a dict (or list) of the module is refused, and what to write."""
    kind = "dict" if isinstance(held, dict) else "list"
    written = A.anno(s, "origin") or s
    keep = (f"append to it ('{owner}.append(srcad.stop_gradient(value))' runs as written); to count calls, count "
            "them in a function of yours that calls the derivative")
    if kind == "dict":
        key, value = "key", "srcad.stop_gradient(value)"
        if (isinstance(written, gast.Assign) and len(written.targets) == 1
                and isinstance(written.targets[0], gast.Subscript)):
            index = written.targets[0].slice
            key = repr(index.value) if isinstance(index, gast.Constant) else A.to_source(index).strip()
            value = A.to_source(written.value).strip()
            value = value if value.startswith("srcad.stop_gradient(") else f"srcad.stop_gradient({value})"
        keep = f"write '{owner}.update({{{key}: {value}}})', which runs as written"
    return (f"srcad does not change '{owner}', a {kind} of your module, in place: its derivative writes into no "
            "value outside the function, and reads a global as a constant (what reads the stored value back "
            f"would carry no derivative). To keep a value there (a cache, a log), {keep}; to compute with it, "
            f"keep the {kind} in the function, or return the value (srcad.value_and_grad(f, has_aux=True)) and "
            "store it after the call")


def _helper_updates_global(call, name, owner):
    """The refusal of a call of a function of yours that updates in place what a global holds."""
    fn = A.anno(call, "callee").obj
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    held = f"the global '{owner}'" if name == owner else f"'{name}', which shares memory with the global '{owner}'"
    return (f"the call of {getattr(fn, '__qualname__', 'a function of yours')}{where} may update in place an array "
            f"held by {held}: it changes an array it is given, or one its object holds, with an in-place operation "
            "(+=, [...] =, a method such as .fill), and srcad does not change arrays outside the function. Compute "
            "a new array there instead (s = self.W - x), or update a copy of it (s = np.copy(self.W); s -= x)")


def _pure_without_rule(obj):
    """Is ``obj`` a method of a SciPy distribution (which changes none of its arguments) with no
    rule? (Other calls srcad has no rule for may change what they are given: operator.setitem.)"""
    from .. import registry
    from .fresh import module_of

    owner = getattr(obj, "__self__", None)
    return (owner is not None and module_of(type(owner)).startswith("scipy.stats")
            and registry.lookup(registry.VJP, obj) is None and registry.lookup(registry.JVP, obj) is None
            and not registry.is_nondifferentiable(obj))


def _container_class(value):
    """The dict or list class other than dict and list a library call ``value`` makes
    (``collections.defaultdict(float)``), else None."""
    callee = A.anno(value, "callee") if isinstance(value, gast.Call) else None
    made = callee.obj if callee is not None and callee.kind == "object" else None
    return made if isinstance(made, type) and issubclass(made, (dict, list)) and made not in (dict, list) else None


def _yours(value):
    """Is ``value`` a call of a Python function (of yours: its result may be what it keeps)?"""
    callee = A.anno(value, "callee") if isinstance(value, gast.Call) else None
    return (callee is not None and callee.kind == "object"
            and isinstance(getattr(callee.obj, "__srcad_function__", callee.obj), types.FunctionType))


def _as_written(value):
    """``value`` as the user wrote it: a method call srcad made a call of the method's function
    (``M.get.__func__(M)``, ``Layer.shifted(layer, x)``) reads ``M.get()``, ``layer.shifted(x)``."""
    through = A.anno(value, "through_self") if isinstance(value, gast.Call) else None
    callee = A.anno(value, "callee") if isinstance(value, gast.Call) else None
    if through is not None:  # (its receiver, or a class method's class, passed first, where it binds one)
        method, args = f"{through.text}.{through.method}", value.args[through.binding != "static":]
    elif callee is not None and isinstance(value.func, gast.Attribute) and value.func.attr == "__func__":
        method, args = callee.name, value.args[1:]  # (a global object's bound method: ``bound_method_call``)
    else:
        return A.to_source(value).strip()
    text = lambda a: repr(a.value) if isinstance(a, gast.Constant) else A.to_source(a).strip()  # noqa: E731
    given = [text(a) for a in args] + [f"{k.arg}={text(k.value)}" for k in value.keywords]
    return f"{method}({', '.join(given)})"


class Refusals(Values):
    """The refusals that read the analysis's facts: an update reaching the caller's or a
    global's memory, a read of a name an update made stale."""

    def check_caller_memory(self, s, state, name, changed, arguments=True, call=None):
        """``call``: the call of a function of yours that changes ``name``'s memory, if it is one."""
        copied = self.whole_updated(s, state, name)
        for kind, owner in sorted(changed, key=repr):
            if arguments and kind in ("arg", "arg-item") and _grows(s, name) and self.held_item(state, name):
                # L = [[w]]; L[0].append(v): an item's locations are all that the container holds, at any depth
                raise Refusal(
                    f"in-place update of '{name}', a list held in a list or dict: srcad does not tell the items of "
                    f"a list of lists apart from what those lists hold, so it may be the argument '{owner}' (srcad "
                    f"never changes the caller's lists); {grown_list_advice()} and put it into its list or dict "
                    "once it is complete", s)
            if arguments and kind in ("arg", "arg-item") and not (kind == "arg" and owner == name):
                raise Refusal(
                    f"in-place update of '{name}', which shares memory with the argument '{owner}'; "
                    f"srcad never changes the caller's arrays: copy first ({self.copy_hint(state, copied, None)})", s)
            if kind in ("global", "global-item") and is_unread_result(owner) and (
                    arguments or self.known_global(owner)):
                written = self.assigned(state, copied)
                container = _container_class(written.value) if written is not None else None
                if container is not None:  # (np.array of a dict is no copy of it)
                    raise Refusal(
                        f"in-place update of '{name}', held by a {container.__module__}.{container.__name__} that "
                        f"srcad cannot read: srcad follows plain dicts and lists; write '{copied} = {{}}' and read "
                        f"'{copied}.get(k, 0.0)' where a key may be missing ('{copied}[k] = {copied}.get(k, 0.0) + v')", s)
                raise Refusal(
                    f"in-place update of '{name}', which may share memory that '{owner}' keeps: srcad cannot read "
                    "that call (a cached function, a bound method, a partial may return an array it keeps, an object "
                    "of yours may hold one), and does not change arrays outside the function: copy first "
                    f"({self.copy_hint(state, copied, None, unread=True)})", s)
            if kind in ("global", "global-item") and (owner == name or self.item_of(state, name) == owner) and (
                    isinstance(self._global(owner), (dict, list))):  # (``COUNT[0] += 1``: a copied item stored back
                raise Refusal(_global_container_store(s, owner, self._global(owner)), s)  # is a store too)
            if kind in ("global", "global-item") and call is not None and (arguments or self.known_global(owner)):
                raise Refusal(_helper_updates_global(call, name, owner), s)
            if kind in ("global", "global-item") and (arguments or self.known_global(owner)):
                raise Refusal(
                    f"in-place update of '{name}', which shares memory with the global '{owner}'; "
                    f"srcad does not change arrays outside the function: copy first "
                    f"({self.copy_hint(state, copied, owner)})", s)

    def whole_updated(self, s, state, name):
        """``W`` where ``s`` is ``W[0] += x`` and ``name`` the item it updates (``_t1 = W[0]``), ``W``
        not surely a list or dict nor keyed by a string: a copy of an array's item would be stored
        back into the array's memory, so the copy to make is ``W``'s (an item of a list or dict
        copied is the list's or dict's own, ``c["a"] = c["a"].copy()``)."""
        written = A.anno(s, "origin")
        target = written.target if isinstance(written, gast.AugAssign) else None
        if (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                and self.item_of(state, name) == target.value.id and string_key(target.slice) is None
                and not self.memory(state, target.value).sequence):
            return target.value.id
        return name

    def held_item(self, state, name):
        """Was ``name`` bound, on every path, to an item of a list, tuple or dict (``L[0]``)?"""
        container = self.item_of(state, name)
        return container is not None and self.memory(state, A.load(container)).sequence

    @staticmethod
    def item_of(state, name):
        """``L`` where ``name`` was bound, on every path, to an item ``L[...]`` of the name ``L``; else None."""
        bound = state.bound.get(name) if name not in state.ambiguous else None
        made = bound[1] if bound else None
        if (isinstance(made, gast.Assign) and isinstance(made.value, gast.Subscript)
                and isinstance(made.value.value, gast.Name)):
            return made.value.value.id
        return None

    @staticmethod
    def assigned(state, name):
        """The assignment that bound ``name`` (one statement on every path), as you wrote it
        where it is one assignment; else None."""
        bound = state.bound.get(name) if name not in state.ambiguous else None
        made = bound[1] if bound else None
        if not (isinstance(made, gast.Assign) and isinstance(made.targets[0], gast.Name) and made.targets[0].id == name):
            return None
        written = A.anno(made, "origin")
        if not (isinstance(written, gast.Assign) and len(written.targets) == 1
                and isinstance(written.targets[0], gast.Name) and written.targets[0].id == name):
            return made
        return written

    def copy_hint(self, state, name, owner, unread=False):
        """``'rm = bn.running_mean.copy()'``: a copy where ``name`` was bound (one statement on
        every path), else of the global array ``owner``; never a copy of an object. ``unread``:
        the value comes from a call srcad cannot read, whose ``.copy()`` it cannot trust either."""
        written = self.assigned(state, name)
        if written is not None:
            lowered = A.anno(written.value, "lowered_method")  # a method of yours, as a function of its attributes
            value = f"{lowered}(...)" if lowered else _as_written(written.value)
            number = self._number_now(written.value)
            if number is not None:  # (a number has no .copy(); its in-place update rebinds, from a copy too)
                return f"'{name} = {type(number).__name__}({value})'"
            # (a method of yours named copy may return what it holds, a function of yours what it keeps:
            # a new array is np.array's)
            new_array = unread or lowered or value.endswith(".copy()") or _yours(written.value)
            return f"'{name} = np.array({value})'" if new_array else f"'{name} = {value}.copy()'"
        if owner is not None and isinstance(self._global(owner), np.ndarray):  # (a local G = G.copy() would be unbound)
            return f"'{name}_copy = {owner}.copy()', then update that" if name == owner else f"'{name} = {owner}.copy()'"
        return f"'{name} = ....copy()' where '{name}' is assigned"

    def _number_now(self, node):
        """The Python int or float a global's attribute path (``O.b``) holds now, else None:
        for advice only (read without running properties)."""
        path = []
        while isinstance(node, gast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or not path:
            return None
        obj = self._global(node.id)
        for attr in reversed(path):
            try:
                obj = inspect.getattr_static(obj, attr)
            except AttributeError:
                return None
        return obj if type(obj) in (int, float) else None

    def refuse_stale(self, name, state, read):
        updated, update, through = state.stale[name]
        # the name bound later is the one that made the two share memory: copy there (not where
        # a path binds it to None: a loop's ``w = None`` before it shares nothing)
        later = max((state.bound[n] + (n,) for n in (updated, name)
                     if n in state.bound and not (n in state.ambiguous and _binds_none(state.bound[n][1]))),
                    key=lambda b: b[0], default=(0, None, updated))
        made = A.anno(later[1], "origin") if later[1] is not None else None
        line = getattr(A.anno(read, "origin") or read, "lineno", None)
        container = name in state.names and state.names[name].sequence  # (surely a list, tuple or dict)
        raise Refusal((updated, name, made, later[2], line, through[1] if through else None, container), update)


def _binds_none(statement):
    return (isinstance(statement, gast.Assign) and isinstance(statement.value, gast.Constant)
            and statement.value.value is None)
