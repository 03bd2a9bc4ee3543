"""Rules for SciPy's sparse matrices and arrays as constant linear operators: the products
``S @ x`` and ``x @ S`` of a sparse ``S`` that carries no derivative (a graph Laplacian, a
finite-difference operator: a global, or an argument not differentiated) and a dense NumPy
array ``x`` of one or two dimensions, and the solve ``scipy.sparse.linalg.spsolve(S, b)``.
``passes.sparse_operands`` writes them as ``sparse_left_product(S, x)``,
``sparse_right_product(x, S)`` and ``sparse_solve(S, b)`` (``transposed``: of ``S.T``); their derivatives are products
with ``S`` (solves with ``Sᵀ``) again, transposes taken of the dense operand only
(``Sᵀg = (gᵀS)ᵀ``), so no derivative ever hands the sparse value to a NumPy function
(``np.dot`` of a sparse matrix makes an array of objects). Each checks, when it runs, that
``S`` is sparse (for a product, a plain 2-D array too, as a global rebound since the code was
made may be) and real, that the other operand is a NumPy array of one or two dimensions, and
that the result is a NumPy array.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import CHECKED_OPERANDS, register_jvp, register_vjp

try:
    from scipy import sparse
except ImportError:  # SciPy is not a dependency of srcad
    sparse = None


def _checked(S, x, dense_too=True):
    if not (sparse is not None and issubclass(type(S), (sparse.sparray, sparse.spmatrix))
            or dense_too and S.__class__ is np.ndarray) or S.ndim != 2 \
            or S.dtype.kind not in "biuf":
        raise UnsupportedCaseError(
            f"the code was made for a real 2-D scipy.sparse matrix here, and is given a {type(S).__name__}"
            f"{' of dtype ' + str(S.dtype) if hasattr(S, 'dtype') else ''}: srcad differentiates products with a "
            "real 2-D sparse matrix only")
    if x.__class__ is not np.ndarray or x.ndim not in (1, 2):
        raise UnsupportedCaseError(
            f"srcad differentiates the product of a scipy.sparse matrix with a NumPy array of one or two "
            f"dimensions only, not with a {type(x).__name__}{f' of {x.ndim} dimensions' if hasattr(x, 'ndim') else ''}")
    return S, x


def _dense(product):
    if product.__class__ is not np.ndarray:  # (a SciPy that gives np.matrix: the derivative would not be this one)
        raise UnsupportedCaseError(f"this product of a scipy.sparse matrix gives a {type(product).__name__}; srcad "
                                   "differentiates products that give a NumPy array only: convert the operand "
                                   "to a NumPy array first")
    return product


def sparse_left_product(S, x, transposed=False):
    """``S @ x`` for a sparse ``S`` srcad does not differentiate; ``transposed``: ``S.T @ x``."""
    S, x = _checked(S, x)
    return _dense((S.T if transposed else S) @ x)


def sparse_right_product(x, S, transposed=False):
    """``x @ S`` for a sparse ``S`` srcad does not differentiate; ``transposed``: ``x @ S.T``."""
    S, x = _checked(S, x)
    return _dense(x @ (S.T if transposed else S))


def sparse_solve(S, b, transposed=False):
    """``scipy.sparse.linalg.spsolve(S, b)`` for a sparse ``S`` srcad does not differentiate;
    ``transposed``: of ``S.T`` (in CSC form, which ``spsolve`` asks for)."""
    from scipy.sparse.linalg import spsolve

    S, b = _checked(S, b, dense_too=False)
    return _dense(spsolve(S.T.tocsc() if transposed else S, b))


if sparse is not None:
    CHECKED_OPERANDS.update((sparse_left_product, sparse_right_product, sparse_solve))

    @register_vjp(sparse_solve)
    def sparse_solve_vjp(y, S, b, transposed=False):
        # (spsolve gives a vector for b of shape (n, 1))
        d[b] += np.reshape(sparse_solve(S, d[y], not transposed), np.shape(b))

    @register_jvp(sparse_solve)
    def sparse_solve_jvp(y, S, b, transposed=False):
        t[y] += sparse_solve(S, t[b], transposed)

    # (M is S, or Sᵀ where transposed)
    @register_vjp(sparse_left_product)
    def sparse_left_product_vjp(z, S, x, transposed=False):
        d[x] += sparse_right_product(d[z].T, S, transposed).T  # Mᵀg, written (gᵀM)ᵀ: a product with S itself

    @register_jvp(sparse_left_product)
    def sparse_left_product_jvp(z, S, x, transposed=False):
        t[z] += sparse_left_product(S, t[x], transposed)

    @register_vjp(sparse_right_product)
    def sparse_right_product_vjp(z, x, S, transposed=False):
        d[x] += sparse_left_product(S, d[z].T, transposed).T  # gMᵀ, written (Mgᵀ)ᵀ

    @register_jvp(sparse_right_product)
    def sparse_right_product_jvp(z, x, S, transposed=False):
        t[z] += sparse_right_product(t[x], S, transposed)
