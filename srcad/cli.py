"""The command line: ``python -m srcad`` (or ``srcad``) with ``show`` and ``export``.

``main(argv)`` returns the exit status: 0 done, 1 srcad refused (its message on stderr),
2 a usage mistake (no such file or function, a bad option).
"""
import argparse
import importlib.util
import os
import sys
import traceback

from .errors import SrcadError
from .export_text import MAX_EMBEDDED

_DESCRIPTION = """\
srcad: the adjoint (vector-Jacobian product) of a NumPy function, read from its source.

  srcad show FILE.py:FUNC [--wrt x,y]              print the generated adjoint of FUNC and
                                                  the adjoints of the helpers it calls
  srcad export FILE.py:FUNC [--wrt x,y] -o OUT.py  write a module defining FUNC_adjoint that
                                                  needs only NumPy (and SciPy if FUNC uses it)

FILE.py is imported as a module (its directory first on sys.path); FUNC is a function in
it (Class.method for a function in a class), plain or decorated with @srcad.differentiable.
"""

_SHAPES = """\
Shapes: the code shown and exported is srcad's generic adjoint, the one it switches to
after a function has met many argument shapes. It decides shape questions at run time, so
it works for arguments of every shape; srcad.show(f, *args) in Python shows the code
specialised on the shapes of given arguments.
"""

_EXPORT = f"""\
The exported module defines FUNC_adjoint(<FUNC's parameters>, v=None) with the contract of
srcad.differentiable(FUNC, wrt=...).adjoint: the same argument checks, errors and results
(one gradient for one wrt name, a tuple for several). It imports only NumPy (SciPy and the
standard library where the code uses them): srcad's helpers and the adjoints of helper
functions are copied into it, and module-level values the code reads (numbers, strings,
arrays of up to {MAX_EMBEDDED} entries) are written as literals, as they are at export time. What
cannot be written down (an object of a class of yours, a bigger array, a closure) is
refused with a message naming it: pass it as an argument instead.
"""


def _parser():
    parser = argparse.ArgumentParser(prog="srcad", description=_DESCRIPTION + "\n" + _SHAPES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="{show,export}")

    def target_options(command):
        command.add_argument("target", metavar="FILE.py:FUNC", help="the function to differentiate")
        command.add_argument("--wrt", metavar="x,y",
                             help="parameters to differentiate with respect to, by name or position "
                                  "(default: the decorator's wrt, else the first parameter)")
        command.add_argument("--containers", metavar="a,b", default="",
                             help="parameters that receive lists, tuples or dicts (default: none; arrays "
                                  "and numbers)")

    show = commands.add_parser("show", help="print the generated adjoint and its helpers' adjoints",
                               description="Print the generated adjoint of FUNC and the adjoints of the "
                                           "helper functions it calls.\n\n" + _SHAPES,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    target_options(show)
    export = commands.add_parser("export", help="write a standalone module with FUNC_adjoint",
                                 description="Write a module defining FUNC_adjoint that needs only NumPy.\n\n"
                                             + _EXPORT + "\n" + _SHAPES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    target_options(export)
    export.add_argument("-o", "--output", metavar="OUT.py", help="where to write the module (default: stdout)")
    return parser


class _UsageError(Exception):
    """A command line that names no function srcad can find: exit status 2."""


def main(argv=None):
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        target = load_target(args.target)
        wrt = _wrt(args.wrt)
        containers = tuple(c for c in args.containers.split(",") if c)
        if args.command == "show":
            sys.stdout.write(show_text(target, wrt, containers))
        else:
            from .export import export_source

            text = export_source(target, wrt, containers, args.target.rpartition(":")[2].rsplit(".", 1)[-1])
            if args.output:
                try:
                    with open(args.output, "w", encoding="utf-8") as out:
                        out.write(text)
                except OSError as exc:
                    raise _UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
            else:
                sys.stdout.write(text)
    except _UsageError as exc:
        print(f"srcad {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except SrcadError as exc:
        print(f"srcad {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


def _wrt(text):
    """``--wrt x,1`` as ``wrt`` (None when not given; one name alone, several as a tuple)."""
    if text is None:
        return None
    parts = [int(p) if p.strip().lstrip("-").isdigit() else p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise _UsageError("--wrt names no parameter")
    return parts[0] if len(parts) == 1 else tuple(parts)


def load_target(spec):
    """The object ``FILE.py:FUNC`` names: the file imported as a module, then the attribute path."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise _UsageError(f"{spec!r}: name the function as FILE.py:FUNC")
    if not os.path.isfile(path):
        raise _UsageError(f"{path}: no such file")
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    module_name = stem if stem.isidentifier() and stem not in sys.modules else "__srcad_target__"
    sys.path.insert(0, os.path.dirname(path))  # as `python FILE.py` would: its neighbours import
    spec_ = importlib.util.spec_from_file_location(module_name, path)
    if spec_ is None:
        raise _UsageError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec_)
    sys.modules[module_name] = module
    try:
        spec_.loader.exec_module(module)
    except Exception as exc:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-3))
        raise _UsageError(f"importing {path} raised an exception:\n{detail}") from None
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            found = sorted(n for n in vars(module) if callable(vars(module)[n]) and not n.startswith("_"))
            raise _UsageError(f"{path} has no {name!r} (functions there: {', '.join(found) or 'none'})")
        obj = getattr(obj, part)
    return obj


def show_text(target, wrt=None, containers=()):
    """The generic adjoint of ``target`` and the forward/backward pairs of the helpers it calls."""
    from .export import generic_adjoint
    from .export_entry import file_line
    from .listing import callee_pairs

    d, fn, compiled = generic_adjoint(target, wrt, containers)
    names = d._names if d._names is not None else ()
    out = [f"# {fn.__qualname__} ({file_line(fn)}): adjoint with respect to {', '.join(names)} (generic: shapes "
           "decided at run time)\n", compiled.generated.joint_source]
    for helper, generated in callee_pairs(compiled):
        out += [f"\n# {helper.__qualname__} ({file_line(helper)}), called by the code above: its forward and "
                "backward\n", generated.forward_source, "\n", generated.backward_source]
    return "".join(out)
