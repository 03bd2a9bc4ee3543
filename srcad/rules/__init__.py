"""srcad's own derivative rules, one module per namespace. Importing this package fills
the tables in ``srcad.registry``."""
from . import operators, numpy_core, numpy_elementwise, numpy_reductions, builtin_rules, methods, nondifferentiable  # noqa: F401
