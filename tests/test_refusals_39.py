"""False refusals and misleading messages around parameters named ``out`` and getters.

- A function of yours with a parameter ``out`` (``def scaled(a, out=0.5)``) was refused at every
  call passing it, by keyword or by position, "with out= (it writes into an existing array)":
  the memory analysis took any argument bound to ``out`` for NumPy's output buffer. Now only a
  library's function, a ufunc or a rule's is asked; a function srcad reads takes ``out`` as any
  parameter (what it changes in what it is given is its summary's). A function run as written
  (``register_nondifferentiable``) still has its ``out=`` refused.
- A getter called where it is made, ``operator.itemgetter(1, 0)(p)``, ``attrgetter("w")(obj)``
  with literal keys, was refused "cannot tell which function this call calls"; it is now the
  reads it makes (``(p[1], p[0])``, ``obj.w``), as it already was as a ``key=``.
- A list display of objects of your class read otherwise than by ``for`` loops over it
  (``map(attrgetter("w"), items)``, ``[c.w for c in items]``) was refused as "Cls has no
  derivative rule and no Python source"; the refusal now names the list, its use, and what to write.
"""
import operator
from operator import attrgetter, itemgetter

import numpy as np
import pytest

import srcad
from lang_checks import check_unchanged

RNG = np.random.default_rng(39)
X = RNG.standard_normal(4)


def scaled(a, out=0.5):
    return a * out


def out_by_position(x):
    return np.sum(np.sin(scaled(x, 0.3)) * x)


def out_by_keyword(x):
    return np.sum(scaled(x, out=1.7) ** 2)


def out_an_array(x):
    return np.sum(scaled(x, out=np.cos(x)))


def fill(a, out):
    out[:] = a * 2.0
    return out


def out_written_by_you(x):
    buf = np.zeros(x.shape)
    fill(np.sin(x), buf)
    return np.sum(buf * x)


@pytest.mark.parametrize("f", [out_by_position, out_by_keyword, out_an_array, out_written_by_you])
def test_parameter_named_out_of_your_function(f):
    check_unchanged(f, X, value=True)


def run_as_written(a, out=None):
    return a


srcad.extend.register_nondifferentiable(run_as_written)


def out_to_a_function_run_as_written(x):
    buf = np.zeros(x.shape)
    run_as_written(x, out=buf)
    return np.sum(np.sin(x) * buf)


def test_out_to_a_function_run_as_written_still_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="with out="):
        srcad.grad(out_to_a_function_run_as_written)(X)


def test_out_to_numpy_still_refused():
    def f(x):
        buf = np.zeros(x.shape)
        np.multiply(x, x, out=buf)
        return np.sum(buf)

    with pytest.raises(srcad.SrcadSyntaxError, match="with out="):
        srcad.grad(f)(X)


class Cls:
    def __init__(self, w):
        self.w = w


def itemgetter_called(x):
    p = (x, 2.0 * np.sin(x))
    a, b = operator.itemgetter(1, 0)(p)
    return np.sum(a * np.cos(b))


def itemgetter_on_a_call(x):
    return np.sum(itemgetter(1)([x, x ** 2]) * x)


def attrgetter_on_an_object(x):
    obj = Cls(np.tanh(x))
    return np.sum(attrgetter("w")(obj) ** 2 * x)


@pytest.mark.parametrize("f", [itemgetter_called, itemgetter_on_a_call, attrgetter_on_an_object])
def test_getter_called_where_made(f):
    check_unchanged(f, X, value=True)


KEY = 1


def test_getter_of_a_global_key_refused_clearly():
    def f(x):
        return np.sum(itemgetter(KEY)([x, x ** 2]))

    with pytest.raises(srcad.SrcadSyntaxError, match="keys written as literals"):
        srcad.grad(f)(X)


def mapped_getter(x):
    items = [Cls(x), Cls(2 * x)]
    return np.sum(sum(map(attrgetter("w"), items)))


def comprehension_over_objects(x):
    items = [Cls(x), Cls(np.sin(x))]
    return np.sum(sum([c.w for c in items]))


@pytest.mark.parametrize("f, text", [(mapped_getter, "map(attrgetter"),
                                     (comprehension_over_objects, "[c.w for c in items]")])
def test_list_of_objects_read_otherwise_names_the_list(f, text):
    for derivative in (lambda: srcad.grad(f)(X), lambda: srcad.jvp(f, (X,), (X,))):
        with pytest.raises(srcad.NoRuleError) as info:
            derivative()
        message = str(info.value)
        assert "'items' is a list of objects of your class Cls" in message and text in message, message
        assert "no Python source" not in message


def looped_instead(x):
    items = [Cls(x), Cls(np.sin(x))]
    total = 0.0
    for item in items:
        total = total + item.w
    return np.sum(total * x)


def test_the_loop_the_refusal_advises():
    check_unchanged(looped_instead, X, value=True)
