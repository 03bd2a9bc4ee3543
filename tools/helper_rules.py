"""List srcad's own helpers that generated derivative code can call, and how each is
differentiated again (second and third order).

    python tools/helper_rules.py              # every helper
    python tools/helper_rules.py --refused    # only those a derivative of a derivative stops at

The helpers are ``srcad.runtime``'s (which the passes name in the code they generate), the
functions srcad's rule templates (``registry.VJP`` and ``registry.JVP``) call, and the
functions that the helpers srcad reads as source call in turn. Each is then: differentiated by its own vjp and jvp rules;
non-differentiable (a shape, a flag); read as source (a pure helper, ``registry._pure``); or
refused, in the modes it has no rule for.
"""
import builtins
import inspect
import sys

import gast

import srcad  # noqa: F401  (fills the tables)
from srcad import optional_rules, registry, runtime
from srcad.rule_templates import describe, function_body


def _resolve(node, namespace):
    """The object a name or dotted attribute in ``fn``'s code denotes, or None."""
    if isinstance(node, gast.Name):
        return namespace.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, gast.Attribute):
        base = _resolve(node.value, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _namespace(fn):
    closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    return {**fn.__globals__, **closure}


def called_helpers(fn):
    """srcad's helpers that ``fn``'s body calls."""
    try:
        body, _ = function_body(fn)
    except (OSError, TypeError):
        return set()
    namespace = _namespace(fn)
    found = set()
    for node in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Call):
            callee = _resolve(node.func, namespace)
            if registry._is_srcad_helper(callee):
                found.add(callee)
    return found


def _srcads(rule):
    return (rule.fn.__module__ or "").startswith("srcad.")


def helpers():
    """Every helper generated code can call, read off the templates and the pure helpers' bodies."""
    try:  # SciPy's rules register once it is imported
        import scipy  # noqa: F401
        optional_rules.load_optional_rules()
    except ImportError:
        pass
    todo = {getattr(runtime, name) for name in runtime.__all__} - set(registry.NONDIFFERENTIABLE)
    for table in (registry.VJP, registry.JVP):
        for rule in table.values():
            if _srcads(rule):
                todo |= called_helpers(rule.fn)
    seen = set()
    while todo:
        fn = todo.pop()
        seen.add(fn)
        if fn not in registry.VJP and not registry.is_nondifferentiable(fn) and registry._pure(fn):
            todo |= called_helpers(fn) - seen  # read as source: what it calls is differentiated too
    return seen


def status(fn, mode_table):
    if fn in mode_table:
        return "rule"
    if registry.is_nondifferentiable(fn):
        return "nondiff"
    return "source" if registry._pure(fn) else "REFUSED"


def main(argv):
    rows = sorted((describe(fn), status(fn, registry.VJP), status(fn, registry.JVP)) for fn in helpers())
    if "--refused" in argv:
        rows = [row for row in rows if "REFUSED" in row]
    print(f"{'helper':72} {'vjp':8} jvp")
    for name, vjp, jvp in rows:
        print(f"{name:72} {vjp:8} {jvp}")
    counts = {s: sum(s in row[1:] for row in rows) for s in ("rule", "nondiff", "source", "REFUSED")}
    print(f"\n{len(rows)} helpers; " + ", ".join(f"{n} {s}" for s, n in counts.items()) + " (in either mode)")


if __name__ == "__main__":
    main(sys.argv[1:])
