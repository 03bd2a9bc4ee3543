"""The rules for SciPy, loaded together by ``registry.load_optional_rules`` once the user has
imported SciPy (``import srcad`` never imports it)."""
from . import (scipy_linalg, scipy_signal, scipy_special, scipy_stats, scipy_stats_bounded,  # noqa: F401
               scipy_stats_multivariate)
