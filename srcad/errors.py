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


class IntegerOverflowError(SrcadError, OverflowError):
    """Integer arithmetic of code the numba backend compiled passed 64 bits, where numba's
    integers wrap and Python's grow (``passes.integer_growth``)."""


class ComplexPowerError(SrcadError, ValueError):
    """A negative Python float raised to a fractional power in code the numba backend compiled:
    Python's result is a complex number, numba's a float nan (``passes.integer_growth``)."""


class CheckpointReplayError(SrcadError, RuntimeError):
    """A checkpointed loop's segment, run again from its snapshot in the reverse sweep, did not
    arrive at the values the first run had there: the body depends on state no snapshot holds."""


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

    from .passes.frozen_distributions import METHODS

    if hasattr(np.ndarray, name):
        return (f"no derivative rule for the array method .{name}(); srcad.extend.register_method maps a "
                "method to a function with a rule")
    if name == "_replace":
        return ("no derivative rule for the method ._replace(): srcad lowers s._replace(...) only where it knows "
                "s's class, a named tuple whose _replace and _make namedtuple wrote: a record built in this function "
                "(s = Point(...), then bound again only to s._replace(...) or the result of a function given s), an "
                "argument of the differentiated function, or a parameter of a helper given one of these; build the "
                "new record with its class instead (Point(x=..., v=s.v))")
    frozen = (f"; a frozen scipy.stats distribution's .{name}(x) is differentiated where the distribution is "
              f"made in the call (stats.norm(mu, s).{name}(x)), held in a module-level name, or in a local name "
              f"bound once and read only through such methods: otherwise write stats.norm.{name}(x, mu, s)"
              ) if name in METHODS else ""
    return (f"no derivative rule for the method .{name}(){frozen}; if it is a method of your own class, call it "
            f"through the class (ClassName.{name}(obj, ...), or ClassName.{name}(...) for a static or class method), "
            f"which srcad reads and differentiates (self.{name}(...) "
            f"in a method of that class, and obj.{name}(...) on a global obj, work as written; so does obj.{name}(...) "
            f"on an object made in this function by obj = ClassName(...) or by a class method ending in return "
            f"cls(...), obj = ClassName.from_params(...), but not on one a method returns, as by return "
            f"type(self)(...): make it with obj = ClassName(...) there); an object held in an "
            f"attribute is called through its class too (ClassName.__call__(obj, ...)); a function an object holds in "
            f"an attribute (self.{name} = np.tanh) is differentiated where srcad knows the object when compiling: an "
            f"argument, the object of srcad.grad(obj.method), a module-level object, or an object one of those holds "
            f"in an attribute (not an object in a list, nor one made in the function): call the function by its "
            f"name there, or define {name} as a method of the class")


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


def check_module(value, module, written, name, where):
    """Raise unless the parameter ``name`` holds ``module``, the module its default is written
    as (``written``): srcad read ``name.f(...)`` as ``written.f(...)`` (``passes.module_aliases``),
    right only where the call leaves the default as it is. Generated code calls this; ``where``
    is the user's file and line."""
    if value is module:
        return
    held = f"the module {value.__name__}" if isinstance(value, type(module)) else f"a {type(value).__name__}"
    raise UnsupportedCaseError(
        f"{where}'{name}' holds {held} in this call, but srcad differentiated this function reading '{name}' as "
        f"the module its default is written as, {written} ({module.__name__}): a parameter holding a module is "
        f"read only as that default; pass no other value for '{name}', or bind the module you mean at module "
        f"level ({name.upper()} = ...) and call through that name")


def check_property(obj, name, getter, where, receiver="self"):
    """Raise unless reading ``obj.name`` runs the property getter ``getter``: srcad
    differentiated ``self.W`` as ``getter(self)`` (``C.W.fget``, ``passes.property_reads``),
    so it runs only where the object's class has that same property. Generated code calls
    this; ``where`` is the user's file and line."""
    found = next((vars(c)[name] for c in type(obj).__mro__ if name in vars(c)), None)
    if type(found) is property and found.fget is getter:
        return
    what = f"the property {found.fget.__qualname__}" if isinstance(found, property) and hasattr(
        found.fget, "__qualname__") else f"a {type(found).__name__}" if found is not None else "no class attribute"
    raise UnsupportedCaseError(
        f"{where}{receiver}.{name} on this {type(obj).__qualname__} object reads {what}, not the property "
        f"{getter.__qualname__}, which srcad differentiated (the property of the class the code is compiled for); "
        f"call the getter you mean as a function ({getter.__qualname__}.fget({receiver}))")


def check_method(obj, name, function, where, receiver="self", binds=..., after=None, among=None):
    """Raise unless ``obj.name`` is ``function`` bound to ``obj``: srcad differentiated
    ``self.name(...)`` as ``function(self, ...)`` (the method of the caller's class, or of the
    class of the argument ``receiver`` the code is compiled for), so it runs only where Python
    would call that same function (no override in a subclass, no attribute of the object by
    that name). ``binds``: what a class method binds (its class), None for a static method
    (``obj.name`` is ``function`` itself). ``after``: the class ``C`` of ``super().name(...)``
    in a method of ``C``, looked up past it (``super(C, obj).name``). Generated code calls
    this; ``where`` is the user's file and line. ``among``: for an object in a list, the classes
    the code was made for (``passes.item_methods``)."""
    bound = getattr(obj if after is None else super(after, obj), name, None)
    if binds is None and bound is function:
        return
    owner = obj if binds is ... else binds
    if binds is not None and getattr(bound, "__func__", None) is function and getattr(bound, "__self__", None) is owner:
        return
    found = getattr(getattr(bound, "__func__", bound), "__qualname__", type(bound).__name__)
    calls, differentiated, through = found, function.__qualname__, f"{found}({receiver}, ...)"
    if binds is not ... and binds is not None and getattr(bound, "__func__", None) is function:
        # the same class method, bound to the object's class, not to the one srcad read it with
        bound_to = getattr(bound.__self__, "__qualname__", type(bound.__self__).__name__)
        calls, through = f"{found} bound to {bound_to}", f"{bound_to}.{name}(...)"
        differentiated += f" bound to {getattr(owner, '__qualname__', owner)}"
    if after is not None:
        raise UnsupportedCaseError(
            f"{where}super().{name}(...) on this {type(obj).__qualname__} object calls {calls}, not "
            f"{differentiated}, which srcad differentiated (the next class's method after "
            f"{after.__qualname__} in {after.__qualname__}'s own order: {type(obj).__qualname__} puts another "
            f"class between them); call the method you mean through its class ({through})")
    if among is not None:
        raise UnsupportedCaseError(
            f"{where}{receiver}.{name}(...) on this {type(obj).__qualname__} object calls {calls}, and srcad made "
            f"this code for the classes of the objects it found in your lists when compiling ({among}); pass the "
            "list (or the object holding it) as an argument, so that srcad compiles for the classes it holds when "
            f"it is called, or call the method you mean through its class ({through})")
    if receiver == "self":
        what, own = "the method of the class whose method calls it", f"differentiate {type(obj).__qualname__}'s own method"
    else:
        what, own = "the method of its class", "delete the attribute"
    raise UnsupportedCaseError(
        f"{where}{receiver}.{name}(...) on this {type(obj).__qualname__} object calls {calls}, not "
        f"{differentiated}, which srcad differentiated ({what}); "
        f"call the method you mean through its class ({through}), or {own}")


def check_record_class(value, cls, name, where):
    """Raise unless ``value`` is a ``cls`` itself: srcad took ``name`` bound to what a function
    returned (``s = step(s, dt)``) to keep the record class ``cls`` it is built with, and made
    the code for that class (``dataclasses.replace(s, ...)`` lowered to its fields, helpers
    compiled for it). Generated code calls this after the assignment; ``where`` is the user's
    file and line."""
    if value.__class__ is cls:
        return
    raise UnsupportedCaseError(
        f"{where}'{name}' now holds a {type(value).__qualname__}, but srcad made this code for '{name}' holding a "
        f"{cls.__qualname__}, the record it is built as (it lowers dataclasses.replace and s._replace on it, and "
        f"compiles the helpers given it, for that class); give the new value another name, or return a "
        f"{cls.__qualname__} (a subclass too has other code)")


def check_table_item(table, key, expected, where, text):
    """Return ``table[key]`` (raising what Python raises for a missing key or index) unless it is
    none of the functions ``expected``: srcad differentiated ``text(...)`` (an item of a dispatch
    table of the module) as a call of those, which the table held when the code was made
    (``passes.dispatch_tables``). Generated code calls this; ``where`` is the user's file and line."""
    held = table[key]
    if any(held is f for f in expected):
        return held
    raise UnsupportedCaseError(
        f"{where}{text} holds {_function_text(held)} for the key {key!r} now, not "
        f"{' or '.join(_function_text(f) for f in expected)}, which srcad made this code call there (what the "
        "table held when srcad compiled it): the table was changed since; fill the table before srcad compiles "
        "the function, or bind the table's name to the new table (ACTS = {...}), which makes srcad compile anew")


def _function_text(fn):
    """``fn``'s name for a message, with the line of its source (two lambdas are told apart)."""
    code = getattr(fn, "__code__", None)
    return getattr(fn, "__qualname__", repr(fn)) + (f" (line {code.co_firstlineno})" if code is not None else "")
