"""Hygiene of generated code: no name srcad introduces (builtins, runtime helpers, the ``np``
of rule templates, callees' adjoints) can be captured or shadowed by the user's locals,
parameters or module globals, whatever they are called."""
import dis
import importlib.util
import sys
import textwrap
import types

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

# A module whose globals shadow every builtin and helper name srcad might emit; each one is
# something that would give a wrong value (or fail) if generated code read it.
HOSTILE_MODULE = '''
import numpy
import numpy as np

def _poison(*args, **kwargs):
    raise AssertionError("generated code called a user global it did not name")

range = reversed = len = min = max = slice = list = zip = enumerate = isinstance = _poison
unbroadcast = finish = cotangent_like = copy_value = zeros_like = copy_grad = add_grads = _poison
cotangent = default_cotangent = sum_to_reduced = expand_reduced = scatter_add = _poison
np_ = _poison
_t1 = _t2 = dx = dx_ = _x_stack = _range1 = _n1 = _stop1 = _skip1 = _seq1 = _saved = 7.0


def helper(x):
    slice = 2.0
    return numpy.sin(x) * slice


def loops_and_branches(x):
    min = 0.5
    len = 3
    s = 0.0
    for xi in x:
        if xi > min:
            s = s + numpy.tanh(xi) * len
        else:
            s = s + xi ** 2
    k = 0
    while k < 3:
        s = s + numpy.sum(x[k:] * x[: x.shape[0] - k])
        k = k + 1
    return s + numpy.sum(helper(x))


def locals_named_like_builtins(x):
    reversed = x[::-1]
    min = 0.5
    len = 3
    slice = 2
    list = numpy.cos(x)
    zip = 1.5
    enumerate = x * x
    range = numpy.sum(enumerate)
    return numpy.sum(reversed * min * len * slice * x) + numpy.sum(list) * zip + range


def parameters_named_like_helpers(unbroadcast, finish, cotangent_like):
    copy_value = unbroadcast * finish
    zeros_like = numpy.sum(copy_value * cotangent_like)
    return zeros_like + numpy.sum(numpy.exp(unbroadcast)) * numpy.sum(cotangent_like)


def generated_names(x):
    _t1 = numpy.sin(x)
    dx = _t1 * x
    _x_stack = 0.0
    for _range1 in x:
        _n1 = _range1 * 2.0
        _x_stack = _x_stack + _n1 * numpy.sum(dx)
        if _x_stack > 100.0:
            break
    _stop1 = numpy.max(x)
    return _x_stack + _stop1 + numpy.sum(dx)


def np_is_a_local(x):
    np = 2.0
    return numpy.sum(numpy.cos(x) * np)


def np_like_global(x):
    return numpy.sum(numpy.sin(x) ** 2) * _t1 + numpy.sum(np.cos(x)) * dx


def loop_over_sequence(x):
    s = 0.0
    for row in numpy.stack([x, x[::-1]], axis=1):
        s = s + row[0] * row[1]
    for i in np.arange(x.shape[0]):
        s = s + x[i] ** 3
    return s
'''


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "srcad_hostile_module.py"
    path.write_text(textwrap.dedent(HOSTILE_MODULE))
    spec = importlib.util.spec_from_file_location("srcad_hostile_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


X = np.array([0.3, 0.9, -0.4, 1.2])

CASES = ["loops_and_branches", "locals_named_like_builtins", "generated_names", "np_is_a_local",
         "np_like_global", "loop_over_sequence"]


@pytest.mark.parametrize("name", CASES)
def test_user_names_never_capture_srcad_names(hostile, name):
    fun = getattr(hostile, name)
    check_grads(fun, (X,), modes=("rev",))
    check_jvp(fun, (X,))
    check_jvp(srcad.grad(fun), (X,))  # second order: forward over the generated adjoint


def test_parameters_named_like_runtime_helpers(hostile):
    fun = hostile.parameters_named_like_helpers
    args = (X, X + 1.0, X * 0.5)
    check_grads(fun, args, wrt=(0, 1, 2), modes=("rev",))
    check_jvp(fun, args, wrt=(0, 1, 2))


def test_generated_code_binds_its_builtins_in_its_closure(hostile):
    source = srcad.differentiable(hostile.locals_named_like_builtins).adjoint_source
    # the function's locals keep their names; srcad's own builtins get other ones
    assert "reversed = " in source
    d = srcad.differentiable(hostile.loops_and_branches)
    d.grad(X)
    joint = d._functions((X,))[0]
    free = dict(zip(joint.__code__.co_freevars, (c.cell_contents for c in joint.__closure__)))
    read = {i.argval for i in dis.get_instructions(joint) if i.opname == "LOAD_GLOBAL"}
    assert read <= {"numpy", "helper"}, read  # every global the generated code reads is the user's own
    assert all(v is not hostile._poison for v in free.values())


def test_rules_np_is_not_the_users_rebound_global(tmp_path):
    """Rule templates say ``np.cos``; when the user's global ``np`` is NumPy the generated code
    may share the name, under a guard: rebinding the user's ``np`` gets code of its own."""
    path = tmp_path / "srcad_rebinds_np.py"
    path.write_text("import numpy\nnp = numpy\n\ndef f(x):\n    return np.sum(np.sin(x) * x)\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    d = srcad.differentiable(module.f)
    np.testing.assert_allclose(d.grad(X), np.cos(X) * X + np.sin(X))
    fake = types.SimpleNamespace(sin=np.sin, sum=np.sum, cos=lambda x: 0.0 * x)  # a wrong cos
    module.np = fake
    np.testing.assert_allclose(d.grad(X), np.cos(X) * X + np.sin(X))
    check_grads(module.f, (X,), modes=("rev",))
    check_jvp(module.f, (X,))
