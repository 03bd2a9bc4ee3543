"""Zero derivatives inside one statement of a rule template.

Instantiating a statement replaces a ``d[x]`` (``t[x]``), or a temporary computed from such
reads, that is zero at this call site by a *zero* node, then simplifies it where that is exact:
a zero term of a sum drops out (``a - 0`` is ``a``, ``0 - a`` is ``-a``), a product, a matrix
product or a quotient with a zero factor or numerator is zero, and so is ``-0``. What is left:

- the statement's value is zero, or it reads no derivative that is not zero (the documented
  rule: a statement reading only zero derivatives disappears, so ``d[x] += f(d[y])`` with a
  zero ``d[y]`` is dropped, ``f`` being linear in it as rule helpers are): ``Zero``;
- no zero node: the statement is emitted, unless it holds a ``no_derivative(...)`` whose term
  is not zero (then the call is refused);
- a zero node somewhere else (a call's argument, a denominator, a condition) next to a
  derivative that is not zero: srcad cannot tell what the zero term contributes, and dropping
  the whole statement would lose the other terms, so the call is refused: one term per
  statement (``t[y] += t[x] * c`` and ``t[y] += x * t[c]``) says what to drop.
"""
import gast

from . import astutil as A
from .rule_stores import rule_line

_ZERO = "zero_derivative"
_REFUSED = "refused_derivative"


class Zero(Exception):
    """Raised inside instantiation when a statement's value is a zero derivative."""


class Refused(Exception):
    """Raised inside instantiation to refuse the call site, with a message naming the rule."""


def zero():
    return A.set_anno(gast.Constant(value=0, kind=None), _ZERO, True)


def is_zero(node):
    return A.anno(node, _ZERO, False)


def refused(node):
    """``node``, a ``no_derivative(...)`` read: the call is refused unless its term is zero."""
    return A.set_anno(node, _REFUSED, True)


def fold(node):
    """``node`` (a ``BinOp`` or ``UnaryOp`` whose operands are substituted) simplified where an
    operand is zero and the result is exact; ``node`` itself where it is not."""
    if isinstance(node, gast.UnaryOp):
        return zero() if is_zero(node.operand) and isinstance(node.op, (gast.USub, gast.UAdd)) else node
    left, right = is_zero(node.left), is_zero(node.right)
    if not (left or right):
        return node
    if isinstance(node.op, (gast.Mult, gast.MatMult)) or left and right and isinstance(node.op, (gast.Add, gast.Sub)):
        return zero()
    if isinstance(node.op, gast.Div) and left and not right:
        return zero()
    if isinstance(node.op, gast.Add):
        return node.left if right else node.right
    if isinstance(node.op, gast.Sub):
        return node.left if right else gast.UnaryOp(op=gast.USub(), operand=node.right)
    return node


def settle(new, substitution, rule):
    """Raise ``Zero`` or ``Refused`` for ``new``, the result of ``substitution`` (a
    ``template._Substitution``) that read a zero derivative (its first, a template node:
    ``zero_read``; how many others: ``live_reads``) or a ``no_derivative(...)`` (``refusal``)."""
    if substitution.zero_read is not None:
        value = new.value if isinstance(new, (gast.Assign, gast.AugAssign, gast.Expr)) else new
        if is_zero(value) or not substitution.live_reads:
            raise Zero()
        if any(is_zero(n) for n in A.walk(new)):
            read = substitution.zero_read
            raise Refused(_message(rule, read, A.to_source(read).strip()))
    if substitution.refusal is not None and any(A.anno(n, _REFUSED, False) for n in A.walk(new)):
        raise Refused(substitution.refusal)


def local_update(op, zero_target, zero_value):
    """How ``g op= e`` on a template temporary comes out where ``g`` or ``e`` is a zero
    derivative: "keep" (``g`` unchanged), "zero" (``g`` becomes zero), "assign" (``g = e``),
    "negate" (``g = -e``) or None (not exact: refuse)."""
    if zero_target and zero_value or isinstance(op, (gast.Mult, gast.MatMult)):
        return "zero"
    if isinstance(op, gast.Div):
        return "zero" if zero_target else None
    if isinstance(op, (gast.Add, gast.Sub)):
        return "keep" if zero_value else "assign" if isinstance(op, gast.Add) else "negate"
    return None


def refuse_update(rule, stmt):
    raise Refused(_message(rule, stmt, f"'{stmt.target.id}' or the value added to it"))


def _message(rule, node, read):
    from .rule_templates import describe

    place, code = rule_line(rule, node)
    return (f"{place}: `{code}` in the rule for {describe(rule.key)} reads {read}, a derivative that is zero "
            f"here, where srcad cannot drop its term exactly (inside a call, a denominator or a condition), next "
            f"to derivatives that are not zero; write each term as a statement of its own "
            f"({rule.marker}[...] += <term>): a statement that reads only zero derivatives is dropped")
