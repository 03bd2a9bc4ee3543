"""A helper returning its parts as a tuple of three arrays (``starred`` feature), as a function
returning ``mean, scale, resid`` does, and a helper taking those parts. Callers unpack the parts
with a star (``a, *rest = parts(x)``, ``*init, last = parts(x)``) and read the starred list
straight away (by index, or unpacked), or spread the call straight into the other helper
(``combine(*parts(x))``, ``combine(y, *parts(x)[1:])``)."""
import random

from .generate import Fn, Scope, _wrapped
from .names import CALLED_BUILTINS
from .templates import SHAPES, indent


class StarredStatements:
    """Mixed into ``program.ProgramGenerator``: the two helpers and the statements calling them."""

    def wants_parts_helpers(self):
        """Whether the module has the helpers, drawn from a stream of its own: programs without
        them are the programs the seed gave before the feature existed."""
        return self.on("starred") and random.Random(f"{self.seed}:starred").random() < 0.5

    def parts_helpers(self):
        """The lines of both helpers; ``self.parts`` their ``Fn``s (the parts', the combiner's)."""
        rng = self.rng
        shapes = [rng.choice(SHAPES) for _ in range(3)]
        parts = self.module_helper(rng.randint(1, 2), ("tuple", shapes))
        combine = self.module_helper(0, ("a", rng.choice(SHAPES)), params=shapes)
        self.parts = (parts[0], combine[0])
        self.helpers.append(combine[0])  # called by name elsewhere too
        return parts[1] + [""] + combine[1]

    def module_helper(self, n_params, result, params=None):
        """(Fn, lines) of a module-level helper of ``n_params`` drawn parameters (or one per shape
        of ``params``) returning ``result``: a block, then the result."""
        rng = self.rng
        name = rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
        self.module_names.add(name)
        sc = Scope(self, self.module_names)
        named = []
        for shape in params or [rng.choice(SHAPES) for _ in range(n_params)]:
            pname = sc.new_name(("a", shape, False))
            while pname in [p for p, _ in named]:
                pname = sc.new_name(("a", shape, False))
            named.append((pname, shape))
            sc.defined[pname] = None
        sc.result = result
        body = self.block(sc, rng.randint(0, 2), 1)
        fn = Fn(name, named, {}, result[1])
        return fn, [f"def {name}({', '.join(p for p, _ in named)}):"] + indent(
            body + ["return " + self.result_expr(sc, 2)])

    def st_parts(self, sc, depth):
        """``a, *rest = parts(...)`` or ``*init, last = parts(...)`` (the starred list read later),
        or ``y = combine(*parts(...))`` / ``combine(v, *parts(...)[1:])``."""
        rng = self.rng
        parts, combine = self.parts
        shapes = parts.result
        call = self.call_text(sc, parts, depth - 1)
        self.mark("starred")
        form = rng.randrange(4)
        if form < 2:
            one_shape, rest_shapes = (shapes[0], shapes[1:]) if form == 0 else (shapes[-1], shapes[:-1])
            one = sc.new_name(("a", one_shape, False))
            rest = sc.new_name(("c", ("list", rest_shapes)))
            if rest != one:
                sc.defined[one] = sc.defined[rest] = None
                targets = f"{one}, *{rest}" if form == 0 else f"*{rest}, {one}"
                return [f"{targets} = {call}", self.starred_read(sc, rest, rest_shapes, depth)]
        spread = f"*{call}" if form != 3 else f"{self.expr(sc, shapes[0], depth - 1)[0]}, *{call}[1:]"
        value = sc.new_name(("a", combine.result, False))
        sc.defined[value] = None
        return [f"{value} = {combine.name}({spread})"]

    def starred_read(self, sc, rest, shapes, depth):
        """A statement reading the starred list ``rest`` straight away: an item, or both unpacked."""
        if self.p(0.3):
            return f"{', '.join(self.targets(sc, shapes))} = {rest}"
        i = self.rng.randrange(len(shapes))
        factor = _wrapped(self.expr(sc, shapes[i], depth - 1)[0])  # (before the name it binds is defined)
        value = sc.new_name(("a", shapes[i], False))
        sc.defined[value] = None
        return f"{value} = {rest}[{i}] * {factor}"
