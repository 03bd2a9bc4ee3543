"""What the loop tests share: the generated adjoint's text, and one program checked in every
mode against finite differences without changing the caller's arrays."""
import numpy as np

import srcad
from srcad.testing import check_grads, check_jvp


def adjoint_source(fn, args, wrt=0):
    """The joint adjoint srcad generates for ``fn`` at ``args``."""
    made = srcad.differentiable(fn, wrt=wrt)
    made.adjoint(*args)
    return made.adjoint_source


def all_modes(fn, args, wrt=0, v=None, second_order=True):
    """Joint adjoint and pullback (twice), jvp and, with ``second_order``, hvp (jvp of grad)
    and grad of grad, against central finite differences; the caller's arrays stay as they were."""
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    check_grads(fn, args, wrt=wrt, v=v, modes=("rev",))
    check_jvp(fn, args, wrt=wrt)
    if second_order:
        check_jvp(srcad.grad(fn, wrt=wrt), args, wrt=wrt, rtol=1e-4, atol=1e-6)
        check_grads(srcad.grad(fn, wrt=wrt), args, wrt=wrt, rtol=1e-4, atol=1e-6)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
