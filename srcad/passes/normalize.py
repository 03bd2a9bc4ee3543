"""Normalization: rewrite a function into srcad's small A-normal form.

Afterwards the body holds only these statements, every operand an atom (a name or a
literal), every temporary a fresh ``_tN``:

- ``x = rhs`` where rhs is an atom, one operator or call on atoms, ``a.attr``,
  ``a[index]``, a tuple/list/dict display of atoms or a comparison;
- ``S[index] = atom`` (an in-place element update) and ``call(...)`` for its effect;
- ``if name: ... else: ...`` (the test may be ``not name``);
- ``for i in _range1: ...`` over a ``range`` object bound to a name;
- ``while name: ...`` whose test is recomputed at the end of the body;
- ``if _stopN: break`` as the last statement of a loop body, and one final ``return atom``.

``break``, ``continue`` and early ``return`` become flags and guards; ``for`` over arrays,
lists, ``enumerate`` and ``zip`` becomes a ``range`` loop with indexing; augmented
assignment becomes plain assignment; helper functions defined in the function (``def``
or ``lambda``) and comprehensions are inlined.

>>> import gast, numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.astutil import to_source
>>> def f(x, w):
...     y = np.tanh(x @ w).sum() * 2.0
...     return y
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x, w):
    _t1 = x @ w
    _t2 = np.tanh(_t1)
    _t3 = _t2.sum()
    y = _t3 * 2.0
    return y
"""
import builtins

import gast

from .. import astutil as A
from ..naming import Namer
from .resolve_calls import Callee, local_names, resolve_calls

_UNSUPPORTED_STMTS = {
    gast.Try: "try statements",
    gast.With: "with statements",
    gast.AsyncWith: "async with",
    gast.AsyncFor: "async for",
    gast.AsyncFunctionDef: "async functions",
    gast.ClassDef: "class definitions inside a differentiated function",
    gast.Global: "global statements",
    gast.Nonlocal: "nonlocal statements",
    gast.Delete: "del statements",
    gast.Import: "imports inside a differentiated function",
    gast.ImportFrom: "imports inside a differentiated function",
}
_UNSUPPORTED_EXPRS = {
    gast.Yield: "generators (yield)",
    gast.YieldFrom: "generators (yield from)",
    gast.Await: "await",
    gast.NamedExpr: "assignment expressions (:=)",
    gast.SetComp: "set comprehensions",
    gast.DictComp: "dict comprehensions",
}
_OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.MatMult: "@", gast.Pow: "**",
              gast.FloorDiv: "//", gast.Mod: "%", gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^",
              gast.LShift: "<<", gast.RShift: ">>"}


def normalize(node, source, namer=None):
    """Return the A-normal form of the function ``node`` (see the module docstring)."""
    namer = namer or Namer(A.all_names(node) | set(source.closure))
    norm = _Normalizer(source, namer)
    body = eliminate_jumps(node.body, namer, source, top_level=True)
    node.body = norm.block(body) or [gast.Pass()]
    A.set_anno(node, "namer", namer)
    return node


def _is_call_to(node, obj):
    callee = A.anno(node, "callee") if isinstance(node, gast.Call) else None
    return callee is not None and callee.kind == "object" and callee.obj is obj


class _Normalizer:
    def __init__(self, source, namer):
        self.source = source
        self.namer = namer
        self.local_functions = {}  # name -> FunctionDef of a helper defined in the function
        self.inlining = []

    def error(self, message, node):
        return self.source.syntax_error(message, node)

    # ---- statements -------------------------------------------------------------
    def block(self, stmts):
        out = []
        for stmt in stmts:
            self.stmt(stmt, out)
        return out

    def stmt(self, s, out):
        for kind, what in _UNSUPPORTED_STMTS.items():
            if isinstance(s, kind):
                raise self.error(f"srcad does not support {what}", s)
        start = len(out)
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise self.error(f"srcad does not support {type(s).__name__} statements", s)
        method(s, out)
        for new in out[start:]:
            if getattr(new, "lineno", None) is None:
                gast.copy_location(new, s)
            A.set_anno(new, "origin", A.anno(new, "origin") or s)

    def stmt_Pass(self, s, out):
        pass

    def stmt_Assert(self, s, out):
        out.append(s)  # runs in the primal only; its operands are never differentiated

    def stmt_Raise(self, s, out):
        out.append(s)

    def stmt_Expr(self, s, out):
        if isinstance(s.value, gast.Constant):
            return  # a docstring or a bare literal
        if isinstance(s.value, gast.Call):
            call = self.call(s.value, out)
            if call is not None:
                out.append(gast.Expr(value=call))
            return
        self.atom(s.value, out)

    def stmt_FunctionDef(self, s, out):
        self.local_functions[s.name] = s

    def stmt_AnnAssign(self, s, out):
        if s.value is not None:
            self.assign_to(s.target, s.value, out)

    def stmt_Assign(self, s, out):
        if isinstance(s.value, gast.Lambda) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            self.local_functions[s.targets[0].id] = _lambda_def(s.targets[0].id, s.value)
            return
        if len(s.targets) == 1:
            self.assign_to(s.targets[0], s.value, out)
            return
        value = self.atom(s.value, out)
        for target in s.targets:
            self.assign_to(target, value, out)

    def stmt_AugAssign(self, s, out):
        """``z += e`` becomes ``z = z + e``: right for numbers and tuples, which are rebound. On an
        array (or a list) it updates z's memory in place, so the statement computing ``z + e`` is
        annotated ``in_place`` = (z, exempt name, operator) for the aliasing check, which refuses
        when another name sharing z's memory is read afterwards."""
        target = s.target
        start = len(out)
        if isinstance(target, gast.Name):
            rhs = gast.BinOp(left=A.load(target.id), op=s.op, right=s.value)
            self.assign_to(A.store(target.id), gast.copy_location(rhs, s), out)
            updated, exempt = target.id, None
        elif isinstance(target, gast.Subscript):
            base = self.atom(target.value, out)
            index = self.index(target.slice, out)
            old = gast.Subscript(value=base, slice=index, ctx=gast.Load())
            updated = self.atom(old, out)  # S[i] += e updates the item S[i] in place, then stores it
            rhs = gast.BinOp(left=updated, op=s.op, right=s.value)
            new = self.atom(gast.copy_location(rhs, s), out)
            out.append(A.assign(gast.Subscript(value=base, slice=A.deepcopy(index), ctx=gast.Store()), new))
            updated, exempt = getattr(updated, "id", None), getattr(base, "id", None)
        else:
            raise self.error("srcad supports augmented assignment to names and subscripts only", s)
        for new in out[start:]:
            value = getattr(new, "value", None)
            if (isinstance(new, gast.Assign) and isinstance(value, gast.BinOp) and isinstance(value.left, gast.Name)
                    and value.left.id == updated and type(value.op) is type(s.op)):
                A.set_anno(new, "in_place", (updated, exempt, _OPERATORS.get(type(s.op), "op")))

    def assign_to(self, target, value, out):
        if isinstance(target, gast.Name):
            rhs = self.rhs(value, out)
            if isinstance(rhs, gast.Name) and rhs.id == target.id:
                return
            if not A.is_atom(rhs) and target.id in A.names_read(rhs):
                # x = f(x) becomes _t = f(x); x = _t, so the reverse pass can read the old x
                temp = self.namer.fresh("_t")
                out.append(gast.copy_location(A.assign(temp, rhs), value))
                rhs = A.load(temp)
            out.append(A.assign(target.id, rhs))
        elif isinstance(target, (gast.Tuple, gast.List)):
            stars = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            source = self.atom(value, out)
            after = len(target.elts) - (stars[0] + 1) if stars else 0
            for i, elt in enumerate(target.elts):
                if isinstance(elt, gast.Starred):  # first, *rest = seq: rest = list(seq[1:])
                    stop = A.const(-after) if after else None
                    part = gast.Subscript(value=A.deepcopy(source), slice=gast.Slice(A.const(i), stop, None),
                                          ctx=gast.Load())
                    as_list = gast.Call(func=A.load("list"), args=[part], keywords=[])
                    A.set_anno(as_list, "callee", Callee("object", obj=builtins.list, name="list"))
                    self.assign_to(elt.value, as_list, out)
                    continue
                index = i if not stars or i < stars[0] else i - len(target.elts)
                item = gast.Subscript(value=A.deepcopy(source), slice=A.const(index), ctx=gast.Load())
                self.assign_to(elt, item, out)
        elif isinstance(target, gast.Subscript):
            base = target.value
            if not isinstance(base, gast.Name):
                raise self.error(
                    "srcad supports element updates of a named array (S[i, j] = ...), "
                    "not of an expression; index with one subscript, S[i, j]",
                    target,
                )
            index = self.index(target.slice, out)
            new = self.atom(value, out)
            out.append(A.assign(gast.Subscript(value=A.load(base.id), slice=index, ctx=gast.Store()), new))
        else:
            raise self.error("srcad does not support assignment to attributes", target)

    def stmt_If(self, s, out):
        test = self.atom(s.test, out)
        body = self.block(s.body) or [gast.Pass()]
        orelse = self.block(s.orelse)
        out.append(gast.If(test=self.test_atom(test, out), body=body, orelse=orelse))

    def test_atom(self, test, out):
        if isinstance(test, gast.Constant):
            name = self.namer.fresh("_t")
            out.append(A.assign(name, test))
            return A.load(name)
        return test

    def stmt_While(self, s, out):
        if s.orelse:
            raise self.error("srcad does not support while ... else", s)
        cond = []
        test = self.atom(s.test, cond)
        out.extend(cond)
        body = self.block(s.body)
        body.extend(A.deepcopy(c) for c in cond)  # the test is recomputed after each pass
        out.append(gast.While(test=test, body=body or [gast.Pass()], orelse=[]))

    def stmt_For(self, s, out):
        if s.orelse:
            raise self.error("srcad does not support for ... else", s)
        it = s.iter
        body = []
        if _is_call_to(it, builtins.range):
            if not isinstance(s.target, gast.Name):
                raise self.error("a range loop needs a plain name as its variable", s.target)
            range_name = self.namer.fresh("_range")
            out.append(A.assign(range_name, self.rhs(it, out)))
            target = s.target.id
        elif _is_call_to(it, builtins.enumerate):
            if not (isinstance(s.target, gast.Tuple) and len(s.target.elts) == 2):
                raise self.error("unpack enumerate into two names: for i, x in enumerate(...)", s.target)
            seq = self.atom(it.args[0], out)
            range_name = self.range_over([seq], out)
            counter, item = s.target.elts
            target = self.namer.fresh("_k")
            if len(it.args) > 1 or it.keywords:
                start = it.args[1] if len(it.args) > 1 else it.keywords[0].value
                self.assign_to(counter, gast.BinOp(left=A.load(target), op=gast.Add(), right=start), body)
            else:
                self.assign_to(counter, A.load(target), body)
            self.assign_to(item, gast.Subscript(value=seq, slice=A.load(target), ctx=gast.Load()), body)
        elif _is_call_to(it, builtins.zip):
            if not (isinstance(s.target, gast.Tuple) and len(s.target.elts) == len(it.args)):
                raise self.error("unpack zip into one name per sequence", s.target)
            seqs = [self.atom(a, out) for a in it.args]
            range_name = self.range_over(seqs, out)
            target = self.namer.fresh("_k")
            for seq, elt in zip(seqs, s.target.elts):
                self.assign_to(elt, gast.Subscript(value=A.deepcopy(seq), slice=A.load(target), ctx=gast.Load()), body)
        else:
            if isinstance(it, gast.Call) and not _is_call_to(it, builtins.list):
                # iterators (reversed, dict views, generators) are materialized once
                lst = gast.Call(func=A.load("list"), args=[it], keywords=[])
                A.set_anno(lst, "callee", Callee("object", obj=builtins.list, name="list"))
                it = gast.copy_location(lst, it)
            seq = self.atom(it, out)
            if not isinstance(seq, gast.Name):
                raise self.error("srcad cannot loop over a literal", it)
            range_name = self.range_over([seq], out)
            target = self.namer.fresh("_k")
            self.assign_to(s.target, gast.Subscript(value=seq, slice=A.load(target), ctx=gast.Load()), body)
        body = self.block(body) + self.block(s.body)
        loop = gast.For(target=A.store(target), iter=A.load(range_name), body=body or [gast.Pass()],
                        orelse=[], type_comment=None)
        out.append(loop)

    def range_over(self, seqs, out):
        """``_rangeN = range(len(a))`` (or ``range(min(len(a), len(b)))``) for indexed loops."""
        lens = []
        for seq in seqs:
            call = gast.Call(func=A.load("len"), args=[A.deepcopy(seq)], keywords=[])
            A.set_anno(call, "callee", Callee("object", obj=builtins.len, name="len"))
            lens.append(self.atom(call, out))
        n = lens[0]
        if len(lens) > 1:
            call = gast.Call(func=A.load("min"), args=lens, keywords=[])
            A.set_anno(call, "callee", Callee("object", obj=builtins.min, name="min"))
            n = self.atom(call, out)
        rng = gast.Call(func=A.load("range"), args=[n], keywords=[])
        A.set_anno(rng, "callee", Callee("object", obj=builtins.range, name="range"))
        name = self.namer.fresh("_range")
        out.append(A.assign(name, rng))
        return name

    def stmt_Break(self, s, out):
        out.append(s)  # only `if _stopN: break` reaches here (see eliminate_jumps)

    def stmt_Return(self, s, out):
        value = A.const(None) if s.value is None else self.atom(s.value, out)
        out.append(gast.Return(value=value))

    # ---- expressions ------------------------------------------------------------
    def atom(self, e, out):
        """An atom holding the value of ``e``; emits the statements that compute it."""
        if A.is_atom(e):
            return e
        rhs = self.rhs(e, out)
        if A.is_atom(rhs):
            return rhs
        name = self.namer.fresh("_t")
        out.append(gast.copy_location(A.assign(name, rhs), e))
        return A.load(name)

    def atoms(self, exprs, out):
        return [self.atom(e, out) for e in exprs]

    def rhs(self, e, out):
        """An expression with atom operands equal to ``e``."""
        for kind, what in _UNSUPPORTED_EXPRS.items():
            if isinstance(e, kind):
                raise self.error(f"srcad does not support {what}", e)
        if A.is_atom(e):
            return e
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"srcad does not support {type(e).__name__} expressions", e)
        return method(e, out)

    def expr_BinOp(self, e, out):
        return gast.BinOp(left=self.atom(e.left, out), op=e.op, right=self.atom(e.right, out))

    def expr_UnaryOp(self, e, out):
        return gast.UnaryOp(op=e.op, operand=self.atom(e.operand, out))

    def expr_Compare(self, e, out):
        left = self.atom(e.left, out)
        if len(e.ops) == 1:
            return gast.Compare(left=left, ops=e.ops, comparators=[self.atom(e.comparators[0], out)])
        # a < b < c: evaluate b once, short-circuit like Python
        result = self.namer.fresh("_t")
        rest = e.comparators
        guard_out = out
        for i, op in enumerate(e.ops):
            right = self.atom(rest[i], guard_out)
            guard_out.append(A.assign(result, gast.Compare(left=left, ops=[op], comparators=[right])))
            if i + 1 < len(e.ops):
                inner = []
                guard_out.append(gast.If(test=A.load(result), body=inner, orelse=[]))
                guard_out = inner
            left = right
        return A.load(result)

    def expr_BoolOp(self, e, out):
        result = self.namer.fresh("_t")
        out.append(A.assign(result, self.rhs(e.values[0], out)))
        target = out
        for value in e.values[1:]:
            inner = []
            more = [A.assign(result, self.rhs(value, inner))]
            inner.extend(more)
            branch = gast.If(test=A.load(result), body=[gast.Pass()], orelse=inner)
            if isinstance(e.op, gast.And):
                branch.body, branch.orelse = inner, []
            target.append(branch)
            target = inner
        return A.load(result)

    def expr_IfExp(self, e, out):
        result = self.namer.fresh("_t")
        test = self.test_atom(self.atom(e.test, out), out)
        body, orelse = [], []
        body.append(A.assign(result, self.rhs(e.body, body)))
        orelse.append(A.assign(result, self.rhs(e.orelse, orelse)))
        out.append(gast.If(test=test, body=body, orelse=orelse))
        return A.load(result)

    def expr_Attribute(self, e, out):
        return gast.Attribute(value=self.atom(e.value, out), attr=e.attr, ctx=gast.Load())

    def expr_Subscript(self, e, out):
        return gast.Subscript(value=self.atom(e.value, out), slice=self.index(e.slice, out), ctx=gast.Load())

    def index(self, idx, out):
        if isinstance(idx, gast.Slice):
            parts = [None if p is None else self.atom(p, out) for p in (idx.lower, idx.upper, idx.step)]
            return gast.Slice(*parts)
        if isinstance(idx, gast.Tuple):
            return gast.Tuple(elts=[self.index(i, out) for i in idx.elts], ctx=gast.Load())
        return self.atom(idx, out)

    def expr_Tuple(self, e, out):
        self.no_starred(e.elts)
        return gast.Tuple(elts=self.atoms(e.elts, out), ctx=gast.Load())

    def expr_List(self, e, out):
        self.no_starred(e.elts)
        return gast.List(elts=self.atoms(e.elts, out), ctx=gast.Load())

    def expr_Dict(self, e, out):
        if any(k is None for k in e.keys):
            raise self.error("srcad does not support ** in dict displays", e)
        return gast.Dict(keys=self.atoms(e.keys, out), values=self.atoms(e.values, out))

    def expr_JoinedStr(self, e, out):
        return e  # text for printing: never differentiated

    def no_starred(self, elts):
        for elt in elts:
            if isinstance(elt, gast.Starred):
                raise self.error("srcad does not support * unpacking here", elt)

    def expr_Lambda(self, e, out):
        raise self.error("assign a lambda to a name before calling it (f = lambda x: ...)", e)

    def expr_ListComp(self, e, out):
        result = self.namer.fresh("_list")
        out.append(A.assign(result, gast.List(elts=[], ctx=gast.Load())))
        append = gast.Call(func=gast.Attribute(value=A.load(result), attr="append", ctx=gast.Load()),
                           args=[e.elt], keywords=[])
        A.set_anno(append, "callee", Callee("method", name="append"))
        inner = [gast.Expr(value=append)]
        for gen in reversed(e.generators):
            if gen.is_async:
                raise self.error("srcad does not support async comprehensions", e)
            for cond in reversed(gen.ifs):
                inner = [gast.If(test=cond, body=inner, orelse=[])]
            inner = [gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)]
        for stmt in inner:
            gast.copy_location(stmt, e)
            self.stmt(stmt, out)
        return A.load(result)

    def expr_GeneratorExp(self, e, out):
        return self.expr_ListComp(e, out)  # materialized: sum(f(x) for x in xs) == sum([...])

    def expr_Call(self, e, out):
        return self.call(e, out)

    def call(self, e, out):
        callee = A.anno(e, "callee")
        if callee is None:
            resolve_calls(e, self.source, self.local_functions)
            callee = A.anno(e, "callee")
        if callee.kind == "local":
            return self.inline(e, callee.name, out)
        if callee.kind == "method":
            func = gast.Attribute(value=self.atom(e.func.value, out), attr=e.func.attr, ctx=gast.Load())
        else:
            func = e.func
        args = []
        for a in e.args:
            if isinstance(a, gast.Starred):
                args.append(gast.Starred(value=self.atom(a.value, out), ctx=gast.Load()))
            else:
                args.append(self.atom(a, out))
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, out)) for k in e.keywords]
        new = gast.Call(func=func, args=args, keywords=keywords)
        A.set_anno(new, "callee", callee)
        return gast.copy_location(new, e)

    def inline(self, call, name, out):
        """Inline a helper defined inside the function: its locals get ``name_`` prefixes."""
        fdef = self.local_functions.get(name)
        if fdef is None:
            raise self.error(f"'{name}' is called before it is defined", call)
        if name in self.inlining:
            raise self.error(
                f"'{name}' calls itself; srcad does not differentiate recursion inside a function. "
                "Write it as a loop, or define it at module level with a custom_vjp", call)
        args = fdef.args
        if args.vararg or args.kwarg or args.posonlyargs:
            raise self.error(f"srcad cannot inline '{name}': it takes *args, **kwargs or positional-only parameters", call)
        params = [a.id for a in args.args] + [a.id for a in args.kwonlyargs]
        renames = {p: self.namer.unique(f"{name}_{p}") for p in sorted(local_names(fdef))}
        bound = {}
        for param, value in zip(params, call.args):
            if isinstance(value, gast.Starred):
                raise self.error("srcad cannot inline a call with * arguments", value)
            bound[param] = value
        for kw in call.keywords:
            if kw.arg is None or kw.arg not in params or kw.arg in bound:
                raise self.error(f"bad keyword argument for '{name}'", call)
            bound[kw.arg] = kw.value
        defaults = dict(zip([a.id for a in args.args][len(args.args) - len(args.defaults):], args.defaults))
        defaults.update({a.id: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        for param in params:
            if param not in bound:
                if param not in defaults:
                    raise self.error(f"missing argument '{param}' in call to '{name}'", call)
                bound[param] = A.deepcopy(defaults[param])
        for param in params:
            out.append(gast.copy_location(A.assign(renames[param], self.rhs(bound[param], out)), call))
        body = A.replace_names(A.deepcopy(gast.Module(body=fdef.body, type_ignores=[])), renames).body
        result = self.namer.fresh(f"{name}_result")
        body = eliminate_jumps(body, self.namer, self.source, top_level=False, result=result)
        self.inlining.append(name)
        saved_functions = dict(self.local_functions)
        try:
            for stmt in body:
                self.stmt(stmt, out)
        finally:
            self.inlining.pop()
            self.local_functions = saved_functions
        return A.load(result)


def _lambda_def(name, lam):
    ret = gast.copy_location(gast.Return(value=lam.body), lam.body)
    fdef = gast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
    return gast.copy_location(fdef, lam)


# ---- break, continue and return as flags ------------------------------------------


def is_break_guard(s):
    """``if _stopN: break``, the only ``break`` left after normalization."""
    return isinstance(s, gast.If) and len(s.body) == 1 and isinstance(s.body[0], gast.Break)



def _jumps(stmts, loop_level=True):
    """Which of break/continue/return can leave this block (not counting inner loops' own)."""
    found = set()
    for s in stmts:
        for node in _walk_stmts(s, loop_level):
            if isinstance(node, gast.Break):
                found.add("break")
            elif isinstance(node, gast.Continue):
                found.add("continue")
            elif isinstance(node, gast.Return):
                found.add("return")
    return found


def _walk_stmts(stmt, loop_level):
    """Statements inside ``stmt``; an inner loop contributes only its returns."""
    yield stmt
    if isinstance(stmt, gast.If):
        for s in stmt.body + stmt.orelse:
            yield from _walk_stmts(s, loop_level)
    elif isinstance(stmt, (gast.For, gast.While)):
        for s in stmt.body + stmt.orelse:
            for inner in _walk_stmts(s, False):
                if isinstance(inner, gast.Return) or not isinstance(inner, (gast.Break, gast.Continue)):
                    yield inner
    elif isinstance(stmt, gast.FunctionDef):
        return


class _Loop:
    def __init__(self, skip, stop):
        self.skip, self.stop = skip, stop


def eliminate_jumps(body, namer, source, top_level, result=None):
    """Rewrite ``break``/``continue``/``return`` into flag assignments and guarded blocks.

    At the top level the function keeps a single final ``return``; for an inlined helper
    every ``return e`` becomes ``result = e``.
    """
    returns = [n for s in body for n in _walk_stmts(s, True) if isinstance(n, gast.Return)]
    simple = len(returns) == 1 and body and body[-1] is returns[0]
    if top_level and (not returns or simple):
        state = None
    elif not top_level and simple:
        last = body[-1]
        value = last.value if last.value is not None else A.const(None)
        return body[:-1] + [gast.copy_location(A.assign(result, value), last)]
    else:
        state = {
            "flag": namer.fresh("_returned"),
            "value": result or namer.fresh("_retval"),
            "loops": [],
        }
    if state is None:
        new = _eliminate_block(body, None, namer)
        return new
    new = [A.assign(state["flag"], A.const(False)), A.assign(state["value"], A.const(None))]
    new += _eliminate_block(body, state, namer)
    if top_level:
        new.append(gast.Return(value=A.load(state["value"])))
    return new


def _guard(flag, stmts):
    test = gast.UnaryOp(op=gast.Not(), operand=A.load(flag))
    return gast.If(test=test, body=stmts, orelse=[])


def _eliminate_block(stmts, state, namer, loops=()):
    out = []
    for i, s in enumerate(stmts):
        rest = stmts[i + 1:]
        if isinstance(s, gast.Return):
            if state is None:  # the single final return
                out.append(s)
                return out
            if s.value is not None:
                out.append(gast.copy_location(A.assign(state["value"], s.value), s))
            out.append(gast.copy_location(A.assign(state["flag"], A.const(True)), s))
            for loop in loops:
                out.append(A.assign(loop.skip, A.const(True)))
                out.append(A.assign(loop.stop, A.const(True)))
            return out
        if isinstance(s, (gast.Break, gast.Continue)):
            loop = loops[-1]
            out.append(gast.copy_location(A.assign(loop.skip, A.const(True)), s))
            if isinstance(s, gast.Break):
                out.append(gast.copy_location(A.assign(loop.stop, A.const(True)), s))
            return out
        if isinstance(s, gast.If):
            jumps = _jumps([s])
            s.body = _eliminate_block(s.body, state, namer, loops) or [gast.Pass()]
            s.orelse = _eliminate_block(s.orelse, state, namer, loops)
            out.append(s)
            if jumps and rest:
                flag = loops[-1].skip if loops else state["flag"]
                out.append(_guard(flag, _eliminate_block(rest, state, namer, loops)))
                return out
            continue
        if isinstance(s, (gast.For, gast.While)):
            inner = _jumps(s.body)
            if inner:
                loop = _Loop(namer.fresh("_skip"), namer.fresh("_stop"))
                body = [A.assign(loop.skip, A.const(False))]
                body += _eliminate_block(s.body, state, namer, loops + (loop,))
                if inner & {"break", "return"}:
                    body.append(gast.If(test=A.load(loop.stop), body=[gast.Break()], orelse=[]))
                    out.append(A.assign(loop.stop, A.const(False)))
                s.body = body
            out.append(s)
            if "return" in inner and rest:
                flag = loops[-1].skip if loops else state["flag"]
                out.append(_guard(flag, _eliminate_block(rest, state, namer, loops)))
                return out
            continue
        out.append(s)
    return out
