"""Second order where first order works, for patterns the realistic corpus met: a boundary row
copied from its neighbour inside a loop (``u[0] = u[1]``), whose first-order adjoint copied a
view after the memory under it had changed, which the aliasing check refused when the adjoint
was differentiated again."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def neumann_boundaries(u0, kappa):
    u = u0.copy()
    for n in range(3):
        un = u.copy()
        u[1:-1] = un[1:-1] + kappa * (un[2:] - 2 * un[1:-1] + un[:-2])
        u[0] = u[1]
        u[-1] = u[-2]
    return np.sum(u ** 3)


def rows_shifted(m):
    a = m.copy()
    a[0, :] = a[1, :]
    a[2, :] = a[1, :] * 2.0
    return np.sum(np.sin(a))


CASES = [(neumann_boundaries, (np.linspace(-1.0, 1.0, 6) ** 2, 0.2), (0, 1)),
         (rows_shifted, (np.arange(12.0).reshape(3, 4) / 7.0,), 0)]


@pytest.mark.parametrize("fun, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_second_order_of_updates_through_neighbouring_views(fun, args, wrt):
    check_grads(fun, args, wrt=wrt)
    check_jvp(srcad.grad(fun, wrt=wrt), args, wrt=wrt, rtol=1e-4, atol=1e-6)
    check_grads(srcad.grad(fun, wrt=wrt), args, wrt=wrt, rtol=1e-4, atol=1e-6)
