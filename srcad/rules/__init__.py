"""srcad's own derivative rules, one module per namespace, NumPy's split by family
(``numpy_elementwise``, ``numpy_trigonometric``, ``numpy_exponential``, ``numpy_shapes``,
``numpy_reordering``, ``numpy_linalg``, ``numpy_decompositions``, ``numpy_ufunc_methods``, ...).
Importing this package fills the tables in ``srcad.registry``; the rules for a SciPy submodule (``scipy_*``) are
registered when a lookup first meets one of its objects (``optional_rules.load_rules_for``)."""
from . import (builtin_rules, jvp_core, methods, nondifferentiable, numpy_core, numpy_covariance,  # noqa: F401
               numpy_decompositions, numpy_elementwise, numpy_exponential, numpy_fft, numpy_indexing,
               numpy_joining, numpy_linalg, numpy_numerical, numpy_padding, numpy_order_statistics, numpy_products, numpy_reductions,
               numpy_reordering, numpy_spectral,
               numpy_shapes, numpy_trigonometric, numpy_ufunc_methods, numpy_ufunc_scans, numpy_ufunc_segments,
               operators, records, refusals, runtime_rules)
