"""Operators on objects of yours: refuse an operator whose derivative srcad would take as the
number's or the array's where an operand's class defines that operator itself.

srcad's rules for ``*``, ``+``, ``@``, ``-x``... are the derivatives of arithmetic on numbers
and arrays. An object of a class of yours with its own ``__mul__`` (a schedule, a linear
operator) makes ``S * x`` something else, and the rule's ``d[x] += d[y] * S`` calls that
method again on the cotangent: a plausible wrong gradient. Guarantee: afterwards, every
operator statement that carries a derivative and reads a global or closure value whose class
(not a library's) defines the operator, or its reflected or in-place form, has raised
``SrcadSyntaxError`` at the user's line; one that reads a parameter given something other
than a number or an array is preceded by ``runtime.plain_operand``, which raises when the
function runs if that value's class is such a class (in reverse mode, whose code is made for
the kinds of its arguments; forward mode's is not, and does not check parameters).

>>> import gast
>>> [_operator(gast.parse(text).body[0]) for text in ("y = S * x", "y = -x", "y = f(x)")]
['mul', 'neg', None]
"""
import gast

from .. import astutil as A
from .. import runtime
from ..code_reading import defines_operator, installed_class
from .binding import helper_call

_METHODS = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv", gast.FloorDiv: "floordiv",
            gast.Mod: "mod", gast.Pow: "pow", gast.MatMult: "matmul", gast.USub: "neg", gast.UAdd: "pos"}


def check_operators(node, source, plain=None):
    """Refuse or check operator statements on objects of yours (see the module doc); ``plain``:
    the parameters the code is only ever given numbers or arrays (its cache key says so), or
    None where that is not known (forward mode: parameters are not checked)."""
    active = A.anno(node, "active") or set()
    params = {a.id for a in node.args.args}
    local = A.names_stored(node) | params

    def visit(block):
        out = []
        for s in block:
            for inner in (getattr(s, "body", None), getattr(s, "orelse", None)):
                if isinstance(inner, list):
                    visit(inner)
            method = _operator(s)
            if method is not None and A.names_stored(s.targets[0] if isinstance(s, gast.Assign) else s) & active:
                for name in sorted(_operands(s)):
                    if name not in local:
                        _refuse_defined(source, name, method, s)
                    elif plain is not None and name in params and name not in plain:
                        out.append(gast.copy_location(gast.Expr(value=helper_call(
                            "plain_operand", runtime.plain_operand, A.load(name), A.const(method),
                            A.const(f"{source.filename}:{getattr(A.anno(s, 'origin') or s, 'lineno', '?')}"))), s))
            out.append(s)
        block[:] = out

    visit(node.body)
    return node


def _operator(s):
    """The special method's name (``"mul"``) of the operator statement ``s``, else None."""
    rhs = s.value if isinstance(s, gast.Assign) else None
    if isinstance(rhs, gast.BinOp):
        return _METHODS.get(type(rhs.op))
    if isinstance(rhs, gast.UnaryOp):
        return _METHODS.get(type(rhs.op))
    return None


def _operands(s):
    rhs = s.value
    atoms = [rhs.left, rhs.right] if isinstance(rhs, gast.BinOp) else [rhs.operand]
    return {a.id for a in atoms if isinstance(a, gast.Name)}


def _refuse_defined(source, name, method, s):
    try:
        value = source.lookup(name)
    except KeyError:
        return
    cls = type(value)
    if installed_class(cls) or not defines_operator(cls, method):
        return
    raise source.syntax_error(
        f"srcad differentiates operators on numbers and arrays; '{name}' is an object of your class "
        f"{cls.__qualname__}, whose __{method}__ makes this something else (its derivative is not the "
        "number's): give srcad its derivative (srcad.custom_vjp on a function doing the operation) or write "
        "the operation out on arrays", A.anno(s, "origin") or s)
