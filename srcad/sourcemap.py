"""Source maps: from a line of generated code to the user's line it differentiates.

Generated code introduces each block with a comment ``# line N: <the user's line N>``
(``passes.reverse``, ``passes.forward``); ``N`` is a line of the file the differentiated
function was read from. ``line_map`` turns those comments into a table from generated line
to user line: a statement belongs to the last such comment before it in its own block (a
comment inside a loop says nothing about the statements after the loop). Comments are found
with ``tokenize`` and statements with ``ast``, so text inside string literals never counts.

Every generated module is registered here under its file name while its code lives
(``compile._load``); ``user_line`` follows a chain of them (the derivative of a derivative
maps to a generated line, which maps to the user's). Tables are built on first use, on
the error path only: compiling pays nothing.

>>> text = (
...     "def f_adjoint(x, v=None):\\n"
...     "    # line 3: y = np.sin(x)\\n"
...     "    y = np.sin(x)\\n"
...     "    for i in range(2):\\n"
...     "        # line 5: y = y * x\\n"
...     "        y = y * x\\n"
...     "    dx = finish(y, x)\\n")
>>> line_map(text)
{1: None, 3: 3, 4: 3, 6: 5, 7: 3}
"""
import ast
import io
import re
import tokenize

_LINE_COMMENT = re.compile(r"#\s*line (\d+):")
_TRAMPOLINE = "<srcad-trampoline "  # the glue srcad writes to read a function that has a rule
_MAPS = {}  # generated file name -> _Map, while code compiled from it lives


class _Map:
    def __init__(self, text, user_filename, name, user_lineno):
        self.text = text
        self.user_filename = user_filename
        self.name = name
        self.user_lineno = user_lineno
        self._lines = None

    def lines(self):
        if self._lines is None:
            self._lines = line_map(self.text)
        return self._lines


def register(filename, text, fn):
    """Record that ``filename`` holds ``text``, generated from the Python function ``fn``."""
    _MAPS[filename] = _Map(text, fn.__code__.co_filename, fn.__qualname__, fn.__code__.co_firstlineno)


def release(filename):
    _MAPS.pop(filename, None)


def is_generated(filename):
    return filename in _MAPS


def generated_from(filename):
    """``(user file, first line, function name)`` of the user's function that generated file
    ``filename`` was derived from (through derivatives of derivatives), or None."""
    found = None
    for _ in range(16):
        entry = _MAPS.get(filename)
        if entry is None:
            break
        found = (entry.user_filename, entry.user_lineno, entry.name)
        filename = entry.user_filename
    return found


def user_line(filename, lineno):
    """``(user file, line, function name)`` that line ``lineno`` of generated file ``filename``
    differentiates, or None (not generated code, or a line of srcad's own setup code)."""
    seen = 0
    found = None
    while filename in _MAPS and seen < 16:  # a derivative of a derivative: follow the chain
        entry = _MAPS[filename]
        lineno = entry.lines().get(lineno)
        if lineno is None:
            return found
        filename, seen = entry.user_filename, seen + 1
        found = (filename, lineno, entry.name)
    if found is not None and found[0].startswith(_TRAMPOLINE):
        return None  # srcad's glue around a function with a rule: no line of the user's
    return found


def user_lines(filename):
    """``(user file, line)`` of every line of the user's that generated file ``filename`` differentiates."""
    entry = _MAPS.get(filename)
    if entry is None:
        return set()
    found = (user_line(filename, lineno) for lineno, mapped in entry.lines().items() if mapped is not None)
    return {(f, line) for f, line, _ in filter(None, found)}


def line_map(text):
    """``{generated line: user line or None}`` for every line that starts or continues a
    statement (``None``: code before the first ``# line N:`` comment of its function)."""
    comments = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            match = _LINE_COMMENT.match(tok.string)
            if match:
                comments[tok.start[0]] = (tok.start[1], int(match.group(1)))
    out = {}
    _walk(ast.parse(text).body, None, 0, comments, out)
    return out


def _blocks(stmt):
    """The statement lists nested in ``stmt``, in source order."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.body]
    blocks = [getattr(stmt, field, None) for field in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(stmt, "handlers", ())]
    blocks = [b for b in blocks if b]
    return sorted(blocks, key=lambda b: b[0].lineno)


def _walk(stmts, current, after, comments, out):
    for stmt in stmts:
        for line in range(after + 1, stmt.lineno):  # comments between this statement and the last
            if line in comments and comments[line][0] == stmt.col_offset:
                current = comments[line][1]
        blocks = _blocks(stmt)
        header_end = blocks[0][0].lineno - 1 if blocks else stmt.end_lineno
        for line in range(stmt.lineno, header_end + 1):
            if line not in comments:
                out[line] = current
        inherited = None if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else current
        previous = stmt.lineno
        for block in blocks:
            _walk(block, inherited, previous, comments, out)
            previous = block[-1].end_lineno
        after = stmt.end_lineno
