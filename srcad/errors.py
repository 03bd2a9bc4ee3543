"""Errors srcad raises. Each one names the user's file and line and says what to do."""


class SrcadError(Exception):
    """Base class of every error srcad raises on purpose."""


def _where(filename, lineno):
    if filename is None:
        return ""
    return f"{filename}:{lineno}: " if lineno else f"{filename}: "


class SrcadSyntaxError(SyntaxError, SrcadError):
    """Python that srcad cannot differentiate (yet), at the user's file and line.

    It is a ``SyntaxError``, so tracebacks show the offending line with a caret.
    """

    def __init__(self, message, filename=None, lineno=None, offset=None, text=None):
        super().__init__(message, (filename, lineno, (offset or 0) + 1, text))
        self.message = message

    def __str__(self):
        text = f"\n    {self.text.strip()}" if self.text else ""
        return f"{_where(self.filename, self.lineno)}{self.message}{text}"


class NoRuleError(SrcadError, LookupError):
    """A call to a function that has no derivative rule and no Python source."""


class SourceUnavailableError(SrcadError, OSError):
    """The function's source code cannot be read (interactive session, exec, C code)."""


class UnsupportedCaseError(SrcadError, NotImplementedError):
    """A case of a function srcad has a rule for, but does not differentiate (a mode, an option)."""


class CotangentError(SrcadError, ValueError):
    """A cotangent whose structure or shape does not match the function's output."""


class ArgumentError(SrcadError, TypeError, ValueError):
    """An argument srcad does not differentiate with: an ndarray subclass (np.matrix, a masked
    array), a complex number, an integer where a derivative is asked, or a call that does not
    bind to the function's parameters."""


class WrtError(SrcadError, ValueError, IndexError):
    """A ``wrt`` that names no parameter the caller can differentiate with respect to."""


class ExportError(SrcadError):
    """Something the exported module would need that cannot be written into it."""


# ---- messages raised in several places

def not_scalar(output):
    """Why ``grad`` (or a cotangent left out) fails for a non-scalar output, and what to use:
    ``output`` describes it ("shape (3,)", "a tuple")."""
    return (f"the output has {output}, but a gradient needs a scalar output: for vᵀJ pass the cotangent v "
            "(srcad.adjoint(fn)(*args, v), or y, pullback = srcad.vjp(fn, *args) then pullback(v)); for the "
            "whole Jacobian use srcad.jacobian(fn)(*args)")


def no_method_rule(name):
    """Why calling ``.name()`` on a differentiated value fails, and what to do: an array
    method needs a rule; a method of the user's own class is differentiated when called
    through its class."""
    import numpy as np

    if hasattr(np.ndarray, name):
        return (f"no derivative rule for the array method .{name}(); srcad.extend.register_method maps a "
                "method to a function with a rule")
    return (f"no derivative rule for the method .{name}(); if it is a method of your own class, call it "
            f"through the class (ClassName.{name}(obj, ...)), which srcad reads and differentiates (self.{name}(...) "
            f"in a method of that class, and obj.{name}(...) on a global obj, work as written); an object held in an "
            f"attribute is called through its class too (ClassName.__call__(obj, ...))")


def no_attribute_rule(attr, obj=None):
    """Why reading ``.attr`` off a differentiated value (``obj``, when known) fails, and what to do."""
    import numpy as np

    if hasattr(np.ndarray, attr) and (obj is None or isinstance(obj, np.ndarray)):
        return (f"no derivative rule for the array attribute .{attr}; srcad.extend.register_attribute maps an "
                "array attribute to a function with a rule")
    owner = "an object" if obj is None else f"a {type(obj).__qualname__}"
    return (f"reads .{attr} of {owner} srcad does not model: it differentiates NumPy arrays and numbers, "
            "lists, tuples and dicts of them, and the fields of named tuples and dataclasses. Pass the arrays "
            "the object holds as arguments (one each, or in a tuple, list or dict)")


def source_hint(fn):
    """What to do when the text srcad reads for ``fn`` is not its own: a pseudo-file such as
    ``<string>`` (exec, python -c) holds no text, or another piece of code's."""
    if not fn.__code__.co_filename.startswith("<"):
        return ""
    return f" Pass its text instead: srcad.differentiable({fn.__name__}, source=text)."


def missing_name(dotted, *args, **kwargs):
    """What generated code calls where the user's code calls a name that did not exist when
    srcad compiled it (``np.trapz`` on NumPy 2, in a branch a version test skips): Python
    raises there too, if that branch runs."""
    if "." in dotted:
        raise AttributeError(f"'{dotted}' does not exist (it did not when srcad compiled this function)")
    raise NameError(f"name '{dotted}' is not defined (it was not when srcad compiled this function)")


def check_list_slice(target, index, value, where):
    """Raise where ``target[index] = value`` would change the length of the list ``target``:
    srcad's adjoint of a slice store keeps the list's length (an array's always does).
    Generated code calls this before the store; ``where`` is the user's file and line."""
    if target.__class__ is not list or index.__class__ is not slice:
        return
    replaced = len(range(*index.indices(len(target))))
    given = len(value) if hasattr(value, "__len__") else None
    if given != replaced:
        raise UnsupportedCaseError(
            f"{where}this slice assignment replaces {replaced} items of a list by "
            f"{given if given is not None else 'an iterable of unknown length'}: srcad differentiates a slice "
            "assignment to a list only where it keeps the list's length; assign as many items as the slice "
            "holds, or build a new list (append its items one by one)")


def check_unshared_arguments(names, values, updated, where, function):
    """Raise where one of the first ``updated`` of ``values`` (the arguments a function updates in
    place) shares memory with another of them, or with a global that ``function`` or a function
    it may call reads, at any depth of lists, tuples, dicts and objects' attributes (``f(x, x)``,
    ``advance(s, s["x"])``, ``f(W0)`` of a global ``W0``, ``f(model.W)`` of a global ``model``):
    srcad updates a copy, as the caller's arrays never change, so the other would not see the
    update Python makes. Generated code calls this first; ``names`` name the values, ``where``
    is the user's file and line."""
    names, values = list(names), list(values)
    for name, value in _globals_read(function):
        names.append(name)
        values.append(value)
    held = [_held(value) for value in values]
    for i in range(updated):
        for j in range(len(values)):
            mine, theirs = held[i], held[j]
            if j != i and (any(_overlap(a, b) for a in mine[0] for b in theirs[0])
                           or mine[1] & theirs[1]):
                raise UnsupportedCaseError(
                    f"{where}this function updates its argument '{names[i]}' in place, and '{names[j]}' shares "
                    f"memory with it here: srcad updates a copy (your arrays never change), so '{names[j]}' would "
                    f"not see the update; pass arrays that share nothing (a copy of one of them)")


_CODE_NAMES = {}  # code object -> the global names it and the code nested in it may read


def _code_names(code):
    found = _CODE_NAMES.get(code)
    if found is None:
        found, todo = set(), [code]
        while todo:
            c = todo.pop()
            found.update(c.co_names)
            todo.extend(k for k in c.co_consts if hasattr(k, "co_names"))
        found = _CODE_NAMES[code] = tuple(sorted(found))
    return found


def _globals_read(function):
    """``(name, value)`` of every global and closure value holding memory (not a module, class
    or function) that ``function``, and each Python function it may call, may read (by the
    names their code holds: an attribute's name counts too, which only adds more to compare).
    Functions are found among those values and in the classes of the objects found; modules
    are read by the same names (``cfg.W``). srcad's and NumPy's functions are not entered."""
    import types

    found, seen, todo = [], set(), [function]
    while todo:
        fn = todo.pop()
        fn = getattr(fn, "__srcad_function__", getattr(fn, "__func__", fn))
        if not isinstance(fn, types.FunctionType) or id(fn) in seen or _library(fn.__module__):
            continue
        seen.add(id(fn))
        code_names = _code_names(fn.__code__)
        scope = [(n, fn.__globals__[n]) for n in code_names if n in fn.__globals__]
        scope += [(n, c.cell_contents) for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())
                  if _filled(c)]
        for name, value in scope:
            if isinstance(value, types.ModuleType):
                if not _library(value.__name__):
                    scope.extend((f"{name}.{n}", getattr(value, n)) for n in code_names if hasattr(value, n))
            elif isinstance(value, type):
                todo.extend(_methods(value))
            elif isinstance(value, (types.FunctionType, types.MethodType)) or hasattr(value, "__srcad_function__"):
                todo.append(value)
            elif _holds_memory(value) and id(value) not in seen:
                seen.add(id(value))
                found.append((name, value))
                todo.extend(_methods(type(value)))
    return found


def _methods(cls):
    """The functions a class of yours and its bases of yours define (not srcad's, NumPy's...)."""
    return [f for k in cls.__mro__ if not _library(k.__module__) for f in vars(k).values()]


def _holds_memory(value):
    """May ``value`` hold an array: an array, a list, tuple or dict, or an object of a class of
    yours (through its attributes)?"""
    import numpy as np

    if isinstance(value, (np.ndarray, list, tuple, dict)):
        return True
    return _object(value)


def _object(value):
    """Is ``value`` an object of a class not srcad's, NumPy's, SciPy's or Python's own, whose
    attributes (``__dict__``, ``__slots__``) may hold arrays?"""
    import types

    return (not isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType))
            and not _library(type(value).__module__)
            and (hasattr(value, "__dict__") or hasattr(type(value), "__slots__")))


def _attributes(value):
    held = list(getattr(value, "__dict__", {}).values())
    for k in type(value).__mro__:
        for slot in vars(k).get("__slots__", ()):
            if isinstance(slot, str) and hasattr(value, slot) and slot != "__dict__":
                held.append(getattr(value, slot))
    return held


def _held(value):
    """``(arrays, ids)`` in ``value``, through lists, tuples, dicts and the attributes of your
    objects, each walked once (a list may hold itself): the arrays, and the ids of the lists and
    dicts (one list passed twice shares no array, but is one list; the caller holds them alive
    while the ids are compared)."""
    import numpy as np

    arrays, mutable, walked, todo = [], set(), set(), [value]
    while todo:
        item = todo.pop()
        if isinstance(item, np.ndarray):
            arrays.append(item)
        elif id(item) in walked:
            continue
        elif isinstance(item, (list, tuple, dict)):
            walked.add(id(item))
            if not isinstance(item, tuple):
                mutable.add(id(item))
            todo.extend(item.values() if isinstance(item, dict) else item)
        elif _object(item):
            walked.add(id(item))
            todo.extend(_attributes(item))
    return arrays, mutable


def _library(module):
    return (module or "").split(".")[0] in ("srcad", "numpy", "scipy", "builtins")


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def check_unshared_store(container, key, value, where):
    """Raise where ``container[key] = value`` (``key`` None: ``container.append(value)``) stores
    an array another item of the list or dict ``container`` holds, when an item of it is
    updated in place later (``L[1] = L[0]; L[0] += x``): srcad keeps a stored value as stored,
    NumPy would change both items."""
    if isinstance(container, (list, dict)):
        others = dict(container) if isinstance(container, dict) else dict(enumerate(container))
        others.pop(key if key is None or isinstance(container, dict) or key >= 0 else len(container) + key, None)
        for array in _held(value)[0]:  # the value, or the arrays a list, tuple or dict of them holds
            _refuse_shared(list(others.values()), array, where + "this stores an array that another item of the "
                           "same list or dict holds, and an item of it is updated in place later (NumPy would "
                           "change both)")


def check_unshared_item(container, key, where):
    """Raise where ``container[key] op= e`` updates an array that another item of the list or
    dict ``container`` shares, at any depth (``[np.zeros(n)] * k``, ``[z, [z]]``): NumPy changes
    both, srcad differentiates the update as one of the item alone. Generated code calls this
    before the update; ``where`` is the user's file and line."""
    if not isinstance(container, (list, dict)):
        return
    import numpy as np

    item = container[key]
    if item.__class__ is not np.ndarray:
        return
    others = list(container.values()) if isinstance(container, dict) else list(container)
    del others[list(container).index(key) if isinstance(container, dict) else key]
    _refuse_shared(others, item, where + "this update changes an array in place that another item of the same list "
                   "or dict holds too (a list made as [a] * n, the same array stored twice)")


def _refuse_shared(others, item, what):
    """Raise, saying ``what`` happens, if an array among ``others`` (lists, tuples and dicts
    searched through) shares an element with the array ``item``."""
    for other in _held(others)[0]:
        if _overlap(other, item):
            raise UnsupportedCaseError(
                f"{what}: srcad differentiates an update of one item alone; give each item an array of its own "
                "([np.zeros(n) for _ in range(k)], z.copy())")


def _overlap(a, b):
    """Do two arrays share an element (not merely the bounds of their memory: the columns of
    ``np.hsplit`` do not)? Unsure counts as yes."""
    import numpy as np

    if not np.may_share_memory(a, b):
        return False
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except getattr(np, "exceptions", np).TooHardError:  # (np.exceptions: NumPy 1.25 on)
        return True


def check_method(obj, name, function, where, receiver="self"):
    """Raise unless ``obj.name`` is ``function`` bound to ``obj``: srcad differentiated
    ``self.name(...)`` as ``function(self, ...)`` (the method of the caller's class, or of the
    class of the argument ``receiver`` the code is compiled for), so it runs only where Python
    would call that same function (no override in a subclass, no attribute of the object by
    that name). Generated code calls this; ``where`` is the user's file and line."""
    bound = getattr(obj, name, None)
    if getattr(bound, "__func__", None) is function and getattr(bound, "__self__", None) is obj:
        return
    found = getattr(getattr(bound, "__func__", bound), "__qualname__", type(bound).__name__)
    if receiver == "self":
        what, own = "the method of the class whose method calls it", f"differentiate {type(obj).__qualname__}'s own method"
    else:
        what, own = "the method of its class", "delete the attribute"
    raise UnsupportedCaseError(
        f"{where}{receiver}.{name}(...) on this {type(obj).__qualname__} object calls {found}, not "
        f"{function.__qualname__}, which srcad differentiated ({what}); "
        f"call the method you mean through its class ({found}({receiver}, ...)), or {own}")
