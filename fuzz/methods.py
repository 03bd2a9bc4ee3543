"""Classes in generated programs (``methods`` feature): a module-level class holding arrays set in
``__init__``, with a property, a static and a class method, methods calling methods, maybe a
subclass overriding one through ``super()``, and a module-level object of it whose methods and
attributes the other functions read (the entry may be one of its bound methods)."""
import math

from .generate import Fn, Scope
from .names import CALLED_BUILTINS
from .templates import SHAPES, indent

_CLASS_ATTRIBUTES = ("W", "b", "GAIN")  # what the class sets: a method, property or entry of that name would clash
ACTIVATIONS = ("NP.tanh({0})", "NP.sin({0}) * 0.5", "{0} / (1.0 + {0} ** 2)", "NP.log1p({0} ** 2)")


class MethodStatements:
    """The class text of ``ProgramGenerator`` (a mixin of it)."""

    def fresh_name(self):
        name = self.rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
        self.module_names.add(name)
        return name

    def model_classes(self):
        """The classes' text and the object (``self.model``: its name, class and method names), or
        nothing. Their methods are registered as callables of the functions generated later."""
        self.model = None
        if not self.on("methods"):
            return []
        rng = self.rng
        self.module_names.update(_CLASS_ATTRIBUTES)  # no method, property or entry takes their names
        base, model = self.fresh_name(), self.fresh_name()
        sub = self.fresh_name() if self.p(0.6) else None
        prop, act, gain, layer, forward = (self.fresh_name() for _ in range(5))
        w_shape = rng.choice([s for s in SHAPES if s])
        x_shape, r1, r2 = rng.choice(SHAPES), rng.choice(SHAPES), rng.choice(SHAPES)
        attributes = {"self.W": w_shape, "self.b": ()}
        init = [f"def __init__(self, scale):",
                f"    self.W = NP.linspace({self.const(0.3, 0.8)}, {self.const(1.0, 1.6)}, "
                f"{math.prod(w_shape)}).reshape({w_shape!r}) * scale",
                f"    self.b = {self.const()} * scale"]
        p_shape = rng.choice(SHAPES)
        sc = self.method_scope(attributes, [], [])
        prop_lines = ["@property", f"def {prop}(self):", f"    return {self.expr(sc, p_shape, 2)[0]}"]
        attributes[f"self.{prop}"] = p_shape
        elementwise = [(n, s) for n in (act, gain) for s in SHAPES]
        statics = ["@staticmethod", f"def {act}(z):", "    return " + rng.choice(ACTIVATIONS).format("z"),
                   "", "@classmethod", f"def {gain}(cls, z):", "    return z * cls.GAIN"]
        own = [Fn(f"self.{n}", [("z", s)], {}, s) for n, s in elementwise]
        layer_fn = Fn(f"self.{layer}", [("x", x_shape)], {}, r1)
        layer_lines = self.method(layer, attributes, own, x_shape, r1)
        forward_lines = self.method(forward, attributes, own + [layer_fn], x_shape, r2)
        lines = [f"class {base}:"] + indent([f"GAIN = {self.const()}", ""] + init + [""] + prop_lines + [""]
                                            + statics + [""] + layer_lines + [""] + forward_lines)
        cls = base
        if sub:
            parent = Fn(f"super().{layer}", [("x", x_shape)], {}, r1)
            lines += ["", "", f"class {sub}({base}):"] + indent(self.method(layer, attributes, own + [parent],
                                                                            x_shape, r1))
            cls = sub
        self.model = (model, cls, attributes, own + [layer_fn, Fn(f"self.{forward}", [("x", x_shape)], {}, r2)])
        self.model_end = len(lines)  # where a bound-method entry goes
        lines += ["", f"{model} = {cls}({self.const(0.5, 1.2)})", ""]
        self.helpers += [Fn(f"{model}.{fn.name[5:]}", fn.params, {}, fn.result) for fn in self.model[3]]
        self.helpers += [Fn(f"{cls}.{n}", [("z", s)], {}, s) for n, s in elementwise]
        self.globals += [(f"{model}.{a[5:]}", s) for a, s in attributes.items()]
        return lines

    def method_scope(self, attributes, calls, params, outer=None):
        """A scope reading ``self``'s attributes (never rebinding them) and calling ``calls``."""
        sc = outer or Scope(self, self.module_names)
        sc.taken |= set(attributes) | {fn.name for fn in calls}
        for name, shape in attributes.items():
            sc.kinds[name], sc.defined[name] = ("a", shape, False), None
        for fn in calls:
            sc.kinds[fn.name], sc.defined[fn.name] = ("fn", fn.name), None
        sc.calls = [fn for fn in sc.calls if fn.name not in sc.kinds] + list(calls)
        for pname, shape in params:
            sc.kinds[pname], sc.defined[pname] = ("a", shape, False), None
        return sc

    def method(self, name, attributes, calls, x_shape, result):
        """``def name(self, x)``: a body reading ``self`` and calling ``calls``, returning ``result``."""
        x = self.fresh_name()
        sc = self.method_scope(attributes, calls, [(x, x_shape)])
        sc.result = ("a", result)
        body = self.block(sc, self.rng.randint(1, 3), 1)
        return [f"def {name}(self, {x}):"] + indent(body + ["return " + self.result_expr(sc, 2)])
