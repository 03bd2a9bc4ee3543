"""Sparse operators: a SciPy sparse matrix or array srcad does not differentiate, as the
operand of a matrix product with a dense array, or the matrix of a sparse solve.

A sparse value's own operators are not NumPy's (``S * x`` is a matrix product for a
``*_matrix``, ``np.dot(S, x)`` an array of objects), so srcad's rules are wrong for it and
``runtime.numeric_constant`` refuses it wherever an operator it differentiates reads it. This
pass allows it in two positions only: as the constant operand of ``@`` and as the matrix of
``scipy.sparse.linalg.spsolve``. Guarantee: afterwards, each active statement ``z = S @ x``,
``z = x @ S``, ``z = S.dot(x)`` (``S.T.dot(x)``: of ``S`` itself, ``transposed``) or
``z = spsolve(S, x)``, where ``S`` is a global or closure value that is sparse now, a
parameter the code is made for a sparse argument in (its class is in ``param_classes``) and
the body never rebinds, or the transpose ``S.T`` of one or its
conversion to another format (``S.tocsc()``: bound once; in a derivative differentiated
again, also put back from its save in a loop, ``_restores``),
and ``x`` another name, reads it as ``rules.scipy_sparse.sparse_left_product(S, x)``,
``sparse_right_product(x, S)`` or ``sparse_solve(S, x)``, whose derivatives are products
(solves) with ``S`` again (checked when they run: see there). Such an ``S`` never carries a
derivative (``srcad.arguments`` refuses a sparse argument in ``wrt``; a sparse value computed
from one that does has no rule). Any other
active statement reading such an ``S`` has raised ``SrcadSyntaxError`` at the user's line; a
name an inactive statement binds from one (``A = 2 * S``, ``n = S.shape[0]``) that an active
statement reads is checked by ``runtime.numeric_constant`` right after it is bound (a number
or an array passes). Nothing imports SciPy unless a sparse value exists already.
"""
import sys

import gast

from .. import astutil as A
from ..runtime import numeric_constant
from .callees import Callee
from .outside_values import runtime_check, target


def sparse_operands(node, source, ref, param_classes=()):
    """Write the products and solves of a constant sparse operand as the rule module's (see
    the module doc); ``ref(name, obj)`` names an object in generated code."""
    if "scipy.sparse" not in sys.modules:  # no sparse value exists
        return node
    sparse = _sparse_names(node, source, param_classes)
    if not sparse:
        return node
    from ..optional_rules import load_rule_modules

    load_rule_modules(("scipy_sparse",))
    active = A.anno(node, "active") or set()
    for s in A.walk_statements(node.body):
        bound = target(s)
        read = A.names_read(s) & set(sparse)
        if not (read and bound and bound & active):
            continue  # (a shape read off it, a product without derivative: as written)
        call = _allowed_call(s, sparse, ref)
        if call is None:
            name = sorted(read)[0]
            raise source.syntax_error(
                f"'{sparse[name]}' is a scipy.sparse matrix, and an operation srcad differentiates reads it: srcad "
                "takes a sparse matrix only as the constant operand of a matrix product with a dense NumPy array "
                "(S @ x, x @ S, S.T @ x, S.dot(x)) or of scipy.sparse.linalg.spsolve(S, b), since its other "
                "operations are not NumPy's (S * x is a matrix product for a *_matrix, np.dot(S, x) an array of "
                "objects); convert it with .toarray() first, or give the operation its derivative with "
                "srcad.custom_vjp", A.anno(s, "origin") or s)
        s.value = gast.copy_location(call, s.value)
    _check_derived(node, source, ref, sparse, active)
    return node


def _check_derived(node, source, ref, sparse, active):
    """``runtime.numeric_constant`` of each name a statement without derivative binds from a
    sparse value (``A = 2 * S``, ``n = S.shape[0]``, ``B = S @ S``), right after it, where a
    statement carrying a derivative reads that name: srcad computes it, so no other check
    types it, and it may be sparse again (a number or an array passes)."""
    derived = {}  # name -> the statements binding it
    tainted = set(sparse)
    statements = [s for s in A.walk_statements(node.body) if isinstance(s, gast.Assign)]
    changed = True
    while changed:
        changed = False
        for s in statements:
            bound = target(s) or set()
            if bound & active or not A.names_read(s.value) & tainted:
                continue
            for name in bound - set(sparse):
                if id(s) not in {id(b) for b in derived.get(name, ())}:
                    derived.setdefault(name, []).append(s)
                    tainted.add(name)
                    changed = True
    read = set().union(*(A.names_read(s) for s in A.walk_statements(node.body) if (target(s) or set()) & active))
    checks = {}  # id(statement) -> names checked after it
    for name in sorted(set(derived) & read):
        for s in derived[name]:
            checks.setdefault(id(s), []).append(name)
    if not checks:
        return

    def check(s, name):
        origin = A.anno(s, "origin") or s
        subject = f"{source.filename}:{getattr(origin, 'lineno', '?')}: '{name}'"
        new = runtime_check(numeric_constant, [A.load(name), A.const(subject)], ref, s)
        A.set_anno(new, "origin", origin)
        return new

    for block in A.blocks(node.body):
        block[:] = [t for s in block for t in (s, *(check(s, name) for name in checks.get(id(s), ())))]


def _allowed_call(s, sparse, ref):
    """The call of ``rules.scipy_sparse`` that does what the statement does, if it is
    ``z = S @ x``, ``z = x @ S``, ``z = S.dot(x)`` (``S.T.dot(x)``, ``S.tocsr().dot(x)``),
    ``z = spsolve(S, x)`` or one of those calls already, where ``S`` is a name in ``sparse``
    and ``x`` a name that is not; else None."""
    from ..rules.scipy_sparse import sparse_left_product, sparse_right_product, sparse_solve

    rhs = s.value if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) else None
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    obj = callee.obj if callee is not None and callee.kind == "object" else None
    extra = []  # (sparse_solve's transposed)
    if isinstance(rhs, gast.BinOp) and isinstance(rhs.op, gast.MatMult):
        helper, (left, right) = None, (rhs.left, rhs.right)
    elif obj in (sparse_left_product, sparse_right_product, sparse_solve) and len(rhs.args) in (2, 3) \
            and not rhs.keywords and not A.names_read(gast.Tuple(elts=rhs.args[2:], ctx=gast.Load())) & set(sparse):
        helper, (left, right), extra = obj, rhs.args[:2], rhs.args[2:]
    elif obj is not None and obj is getattr(sys.modules.get("scipy.sparse.linalg"), "spsolve", None) \
            and len(rhs.args) == 2 and not rhs.keywords:
        helper, (left, right) = sparse_solve, rhs.args
    elif isinstance(rhs, gast.Call) and isinstance(rhs.func, gast.Attribute) and rhs.func.attr == "dot" \
            and _transposes(rhs.func.value, sparse) is not None and len(rhs.args) == 1 and not rhs.keywords:
        name, transposed = _transposes(rhs.func.value, sparse)  # S.T.dot(x): of S itself, read here
        helper, (left, right) = sparse_left_product, (A.load(name), rhs.args[0])
        extra = [A.const(True)] if transposed else []
    else:
        return None
    if not (isinstance(left, gast.Name) and isinstance(right, gast.Name)) \
            or (left.id in sparse) == (right.id in sparse) or helper is sparse_solve and left.id not in sparse:
        return None
    helper = helper or (sparse_left_product if left.id in sparse else sparse_right_product)
    call = gast.Call(func=A.load(ref(helper.__name__, helper)), args=[left, right] + extra, keywords=[])
    A.set_anno(call, "callee", Callee("object", obj=helper, name=helper.__name__))
    return call


def _sparse_names(node, source, param_classes):
    """name -> what the user wrote for it, for each name that holds a sparse value srcad does
    not compute: an unrebound parameter given one, a global or closure value that is one now,
    and a name bound once to the transpose ``.T`` of one or to a conversion ``.tocsc()``,
    ``.tocsr()`` or ``.tocoo()`` of one."""
    from scipy import sparse

    def is_sparse_class(cls):
        return isinstance(cls, type) and issubclass(cls, (sparse.sparray, sparse.spmatrix))

    stored = [n.id for n in A.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
    params = {a.id for a in node.args.args}
    found = {name: name for name, cls in param_classes
             if name in params and name not in stored and is_sparse_class(cls)}
    local = set(stored) | params
    restored = _restores(node) if source.is_generated() else []
    for s in restored:  # (a derivative differentiated again: S.T in a loop, saved and put back)
        stored.remove(s.targets[0].id)
    for name in A.names_read(node) - local:
        try:
            value = source.lookup(name)
        except KeyError:
            continue
        if is_sparse_class(type(value)):  # (type: a weak proxy whose object is gone raises on isinstance)
            found[name] = name
    changed = True
    while changed:
        changed = False
        for s in A.walk_statements(node.body):
            value = s.value if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) else None
            made = _same_entries(value)
            if made is not None and made[0] in found and stored.count(s.targets[0].id) == 1 \
                    and s.targets[0].id not in found:
                found[s.targets[0].id] = f"{found[made[0]]}{made[1]}"
                changed = True
    return found


def _restores(node):
    """The statements of code srcad generated that put back a value a name held before:
    ``n = None`` and ``n = s.pop()`` of a list ``s`` bound only to ``[]``, only ever given
    ``n`` (``s.append(n)``: ``n`` saved where a loop rebinds it) and read for nothing else. A
    product reading ``n`` reads a value of its other binding; the rule checks it when it runs."""
    given, calls = {}, set()  # stack -> the names appended to it; ids of the lists append or pop reads
    for n in A.walk(node):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name) \
                and (n.func.attr == "append" and len(n.args) == 1 or n.func.attr == "pop" and not n.args) \
                and not n.keywords:
            calls.add(id(n.func.value))
            if n.func.attr == "append":
                given.setdefault(n.func.value.id, set()).add(A.to_source(n.args[0]).strip())
    for n in A.walk(node):  # (a list read otherwise, or bound to anything but [], holds anything)
        if isinstance(n, gast.Name) and n.id in given and id(n) not in calls and isinstance(n.ctx, gast.Load):
            given.pop(n.id)
    for s in A.walk_statements(node.body):
        for name in (target(s) or set()) & set(given) if isinstance(s, gast.Assign) else ():
            if not (isinstance(s.value, gast.List) and not s.value.elts):
                given.pop(name)
    found = []
    for s in A.walk_statements(node.body):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)):
            continue
        value = s.value
        popped = isinstance(value, gast.Call) and id(getattr(value.func, "value", None)) in calls \
            and value.func.attr == "pop" and given.get(value.func.value.id) == {s.targets[0].id}
        if popped or isinstance(value, gast.Constant) and value.value is None:
            found.append(s)
    return found


#: conversions of a sparse matrix to another sparse format, with the same entries
_FORMATS = ("tocsc", "tocsr", "tocoo")


def _transposes(value, sparse):
    """``(name, transposed)`` where ``value`` is a name in ``sparse`` followed by transposes and
    format conversions (``S.T.tocsr()``: ``("S", True)``, ``S.T.T``: ``("S", False)``); else None."""
    if isinstance(value, gast.Name):
        return (value.id, False) if value.id in sparse else None
    made = _same_entries(value)
    if made is None or made[0] not in sparse:
        return None
    inner = value.value if isinstance(value, gast.Attribute) else value.func.value
    name, transposed = _transposes(inner, sparse)
    return name, transposed != isinstance(value, gast.Attribute)


def _same_entries(value):
    """``(name, suffix)`` where ``value`` is a name followed by transposes ``.T`` and format
    conversions without arguments (``S.T.tocsc()``: ``("S", ".T.tocsc()")``); else None."""
    if isinstance(value, gast.Attribute) and value.attr == "T":
        inner, suffix = value.value, ".T"
    elif isinstance(value, gast.Call) and not value.args and not value.keywords \
            and isinstance(value.func, gast.Attribute) and value.func.attr in _FORMATS:
        inner, suffix = value.func.value, f".{value.func.attr}()"
    else:
        return None
    if isinstance(inner, gast.Name):
        return inner.id, suffix
    found = _same_entries(inner)
    return None if found is None else (found[0], found[1] + suffix)
