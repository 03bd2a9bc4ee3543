r"""Python text for the standalone export (``srcad.export``): which module-level names a
statement reads, by Python's scoping rules; edits at source positions; values written as
literals; the source of a function or class as it stands in its file.

>>> parsed = parse("def f(x, n=N):\n    return [x * k for k in range(n)] + G\n")
>>> [(name, in_body) for name, _, in_body, _, _ in parsed.reads]
[('N', False), ('range', True), ('G', True)]
>>> splice("y = a + b\n", [((1, 8, 1, 9), "c")])
'y = a + c\n'
"""
import ast
import builtins
import functools
import inspect
import types
import typing

import numpy as np

from .indentation import dedent_code

MAX_EMBEDDED = 1000  # entries of a module-level array written into the export as a literal


LITERAL_TYPES = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)


class Unwritable(Exception):
    """What the export cannot write: a value that is no literal, a ``global`` statement."""


def literal(value, leaves):
    """Python text that evaluates to ``value``; objects that are no literal (a class, a
    function) become names in ``leaves`` (None: not allowed).

    >>> leaves = {}
    >>> literal((1.5, float("inf"), np.array([[1, 2]]), list), leaves), sorted(leaves)
    ("(1.5, float('inf'), np.array([[1, 2]], dtype='int64'), list)", ['list', 'np'])
    """
    cls = type(value)
    if value is None or cls in (bool, int, str, bytes):
        return repr(value)
    if value is Ellipsis:
        return "..."
    if cls is float:
        return repr(value) if np.isfinite(value) else f"float({repr(value)!r})"
    if cls is complex:
        return f"complex({literal(value.real, leaves)}, {literal(value.imag, leaves)})"
    if cls in (tuple, list):
        items = [literal(v, leaves) for v in value]
        return f"({items[0]},)" if cls is tuple and len(items) == 1 else (
            "({})" if cls is tuple else "[{}]").format(", ".join(items))
    if cls is dict:
        return "{" + ", ".join(f"{literal(k, leaves)}: {literal(v, leaves)}" for k, v in value.items()) + "}"
    if cls in (set, frozenset):
        items = sorted(literal(v, leaves) for v in value)
        return f"{cls.__name__}([{', '.join(items)}])"
    if leaves is not None and cls is np.ndarray:
        if value.dtype.kind not in "biufc":
            raise Unwritable(f"an array of dtype {value.dtype}")
        if value.size > MAX_EMBEDDED:
            raise Unwritable(f"an array of {value.size} entries (more than {MAX_EMBEDDED} are not written out)")
        np_name = _leaf(np, "np", leaves)
        if value.size == 0:
            return f"{np_name}.zeros({value.shape!r}, dtype={str(value.dtype)!r})"
        return f"{np_name}.array({literal(value.tolist(), leaves)}, dtype={str(value.dtype)!r})"
    if leaves is not None and isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return f"{_leaf(np, 'np', leaves)}.dtype({str(value.dtype)!r}).type({literal(value.item(), leaves)})"
    if leaves is not None and isinstance(value, np.dtype) and value.kind in "biufc":
        return f"{_leaf(np, 'np', leaves)}.dtype({str(value)!r})"
    if leaves is not None and (isinstance(value, (type, types.ModuleType)) or callable(value)):
        simple = getattr(value, "__name__", "")
        return _leaf(value, simple.rsplit(".", 1)[-1] if simple.isidentifier() else "value", leaves)
    raise Unwritable(f"a {cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else f"a {cls.__name__}")


def _leaf(obj, name, leaves):
    while name in leaves and leaves[name] is not obj:
        name += "_"
    leaves[name] = obj
    return name


def source_text(obj):
    """The source of the def or class statement of ``obj``, dedented, without decorators
    (``obj`` is what runs, whatever they did); srcad's own are read once per process."""
    return _srcad_source(obj) if obj.__module__.startswith("srcad.") else _read_source(obj)


def _read_source(obj):
    lines, _ = inspect.getsourcelines(obj)
    text = dedent_code("".join(lines))
    return "".join(text.splitlines(keepends=True)[ast.parse(text).body[0].lineno - 1:])


@functools.lru_cache(maxsize=None)
def _srcad_source(obj):
    """srcad's own helpers, without type annotations (an exported module needs no typing)."""
    text = _read_source(obj)
    tree = ast.parse(text)
    annotated = [n for n in ast.walk(tree) if isinstance(n, ast.arg) and n.annotation is not None
                 or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None]
    if not annotated:
        return text
    for node in annotated:
        if isinstance(node, ast.arg):
            node.annotation = None
        else:
            node.returns = None
    return ast.unparse(tree) + "\n"


class Parsed(typing.NamedTuple):
    """What ``add`` needs to know of one top-level statement; spans are (line, column, end
    line, end column) with UTF-8 byte columns, as ``ast`` gives them."""

    names: frozenset  # every name the statement's code uses, locals included
    reads: tuple  # (name, span, read in a function body, attribute chain, span of name.attribute or None)
    name_span: tuple  # where the def or class statement's own name is
    defaults: tuple  # spans of positional default values
    keyword_defaults: tuple  # (parameter, span) of keyword-only default values


@functools.lru_cache(maxsize=2048)
def parse(text):
    """The ``Parsed`` of ``text`` (srcad's helpers are parsed once per process)."""
    tree = ast.parse(text)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in n.posonlyargs + n.args + n.kwonlyargs + [n.vararg, n.kwarg] if a is not None}
    reads = tuple((node.id, _span(node), in_body, tuple(chain), first)
                  for node, in_body, chain, first in _free_names(tree))
    statement = tree.body[0]
    name_span = defaults = keyword_defaults = ()
    if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
        line = text.splitlines()[statement.lineno - 1].encode("utf-8")
        head = b"class " if isinstance(statement, ast.ClassDef) else b"def "
        start = line.index(head, statement.col_offset) + len(head)
        while line[start:start + 1] == b" ":
            start += 1
        name_span = (statement.lineno, start, statement.lineno, start + len(statement.name.encode("utf-8")))
    if isinstance(statement, ast.FunctionDef):
        args = statement.args
        defaults = tuple(_span(e) for e in args.defaults)
        keyword_defaults = tuple((a.arg, _span(e)) for a, e in zip(args.kwonlyargs, args.kw_defaults) if e is not None)
    return Parsed(frozenset(names), reads, name_span, defaults, keyword_defaults)


def unbound_names(module_text):
    """Names ``module_text`` reads that none of its top-level statements binds and that are
    no builtins: a module written for export must have none."""
    tree = ast.parse(module_text)
    return {node.id for node, *_ in _free_names(tree)} - _bound(tree.body) - set(dir(builtins))


def _span(node):
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def splice(text, edits):
    """``text`` with each ``(span, replacement)`` made."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno, col):
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8"))

    spans = sorted(((offset(*span[:2]), offset(*span[2:]), new) for span, new in edits), reverse=True)
    for begin, end, new in spans:
        text = text[:begin] + new + text[end:]
    return text


def _free_names(tree):
    """``(name node, in a function body, attribute chain, span of name.attribute)`` for every read of a module-level
    name in the module ``tree``: Python's scoping rules, with comprehensions, lambdas and
    class bodies as scopes of their own."""
    found = []
    attributes = {}  # id(name node) -> (its attribute chain, the span of name.first_attribute)
    for node in ast.walk(tree):  # outer attributes first: the whole chain is recorded
        if isinstance(node, ast.Attribute):
            chain, root, first = [], node, node
            while isinstance(root, ast.Attribute):
                chain.append(root.attr)
                first, root = root, root.value
            if isinstance(root, ast.Name) and id(root) not in attributes:
                attributes[id(root)] = (chain[::-1], _span(first))

    def visit(node, scopes, in_body):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and not any(node.id in s for s in scopes):
                found.append((node, in_body) + attributes.get(id(node), ([], None)))
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            raise Unwritable(f"a {type(node).__name__.lower()} statement (line {node.lineno} of the code "
                             "copied); pass the value as an argument instead")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for expr in args.defaults + [e for e in args.kw_defaults if e is not None] \
                    + list(getattr(node, "decorator_list", ())):
                visit(expr, scopes, in_body)
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    visit(a.annotation, scopes, in_body)
            if getattr(node, "returns", None) is not None:
                visit(node.returns, scopes, in_body)
            body = node.body if isinstance(node.body, list) else [node.body]
            inner = _bound(body) | {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs
                                    + [args.vararg, args.kwarg] if a is not None}
            functions = [s for s in scopes if not isinstance(s, _ClassScope)]
            for stmt in body:
                visit(stmt, functions + [inner], True)
            return
        if isinstance(node, ast.ClassDef):
            for expr in node.bases + [k.value for k in node.keywords] + node.decorator_list:
                visit(expr, scopes, in_body)
            inner = _ClassScope(_bound(node.body))
            for stmt in node.body:
                visit(stmt, scopes + [inner], in_body)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            visit(node.generators[0].iter, scopes, in_body)  # evaluated in the enclosing scope
            inner = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            functions = [s for s in scopes if not isinstance(s, _ClassScope)]
            for i, g in enumerate(node.generators):
                if i:
                    visit(g.iter, functions + [inner], True)
                for cond in g.ifs:
                    visit(cond, functions + [inner], True)
            for part in ((node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)):
                visit(part, functions + [inner], True)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, scopes, in_body)

    for stmt in tree.body:
        visit(stmt, [], False)
    return found


class _ClassScope(set):
    """Names bound in a class body: visible there, not in the functions it defines."""


def _bound(body):
    """Names a function (or class) body binds itself, nested scopes left out."""
    names = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names
