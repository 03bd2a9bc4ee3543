"""Lists made in the entry function of objects of module classes, lambdas and functions
(``local_lists`` feature): displays and comprehensions (``[Dense(W, b) for W, b in zip(Ws, bs)]``)
iterated by ``for`` loops, once or twice, through ``enumerate``, nested in a counted loop, read
by index; sometimes the list mutated (before or in the loop), aliased, the loop variable read
after the loop or captured by a lambda (late binding), an item's attribute set in the body.

``getters`` (``fuzz/getters.py``) shares the module classes made here. Both are drawn from
streams of their own and add statements after the entry's body (their scalar added to its
result), so programs without them are the programs the seed gave before."""
import contextlib
import random
import re

from .generate import _wrapped
from .names import CALLED_BUILTINS
from .templates import indent

TAIL_FEATURES = ("local_lists", "getters")
ACTS = ("NP.tanh({0})", "NP.sin({0})", "{0} / (1.0 + {0} ** 2)")


class LocalListStatements:
    """Mixed into ``program.ProgramGenerator``: the module classes and the entry's tail statements."""

    @contextlib.contextmanager
    def own_stream(self, feature):
        """``self.rng`` drawn from a stream of ``feature``'s own while inside."""
        main = self.rng
        self.rng = random.Random(f"{self.seed}:{feature}")
        try:
            yield
        finally:
            self.rng = main

    def tail(self, sc, text, result):
        """(module lines, entry lines, scalar names) of the tail features drawn for this program
        (an entry returning an array: the scalars are added to it); ``text`` is the module so far
        (the new module names avoid every identifier in it)."""
        wanted = [f for f in TAIL_FEATURES if self.on(f) and random.Random(f"{self.seed}:{f}?").random() < 0.6]
        if not wanted or result[0] != "a":
            return [], [], []
        taken = set(re.findall(r"[A-Za-z_]\w*", text)) | set(sc.kinds) | self.module_names
        module, lines, results = [], [], []
        with self.own_stream("tail-module"):
            self.tail_module = self.tail_names(taken)
            module += self.tail_classes()
        for feature in wanted:
            with self.own_stream(feature):
                body, result = getattr(self, "tail_" + feature)(sc)
            lines += body
            results.append(result)
            self.mark(feature)
        return module, lines, results

    def tail_names(self, taken):
        """Module names of the tail's classes and function (``Dense``, ``Gate``, ``bump``, ``operator``)."""
        names = {}
        for role in ("dense", "gate", "bump", "functools"):
            name = self.rng.choice([n for n in self.pool if n not in taken and n not in CALLED_BUILTINS
                                    and n not in names.values()])
            names[role] = name
        names["operator"] = "operator" if "operator" not in taken else names["functools"] + "_op"
        names["functools"] = "functools" if "functools" not in taken else names["functools"]
        taken |= set(names.values())
        return names

    def tail_classes(self):
        """A class storing (W, b) called as a dense layer with a ``forward`` too, a class storing a
        scale, and a module function; the imports the getters read."""
        m, rng = self.tail_module, self.rng
        act = rng.choice(ACTS)
        imports = [f"import operator as {m['operator']}" if m["operator"] != "operator" else "import operator",
                   f"import functools as {m['functools']}" if m["functools"] != "functools" else "import functools"]
        return imports + ["", "", f"class {m['dense']}:"] + indent([
            "def __init__(self, W, b):", "    self.W = W", "    self.b = b", "",
            "def __call__(self, x):", "    return " + act.format("(x @ self.W + self.b)"), "",
            "def forward(self, x):", "    return NP.sin(x @ self.W) * self.b"]) + [
            "", "", f"class {m['gate']}:"] + indent([
                "def __init__(self, scale):", "    self.scale = scale", "",
                "def __call__(self, x):", f"    return x * self.scale + {self.const(0.05, 0.3)} * NP.sin(x)"]) + [
            "", "", f"def {m['bump']}(z):", f"    return z + {self.const(0.1, 0.4)} * NP.cos(z)", ""]

    # ---- names and values ---------------------------------------------------------------
    def tail_local(self, sc, kind):
        """A new local name of ``kind`` (never one the function bound before, nor a module name)."""
        name = self.rng.choice([n for n in self.pool if n not in sc.kinds and n not in sc.taken
                                and n not in CALLED_BUILTINS and n not in self.tail_module.values()])
        sc.kinds[name] = kind
        return name

    def tail_float(self, sc, shape, depth=1):
        return self.expr(sc, shape, depth)[0]

    def weight(self, sc, n):
        """An (n, n) matrix read from the inputs, of moderate size."""
        u, v = self.tail_float(sc, (n,), 0), self.tail_float(sc, (n,), 0)
        return f"{self.const(0.3, 0.8)} * NP.eye({n}) + {self.const(0.1, 0.4)} * NP.outer({u}, {v})"

    def item(self, sc, n, kinds):
        """An item of a list: an object of the classes, a lambda, a function of the module or NumPy."""
        m, rng = self.tail_module, self.rng
        kind = rng.choice(kinds)
        if kind == "dense":
            return f"{m['dense']}({self.weight(sc, n)}, {self.tail_float(sc, (), 0)})"
        if kind == "gate":
            return f"{m['gate']}({self.const(0.5, 1.1)} + 0.1 * {_wrapped(self.tail_float(sc, (), 0))})"
        if kind == "lambda":
            return f"lambda z: {rng.choice(ACTS).format('z')} * {_wrapped(self.tail_float(sc, (), 0))}"
        return rng.choice([m["bump"], "NP.tanh", "NP.sin"])

    # ---- local_lists --------------------------------------------------------------------
    def tail_local_lists(self, sc):
        """Statements building a list of callables and running a state through it; (lines, scalar)."""
        rng = self.rng
        n = rng.choice([3, 4])
        h = self.tail_local(sc, ("a", (n,), False))
        lines = [f"{h} = {self.tail_float(sc, (n,))}"]
        sc.defined[h] = None
        kinds = rng.choice([["dense"], ["dense", "gate"], ["gate", "lambda", "function"], ["lambda", "function"],
                            ["dense", "gate", "lambda", "function"]])
        objects = "lambda" not in kinds and "function" not in kinds
        name = self.tail_local(sc, ("o",))
        lines += self.build_list(sc, name, n, kinds)
        alias = name
        for _ in range(rng.randint(1, 2)):
            lines += self.list_use(sc, name, h, n, kinds, objects)
        if self.p(0.05):
            alias = self.tail_local(sc, ("o",))
            lines += [f"{alias} = {name}", f"{alias}.append({self.item(sc, n, kinds)})"]
            lines += self.loop_through(sc, name, h, n, objects)
        result = self.tail_local(sc, ("a", (), False))
        lines.append(f"{result} = {self.const(0.05, 0.3)} * NP.sum({h} ** 2)")
        sc.defined[result] = None
        return lines, result

    def build_list(self, sc, name, n, kinds):
        """``name = [item, ...]``, a comprehension over zip or range, or a list built by append."""
        rng = self.rng
        m = self.tail_module
        form = rng.choices(range(4), [2, 1, 1, 8])[0]
        if form == 0 and kinds == ["dense"] and self.call_builtin(sc, "zip"):
            ws, bs = self.tail_local(sc, ("o",)), self.tail_local(sc, ("o",))
            k = rng.randint(2, 3)
            W, b = self.tail_local(sc, ("o",)), self.tail_local(sc, ("o",))
            return [f"{ws} = [{', '.join(self.weight(sc, n) for _ in range(k))}]",
                    f"{bs} = [{', '.join(self.tail_float(sc, (), 0) for _ in range(k))}]",
                    f"{name} = [{m['dense']}({W}, {b}) for {W}, {b} in zip({ws}, {bs})]"]
        if form == 1 and self.call_builtin(sc, "range"):
            k = self.tail_local(sc, ("o",))
            kind = rng.choice(kinds)
            if kind == "gate":
                scales = ", ".join(self.const(0.5, 1.1) for _ in range(rng.randint(2, 3)))
                return [f"{name} = [{m['gate']}({k}) for {k} in ({scales},)]"]
            if kind == "lambda":
                bind = f", {k}={k}" if self.p(0.5) else ""  # without it, every lambda reads the last k
                return [f"{name} = [lambda z{bind}: {rng.choice(ACTS).format('z')} * (0.5 + 0.2 * {k}) "
                        f"for {k} in range({rng.randint(2, 3)})]"]
        if form == 2:
            return [f"{name} = []"] + [f"{name}.append({self.item(sc, n, kinds)})" for _ in range(rng.randint(1, 3))]
        return [f"{name} = [{', '.join(self.item(sc, n, kinds) for _ in range(rng.randint(1, 3)))}]"]

    def loop_through(self, sc, name, h, n, objects, header=None, extra=()):
        """``for it in name: h = it(h)`` (maybe ``it.forward``, an attribute set, a break)."""
        rng = self.rng
        it = self.tail_local(sc, ("o",))
        call = f"{it}({h})"
        body = list(extra)
        if objects and self.p(0.1):
            body.append(f"if isinstance({it}, {self.tail_module['dense']}):")
            body.append(f"    {it}.b = {it}.b * {self.const(0.5, 0.9)}")
        body.append(f"{h} = {call}")
        if self.p(0.08):
            body += [f"if NP.sum({h}) > {self.const(-0.5, 0.5)}:", "    break"]
        head = header or f"for {it} in {name}:"
        return [head.format(it=it)] + indent(body)

    def list_use(self, sc, name, h, n, kinds, objects):
        """One use of the list: a loop (plain, enumerate, nested, mutated, capturing) or indexing."""
        rng = self.rng
        form = rng.choices(range(10), [1, 1, 1, 1, 1, 1, 1, 1, 1, 16])[0]  # mostly the loop srcad unrolls
        if form == 0 and self.call_builtin(sc, "enumerate"):
            i = self.tail_local(sc, ("i",))
            return self.loop_through(sc, name, h, n, objects, f"for {i}, {{it}} in enumerate({name}):",
                                     [f"{h} = {h} * (1.0 + 0.1 * {i})"])
        if form == 1 and self.call_builtin(sc, "range"):
            k = self.tail_local(sc, ("i",))
            return [f"for {k} in range({rng.randint(2, 3)}):"] + indent(self.loop_through(sc, name, h, n, objects))
        if form == 2:
            return [f"{h} = {name}[0]({h}) + {name}[-1]({h})"]
        if form == 3:  # mutated before the loop
            change = rng.choice([f"{name}.append({self.item(sc, n, kinds)})", f"{name}[0] = {self.item(sc, n, kinds)}",
                                 f"{name}.reverse()", f"{name} = {name} + [{self.item(sc, n, kinds)}]",
                                 f"{name} += [{self.item(sc, n, kinds)}]", f"{name}.insert(0, {self.item(sc, n, kinds)})"])
            return [change] + self.loop_through(sc, name, h, n, objects)
        if form == 4:  # mutated in the loop: the loop sees the change
            change = rng.choice([f"{name}[-1] = {self.item(sc, n, kinds)}", f"{name}.pop()"])
            return [f"{name} = {name} + [{self.item(sc, n, kinds)}]"] + \
                self.loop_through(sc, name, h, n, objects, extra=[f"if len({name}) > 1:", f"    {change}"]) \
                if self.call_builtin(sc, "len") else self.loop_through(sc, name, h, n, objects)
        if form == 5:  # lambdas capturing the loop variable (late binding, or bound by a default)
            gs, it, g = (self.tail_local(sc, ("o",)) for _ in range(3))
            bind = f", {it}={it}" if self.p(0.4) else ""
            return [f"{gs} = []", f"for {it} in {name}:", f"    {gs}.append(lambda z{bind}: {it}(z) * 0.5 + 0.5 * z)",
                    f"for {g} in {gs}:", f"    {h} = {g}({h})"]
        if form == 6:  # the loop variable read after the loop
            it = self.tail_local(sc, ("o",))
            return [f"for {it} in {name}:", f"    {h} = {it}({h})", f"{h} = {h} + 0.5 * {it}({h})"]
        if form == 7:  # an alias iterated
            alias = self.tail_local(sc, ("o",))
            return [f"{alias} = {name}"] + self.loop_through(sc, alias, h, n, objects)
        if form == 8 and objects and "gate" not in kinds:
            it = self.tail_local(sc, ("o",))
            return [f"for {it} in {name}:", f"    {h} = {it}.forward({h}) + {h}"]
        return self.loop_through(sc, name, h, n, objects)
