"""Shrink a failing program while it keeps failing the same way.

Greedy, on the module's syntax tree: delete a statement, unwrap an ``if``/loop into its body,
replace an expression by one of its operands or by a constant — keep any change after which
the program still runs cleanly at the same inputs (away from kinks) and fails with the same
key. Stops at a fixed point or when the budget runs out.
"""
import ast
import copy
import time

_STMT_LISTS = ("body", "orelse")


def _statement_slots(tree):
    """(parent, field, index) of every statement, outermost first."""
    slots = []
    for node in ast.walk(tree):
        for name in _STMT_LISTS:
            stmts = getattr(node, name, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                slots += [(node, name, i) for i in range(len(stmts))]
    return slots


def _is_import(node):
    return isinstance(node, (ast.Import, ast.ImportFrom))


def _candidates(tree, entry):
    """Smaller variants of ``tree``: each a fresh tree."""
    slots = _statement_slots(tree)
    for index, (parent, name, i) in enumerate(slots):
        stmt = getattr(parent, name)[i]
        if _is_import(stmt) or (isinstance(stmt, ast.FunctionDef) and stmt.name == entry and parent is tree):
            continue
        yield "delete", index, None
        if isinstance(stmt, (ast.If, ast.For, ast.While)):
            yield "unwrap", index, "body"
            if stmt.orelse:
                yield "unwrap", index, "orelse"
    exprs = _loaded_expressions(tree)
    for index, node in enumerate(exprs):
        for child in _operands(node):
            yield "replace", index, child
        if not isinstance(node, (ast.Constant, ast.Name)):
            yield "replace", index, "const"


def _loaded_expressions(tree):
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.expr) and id(n) not in callees
            and not isinstance(getattr(n, "ctx", None), (ast.Store, ast.Del))]


def _operands(node):
    if isinstance(node, ast.BinOp):
        return ["left", "right"]
    if isinstance(node, ast.UnaryOp):
        return ["operand"]
    if isinstance(node, ast.IfExp):
        return ["body", "orelse"]
    if isinstance(node, ast.Call):
        return [("args", i) for i in range(len(node.args))] + [("kw", i) for i in range(len(node.keywords))]
    if isinstance(node, ast.Subscript):
        return ["value"]
    if isinstance(node, ast.BoolOp):
        return [("values", i) for i in range(len(node.values))]
    return []


def _apply(tree, candidate):
    what, index, arg = candidate
    tree = copy.deepcopy(tree)
    if what in ("delete", "unwrap"):
        parent, name, i = _statement_slots(tree)[index]
        stmts = getattr(parent, name)
        stmt = stmts[i]
        replacement = [] if what == "delete" else getattr(stmt, arg)
        stmts[i:i + 1] = replacement
        if not stmts:
            stmts.append(ast.Pass())
        return tree
    node = _loaded_expressions(tree)[index]
    if arg == "const":
        new = ast.Constant(0.5)
    elif isinstance(arg, tuple):
        field, i = arg
        new = node.args[i] if field == "args" else node.keywords[i].value if field == "kw" else node.values[i]
    else:
        new = getattr(node, arg)
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, new)
                return tree
            if isinstance(value, list):
                for j, item in enumerate(value):
                    if item is node:
                        value[j] = new
                        return tree
    return tree


def _changed_line(tree, candidate):
    """The line a replacement changes (None for deletions): it must be code that runs."""
    what, index, _ = candidate
    if what != "replace":
        return None
    node = _loaded_expressions(tree)[index]
    return getattr(node, "lineno", None)


def minimize(source, entry, still_fails, budget=120.0, max_tries=600):
    """The smallest variant of ``source`` found for which ``still_fails(text, changed_line)`` holds."""
    tree = ast.parse(ast.unparse(ast.parse(source)))  # line numbers of the layout candidates have
    start, tries = time.monotonic(), 0
    improved = True
    while improved:
        improved = False
        for candidate in list(_candidates(tree, entry)):
            if time.monotonic() - start > budget or tries >= max_tries:
                return ast.unparse(tree) + "\n"
            try:
                smaller = _apply(tree, candidate)
                text = ast.unparse(ast.fix_missing_locations(smaller)) + "\n"
            except Exception:
                continue
            tries += 1
            if still_fails(text, _changed_line(tree, candidate)):
                tree = ast.parse(text)
                improved = True
                break
    return ast.unparse(tree) + "\n"


SIGNATURE_NODES = {
    ast.For: "for", ast.While: "while", ast.If: "if", ast.Break: "break", ast.Continue: "continue",
    ast.AugAssign: "augassign", ast.Lambda: "lambda", ast.ListComp: "comprehension", ast.IfExp: "ifexp",
    ast.Tuple: "tuple", ast.Dict: "dict", ast.BoolOp: "and/or",
}
SIGNATURE_CALLS = {"append", "stack", "where", "reshape", "flip", "ravel", "T", "copy", "zip", "enumerate",
                   "reversed", "len", "sum", "max", "min", "abs", "concatenate", "einsum", "dot", "outer",
                   "maximum", "minimum", "clip", "cumsum", "sort", "transpose", "swapaxes", "tile", "repeat",
                   "broadcast_to", "items", "array", "float", "prod", "mean", "expand_dims", "linalg", "norm"}


def signature(source, entry):
    """The constructs a (minimal) program uses: a coarse fingerprint of what a failure needs."""
    tree = ast.parse(source)
    found = set()
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(functions) > 1:
        found.add("helper")
    for node in ast.walk(tree):
        tag = SIGNATURE_NODES.get(type(node))
        if tag:
            found.add(tag)
        if isinstance(node, ast.FunctionDef) and node not in tree.body:
            found.add("nested-def")
        if isinstance(node, ast.Subscript):
            found.add("store" if isinstance(node.ctx, ast.Store) else "index")
            if isinstance(node.slice, (ast.List, ast.Compare)) or (
                    isinstance(node.slice, ast.Tuple) and any(isinstance(e, ast.List) for e in node.slice.elts)):
                found.add("fancy-index")
        if isinstance(node, ast.Attribute) and node.attr in SIGNATURE_CALLS:
            found.add(node.attr)
        if isinstance(node, ast.Name) and node.id in SIGNATURE_CALLS and isinstance(node.ctx, ast.Load):
            found.add(node.id)
    for fn in functions:
        if sum(isinstance(n, ast.Return) for n in ast.walk(fn)) > 1:
            found.add("early-return")
    return " ".join(sorted(found))
