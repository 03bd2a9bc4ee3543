"""Records in generated programs: module-level dataclasses and named tuples (``records``
feature), built in functions by position or keyword and read by field, index and method."""
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

    def record_classes(self):
        """Module-level record classes (``self.records``: (name, "dc" | "nt")) and their text."""
        self.records, lines = [], []
        if not self.on("records"):
            return lines
        self.module_names |= {"dataclasses", "typing"}
        for tag in ("dc", "nt"):
            name = self.rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
            self.module_names.add(name)
            self.records.append((name, tag))
            head = ["@dataclasses.dataclass", f"class {name}:"] if tag == "dc" else [f"class {name}(typing.NamedTuple):"]
            lines += [""] + head + indent(["first: object", "second: object = 0.5", "",
                                           "def scaled(self):", "    return self.first * 1.5"])
        return ["import dataclasses", "import typing"] + lines + [""]
