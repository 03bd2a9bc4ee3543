"""Item forms: the statement and expression forms of generated code that the small-array
passes (``vector_facts``, ``scalar_arrays``) read item by item, recognised by what their
names denote, never by spelling.

>>> import gast
>>> expr = gast.parse("a * b[1] + -c", mode="eval").body
>>> [type(leaf).__name__ for leaf in leaves(expr)]
['Name', 'Subscript', 'Name']
>>> push_of(gast.parse("_x_stack.append(x)").body[0])
('_x_stack', 'x')
"""
import gast
import numpy as np

from .. import astutil as A
from .. import runtime

ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)


def denotes(func, obj):
    return isinstance(func, gast.Name) and A.anno(func, "denotes") is obj


def callee_is(call, obj):
    callee = A.anno(call, "callee")
    return callee is not None and getattr(callee, "obj", None) is obj


def literal_index(node):
    """The literal integer of a subscript's index, or None."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None



def reads_one_element(base_spec, index, spec_of):
    """Is ``base[index]`` one element of a numeric array, a NumPy scalar that shares no memory
    with it? True only where ``base_spec`` (a ``shapes.Spec``) has as many dimensions as the
    index has parts, each an integer literal or a name whose spec (``spec_of(name)``) is an
    integer scalar: no slice, ``None``, ``...``, boolean or array index. (An element of a
    structured or object array is a view or the object itself: not numeric, so never.)"""
    shape, dtype = getattr(base_spec, "shape", ()), getattr(base_spec, "dtype", None)
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if not shape or len(shape) != len(parts) or dtype is None or dtype.kind not in "biufc":
        return False
    for part in parts:
        if literal_index(part) is not None:
            continue
        spec = spec_of(part.id) if isinstance(part, gast.Name) else None
        if getattr(spec, "shape", None) != () or spec.dtype.kind not in "iu":
            return False
    return True


def mark_element_reads(stmts, specs, every_array=False):
    """Annotate ``"one_element"`` (its dtype) on each read ``a = S[i, j]`` of one element of an
    array ``stmts`` update in place (``S[k, l] = ...``, ``S *= ...``; of any array with
    ``every_array``: ``a, b = y[0], y[1]`` then ``a += dt * b`` rebinds ``a``), where ``specs`` prove it:
    a NumPy scalar, which no later store changes, so the memory analysis neither copies it
    (``record_values``) nor counts it as sharing ``S``'s memory (``aliasing``). So too the item
    ``a = L[k]`` a for loop over such an array binds (``L = list(S)``, ``passes.loops``) where
    ``S`` is one-dimensional: an item of a vector is a scalar, a row of a matrix is a view (a
    change to ``S`` the loop reads later is refused still: ``L`` stands for ``S`` itself). Code
    generation writes the fact into the source (``a: np.float64 = S[i, j]``), where srcad
    reads it back when it differentiates that code again (``passes.normalize``). Returns
    whether it marked a read not marked before."""
    updated = _updated_in_place(stmts)
    iterated = _iterated_arrays(stmts) if updated or every_array else {}
    marked = False
    for s in A.walk_statements(stmts):
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Subscript) and isinstance(s.value.value, gast.Name)):
            continue
        base = s.value.value.id
        if base in updated:
            spec = specs.get(base)
        elif base in iterated:  # (a list of the items: one index per axis of the array)
            spec = specs.get(iterated[base])
        elif every_array:
            spec = specs.get(base)
        else:
            continue
        if reads_one_element(spec, s.value.slice, specs.get):
            marked = marked or A.anno(s.value, "one_element") is None
            A.set_anno(s.value, "one_element", spec.dtype)
    return marked


def _updated_in_place(stmts):
    """The names ``stmts`` update in place by a store into an item (``S[k] = ...``) or an
    augmented assignment (``S *= ...``: ``in_place``, from ``passes.in_place``)."""
    updated = set()
    for s in A.walk_statements(stmts):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript) \
                and isinstance(s.targets[0].value, gast.Name):
            updated.add(s.targets[0].value.id)
        elif A.anno(s, "in_place") is not None:
            updated.add(A.anno(s, "in_place")[0])
    return updated


def _iterated_arrays(stmts):
    """``{L: S}`` for each for loop's ``L = list(S)`` (``"iterates"``, ``passes.loops``) of a
    name ``S``, or of ``reversed(S)`` bound to a name (``L`` then holds ``S``'s items too)."""
    made = {}
    for s in A.walk_statements(stmts):
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call)
                and A.anno(s.value, "iterates") and len(s.value.args) == 1 and not s.value.keywords
                and isinstance(s.value.args[0], gast.Name)):
            made[s.targets[0].id] = (A.anno(s.value, "callee"), s.value.args[0].id)
    found = {}
    for name, (callee, arg) in made.items():
        if getattr(callee, "obj", None) is not list:
            continue
        inner = made.get(arg)
        found[name] = inner[1] if inner is not None and getattr(inner[0], "obj", None) is reversed else arg
    return found


def element_annotation(annotation):
    """The dtype of ``np.float64`` (a numeric NumPy scalar type) written as an annotation, as
    ``codegen`` writes an element read (``a: np.float64 = S[i, j]``); else None."""
    if (isinstance(annotation, gast.Attribute) and isinstance(annotation.value, gast.Name)
            and annotation.value.id == "np"):
        scalar = getattr(np, annotation.attr, None)
        if isinstance(scalar, type) and issubclass(scalar, (np.number, np.bool_)):
            return np.dtype(scalar)
    return None


# NumPy functions whose result is new memory (no view of an argument, nothing kept): a
# vector passed to one is made an array again for the call
_NEW_RESULTS = frozenset(map(id, (np.sum, np.mean, np.prod, np.dot, np.vdot, np.inner, np.outer, np.max, np.min,
                                  np.linalg.norm, np.cumsum, np.concatenate, np.stack)))


def takes_arrays(call):
    """Is ``call`` one whose array arguments a vector may be made again for?"""
    if not isinstance(call, gast.Call):
        return False
    if denotes(call.func, runtime.finish):
        return True
    obj = getattr(A.anno(call, "callee"), "obj", None)
    return obj is not None and (id(obj) in _NEW_RESULTS or isinstance(obj, np.ufunc))


def is_copy(node):
    """Is ``node`` ``copy_value(x)``, a copy of a value that shares no memory with it?"""
    return (isinstance(node, gast.Call) and (denotes(node.func, runtime.copy_value) or callee_is(node, runtime.copy_value))
            and len(node.args) == 1 and not node.keywords)


def leaves(expr):
    """The atoms and item reads under an arithmetic expression, or None if it is something else."""
    if A.is_atom(expr) and not isinstance(expr, gast.Tuple):
        return [expr]
    if isinstance(expr, gast.Subscript) and isinstance(expr.value, gast.Name) and literal_index(expr.slice) is not None:
        return [expr]
    if isinstance(expr, gast.BinOp):
        left, right = leaves(expr.left), leaves(expr.right)
        return None if left is None or right is None else left + right
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return leaves(expr.operand)
    if scalar_call(expr):
        return [expr]
    return None


def scalar_call(expr):
    """Is ``expr`` a ufunc's call on atoms (a number, when they are numbers)?"""
    return (isinstance(expr, gast.Call) and isinstance(getattr(A.anno(expr, "callee"), "obj", None), np.ufunc)
            and not expr.keywords and all(A.is_atom(a) for a in expr.args))


def elementwise(expr):
    """Is every operation in the arithmetic expression ``expr`` one that acts item by item?"""
    if isinstance(expr, gast.BinOp):
        return isinstance(expr.op, ARITHMETIC) and elementwise(expr.left) and elementwise(expr.right)
    if isinstance(expr, gast.UnaryOp):
        return elementwise(expr.operand)
    return True


def push_of(s):
    """``(stack, name)`` of ``stack.append(name)``."""
    if (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name)
            and len(s.value.args) == 1 and isinstance(s.value.args[0], gast.Name) and not s.value.keywords):
        return s.value.func.value.id, s.value.args[0].id
    return None


def pop_of(s):
    """The stack of ``name = stack.pop()``."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "pop" and not s.value.args and isinstance(s.value.func.value, gast.Name)):
        return s.value.func.value.id
    return None
