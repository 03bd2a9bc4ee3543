"""srcad's own derivative rules, one module per namespace. Importing this package fills
the tables in ``srcad.registry``; the rules for a SciPy submodule (``scipy_*``) are registered
when a lookup first meets one of its objects (``registry.load_rules_for``)."""
from . import (builtin_rules, jvp_core, methods, nondifferentiable, numpy_core, numpy_elementwise,  # noqa: F401
               numpy_fft, numpy_indexing, numpy_joining, numpy_linalg, numpy_numerical, numpy_products,
               numpy_reductions, numpy_shapes, operators, records, refusals, runtime_rules)
