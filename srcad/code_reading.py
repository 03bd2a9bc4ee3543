"""Reading Python's code objects without running them: the code nested in a function's,
the names it holds, whether it reads its scope by reflection, and whose code it is (yours,
or installed: Python's, a package's, srcad's), for the checks that follow what code can reach
(``sharing``, ``rebinding``) and the keys that describe it (``cache``).

>>> def f(x):
...     return [math.sin(v) for v in x]
>>> sorted(code_names(f.__code__))
['math', 'sin']
>>> reflective(f.__code__, code_names(f.__code__)), installed_class(dict), not_yours("mine", None)
(False, True, False)
"""
REFLECTIVE = frozenset({"globals", "vars", "locals", "getattr", "eval", "exec", "__dict__", "__getattribute__"})
_INSTALLED = {}  # file name -> installed_file(file name): asked for every function read


def reflective(code, code_names, functions=REFLECTIVE, attributes=frozenset({"__dict__", "__getattribute__"})):
    """Does ``code`` (or code nested in it) read its globals by a name it builds, calling
    ``globals()``, ``vars()``, ``eval``... (read as a global: ``self.eval()`` is not)? Other
    ``functions`` and ``attributes`` ask about other reflection (``setattr``, ``__setattr__``)."""
    import dis

    if not code_names & (functions | attributes):
        return False
    for c in nested_code(code):
        for op in dis.get_instructions(c):
            if op.opname in ("LOAD_GLOBAL", "LOAD_NAME") and op.argval in functions:
                return True
            if op.opname in ("LOAD_ATTR", "LOAD_METHOD") and op.argval in attributes:
                return True
    return False


def code_names(code):
    """The names ``code`` and the code nested in it hold (globals, attributes, methods)."""
    return {name for c in nested_code(code) for name in c.co_names}


def nested_code(code):
    """``code`` and the code objects nested in it (comprehensions, lambdas, inner functions)."""
    todo = [code]
    while todo:
        c = todo.pop()
        todo.extend(k for k in c.co_consts if hasattr(k, "co_names"))
        yield c


def installed_class(cls):
    """Is ``cls`` defined by installed code (Python's, NumPy's, a package's, srcad's), whose
    methods srcad does not read for what they may reach?"""
    import sys
    import types

    name = cls.__module__
    if not isinstance(name, str):  # a C type that keeps __module__ per object (Cython's functions)
        return not any(isinstance(v, types.FunctionType) for k in cls.__mro__ for v in vars(k).values())
    module = sys.modules.get(name)
    return not_yours(name, getattr(module, "__file__", None))


def attribute_now(obj, attr):
    """``getattr(obj, attr)`` where reading it now, when the code is made, runs no code of
    yours: a module's own attribute (not a ``__getattr__`` of your module), a value or function stored
    on the object or its class, a C-level descriptor (``x.T``), or any attribute of an object
    of an installed class, a property read on its class (``C.W``: the property object). Raises
    ``AttributeError`` for a property read on an object, ``__getattr__`` or
    another descriptor of your class: it runs when the code runs, and would run twice."""
    import inspect
    import types

    if isinstance(obj, types.ModuleType):
        if installed_object(obj):  # a library's lazy attribute (np.testing) is its module's __getattr__
            return getattr(obj, attr)
        try:
            return vars(obj)[attr]
        except KeyError:
            raise AttributeError(attr) from None
    owner = obj if isinstance(obj, type) else type(obj)
    if installed_class(owner) and installed_class(type(owner)):  # (a class: its metaclass too)
        return getattr(obj, attr)
    if defines_getattribute(owner) and not isinstance(obj, type):
        raise AttributeError(f"{owner.__qualname__} defines __getattribute__: {attr} is read when the code runs")
    static = inspect.getattr_static(obj, attr, _ABSENT)
    if static is _ABSENT:
        raise AttributeError(attr)  # (a __getattr__ of yours would answer)
    import functools

    from .extend import custom_vjp

    # (functools.partial has a __get__ from Python 3.13 on: getattr answers as the code will read it)
    if not hasattr(type(static), "__get__") or isinstance(static, (
            types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType, types.MethodDescriptorType,
            types.GetSetDescriptorType, types.MemberDescriptorType, types.WrapperDescriptorType, type, custom_vjp,
            _NAMED_TUPLE_FIELD, functools.partial)):
        return getattr(obj, attr)
    if isinstance(obj, type) and type(static) is property:  # read on the class: the property itself
        return static
    raise AttributeError(f"{attr} is a {type(static).__name__} of {owner.__qualname__}: read when the code runs")


_ABSENT = object()


def defines_getattribute(cls):
    """Does a class in ``cls``'s bases other than Python's built-in ones (tuple's, list's: the
    generic read) define ``__getattribute__``?"""
    return any("__getattribute__" in vars(klass) and klass.__module__ != "builtins" for klass in cls.__mro__)
# the C-level descriptor of a namedtuple's field (cfg.loss): it reads a tuple item, no code of yours
_NAMED_TUPLE_FIELD = type(__import__("collections").namedtuple("_Record", "field").field)


def installed_object(obj):
    """Is ``obj`` an installed library's (``not_yours``)? A module, class or function by its
    own module (a class of yours is yours though its type is ``type``), anything else by its
    class's."""
    import types

    if isinstance(obj, types.ModuleType):
        return not_yours(obj.__name__, getattr(obj, "__file__", None))
    if isinstance(obj, type):
        return installed_class(obj)
    if isinstance(obj, types.FunctionType):
        return not_yours(obj.__module__, obj.__code__.co_filename)
    return installed_class(type(obj))


def not_yours(module, filename):
    """Is code of ``module`` in ``filename`` installed (Python's, a package's), srcad's, or
    built into Python? (A module made in code, without a file, is yours.)"""
    import sys

    module = module or ""
    if module.split(".")[0] == "srcad":
        return True
    return installed_file(filename) if filename else module in sys.builtin_module_names


def installed_file(filename):
    """Is ``filename`` installed code (a package in site-packages, the standard library)?"""
    import os
    import sysconfig  # (not at import srcad: it costs its startup)

    if not filename or filename.startswith("<"):
        return False
    found = _INSTALLED.get(filename)
    if found is None:
        path = os.path.realpath(filename)
        roots = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} - {None}
        found = _INSTALLED[filename] = bool({"site-packages", "dist-packages"} & set(path.split(os.sep))) or any(
            path.startswith(os.path.realpath(r) + os.sep) for r in roots)
    return found


def defines_operator(cls, method):
    """Does ``cls`` (or a class of yours it inherits from) define the operator ``__method__``
    (``"mul"``), its reflected or its in-place form?"""
    names = {f"__{method}__", f"__r{method}__", f"__i{method}__"}
    return any(names & vars(k).keys() for k in cls.__mro__ if not installed_class(k))


def written_by_hand(cls, wanted):
    """The first name ``wanted(name)`` accepts of a function that ``cls`` or a class of yours
    it inherits from defines by hand (``first_written_by_hand``); else None."""
    return first_written_by_hand([k for k in cls.__mro__ if not installed_class(k)], wanted)


def first_written_by_hand(classes, wanted):
    """The first name ``wanted(name)`` accepts of a function (or a static or class method, or a
    property's getter) one of ``classes`` defines by hand, not as ``dataclasses`` or
    ``collections.namedtuple`` write it (exec'd text, or their own module); else None."""
    import collections
    import dataclasses

    for k in classes:
        for name, value in vars(k).items():
            function = getattr(value, "__func__", getattr(value, "fget", value))
            code = getattr(function, "__code__", None)
            if wanted(name) and code is not None and not code.co_filename.startswith("<") \
                    and code.co_filename not in (dataclasses.__file__, collections.__file__):
                return name
    return None
