"""Records in generated programs: module-level dataclasses and named tuples (``records``
feature), built in functions by position or keyword and read by field, index and method, and
updated functionally by ``dataclasses.replace``/``_replace`` and step helpers (``replace``)."""
from .generate import RECORD_FIELDS
from .names import CALLED_BUILTINS
from .templates import SHAPES, indent


class RecordStatements:
    """The statements of ``ProgramGenerator`` that build records (a mixin of it)."""

    def st_record(self, sc, depth):
        """``r = Rec(e1, e2)`` (a dataclass or named tuple of the module), by position or keyword,
        the second field maybe left to its literal default."""
        rng = self.rng
        cls, tag = rng.choice(self.records)
        shapes = [rng.choice(SHAPES), ()]
        if rng.random() < 0.5:
            shapes[1] = rng.choice(SHAPES)
        values = [self.expr(sc, shape, depth - 1)[0] for shape in shapes]
        if shapes[1] == () and rng.random() < 0.3:
            args = [values[0]]  # the default 0.5
        elif rng.random() < 0.4:
            args = [f"second={values[1]}", f"first={values[0]}"]
        else:
            args = values
        name = sc.new_name(("c", (tag, shapes, cls)))
        sc.defined[name] = None
        return [f"{name} = {cls}({', '.join(args)})"]

    def st_replace(self, sc, depth):
        """``r = dataclasses.replace(r, first=e)`` (``r._replace``, or ``r = step(r, c)`` of a module
        step helper) of a record built in the function, in a ``for`` loop or once."""
        rng = self.rng
        name = rng.choice(self.record_names(sc))
        tag, shapes, cls = sc.kinds[name][1]
        loop = self.call_builtin(sc, "range") and self.p(0.7)
        if loop:
            i = self.loop_var(sc, ("i",))
            k = rng.randint(2, 4)
            sc.defined[i] = k
        updates = []
        for _ in range(rng.randint(1, 2)):
            if self.p(0.3):
                updates.append(f"{name} = {self.steps[cls]}({name}, {self.const(0.5, 1.1)})")
                continue
            fields = rng.sample(range(2), rng.randint(1, 2))
            given = ", ".join(f"{RECORD_FIELDS[f]}={self.expr(sc, shapes[f], depth - 1)[0]}" for f in fields)
            updates.append(f"{name} = dataclasses.replace({name}, {given})" if tag == "dc"
                           else f"{name} = {name}._replace({given})")
        self.mark("replace")
        if not loop:
            return updates
        return self.loop_body(sc, depth, f"for {i} in range({k}):", {i}, first=updates)

    def record_names(self, sc):
        """Names of records built in this function (bound by ``Rec(...)`` and replacements only)."""
        return [n for n in sc.of_kind("c") if sc.kinds[n][1][0] in ("dc", "nt")]

    def step_helpers(self):
        """A module step function per record class, returning the record replaced (or rebuilt)."""
        lines = []
        for cls, tag in self.records:
            name = self.rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
            self.module_names.add(name)
            self.steps[cls] = name
            first = f"s.first * h + {self.const(0.05, 0.3)} * NP.sin(s.first)"
            second = f"s.second + h * NP.tanh(NP.sum(s.first))"
            returns = [f"dataclasses.replace(s, first={first})" if tag == "dc" else f"s._replace(first={first})",
                       f"{cls}({first}, {second})",
                       f"dataclasses.replace(s, second={second})" if tag == "dc" else f"s._replace(second={second})"]
            body = []
            if self.p(0.4):
                body = [f"if NP.sum(s.first) > {self.const(-0.5, 0.5)}:", "    return s"]
            lines += ["", f"def {name}(s, h):"] + indent(body + ["return " + self.rng.choice(returns)])
        return lines

    def record_classes(self):
        """Module-level record classes (``self.records``: (name, "dc" | "nt")) and their text."""
        self.records, self.steps, lines = [], {}, []
        if not self.on("records") and not self.on("replace"):
            return lines
        self.module_names |= {"dataclasses", "typing"}
        for tag in ("dc", "nt"):
            name = self.rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
            self.module_names.add(name)
            self.records.append((name, tag))
            frozen = "(frozen=True)" if self.on("replace") and self.p(0.4) else ""
            head = [f"@dataclasses.dataclass{frozen}", f"class {name}:"] if tag == "dc" else \
                [f"class {name}(typing.NamedTuple):"]
            lines += [""] + head + indent(["first: object", "second: object = 0.5", "",
                                           "def scaled(self):", "    return self.first * 1.5"])
        if self.on("replace"):
            lines += self.step_helpers()
        return ["import dataclasses", "import typing"] + lines + [""]
