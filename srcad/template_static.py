"""What a rule template decides when it is instantiated, from literal arguments and the
shapes known when the code is generated (``template.instantiate`` calls these): ``if`` tests
(``decide``), shape queries as literals (``fold_shape_query``), the sum that undoes
broadcasting between two known shapes (``static_unbroadcast``), and identity tests against a
spliced literal (``fold_literal_identity``).

>>> import gast
>>> from srcad.registry import VJP
>>> import numpy as np
>>> rule = VJP[np.sum]
>>> test = gast.parse("axis is None", mode="eval").body
>>> decide(test, {"axis": gast.Constant(value=None, kind=None)}, None, rule)
True
"""
import builtins

import gast
import numpy as np

from . import astutil as A
from .passes.callees import dotted


_SHAPE_QUERIES = {"ndim", "shape", "size", "dtype", "iscomplexobj", "isscalar"}
_BUILTIN_QUERIES = {"isinstance", "len", "tuple", "list", "int", "str", "float", "None", "True", "False"}


def literal(value):
    """In a rule's ``if`` test, first in an ``and``: is this argument a number written in the
    user's code, known when the code is made (``if literal(x) and x != 0:``)? ``decide``
    answers it, and the rest of the test only for a literal; no generated code calls it."""
    raise AssertionError("literal() is answered when a rule is instantiated, first in its test")


def decide(test, env, handler, rule):
    """Evaluate a test on literal arguments and known shapes now; None if it must wait.

    Array operands may appear only inside shape queries (``np.ndim(x)``, ``x.shape``,
    ``len(x)``), which are evaluated on stand-ins of the known shape and dtype. A test
    ``literal(x) and ...`` is false for an ``x`` that is no literal, whatever follows. What
    depends on the template alone (the names, which are shape queries only, the compiled
    test) is worked out once per test.
    """
    first = test.values[0] if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And) else test
    if _literal_query(first, rule):
        node = env.get(first.args[0].id)
        if not (isinstance(node, (gast.Constant, gast.UnaryOp)) and A.is_atom(node)):
            return False
        if first is test:
            return True
        rest = A.anno(test, "literal_rest")
        if rest is None:  # (the rest of the test, made once per template)
            rest = test.values[1] if len(test.values) == 2 else gast.BoolOp(op=gast.And(), values=test.values[1:])
            A.set_anno(test, "literal_rest", rest)
        return decide(rest, env, handler, rule)
    plan = A.anno(test, "decision_plan")
    if plan is None:
        plan = _decision_plan(test, rule)
        A.set_anno(test, "decision_plan", plan)
    if not plan:
        return None  # a call or subscript other than a query: decided at run time
    names, queried, code, paths = plan
    values = {}
    rule_globals = rule.globals
    for name in names:
        node = env.get(name)
        if isinstance(node, list):
            values[name] = tuple(object() for _ in node)
        elif isinstance(node, (gast.Constant, gast.Tuple, gast.UnaryOp)) and A.is_atom(node):
            values[name] = literal_value(node)
        elif isinstance(node, gast.Name):
            spec = getattr(handler, "spec", lambda n: None)(node.id)
            if spec is None or name not in queried:
                return None
            values[name] = spec.dummy()
        elif name in rule_globals:
            values[name] = rule_globals[name]
            for path in sorted(paths.get(name, ())):  # ``if cfg.SQUARE:``: the test depends on the attribute
                rule.read(path)
        elif name not in _BUILTIN_QUERIES:
            return None
    return bool(eval(code, {"__builtins__": builtins}, values))


def _literal_query(node, rule):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and len(node.args) == 1
            and not node.keywords and isinstance(node.args[0], gast.Name)
            and rule.globals.get(node.func.id) is literal)


def _decision_plan(test, rule):
    """(the names ``test`` reads, those read only as shape queries, its compiled code, the
    dotted names read off each name), or False if it calls or indexes anything but a query."""
    for n in A.walk(test):
        if isinstance(n, gast.Call) and not _query_call(n, rule):
            return False
        if isinstance(n, gast.Subscript) and not isinstance(n.value, (gast.Attribute, gast.Call)):
            return False
    names = sorted(A.names_read(test))
    queried = {name for name in names if _only_shape_queries(test, name)}
    code = compile(A.to_ast(gast.fix_missing_locations(gast.Expression(body=A.deepcopy(test)))),
                   "<rule test>", "eval")
    paths = {}
    for n in A.walk(test):
        path = dotted(n) if isinstance(n, gast.Attribute) else None
        if path is not None:
            paths.setdefault(path[0], set()).add(tuple(path))
    return names, queried, code, paths


def _query_call(node, rule):
    func = node.func
    if isinstance(func, gast.Name):
        return func.id in _BUILTIN_QUERIES
    return isinstance(func, gast.Attribute) and func.attr in _SHAPE_QUERIES and isinstance(func.value, gast.Name) \
        and rule.globals.get(func.value.id) is np


def _only_shape_queries(test, name):
    """Is every use of ``name`` in ``test`` the argument of a shape query?"""
    allowed = set()
    for n in A.walk(test):
        if isinstance(n, gast.Call) and (
                (isinstance(n.func, gast.Attribute) and n.func.attr in _SHAPE_QUERIES)
                or (isinstance(n.func, gast.Name) and n.func.id in ("len", "isinstance"))):
            allowed.update(id(a) for a in n.args[:1])
        if isinstance(n, gast.Attribute) and n.attr in _SHAPE_QUERIES:
            allowed.add(id(n.value))
    return all(id(n) in allowed for n in A.walk(test) if isinstance(n, gast.Name) and n.id == name)


def literal_value(node):
    """The Python value of a literal atom (``3``, ``-1``, ``(0, 1)``)."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.UnaryOp):
        return -node.operand.value if isinstance(node.op, gast.USub) else node.operand.value
    return tuple(e.value for e in node.elts)


def fold_literal_identity(node):
    """``0 is None``, ``0.41 is not y``: a number, string or tuple literal spliced into an
    identity test the template could not decide. Python warns about ``is`` with a literal;
    such a literal is taken as identical to nothing else (the rules ask whether a computed
    value *is* one of the operands, as ``max(x, 0.41) is x``), so the test is a constant."""
    if not (len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot))):
        return node
    if not any(_warned_literal(e) for e in (node.left, node.comparators[0])):
        return node
    return A.const(isinstance(node.ops[0], gast.IsNot))


def _warned_literal(node):
    """A literal that Python refuses to compare by identity without a warning."""
    if isinstance(node, gast.Constant):
        return type(node.value) not in (type(None), bool, type(...))
    return A.is_atom(node) and not isinstance(node, gast.Name)


def fold_shape_query(node, env, handler, rule):
    """``np.shape(x)``, ``np.ndim(x)``, ``len(x)``, ``x.shape``... as literals when x's shape is known."""
    spec = getattr(handler, "spec", None)
    if spec is None:
        return None
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords:
        func, arg = node.func, node.args[0]
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and rule.globals.get(func.value.id) is np and func.attr in ("shape", "ndim", "size"):
            query = func.attr
        elif isinstance(func, gast.Name) and func.id == "len" and func.id not in rule.globals:
            query = "len"
        else:
            return None
    elif isinstance(node, gast.Attribute) and node.attr in ("shape", "ndim", "size"):
        query, arg = node.attr, node.value
    else:
        return None
    bound = env.get(arg.id) if isinstance(arg, gast.Name) else None
    known = spec(bound.id) if isinstance(bound, gast.Name) else None
    if known is None or (query == "len" and not known.shape):
        return None
    value = {"shape": known.shape, "ndim": len(known.shape), "size": int(np.prod(known.shape)),
             "len": known.shape[0] if known.shape else None}[query]
    if isinstance(value, tuple):
        return gast.Tuple(elts=[A.const(v) for v in value], ctx=gast.Load())
    return A.const(value)


def known_shapes(operand, result, env, handler):
    """The shapes of an operand (a template name) and the result, if both are known now."""
    spec = getattr(handler, "spec", None)
    if spec is None or not isinstance(operand, gast.Name) or not isinstance(result, gast.Name):
        return None
    bound = env.get(operand.id)
    if not isinstance(bound, gast.Name):
        return None
    a, b = spec(bound.id), spec(result.id)
    return (a.shape, b.shape) if a is not None and b is not None else None


def static_unbroadcast(expr, operand_shape, result_shape, handler):
    """``unbroadcast(expr, x)`` for known shapes: ``expr`` itself, or the exact ``np.sum``."""
    lead = len(result_shape) - len(operand_shape)
    stretched = [lead + i for i, n in enumerate(operand_shape) if n == 1 and result_shape[lead + i] != 1]
    axes = list(range(lead)) + stretched
    if not axes:
        return expr
    np_name = handler.refs("np", np)
    keywords = [gast.keyword(arg="axis", value=gast.Tuple(elts=[A.const(a) for a in axes], ctx=gast.Load()))]
    if stretched:
        keywords.append(gast.keyword(arg="keepdims", value=A.const(True)))
    total = gast.Call(func=gast.Attribute(value=A.load(np_name), attr="sum", ctx=gast.Load()), args=[expr],
                      keywords=keywords if operand_shape else [])
    if stretched and lead:
        shape = gast.Tuple(elts=[A.const(n) for n in operand_shape], ctx=gast.Load())
        total = gast.Call(func=gast.Attribute(value=total, attr="reshape", ctx=gast.Load()), args=[shape], keywords=[])
    return total
