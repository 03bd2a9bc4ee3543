"""Every SciPy rule module at once (``registry.load_optional_rules``). srcad itself loads
them per SciPy submodule, when a lookup first meets an object of that submodule
(``registry.load_rules_for``); ``import srcad`` never imports SciPy."""
from .. import registry

registry.load_optional_rules()
