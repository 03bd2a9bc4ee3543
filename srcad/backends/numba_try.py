"""When compiled code that held a ``try`` must give way to the NumPy code (``passes.numba_try``).

The compiled code runs a ``try`` body without its handlers, so its result stands only where the
body finished as Python's does. Two things decide that: the compiled code raised (the body did
not finish: the NumPy code runs the handlers, or raises as Python does), or NumPy's floating-point
errors may raise here (``np.seterr(all="raise")``, or warnings turned into errors), which numba's
arithmetic never does: the NumPy code then runs from the start.
"""
import warnings

import numpy as np


def floating_errors_may_raise():
    """Can NumPy arithmetic raise under the current settings (``np.seterr``, ``warnings`` filters)?"""
    settings = np.geterr()
    if any(action in ("raise", "call") for action in settings.values()):
        return True
    if not any(action in ("warn", "print", "log") for action in settings.values()):
        return False
    return any(action == "error" and issubclass(RuntimeWarning, category)
               for action, _, category, _, _ in warnings.filters)
