"""Calls realistic programs make that srcad cannot differentiate are refused where the user
can act: a library function whose source cannot be differentiated at the user's call (naming
the function and the rule to register), a derivative srcad made (``srcad.adjoint``,
``srcad.value_and_grad``) called inside differentiated code in every mode."""
import numpy as np
import pytest
import scipy.ndimage

import srcad
from srcad.testing import check_grads, check_jvp


def smoothed_energy(x):
    return np.sum(scipy.ndimage.median_filter(x, 3) ** 3)


def test_a_library_function_that_cannot_be_read_is_refused_at_the_users_call():
    x = np.linspace(0.0, 1.0, 6)
    here = r"test_realistic_calls.py:\d+: scipy.ndimage.median_filter could not be differentiated through its source"
    with pytest.raises(srcad.SrcadSyntaxError, match=here + r".*srcad.extend.register_vjp\(scipy.ndimage.median_filter\)"):
        srcad.grad(smoothed_energy)(x)
    with pytest.raises(srcad.SrcadSyntaxError, match=here + r".*srcad.extend.register_jvp\(scipy.ndimage.median_filter\)"):
        srcad.jvp(smoothed_energy, (x,), (x,))


def cube(x):
    return x ** 3


def cube_total(x):
    return np.sum(x ** 3)


cube_adjoint = srcad.adjoint(cube)
cube_value_and_grad = srcad.value_and_grad(cube_total)
cube_grad = srcad.grad(cube_total)


def calls_adjoint(x):
    return np.sum(cube_adjoint(x, np.ones_like(x)))


def calls_value_and_grad(x):
    value, gradient = cube_value_and_grad(x)
    return value + np.sum(gradient ** 2)


def calls_grad(x):
    return np.sum(cube_grad(x) ** 2)


X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("fun", [calls_adjoint, calls_value_and_grad])
def test_a_derivative_srcad_made_is_refused_inside_differentiated_code(fun):
    """Regression: the companion was read as ``cube`` itself (9.0 where 3.0 is right), and in
    forward mode refused with 'bad call to cube' or at a line of srcad's own api.py."""
    where = r"test_realistic_calls.py:\d+: cube_\w+ is a derivative made by srcad"
    for run in (lambda: srcad.grad(fun)(X), lambda: srcad.jvp(fun, (X,), (X,)),
                lambda: srcad.hvp(fun)(X, X), lambda: srcad.grad(srcad.grad(fun))(X)):
        with pytest.raises(srcad.SrcadSyntaxError, match=where):
            run()


def test_srcad_grad_called_inside_differentiated_code_is_differentiated():
    check_grads(calls_grad, (X,), modes=("rev",))
    check_jvp(calls_grad, (X,))
    check_jvp(srcad.grad(calls_grad), (X,))
    check_grads(srcad.grad(calls_grad), (X,))


def grad_of_a_local_function(x):
    def h(z):
        return np.sum(z ** 3)

    return np.sum(srcad.grad(h)(x) ** 2)


def test_grad_of_a_local_function_inside_differentiated_code_is_refused_with_what_to_do():
    for run in (lambda: srcad.grad(grad_of_a_local_function)(X),
                lambda: srcad.jvp(grad_of_a_local_function, (X,), (X,))):
        with pytest.raises(srcad.SrcadSyntaxError, match=r"test_realistic_calls.py:\d+: srcad differentiates "
                                                         r"srcad.grad\(h\)\(...\) inside differentiated code only "
                                                         "for a function h defined at module level"):
            run()
