"""Statements, functions and whole programs for the generator (expressions: generate.py)."""
import re

import numpy as np

from .caches import CacheStatements
from .generate import FEATURES, Fn, Generator, Program, Scope, _simple
from .getters import GetterStatements
from .language import LanguageStatements
from .local_lists import LocalListStatements
from .loops import LoopStatements
from .methods import MethodStatements
from .names import CALLED_BUILTINS
from .records import RecordStatements
from .starred import StarredStatements
from .stepping import SteppingStatements
from .templates import CONVERT, OPERAND_SHAPES, SHAPES, indent

class ProgramGenerator(MethodStatements, LanguageStatements, LoopStatements, RecordStatements, SteppingStatements,
                       CacheStatements, StarredStatements, LocalListStatements, GetterStatements, Generator):
    # ---- blocks -------------------------------------------------------------------------
    def block(self, sc, n, depth):
        lines = []
        for _ in range(n):
            lines += self.statement(sc, depth)
        return lines or ["pass"]

    def statement(self, sc, depth):
        rng = self.rng
        options = [("assign", 4)]
        arrays = [n for n in sc.floats(writable=True) if sc.kinds[n][1] != ()]
        if self.on("stores") or self.on("views") or self.on("augassign"):
            options.append(("buffer", 1))
        if self.on("augassign") and [n for n in sc.floats() if n not in sc.taken]:
            options.append(("aug", 2))
        if self.on("stores") and arrays:
            options.append(("store", 3))
        if self.on("views") and [n for n in sc.floats() if sc.kinds[n][1] != ()]:
            options.append(("view", 1))
        if self.on("unpacking"):
            options.append(("unpack", 1))
        if depth > 0:
            if self.on("branches"):
                options.append(("if", 2))
            if self.on("loops"):
                options.append(("for", 3))
            if self.on("while"):
                options.append(("while", 1))
        if self.on("breaks") and sc.loop_depth:
            options.append(("jump", 2))
        if self.on("early_return") and (sc.loop_depth or depth < 2):
            options.append(("return", 1))
        if self.on("lists"):
            options.append(("list", 1 + 2 * bool(sc.of_kind("l"))))
        if self.records:
            options.append(("record", 1))
        if self.on("replace") and self.record_names(sc):
            options.append(("replace", 3))
        if self.on("try") and depth > 0 and not sc.loop_depth:
            options.append(("try", 2))
        if self.on("joins"):
            options.append(("join", 1 + bool(sc.of_kind("c"))))
        if self.layers:
            options.append(("layers", 1))
        if self.stepper and depth > 0:
            options.append(("step", 2))
        if self.cacher:
            options.append(("cache", 2))
        if self.parts:
            options.append(("parts", 2))
        if self.on("closures") and sc.outer is None and sc.result is not None and getattr(sc, "entry", False):
            options.append(("closure", 1))
        kind = rng.choices([k for k, _ in options], [w for _, w in options])[0]
        return getattr(self, "st_" + kind)(sc, depth)

    def writable(self, sc, base):
        kind = sc.kinds.get(base)
        return kind is not None and kind[0] == "a" and kind[2]

    def value_for(self, sc, shape, writable, depth):
        code, base = self.expr(sc, shape, depth)
        if writable and shape != () and (base is None or not self.writable(sc, base)) and base is not None:
            code = self.rng.choice(["NP.copy({})", "NP.array({})", "{}.copy()", "{} * 1.0"]).format(
                code if _simple(code) else f"({code})")
        return code

    # ---- simple statements --------------------------------------------------------------
    def st_assign(self, sc, depth):
        shape = self.rng.choice(SHAPES)
        existing = [n for n in sc.floats(shape) if n not in sc.taken]
        if existing and self.p(0.4):
            name = self.rng.choice(existing)
        else:
            writable = shape != () and self.p(0.5)
            name = sc.new_name(("a", shape, writable))
        code = self.value_for(sc, shape, sc.kinds[name][2], depth)
        sc.defined[name] = None
        return [f"{name} = {code}"]

    def st_buffer(self, sc, depth):
        shape = self.rng.choice([s for s in SHAPES if s != ()])
        name = sc.new_name(("a", shape, True))
        src = sc.floats(shape)
        forms = [f"NP.zeros({shape!r})", f"NP.ones({shape!r})", f"NP.full({shape!r}, {self.const()})"]
        if src:
            s = self.rng.choice(src)
            forms += [f"NP.zeros_like({s})", f"{s}.copy()", f"NP.array({s})", f"NP.copy({s})", f"{s} * 1.0"]
        sc.defined[name] = None
        return [f"{name} = {self.rng.choice(forms)}"]

    def st_aug(self, sc, depth):
        name = self.rng.choice([n for n in sc.floats() if n not in sc.taken])
        _, shape, writable = sc.kinds[name]
        other = self.rng.choice(OPERAND_SHAPES[shape]) if self.on("broadcast") else shape
        value = self.expr(sc, other, depth)[0]
        if shape != () and not writable:
            return [f"{name} = {name} + {value}"]
        op = self.rng.choice(["+=", "-=", "*=", "/="])
        if op == "/=":
            value = f"(1.5 + ({value}) ** 2)"
        elif op == "*=":
            value = f"NP.tanh({value})"  # keeps repeated products bounded
        return [f"{name} {op} {value}"]

    def index_for(self, sc, shape, with_mask):
        """(index text, shape of the region) for a store into an array of ``shape``."""
        rng = self.rng
        n = shape[0]
        if len(shape) == 1:
            forms = [(f"[{self.index(sc, n)}]", ()), ("[1:3]", ()), ("[::2]", ()), ("[:]", shape),
                     ("[...]", shape), ("[-1]", ())]
            if self.call_builtin(sc, "slice"):
                forms.append(("[slice(1, None, 2)]", ()))
            if self.on("fancy"):
                forms += [(f"[[0, {n - 1}]]", ()), ("[[1, 1, 2]]", ()), ("[NP.array([2, 0])]", ())]
                if with_mask:
                    forms.append(("MASK", ()))
        else:
            m = shape[1]
            forms = [(f"[{self.index(sc, n)}]", (m,)), (f"[{self.index(sc, n)}, {self.index(sc, m)}]", ()),
                     (f"[:, {self.index(sc, m)}]", (n,)), ("[1:]", (m,)), (f"[..., {self.index(sc, m)}]", (n,)),
                     ("[:, 1:3]", ()), (f"[{self.index(sc, n)}][{self.index(sc, m)}]", ())]
            if self.on("fancy"):
                forms += [("[[0, 2]]", (m,)), ("[[1, 1]]", (m,)), (f"[:, [{m - 1}, 0]]", ())]
                if with_mask:
                    forms.append(("MASK", ()))
        index, region = rng.choice(forms)
        if index == "MASK":
            index = f"[{self.expr(sc, shape, 1)[0]} > {self.const(-0.5, 0.5)}]"
        return index, region

    def st_store(self, sc, depth):
        name = self.rng.choice([n for n in sc.floats(writable=True) if sc.kinds[n][1] != ()])
        shape = sc.kinds[name][1]
        index, region = self.index_for(sc, shape, with_mask=True)
        if region != () and self.p(0.3):
            region = ()
        value = self.expr(sc, region, depth)[0]
        op = self.rng.choice(["=", "=", "+=", "-=", "*="])
        if op == "*=":
            value = f"NP.tanh({value})"
        return [f"{name}{index} {op} {value}"]

    def st_view(self, sc, depth):
        src = self.rng.choice([n for n in sc.floats() if sc.kinds[n][1] != ()])
        _, shape, writable = sc.kinds[src]
        forms = [(src, shape)]
        for (a, b), templates in CONVERT.items():
            if a == shape:
                forms += [(t.format(src, i3=self.index(sc, 3), i4=self.index(sc, 4)), b)
                          for t, f, is_view in templates if is_view is True and b in SHAPES]
        code, dst = self.rng.choice(forms)
        name = sc.new_name(("a", dst, writable))
        sc.defined[name] = None
        return [f"{name} = {code}"]

    def st_unpack(self, sc, depth):
        rng = self.rng
        mine = [n for n in sc.floats() if n not in sc.taken]
        pairs = [(a, b) for a in mine for b in mine if a < b and sc.kinds[a] == sc.kinds[b]]
        if pairs and self.p(0.3):
            a, b = rng.choice(pairs)
            return [f"{a}, {b} = {b}, {a}"]
        tuples = [fn for fn in sc.calls if isinstance(fn.result, list) and fn in self.helpers]
        if tuples and self.p(0.5):
            fn = rng.choice(tuples)
            call = self.call_text(sc, fn, depth - 1)
            targets = self.targets(sc, fn.result)
            return [f"{unpacked(targets)} = {call}"]
        seqs = [n for n in sc.of_kind("c") if sc.kinds[n][1][0] not in ("dict", "dc")]
        if seqs and self.p(0.4):
            c = rng.choice(seqs)
            targets = self.targets(sc, sc.kinds[c][1][1])
            return [f"{unpacked(targets)} = {c}"]
        shapes = [rng.choice(SHAPES) for _ in range(rng.choice([2, 2, 3]))]
        values = [self.expr(sc, s, depth - 1)[0] for s in shapes]
        targets = self.targets(sc, shapes)
        if len(shapes) == 3 and self.p(0.5):
            return [f"{targets[0]}, ({targets[1]}, {targets[2]}) = {values[0]}, ({values[1]}, {values[2]})"]
        return [f"{', '.join(targets)} = {', '.join(values)}"]

    def targets(self, sc, shapes):
        names = []
        for s in shapes:
            name = sc.new_name(("a", s, False))
            while name in names:
                name = sc.new_name(("a", s, False))
            names.append(name)
        for name in names:
            sc.defined[name] = None
        return names

    def st_list(self, sc, depth):
        lists = sc.of_kind("l")
        if lists and self.on("keyed") and self.p(0.3):  # best = max(xs, key=...): an item, so read-only
            name = self.rng.choice(lists)
            shape = sc.kinds[name][1]
            reads = self.keyed_reads(sc, name, shape)
            if reads:
                item = sc.new_name(("a", shape, False))
                sc.defined[item] = None
                return [f"{item} = {self.rng.choice(reads)}"]
        if lists and self.p(0.7):
            name = self.rng.choice(lists)
            return [f"{name}.append({self.expr(sc, sc.kinds[name][1], depth)[0]})"]
        shape = self.rng.choice(SHAPES)
        value = self.expr(sc, shape, depth)[0]
        name = sc.new_name(("l", shape))
        sc.defined[name] = None
        return [f"{name} = [{value}]"]

    def st_jump(self, sc, depth):
        return [f"if {self.condition(sc, 0)}:", "    " + self.rng.choice(["break", "continue"])]

    def st_return(self, sc, depth):
        return [f"if {self.condition(sc, 0)}:", "    return " + self.result_expr(sc, depth)]

    def result_expr(self, sc, depth):
        tag, spec = sc.result
        if tag == "a":
            return self.expr(sc, spec, depth)[0]
        values = [self.expr(sc, s, depth)[0] for s in spec]
        if tag == "tuple":
            return ", ".join(values) if self.p(0.7) else f"({', '.join(values)})"
        if tag == "list":
            return f"[{', '.join(values)}]"
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(sc.result_keys, values)) + "}"

    # ---- compound statements ------------------------------------------------------------
    def st_if(self, sc, depth):
        pre = sc.copy_defined()
        lines = [f"if {self.condition(sc, 1)}:"] + indent(self.block(sc, self.rng.randint(1, 3), depth - 1))
        branches = [sc.defined]
        if self.p(0.3):
            sc.defined = dict(pre)
            lines += [f"elif {self.condition(sc, 1)}:"] + indent(self.block(sc, self.rng.randint(1, 2), depth - 1))
            branches.append(sc.defined)
        if self.p(0.6):
            sc.defined = dict(pre)
            lines += ["else:"] + indent(self.block(sc, self.rng.randint(1, 2), depth - 1))
            branches.append(sc.defined)
        else:
            branches.append(pre)
        sc.defined = {k: v for k, v in branches[0].items() if all(k in b for b in branches[1:])}
        return lines

    def st_closure(self, sc, depth):
        rng = self.rng
        name = sc.new_name(("fn", len(sc.kinds)))
        inner = Scope(self, sc.taken | set(sc.kinds), sc)
        inner.kinds = {n: (("a", k[1], False) if k[0] == "a" else k) for n, k in sc.kinds.items()}
        inner.defined = {n: v for n, v in sc.defined.items() if sc.kinds[n][0] in ("a", "i", "c", "l", "n")}
        inner.calls = list(sc.calls)
        params = []
        for _ in range(rng.randint(1, 2)):
            shape = rng.choice(SHAPES)
            pname = rng.choice([n for n in self.pool if n not in self.module_names and n != name
                                and n not in CALLED_BUILTINS and n not in [p for p, _ in params]])
            params.append((pname, shape))
            inner.kinds[pname] = ("a", shape, False)
            inner.defined[pname] = None
            inner.taken.discard(pname)
        result = rng.choice(SHAPES)
        fn = Fn(name, params, {}, result)
        signature = ", ".join(p for p, _ in params)
        if self.p(0.4):
            lines = [f"{name} = lambda {signature}: {self.expr(inner, result, 2)[0]}"]
        else:
            inner.result = ("a", result)
            body = self.block(inner, rng.randint(0, 2), 0) if self.p(0.6) else []
            lines = [f"def {name}({signature}):"] + indent(body + [f"return {self.expr(inner, result, 2)[0]}"])
        sc.calls.append(fn)
        sc.defined[name] = None
        return lines

    # ---- functions and modules ----------------------------------------------------------
    def helper(self):
        rng = self.rng
        name = rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
        self.module_names.add(name)
        sc = Scope(self, self.module_names)
        params, defaults = [], {}
        for _ in range(rng.randint(1, 3)):
            shape = rng.choice(SHAPES)
            pname = sc.new_name(("a", shape, False))
            if pname in [p for p, _ in params]:
                continue
            params.append((pname, shape))
            sc.defined[pname] = None
        if self.p(0.4):
            pname = sc.new_name(("a", (), False))
            if pname not in [p for p, _ in params]:
                params.append((pname, ()))
                defaults[pname] = self.const()
                sc.defined[pname] = None
        result = [rng.choice(SHAPES), rng.choice(SHAPES)] if self.on("unpacking") and self.p(0.25) \
            else rng.choice([(), (), (4,), (3, 4)])
        sc.result = ("tuple", result) if isinstance(result, list) else ("a", result)
        head = ", ".join(p + (f"={defaults[p]}" if p in defaults else "") for p, _ in params)
        prologue, keyword_kinds = [], {}
        if self.on("keywords") and self.p(0.6):
            head, prologue, keyword_kinds = self.keyword_parameters(sc, params, defaults)
        body = prologue + self.block(sc, rng.randint(1, 3), 2 if self.on("loops") else 1)
        if self.on("closures") and sc.result[0] == "a" and not prologue and self.p(0.2):
            sc.defined = {p: None for p, _ in params}
            lines = [f"{name} = lambda {head}: {self.expr(sc, result, 2)[0]}"]
        else:
            lines = [f"def {name}({head}):"] + indent(body + ["return " + self.result_expr(sc, 2)])
        self.helpers.append(Fn(name, params, defaults, result, **keyword_kinds))
        return lines

    def program(self):
        rng = self.rng
        self.np_alias = rng.choice(["np", "np", "numpy", "onp", "jnp"])
        self.math_alias = rng.choice(["math", "math", "m_"])
        self.module_names = {self.np_alias, self.math_alias}
        header = [f"import numpy as {self.np_alias}" if self.np_alias != "numpy" else "import numpy",
                  f"import math as {self.math_alias}" if self.math_alias != "math" else "import math", ""]
        self.globals = []
        self.cacher = self.parts = None
        if self.on("globals"):
            for shape, value in [((), "0.75"), ((4,), "NP.linspace(0.5, 1.5, 4)")]:
                if self.p(0.5):
                    gname = rng.choice([n for n in self.pool if n not in self.module_names
                                        and n not in CALLED_BUILTINS])
                    self.module_names.add(gname)
                    self.globals.append((gname, shape))
                    header.append(f"{gname} = {value}")
        header += self.record_classes()
        self.stepper = None
        classes = self.model_classes()
        helpers = []
        if self.on("stepping") and self.p(0.7):
            helpers += [""] + self.step_helper() + [""]
            self.helpers.append(self.stepper)
        if self.wants_cache_helper():
            helpers += [""] + self.cache_helper() + [""]
        if self.wants_parts_helpers():
            helpers += [""] + self.parts_helpers() + [""]
        if self.on("helpers"):
            for _ in range(rng.choice([0, 1, 1, 2])):
                helpers += [""] + self.helper() + [""]
        entry = rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
        self.module_names.add(entry)
        sc = Scope(self, self.module_names)
        sc.entry = True
        bound = self.model is not None and self.p(0.5)  # the entry a method of the module's object
        if bound:
            self.method_scope(self.model[2], self.model[3], [], outer=sc)
        params, args_spec = [], []
        for _ in range(rng.randint(1, 3)):
            shape = rng.choice(SHAPES)
            pname = sc.new_name(("a", shape, False))
            if pname in params:
                continue
            params.append(pname)
            args_spec.append(("a", shape))
            sc.defined[pname] = None
        if self.on("containers") and self.p(0.4):
            kind = rng.choice(["list", "tuple", "dict"])
            if kind == "dict":
                spec = ("dict", {k: rng.choice(SHAPES) for k in rng.sample(["w", "b", "x", "scale", "v"], 2)})
            else:
                spec = (kind, [rng.choice(SHAPES) for _ in range(2)])
            pname = sc.new_name(("c", spec))
            if pname not in params:
                params.append(pname)
                args_spec.append(("c", spec))
                sc.defined[pname] = None
        if self.on("int_params") and self.p(0.3):
            pname = sc.new_name(("n",))
            if pname not in params:
                params.append(pname)
                args_spec.append(("n", 3))
                sc.defined[pname] = None
        result = ("a", ())
        if self.p(0.3):
            choice = rng.choice(["array", "tuple", "dict", "list"] if self.on("containers") else ["array"])
            if choice == "array":
                result = ("a", rng.choice(SHAPES))
            else:
                result = (choice, [rng.choice(SHAPES) for _ in range(2)])
        signature = list(params)
        if self.on("keywords") and self.p(0.4):  # a scalar left to its default (maybe keyword-only)
            pname = sc.new_name(("a", (), False))
            if pname not in params:
                signature += (["*"] if self.p(0.4) else []) + [f"{pname}={self.const()}"]
                sc.defined[pname] = None
                self.mark("keywords")
        sc.result = result
        sc.result_keys = rng.sample(["loss", "y", "grad", "v", "out"], 2)
        body = self.block(sc, rng.randint(2, max(2, int(5 * self.size))), 2)
        returned = self.result_expr(sc, 2)
        tail_module, tail, added = self.tail(sc, "\n".join(header + classes + helpers + body + [returned]), result)
        if added:  # the tail features' scalars join the result
            returned = f"({returned}) + {' + '.join(added)}"
        lines = [f"def {entry}({', '.join(['self'] * bound + signature)}):"] + indent(
            body + tail + ["return " + returned])
        helpers += [""] + tail_module if tail_module else []
        if bound:
            classes[self.model_end:self.model_end] = [""] + indent(lines)
            entry, lines = f"{self.model[0]}.{entry}", []
        if self.model and re.search(rf"\b{self.model[0]}\.", "\n".join(helpers + lines)) or bound:
            self.mark("methods")
        text = "\n".join(header + classes + helpers + [""] + lines) + "\n"
        text = text.replace("NP.", self.np_alias + ".").replace("MATH.", self.math_alias + ".")
        args = draw_args(args_spec, np.random.default_rng(self.seed))
        wrt = tuple(i for i, (tag, _) in enumerate(args_spec) if tag != "n")
        return Program(self.seed, text, entry, args, wrt, result == ("a", ()), self.features, args_spec,
                       frozenset(self.uses))


def draw_args(spec, rng):
    def one(shape):
        return float(rng.uniform(-1, 1)) if shape == () else rng.uniform(-1, 1, shape)
    args = []
    for tag, s in spec:
        if tag == "a":
            args.append(one(s))
        elif tag == "n":
            args.append(s)
        elif s[0] == "dict":
            args.append({k: one(v) for k, v in s[1].items()})
        else:
            items = [one(v) for v in s[1]]
            args.append(items if s[0] == "list" else tuple(items))
    return args


def unpacked(targets):
    """The target list unpacking a sequence into ``targets`` (``x, = t`` for one: ``x = t`` binds t)."""
    return ", ".join(targets) + ("," if len(targets) == 1 else "")


def generate(seed, features=FEATURES, size=1.0):
    """A ``Program`` drawn from ``seed`` using only ``features``."""
    return ProgramGenerator(seed, features, size).program()
