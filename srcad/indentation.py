r'''Moving a block of Python code left or right without changing what it does.

``textwrap.dedent`` and ``textwrap.indent`` work on lines, and a line that begins inside a
multi-line string literal is part of the string: re-indenting it changes the string's value
(a method's source read back, a generated function placed inside its factory). These leave
such lines as they are.

>>> text = '    def f():\n        return """a\n  b"""\n'
>>> print(dedent_code(text), end="")
def f():
    return """a
  b"""
>>> indent_code(dedent_code(text), "    ") == text
True
'''
import io
import os
import tokenize


def dedent_code(text):
    """``text`` without the indentation of its first line of code, except inside strings."""
    inside = _lines_inside_strings(text)
    lines = text.splitlines(keepends=True)
    first = next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), "")
    margin = first[:len(first) - len(first.lstrip())]
    return "".join(line if n in inside else line[len(os.path.commonprefix([line, margin])):]
                   for n, line in enumerate(lines, 1))


def indent_code(text, prefix):
    """``text`` with ``prefix`` before each line that is not blank, except inside strings."""
    inside = _lines_inside_strings(text)
    return "".join(line if n in inside or not line.strip() else prefix + line
                   for n, line in enumerate(text.splitlines(keepends=True), 1))


def _lines_inside_strings(text):
    """The numbers (from 1) of the lines that begin inside a token: a string literal's
    continuation lines (only strings span lines)."""
    if '"""' not in text and "'''" not in text and "\\" not in text:
        return set()  # only a triple-quoted string, or one with a backslash ending a line, spans lines
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except tokenize.TokenError as exc:  # an unterminated string or bracket: no code to move
        raise SyntaxError(exc.args[0]) from None
    return {n for tok in tokens for n in range(tok.start[0] + 1, tok.end[0] + 1)}
