"""Realistic numerical programs written the way projects write them (classes holding
parameters, layers returning caches, simulations stepping a helper, library calls), one module
per domain. Each module's ``cases()`` lists what tests/test_realistic_corpus.py checks."""
import collections
import importlib

Case = collections.namedtuple("Case", "name fun args wrt")
"""One program: ``fun(*args)`` differentiated with respect to ``wrt`` (a position or a tuple)."""

MODULES = ("objects", "layers", "mlp", "recurrent", "kalman", "gaussian_process", "transport",
           "ode", "nbody", "finance", "robotics", "mixture", "images", "classifiers", "attention",
           "heat")


def all_cases():
    found = []
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        found.extend(module.cases())
    return found
