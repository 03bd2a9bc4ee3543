"""srcad: reverse-mode automatic differentiation of NumPy code by source transformation.

    @srcad.differentiable
    def f(x, M):
        return np.tanh(x @ M).sum()

    f.grad(x, M); f.adjoint(x, M, v); y, pullback = f.vjp(x, M); srcad.show(f)

JAX's spellings work too (``argnums=``, ``has_aux=True``, structured arguments), and
``srcad.hessp(f)`` is SciPy's ``hessp=``. Checking a derivative: ``srcad.testing.check_grads``.

Forward mode and higher derivatives: ``srcad.jvp(f, (x, M), (x_dot, None))``,
``srcad.jacobian(f, mode="fwd")``, ``srcad.hessian(f)``, ``srcad.hvp(f)``, ``srcad.grad(srcad.grad(f))``.
"""
from . import rules as _rules  # noqa: F401  (fills the rule tables)
from . import pytrees, testing  # noqa: F401  (srcad.testing.check_grads after import srcad)
from .api import adjoint, differentiable, grad, value_and_grad, vjp
from .checkpointing import checkpointed
from .listing import show
from .derivatives import jacobian, jvp
from .hessians import hessian, hessp, hvp
from .extend import custom_vjp, stop_gradient
from .errors import (ArgumentError, CheckpointReplayError, CotangentError, NoRuleError, SourceUnavailableError, SrcadError,
                     SrcadSyntaxError, UnsupportedCaseError, WrtError)

__all__ = [
    "differentiable", "grad", "value_and_grad", "vjp", "adjoint", "show", "custom_vjp", "stop_gradient", "jvp", "jacobian", "hessian", "hvp", "hessp",
    "checkpointed",
    "SrcadError", "SrcadSyntaxError", "NoRuleError", "SourceUnavailableError", "CotangentError",
    "UnsupportedCaseError", "ArgumentError", "WrtError", "CheckpointReplayError",
]
__version__ = "0.1.0"
