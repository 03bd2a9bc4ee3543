"""Rules for ``scipy.optimize``'s Rosenbrock function and its gradient, reverse (vjp) and
forward (jvp)."""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_vjp

try:
    from scipy import optimize
except ImportError:  # SciPy is not a dependency of srcad
    optimize = None


def rosen_der_checked(x):
    if np.ndim(x) != 1:
        raise UnsupportedCaseError("srcad differentiates scipy.optimize.rosen_der of a vector only")
    return x


if optimize is not None:

    @register_vjp(optimize.rosen)
    def rosen(y, x):
        d[x] += d[y] * optimize.rosen_der(x)

    @register_jvp(optimize.rosen)
    def rosen_jvp(y, x):
        t[y] += np.sum(optimize.rosen_der(x) * t[x], axis=0)

    @register_vjp(optimize.rosen_der)
    def rosen_der(y, x):
        d[x] += optimize.rosen_hess(rosen_der_checked(x)) @ d[y]

    @register_jvp(optimize.rosen_der)
    def rosen_der_jvp(y, x):
        t[y] += optimize.rosen_hess(rosen_der_checked(x)) @ t[x]
