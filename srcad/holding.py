"""How guards hold what compiled code was made for: weakly where they can (a cache entry must
not keep the user's objects alive), and so that an object Python makes anew at every read
is found again: a bound method by its object and function (``np.multiply.outer``), an array's
by the memory and layout of the view (``C.T.dot``), and the end of a path that makes a new
object at each read (``G.T.tocsr``, ``A.shape``) by the object read the same each time
before it and a description of the rest (``made_anew``); srcad's binding of a callee's
generated function, made anew for every wrapper, by what it was bound from (``bound_from``).
A guard built on them still fails when what they stand for changed: another object bound,
an array reshaped in place.

>>> import numpy as np
>>> A = np.ones((2, 3))
>>> made_anew(A, ("T", "shape"), A.T.shape).holds(A, ("T", "shape"))
True
"""
import types
import weakref

import numpy as np

from .astutil import LITERAL_TYPES
from .code_reading import installed_class

_MISSING = object()


def _follow(value, attrs):
    for attr in attrs:
        if value is _MISSING:
            break
        try:
            value = getattr(value, attr)
        except Exception:  # a property that raises is as good as no attribute
            return _MISSING
    return value


def _same(current, expected):
    """Is ``current`` the object the code was made for? A bound method is made afresh by every
    attribute read, so it counts as the same if its object and function are."""
    if isinstance(expected, _ArrayMethod):
        return expected.matches(current)
    return current is expected or (isinstance(current, (types.MethodType, types.BuiltinMethodType))
                                    and type(current) is type(expected) and current == expected)


def _hold(obj):
    """A way back to ``obj`` that does not keep it (and the module it came from) alive when
    it supports weak references; call it for the object, or _MISSING once it is gone."""
    owner = getattr(obj, "__self__", None)
    if isinstance(obj, types.BuiltinMethodType) and owner is not None and not isinstance(owner, types.ModuleType):
        # a builtin's bound method (``np.multiply.outer``, ``C.dot``) is made anew by every
        # attribute read: a weak reference to it dies at once (the code would be made again on
        # every call), so hold its object and read the method again (``_same`` takes an equal
        # bound method for the same); an array's, whose object may be made anew too (``C.T``), by
        # what the array is a view of
        if type(owner) is np.ndarray:
            method = _ArrayMethod(owner, obj.__name__)
            return lambda: method
        held_owner, name = _hold(owner), obj.__name__
        return lambda: _follow(held_owner(), (name,))
    standin = bound_from(obj)
    if standin is not None:  # srcad's binding of a callee's generated code: any binding of it will do
        return lambda: _live(standin)
    try:
        ref = weakref.WeakMethod(obj) if isinstance(obj, types.MethodType) else weakref.ref(obj)
    except TypeError:  # builtins, ufuncs: nothing of the user's to keep alive
        return lambda: obj

    def held():
        value = ref()
        return _MISSING if value is None else value

    return held


# srcad's generated function of a callee, bound to it -> the ``guards._CalleeFunction`` it was
# bound from. Kept here, not in the function's ``__dict__``: what reads a function's attributes
# (``sharing.functions_reached``) would walk from it into the stand-in's compiled code and every
# module that holds
_BOUND_FROM = weakref.WeakKeyDictionary()


def mark_bound_from(fn, standin):
    _BOUND_FROM[fn] = standin


def bound_from(fn):
    """The ``guards._CalleeFunction`` whose binding ``fn`` is, or None for any other object."""
    return _BOUND_FROM.get(fn) if isinstance(fn, types.FunctionType) else None


def _live(standin):
    bound = standin.live()
    return _MISSING if bound is None else bound


def hold_path(root, attrs, obj):
    """How compiled code made for ``root.attrs`` denoting ``obj`` keeps it, as ``_hold`` does:
    call it for what ``path_holds`` compares with; where a read on the path makes a new object
    each time, a ``_Reread`` (``made_anew``)."""
    held = _hold(obj)
    if _same(_follow(root, attrs), held()):
        return held
    reread = made_anew(root, attrs, obj)
    return held if reread is None else lambda: reread


def made_anew(root, attrs, obj, pasted=False):
    """Where a read on the path ``root.attrs`` makes a new object each time (``G.T`` of a sparse
    matrix, ``A.shape``, ``A.flat``, ``G.T.tocsr``: a property or C-level attribute of an
    installed class), ``obj`` can never be found there again and the code would be made on every
    call: a ``_Reread`` holding the last object read the same each time (``G``) and a
    description of what the rest of the path gives, or None (nothing made anew, or nothing
    ``_description`` can tell apart). ``pasted``: the code holds ``obj`` itself (a rule
    template's fact), so only what is the same value or a view of the same memory will do."""
    base, head = root, 0
    for attr in attrs:
        if _follow(base, (attr,)) is not _follow(base, (attr,)):
            break
        base, head = _follow(base, (attr,)), head + 1
    description = _description(obj, pasted)
    if base is _MISSING or head == len(attrs) or description is None:
        return None
    reread = _Reread(head, base, description, pasted)
    return reread if reread.holds(root, attrs) else None


def path_holds(root, attrs, expected):
    """Does ``root.attrs`` still denote what ``expected`` (from a ``hold_path``) stands for?"""
    if type(expected) is _Reread:
        return expected.holds(root, attrs)
    return _same(_follow(root, attrs), expected)


class _Reread:
    """A path whose last attributes make a new object at every read: the same (``is``) object
    up to ``head`` attributes (held weakly where it can be), and from there an object that
    ``_description`` tells apart from any the compiled code was not made for."""

    __slots__ = ("head", "base", "description", "pasted")

    def __init__(self, head, base, description, pasted):
        self.head, self.base, self.description, self.pasted = head, _hold(base), description, pasted

    def holds(self, root, attrs):
        base = _follow(root, attrs[:self.head])
        return (base is not _MISSING and base is self.base()
                and _description(_follow(base, attrs[self.head:]), self.pasted) == self.description)

    def __repr__(self):
        return f"<made anew at each read: {self.description!r}>"


def _description(value, pasted=False):
    """What compiled code may have taken from ``value``, an object made anew by each read, as
    something compared by ``==``; None for an object it cannot describe so (fail closed: the
    code is made again). A literal by its text (``A.shape``), a tuple item by item, a dtype
    itself, an array by its memory and layout (``A.T``, ``G.T.data``), a bound method by its
    function and its object's description (``G.T.tocsr``), and an object of an installed class
    by its class, shape and dtype (``G.T``, ``A.flat``) unless the code holds it (``pasted``:
    it may hold other memory than the new one)."""
    kind = type(value)
    if kind in LITERAL_TYPES or isinstance(value, np.generic):
        return kind, repr(value)
    if kind is tuple:
        items = tuple(_description(v, pasted) for v in value)
        return None if None in items else (tuple, items)
    if isinstance(value, np.dtype):
        return kind, value
    if isinstance(value, np.ndarray):
        return kind, _layout(value)
    if isinstance(value, types.MethodType):
        owner = _description(value.__self__, pasted)
        return None if owner is None else (kind, weakref.ref(value.__func__), owner)
    if isinstance(value, (types.BuiltinMethodType, types.MethodWrapperType)) \
            and not isinstance(value.__self__, types.ModuleType):  # (a method-wrapper: A.flat.__getitem__)
        owner = _description(value.__self__, pasted)
        return None if owner is None else (kind, value.__name__, owner)
    if pasted or not installed_class(kind) or isinstance(value, (type, types.ModuleType)) or callable(value):
        return None
    return kind, _description(getattr(value, "shape", None)), _description(getattr(value, "dtype", None))


class _ArrayMethod:
    """A method of a NumPy array as compiled code was made for it (``C.dot``, ``C.T.dot``, read
    anew as a new bound method of a new view at every call): the same for the method of that
    name of a view of the same memory with the same shape, strides and dtype (the array that
    owns the memory held weakly: rebinding ``C`` makes the code again)."""

    __slots__ = ("owner", "layout", "name")

    def __init__(self, view, name):
        self.owner, self.layout, self.name = weakref.ref(_memory_owner(view)), _layout(view), name

    def matches(self, method):
        view = getattr(method, "__self__", None)
        return (isinstance(method, types.BuiltinMethodType) and type(view) is np.ndarray
                and method.__name__ == self.name and _memory_owner(view) is self.owner()
                and _layout(view) == self.layout)

    def __repr__(self):
        return f"<method {self.name} of an array view {self.layout[1:]}>"


def _memory_owner(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _layout(view):
    return view.__array_interface__["data"][0], view.shape, view.strides, view.dtype
