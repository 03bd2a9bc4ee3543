"""Mistakes get a srcad error that says what to do: the gradient of a non-scalar output, a function
without source (and ``srcad.differentiable(fn, source=text)`` for it), an object's attribute."""
import linecache
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

HERE = os.path.abspath(__file__)


def doubled(x):
    return x * 2.0


def test_grad_of_a_vector_output_names_vjp_adjoint_and_jacobian():
    x = np.ones(3)
    d = srcad.differentiable(doubled)
    attempts = [lambda: d.grad(x), lambda: srcad.grad(doubled)(x), lambda: srcad.value_and_grad(doubled)(x),
                lambda: srcad.vjp(doubled, x)[1](), lambda: d.adjoint(x)]
    for attempt in attempts:
        with pytest.raises(srcad.CotangentError) as info:
            attempt()
        message = str(info.value)
        assert message.startswith(f"{HERE}:") and "doubled" in message
        assert "shape (3,)" in message and "a gradient needs a scalar output" in message
        assert "srcad.vjp(fn, *args)" in message and "srcad.jacobian(fn)" in message and "adjoint" in message
    # what the message proposes works
    np.testing.assert_allclose(srcad.jacobian(doubled)(x), 2.0 * np.eye(3))
    np.testing.assert_allclose(srcad.vjp(doubled, x)[1](np.arange(3.0)), 2.0 * np.arange(3.0))


def test_a_tuple_output_too():
    def pair(x):
        return x.sum(), x.prod()

    with pytest.raises(srcad.CotangentError, match="a tuple, but a gradient needs a scalar output"):
        srcad.grad(pair)(np.ones(2))


CUBIC = textwrap.dedent("""\
    def cubic(x, scale=2.0):
        y = np.sin(x) * scale
        return np.sum(y * x ** 2)
    """)


def exec_defined(text, name, **namespace):
    namespace = {"np": np, **namespace}
    exec(text, namespace)
    return namespace[name]


def test_a_function_without_source_is_told_to_pass_it():
    cubic = exec_defined(CUBIC, "cubic")
    with pytest.raises(srcad.SourceUnavailableError) as info:
        srcad.grad(cubic)(np.ones(2))
    assert "srcad.differentiable(cubic, source=text)" in str(info.value)


def test_source_text_makes_it_differentiable_in_every_mode():
    cubic = exec_defined(CUBIC, "cubic")
    d = srcad.differentiable(cubic, source=CUBIC)
    x = np.array([0.3, -1.2, 2.0])
    expected = 2.0 * (np.cos(x) * x ** 2 + 2 * x * np.sin(x))
    np.testing.assert_allclose(d.grad(x), expected)
    check_grads(d, (x,))  # the joint adjoint and the pullback (called twice)
    check_grads(srcad.grad(d), (x,), v=np.array([1.0, -0.5, 0.25]))  # grad of the Differentiable, differentiated
    check_jvp(d, (x,))
    np.testing.assert_allclose(srcad.grad(d)(x), expected)
    np.testing.assert_allclose(srcad.value_and_grad(d)(x)[1], expected)
    np.testing.assert_allclose(srcad.jacobian(d, mode="fwd")(x), expected)
    hessian = srcad.hessian(d)(x)
    np.testing.assert_allclose(hessian, hessian.T, atol=1e-12)
    check_grads(lambda t: srcad.grad(d)(t) @ np.ones(3), (x,))
    assert d(x) == cubic(x)
    # the function's own defaults run, whatever the text says
    assert srcad.differentiable(cubic, source=CUBIC.replace("2.0", "3.0")).grad(x) @ np.ones(3) == pytest.approx(
        expected.sum())


def test_source_text_as_a_decorator_and_for_a_closure():
    text = "def scaled(x):\n    return np.sum(a * x ** 2)\n"

    def make(a):
        namespace = {"np": np}
        exec(f"def outer(a):\n{textwrap.indent(text, '    ')}    return scaled\n", namespace)
        return namespace["outer"](a)

    scaled = make(3.0)
    d = srcad.differentiable(source=text)(scaled)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(d.grad(x), 6.0 * x)
    check_grads(d, (x,))


def test_python_dash_c_with_source():
    script = textwrap.dedent("""\
        import numpy as np, srcad
        text = "def f(x):\\n    return np.sum(np.exp(x))\\n"
        exec(text)
        try:
            srcad.grad(f)(np.zeros(2))
        except srcad.SourceUnavailableError as e:
            assert "source=text" in str(e), e
        else:
            raise SystemExit("no error without source")
        print(srcad.grad(srcad.differentiable(f, source=text))(np.zeros(2)))
        """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(srcad.__file__))))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[1.", "1.]"]


@pytest.mark.parametrize("wrong", [
    CUBIC.replace("x ** 2", "x ** 3"),  # other code
    CUBIC.replace("np.sin", "np.cos"),  # other names
    CUBIC.replace("cubic", "quartic"),  # another function
    "def cubic(x, scale=2.0):\n    y = np.sin(x) * scale\n    return np.sum(y * x ** 2.0)\n",  # 2.0 is not 2
    "def cubic(x, scale=2.0):\n    y = np.sin(x) * -0.0\n",
])
def test_source_text_that_is_not_the_functions_is_refused(wrong):
    cubic = exec_defined(CUBIC, "cubic")
    with pytest.raises(srcad.ArgumentError, match="does not define the code of this function"):
        srcad.differentiable(cubic, source=wrong)


def test_source_text_refusals():
    cubic = exec_defined(CUBIC, "cubic")
    with pytest.raises(srcad.ArgumentError, match="does not compile"):
        srcad.differentiable(cubic, source="def cubic(x:\n")
    with pytest.raises(srcad.ArgumentError, match="plain Python function"):
        srcad.differentiable(np.sin, source=CUBIC)
    zero = exec_defined("def z(x):\n    return x * 0.0\n", "z")
    with pytest.raises(srcad.ArgumentError, match="does not define the code"):
        srcad.differentiable(zero, source="def z(x):\n    return x * -0.0\n")


class Pair:  # a plain class: built in the function and passed on, it has no rule (a dataclass would be a record)
    def __init__(self, a, b):
        self.a, self.b = a, b


def reads_an_objects_attribute(x):
    p = Pair(x, 2.0)
    q = p  # (an object used only by its attributes and methods is read as its attributes: passes.local_objects)
    return np.sum(q.a * q.b)


def test_an_objects_attribute_is_not_sent_to_register_attribute():
    for attempt in (lambda: srcad.grad(reads_an_objects_attribute)(np.ones(2)),
                    lambda: srcad.jvp(reads_an_objects_attribute, (np.ones(2),), (np.ones(2),))):
        with pytest.raises(srcad.SrcadError) as info:
            attempt()
        assert "register_attribute" not in str(info.value)


def test_an_objects_attribute_message_says_what_to_do():
    with pytest.raises(srcad.NoRuleError) as info:
        srcad.grad(reads_an_objects_attribute)(np.ones(2))
    message = str(info.value)
    # building the object is where the derivative stops: the message names it, why srcad does not
    # keep its attributes in names, and the remedies (its attributes, a dataclass)
    assert message.startswith(f"{HERE}:") and "Pair" in message and "register_attribute" not in message
    assert "bound again, passed on" in message and "make Pair a dataclass" in message


def test_an_array_attribute_without_a_rule_points_at_register_attribute():
    from srcad.errors import no_attribute_rule

    assert "register_attribute" in no_attribute_rule("flat")  # an ndarray attribute
    assert "register_attribute" not in no_attribute_rule("weights")


def test_code_that_shares_its_file_name_with_other_text_is_told_to_pass_it():
    # python -c on 3.13 keeps the -c text under "<string>", the name every exec'd string has too
    filename = "<string>"
    saved = linecache.cache.get(filename)
    try:
        for shown in ("def f(x):\n    return np.sum(x * 2.0)\n", "y = 1\n"):
            linecache.cache[filename] = (len(shown), None, shown.splitlines(keepends=True), filename)
            namespace = {"np": np}
            exec(compile("def f(x):\n    return np.sum(x * 3.0)\n", filename, "exec"), namespace)
            with pytest.raises(srcad.SourceUnavailableError) as info:
                srcad.grad(namespace["f"])(np.ones(2))  # never the gradient of x * 2.0
            assert "srcad.differentiable(f, source=text)" in str(info.value)
        d = srcad.differentiable(namespace["f"], source="def f(x):\n    return np.sum(x * 3.0)\n")
        np.testing.assert_allclose(srcad.grad(d)(np.ones(2)), [3.0, 3.0])
    finally:
        if saved is None:
            linecache.cache.pop(filename, None)
        else:
            linecache.cache[filename] = saved


def test_source_text_with_other_parameters_is_refused():
    keyword = exec_defined("def g(x, *, y):\n    return x * y\n", "g")
    with pytest.raises(srcad.ArgumentError, match="does not define the code"):
        srcad.differentiable(keyword, source="def g(x, y):\n    return x * y\n")


def test_source_text_of_a_module_that_imports_numpy_itself():
    text = "import numpy as np\n\ndef h(x):\n    return np.sum(np.tanh(x))\n"
    h = exec_defined(text, "h")
    x = np.array([0.2, -0.4])
    for given in (text, text.split("\n\n", 1)[1]):  # the whole string, or the def alone
        check_grads(srcad.differentiable(h, source=given), (x,))


def _spectrum_energy(x):
    magnitude = np.abs(np.fft.rfft(x))  # the line a second-order refusal must name
    return np.sum(magnitude ** 2)


def test_refusal_while_differentiating_a_derivative_names_the_users_line():
    x = np.array([0.3, -1.2, 0.7, 2.0])
    check_grads(_spectrum_energy, (x,))  # first order is taken; so is forward over reverse (hvp)
    gradient = srcad.grad(_spectrum_energy)
    u = np.array([1.0, -0.5, 0.25, 2.0])
    np.testing.assert_allclose(srcad.hvp(_spectrum_energy)(x, u), (gradient(x + 1e-6 * u) - gradient(x - 1e-6 * u)) / 2e-6,
                               rtol=1e-6, atol=1e-6)
    for second_order in (lambda: srcad.grad(lambda z: np.sum(srcad.grad(_spectrum_energy)(z)))(x),):
        with pytest.raises(srcad.SrcadSyntaxError) as info:
            second_order()
        error = info.value
        assert error.filename == __file__
        assert "the line a second-order refusal must name" in error.text
        assert "while differentiating srcad's derivative of _spectrum_energy again" in str(error)
        assert "<srcad-generated" in str(error)  # and the generated line it comes from


def scale_every_other(x):
    y = x.copy()
    v = y[::2]
    v *= 2.0
    return np.sum(y ** 2)


def scale_every_other_as_advised(x):
    y = x.copy()
    y[::2] *= 2.0
    return np.sum(y ** 2)


def test_an_update_through_a_view_advises_updating_the_base_where_it_is_indexed():
    # the advice used to be only 'v = v * ...', which leaves y unchanged: another program
    x = np.array([0.5, -1.0, 2.0, 0.3])
    with pytest.raises(srcad.SrcadSyntaxError, match=r"to change 'y', update it where it is indexed \('y\[\.\.\.\] \*= "
                                                     r"\.\.\.'\); otherwise write 'v = v \* \.\.\.'"):
        srcad.grad(scale_every_other)(x)
    np.testing.assert_allclose(srcad.grad(scale_every_other_as_advised)(x), 2 * x * np.array([4.0, 1.0, 4.0, 1.0]))
    check_grads(scale_every_other_as_advised, (x,))


def scale_a_column_through_the_transpose(x):
    a = x.copy()
    a.T[0] *= 3.0
    return np.sum(a * x)


def scale_a_column_as_advised(x):
    a = x.copy()
    a[:, 0] *= 3.0
    return np.sum(a * x)


def test_an_update_through_a_view_method_of_a_copy_advises_a_subscript_of_the_base():
    # the advice was to make 'a' a copy where it is assigned, which it already was (probe 29)
    x = np.array([[0.5, -1.0], [2.0, 0.3], [1.5, -0.7]])
    with pytest.raises(srcad.SrcadSyntaxError, match=r"'a\.T' is a view of 'a', which the update changes: update "
                                                     r"'a' through a subscript of its own \('a\[\.\.\.\] \*= "
                                                     r"\.\.\.'; 'a\[:, 0\]' for 'a\.T\[0\]'\)") as info:
        srcad.grad(scale_a_column_through_the_transpose)(x)
    assert "copy where it is assigned" not in str(info.value)
    np.testing.assert_allclose(srcad.grad(scale_a_column_as_advised)(x), x * np.array([6.0, 2.0]))
    check_grads(scale_a_column_as_advised, (x,))


@__import__("dataclasses").dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray
    scale = 2.0  # a class attribute, not a field

    @property
    def n_out(self):
        return self.W.shape[1]


def reads_a_property(layer, x):
    return np.sum(x @ layer.W + layer.b) * [layer][0].n_out  # (layer.n_out is read through Dense.n_out.fget)


def reads_a_class_attribute(layer, x):
    return np.sum(x @ layer.W + layer.b) * layer.scale


def computes_it_from_the_fields(layer, x):
    return np.sum(x @ layer.W + layer.b) * layer.W.shape[1] * Dense.scale


@pytest.mark.parametrize("fn, words", [(reads_a_property, "the property .n_out of a Dense"),
                                       (reads_a_class_attribute, "(Dense.scale)")])
def test_reading_what_is_not_a_field_of_a_differentiated_dataclass_names_the_line_and_what_to_do(fn, words):
    layer, x = Dense(np.ones((3, 2)), np.zeros(2)), np.ones((4, 3))
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(fn)(layer, x)
    line = fn.__code__.co_firstlineno + 1
    assert str(info.value).startswith(f"{HERE}:{line}: ") and words in str(info.value)
    check_grads(computes_it_from_the_fields, (layer, x), wrt=0)  # the advice, followed


def imports_inside(x):
    import math as m  # (no global name of this module holds math; numpy, which np holds, is read as np)
    return m.sin(x)


def test_an_import_inside_the_function_is_refused_saying_where_to_import():
    with pytest.raises(srcad.SrcadSyntaxError, match="'m' is imported inside the function") as info:
        srcad.grad(imports_inside)(0.5)
    assert info.value.lineno == imports_inside.__code__.co_firstlineno + 2
