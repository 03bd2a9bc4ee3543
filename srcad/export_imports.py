"""What an exported module (``srcad.export``) may import and how it writes the import: the
allowlisted libraries (NumPy, SciPy) and standard-library modules, the import path of an
object from them, and the lines of its import block.
"""
import importlib
import sys
import types

LIBRARIES = ("numpy", "scipy")
STANDARD = ("math", "cmath", "numbers", "copy", "collections", "itertools", "functools", "operator", "builtins",
            "dataclasses")


def import_line(module, name):
    if module == name:
        return f"import {module}\n"
    parent, _, last = module.rpartition(".")
    if parent and last == name:
        return f"from {parent} import {last}\n"
    return f"import {module} as {name}\n"


def from_import_line(module, attr, name):
    return f"from {module} import {attr}\n" if attr == name else f"from {module} import {attr} as {name}\n"


def import_rank(line):
    module = line.split()[1].split(".")[0]
    return 0 if module in STANDARD else 1 if module == "numpy" else 2


def import_path(obj):
    """``(module, name)`` to import ``obj`` itself from NumPy, SciPy or the standard library, or
    None: its module and name, NumPy's or SciPy's special functions (ufuncs name no module), or
    for an object without a name (``scipy.stats.norm``) the public module of its class that
    holds it."""
    module, simple = getattr(obj, "__module__", None), getattr(obj, "__name__", None)
    if isinstance(simple, str):
        for candidate in dict.fromkeys((module, "numpy", "scipy.special")):
            found = _allowed_module(candidate)
            if found is not None and getattr(found, simple, None) is obj:
                return candidate, simple
        return None
    owner = type(obj).__module__.split(".")
    for k in range(len(owner), 0, -1):
        found = _allowed_module(".".join(owner[:k]))
        if found is not None:
            names = sorted(n for n, value in vars(found).items() if value is obj and not n.startswith("_"))
            if names:
                return found.__name__, names[0]
    return None


def _allowed_module(name):
    """The public module ``name`` of NumPy, SciPy or the standard library's allowlist if its
    package is imported already, else None."""
    if not isinstance(name, str) or any(p.startswith("_") for p in name.split(".")):
        return None
    if name.split(".")[0] not in LIBRARIES and name not in STANDARD or name.split(".")[0] not in sys.modules:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def submodules(obj, chain):
    """Submodules of module ``obj`` that ``obj.a.b`` (attribute ``chain``) reaches: imported too."""
    found = []
    for attr in chain if isinstance(obj, types.ModuleType) else ():
        obj = getattr(obj, attr, None)
        if not isinstance(obj, types.ModuleType):
            break
        found.append(obj)
    return found
