"""Small gast helpers shared by the passes: building, copying, renaming, printing."""
import ast
import copy as _copy
import re

import astor
import gast

from .line_wrapping import pretty_source

_ANNO = "_srcad_anno"


def anno(node, key, default=None):
    annos = getattr(node, _ANNO, None)
    return default if annos is None else annos.get(key, default)


def strip_annotations(tree):
    """Drop srcad's annotations from ``tree`` (they hold resolved objects: a tree kept for
    later must not keep the user's functions alive)."""
    for n in walk(tree):
        n.__dict__.pop(_ANNO, None)


def set_anno(node, key, value):
    annos = getattr(node, _ANNO, None)
    if annos is None:
        annos = {}
        setattr(node, _ANNO, annos)
    annos[key] = value
    return node


# The nodes passes make most are built as gast's constructor builds them (its ``__init__`` sets
# the fields given), without a call of that Python function: passes make thousands of names.
_new_node = gast.AST.__new__


def load(name):
    node = _new_node(gast.Name)
    node.__dict__.update(id=name, ctx=_new_node(gast.Load), annotation=None, type_comment=None)
    return node


def store(name):
    node = _new_node(gast.Name)
    node.__dict__.update(id=name, ctx=_new_node(gast.Store), annotation=None, type_comment=None)
    return node


# the types of the values a literal writes (what generated code may hold as written)
LITERAL_TYPES = (int, float, complex, str, bytes, bool, type(None))


def const(value):
    node = _new_node(gast.Constant)
    node.__dict__.update(value=value, kind=None)
    return node


def is_none(node):
    """Is ``node`` the literal ``None``?"""
    return isinstance(node, gast.Constant) and node.value is None


def assign(target, value):
    if isinstance(target, str):
        target = store(target)
    node = _new_node(gast.Assign)
    node.__dict__.update(targets=[target], value=value, type_comment=None)
    return node


def is_atom(node):
    """Names and literal constants: what A-normal form allows as an operand."""
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return isinstance(node.operand, gast.Constant)
    if isinstance(node, gast.Tuple):
        return all(isinstance(e, gast.Constant) for e in node.elts)
    return False


def copy_blocks(stmts):
    """``stmts`` with every compound statement copied down to its blocks (new ``body``/
    ``orelse``/``finalbody`` lists), sharing the simple statements and every expression: a
    pass that only drops or reorders statements of the copy leaves ``stmts`` as it was, at a
    fraction of ``deepcopy``'s cost."""
    out = []
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While, gast.Try, gast.With, gast.ExceptHandler)):
            s = _copy.copy(s)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, copy_blocks(getattr(s, field)))
            if isinstance(s, gast.Try):
                s.handlers = copy_blocks(s.handlers)
        out.append(s)
    return out


def parse_stmts(src):
    return gast.parse(src).body


def _copy_positions(new, node):
    """``ast.copy_location(new, node)``, inlined (to_ast calls it for every special node): each
    position ``node`` has, but no line or column that is None."""
    fields = new.__dict__
    for attr in node._attributes:
        value = getattr(node, attr, _ABSENT)
        if value is not _ABSENT and not (value is None and attr in ("lineno", "col_offset")):
            fields[attr] = value
    return new


_ABSENT = object()


def deepcopy(node):
    """Copy a tree, keeping srcad annotations (resolved objects are shared, not copied).

    A structural clone: ``copy.deepcopy``'s memo bookkeeping made it a third of the time
    spent generating code.
    """
    if node.__class__ is list:
        return [deepcopy(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    return _copy_node(node)


_IMMUTABLE = frozenset((str, int, float, bool, complex, bytes, type(None)))  # shared, never copied


def _copy_node(node):
    cls = node.__class__
    new = cls.__new__(cls)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        value_class = value.__class__
        if value_class in _IMMUTABLE:  # (most fields: names, positions, None; checked first)
            fields[key] = value
        elif value_class is list:
            fields[key] = [_copy_node(n) if isinstance(n, gast.AST) else deepcopy(n) for n in value]
        elif key == _ANNO:
            fields[key] = dict(value)
        elif isinstance(value, gast.AST):
            fields[key] = _copy_node(value)
        else:
            fields[key] = value
    return new


def blocks(stmts):
    """Every statement list in ``stmts``, nested ones included (``stmts`` first): bodies of
    branches, loops and ``try`` statements."""
    yield stmts
    for s in stmts:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                yield from blocks(inner)
        for handler in getattr(s, "handlers", ()):
            yield from blocks(handler.body)


def every_statement(stmts):
    """Every statement in ``stmts`` at any depth (``blocks``' statements, block by block): what
    ``gast.walk`` finds of them, without walking expressions."""
    for block in blocks(stmts):
        yield from block


def walk_statements(stmts):
    """Every statement in ``stmts``, and in the bodies of its branches and loops, in order."""
    for s in stmts:
        yield s
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from walk_statements(s.body)
            yield from walk_statements(s.orelse)


def drop_statements(stmts, drop):
    """``stmts`` without the statements for which ``drop(s)`` is true, at every depth of
    ``if``/``for``/``while`` (a body left empty becomes ``pass``); nested bodies are edited in place."""
    out = []
    for s in stmts:
        if drop(s):
            continue
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = drop_statements(s.body, drop) or [gast.Pass()]
            s.orelse = drop_statements(s.orelse, drop)
        out.append(s)
    return out


def walk(node):
    """Every node of a tree but the ``ctx``, operator and comparison leaves (``Load``,
    ``Add``, ``Lt``: no pass looks for them), in ``gast.walk``'s order (breadth first), at a
    fraction of its cost (no generator per node, only the fields that hold nodes): passes
    walk trees thousands of times."""
    todo = [node]  # the queue: it grows while the loop reads it, and is never shifted
    append, extend = todo.append, todo.extend
    child_fields = _CHILD_FIELDS
    for node in todo:
        cls = node.__class__
        if cls is _NAME:  # (the commonest node)
            if node.annotation is not None:  # a parameter's annotation
                append(node.annotation)
            yield node
            continue
        fields = child_fields.get(cls)
        if fields is None:
            if not isinstance(node, gast.AST):
                continue  # None in a list (``{**d}``'s key), or a string (``match``'s ``kwd_attrs``)
            fields = _child_fields(node)
        held = node.__dict__  # (a node's fields live there: read without getattr's lookup)
        for field in fields:
            value = held.get(field)
            if value.__class__ is list:
                extend(value)
            elif value is not None:
                append(value)
        yield node


# fields that hold no node a pass looks for: strings, numbers, and the ``ctx``/operator leaves
_LEAF_FIELDS = frozenset(("ctx", "op", "ops", "type_comment", "kind", "id", "attr", "level", "is_async",
                          "conversion", "module"))
# fields of some classes (of gast and ast alike) that hold strings or literal values only
_CLASS_LEAF_FIELDS = {"Constant": ("value",), "keyword": ("arg",), "alias": ("name", "asname"),
                      "FunctionDef": ("name",), "AsyncFunctionDef": ("name",), "ClassDef": ("name",),
                      "Global": ("names",), "Nonlocal": ("names",), "arg": ("arg",)}
_CHILD_FIELDS = {}  # node class -> its fields that may hold other nodes


def _child_fields(node):
    leaves = _CLASS_LEAF_FIELDS.get(type(node).__name__, ())
    fields = _CHILD_FIELDS[type(node)] = tuple(f for f in node._fields if f not in _LEAF_FIELDS and f not in leaves)
    return fields


def child_fields(node):
    """The fields of ``node`` that may hold the nodes ``walk`` goes to (for a walk of one's own
    that stops at some nodes)."""
    fields = _CHILD_FIELDS.get(node.__class__)
    return _child_fields(node) if fields is None else fields


def child_nodes(node):
    """The nodes ``node`` holds directly, in ``gast.iter_child_nodes``' order, but for the
    ``ctx``, operator and comparison leaves (``walk``'s), as a list."""
    out = []
    held = node.__dict__
    for field in child_fields(node):
        value = held.get(field)
        if value.__class__ is list:
            out.extend(v for v in value if isinstance(v, gast.AST))
        elif isinstance(value, gast.AST):
            out.append(value)
    return out


def _names(node, ctx):
    """Ids of the names in a tree whose context is an instance of ``ctx``."""
    found = set()
    add = found.add
    todo = [node]  # (a set: the order nodes are read in does not matter)
    append, extend = todo.append, todo.extend
    child_fields = _CHILD_FIELDS
    for node in todo:
        cls = node.__class__
        if cls is _NAME:
            if isinstance(node.ctx, ctx):
                add(node.id)
            if node.annotation is not None:  # a parameter's annotation
                append(node.annotation)
            continue
        fields = child_fields.get(cls)
        if fields is None:
            if not isinstance(node, gast.AST):
                continue  # None or a string in a list (``walk``)
            fields = _child_fields(node)
        held = node.__dict__
        for field in fields:
            value = held.get(field)
            if value.__class__ is list:
                extend(value)
            elif value is not None:
                append(value)
    return found


_NAME = gast.Name  # (no pass subclasses a node class: the class itself is compared)


def names_read(node):
    """Names a tree loads."""
    return _names(node, gast.Load)


def names_stored(node):
    return _names(node, gast.Store)


def all_names(node):
    return _names(node, object)  # any context


class Transformer(gast.NodeTransformer):
    """``gast.NodeTransformer`` with the same results at less cost: each class's visitor is looked
    up once per transformer class, and fields are read directly (rules are instantiated by one
    per call site)."""

    _VISITORS = {}  # (transformer class, node class) -> its visitor function

    def visit(self, node):
        key = (type(self), type(node))
        visitor = Transformer._VISITORS.get(key)
        if visitor is None:
            visitor = getattr(type(self), "visit_" + type(node).__name__, type(self).generic_visit)
            Transformer._VISITORS[key] = visitor
        return visitor(self, node)

    def generic_visit(self, node):
        for field in node._fields:
            old = getattr(node, field, None)
            if isinstance(old, list):
                values = []
                for value in old:
                    if isinstance(value, ast.AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, ast.AST):
                            values.extend(value)
                            continue
                    values.append(value)
                old[:] = values
            elif isinstance(old, ast.AST):
                new = self.visit(old)
                if new is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new)
        return node


class _Renamer(Transformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def generic_visit(self, node):
        annos = getattr(node, _ANNO, None)
        for key, value in (annos or {}).items():
            if hasattr(value, "renamed"):  # names an annotation keeps (method_calls.ThroughSelf) go with the tree
                annos[key] = value.renamed(self.mapping)
        return super().generic_visit(node)

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


def is_comment(stmt):
    """A statement ``comment`` made (gast or ``ast``: their node classes are named alike)."""
    return (stmt.__class__.__name__ == "Expr" and stmt.value.__class__.__name__ == "Constant"
            and isinstance(stmt.value.value, str) and stmt.value.value.startswith(COMMENT_MARK))


_COMMENT_LINE = re.compile(r"^(\s*)('''|\"\"\"|['\"])" + re.escape(COMMENT_MARK) + r"(.*?)\2[ \t]*$", re.M)  # not past the line's end


def to_ast(node):
    """The standard library's ``ast`` tree for a gast tree: what ``gast.gast_to_ast`` makes, node
    for node and position for position, at a fraction of its cost (no visitor, no constructor
    call per node; printing the generated code spent most of its time in gast's conversion)."""
    cls = type(node)
    if cls is gast.Name:  # the commonest node: a plain name (the parameters' are ``arg``s)
        new = ast.Name.__new__(ast.Name)
        fields = new.__dict__
        fields.update(node.__dict__)
        fields.pop("annotation", None)
        fields.pop("type_comment", None)
        fields.pop(_ANNO, None)
        fields["ctx"] = _CONTEXTS.get(type(node.ctx)) or to_ast(node.ctx)
        return new
    special = _SPECIAL.get(cls)
    if special is not None:
        new = special(node)
        if cls is not gast.arguments:  # gast places every node but ``arguments``
            _copy_positions(new, node)
        return new
    target = _AST_CLASS.get(cls)
    if target is None:
        target = _AST_CLASS[cls] = getattr(ast, cls.__name__, False)
    if not target:
        return None  # gast's conversion drops what ``ast`` has no class for
    new = target.__new__(target)
    fields = new.__dict__  # the same fields and positions: filled in directly
    for key, value in node.__dict__.items():
        value_class = value.__class__
        if value_class in _IMMUTABLE:  # (most fields: checked first)
            fields[key] = value
        elif value_class is list:
            fields[key] = [to_ast(v) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            fields[key] = _CONTEXTS.get(value_class) or to_ast(value)  # (a context: shared, as a name's)
        elif key != _ANNO:
            fields[key] = value
    return new


def _to_ast_value(value):
    if isinstance(value, list):
        return [_to_ast_value(v) for v in value]
    return to_ast(value) if isinstance(value, ast.AST) else value


def _arg(name):
    if name is None:
        return None
    return ast.copy_location(ast.arg(name.id, _to_ast_value(name.annotation), name.type_comment), name)


def _function(node):
    return getattr(ast, type(node).__name__)(node.name, to_ast(node.args), _to_ast_value(node.body),
                                             _to_ast_value(node.decorator_list), _to_ast_value(node.returns),
                                             node.type_comment)


_AST_CLASS = {}  # gast class -> ast class (False: none)
_CONTEXTS = {context: getattr(ast, context.__name__)() for context in (gast.Load, gast.Store, gast.Del)}
_SPECIAL = {  # the other classes whose fields differ between gast and ast
    gast.arguments: lambda n: ast.arguments([_arg(a) for a in n.posonlyargs], [_arg(a) for a in n.args],
                                            _arg(n.vararg), [_arg(a) for a in n.kwonlyargs],
                                            _to_ast_value(n.kw_defaults), _arg(n.kwarg), _to_ast_value(n.defaults)),
    gast.FunctionDef: _function,
    gast.AsyncFunctionDef: _function,
    gast.ClassDef: lambda n: ast.ClassDef(n.name, _to_ast_value(n.bases), _to_ast_value(n.keywords),
                                          _to_ast_value(n.body), _to_ast_value(n.decorator_list)),
    gast.ExceptHandler: lambda n: ast.ExceptHandler(_to_ast_value(n.type), n.name.id if n.name else None,
                                                    _to_ast_value(n.body)),
    gast.Assign: lambda n: ast.Assign(_to_ast_value(n.targets), to_ast(n.value)),
}


def to_source(node):
    """Python source for a gast tree, with comment markers turned into comments."""
    if isinstance(node, list):
        node = gast.Module(body=node, type_ignores=[])
    tree = to_ast(node)
    for block in _ast_blocks(tree):
        comments = [k for k, s in enumerate(block) if is_comment(s)]
        if comments and len(comments) == len(block):  # a pass moved the code out: a comment is no body
            block.append(ast.Pass())
        for k in comments:
            text = block[k].value.value[len(COMMENT_MARK):]
            if text.isprintable() and '"' not in text and "\\" not in text:
                # printed as it is (a "name" astor writes unchanged, a line it never wraps): astor
                # writes a string constant as the text between quotes here, which it finds by
                # compiling its guess; the others are read back off the string below
                block[k] = ast.Expr(value=ast.Name(id="# " + text, ctx=ast.Load()))
    text = astor.to_source(tree, pretty_source=pretty_source)  # astor needs no source positions
    return _COMMENT_LINE.sub(lambda m: f"{m.group(1)}# {_unescape(m.group(3), m.group(2))}", text)


def _ast_blocks(tree):
    """Every statement list of an ``ast`` tree (statements hold them all: no expression is walked)."""
    todo = [tree]
    while todo:
        n = todo.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and (not block or isinstance(block[0], ast.stmt)):
                yield block
                todo.extend(block)
        todo.extend(getattr(n, "handlers", ()))  # an except handler's body is one of these


def _unescape(text, quote):
    return text.replace("\\" + quote[0], quote[0]).replace("\\\\", "\\")
