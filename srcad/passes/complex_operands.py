"""Complex operands: may an operand hold a complex value (or name a complex dtype), for
``passes.complex_values``. Each question's answer is ``(surely, names)``: complex if
``surely``, or if one of ``names`` (the function's own, followed by that pass) may hold a
complex value; globals and literals are read as they are now.

>>> import gast
>>> from srcad.source import capture
>>> def f(x):
...     return x
>>> src = capture(f)
>>> atom = gast.parse("(z, 1j)").body[0].value
>>> atoms_source(atom.elts, src, local={"z"})
(True, frozenset({'z'}))
>>> complex_value(np.complex64), complex_value("f8")
(True, False)
"""
import gast
import numpy as np


def complex_dtype(node, strings):
    """Is ``node``, read as a dtype, a complex one written as a string (``"c16"``, or a name
    bound to one)?"""
    if isinstance(node, gast.Constant) and isinstance(node.value, str):
        return complex_value(node.value)
    return isinstance(node, gast.Name) and any(complex_value(v) for v in strings.get(node.id, ()))


def atom_source(atom, source, local):
    """``(surely, names)`` of an operand, as ``complex_values._complex_source``'s."""
    if isinstance(atom, gast.Constant):
        return not isinstance(atom.value, str) and complex_value(atom.value), frozenset()
    if isinstance(atom, gast.Starred):
        atom = atom.value
    if not isinstance(atom, gast.Name):
        return atoms_source(getattr(atom, "elts", ()), source, local)
    return atom.id not in local and global_complex(atom.id, source), frozenset((atom.id,))


def atoms_source(atoms, source, local):
    """``(surely, names)`` of operands: complex if one is."""
    surely, names = False, frozenset()
    for atom in atoms:
        one, more = atom_source(atom, source, local)
        surely, names = surely or one, names | more
    return surely, names


def global_complex(name, source):
    """Is the global or closure value ``name`` complex as it is now? (``runtime.real_constant``
    checks it at each call.)"""
    try:
        return complex_value(source.lookup(name))
    except Exception:
        return False


def complex_value(value):
    """Is ``value`` complex, or a complex dtype (``complex``, ``np.complex64``, ``"c16"``)?"""
    if isinstance(value, str):  # an einsum subscript, a mode name: anything NumPy reads as no dtype
        try:
            return np.dtype(value).kind == "c"
        except Exception:
            return False
    if isinstance(value, type):
        return issubclass(value, (complex, np.complexfloating))
    if isinstance(value, np.dtype):
        return value.kind == "c"
    if isinstance(value, (list, tuple)):  # items of any kind and shape (lu_factor's (lu, piv))
        return any(complex_value(item) for item in value if not isinstance(item, str))
    if isinstance(value, (complex, np.ndarray, np.generic)):
        return np.iscomplexobj(value)
    return False
