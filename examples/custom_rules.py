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
#    Dawson's integral D(x) has D'(x) = 1 - 2 x D(x): the rule reads the result y = D(x).
@register_vjp(scipy.special.dawsn)
def dawsn(y: Any, x: Any) -> None:
    d[x] += d[y] * (1 - 2 * x * y)


def dawson_energy(z: Any) -> Any:
    return (scipy.special.dawsn(z) ** 2).sum()


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
    D = scipy.special.dawsn(z)
    print("Dawson energy gradient  ", srcad.grad(dawson_energy)(z))
    print("  expected 2D(1 - 2zD)  ", 2 * D * (1 - 2 * z * D))
    X = np.array([[1.0, 2.0], [-1.0, 0.5], [800.0, -300.0]])
    w = np.array([0.3, -0.2])
    print("smooth hinge gradient   ", srcad.grad(smooth_hinge)(w, X))
    print("softplus'(1000) (stable)", srcad.grad(softplus)(1000.0))
    x = np.array([0.3, 0.9])
    print("quantized energy grad   ", srcad.grad(quantized_energy)(x), "= bucket(x) + x")
    print("\nThe adjoint srcad generated for smooth_hinge:\n")
    srcad.show(smooth_hinge, w, X)
