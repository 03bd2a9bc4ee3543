"""Rules bind like the functions they describe: a rule whose parameters drifted from its
function's (a helper that gained an argument) would fail only when a call reaches it."""
import inspect
import types

import pytest
import scipy.special  # noqa: F401  (so the SciPy rules register)

import srcad  # noqa: F401
from srcad import optional_rules, registry

optional_rules.load_optional_rules()


def shape(parameters):
    return [(p.kind, p.default is inspect.Parameter.empty) for p in parameters]


# srcad's own helpers (runtime and rule helpers, which generated code calls): library
# functions gain options across versions, and their rules take the ones srcad supports
PYTHON_KEYS = sorted({(table, key) for table in ("VJP", "JVP") for key in getattr(registry, table)
                      if isinstance(key, types.FunctionType) and key.__module__.startswith("srcad.")},
                     key=lambda k: (k[0], k[1].__module__, k[1].__qualname__))


@pytest.mark.parametrize("table,key", PYTHON_KEYS, ids=[f"{t}-{k.__module__}.{k.__qualname__}" for t, k in PYTHON_KEYS])
def test_rule_parameters_match_the_function(table, key):
    rule = getattr(registry, table)[key]
    assert shape(rule.params) == shape(inspect.signature(key).parameters.values()), (
        f"{rule} takes {[p.name for p in rule.params]}; {key.__qualname__} takes "
        f"{list(inspect.signature(key).parameters)}")
