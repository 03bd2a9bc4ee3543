"""A helper returning a dict of its intermediate arrays (``caches`` feature), as a forward pass
returns its caches: ``{"z": ..., "h": ...}``, ``dict(z=..., h=...)``, or a dict built key by key
(later values reading earlier keys). Callers bind the dict and read it back by key (and, with
containers, loop over it), or take one key of the call straight away."""
import random

from .generate import Fn, Scope
from .names import CALLED_BUILTINS
from .templates import SHAPES, indent

CACHE_KEYS = ("z", "h", "pre", "act", "norm", "out")


class CacheStatements:
    """Mixed into ``program.ProgramGenerator``: the cache helper and the calls reading it."""

    def wants_cache_helper(self):
        """Whether the module has a cache helper, drawn from a stream of its own: programs without
        one are the programs the seed gave before the feature existed."""
        return self.on("caches") and random.Random(f"{self.seed}:caches").random() < 0.6

    def cache_helper(self):
        """The cache helper's lines; ``self.cacher`` its ``Fn`` (result: ``("dict", {key: shape})``)."""
        rng = self.rng
        name = rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
        self.module_names.add(name)
        sc = Scope(self, self.module_names)
        params, defaults = [], {}
        for _ in range(rng.randint(1, 2)):
            shape = rng.choice(SHAPES)
            pname = sc.new_name(("a", shape, False))
            if pname not in [p for p, _ in params]:
                params.append((pname, shape))
                sc.defined[pname] = None
        if self.p(0.3):
            pname = sc.new_name(("a", (), False))
            if pname not in [p for p, _ in params]:
                params.append((pname, ()))
                defaults[pname] = self.const(0.1, 0.9)
                sc.defined[pname] = None
        keys = {k: rng.choice(SHAPES) for k in rng.sample(CACHE_KEYS, rng.randint(2, 3))}
        sc.result, sc.result_keys = ("dict", list(keys.values())), list(keys)  # early returns: a dict too
        body = self.block(sc, rng.randint(0, 2), 1)
        form = rng.randrange(3)
        if form == 0:
            body.append("return " + self.result_expr(sc, 2))
        elif form == 1 and "dict" not in self.module_names and self.call_builtin(sc, "dict"):  # an object may be "dict"
            body.append("return dict(" + ", ".join(f"{k}={self.expr(sc, s, 2)[0]}" for k, s in keys.items()) + ")")
        else:  # key by key: a later value may read an earlier key
            cache = sc.new_name(("c", ("dict", {})))
            while cache in [p for p, _ in params]:
                cache = sc.new_name(("c", ("dict", {})))
            body.append(f"{cache} = {{}}")
            sc.defined[cache] = None
            for k, s in keys.items():
                body.append(f"{cache}[{k!r}] = {self.expr(sc, s, 2)[0]}")
                sc.kinds[cache][1][1][k] = s
            body.append(f"return {cache}")
        head = ", ".join(p + (f"={defaults[p]}" if p in defaults else "") for p, _ in params)
        self.cacher = Fn(name, params, defaults, ("dict", keys))
        return [f"def {name}({head}):"] + indent(body)

    def st_cache(self, sc, depth):
        """``c = helper(...)`` then a key read back; or ``v = helper(...)[key]``. The values read
        may be the helper's arguments (or views of them): read-only."""
        rng = self.rng
        keys = self.cacher.result[1]
        call = self.call_text(sc, self.cacher, depth - 1)
        self.mark("caches")
        key = rng.choice(list(keys))
        value = sc.new_name(("a", keys[key], False))
        if self.p(0.3):
            sc.defined[value] = None
            return [f"{value} = {call}[{key!r}]"]
        cache = sc.new_name(("c", ("dict", dict(keys))))
        while cache == value:
            cache = sc.new_name(("c", ("dict", dict(keys))))
        sc.defined[cache] = None
        sc.defined[value] = None
        return [f"{cache} = {call}", f"{value} = {cache}[{key!r}]"]
