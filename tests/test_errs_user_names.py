"""Refusals speak of the user's code: no message names a variable srcad made (a temporary
``_t3``, a stack ``_t3_stack``, an adjoint ``dx_``), which the user never wrote; a temporary
reads as the expression it holds."""
import inspect
import re

import numpy as np
import pytest

import errors_corpus
import srcad
from srcad import SrcadError

# srcad's naming scheme (srcad/naming.py): fresh names, loop stacks, adjoints of temporaries,
# and adjoints or tangents of a name (dx, dx_, x_dot)
_SRCADS = re.compile(r"\b(_\w*?\d+_*|_\w+_stack|d_\w+)\b")
_QUOTING_GENERATED = ("\n(while differentiating srcad's derivative of", " (in the generated statement `")


def srcad_names_in(error, fn):
    """The names in ``error``'s message that srcad made and ``fn``'s source does not have (the
    generated code a message quotes on purpose, after its note, left out)."""
    message = str(error)
    for note in _QUOTING_GENERATED:
        message = message.split(note)[0]
    words = set(re.findall(r"\w+", inspect.getsource(fn)))
    found = {w for w in _SRCADS.findall(message) if w not in words}
    grown = {w for w in re.findall(r"\b\w+\b", message) if w not in words
             and (w.rstrip("_")[1:] in words and w.startswith("d") or w.endswith("_dot") and w[:-4] in words)}
    return found | grown


def random_draw_of_an_expression(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(2 * x, 1.0))


def random_draw_of_an_item(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(x[0] + 1.0, 1.0, size=3))


def updated_in_a_loop(x):  # (numba: an array bound in the loop, changed in place before its next save)
    tot = 0.0
    for i in range(3):
        z = x * 1.0
        w = z * z
        z += x * x[1]
        tot = tot + np.sum(z * w)
    return tot


def cubic(x):
    return x @ np.outer(x, x) @ x


def cubic_gradient_sum(x):
    return np.sum(srcad.grad(cubic)(x))


def third_order_of_cubic(x):
    return np.sum(srcad.grad(cubic_gradient_sum)(x))


def tuple_display_then_update(x):
    y = x * 1.0
    t = (y, y)
    y[0] = 5.0
    return np.sum(t[0] * x)


def user_name_like_srcads(x):
    _t1 = x * 1.0
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(_t1, 1.0))


X = np.array([0.3, -1.2, 0.7])
REFUSED = [  # (what is refused, the user's function, the call, what its message says)
    ("random draw", random_draw_of_an_expression, lambda: srcad.grad(random_draw_of_an_expression)(X),
     "in its parameters, here 2 * x:"),
    ("random draw of an item", random_draw_of_an_item, lambda: srcad.grad(random_draw_of_an_item)(X),
     "in its parameters, here x[0] + 1.0:"),
    ("numba loop", updated_in_a_loop, lambda: srcad.grad(updated_in_a_loop, backend="numba")(X),
     "cannot compile the adjoint of this line: an array bound in the loop is changed in place"),
    ("third order", cubic, lambda: srcad.grad(third_order_of_cubic)(X),
     "in-place update of the derivative of x"),
    ("tuple display", tuple_display_then_update, lambda: srcad.grad(tuple_display_then_update)(X.copy()),
     "'t' holds a value that shares memory with 'y'"),
    ("a user's name like srcad's", user_name_like_srcads, lambda: srcad.grad(user_name_like_srcads)(X),
     "in its parameters, here _t1:"),
]


@pytest.mark.parametrize("fn,call,says", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refusal_names_only_the_users_code(fn, call, says):
    with pytest.raises(SrcadError) as info:
        call()
    assert srcad_names_in(info.value, fn) == set(), str(info.value)
    assert says in str(info.value)


def _corpus_refusals():
    """Every function of errors_corpus that srcad refuses, given the arguments most take."""
    for name, fn in vars(errors_corpus).items():
        if inspect.isfunction(fn) and fn.__module__ == errors_corpus.__name__:
            yield pytest.param(fn, id=name)


@pytest.mark.parametrize("fn", list(_corpus_refusals()))
def test_corpus_refusals_name_only_the_users_code(fn):
    args = [np.ones(3)] + [2] * (len(inspect.signature(fn).parameters) - 1)
    try:
        srcad.grad(fn)(*args)
    except SrcadError as error:
        assert srcad_names_in(error, fn) == set(), str(error)
    except Exception:  # (refused other than by srcad, or given the wrong arguments: not this test's concern)
        pass


def test_the_checker_sees_srcads_names():
    """The check above can fail: a message naming a temporary, its stack or an adjoint."""
    for message in ("here _t1: draw", "saved on '_t3_stack'", "update of 'dx_'", "reads d_t66"):
        assert srcad_names_in(SrcadError(message), cubic), message
    assert not srcad_names_in(SrcadError("update of 'x', which shares memory"), cubic)


@pytest.mark.parametrize("untyped, says", [
    ("list_grad", "calls a function numba does not compile (srcad's helper 'list_grad')"),
    ("TABLE", "numba cannot compile the global 'TABLE' this line reads"),
])
def test_numba_untyped_global_is_told_apart(untyped, says):
    """numba's "Untyped global name" is a function srcad's derivative calls, or a global of the
    user's line: said in those words, numba's own text otherwise left as it is (it was reworded
    name by name into "Untyped global name a value srcad computes on this line")."""
    from srcad.backends.numba_errors import _numba_construct

    lines = ["def f_adjoint(x):\n", "    # line 3: y = x * TABLE[0]\n", "    _t1 = TABLE[0]\n"]
    message = _numba_construct(f"Untyped global name '{untyped}': Cannot determine Numba type of "
                               "<class 'function'>", lines)
    assert says in message
    other = "No implementation of function Function(<function roll>) found for signature:"
    assert _numba_construct(other, lines) == other


def _spread_helper(r, s):  # inlined where it is called with a spread argument
    acc = r * np.ones(4) - r
    for kernel in acc:
        acc[...] += acc
        if kernel > 0.31:
            return kernel
    return s


def calls_a_spread_helper(x):
    return _spread_helper(*(x[-1],), s=x[0]) * 2.0


def test_an_inlined_helpers_locals_keep_their_names():
    """A helper inlined into the function has its locals renamed (``_spread_helper_acc``): a
    refusal in it names them as the user wrote them, not as the expressions they hold."""
    with pytest.raises(SrcadError) as info:
        srcad.grad(calls_a_spread_helper)(np.arange(4.0) * 0.1)
    message = str(info.value)
    assert "'acc[...] += ...' updates 'acc[...]' in place, and 'kernel', which shares memory with it" in message
    assert not srcad_names_in(info.value, _spread_helper) and "_spread_helper_" not in message


def outer_with_reversed(x):
    return np.sum(np.outer(x, x[::-1]) ** 2)


def along_outer_with_reversed(x, u):
    return np.sum(srcad.grad(outer_with_reversed)(x) * u)


def test_a_refusal_of_srcads_own_derivative_code_says_so():
    """At third order srcad differentiates its own derivative code; a refusal there over srcad's
    names is its limit, and its advice (copy srcad's buffer first) was nothing the user could do."""
    with pytest.raises(SrcadError) as info:
        srcad.hessian(along_outer_with_reversed)(X, np.ones(3))
    message = str(info.value).split("\n(while differentiating")[0]
    assert "srcad cannot differentiate its own derivative of this line again, a limit of srcad" in message
    assert "shares memory with the values srcad saved for this derivative" in message
    assert "grad_buffer" not in message and "copy first" not in message
