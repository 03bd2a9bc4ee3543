"""Helpers that generated code calls. Each is small, documented and has rules of its own
(see ``srcad/rules/runtime_rules.py``), so generated code can itself be differentiated.

They live by concern: ``runtime_adjoints`` (adjoints inside the code: unbroadcasting, zeros,
copies, accumulation), ``runtime_boundary`` (arguments and cotangents coming in, gradients
and tangents going out), ``runtime_derivatives`` (the derivatives of particular NumPy
operations that rules call) and ``runtime_fast`` (faster equal forms of NumPy calls). This
module is their one public path: passes, rules and the backends name a helper as
``srcad.runtime.<name>``.

They are dispatch-clean: an array with NumPy's protocols (a Dask array, a CuPy array; see
``srcad.protocol``) is never converted to an ndarray. Shapes are read
from ``.shape``, new arrays are made with ``*_like`` functions of an array at hand, and
everything else goes through NumPy functions that dispatch to the array's own library.
"""
from .protocol import as_array, shape_of, size_of
from .runtime_adjoints import (add_grads, cleared_slot, container_grad, copy_grad, copy_value, grad_buffer,
                               in_place_cast, into_dtype_of, item_grad, none_items, rule_adjoint, rule_tangent, scatter_add, stacked_grad, stored_adjoint,
                               tangent_or_zero, unbroadcast, value_stack, zeros_like)
from .runtime_boundary import (as_real, cotangent, cotangent_items, cotangent_like, default_cotangent, finish,
                               finish_tangent, in_place_result, inexact_result, numba_refuses, numeric_constant,
                               read_again, real_constant, check_integer_range, check_python_float)
from .runtime_fast import padded
from .runtime_stores import (along_axis_positions, check_copyto, check_fill, check_updated_array, diagonal_positions,
                             shuffle_order)
from .runtime_derivatives import (concat_grad, expand_reduced, extremum_grad, full_of, matmul_dx,
                                  matmul_dy, moves, prod_grad, resting_zero, sum_grad, sum_to_reduced, trace_grad,
                                  transpose_back, unstack)

__all__ = ["add_grads", "along_axis_positions", "as_array", "as_real", "check_copyto", "check_fill", "check_integer_range", "check_python_float", "check_updated_array", "cleared_slot", "concat_grad", "container_grad", "copy_grad",
           "copy_value", "cotangent", "cotangent_items", "cotangent_like", "default_cotangent", "diagonal_positions",
           "expand_reduced", "extremum_grad", "finish", "finish_tangent", "full_of", "grad_buffer", "in_place_cast", "in_place_result", "inexact_result",
           "into_dtype_of", "item_grad", "matmul_dx", "matmul_dy", "none_items", "numba_refuses", "numeric_constant", "padded", "prod_grad", "read_again", "real_constant", "rule_adjoint", "rule_tangent",
           "moves", "resting_zero", "scatter_add", "shape_of", "shuffle_order", "size_of", "stacked_grad", "stored_adjoint", "sum_grad", "sum_to_reduced",
           "tangent_or_zero", "trace_grad", "transpose_back", "unbroadcast", "unstack", "value_stack", "zeros_like"]
