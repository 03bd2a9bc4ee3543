"""srcad's optional rule modules (SciPy's), loaded on demand: ``import srcad`` never imports
SciPy, and a rule lookup that meets an object of ``scipy.X`` first imports the rule modules
``SCIPY_RULE_MODULES`` lists for X (all of them for a SciPy module it does not list), then
looks again; it never concludes "no rule" before. Entries these modules register are
recorded (``OPTIONAL_ENTRIES``): the persistent cache's fingerprint of the tables leaves them
out, since srcad's own sources are in its key."""
import importlib
import inspect
import sys
import threading


#: SciPy's public submodules -> srcad's rule modules that register rules for their objects.
#: An object from a SciPy module not listed here loads every rule module (never a guess).
SCIPY_RULE_MODULES = {
    "fft": ("scipy_fft",),
    "integrate": ("scipy_integrate",),
    "linalg": ("scipy_linalg", "scipy_linalg_factors"),
    "ndimage": ("scipy_ndimage",),
    "optimize": ("scipy_optimize",),
    "signal": ("scipy_signal",),
    "sparse": ("scipy_sparse",),
    "spatial": ("scipy_spatial",),
    "special": ("scipy_special", "scipy_special_bessel"),
    "stats": ("scipy_stats", "scipy_stats_bounded", "scipy_stats_discrete", "scipy_stats_location_scale",
              "scipy_stats_multivariate"),
}
ALL_SCIPY_RULE_MODULES = tuple(sorted({m for names in SCIPY_RULE_MODULES.values() for m in names}))
LOADED_RULE_MODULES = set()  # names in srcad.rules of the optional rule modules imported so far
#: (table name, key) of every entry an optional rule module registered: srcad's own rules,
#: loaded on demand, so the persistent cache's fingerprint of the tables leaves them out
OPTIONAL_ENTRIES = set()
_loading_optional = []
_LOADING = threading.RLock()


def load_optional_rules():
    """Register the rules for every optional library already imported by the user (SciPy):
    importing SciPy just to register rules would slow down ``import srcad``. True if any
    new rules were loaded."""
    return "scipy" in sys.modules and load_rule_modules(ALL_SCIPY_RULE_MODULES)


def load_rules_for(key):
    """Make sure the rules that could hold ``key``'s are registered, if ``key`` is an object
    of an optional library (SciPy): the rule modules of the SciPy submodule it comes from, or
    all of them if that is not known. True if some were not registered when the caller found
    no rule for ``key`` (then look it up again)."""
    if "scipy" not in sys.modules or len(LOADED_RULE_MODULES) == len(ALL_SCIPY_RULE_MODULES):
        return False  # no SciPy object exists yet, or every rule was registered before the lookup
    names = scipy_rule_modules(key)
    load_rule_modules(names)
    return bool(names)  # another thread may have registered them meanwhile: look again anyway


def scipy_rule_modules(key):
    """The names of the rule modules that could register a rule for ``key``: () for an
    object that does not come from SciPy; every module for one whose origin is unknown."""
    if isinstance(key, (str, tuple, type)) and not (isinstance(key, type) and _in_scipy(key.__module__)):
        return ()  # method and attribute names, operator node types, classes outside SciPy
    origins = _origins(key)
    if not origins:
        return ALL_SCIPY_RULE_MODULES  # no module to go by (a ufunc not found in any namespace)
    needed = set()
    for module in origins:
        if _in_scipy(module):
            needed.update(SCIPY_RULE_MODULES.get(module.split(".")[1] if "." in module else "",
                                                 ALL_SCIPY_RULE_MODULES))
    return tuple(sorted(needed))


def _in_scipy(module):
    return isinstance(module, str) and (module == "scipy" or module.startswith("scipy."))


def _origins(key):
    """The modules ``key`` comes from: its ``__module__``; for a bound method, its owner's and
    the owner's class's too (``scipy.stats.norm.logpdf``, ``[].append``); for an object with
    none (SciPy's ufuncs), the public namespaces that hold it under its name."""
    found = set()
    owner = getattr(key, "__self__", None)
    for obj in (key,) if owner is None or inspect.ismodule(owner) else (key, owner, type(owner)):
        module = getattr(obj, "__module__", None)
        if isinstance(module, str):
            found.add(module)
        elif obj is not type(owner):
            found.update(_holders(obj))
    return found


def _holders(obj):
    """The loaded modules among NumPy and SciPy's public submodules that hold ``obj`` under
    its own name (a ufunc has no ``__module__``: ``scipy.special.erf``)."""
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return set()
    modules = ["numpy"] + [f"scipy.{sub}" for sub in SCIPY_RULE_MODULES]
    # vars(), not getattr: a module's __getattr__ may import (numpy.testing, scipy's submodules)
    return {m for m in modules if m in sys.modules and vars(sys.modules[m]).get(name) is obj}


def load_rule_modules(names):
    """Import the optional rule modules ``names`` (of ``srcad.rules``, each one of
    ``ALL_SCIPY_RULE_MODULES``) not imported yet; True if any was."""
    unknown = sorted(set(names) - set(ALL_SCIPY_RULE_MODULES))
    if unknown:
        raise ValueError(f"not an optional rule module of srcad: {unknown[0]!r}")
    with _LOADING:  # a module counts as loaded once all its rules are registered
        new = [name for name in names if name not in LOADED_RULE_MODULES]
        for name in new:
            _loading_optional.append(name)
            try:
                importlib.import_module(f"{__package__}.rules.{name}")
            finally:
                _loading_optional.pop()
            LOADED_RULE_MODULES.add(name)
    return bool(new)

def note_registered(what, key, rule):
    """Record a table entry that an optional rule module registered (``OPTIONAL_ENTRIES``);
    returns whether it was one."""
    if registered_by_optional_module(key, rule):
        OPTIONAL_ENTRIES.add((what, key))
        return True
    return False


def registered_by_optional_module(key, rule=None):
    """Is ``key`` (with ``rule``) being registered by one of srcad's optional rule modules?"""
    return bool(_loading_optional) or _optional_module(getattr(getattr(rule, "fn", None), "__module__", None)) \
        or _optional_module(getattr(key, "__module__", None))


def _optional_module(name):
    """Is ``name`` one of srcad's optional rule modules (however it was imported)?"""
    prefix = f"{__package__}.rules."
    return isinstance(name, str) and name.startswith(prefix) and name[len(prefix):] in ALL_SCIPY_RULE_MODULES
