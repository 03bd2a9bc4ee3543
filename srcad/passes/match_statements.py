"""``match`` statements (Python 3.10+) as ``if``/``else`` chains, before anything else of
normal form reads the function.

Guarantee: afterwards no ``Match`` is left. The subject is evaluated once, into ``_matchN``;
each case becomes a test of the pattern on it, the names the pattern captures bound only when
the whole pattern matched, then its guard (with those names bound, as in Python), then the
case's body; the next case runs in the ``else`` branch. Lowered patterns, with Python's
semantics:

- a literal (``1``, ``"relu"``, ``-2.5``) or a dotted value (``Kind.RELU``): ``==``;
  ``None``, ``True``, ``False``: ``is``;
- a capture (``case x``), the wildcard ``_`` and ``P as x``;
- ``P1 | P2``, alternatives that capture no name;
- a sequence of fixed length, ``(a, b)`` or ``[a, b]``: the subject is a
  ``collections.abc.Sequence`` but no ``str``, ``bytes`` or ``bytearray``, of that length,
  and its items match the items' patterns (an array is no such sequence, as in Python);
- a record class (a dataclass or named tuple, ``passes.records``), ``State(x, v=w)``: the
  subject is an instance and its attributes (positional ones by ``__match_args__``) match.

Refused at the user's line, naming the pattern's kind: mapping patterns, star patterns,
alternatives that capture names, and class patterns of any other class.

>>> import gast
>>> from srcad.astutil import to_source
>>> from srcad.naming import Namer
>>> fn = gast.parse('''
... def f(x, kind):
...     match kind:
...         case "relu" | "gelu":
...             y = act(x)
...         case (s,) if s > 0:
...             y = s * x
...         case _:
...             y = x
...     return y''').body[0]
>>> print(to_source(lower_matches(fn, Namer(), None)).strip())
def f(x, kind):
    _match1 = kind
    _case1 = _match1 == 'relu' or _match1 == 'gelu'
    if _case1:
        y = act(x)
    else:
        _case2 = isinstance(_match1, Sequence) and not isinstance(_match1,
            (str, bytes, bytearray)) and len(_match1) == 1
        if _case2:
            s = _match1[0]
            _guard1 = s > 0
        else:
            _guard1 = False
        if _guard1:
            y = s * x
        else:
            y = x
    return y
"""
import collections.abc

import gast

from .. import astutil as A
from ..naming import BUILTIN, builtin
from .binding import builtin_call
from .callees import dotted, lookup_path
from .records import record_fields


def lower_matches(node, namer, source):
    """``node`` (a function, the functions defined in it included) with every ``match``
    statement lowered (module doc), in place; ``source`` names the user's lines in refusals."""
    if not any(isinstance(s, gast.Match) for s in A.every_statement(node.body)):
        return node  # (most functions: no walk of their expressions)
    return _Matches(namer, source).visit(node)


class _Matches(A.Transformer):
    def __init__(self, namer, source):
        self.namer, self.source = namer, source

    def visit_Match(self, s):
        self.generic_visit(s)  # matches inside its cases first
        subject = self.namer.fresh("_match")
        return [self.located(A.assign(subject, s.subject), s)] + self.cases(s.cases, subject, s)

    def cases(self, cases, subject, s):
        """The statements running the first of ``cases`` that matches ``subject``."""
        if not cases:
            return []
        case = cases[0]
        tests, captures = self.pattern(case.pattern, A.load(subject))
        bind = [self.located(A.assign(name, value), case.pattern) for name, value in captures]
        if not tests and case.guard is None:
            return bind + case.body  # irrefutable: Python allows it only as the last case
        out = []
        if tests:
            matched = self.namer.fresh("_case")
            test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
            out.append(self.located(A.assign(matched, test), case.pattern))
        if case.guard is not None:  # (a name of its own: the reverse sweep tests the pattern's flag again)
            guarded = self.namer.fresh("_guard")
            bind.append(self.located(A.assign(guarded, case.guard), case.guard))
            if tests:
                no = self.located(A.assign(guarded, A.const(False)), case.guard)
                out.append(self.located(gast.If(test=A.load(matched), body=bind, orelse=[no]), case.pattern))
            else:
                out.extend(bind)
            matched = guarded
        elif bind:
            case.body = bind + case.body
        rest = self.cases(cases[1:], subject, s)
        return out + [self.located(gast.If(test=A.load(matched), body=case.body, orelse=rest), case.pattern)]

    def pattern(self, p, value):
        """``(tests, captures)``: the tests, in order, that ``value`` matches ``p`` (each
        evaluated only when those before it held) and the ``(name, value)`` pairs it binds."""
        if isinstance(p, gast.MatchValue):
            return [_compare(value, gast.Eq(), p.value)], []
        if isinstance(p, gast.MatchSingleton):
            return [_compare(value, gast.Is(), A.const(p.value))], []
        if isinstance(p, gast.MatchAs):
            tests, captures = self.pattern(p.pattern, value) if p.pattern is not None else ([], [])
            return tests, captures + ([(p.name, A.deepcopy(value))] if p.name is not None else [])
        if isinstance(p, gast.MatchOr):
            return self.alternatives(p, value)
        if isinstance(p, gast.MatchSequence):
            return self.sequence(p, value)
        if isinstance(p, gast.MatchClass):
            return self.record(p, value)
        if isinstance(p, gast.MatchMapping):
            raise self.refused("mapping patterns (case {...})", "test the keys with if/elif", p)
        raise self.refused(f"{type(p).__name__} patterns", "test the value with if/elif", p)

    def alternatives(self, p, value):
        either = []
        for alternative in p.patterns:
            tests, captures = self.pattern(alternative, value)
            if captures:
                raise self.refused("alternatives that capture names (case (x, 0) | (0, x))",
                                   "write each alternative as a case of its own", alternative)
            if not tests:
                return [], []  # this one always matches
            either.append(tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests))
        return [gast.BoolOp(op=gast.Or(), values=either)], []

    def sequence(self, p, value):
        star = next((q for q in p.patterns if isinstance(q, gast.MatchStar)), None)
        if star is not None:
            raise self.refused("star patterns (case [first, *rest])",
                               "match a sequence of fixed length, or test len() and index it with if/elif", star)
        strings = gast.Tuple(elts=[builtin(t) for t in ("str", "bytes", "bytearray")], ctx=gast.Load())
        tests = [builtin_call("isinstance", A.deepcopy(value), _object("Sequence", collections.abc.Sequence)),
                 gast.UnaryOp(op=gast.Not(), operand=builtin_call("isinstance", A.deepcopy(value), strings)),
                 _compare(builtin_call("len", A.deepcopy(value)), gast.Eq(), A.const(len(p.patterns)))]
        captures = []
        for i, item in enumerate(p.patterns):
            more, bound = self.pattern(item, gast.Subscript(value=A.deepcopy(value), slice=A.const(i), ctx=gast.Load()))
            tests += more
            captures += bound
        return tests, captures

    def record(self, p, value):
        """``State(x, v=w)`` of a record class: an instance whose attributes match."""
        parts = dotted(p.cls)
        cls = lookup_path(parts, self.source) if parts is not None and self.source is not None else None
        if record_fields(cls) is None:
            raise self.refused("class patterns but of dataclasses and named tuples (records)",
                               "test the value with isinstance and if/elif", p)
        positional = getattr(cls, "__match_args__", ())
        if len(p.patterns) > len(positional):
            raise self.source.syntax_error(
                f"{cls.__name__}() accepts {len(positional)} positional sub-patterns ({len(p.patterns)} given)", p)
        tests = [builtin_call("isinstance", A.deepcopy(value), A.deepcopy(p.cls))]
        captures = []
        for attr, item in list(zip(positional, p.patterns)) + list(zip(p.kwd_attrs, p.kwd_patterns)):
            more, bound = self.pattern(item, gast.Attribute(value=A.deepcopy(value), attr=attr, ctx=gast.Load()))
            tests += more
            captures += bound
        return tests, captures

    def refused(self, what, advice, node):
        return self.source.syntax_error(f"srcad does not support {what} in match statements; {advice}", node)

    @staticmethod
    def located(new, old):
        return gast.copy_location(new, old)


def _compare(left, op, right):
    return gast.Compare(left=A.deepcopy(left), ops=[op], comparators=[A.deepcopy(right)])


def _object(name, obj):
    """A read of ``obj`` under ``name``, bound to it whatever the user's scope says (as ``naming.builtin``)."""
    return A.set_anno(A.load(name), BUILTIN, (name, obj))
