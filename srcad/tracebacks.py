"""Tracebacks that show the user's code, not srcad's.

``api_boundary`` wraps every public entry point. When an exception leaves through it:

- srcad's own frames (the API, the compiler, runtime and rule helpers) are dropped from
  its traceback, unless the environment says ``SRCAD_TRACEBACK=full`` or the exception
  is likely a bug of srcad's (raised in srcad's own code, and neither a ``SrcadError`` nor
  a ``ValueError`` or ``TypeError`` about the arguments: then every frame is kept, for the
  bug report). Frames of the user's code, of NumPy and of other
  libraries are never dropped; a note says how many frames were hidden.
- Before each frame of generated code, a frame at the user's file and line that code
  differentiates is inserted (``srcad.sourcemap``), so every traceback printer, the
  terminal's included, names and prints the user's line. The generated frame stays, so
  ``pdb.post_mortem`` still steps through the generated code with its variables.
- A note quotes the generated line that raised (before 3.13 the terminal prints no line
  of code that has no file); Python 3.10 shows no notes, so there the inserted frame's name
  carries that line.

Only the error path pays: a call that returns normally costs one Python call more.

Warnings are mapped the same way (``remap_warning``): a warning raised while generated code
runs (NumPy's ``RuntimeWarning: divide by zero``) is shown, recorded (``catch_warnings(record=True)``)
and filtered at the user's file and line, its text saying which line's derivative raised it.
The mapping sits in the warnings module's display hook, so only a warning pays for it, never
a call.
"""
import functools
import linecache
import os
import re
import sys
import types
import warnings
from typing import Any, Callable, TypeVar, cast

from . import sourcemap
from .errors import SrcadError

ENV_VAR = "SRCAD_TRACEBACK"
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_INTERNAL_PREFIXES = (_PACKAGE, "<srcad-trampoline ")
HAS_NOTES = sys.version_info >= (3, 11)  # exceptions carry notes; a bare raise keeps a rewritten traceback
_SYNTHETIC = "__srcad_user_line__"  # marks the globals of an inserted frame
_HIDDEN_NOTE = "srcad: hid "
_MISUSE = (SrcadError, ValueError, TypeError)  # what srcad raises on purpose


_F = TypeVar("_F", bound=Callable[..., Any])


def api_boundary(fn: _F) -> _F:
    """``fn`` whose exceptions leave with the traceback described in the module doc (typed
    to keep ``fn``'s signature: ``srcad.grad`` stays checked by mypy)."""

    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            relocate(error)
            if HAS_NOTES:
                raise  # re-raised as it is: with the traceback relocate made
            raise error  # srcad's own frames are hidden (SRCAD_TRACEBACK=full shows them)

    return cast(_F, boundary)


def relocate(error):
    """Rewrite ``error.__traceback__`` in place as described in the module doc."""
    entries = []
    tb = error.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if not entries:
        return
    keep_all = os.environ.get(ENV_VAR, "").lower() == "full" or (
        _internal(entries[-1]) and not isinstance(error, _MISUSE))
    kept = [tb for tb in entries if keep_all or not _internal(tb)]
    hidden = len(entries) - len(kept)
    out = []
    innermost = users = None  # users: the innermost of them generated from a line of the user's
    for tb in kept:
        code = tb.tb_frame.f_code
        located = sourcemap.user_line(code.co_filename, tb.tb_lineno)
        if located is not None and not (out and _is_synthetic(out[-1])):
            generated = linecache.getline(code.co_filename, tb.tb_lineno).strip()
            out.append(_user_frame(*located, generated if not HAS_NOTES else None))
            innermost = (code.co_filename, tb.tb_lineno, generated, located)
            if not located[0].startswith(_PACKAGE):
                users = innermost
        out.append(tb)
    if not hidden and innermost is None:
        return
    rebuilt = None
    for tb in reversed(out):
        rebuilt = types.TracebackType(rebuilt, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    error.__traceback__ = rebuilt
    if innermost is not None:
        # raised in srcad's derivative of one of its own helpers (a rule's, at a higher order): the
        # user's line whose derivative called it
        named = users if users is not None else innermost
        _name_the_line(error, *named[3][:2], own=named is not innermost)
    if HAS_NOTES and innermost is not None:
        filename, lineno, generated, (user_file, user_lineno, _) = innermost
        _note(error, f"srcad: raised at line {lineno} of {filename}, generated from {user_file}, "
                     f"line {user_lineno}:\n    {generated}")
    if HAS_NOTES and hidden:  # one note, however many boundaries the error passed
        notes = getattr(error, "__notes__", [])
        before = next((n for n in notes if n.startswith(_HIDDEN_NOTE)), None)
        if before is not None:
            notes.remove(before)
            hidden += int(before[len(_HIDDEN_NOTE):].split()[0])
        error.add_note(f"{_HIDDEN_NOTE}{hidden} of its internal frames from this traceback; {ENV_VAR}=full "
                       "shows them")
    del error  # the inserted frames' callers include this frame: it must not keep the error alive


_LOCATED = re.compile(r"^\S+:\d+: ")


def _name_the_line(error, user_file, user_lineno, own=False):
    """A srcad error raised by generated code (a helper it calls, at run time) names the
    user's line it was generated from, as every srcad error does; ``own``: raised in srcad's
    derivative of its own code, which that line's derivative called, a limit of srcad's."""
    from .errors import SrcadError, SrcadSyntaxError
    from .passes.user_text import OWN_LIMIT

    if (isinstance(error, SrcadError) and not isinstance(error, SrcadSyntaxError) and len(error.args) == 1
            and isinstance(error.args[0], str) and not _LOCATED.match(error.args[0])):
        error.args = (f"{user_file}:{user_lineno}: {OWN_LIMIT if own else ''}{error.args[0]}",)


def _internal(tb):
    return tb.tb_frame.f_code.co_filename.startswith(_INTERNAL_PREFIXES)


def _is_synthetic(tb):
    return _SYNTHETIC in tb.tb_frame.f_globals


def _note(error, text):
    if text not in getattr(error, "__notes__", ()):
        error.add_note(text)


@functools.lru_cache(maxsize=256)
def _user_code(filename, lineno, name, indent, width):
    """Code that raises at ``filename:lineno`` in a function called ``name``, spanning the
    columns ``indent`` to ``indent + width`` (the whole line: no carets under a part of it)."""
    statement = "raise (__srcad_error__"
    statement += " " * max(0, width - len(statement) - 1) + ")"
    if lineno > 1 and indent:
        text = "\n" * (lineno - 2) + "if 1:\n" + " " * indent + statement
    else:
        text = "\n" * (lineno - 1) + statement
    code = compile(text, filename, "exec")
    replace = {"co_name": name}
    if hasattr(code, "co_qualname"):
        replace["co_qualname"] = name
    return code.replace(**replace)


class _Marker(Exception):
    pass


def _user_frame(filename, lineno, name, generated):
    """A traceback entry at the user's ``filename:lineno``, in a frame named after the user's
    function (with the generated line ``generated`` in its name, where notes are not shown)."""
    line = linecache.getline(filename, lineno).rstrip()
    indent = len(line) - len(line.lstrip())
    if generated is not None:
        name = f"{name} [srcad-generated: {generated}]"
    code = _user_code(filename, lineno, name, indent, len(line) - indent)
    namespace = {"__name__": _SYNTHETIC, _SYNTHETIC: True, "__srcad_error__": _Marker}
    try:
        exec(code, namespace)
    except _Marker as marker:
        entry = marker.__traceback__.tb_next
    del namespace["__srcad_error__"]
    return entry


def remap_warning(msg):
    """``msg`` (a ``warnings.WarningMessage``) at the user's file and line if it was raised in
    generated code, its text naming the user's line and the generated statement; else ``msg``."""
    located = sourcemap.user_line(msg.filename, msg.lineno)
    if located is None:
        return msg
    filename, lineno, name = located
    generated = linecache.getline(msg.filename, msg.lineno).strip()
    text = f"{msg.message} (in srcad's derivative of line {lineno} of {name}: {generated})"
    try:
        message = msg.category(text)
    except Exception:  # a warning class that takes other arguments keeps its text
        message = msg.message
    return warnings.WarningMessage(message, msg.category, filename, lineno, msg.file, None,
                                   getattr(msg, "source", None))


def _install_warning_hook():
    """Route every warning shown or recorded through ``remap_warning``: the warnings module
    (Python's and its C accelerator) sends each one to ``warnings._showwarnmsg``, after its
    filters and before ``showwarning`` or a ``catch_warnings(record=True)`` list."""
    show = getattr(warnings, "_showwarnmsg", None)
    if show is None or getattr(show, "__srcad_remaps__", False):
        return

    def _showwarnmsg(msg):
        show(remap_warning(msg))

    _showwarnmsg.__srcad_remaps__ = True
    _showwarnmsg.__doc__ = show.__doc__
    warnings._showwarnmsg = _showwarnmsg


_install_warning_hook()
