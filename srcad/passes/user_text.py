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
import linecache
import re

import gast

from .. import astutil as A
from ..code_reading import nested_code
from .callees import parameter_names


class UserText:
    """A name as the user wrote it: a temporary of A-normal form (``_t2 = P[1]``) reads as
    the expression it holds (``P[1]``); the sequence a for loop iterates is marked as such."""

    def __init__(self, node, source):
        self.user = user_names(source.fn.__code__)
        self.renamed_from = A.anno(source.node, "renamed_from") or {}  # srcad's renaming -> the user's name
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
        return self.renamed_from.get(name)

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


def user_names(code):
    """Every name the user's compiled code (and the code nested in it) uses: srcad's tree
    may already hold its own temporaries."""
    return {n for c in nested_code(code) for n in c.co_varnames + c.co_names + c.co_cellvars + c.co_freevars}


# ---- every refusal speaks of the user's code

GENERATED_NOTE = "\n(while differentiating srcad's derivative of"  # where a message quotes generated code on purpose
_WORD = re.compile(r"(['`]?)\b([A-Za-z_]\w*)\b(\1)")
_QUOTED = re.compile(r"(?<!\w)'[^'\n]*'(?!\w)|`[^`\n]*`")  # (not the apostrophe of "srcad's")


def speaking_of_user_code(error, node, source):
    """``error`` (a ``SrcadError`` raised while transforming ``node``, the tree of ``source``)
    with every name srcad made in its message put in the user's words: a temporary as the
    expression it holds, an adjoint ``dx`` as "the derivative of x", anything else as a value
    srcad computes. srcad's names are those of the transformed code that the user's code does
    not have, and any that srcad's naming scheme makes (``naming``): the user never wrote them."""
    message = error.args[0] if error.args and isinstance(error.args[0], str) else None
    if message is None:
        return
    own, note = (message.split(GENERATED_NOTE, 1) + [None])[:2]
    user = _user_words(source)
    # (names it binds: a builtin or helper it reads, ``list``, is a word a message may use)
    made = {n for n in A.names_stored(node) | set(parameter_names(node)) if n not in user} if node is not None else set()
    reworded = in_user_terms(own, lambda name: name in made or srcad_made(name, user), user,
                             UserText(node, source) if node is not None else None)
    if source.is_generated() and reworded != own and not reworded.startswith(OWN_LIMIT):
        # srcad's derivative differentiated again, refused over srcad's own names: advice would be about its code
        reworded = OWN_LIMIT + reworded.split("; ")[0].replace("the argument the values", "the values")
    if reworded == own:
        return
    message = reworded if note is None else reworded + GENERATED_NOTE + note
    error.args = (message,) + error.args[1:]
    if hasattr(error, "message"):
        error.message = message
    if isinstance(error, SyntaxError):
        error.msg = message


OWN_LIMIT = ("srcad cannot differentiate its own derivative of this line again, a limit of srcad at this order "
              "(docs/limitations.md) rather than an error in your code: ")
_SAVED = re.compile(r"_\w*saved\d*_*")
_FRESH = re.compile(r"_\w*?(\d+|_stack|_saved)_*")  # ``naming.Namer``'s fresh names: a base, a number, a stack


def srcad_made(name, user):
    """Is ``name`` one srcad's naming scheme makes (``naming``: ``_t3``, ``_x_stack``) and the
    user's code does not have?"""
    return name not in user and _FRESH.fullmatch(name) is not None


def _grown_from(name, user):
    """``(how, base)`` for a name made from the user's ``base``: its adjoint ``dbase`` (``dbase_``),
    its tangent ``base_dot``, its saved values ``_base_stack``; None otherwise."""
    plain = name.rstrip("_")
    for how, prefix, suffix in (("derivative", "d", ""), ("tangent", "", "_dot"), ("saved values", "_", "_stack")):
        if plain.startswith(prefix) and plain.endswith(suffix) and len(plain) > len(prefix) + len(suffix):
            base = plain[len(prefix):len(plain) - len(suffix)]
            if base in user or base.startswith("_") and len(base) > 1:
                return how, base
    return None


def in_user_terms(message, is_srcads, user, text=None):
    """``message`` with each name ``is_srcads`` says srcad made replaced: by the user's expression
    it holds (``text``, a ``UserText``), else by what it is; inside a quoted piece of code, one
    that holds no expression of the user's is left out as "…"."""
    def expression(name):
        if text is None or name not in text.single:
            return None
        written = _unwrapped(text(name))
        return None if any(is_srcads(w) for w in re.findall(r"\b[A-Za-z_]\w*\b", written)) else written

    def described(name):
        if _SAVED.fullmatch(name):  # a backward sweep's parameter
            return "the values srcad saved for this derivative"
        grown = _grown_from(name, user)
        if grown is None:
            return "a value srcad computes on this line"
        how, base = grown
        return f"the {how} of {expression(base) or (base if base in user else 'a value srcad computes')}"

    def word(match):
        quote, name = match.group(1), match.group(2)
        if not is_srcads(name):
            return match.group()
        written = expression(name)
        return f"{quote}{written}{quote}" if written is not None else described(name)

    def quoted(match):
        piece = match.group()
        if _WORD.fullmatch(piece[1:-1]) and is_srcads(piece[1:-1]) and expression(piece[1:-1]) is None:
            return described(piece[1:-1])
        # a name of srcad's the user's words cannot say inside a piece of code: left out, as "…"
        inner = _WORD.sub(lambda m: m.group() if not is_srcads(m.group(2)) else expression(m.group(2)) or "…",
                          piece[1:-1])
        return piece[0] + inner + piece[-1]

    return _WORD.sub(word, _QUOTED.sub(quoted, message))


def _user_words(source):
    """The names of the user's code: the function's own, or for code srcad generated (a derivative
    differentiated again) the words of the user's lines it comes from."""
    if not source.is_generated():  # (the globals of its module are the user's names too)
        return user_names(source.fn.__code__) | {source.fn.__name__} | set(source.fn.__globals__)
    from .. import sourcemap

    return {w for filename, line in sourcemap.user_lines(source.filename)
            for w in re.findall(r"\b[A-Za-z_]\w*\b", linecache.getline(filename, line))}


def _unwrapped(expression):
    """``expression`` without the parentheses around all of it that the code writer adds."""
    inner = expression[1:-1]
    if expression[:1] == "(" and expression[-1:] == ")" and _balanced(inner):
        return inner
    return expression


def _balanced(text):
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0
