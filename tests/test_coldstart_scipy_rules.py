"""SciPy's rules load per submodule, on demand: a lookup that meets an object of ``scipy.X``
imports the rule modules for ``scipy.X`` (``optional_rules.SCIPY_RULE_MODULES``) before it
concludes anything, and an object of a SciPy module it does not know loads them all.
Fresh processes show what got loaded; the gradients are checked against finite differences."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.linalg  # noqa: F401 - SciPy in use: the rules can load in this process
import scipy.optimize  # noqa: F401
import scipy.signal  # noqa: F401
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401

import srcad
from srcad import cache, optional_rules, registry

ROOT = str(pathlib.Path(importlib.util.find_spec("srcad").origin).parents[1])


def run(code, *args, env=None):
    """Run ``code`` in a fresh Python process; its last line of output, read as JSON."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                            cwd=ROOT, env={"PYTHONPATH": ROOT, "PATH": "", **(env or {})})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


#: (SciPy submodule, the body of f(x) for a vector x > 0, the rule modules it loads)
PROGRAMS = [
    ("special", "np.sum(special.erf(x) * special.gammaln(x + 1.0))", ["scipy_special", "scipy_special_bessel"]),
    ("special", "special.xlogy.reduce(x) * x[0]", None),  # a ufunc's method: the ufunc's module is found
    ("linalg", "np.sum(linalg.solve(np.eye(3) * 2.0 + np.outer(x, x), x))", ["scipy_linalg", "scipy_linalg_factors"]),
    ("stats", "np.sum(stats.norm.logpdf(x, 0.5, 2.0))", ["scipy_stats", "scipy_stats_bounded",
                                                         "scipy_stats_discrete", "scipy_stats_location_scale",
                                                         "scipy_stats_multivariate"]),
    ("optimize", "optimize.rosen(x)", ["scipy_optimize"]),
    ("signal", "np.sum(signal.convolve(x, x[::-1] * x))", ["scipy_signal"]),
    ("ndimage", "np.sum(ndimage.gaussian_filter1d(x, 1.0) ** 3)", ["scipy_ndimage"]),
    ("spatial", "np.sum(spatial.distance.cdist(x[:, None], x[:2, None] * 2.0))", ["scipy_spatial"]),
    ("fft", "np.sum(fft.irfft(fft.rfft(x) * 2.0, n=3) ** 2)", ["scipy_fft"]),
    ("integrate", "np.sum(integrate.cumulative_trapezoid(x ** 2, dx=0.5))", ["scipy_integrate"]),
]

PROGRAM = """
    import json, sys
    import numpy as np
    import scipy.spatial.distance
    from scipy import fft, integrate, linalg, ndimage, optimize, signal, spatial, special, stats  # every submodule with rules
    import srcad
    from srcad import optional_rules
    from srcad.testing import check_grads, check_jvp

    exec("def f(x):\\n    return " + sys.argv[1], globals())
    f = srcad.differentiable(f, source="def f(x):\\n    return " + sys.argv[1] + "\\n")
    x = np.array([0.3, 0.8, 1.4])
    failure = None
    try:
        check_grads(f, (x,), modes=("rev",))
        check_jvp(f, (x,))
    except srcad.NoRuleError as exc:
        failure = str(exc)
    print(json.dumps({"loaded": sorted(optional_rules.LOADED_RULE_MODULES), "failure": failure}))
"""


@pytest.mark.parametrize("submodule, body, loaded", PROGRAMS, ids=[f"{p[0]}-{k}" for k, p in enumerate(PROGRAMS)])
def test_a_gradient_loads_only_the_rules_of_the_submodule_it_uses(submodule, body, loaded):
    out = run(PROGRAM, body)
    if loaded is None:  # no rule for xlogy.reduce: refused, once xlogy's rules were loaded
        assert out["failure"] is not None and "has no derivative rule" in out["failure"]
        assert out["loaded"] == ["scipy_special", "scipy_special_bessel"]
    else:
        assert out["failure"] is None
        assert out["loaded"] == loaded


MISSING = """
    import json, sys
    import numpy as np
    import scipy.ndimage
    from scipy import special
    import srcad
    from srcad import optional_rules

    if sys.argv[1] == "all":
        optional_rules.load_optional_rules()
    source = "def f(x):\\n    return np.sum(special.gammasgn(x) * x)\\n"
    exec(source, globals())
    try:
        srcad.grad(srcad.differentiable(f, source=source))(np.array([2.0, 3.0]))
        message = None
    except srcad.NoRuleError as exc:
        message = str(exc)
    print(json.dumps({"message": message, "loaded": sorted(optional_rules.LOADED_RULE_MODULES)}))
"""


def test_a_scipy_function_without_a_rule_is_refused_as_when_every_rule_is_loaded():
    lazy, eager = run(MISSING, "lazy"), run(MISSING, "all")
    assert lazy["loaded"] == ["scipy_special", "scipy_special_bessel"]
    assert eager["loaded"] == list(optional_rules.ALL_SCIPY_RULE_MODULES)
    assert lazy["message"] is not None and "special.gammasgn" in lazy["message"]
    assert "has no derivative rule" in lazy["message"] and lazy["message"] == eager["message"]


UNMAPPED = """
    import json
    import numpy as np
    import scipy.interpolate
    import srcad
    from srcad import optional_rules

    print(json.dumps({"modules": optional_rules.scipy_rule_modules(scipy.interpolate.interp1d),
                      "loaded": optional_rules.load_rules_for(scipy.interpolate.interp1d),
                      "now": sorted(optional_rules.LOADED_RULE_MODULES)}))
"""


def test_an_object_of_a_scipy_module_without_an_entry_loads_every_rule_module():
    out = run(UNMAPPED)
    assert out["modules"] == out["now"] == list(optional_rules.ALL_SCIPY_RULE_MODULES) and out["loaded"]


def test_every_scipy_rule_key_maps_to_the_module_that_registers_it():
    """The table is complete: no key with a rule maps to rule modules that would not load its
    rule. (A key in srcad's own rule modules exists only once that module ran, registering it.)"""
    optional_rules.load_optional_rules()
    tables = {"vjp": registry.VJP, "jvp": registry.JVP, "non-differentiable": registry.NONDIFFERENTIABLE}
    assert optional_rules.OPTIONAL_ENTRIES
    for what, key in optional_rules.OPTIONAL_ENTRIES:
        value = tables[what][key]
        if (getattr(key, "__module__", None) or "").startswith("srcad.rules.scipy_"):
            continue
        owner = value.fn.__module__.rsplit(".", 1)[1]
        assert owner in optional_rules.scipy_rule_modules(key), (registry.describe(key), owner)


def test_objects_outside_scipy_load_nothing():
    import gast

    for key in (np.sin, np.add.reduce, np.linalg.inv, len, [].append, "sum", ("record", "x"), gast.Mult, np.ndarray,
                srcad.grad):
        assert optional_rules.scipy_rule_modules(key) == (), key


def test_only_scipy_rule_modules_are_loaded_by_name():
    with pytest.raises(ValueError, match="not an optional rule module"):
        optional_rules.load_rule_modules(["numpy_core"])


ROUND_TRIP = """
    import json, sys
    import numpy as np
    from scipy import linalg, special
    import srcad
    from srcad import cache, optional_rules, pipeline
    from srcad.testing import check_grads

    source = "def f(A, x):\\n    return np.sum(special.erf(linalg.solve(A, x)) * special.gammaln(x + 3.0))\\n"
    exec(source, globals())
    f = srcad.differentiable(f, source=source)
    transform = pipeline.transform
    if sys.argv[1] == "load":
        def refuse(*args, **kwargs):
            raise AssertionError("the cached entry was not used")
        pipeline.transform = refuse
    A, x = np.eye(3) * 2.0 + 0.1, np.array([0.3, 0.5, 0.7])
    before = cache._rules_fingerprint()
    grads = srcad.grad(f, wrt=(0, 1))(A, x)
    pipeline.transform = transform
    if sys.argv[1] == "load":
        check_grads(f, (A, x))  # other modes and specialisations transform afresh
    print(json.dumps({"grads": [g.tolist() for g in grads], "loaded": sorted(optional_rules.LOADED_RULE_MODULES),
                      "same fingerprint": before == cache._rules_fingerprint()}))
"""


def test_cached_code_that_uses_scipy_rules_round_trips(tmp_path):
    env = {"SRCAD_CACHE_DIR": str(tmp_path / "cache")}
    stored = run(ROUND_TRIP, "store", env=env)
    loaded = run(ROUND_TRIP, "load", env=env)
    assert stored["loaded"] == ["scipy_linalg", "scipy_linalg_factors", "scipy_special", "scipy_special_bessel"]
    # the entry's code calls a helper of the scipy.linalg rules: that module (srcad's own) is loaded
    assert "scipy_linalg" in loaded["loaded"]
    assert loaded["grads"] == stored["grads"]
    assert stored["same fingerprint"] and loaded["same fingerprint"]



STEADY_MODULE = """
import numpy as np
from scipy import fft


def helper(x):
    return np.sum(fft.irfft(fft.rfft(x) * 2.0, n=3) ** 2)


def f(x):
    return helper(x * 1.5) + np.sum(x)
"""

STEADY = """
    import json, sys
    import numpy as np
    import srcad
    from srcad import compile as srcad_compile

    sys.path.insert(0, sys.argv[1])
    from steady_fft import f
    made = []
    for _ in range(3):
        before = srcad_compile._CACHE.made_in_this_thread()
        srcad.grad(f)(np.array([0.3, 0.8, 1.4]))
        made.append(srcad_compile._CACHE.made_in_this_thread() - before)
    print(json.dumps(made))
"""


def test_rules_loaded_while_a_helper_compiles_do_not_make_the_caller_compile_again(tmp_path):
    """scipy.fft's rules, loaded when the helper (compiled inside its caller's compilation)
    meets them, also mark the transforms safe for complex values: that made nothing stale
    (they are srcad's own rules), yet it counted as a new registration, so the next call
    compiled the caller again."""
    (tmp_path / "steady_fft.py").write_text(STEADY_MODULE)
    made = run(STEADY, str(tmp_path))
    assert made[0] > 0 and made[1:] == [0, 0]
