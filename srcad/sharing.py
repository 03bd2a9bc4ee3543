"""Run-time checks that no array srcad updates in place is shared where it cannot see.

srcad differentiates an in-place update by names: it updates a copy of an argument (your arrays
never change), and an item of a list or dict alone. Where other memory holds the same elements,
Python's program would see the update through it and srcad's would not, so generated code
checks, when it runs, at the user's line:

- ``check_unshared_arguments``, first thing in a function that updates an argument in place:
  the argument shares nothing with its other arguments, nor with anything the function, or a
  function it may call, can reach from the globals, closure cells and defaults it reads;
- ``check_unshared_item`` before ``L[k] op= e``, and ``check_unshared_store`` before a store
  into a list or dict whose items are updated in place: no other item holds the array.

What a value holds is found by walking it (``_Reach``): arrays, the items of lists, tuples,
dicts and other collections, the attributes of objects (and of the classes of yours they
belong to), a partial's arguments. What code reads is found from the names its code objects
hold, followed through the functions, methods, properties and classes found; code installed
with Python or a package (NumPy's, SciPy's, srcad's) is not read for what it may reach.
"""

import functools

from .code_reading import code_names, installed_class, not_yours, reflective
from .errors import UnsupportedCaseError

_ATOMS = (bool, int, float, complex, str, bytes)


def check_unshared_arguments(names, values, updated, where, function, deep=()):
    """Raise where one of the first ``updated`` of ``values`` (the arguments a function updates in
    place) shares memory with another of them, or with what ``function`` or a function it may
    call reads (``f(x, x)``, ``advance(s, s["x"])``, ``f(W0)`` of a global ``W0``, ``f(model.W)``
    of a global ``model``, a class attribute, a helper's default): srcad updates a copy, as the
    caller's arrays never change, so the other would not see the update Python makes. Those of
    them at the positions ``deep`` are deep-copied (a call srcad runs as written may change
    them): none of their lists, dicts or objects may be held elsewhere either. Generated code
    calls this first; ``names`` name the values, ``where`` is the user's file and line."""
    reach = _Reach()
    held = [reach.held(value) for value in values]
    names = list(names)
    reach.functions.append(function)
    while reach.functions:  # what the code reads may hold more functions, read in turn
        for name, value in reach.read_by_code():
            names.append(name)
            held.append(reach.held(value))
    for i in range(updated):
        ids = 2 if i in deep else 1  # a deep copy separates every list, dict and object of yours in it
        for j in range(len(held)):
            mine, theirs = held[i], held[j]
            if j != i and (any(_overlap(a, b) for a in mine[0] for b in theirs[0]) or mine[ids] & theirs[2]):
                raise UnsupportedCaseError(
                    f"{where}this function updates its argument '{names[i]}' in place, and '{names[j]}' shares "
                    f"memory with it here: srcad updates a copy (your arrays never change), so '{names[j]}' would "
                    f"not see the update; pass arrays that share nothing (a copy of one of them)")


def copy_for_calls(value, where):
    """A deep copy of ``value``, an argument that a call srcad runs as written may change in place
    (a helper filling a list of your buffers, a method doing ``self.W *= 0.5``), so that your
    lists, dicts and objects are left as they were. Raise, at the user's line ``where``, where
    Python cannot copy it, or where the copy still shares memory with it (a ``__deepcopy__``
    that keeps an array, or returns the object itself). A library's objects inside it (a logger,
    a random generator) are not copied: the call advances your generator as Python would."""
    import copy

    import numpy as np

    if type(value) is np.ndarray:
        return value.copy()
    library = []  # a library's objects (a logger, a random generator) stay shared, as Python shares them
    reach = _Reach()
    theirs = reach.held(value, library)
    try:
        new = copy.deepcopy(value, {id(o): o for o in library})
    except Exception as exc:  # noqa: BLE001 (a lock, a generator, an object whose __getattr__ raises)
        raise UnsupportedCaseError(f"{where}a call srcad runs as written may change this function's argument in place, so srcad "
                     f"copies it first (your objects never change), and copy.deepcopy cannot copy it "
                     f"({type(exc).__name__}: {exc}); pass the arrays it holds as arguments, or have the call "
                     "return what it changes") from None
    ours = reach.held(new)
    if ours[2] & theirs[2] or any(_overlap(a, b) for a in ours[0] for b in theirs[0]):
        raise UnsupportedCaseError(f"{where}a call srcad runs as written may change this function's argument in place, so srcad "
                     "copies it first (your objects never change), but its copy (copy.deepcopy) still shares memory "
                     "with it (a __deepcopy__ that keeps an array, or returns the object itself); pass the arrays "
                     "it holds as arguments, or have the call return what it changes")
    return new


def check_unshared_store(container, key, value, where):
    """Raise where ``container[key] = value`` (``key`` None: ``container.append(value)``) stores
    an array another item of the list or dict ``container`` holds, when an item of it is
    updated in place later (``L[1] = L[0]; L[0] += x``): srcad keeps a stored value as stored,
    NumPy would change both items."""
    if isinstance(container, (list, dict)):
        others = dict(container) if isinstance(container, dict) else dict(enumerate(container))
        others.pop(key if key is None or isinstance(container, dict) or key >= 0 else len(container) + key, None)
        for array in _Reach().held(value)[0]:  # the value, or the arrays a list, tuple or dict of them holds
            _refuse_shared(list(others.values()), array, where + "this stores an array that another item of the "
                           "same list or dict holds, and an item of it is updated in place later (NumPy would "
                           "change both)")


def check_unshared_item(container, key, where):
    """Raise where ``container[key] op= e`` updates an array that another item of the list or
    dict ``container`` shares, at any depth (``[np.zeros(n)] * k``, ``[z, [z]]``, ``[z, Box(z)]``):
    NumPy changes both, srcad differentiates the update as one of the item alone. Generated code
    calls this before the update; ``where`` is the user's file and line."""
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
    """Raise, saying ``what`` happens, if an array among ``others`` shares an element with the
    array ``item``."""
    for other in _Reach().held(others)[0]:
        if _overlap(other, item):
            raise UnsupportedCaseError(f"{what}: srcad differentiates an update of one item alone; give each item an array of its "
                         "own ([np.zeros(n) for _ in range(k)], z.copy())")


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


class _Reach:
    """What values hold (``held``, each object in a value walked once) and what code reads
    (``read_by_code``, each function read once); the functions met on the way (an object's
    methods, a partial's function) wait in ``functions`` to be read."""

    def __init__(self):
        self.functions = []
        self.read = {}  # id -> each function read so far

    def held(self, value, library=None):
        """``(arrays, ids, objects)`` in ``value``: the arrays (of numbers); the ids of the lists,
        dicts and other mutable collections (one list passed twice shares no array, but is one
        list; the caller holds them alive while the ids are compared); and the ids of those and
        of your objects, which a deep copy separates from their other holders. What a class
        holds is shared by all its objects, and what a library's object (a logger, a random
        generator) holds is its own: their arrays count, not their ids (``library``, if given,
        gets those objects). Nothing of yours is run (no ``__iter__``, ``values()``, property
        or ``__getattr__`` of a class of yours)."""
        import collections.abc
        import types
        import weakref

        import numpy as np

        arrays, mutable, objects, walked, todo = [], set(), set(), set(), [(value, True)]
        while todo:
            item, counted = todo.pop()
            if type(item) is np.ndarray and item.dtype != object:  # (the common case first)
                arrays.append(item)
                continue
            if item is None or type(item) in _ATOMS or id(item) in walked:  # (type: a weak proxy forwards)
                continue
            walked.add(id(item))
            found = []
            try:  # (a weak proxy forwards all of this to its object, or raises if it is gone)
                if isinstance(item, np.ndarray) and item.dtype != object:  # a subclass of ndarray
                    arrays.append(item)
                elif isinstance(item, np.ndarray):  # an array of objects: its items
                    found = item.ravel().tolist()
                elif isinstance(item, memoryview):
                    arrays.append(np.asarray(item))
                elif isinstance(item, types.FunctionType):  # and its attributes (a decorator's wrapper.swap)
                    self.functions.append(item)
                    found = list(vars(item).values())
                elif isinstance(item, (staticmethod, classmethod, property)):
                    self.functions.append(item)
                elif isinstance(item, (types.MethodType, types.BuiltinMethodType)):  # a bound method: its object
                    self.functions.append(item)
                    if not isinstance(item.__self__, types.ModuleType):
                        found = [item.__self__]
                elif isinstance(item, functools.partial):
                    self.functions.append(item.func)
                    found = [*item.args, *item.keywords.values()]
                elif type(item) is weakref.ref:
                    found = [item()]
                elif hasattr(type(item), "cache_info") and callable(getattr(item, "__wrapped__", None)):
                    self.functions.append(item.__wrapped__)  # an lru_cache: its function (not the results kept)
                elif isinstance(item, type):  # a class of yours: its attributes and methods, shared by its objects
                    for k in item.__mro__:
                        if not installed_class(k):
                            todo.extend((v, False) for n, v in vars(k).items() if not n.startswith("__"))
                elif isinstance(item, types.ModuleType):  # (read by attribute names only: read_by_code)
                    if library is not None:
                        library.append(item)
                else:
                    found = _contents(item)
                    yours = not installed_class(item.__class__)
                    collection = isinstance(item, (collections.abc.Collection, collections.abc.Mapping))
                    if counted and (yours or collection) and not isinstance(item, (tuple, frozenset)):
                        objects.add(id(item))
                        if not yours or isinstance(item, (list, dict, set)):
                            mutable.add(id(item))
                    if yours:
                        todo.append((item.__class__, False))
                    elif not collection:  # a library's object (a logger, a generator): its own, shared as it is
                        if library is not None:
                            library.append(item)
                        todo.extend((f, False) for f in found)
                        continue
            except Exception:  # noqa: BLE001 (a weak proxy's object gone, a buffer NumPy cannot read...)
                continue
            todo.extend((f, counted) for f in found)
        return arrays, mutable, objects

    def read_by_code(self):
        """``(name, value)`` of what the functions waiting in ``functions`` may read: the
        globals their code names (every name: an attribute's name counts too, which only adds
        more to compare; all of them where the code reads its globals by reflection),
        attributes of your modules by those names, closure cells and defaults."""
        import types

        read = []
        while self.functions:
            fn = _function_of(self.functions.pop())
            if fn is None or id(fn) in self.read or not_yours(fn.__module__, fn.__code__.co_filename):
                continue
            self.read[id(fn)] = fn
            held = code_names(fn.__code__)
            scope = fn.__globals__
            names = ({n for n in scope if not n.startswith("__")} if reflective(fn.__code__, held)
                     else held & scope.keys())  # (not __loader__, __spec__...: Python's)
            found = [(n, scope[n]) for n in sorted(names)]
            found += [(n, c.cell_contents) for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ()) if _filled(c)]
            found += [(f"a default of {fn.__qualname__}", d)
                      for d in [*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()]]
            for name, value in found:
                if issubclass(type(value), types.ModuleType):  # (type: a weak proxy would forward isinstance)
                    if not not_yours(value.__name__, getattr(value, "__file__", None)):
                        attributes = vars(value)  # (not getattr: a module's __getattr__ may import)
                        read += [(f"{name}.{n}", attributes[n]) for n in sorted(held & attributes.keys())]
                else:
                    read.append((name, value))
        return read


def functions_reached(functions):
    """The Python functions of yours that ``functions`` may run, themselves included: those
    their globals, closure cells and defaults hold, the methods of the classes and objects
    those hold, a function's attributes (a decorator's ``wrapper.swap``), and so on (code
    installed with Python or a package is not read)."""
    reach = _Reach()
    reach.functions.extend(functions)
    while reach.functions:
        for _, value in reach.read_by_code():
            reach.held(value)
    return list(reach.read.values())


def values_reached(functions):
    """The values the functions of yours that ``functions`` may run read by name: the globals
    their code names, their closure cells and defaults (the walk of ``functions_reached``)."""
    reach = _Reach()
    reach.functions.extend(functions)
    values = []
    while reach.functions:
        for _, value in reach.read_by_code():
            values.append(value)
            reach.held(value)
    return values


def _function_of(obj):
    """The Python function behind a function, bound method, static or class method, property
    getter or srcad wrapper; None for anything else."""
    import types

    if isinstance(obj, property):
        obj = obj.fget
    if isinstance(obj, (staticmethod, classmethod, types.MethodType)):
        obj = obj.__func__
    if not isinstance(obj, types.FunctionType):  # a srcad wrapper: the function it differentiates
        try:
            obj = object.__getattribute__(obj, "__dict__").get("__srcad_function__", obj)
        except (AttributeError, ReferenceError):
            return None
    return obj if isinstance(obj, types.FunctionType) else None


def _contents(item):
    """What a container or object holds, read without running code of yours: the items of
    lists, tuples, sets and dicts (and of subclasses of them, through the built-in type's own
    iteration) and of the collections and mappings of installed libraries (a deque, a mapping
    proxy); the attributes of any object (``__dict__``, ``__slots__``)."""
    import collections.abc

    import numpy as np

    held = []
    base = next((t for t in (dict, list, tuple, set, frozenset) if isinstance(item, t)), None)
    if base is dict:
        held = list(dict.values(item))
    elif base is not None:
        held = list(base.__iter__(item))
    elif installed_class(item.__class__) and not isinstance(item, (range, np.generic, str, bytes)):
        if isinstance(item, collections.abc.Mapping):
            held = list(item.values())
        elif isinstance(item, collections.abc.Collection):
            held = list(item)
    return held + _attributes(item)


def _attributes(value):
    """What an object's ``__dict__`` and ``__slots__`` hold, read without calling its code
    (no ``__getattr__``, no property)."""
    import weakref

    try:
        if type(value) in weakref.ProxyTypes:
            held = list(vars(value).values())
        else:
            held = list(object.__getattribute__(value, "__dict__").values())
    except AttributeError:
        held = []
    for k in value.__class__.__mro__:
        slots = vars(k).get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            descriptor = vars(k).get(slot) if isinstance(slot, str) else None
            if hasattr(descriptor, "__get__") and slot not in ("__dict__", "__weakref__"):
                try:
                    held.append(descriptor.__get__(value, value.__class__))
                except AttributeError:  # a slot not set
                    pass
    return held


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
