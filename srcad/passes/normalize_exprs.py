"""The expressions half of normalisation (``passes.normalize``): each expression lowered to
one operator or call on atoms, its operands computed first into fresh temporaries, in
Python's order of evaluation; ``and``/``or``, conditional expressions and chained comparisons
become ``if`` statements (short-circuiting as Python does), comprehensions are inlined
(``inline``) and calls are lowered by ``normalize_calls``. ``ExpressionLowering`` is mixed
into the normalizer, whose statements call ``atom`` and ``rhs``; it has no entry point of its own.
"""
import gast

from .. import astutil as A
from .binding import builtin_call
from .inline import inline_comprehension
from .normalize_calls import normalize_call

SYNCHRONOUS = "differentiate a plain (synchronous) function that computes the value"
# what srcad does not differentiate, and what to write instead
_UNSUPPORTED_EXPRS = {
    gast.Yield: ("generators (yield)", "collect the values in a list and return it"),
    gast.YieldFrom: ("generators (yield from)", "collect the values in a list and return it"),
    gast.Await: ("await", SYNCHRONOUS),
}


class ExpressionLowering:
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
        for kind, (what, instead) in _UNSUPPORTED_EXPRS.items():
            if isinstance(e, kind):
                raise self.error(f"srcad does not support {what}: {instead}", e)
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
        e.comparators = [_as_tuple_if_literal_set(op, c) for op, c in zip(e.ops, e.comparators)]
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
                guard_out.append(gast.If(test=self.branch_flag(result, guard_out), body=inner, orelse=[]))
                guard_out = inner
            left = right
        return A.load(result)

    def branch_flag(self, result, out):
        """A name of its own for the test of a branch that assigns ``result``: the reverse
        sweep takes the same branch by testing it again, after ``result`` has changed."""
        flag = self.namer.fresh("_t")
        out.append(A.assign(flag, A.load(result)))
        return A.load(flag)

    def expr_BoolOp(self, e, out):
        result = self.namer.fresh("_t")
        out.append(A.assign(result, self.rhs(e.values[0], out)))
        target = out
        for value in e.values[1:]:
            inner = []
            more = [A.assign(result, self.rhs(value, inner))]
            inner.extend(more)
            branch = gast.If(test=self.branch_flag(result, target), body=[gast.Pass()], orelse=inner)
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
        for s in body + orelse:  # the branches' statements are the user's line (its messages name it)
            if getattr(s, "lineno", None) is None:
                gast.copy_location(s, e)
        out.append(gast.If(test=test, body=body, orelse=orelse))
        return A.load(result)

    def expr_NamedExpr(self, e, out):
        """``(t := e)``: bind ``t`` where the expression is evaluated, as ``t = e`` would (``e``
        reading ``t`` goes through a temporary); its value is ``t``."""
        self.assign_to(A.store(e.target.id), e.value, out)
        return A.load(e.target.id)

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
        if e.keys and e.keys[0] is None and all(isinstance(k, gast.Constant) for k in e.keys[1:]):
            return self.updated_copy(e, out)
        if any(k is None for k in e.keys):
            raise self.error("srcad does not support ** in dict displays but a first one (a copy updated: "
                             "{**params, \"w\": w}) with literal keys after it", e)
        pairs = [(self.atom(k, out), self.atom(v, out)) for k, v in zip(e.keys, e.values)]  # Python's order
        return gast.Dict(keys=[k for k, _ in pairs], values=[v for _, v in pairs])

    def updated_copy(self, e, out):
        """``{**params, "w": w}`` is ``_t = dict(params)`` then ``_t["w"] = w``, in Python's order
        (the mapping first; a literal key's place among the values does not matter)."""
        copy = self.namer.fresh("_t")
        self.stmt(gast.copy_location(A.assign(copy, builtin_call("dict", e.values[0])), e), out)
        for key, value in zip(e.keys[1:], e.values[1:]):
            target = gast.Subscript(value=A.load(copy), slice=key, ctx=gast.Store())
            self.stmt(gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None), e), out)
        return A.load(copy)

    def expr_JoinedStr(self, e, out):
        return e  # text for printing: never differentiated

    def no_starred(self, elts):
        for elt in elts:
            if isinstance(elt, gast.Starred):
                raise self.error("srcad does not support * unpacking here", elt)

    def expr_Lambda(self, e, out):
        raise self.error("assign a lambda to a name before calling it (f = lambda x: ...)", e)

    def expr_ListComp(self, e, out):
        return inline_comprehension(self, e, out)

    def expr_DictComp(self, e, out):
        return inline_comprehension(self, e, out)

    def expr_SetComp(self, e, out):
        """``{v for ...}`` is ``set(v for ...)``: its items computed where it is written, as Python does."""
        items = gast.copy_location(gast.GeneratorExp(elt=e.elt, generators=e.generators), e)
        return self.rhs(gast.copy_location(builtin_call("set", items), e), out)

    def expr_GeneratorExp(self, e, out):
        if not A.anno(e, "read_through"):  # (a loop's header: ``loops``)
            raise self.error(
                "srcad computes a generator expression's items where it is written, Python when they are read, "
                "after what runs in between may have changed them: write a list comprehension [...] instead, "
                "or pass it straight to sum, list, tuple, min, max, sorted, any or all", e)
        return self.expr_ListComp(e, out)  # materialized: sum(f(x) for x in xs) == sum([...])

    def expr_Call(self, e, out):
        return normalize_call(self, e, out)


def _as_tuple_if_literal_set(op, comparator):
    """``x in {"l1", "l2"}``: a membership test in a set of literals is one in a tuple of them
    (for literals, equal hashes and ``==`` agree); any other set display is not supported."""
    if (isinstance(op, (gast.In, gast.NotIn)) and isinstance(comparator, gast.Set)
            and all(isinstance(e, gast.Constant) for e in comparator.elts)):
        return gast.copy_location(gast.Tuple(elts=comparator.elts, ctx=gast.Load()), comparator)
    return comparator
