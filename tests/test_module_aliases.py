"""Array-API style code (probes 23A/23B bug_05): a module held in a name of the function, bound
once (``xp = np``, ``m = np.linalg``) or as a parameter's default (``def f(x, xp=np)``), reads
as the module itself in every mode; a parameter given another module is refused when the code
runs; any other binding of a name to a module (again, in a branch, in a loop) is refused at
compile time with a message saying so. Checked against finite differences."""
import math
import types

import numpy as np
import pytest
import scipy.special

import srcad
from srcad.errors import SrcadSyntaxError, UnsupportedCaseError
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -1.2, 0.7])

# a module NumPy's code must never be run for: its sin is twice NumPy's
FAKE = types.ModuleType("fakexp")
FAKE.sin, FAKE.sum = (lambda v: 2.0 * np.sin(v)), np.sum
XP = np  # the module-level alias the messages advise


def local_alias(x):
    xp = np
    return xp.sum(xp.sin(x) ** 2) + xp.prod(xp.cos(x)) * xp.pi


def submodule_alias(x):
    xp = np
    la = xp.linalg  # an alias of an alias
    m: types.ModuleType = np.linalg
    return la.norm(x) ** 2 + m.norm(xp.outer(x, x)) + xp.exp(x).sum()


def default_alias(x, xp=np):
    return xp.sum(xp.sin(x) ** 2) + xp.log(xp.sum(xp.exp(x)))


def keyword_only_alias(x, *, xp=np, sp=scipy.special):
    return xp.sum(sp.expit(x) * xp.tanh(x))


def helper(x, xp=np):
    return xp.sum(xp.tanh(x) ** 2)


def calls_helper(x):
    return helper(x) * 2.0 + helper(x, np) + helper(x, xp=np)


def nested_reads(x):
    xp = np

    def inner(y):
        return xp.sum(xp.sin(y) * y)
    return inner(x) + sum(xp.cos(v) for v in x) + xp.sum((x * xp.float64(2.0))[xp.newaxis, :] ** 2)


def in_loop_after_binding(x):
    xp = np
    r = x
    for _ in range(2):
        r = r + xp.sin(r)[::-1]
    return xp.sum(r ** 2)


def nested_default(x):
    def g(v, xp=np):
        return xp.sin(v) * v
    return g(x).sum() + g(x, np).sum()


ACCEPTED = [local_alias, submodule_alias, default_alias, keyword_only_alias, calls_helper, nested_reads,
            in_loop_after_binding, nested_default]


def finite_differences(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("fn", ACCEPTED, ids=lambda f: f.__name__)
def test_a_module_alias_reads_as_the_module_in_every_mode(fn):
    np.testing.assert_allclose(srcad.grad(fn)(X), finite_differences(fn, X), rtol=1e-6, atol=1e-7)
    check_grads(fn, (X,), modes=("rev",))  # the adjoint and vjp's pullback
    check_jvp(fn, (X,))
    hessian = srcad.hessian(fn)(X)
    np.testing.assert_allclose(hessian, finite_differences(srcad.grad(fn), X), rtol=1e-5, atol=1e-6)


def test_a_module_parameter_given_its_default_explicitly_reads_as_it():
    gradient = srcad.grad(default_alias)
    np.testing.assert_allclose(gradient(X, np), gradient(X), rtol=1e-12)
    np.testing.assert_allclose(gradient(X, xp=np), finite_differences(default_alias, X), rtol=1e-6, atol=1e-7)


def _is_refused_for_the_other_module(run):
    with pytest.raises(UnsupportedCaseError, match=r"'xp' holds the module fakexp in this call, but srcad "
                                                   r"differentiated this function reading 'xp' as the module its "
                                                   r"default is written as, np \(numpy\)") as info:
        run()
    message = str(info.value)  # the def's line, at second order too (not a generated one)
    assert message.startswith(__file__ + ":") and "srcad-generated" not in message.splitlines()[0]


def test_a_module_parameter_given_another_module_is_refused_when_it_runs():
    gradient = srcad.grad(default_alias)
    gradient(X)  # the code compiled for the default is not run for another module
    _is_refused_for_the_other_module(lambda: gradient(X, FAKE))
    _is_refused_for_the_other_module(lambda: gradient(X, xp=FAKE))
    _is_refused_for_the_other_module(lambda: srcad.jvp(default_alias, (X, FAKE), (np.ones(3), None)))
    _is_refused_for_the_other_module(lambda: srcad.vjp(default_alias, X, FAKE)[1](1.0))
    _is_refused_for_the_other_module(lambda: srcad.hessian(default_alias)(X, FAKE))
    _is_refused_for_the_other_module(lambda: srcad.jvp(srcad.grad(default_alias), (X, FAKE), (np.ones(3), None)))
    _is_refused_for_the_other_module(lambda: srcad.grad(helper)(X, FAKE))  # first given another module
    np.testing.assert_allclose(srcad.grad(helper)(X), finite_differences(helper, X), rtol=1e-6, atol=1e-7)


def passes_another_module(x):
    return helper(x, FAKE)


def passes_it_by_keyword(x):
    return helper(x) + helper(x, xp=FAKE)


def passes_it_to_a_nested_function(x):
    def g(v, xp=np):
        return xp.sin(v)
    return g(x, FAKE).sum()


@pytest.mark.parametrize("fn", [passes_another_module, passes_it_by_keyword, passes_it_to_a_nested_function],
                         ids=lambda f: f.__name__)
def test_a_helper_given_another_module_is_refused_when_it_runs(fn):
    _is_refused_for_the_other_module(lambda: srcad.grad(fn)(X))
    _is_refused_for_the_other_module(lambda: srcad.jvp(fn, (X,), (np.ones(3),)))


def rebound(x):
    xp = np
    y = xp.sin(x)
    xp = FAKE
    return y.sum() + xp.sin(x).sum()


def bound_in_branches(x, c=True):
    if c:
        xp = np
    else:
        xp = math
    return xp.sum(xp.sin(x))


def parameter_rebound(x, xp=None):
    if xp is None:
        xp = np
    return xp.sum(xp.sin(x))


def default_rebound(x, xp=np):
    if x[0] > 10:
        xp = FAKE
    return xp.sum(xp.sin(x))


def deleted(x):
    xp = np
    r = xp.sin(x).sum()
    del xp
    return r


def lambda_default(x, xp=np):
    h = lambda v, xp=FAKE: xp.sin(v)  # noqa: E731
    return xp.sum(h(x))


def bound_in_loop(x):
    s = 0.0
    for _ in range(2):
        xp = np
        s = s + xp.sum(xp.sin(x))
    return s


def bound_in_a_tuple(x):
    xp, k = np, 2.0
    return xp.sum(xp.sin(x)) * k


def bound_by_walrus(x):
    if (xp := np) is not None:
        return xp.sum(xp.sin(x))
    return 0.0


def read_before_binding(x):
    def g(v):
        return xp.sin(v)
    xp = np
    return g(x).sum()


def module_name_is_local(x, np=None):  # xp holds None, not the global np
    xp = np
    return xp.sum(xp.sin(x))


MORE_THAN_ONCE = r"it is bound more than once"
NOT_PLAIN = r"it is bound in a branch, loop, try or with, by a tuple assignment"


@pytest.mark.parametrize("fn, why, line", [
    (rebound, MORE_THAN_ONCE, "xp = np"),
    (bound_in_branches, MORE_THAN_ONCE, "xp = np"),
    (parameter_rebound, MORE_THAN_ONCE, "xp = np"),
    (default_rebound, MORE_THAN_ONCE, "def default_rebound(x, xp=np):"),
    (deleted, MORE_THAN_ONCE, "xp = np"),
    (lambda_default, MORE_THAN_ONCE, "def lambda_default(x, xp=np):"),
    (bound_in_loop, NOT_PLAIN, "xp = np"),
    (bound_in_a_tuple, NOT_PLAIN, "xp, k = np, 2.0"),
    (bound_by_walrus, NOT_PLAIN, "if (xp := np) is not None:"),
    (read_before_binding, r"it is read before it is bound", "xp = np"),
    (module_name_is_local, r"'np' is a name of this function too", "xp = np"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_module_bound_to_a_name_otherwise_is_refused_saying_so(fn, why, line):
    for run in (lambda: srcad.grad(fn)(X), lambda: srcad.jvp(fn, (X,), (np.ones(3),))):
        with pytest.raises(SrcadSyntaxError, match=r"'xp' holds a module, and " + why) as info:
            run()
        message = str(info.value)
        assert "bind the module at module level instead (XP = np at the top of the module)" in message
        assert info.value.text.strip() == line and info.value.filename == __file__


# controls: what worked before keeps working, what was refused stays refused

def module_level_alias(x):
    return XP.sum(XP.sin(x) ** 2)


def _closure():
    xp = np

    def f(x):
        return xp.sum(xp.sin(x) ** 2)
    return f


closure_alias = _closure()


@pytest.mark.parametrize("fn", [module_level_alias, closure_alias], ids=["module level", "closure"])
def test_a_module_alias_outside_the_function_keeps_working(fn):
    check_grads(fn, (X,), modes=("rev",))
    check_jvp(fn, (X,))
    np.testing.assert_allclose(srcad.grad(fn)(X), 2 * np.sin(X) * np.cos(X), rtol=1e-12)


def local_function_alias(x):
    s = np.sin
    return s(x).sum()


def test_a_local_alias_of_a_function_stays_refused_as_before():
    with pytest.raises(SrcadSyntaxError, match="'s' is a local variable, so srcad cannot tell which function"):
        srcad.grad(local_function_alias)(X)
