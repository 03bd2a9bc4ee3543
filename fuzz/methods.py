"""Classes in generated programs (``methods`` feature): a module-level class holding arrays set in
``__init__``, with a property, a static and a class method, methods calling methods, maybe a
subclass overriding one through ``super()``, and a module-level object of it whose methods and
attributes the other functions read (the entry may be one of its bound methods).

``held``: ``__init__`` keeps a function in an attribute (``self.act = np.tanh``, a function of the
module, a lambda, a ``functools.partial``; maybe given to the constructor) that methods call as
``self.act(z)``. ``layers``: a module-level list of objects of the classes, run through by
``for layer in LAYERS`` loops and read by item (``LAYERS[1].forward(x)``, ``LAYERS[0](x)``)."""
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
        self.model = self.layers = None
        if not self.on("methods"):
            return []
        rng = self.rng
        self.module_names.update(_CLASS_ATTRIBUTES)  # no method, property or entry takes their names
        held = self.held_function()  # (module lines, attribute, default, assigned, constructor argument) or None
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
        if held:
            _, attr, default, assigned, _ = held
            if default is not None:  # the function given to the constructor, or its default
                init[0] = f"def __init__(self, scale, {attr}={default}):"
            init.append(f"    self.{attr} = {assigned}")
        p_shape = rng.choice(SHAPES)
        sc = self.method_scope(attributes, [], [])
        prop_lines = ["@property", f"def {prop}(self):", f"    return {self.expr(sc, p_shape, 2)[0]}"]
        attributes[f"self.{prop}"] = p_shape
        elementwise = [(n, s) for n in (act, gain) for s in SHAPES]
        statics = ["@staticmethod", f"def {act}(z):", "    return " + rng.choice(ACTIVATIONS).format("z"),
                   "", "@classmethod", f"def {gain}(cls, z):", "    return z * cls.GAIN"]
        if held:
            elementwise += [(held[1], s) for s in SHAPES]
        own = [Fn(f"self.{n}", [("z", s)], {}, s) for n, s in elementwise]
        layer_fn = Fn(f"self.{layer}", [("x", x_shape)], {}, r1)
        layer_lines = self.method(layer, attributes, own, x_shape, r1)
        forward_lines = self.method(forward, attributes, own + [layer_fn], x_shape, r2)
        layered = self.on("layers") and (not held or self.p(0.15))  # a held function on an item is refused
        call_lines = ["", "def __call__(self, x):", f"    return self.{layer}(x)"] if layered and self.p(0.5) else []
        lines = (held[0] if held else []) + [f"class {base}:"] + indent(
            [f"GAIN = {self.const()}", ""] + init + [""] + prop_lines + [""] + statics + [""] + layer_lines
            + [""] + forward_lines + call_lines)
        cls = base
        if sub:
            parent = Fn(f"super().{layer}", [("x", x_shape)], {}, r1)
            lines += ["", "", f"class {sub}({base}):"] + indent(self.method(layer, attributes, own + [parent],
                                                                            x_shape, r1))
            cls = sub
        self.model = (model, cls, attributes, own + [layer_fn, Fn(f"self.{forward}", [("x", x_shape)], {}, r2)])
        self.model_end = len(lines)  # where a bound-method entry goes
        made = f"{cls}({self.const(0.5, 1.2)}" + (f", {held[4]}" if held and held[4] else "") + ")"
        lines += ["", f"{model} = {made}", ""]
        self.helpers += [Fn(f"{model}.{fn.name[5:]}", fn.params, {}, fn.result) for fn in self.model[3]]
        self.helpers += [Fn(f"{cls}.{n}", [("z", s)], {}, s) for n, s in elementwise if not held or n != held[1]]
        if layered:
            lines += self.layer_list([base] + [sub] * bool(sub), layer, forward, x_shape, r1, r2, bool(call_lines))
        self.globals += [(f"{model}.{a[5:]}", s) for a, s in attributes.items()]
        return lines

    def held_function(self):
        """(module lines, attribute name, its parameter's default, what ``__init__`` assigns it,
        the constructor's argument) of a function ``__init__`` keeps in an attribute; or None."""
        if not self.on("held") or not self.p(0.6):
            return None
        rng = self.rng
        attr = self.parameter_name("scale")  # (a parameter of __init__ too)
        form = rng.choice(["ufunc", "module", "lambda", "partial", "partial", "ufunc_partial"])
        lines, template = [], rng.choice(ACTIVATIONS)
        if form == "ufunc":
            fn = f"NP.{rng.choice(['tanh', 'sin', 'arctan', 'square', 'expm1'])}"
        elif form == "module":
            fn = self.fresh_name()
            lines = [f"def {fn}(z):", "    return " + template.format("z"), "", ""]
        elif form == "lambda":
            fn = "lambda z: " + template.format("z")
        else:
            lines = ["import functools", ""]
            self.module_names.add("functools")
            if form == "ufunc_partial":
                fn = f"functools.partial(NP.{rng.choice(['multiply', 'add'])}, {self.const()})"
            else:
                helper, c = self.fresh_name(), self.parameter_name("z")
                by_keyword = self.p(0.6)
                lines += [f"def {helper}({'z, ' + c if by_keyword else c + ', z'}):",
                          f"    return NP.tanh({c} * z) + 0.1 * z", "", ""]
                fn = f"functools.partial({helper}, {c + '=' if by_keyword else ''}{self.const()})"
        self.mark("held")
        choice = rng.randrange(3)
        if choice == 0:
            return lines, attr, None, fn, None                    # self.act = fn
        if choice == 1:
            return lines, attr, fn, attr, None                    # def __init__(self, scale, act=fn)
        return lines, attr, "NP.tanh", attr, rng.choice([fn, f"{attr}={fn}"])  # given to the constructor

    def parameter_name(self, beside):
        """A fresh module-level name that can be a parameter next to ``beside``."""
        name = self.fresh_name()
        while name == beside:
            name = self.fresh_name()
        return name

    def layer_list(self, classes, layer, forward, x_shape, r1, r2, callable_items):
        """A module-level list of objects of ``classes``; its loops and item calls become callables and
        statements of the functions generated later (``st_layers``)."""
        rng = self.rng
        name = self.fresh_name()
        items = [f"{rng.choice(classes)}({self.const(0.5, 1.2)})" for _ in range(rng.randint(1, 4))]
        calls = [Fn(f"{name}[{i}].{layer}", [("x", x_shape)], {}, r1) for i in (0, -1)]
        calls.append(Fn(f"{name}[{rng.randrange(len(items))}].{forward}", [("x", x_shape)], {}, r2))
        if callable_items:
            calls.append(Fn(f"{name}[{rng.randrange(-len(items), len(items))}]", [("x", x_shape)], {}, r1))
        self.helpers += calls
        self.layers = (name, layer, forward, x_shape, r1, r2, callable_items)
        self.mark("layers")
        return [f"{name} = [{', '.join(items)}]", ""]

    def st_layers(self, sc, depth):
        """``for layer in LAYERS: h = layer.step(h)`` where the step keeps the shape (else the outputs
        summed), maybe by index over ``range(len(LAYERS))`` or called as ``layer(h)``."""
        rng = self.rng
        name, layer, forward, x_shape, r1, r2, callable_items = self.layers
        if self.p(0.3) and self.call_builtin(sc, "range") and self.call_builtin(sc, "len"):
            k = self.loop_var(sc, ("i",))
            head, it = f"for {k} in range(len({name})):", f"{name}[{k}]"
        else:
            it = self.loop_var(sc, ("o",))  # an object: never read as a number
            head = f"for {it} in {name}{rng.choice(['', '', '[::-1]', '[1:]'])}:"
        steps = [(f"{it}.{layer}", r1), (f"{it}.{forward}", r2)] + [(it, r1)] * callable_items
        chained = [m for m, r in steps if r == x_shape]
        if chained and self.p(0.7):
            h = sc.new_name(("a", x_shape, False))
            first = f"{h} = {self.expr(sc, x_shape, depth - 1)[0]}"
            sc.defined[h] = None
            return [first, head, f"    {h} = {rng.choice(chained)}({h})"]
        method, result = rng.choice(steps)
        acc = sc.new_name(("a", result, False))
        start = f"{acc} = " + ("0.0" if result == () else f"NP.zeros({result!r})")
        x = self.expr(sc, x_shape, depth - 1)[0]
        sc.defined[acc] = None
        return [start, head, f"    {acc} = {acc} + {method}({x})"]

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
