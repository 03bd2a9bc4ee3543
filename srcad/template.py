"""Instantiating rule templates at a call site.

A rule's body is specialised to one call: parameters become the call's operands,
``d[x]`` (or ``t[x]``) becomes an adjoint (tangent) variable through a *handler* that
knows which values are active and which adjoints are still zero, ``if`` tests and
conditional expressions on literal arguments are decided now (generated code never tests a
literal with ``is``), ``for op in operands`` over a ``*operands`` parameter is unrolled,
and the template's own temporaries get fresh names.
"""
import builtins
import os

import gast
import numpy as np

from . import astutil as A
from .errors import SrcadError
from .registry import describe, no_derivative
from .rule_stores import update
from .runtime import item_grad, rule_adjoint, unbroadcast
from .template_static import (decide, fold_literal_identity, fold_shape_query, known_shapes, literal_value,
                              static_unbroadcast)
from .template_zeros import Refused, Zero, fold, local_update, refuse_update, refused, settle, zero


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def instantiate(rule, result, bound, handler, namer, refs):
    """The statements of ``rule`` for one call site.

    ``result`` is the atom holding the call's value; ``bound`` maps parameters to atoms;
    ``handler`` resolves ``d[...]``; ``refs(name, obj)`` gives the name under which a
    global the template uses is visible in generated code.
    """
    _check_differentiated(rule, bound, handler)
    env = dict(bound)
    env[rule.result] = result
    renames = {name: namer.fresh("_" + name.strip("_")) for name in rule.locals}
    globals_ = {name: refs(name, obj) for name, obj in rule.globals.items()}
    out = _dtype_check(rule, result, bound, refs)
    try:  # the rule's own statements are read, never changed: what is emitted is copied first
        _emit_block(rule.body, env, renames, globals_, handler, rule, out, {})
    except Refused as refusal:
        site = getattr(bound, "site", None)
        message = str(refusal)
        raise site.error(message) if site is not None else SrcadError(message) from None
    return out


def _dtype_check(rule, result, bound, refs):
    """Fail closed on a ``dtype`` the template does not read: ``np.sum(x, dtype=int)`` truncates,
    so its derivative is zero where the template would give the float one. A call passing a
    ``dtype`` that is not a float one written as a literal checks at run time that its result
    is a float (``[inexact_result(y, message)]``); ``[]`` if there is nothing to check."""
    if rule.dtype_aware or (getattr(rule.key, "__module__", None) or "").startswith("srcad."):
        return []
    given = bound.get("dtype")
    for p in rule.params:
        if given is None and p.kind == p.VAR_KEYWORD:
            given = bound.get(p.name, {}).get("dtype")
    if given is None or isinstance(given, gast.Constant) and given.value is None:
        return []
    if isinstance(given, gast.Constant) and isinstance(given.value, str):
        try:
            if np.dtype(given.value).kind in "fc":
                return []
        except TypeError:
            pass
    from . import runtime

    message = (f"{describe(rule.key)} is given a dtype: if it is an integer or boolean one, the result is "
               "truncated and has no derivative, which srcad's rule does not know; compute in floating point "
               "and convert the result afterwards (.astype(int)) where its derivative should be zero")
    check = gast.Call(func=A.load(refs("inexact_result", runtime.inexact_result)),
                      args=[A.deepcopy(result), A.const(message)], keywords=[])
    return [gast.Expr(value=check)]


def reads_result_by_item(rule):
    """Does ``rule`` (a d-rule) read its result's adjoint only as ``item_grad(d[y], k, y)``
    with a literal ``k``? Then a handler may keep that adjoint item by item (``read_item``)."""
    module = gast.Module(body=rule.body, type_ignores=[])
    by_item, reads = set(), []
    for n in gast.walk(module):
        if _is_item_read(n, rule):
            by_item.add(id(n.args[0]))
        elif (isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and n.value.id == rule.marker
              and isinstance(n.slice, gast.Name) and n.slice.id == rule.result):
            reads.append(n)
    return rule.marker == "d" and bool(reads) and all(id(n) in by_item for n in reads)


def _is_item_read(n, rule):
    """``item_grad(d[y], k, y)`` with ``y`` the rule's result and ``k`` an int literal."""
    return (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and rule.globals.get(n.func.id) is item_grad
            and len(n.args) == 3 and not n.keywords
            and isinstance(n.args[0], gast.Subscript) and isinstance(n.args[0].value, gast.Name)
            and n.args[0].value.id == rule.marker and isinstance(n.args[0].slice, gast.Name)
            and n.args[0].slice.id == rule.result
            and isinstance(n.args[1], gast.Constant) and type(n.args[1].value) is int
            and isinstance(n.args[2], gast.Name) and n.args[2].id == rule.result)


def _check_differentiated(rule, bound, handler):
    """Fail closed: an operand that carries a derivative, bound to a parameter the rule never
    names in ``d[...]`` (``t[...]``), would silently get none; refuse the call instead."""
    if (getattr(rule.key, "__module__", None) or "").startswith("srcad."):
        return  # srcad's own helpers take shapes as arguments; finite differences test their rules
    site = getattr(bound, "site", None)
    source = getattr(site, "source", None) or getattr(getattr(site, "ctx", None), "source", None)
    if source is not None and (source.is_generated() or source.filename.startswith(_PACKAGE)):
        return  # code srcad wrote, differentiated again: its integers (axes, sizes) pass through saved tuples
    covered = rule.differentiated
    for p in rule.params:
        if p.name in covered:
            continue
        atom = bound.get(p.name)
        atoms = list(atom.values()) if isinstance(atom, dict) else atom if isinstance(atom, list) else [atom]
        if any(isinstance(a, gast.Name) and handler.is_active(a.id) for a in atoms):
            message = (f"the derivative rule of {describe(rule.key)} does not differentiate its argument "
                       f"'{p.name}', which depends on the differentiated inputs here; pass a value that does not "
                       f"(or wrap it in srcad.stop_gradient if no derivative should flow through it), or register "
                       f"a rule that updates {rule.marker}[{p.name}] ({rule.filename}:{rule.lineno})")
            raise site.error(message) if site is not None else SrcadError(message)


def _emit_block(stmts, env, renames, globals_, handler, rule, out, derivatives):
    for stmt in stmts:
        if isinstance(stmt, gast.For) and isinstance(stmt.iter, (gast.Name, gast.Call)):
            seq = _vararg(stmt.iter, env)
            if seq is not None:
                for i, item in enumerate(seq):
                    sub = dict(env)
                    target = stmt.target
                    if isinstance(target, gast.Tuple):
                        sub[target.elts[0].id] = A.const(i)
                        sub[target.elts[1].id] = item
                    else:
                        sub[target.id] = item
                    _emit_block(stmt.body, sub, renames, globals_, handler, rule, out,
                                derivatives)
                continue
        if isinstance(stmt, gast.If):
            decided = decide(stmt.test, env, handler, rule)
            if decided is not None:
                branch = stmt.body if decided else stmt.orelse
                _emit_block(branch, env, renames, globals_, handler, rule, out, derivatives)
                continue
            test, _ = _substitute(A.deepcopy(stmt.test), env, renames, globals_, handler, rule, derivatives)

            before, after = dict(derivatives), []

            def emit(branch):
                code, facts = [], dict(before)
                _emit_block(branch, env, renames, globals_, handler, rule, code, facts)
                after.append(facts)
                return code

            # decided at run time: the handler merges what each branch did to the adjoints, and
            # the template's temporaries are joined here
            node = handler.rule_branch(test, lambda: emit(stmt.body), lambda: emit(stmt.orelse))
            derivatives.clear()
            derivatives.update(_joined(after, rule, stmt))
            if any(not isinstance(b, gast.Pass) for b in node.body + node.orelse):
                out.append(node)
            continue
        _emit_stmt(stmt, env, renames, globals_, handler, rule, out, derivatives)


def _joined(branches, rule, stmt):
    """What is known of the template's temporaries after a run-time ``if`` whose branches left
    ``branches`` (temporary -> its derivative is not zero; absent: it carries none). A temporary
    whose derivative is zero in one branch (its statement dropped: unbound there) and not in
    another has no one answer: refused, rather than a term lost or a name read unbound."""
    joined = {}
    for name in sorted(set().union(*branches)):
        facts = {b.get(name) for b in branches}
        if False in facts and facts != {False}:
            raise SrcadError(f"{rule}, line {getattr(stmt, 'lineno', '?')} of the rule: '{name}' is bound in the branches of an "
                             "'if' decided when the code runs, with a derivative that is zero here in one branch "
                             "and not in the other; accumulate into the result inside each branch instead "
                             "(t[y] += ... or d[x] += ... in both branches)")
        joined[name] = True if True in facts else facts.pop()
    return {name: fact for name, fact in joined.items() if fact is not None}


def _vararg(node, env):
    if isinstance(node, gast.Name) and isinstance(env.get(node.id), list):
        return env[node.id]
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "enumerate"
            and len(node.args) == 1 and isinstance(node.args[0], gast.Name)
            and isinstance(env.get(node.args[0].id), list)):
        return env[node.args[0].id]
    return None


def _marker_target(node, rule, env):
    """If ``node`` is ``d[p]``, the atom p is bound to (or the string name of a local)."""
    if (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == rule.marker):
        key = node.slice
        if isinstance(key, gast.Name) and key.id in env:
            return env[key.id]
        raise SrcadError(f"{rule}: {rule.marker}[...] must name a parameter")
    return None


def _substitute(node, env, renames, globals_, handler, rule, derivatives, updated=None):
    """Replace parameters, locals, globals and marker reads in an expression, in one pass, and
    whether it read a derivative that is not zero. A zero one is simplified away where that is
    exact, else the whole is ``Zero`` or refused (``template_zeros``). ``derivatives`` maps
    the template's temporaries computed from derivatives to whether theirs is not zero;
    ``updated`` is the variable whose buffer the statement updates in place (not a read).

    Hygiene by construction: every node that comes from outside the template (a call's operand
    atom, the result's name, a spliced ``*operands`` item, an adjoint read) is *opaque* — it is
    never visited again, so a user variable that happens to be called like a template parameter
    (``y``), local or global (``np``) can never be substituted a second time. Template locals
    get fresh names and globals the names ``refs`` reserved, so neither can meet a user name.
    """
    substitution = _Substitution(env, renames, globals_, handler, rule, derivatives, updated)
    new = substitution.visit(node)
    if substitution.zero_read is not None or substitution.refusal is not None:
        settle(new, substitution, rule)
    return new, substitution.live_reads > 0


class _Substitution(A.Transformer):
    """``_substitute``'s one pass (a class made once, not per expression)."""

    def __init__(self, env, renames, globals_, handler, rule, derivatives, updated):
        self.env, self.renames, self.globals_ = env, renames, globals_
        self.handler, self.rule, self.derivatives, self.updated = handler, rule, derivatives, updated
        self.opaque = set()  # ids of the nodes spliced in from the call site
        self.live_reads, self.zero_read = 0, None  # derivatives read that are not zero; the first one that is
        self.refusal = None  # the message of a no_derivative(...) read

    def zero(self, read):
        if self.zero_read is None:
            self.zero_read = read
        return zero()

    def splice(self, node):
        self.opaque.add(id(node))
        return node

    def visit(self, n):
        return n if id(n) in self.opaque else super().visit(n)

    def visit_Attribute(self, n):
        folded = fold_shape_query(n, self.env, self.handler, self.rule)
        return folded if folded is not None else self.generic_visit(n)

    def visit_Call(self, n):
        folded = fold_shape_query(n, self.env, self.handler, self.rule)
        if folded is not None:
            return folded
        if isinstance(n.func, gast.Name) and self.rule.globals.get(n.func.id) is no_derivative:
            what, instead = (self.rule.globals[a.id] if isinstance(a, gast.Name) else literal_value(a) for a in n.args)
            self.refusal = f"srcad does not differentiate {what}; {instead}"
            return refused(n)  # unless its term is zero (t[start] * no_derivative(...), start constant)
        if _is_item_read(n, self.rule):
            split = self.handler.read_item(self.env[self.rule.result], n.args[1].value)
            if split is not None:  # the result's adjoint is kept item by item
                return self.splice(split)
        if isinstance(n.func, gast.Name) and self.rule.globals.get(n.func.id) is unbroadcast and len(n.args) == 2:
            shapes = known_shapes(n.args[1], self.env[self.rule.result], self.env, self.handler)
            if shapes is not None and not shapes[0] and self._same_real_arrays(n.args[0], shapes[1]):
                # Σ d[y]·x of two arrays of one shape, into a scalar: a dot product, no temporary
                left, right = n.args[0].left, n.args[0].right
                numpy = A.set_anno(A.load(self.handler.refs("np", np)), "denotes", np)
                dot = gast.Attribute(value=numpy, attr="vdot", ctx=gast.Load())
                return self.splice(gast.Call(func=dot, args=[self.visit(left), self.visit(right)], keywords=[]))
            if shapes is not None:  # the sum that undoes broadcasting, decided now
                return self.splice(static_unbroadcast(self.visit(n.args[0]), *shapes, self.handler))
        args = []
        for a in n.args:
            if (isinstance(a, gast.Starred) and isinstance(a.value, gast.Name)
                    and isinstance(self.env.get(a.value.id), list)):
                args.extend(self.splice(A.deepcopy(x)) for x in self.env[a.value.id])
            else:
                args.append(a)
        n.args = args
        return self.generic_visit(n)

    def _same_real_arrays(self, expr, shape):
        """Is the template expression ``expr`` a product ``a * b`` of two operands (``d[y]`` or a
        parameter) that are both float arrays of ``shape`` (more than one entry)?"""
        if not (isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Mult) and len(shape) >= 1
                and np.prod(shape) > 1):
            return False
        for side in (expr.left, expr.right):
            marked = _marker_target(side, self.rule, self.env)
            atom = marked if marked is not None else self.env.get(side.id) if isinstance(side, gast.Name) else None
            spec = self.handler.spec(atom.id) if isinstance(atom, gast.Name) else None
            if spec is None or spec.python is not None or spec.shape != shape or spec.dtype.kind != "f":
                return False
        return True

    def visit_IfExp(self, n):
        # ``g if axis is None else ...`` with axis=0
        decided = decide(n.test, self.env, self.handler, self.rule)
        if decided is None:
            return self.generic_visit(n)
        return self.visit(n.body if decided else n.orelse)

    def visit_Compare(self, n):
        n = self.generic_visit(n)
        return fold_literal_identity(n)

    def visit_Subscript(self, n):
        bound = _marker_target(n, self.rule, self.env)
        if bound is None:
            return self.generic_visit(n)
        expr = self.handler.read(bound.id) if isinstance(bound, gast.Name) else None
        if expr is None:
            return self.zero(n)
        self.live_reads += bound.id != self.updated
        return self.splice(expr)

    def visit_BinOp(self, n):
        n = fold(self.generic_visit(n))
        if isinstance(n, gast.BinOp) and isinstance(n.op, gast.Add) and all(
                isinstance(o, gast.Tuple) for o in (n.left, n.right)):  # (a,) + rest: one display
            return gast.Tuple(elts=n.left.elts + n.right.elts, ctx=gast.Load())
        if isinstance(n, gast.BinOp) and isinstance(n.op, (gast.Add, gast.Sub)) and all(
                isinstance(o, gast.Constant) and type(o.value) is int for o in (n.left, n.right)):  # k + 1 of a loop's k
            return A.const(n.left.value + n.right.value if isinstance(n.op, gast.Add) else n.left.value - n.right.value)
        return n

    def visit_UnaryOp(self, n):
        return fold(self.generic_visit(n))

    def visit_Name(self, n):
        if n.id in self.env:
            value = self.env[n.id]
            if isinstance(value, list):  # *args: a tuple of the call's operands
                return self.splice(gast.Tuple(elts=[A.deepcopy(v) for v in value], ctx=gast.Load()))
            if isinstance(value, dict):
                raise SrcadError(f"{self.rule}: **{n.id} can only be ignored")
            return self.splice(A.deepcopy(value))
        if n.id in self.renames:
            if n.id in self.derivatives and isinstance(n.ctx, gast.Load):
                if not self.derivatives[n.id]:
                    return self.zero(n)
                self.live_reads += 1
            n.id = self.renames[n.id]
        elif n.id in self.globals_:
            A.set_anno(n, "denotes", self.rule.globals[n.id])  # what the name is, for later passes
            n.id = self.globals_[n.id]
        elif isinstance(n.ctx, gast.Load) and hasattr(builtins, n.id):  # never resolved in the user's scope
            n.id = self.handler.refs(n.id, getattr(builtins, n.id))
        return n



def _emit_stmt(stmt, env, renames, globals_, handler, rule, out, derivatives):
    applied = update(stmt, rule.marker)  # the only stores into d[...] a rule has (rule_stores)
    # d[x] += e, d[x] -= e: accumulate into an adjoint
    if applied is not None and applied[0] == "accumulate":
        bound = _marker_target(applied[1], rule, env)
        if not isinstance(bound, gast.Name) or not handler.is_active(bound.id):
            return
        try:
            value, _ = _substitute(A.deepcopy(stmt.value), env, renames, globals_, handler, rule, derivatives)
        except Zero:
            return
        if isinstance(stmt.op, gast.Sub):
            value = gast.UnaryOp(op=gast.USub(), operand=value)
        if rule.marker == "d" and not rule._own and not _unbroadcast_to(stmt.value, applied[1].slice, rule):
            # a user's rule may write d[s] += d[y] * y / s for a scalar s: summed to s's shape
            # here, as srcad's own rules do, else the array would broadcast into s's adjoint;
            # checked when run to sum only axes the call's operands have (rule_adjoint)
            label = f"{rule.fn.__qualname__} ({rule.filename}:{rule.lineno}) for d[{applied[1].slice.id}]"
            value = handler.call("rule_adjoint", rule_adjoint, value, A.load(bound.id), A.const(label),
                                 *_operand_shapes(env, handler))
        elif rule.marker == "t" and not rule._own:  # t[y] += e: checked to fit y when it runs
            value = handler.helper("rule_tangent", value, A.load(bound.id), A.const(rule.fn.__qualname__))
        out.extend(handler.accumulate(bound.id, value))
        return
    # d[x][i] += e, np.add.at(d[x], i, e): update an adjoint buffer in place
    if applied is not None:
        mutated = _marker_target(applied[1], rule, env)
        if not isinstance(mutated, gast.Name) or not handler.is_active(mutated.id):
            return
        try:
            _substitute(A.deepcopy(stmt), env, renames, globals_, _NoRead(handler, mutated.id), rule, derivatives,
                        mutated.id)
        except Zero:
            return
        out.extend(handler.own(mutated.id))
        out.append(_substitute(A.deepcopy(stmt), env, renames, globals_, handler, rule, derivatives, mutated.id)[0])
        return
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) and stmt.target.id in renames:
        _emit_local_update(stmt, env, renames, globals_, handler, rule, out, derivatives)
        return
    try:
        new, live = _substitute(A.deepcopy(stmt), env, renames, globals_, handler, rule, derivatives)
    except Zero:
        for name in A.names_stored(stmt):
            derivatives[name] = False
        return
    for name in A.names_stored(stmt):
        if live:
            derivatives[name] = True
        else:
            derivatives.pop(name, None)
    out.append(new)


def _operand_shapes(env, handler):
    """The call's operands and result for ``rule_adjoint``: a tuple of the shapes known now,
    and a tuple of the others (read when the code runs)."""
    spec = getattr(handler, "spec", None)
    known, others = [], []
    for atom in env.values():
        for item in atom if isinstance(atom, list) else [atom]:
            if not isinstance(item, gast.Name):
                continue
            found = spec(item.id) if spec is not None else None
            if found is not None and isinstance(found.shape, tuple):
                known.append(gast.Tuple(elts=[A.const(n) for n in found.shape], ctx=gast.Load()))
            else:
                others.append(A.load(item.id))
    return gast.Tuple(elts=known, ctx=gast.Load()), gast.Tuple(elts=others, ctx=gast.Load())


def _unbroadcast_to(value, param, rule):
    """Is the template expression ``value`` already ``unbroadcast(..., param)``?"""
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and rule.globals.get(value.func.id) is unbroadcast and len(value.args) == 2
            and isinstance(value.args[1], gast.Name) and isinstance(param, gast.Name)
            and value.args[1].id == param.id)


def _emit_local_update(stmt, env, renames, globals_, handler, rule, out, derivatives):
    """``g op= e`` on a template temporary ``g``: as written, unless ``g`` or ``e`` is a zero
    derivative; then what ``g op e`` is (``g += e`` keeps ``g`` where ``e`` is zero, and is
    ``g = e`` where ``g`` is), or a refusal where that is not exact (``g /= e``, ``e`` zero)."""
    name = stmt.target.id
    try:
        value, live = _substitute(A.deepcopy(stmt.value), env, renames, globals_, handler, rule, derivatives)
        zero_value = False
    except Zero:
        value, live, zero_value = None, False, True
    zero_target = derivatives.get(name) is False
    if not (zero_value or zero_target):
        update_ = gast.AugAssign(target=A.store(renames[name]), op=stmt.op, value=value)
        out.append(gast.copy_location(update_, stmt))
        if live:
            derivatives[name] = True
        return
    outcome = local_update(stmt.op, zero_target, zero_value)
    if outcome is None:
        refuse_update(rule, stmt)
    if outcome == "zero":
        derivatives[name] = False
    elif outcome in ("assign", "negate"):
        value = value if outcome == "assign" else gast.UnaryOp(op=gast.USub(), operand=value)
        out.append(gast.copy_location(A.assign(renames[name], value), stmt))
        if live:
            derivatives[name] = True
        else:
            derivatives.pop(name, None)


class _NoRead:
    """Probe handler: is any adjoint other than the mutated buffer zero?"""

    def __init__(self, handler, skip):
        self.handler, self.skip = handler, skip

    def read(self, name):
        if name == self.skip:
            return A.load(name)
        return self.handler.read(name)

    def read_item(self, result, k):
        return self.handler.read_item(result, k)
