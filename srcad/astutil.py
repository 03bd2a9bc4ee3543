"""Small gast helpers shared by the passes: building, copying, renaming, printing."""
import collections
import re

import astor
import gast

_ANNO = "_srcad_anno"


def anno(node, key, default=None):
    return getattr(node, _ANNO, {}).get(key, default)


def strip_annotations(tree):
    """Drop srcad's annotations from ``tree`` (they hold resolved objects: a tree kept for
    later must not keep the user's functions alive)."""
    for n in gast.walk(tree):
        n.__dict__.pop(_ANNO, None)


def set_anno(node, key, value):
    annos = getattr(node, _ANNO, None)
    if annos is None:
        annos = {}
        setattr(node, _ANNO, annos)
    annos[key] = value
    return node


def load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def assign(target, value):
    if isinstance(target, str):
        target = store(target)
    return gast.Assign(targets=[target], value=value, type_comment=None)


def is_atom(node):
    """Names and literal constants: what A-normal form allows as an operand."""
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return isinstance(node.operand, gast.Constant)
    if isinstance(node, gast.Tuple):
        return all(isinstance(e, gast.Constant) for e in node.elts)
    return False


def parse_stmts(src):
    return gast.parse(src).body


def deepcopy(node):
    """Copy a tree, keeping srcad annotations (resolved objects are shared, not copied).

    A structural clone: ``copy.deepcopy``'s memo bookkeeping made it a third of the time
    spent generating code.
    """
    if isinstance(node, list):
        return [deepcopy(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = node.__class__.__new__(node.__class__)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if key == _ANNO:
            fields[key] = dict(value)
        elif isinstance(value, (gast.AST, list)):
            fields[key] = deepcopy(value)
        else:
            fields[key] = value
    return new


def walk_statements(stmts):
    """Every statement in ``stmts``, and in the bodies of its branches and loops, in order."""
    for s in stmts:
        yield s
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from walk_statements(s.body)
            yield from walk_statements(s.orelse)


def walk(node):
    """Every node of a tree, in ``gast.walk``'s order (breadth first), at a fraction of its
    cost (no generator per node): passes walk trees thousands of times."""
    todo = collections.deque([node])
    take, append, extend = todo.popleft, todo.append, todo.extend
    while todo:
        node = take()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, gast.AST):
                append(value)
            elif isinstance(value, list):
                extend([v for v in value if isinstance(v, gast.AST)])
        yield node


def _names(node, ctx):
    """Ids of the names in a tree whose context is an instance of ``ctx``."""
    found = set()
    todo = [node]
    take, append, extend = todo.pop, todo.append, todo.extend
    while todo:
        node = take()
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, ctx):
                found.add(node.id)
            if node.annotation is not None:  # a parameter's annotation
                append(node.annotation)
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                extend([v for v in value if isinstance(v, gast.AST)])
            elif isinstance(value, gast.AST):
                append(value)
    return found


def names_read(node):
    """Names a tree loads."""
    return _names(node, gast.Load)


def names_stored(node):
    return _names(node, gast.Store)


def all_names(node):
    return _names(node, object)  # any context


class _Renamer(gast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        new = self.mapping.get(node.id)
        if new is None:
            return node
        if isinstance(new, str):
            node.id = new
            return node
        return deepcopy(new)


def replace_names(node, mapping):
    """Replace names by other names (str values) or by copies of expressions (node values)."""
    return _Renamer(mapping).visit(node)


COMMENT_MARK = "#srcad-comment: "


def comment(text):
    """A statement that prints as a ``# text`` comment line."""
    return gast.Expr(value=const(COMMENT_MARK + " ".join(text.split())))


_COMMENT_LINE = re.compile(r"^(\s*)('''|\"\"\"|['\"])" + re.escape(COMMENT_MARK) + r"(.*?)\2[ \t]*$", re.M)  # not past the line's end


def to_source(node):
    """Python source for a gast tree, with comment markers turned into comments."""
    if isinstance(node, list):
        node = gast.Module(body=node, type_ignores=[])
    text = astor.to_source(gast.gast_to_ast(node))  # astor needs no source positions
    return _COMMENT_LINE.sub(lambda m: f"{m.group(1)}# {_unescape(m.group(3), m.group(2))}", text)


def _unescape(text, quote):
    return text.replace("\\" + quote[0], quote[0]).replace("\\\\", "\\")
