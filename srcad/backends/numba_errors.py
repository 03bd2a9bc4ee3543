"""numba's errors as srcad errors at the user's line: the generated code's ``# line N:`` marks
say which line of the user's an adjoint statement comes from (``numba_backend`` records each
lowered file's lines in ``origins``)."""
import ast
import os
import re

from ..errors import UnsupportedCaseError
from ..passes.user_text import in_user_terms, srcad_made

_LINE_MARK = re.compile(r"^\s*# line (\d+): (.*)$")
origins = {}  # lowered file name -> (generated source lines, the user's file name)


class BackendCompileError(UnsupportedCaseError):
    """``backend="numba"`` for code numba cannot compile with the meaning it has in Python."""


def _user_line(lines, lineno):
    """The user's line number and text that generated line ``lineno`` (1-based) belongs to."""
    for k in range(min(lineno, len(lines)) - 1, -1, -1):
        m = _LINE_MARK.match(lines[k])
        if m:
            return int(m.group(1)), m.group(2).strip()
        if lines[k].lstrip().startswith("def "):
            break
    return None, None


def located(source, fn, lineno, message):
    """The error for ``message`` at line ``lineno`` of the generated ``source`` of ``fn``'s adjoint."""
    lines = source.splitlines(keepends=True)
    line, text = _user_line(lines, lineno)
    where = f"{fn.__code__.co_filename}:{line}" if line else f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
    return _at_line(f"{where}: ", _in_user_terms(message, lines), lines, lineno, text)


_NUMBA_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')


def _origin_name(filename):
    """The key of ``origins`` that numba's ``filename`` (maybe relative) names, or None."""
    if filename in origins:
        return filename
    absolute = os.path.abspath(filename)
    return absolute if absolute in origins else None


def compile_error(exc):
    """A numba compile error as a srcad error at the user's line, naming the construct."""
    text = str(exc)
    construct = next((ln.strip() for ln in text.splitlines()
                      if ln.strip() and not ln.startswith(("Failed in", "During:", "File "))), "numba error")
    construct = re.sub(r"\x1b\[[0-9;]*m", "", construct)[:300]
    loc = getattr(exc, "loc", None)
    places = ([(loc.filename, loc.line)] if loc is not None and loc.line else []) + _NUMBA_LOCATION.findall(text)
    located = [(f, int(n)) for f, n in ((_origin_name(f), n) for f, n in places) if f is not None]
    if not located:
        return BackendCompileError(f"backend='numba' cannot compile this adjoint: {construct}; use "
                                   "backend='auto' to run NumPy code where numba cannot compile, or backend='numpy'")
    filename, lineno = located[-1]
    lines, user_file = origins[filename]
    construct = _numba_construct(construct, lines)
    line, text_line = _user_line(lines, lineno)
    return _at_line(f"{user_file}:{line}: " if line else f"{user_file}: ", construct, lines, lineno, text_line)


def _at_line(where, construct, lines, lineno, text):
    """The error for ``construct`` at generated line ``lineno`` of ``lines``, which belongs to the
    user's line ``text`` (``where``: its file and line)."""
    generated = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    shown = f"\n    {text}" if text else ""
    return BackendCompileError(
        f"{where}backend='numba' cannot compile the adjoint of this line: {construct} (in the generated "
        f"statement `{generated}`); use backend='auto' to run NumPy code where numba cannot compile, or "
        f"backend='numpy'{shown}")


_UNTYPED_GLOBAL = re.compile(r"Untyped global name '(\w+)'.*")
# numba_copies.unchanged_copy compiles for numbers only: an array's copy on a turned-around stack (numba_stacks)
_STALE_COPY = "No implementation of function Function(<function unchanged_copy"


def _numba_construct(message, lines):
    """numba's own words for what it cannot compile (left as they are: they name numba's
    types, not the user's values), but for a global it cannot type: the user's, or srcad's
    helper the derivative of the user's line calls."""
    if message.startswith(_STALE_COPY):
        return ("an array bound in the loop is changed in place before the value is saved again, and numba's "
                "saved copies would be taken at another time than Python's; bind the name before the loop, or make the "
                "update a new array (z = z + ... rather than z += ...)")
    untyped = _UNTYPED_GLOBAL.fullmatch(message)
    if untyped is None:
        return message
    name = untyped.group(1)
    if name in _user_words(lines):
        return f"numba cannot compile the global '{name}' this line reads"
    return f"the derivative of this line calls a function numba does not compile (srcad's helper '{name}')"


def _user_words(lines):
    """The names in the user's lines that the ``# line N:`` marks of the generated ``lines`` quote."""
    return {w for line in lines for m in [_LINE_MARK.match(line)] if m for w in re.findall(r"\b[A-Za-z_]\w*\b", m.group(2))}


def _in_user_terms(message, lines):
    """``message`` naming no name of the generated code ``lines`` that the user's lines its
    ``# line N:`` marks quote do not have (``passes.user_text``)."""
    user = _user_words(lines)
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:  # (a piece of the code: srcad's fresh names only)
        tree = None
    made = {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(tree or ast.Module(body=[]))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) or isinstance(n, ast.arg)} - user
    return in_user_terms(message, lambda name: name in made or srcad_made(name, user), user)
