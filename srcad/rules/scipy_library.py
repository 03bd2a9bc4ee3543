"""Every SciPy rule module at once (``optional_rules.load_optional_rules``). srcad itself loads
them per SciPy submodule, when a lookup first meets an object of that submodule
(``optional_rules.load_rules_for``); ``import srcad`` never imports SciPy."""
from .. import optional_rules

optional_rules.load_optional_rules()
