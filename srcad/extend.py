"""The rule-author API: teach srcad the derivative of code it cannot read.

Rules are templates written like the math; see ``docs/extending.md``::

    from srcad.extend import register_vjp

    @register_vjp(mylib.softplus)
    def softplus(y, x):
        d[x] += d[y] / (1 + np.exp(-x))
"""
from .registry import (register_attribute, register_jvp, register_method, register_nondifferentiable,
                       register_vjp)

__all__ = ["register_vjp", "register_jvp", "register_method", "register_attribute",
           "register_nondifferentiable"]
