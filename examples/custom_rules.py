"""Teaching srcad derivatives: a rule for a library function, a hand-written adjoint for
your own function, a function marked non-differentiable, and stop_gradient.

Run: python examples/custom_rules.py
"""
from typing import Any

import numpy as np
import scipy.special

import srcad
from srcad.extend import nondifferentiable, register_vjp

d: Any  # a rule template's adjoints, d[...]: templates are read by srcad, never run


# 1. A library function srcad cannot read (a C ufunc): give it a rule, written like the math.
#    Wright's omega function ω(x) (ω + log ω = x) has ω'(x) = ω / (1 + ω): the rule reads the
#    result y = ω(x).
@register_vjp(scipy.special.wrightomega)
def wrightomega(y: Any, x: Any) -> None:
    d[x] += d[y] * y / (1 + y)


def omega_energy(z: Any) -> Any:
    return (scipy.special.wrightomega(z) ** 2).sum()


# 2. Your own function, with a hand-written adjoint for numerical stability:
#    d/dx log(1 + e^x) = σ(x), computed without overflow for large x.
@srcad.custom_vjp
def softplus(x: Any) -> Any:
    return np.logaddexp(0.0, x)


@softplus.defvjp
def softplus_vjp(y: Any, x: Any) -> None:
    d[x] += d[y] * scipy.special.expit(x)


def smooth_hinge(w: Any, X: Any) -> Any:
    return softplus(1.0 - X @ w).mean()


# 3. A function whose output carries no derivative, and stop_gradient.
@nondifferentiable
def bucket(x: Any) -> Any:
    return np.floor(x * 4) / 4


def quantized_energy(x: Any) -> Any:
    return (x * bucket(x)).sum() + (x * srcad.stop_gradient(x)).sum()


if __name__ == "__main__":
    z = np.array([-1.0, 0.5, 2.0])
    W = scipy.special.wrightomega(z)
    print("omega energy gradient   ", srcad.grad(omega_energy)(z))
    print("  expected 2W²/(1 + W)  ", 2 * W ** 2 / (1 + W))
    X = np.array([[1.0, 2.0], [-1.0, 0.5], [800.0, -300.0]])
    w = np.array([0.3, -0.2])
    print("smooth hinge gradient   ", srcad.grad(smooth_hinge)(w, X))
    print("softplus'(1000) (stable)", srcad.grad(softplus)(1000.0))
    x = np.array([0.3, 0.9])
    print("quantized energy grad   ", srcad.grad(quantized_energy)(x), "= bucket(x) + x")
    print("\nThe adjoint srcad generated for smooth_hinge:\n")
    srcad.show(smooth_hinge, w, X)
