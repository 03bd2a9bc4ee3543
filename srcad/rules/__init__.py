"""srcad's own derivative rules, one module per namespace. Importing this package fills
the tables in ``srcad.registry``."""
from . import operators, numpy_core, numpy_elementwise, numpy_reductions, numpy_shapes, numpy_products, numpy_linalg, scipy_special, builtin_rules, methods, nondifferentiable, jvp_core, runtime_rules  # noqa: F401
