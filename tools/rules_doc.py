"""Write docs/rules.md: every derivative rule srcad has, from the tables in srcad/registry.py.

    python tools/rules_doc.py            # writes docs/rules.md
    python tools/rules_doc.py --stdout   # prints it instead

Each function is named by where users find it (``numpy.linalg.norm``, ``math.hypot``),
aliases after it; one function per line, so ``tests/test_rules_doc.py`` can tell a stale
line from one that names something this Python or NumPy does not have.
"""
import builtins
import importlib
import math
import pathlib
import re
import sys

import gast
import numpy as np

import srcad  # noqa: F401  (fills the tables)
from srcad import optional_rules, registry

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "rules.md"

#: where users find functions, searched in this order for a key's names
NAMESPACES = [("builtins", builtins), ("math", math), ("numpy", np), ("numpy.linalg", np.linalg),
              ("numpy.fft", np.fft), ("numpy.random", np.random), ("numpy.lib.stride_tricks", np.lib.stride_tricks),
              ("numpy.ndarray", np.ndarray)]

try:  # scipy is optional: its rules register only where it is installed
    import scipy.linalg
    import scipy.ndimage
    import scipy.optimize
    import scipy.signal
    import scipy.special
    import scipy.stats

    NAMESPACES += [(name, sys.modules[name]) for name in
                   ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.ndimage", "scipy.signal",
                    "scipy.optimize")]
    optional_rules.load_optional_rules()
except ImportError:
    pass

OPERATORS = {
    gast.Add: "x + y", gast.Sub: "x - y", gast.Mult: "x * y", gast.Div: "x / y", gast.FloorDiv: "x // y",
    gast.Mod: "x % y", gast.Pow: "x ** y", gast.MatMult: "x @ y", gast.USub: "-x", gast.UAdd: "+x",
}

#: functions only the older NumPy srcad supports has (NumPy 2.4 removed ``np.trapz``): their
#: rows appear when the document is generated there, and are not drift
OLDER_NUMPY_ONLY = {"numpy.trapz"}

HEADER = """\
# Derivative rules

Generated from the rule tables by `python tools/rules_doc.py`; do not edit by hand
(`tests/test_rules_doc.py` fails when this file is stale). *vjp* is the reverse-mode rule
(vᵀJ), *jvp* the forward-mode rule (J·u); *rules in* names the modules of `srcad/rules/`
that define them. A call to anything not listed here and without Python source is an error.
"""


def names_of(key):
    """Every public ``namespace.name`` bound to ``key``; its own ``__name__`` first."""
    found = []
    for prefix, namespace in NAMESPACES:
        for attr, value in sorted(vars(namespace).items()):
            if value is key and not attr.startswith("_"):
                found.append(f"{prefix}.{attr}")
    own = getattr(key, "__name__", None)
    found.sort(key=lambda name: name.rsplit(".", 1)[1] != own)
    owner = getattr(key, "__self__", None)
    if not found and owner is not None and not isinstance(owner, type(builtins)):  # np.r_.__getitem__
        found = [f"{prefix}.{attr}.{own}" for prefix, namespace in NAMESPACES
                 for attr, value in sorted(vars(namespace).items()) if value is owner and not attr.startswith("_")]
    if not found:
        module = getattr(key, "__module__", None) or "builtins"
        found.append(f"{module}.{getattr(key, '__qualname__', None) or own or repr(key)}")
    return found


def resolves(name):
    """Does the dotted ``name`` exist in this Python and NumPy?"""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def label(key):
    """The first column for a key: its name in code, then its aliases."""
    if key in OPERATORS:
        return f"`{OPERATORS[key]}` (`gast.{key.__name__}`)"
    first, *aliases = names_of(key)
    return f"`{first}`" + "".join(f" (`{alias}`)" for alias in aliases)


#: the section of ufunc methods (``np.add.reduce``), one for every ufunc rather than one per ufunc
UFUNC_METHODS = "numpy ufunc methods (`np.X.outer(a, b)` is differentiated as `np.X` of broadcast operands)"


def group_of(key):
    if key in OPERATORS:
        return "Python operators"
    if isinstance(getattr(key, "__self__", None), np.ufunc):
        return UFUNC_METHODS
    return names_of(key)[0].rsplit(".", 1)[0]


def module_of(rule):
    return rule.fn.__module__.rsplit(".", 1)[-1]


def mark(present):
    return "✓" if present else "–"


def refused(key):
    return any(rule is not None and module_of(rule) == "refusals"
               for rule in (registry.lookup(registry.VJP, key), registry.lookup(registry.JVP, key)))


def function_tables():
    keys = list(registry.VJP) + [k for k in registry.JVP if registry.lookup(registry.VJP, k) is None]
    groups = {}
    for key in keys:
        if refused(key):
            continue
        vjp, jvp = registry.lookup(registry.VJP, key), registry.lookup(registry.JVP, key)
        modules = ", ".join(sorted({module_of(rule) for rule in (vjp, jvp) if rule is not None}))
        row = f"| {label(key)} | {mark(vjp)} | {mark(jvp)} | {modules} |"
        groups.setdefault(group_of(key), []).append(row)
    order = sorted(groups, key=lambda g: (g != "Python operators", g))
    lines = []
    for group in order:
        lines += ["", f"## {group}", "", "| function | vjp | jvp | rules in |", "|---|---|---|---|"]
        lines += sorted(groups[group], key=entry)
    return lines


def method_tables():
    lines = []
    for title, table, form in (("Array methods", registry.METHODS, "`x.{}()`"),
                               ("Array attributes", registry.ATTRIBUTES, "`x.{}`")):
        lines += ["", f"## {title}", "", "| on an array | differentiated as | vjp | jvp |", "|---|---|---|---|"]
        for name in sorted(table):
            fn = table[name]
            lines.append(f"| {form.format(name)} | `{names_of(fn)[0]}` | {mark(registry.lookup(registry.VJP, fn))} "
                         f"| {mark(registry.lookup(registry.JVP, fn))} |")
    return lines


def refusal_list():
    lines = ["", "## Refused when differentiated", "",
             "These have a derivative srcad does not compute: a call where a differentiated value reaches",
             "one of the arguments listed in `srcad/rules/refusals.py` is an error that names the line",
             "and says what to write instead; with constant arguments they pass through.", ""]
    keys = [key for key in registry.VJP if refused(key)]
    return lines + [f"- {label(key)}" for key in sorted(keys, key=lambda k: names_of(k)[0])]


def nondifferentiable_list():
    lines = ["", "## Without derivative", "",
             "Their results carry no derivative: nothing flows back into their arguments."]
    by_reason = {}
    for key, reason in registry.NONDIFFERENTIABLE.items():
        by_reason.setdefault(reason, []).append(label(key))
    for reason in sorted(by_reason):
        lines += ["", f"### {reason[0].upper()}{reason[1:]}", ""]
        lines += sorted((f"- {name}" for name in by_reason[reason]), key=entry)
    lines += ["", "### Array methods and attributes", ""]
    lines += [f"- `x.{name}()`" for name in sorted(registry.NONDIFF_METHODS)]
    lines += [f"- `x.{name}`" for name in sorted(registry.NONDIFF_ATTRIBUTES)]
    return lines


def render():
    sections = function_tables() + method_tables() + refusal_list() + nondifferentiable_list()
    return "\n".join([HEADER.rstrip("\n")] + sections) + "\n"


def entry(line):
    """What a table row or list item is about: its first `code` span."""
    return line.split("`", 2)[1]


def first_name(line):
    """The dotted name (``numpy.sin``) a table row or list item is about; None for other
    lines, operators and array methods."""
    if line.startswith(("| `", "- `")):
        name = entry(line)
        if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)+", name) and not name.startswith("x."):
            return name
    return None


def main(argv):
    text = render()
    if "--stdout" in argv:
        sys.stdout.write(text)
    else:
        DOC.write_text(text, encoding="utf-8")
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main(sys.argv[1:])
