"""The user's spelling of the transformed code, for messages: srcad's temporaries of A-normal
form (``_t2 = P[1]``) read as the expressions they hold.

>>> import gast
>>> from types import SimpleNamespace
>>> def f(P):
...     return P[1]
>>> node = gast.parse("def f(P): _t2 = P[1]; y = _t2 * 2.0; return y").body[0]
>>> text = UserText(node, SimpleNamespace(fn=f, node=node))
>>> text.value(node.body[1].value)
'(P[1] * 2.0)'
"""
import re

import gast

from .. import astutil as A
from ..code_reading import nested_code


class UserText:
    """A name as the user wrote it: a temporary of A-normal form (``_t2 = P[1]``) reads as
    the expression it holds (``P[1]``); the sequence a for loop iterates is marked as such."""

    def __init__(self, node, source):
        self.user = _user_names(source.fn.__code__)
        self.comprehension_names = A.anno(source.node, "comprehension_names") or {}
        bound = {}
        for s in A.walk_statements(node.body):
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                bound.setdefault(s.targets[0].id, []).append(s)
        self.single = {n: stmts[0] for n, stmts in bound.items() if len(stmts) == 1 and n not in self.user}
        # the result variable that lowering ``return e`` inside branches or loops introduces
        last = node.body[-1] if node.body else None
        result = last.value.id if isinstance(last, gast.Return) and isinstance(last.value, gast.Name) else None
        self.returned = {}
        if result in bound and result not in self.user and result not in self.single:
            self.returned[result] = sorted({A.anno(s, "origin").lineno for s in bound[result]
                                            if getattr(A.anno(s, "origin"), "lineno", None)})

    def __call__(self, name):
        if self.returned.get(name):
            return f"the value returned (line {', '.join(map(str, self.returned[name]))})"
        return A.to_source(self.expr(name, 0)).strip()

    def renamed(self, name):
        """The user's name behind a renamed comprehension variable (``_e1`` for ``e``) or an
        inlined helper's local (``reps_u`` for ``u``), or None."""
        if name in self.comprehension_names:
            return self.comprehension_names[name]
        helper = [name[len(h) + 1:] for h in self.user if name.startswith(h + "_") and name[len(h) + 1:] in self.user]
        return max(helper, key=len) if helper else None

    def names_in(self, words):
        """``words`` with each temporary (a name with ``_``, never an English word) replaced by
        the expression it holds."""
        return re.sub(r"\b\w*_\w*\b", lambda word: self(word.group()) if word.group() in self.single else word.group(),
                      words)

    def value(self, expr):
        """``expr`` (an expression of the transformed code) with temporaries expanded."""
        return A.to_source(self.expand(A.deepcopy(expr), 0)).strip()

    def expr(self, name, depth):
        made = self.single.get(name)
        if made is None or depth > 8 or self.renamed(name):
            return A.load(self.renamed(name) or name)
        return self.expand(self.loop_sequence(name) or A.deepcopy(made.value), depth + 1)

    def expand(self, value, depth):
        if isinstance(value, gast.Name):
            return self.expr(value.id, depth)
        for n in list(gast.walk(value)):
            for field, child in gast.iter_fields(n):
                if isinstance(child, gast.Name) and child.id in self.single:
                    setattr(n, field, self.expr(child.id, depth))
                elif isinstance(child, list):
                    child[:] = [self.expr(c.id, depth) if isinstance(c, gast.Name) and c.id in self.single
                                else c for c in child]
        return value

    def loop_sequence(self, name):
        """``_seq1 = list(r)`` made for ``for o in r``: the loop's own iterable, ``r``."""
        made = self.single.get(name)
        loop = A.anno(made, "origin") if made is not None else None
        callee = A.anno(made.value, "callee") if made is not None and isinstance(made.value, gast.Call) else None
        if (isinstance(loop, gast.For) and callee is not None and callee.kind == "object" and callee.obj is list
                and len(made.value.args) == 1):
            return A.deepcopy(made.value.args[0])
        return None

    def loop_line(self, name):
        return A.anno(self.single[name], "origin").lineno if self.loop_sequence(name) is not None else None


def _user_names(code):
    """Every name the user's compiled code (and the code nested in it) uses: srcad's tree
    may already hold its own temporaries."""
    return {n for c in nested_code(code) for n in c.co_varnames + c.co_names + c.co_cellvars + c.co_freevars}
