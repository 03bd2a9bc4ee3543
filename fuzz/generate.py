"""Random, well-formed NumPy programs covering the language srcad claims to differentiate.

A program is a module: numpy (and math) imported under drawn aliases, module-level constants
and helper functions, and an entry function whose parameters are arrays, floats and
containers of arrays. Every value has a *kind* fixed per name and function, so the program
runs by construction; ``Program.args`` are inputs drawn for it.

Programs never modify their caller's arrays: a name is either *writable* (bound only to
arrays the function made, or views of them) or read-only (parameters and views of them),
and only writable names are updated in place. Variable names come from ``names.name_pool``.

``FEATURES`` lists the constructs; ``generate(seed, features=...)`` uses only those given.
"""
import ast
import random
from dataclasses import dataclass, field

from .names import CALLED_BUILTINS, name_pool
from .templates import BINARY, CONVERT, OPERAND_SHAPES, PRODUCTS, SCALAR_BINARY, SCALAR_UNARY, UNARY

FEATURES = (
    "broadcast",   # arithmetic between different shapes, keepdims operands
    "elementwise",  # np.sin, np.exp, ... and math.* on scalars
    "kinks",       # np.maximum, abs, clip, max/min reductions (inputs keep away from the kinks)
    "reductions",  # sum/mean/prod/max with axis and keepdims
    "products",    # @, dot, einsum, outer
    "shapes",      # reshape, transpose, ravel, concatenate, stack, tile, flip
    "slices",      # basic indexing and slicing reads
    "fancy",       # integer-array and boolean-mask indexing, np.where
    "stores",      # subscript stores and augmented subscript stores
    "augassign",   # x += e on names
    "views",       # aliases and views (x.T, reshape, slices, np.flip) of arrays updated in place
    "branches",    # if/elif/else and conditional expressions on data
    "loops",       # for over range/arrays/enumerate/zip/reversed, nested
    "while",       # while loops with data-dependent conditions
    "breaks",      # break/continue (nested too)
    "early_return",  # return inside loops and branches
    "lists",       # list append then np.stack / sum / indexing
    "comprehensions",  # list comprehensions
    "unpacking",   # tuple unpacking and swaps
    "containers",  # list/tuple/dict parameters and results
    "helpers",     # module-level helper functions (loops, stores, defaults), called anywhere
    "closures",    # nested defs reading the enclosing scope, lambdas
    "globals",     # module-level constants
    "int_params",  # a non-differentiable int parameter used in range() and indexing
    "records",     # module-level dataclasses and named tuples built in the function, read by field and method
    "spreads",     # helper calls with their positional arguments spread from a tuple or list display
    "methods",     # a module-level class (and subclass) holding arrays: methods, super(), a property, static and
                   # class methods, called on a module-level object; the entry maybe that object's bound method
    "generators",  # generator expressions read by sum/max/min/list/tuple/any/all; map/filter/genexps in for headers
    "keywords",    # keyword-only parameters, *args and **kwargs helpers, calls by keyword, an entry's defaults
    "try",         # try/except/else/finally around assignments, raising on data
    "replace",     # dataclasses.replace / _replace of records, stepped in loops and by a module-level step helper
    "joins",       # tuple/list joins of known length (t + (y,), t += (y,)) and starred unpacking
    "held",        # with methods: a function kept in an attribute (self.act = np.tanh, a lambda, a partial), called
    "layers",      # with methods: a module-level list of objects of the classes, looped over and read by item
    "keyed",       # with lists: max/min/sorted of a list of arrays by a key lambda (the derivative follows the item taken)
    "stepping",    # a helper returning (state, err) stepping a state in for loops and in while loops testing its err
    "caches",      # a helper returning a dict of its intermediate arrays, bound by the caller and read back by key
    "starred",     # a helper returning a tuple of parts, unpacked with a star or spread into a helper taking them
    "local_lists",  # lists of objects of module classes, lambdas, functions made in the entry and looped over
                    # (comprehensions over zip/range, enumerate, twice, mutated, aliased, captured by lambdas)
    "getters",     # operator.itemgetter/attrgetter as key= of max/min/sorted, in map/filter/reduce; max over tuples
)
NEW_FEATURES = FEATURES[FEATURES.index("methods"):]  # counted per program using them (Program.uses)
RECORD_FIELDS = ("first", "second")

UNKNOWN = "?"  # the base of a value that may share memory with something read-only


@dataclass
class Program:
    seed: int
    source: str
    entry: str
    args: list
    wrt: tuple
    scalar_output: bool
    features: frozenset = field(default_factory=frozenset)
    spec: list = field(default_factory=list)
    uses: frozenset = field(default_factory=frozenset)  # the NEW_FEATURES the program's text uses


@dataclass
class Fn:
    """A callable the generated code may call: its parameter shapes, defaults and result."""
    name: str
    params: list            # [(name, shape)]
    defaults: dict          # name -> constant text
    result: object          # a shape, or a tuple of shapes
    kwonly: tuple = ()      # parameters passed by keyword only
    star: object = None     # the shape of the items of *args, if it takes them
    options: tuple = ()     # **kwargs keys it reads (scalars), if it takes them


class Scope:
    """What one function body may read and write while it is being generated."""

    def __init__(self, gen, taken, outer=None):
        self.gen = gen
        self.kinds = {}          # name -> ("a", shape, writable) | ("i",) | ("l", shape) | ("c", kind) | ("fn", Fn)
        self.defined = {}        # name -> int bound for ints, else None
        self.taken = set(taken)  # never bound in this function
        self.calls = list(outer.calls) if outer else list(gen.helpers)
        self.loop_depth = 0
        self.result = None
        self.shadowed = set()    # builtins this function uses as variables (so never calls)
        self.builtins_called = set()  # builtins called here (a comprehension's scope shares its function's)
        self.outer = outer

    def copy_defined(self):
        return dict(self.defined)

    def can_call(self, builtin):
        return builtin not in self.shadowed and builtin not in self.kinds

    def floats(self, shape=None, writable=None):
        out = []
        for n in self.defined:
            k = self.kinds[n]
            if k[0] == "a" and (shape is None or k[1] == shape) and (writable is None or k[2] == writable):
                out.append(n)
        return out

    def ints(self):
        return [(n, self.defined[n]) for n in self.defined if self.kinds[n][0] == "i"]

    def of_kind(self, tag):
        return [n for n in self.defined if self.kinds[n][0] == tag]

    def new_name(self, kind):
        """A name for a new binding of ``kind``: an unused pool name (or one already of this kind)."""
        rng = self.gen.rng
        for _ in range(50):
            name = rng.choice(self.gen.pool)
            if name in self.taken:
                continue
            if name in CALLED_BUILTINS:
                if name in self.gen.used_builtins_of(self):
                    continue
                self.shadowed.add(name)
            if name in self.kinds and self.kinds[name] != kind:
                continue
            if name in self.defined and kind[0] in ("fn", "l"):
                continue
            self.kinds[name] = kind
            return name
        name = f"v{len(self.kinds)}"
        self.kinds[name] = kind
        return name


class Generator:
    def __init__(self, seed, features=FEATURES, size=1.0):
        self.rng = random.Random(seed)
        self.seed = seed
        self.features = frozenset(features)
        self.size = size
        self.pool = name_pool()
        self.helpers = []
        self.records = []      # (class name, "dc" | "nt") of the module's record classes
        self.uses = set()      # NEW_FEATURES the program uses
        self.nesting = 0
        self.globals = []

    # ---- helpers ------------------------------------------------------------------------
    def on(self, feature):
        if feature is None:
            return True
        if feature.startswith("builtin:"):
            return True
        return feature in self.features

    def mark(self, feature):
        self.uses.add(feature)

    def p(self, prob):
        return self.rng.random() < prob

    @staticmethod
    def used_builtins_of(scope):
        return scope.builtins_called

    def call_builtin(self, scope, name):
        """Whether ``scope`` may call builtin ``name``; records that it does."""
        s = scope
        while s is not None:  # a nested function sees the enclosing function's variables
            if not s.can_call(name):
                return False
            s = s.outer
        s = scope
        while s is not None:
            self.used_builtins_of(s).add(name)
            s = s.outer
        return True

    def const(self, lo=0.2, hi=1.5):
        return repr(round(self.rng.uniform(lo, hi), 2))

    # ---- integers -----------------------------------------------------------------------
    def index(self, sc, n):
        """An int expression in [-n, n)."""
        rng = self.rng
        ints = [(name, hi) for name, hi in sc.ints() if hi is not None]
        if ints and self.p(0.7):
            name, hi = rng.choice(ints)
            if hi <= n:
                forms = [name, f"{name} - 1", f"-1 - {name}", f"{n - 1} - {name}", f"({name} + 1) % {n}"]
                if self.call_builtin(sc, "min") and self.p(0.2):
                    forms.append(f"min({name}, {n - 1})")
                return rng.choice(forms)
            return f"{name} % {n}"
        return str(rng.randrange(-n, n))

    # ---- expressions --------------------------------------------------------------------
    def expr(self, sc, shape, depth):
        """(code, base): an expression of exactly ``shape``; base names the variable whose memory
        the value may share (None for a fresh array or a scalar)."""
        rng = self.rng
        if depth <= 0 or self.p(0.25):
            return self.leaf(sc, shape)
        choices = ["unary", "binary", "binary", "convert"]
        if shape == ():
            choices += ["scalar"]
        if shape in PRODUCTS and self.on("products"):
            choices.append("product")
        if self.on("branches"):
            choices.append("ifexp")
        if self.on("fancy"):
            choices.append("where")
        if sc.calls and (self.on("helpers") or self.on("closures")):
            choices += ["call", "call"]
        if self.on("lists") and any(sc.kinds[n][1] == shape for n in sc.of_kind("l")):
            choices.append("list")
        if self.on("comprehensions"):
            choices.append("comp")
        if self.on("generators"):
            choices.append("genexp")
        if (self.on("containers") or self.on("records") or self.on("joins")) and sc.of_kind("c"):
            records = any(sc.kinds[n][1][0] in ("nt", "dc") for n in sc.of_kind("c"))
            choices += ["container"] * (3 if records else 1)  # a record built is read, mostly
        kind = rng.choice(choices)
        d = depth - 1
        if kind == "unary":
            forms = [t for t, f in UNARY if self.on(f)]
            if shape == ():
                forms += [t for t, f in SCALAR_UNARY if self.on(f) and not (t.startswith("abs") and not self.call_builtin(sc, "abs"))
                          and not (t.startswith("float") and not self.call_builtin(sc, "float"))]
            return rng.choice(forms).format(self.expr(sc, shape, d)[0]), None
        if kind == "binary":
            other = rng.choice(OPERAND_SHAPES[shape]) if self.on("broadcast") else shape
            forms = [t for t, f in BINARY if self.on(f)]
            if shape == () and self.on("kinks"):
                forms += [t for t, _ in SCALAR_BINARY if self.call_builtin(sc, t[:3])]
                other = ()
            a, b = self.expr(sc, shape, d)[0], self.expr(sc, other, d)[0]
            if self.p(0.5):
                a, b = b, a  # the broadcast operand on either side
            if a == b:  # max(s, s) is always at its kink
                forms = [t for t, f in BINARY if f != "kinks" and self.on(f)]
            if not b.isidentifier():  # min(a, t, t) passes one value twice; an expression twice is a tie
                forms = [t for t in forms if t.count("{1}") < 2]
            return rng.choice(forms).format(a, b), None
        if kind == "scalar":
            return self.const(), None
        if kind == "convert":
            return self.convert(sc, shape, d)
        if kind == "product":
            template, s0, s1 = rng.choice(PRODUCTS[shape])
            return "(" + template.format(*(_wrapped(self.expr(sc, s, d)[0]) for s in (s0, s1))) + ")", None
        if kind == "ifexp":
            test = self.condition(sc, d)
            (a, base_a), (b, base_b) = self.expr(sc, shape, d), self.expr(sc, shape, d)
            return f"({a} if {test} else {b})", (UNKNOWN if base_a or base_b else None)
        if kind == "where":
            c = self.expr(sc, shape, d)[0]
            return f"NP.where({c} > {self.const(-0.5, 0.5)}, {self.expr(sc, shape, d)[0]}, {self.expr(sc, shape, d)[0]})", None
        if kind == "call":
            return self.call(sc, shape, d)  # a callee may return its argument or a global: not fresh
        if kind == "list":
            return self.list_read(sc, shape)
        if kind == "comp":
            return self.comprehension(sc, shape, d)
        if kind == "genexp":
            return self.comprehension(sc, shape, d, lazy=True)
        if kind == "container":
            return self.container_read(sc, shape)
        return self.leaf(sc, shape)

    def leaf(self, sc, shape):
        rng = self.rng
        names = sc.floats(shape)
        if names and self.p(0.8):
            name = rng.choice(names)
            return name, name
        if shape == () and self.p(0.3):
            ints = sc.ints()
            if ints and self.p(0.5):
                return f"({rng.choice(ints)[0]} * {self.const()})", None
            return self.const(), None
        if self.globals and self.p(0.2):  # the globals feature's constants, the methods feature's object
            gname, gshape = rng.choice(self.globals)
            if gshape == shape:
                return gname, gname
        return self.convert(sc, shape, 0)

    def convert(self, sc, shape, depth):
        """``shape`` made from a value of another shape (a reduction, a view, a broadcast)."""
        rng = self.rng
        sources = [(src, forms) for (src, dst), forms in CONVERT.items() if dst == shape]
        have = [(src, forms) for src, forms in sources if sc.floats(src) or depth > 0]
        src, forms = rng.choice(have or sources)
        forms = [f for f in forms if self.on(f[1]) and not (f[1] or "").startswith("builtin:")
                 or (f[1] or "").startswith("builtin:") and self.call_builtin(sc, f[1][8:])]
        if not forms:
            forms = [f for f in CONVERT.get(((), shape), [])] or [("{0} * NP.ones(%r)" % (shape,), None, False)]
            src = ()
        template, _, is_view = rng.choice(forms)
        self.nesting += 1
        if self.nesting > 25:  # no variable converts to this shape in few steps: a constant does
            inner, base = self.const(), None
            template, is_view = CONVERT.get(((), shape), [("{0} * NP.ones(%r)" % (shape,), None, False)])[0][::2]
        else:
            inner, base = self.expr(sc, src, depth) if depth > 0 else self.leaf_or_param(sc, src)
        self.nesting -= 1
        code = template.format(inner if _simple(inner) else f"({inner})",
                               i3=self.index(sc, 3), i4=self.index(sc, 4))
        if is_view == "read-only":
            return code, (UNKNOWN if base else None)
        return code, (base if is_view else None)

    def leaf_or_param(self, sc, shape):
        names = sc.floats(shape)
        if names:
            name = self.rng.choice(names)
            return name, name
        if shape == ():
            return self.const(), None
        return self.convert(sc, shape, 1)

    def condition(self, sc, depth):
        """A data-dependent test (a comparison, maybe combined with and/or/not, chained)."""
        rng = self.rng
        a = self.expr(sc, (), max(depth, 0))[0]
        form = rng.randrange(6)
        c = self.const(-0.8, 0.8)
        if form == 0:
            return f"{a} > {c}"
        if form == 1:
            b = self.expr(sc, (), 0)[0]
            return f"{a} < {b}" if b != a else f"{a} < {c}"
        if form == 2:
            return f"{self.const(-2.0, -0.5)} < {a} <= {self.const(0.5, 2.0)}"
        if form == 3:
            return f"not {a} >= {c}"
        if form == 4:
            ints = sc.ints()
            if ints:
                return f"{rng.choice(ints)[0]} {rng.choice(['==', '>', '<=', '!='])} {rng.randrange(3)}"
            return f"{a} > {c}"
        if self.on("generators") and self.p(0.3):
            reader = rng.choice(["any", "all"])
            if self.call_builtin(sc, reader):
                return self.lazy_test(sc, reader)
        return f"({a} > {c} {rng.choice(['and', 'or'])} {self.expr(sc, (), 0)[0]} < {self.const(-0.5, 0.9)})"

    def call(self, sc, shape, depth):
        rng = self.rng
        fits = [fn for fn in sc.calls if fn.result == shape and (fn.name in sc.defined or fn in self.helpers)]
        if not fits:
            return self.leaf(sc, shape)
        return self.call_text(sc, rng.choice(fits), depth), UNKNOWN

    def call_text(self, sc, fn, depth):
        """A call of ``fn``: defaults maybe left out, keywords by keyword, ``*args`` extra."""
        rng = self.rng
        positional, keywords = [], []
        keyword = self.p(0.3) and fn.star is None  # *args fill after every positional parameter
        for pname, pshape in fn.params:
            if pname in fn.defaults and self.p(0.5) and (fn.star is None or pname in fn.kwonly):
                if not keywords:
                    keyword = True  # a parameter left to its default: the ones after it go by keyword
                continue
            value = self.expr(sc, pshape, depth)[0]
            if pname in fn.kwonly or keyword and (positional or keywords):
                keywords.append(f"{pname}={value}")
            else:
                positional.append(value)
        if fn.star is not None:
            positional += [self.expr(sc, fn.star, depth)[0] for _ in range(rng.randrange(3))]
        keywords += [f"{key}={self.expr(sc, (), depth)[0]}" for key in fn.options if self.p(0.6)]
        rng.shuffle(keywords)
        if positional and self.on("spreads") and self.p(0.4):  # f(*(a, b), k=v): bound as Python binds it
            head = positional[:rng.randrange(len(positional))]
            spread = positional[len(head):]
            shown = f"({', '.join(spread)},)" if rng.random() < 0.7 else f"[{', '.join(spread)}]"
            positional = head + [f"*{shown}"]
        return f"{fn.name}({', '.join(positional + keywords)})"

    def list_read(self, sc, shape):
        rng = self.rng
        name = rng.choice([n for n in sc.of_kind("l") if sc.kinds[n][1] == shape])
        forms = [f"{name}[-1]", f"{name}[0]", f"NP.stack({name}).sum(axis=0)", f"NP.mean(NP.stack({name}), axis=0)"]
        if self.call_builtin(sc, "sum"):
            forms.append(f"sum({name})")
        if self.call_builtin(sc, "len"):
            forms.append(f"NP.stack({name})[len({name}) // 2]")
        if self.on("keyed") and self.p(0.5):
            forms = self.keyed_reads(sc, name, shape) or forms
        code = rng.choice(forms)
        item = code.endswith("]") and "stack" not in code or code.startswith(("max(", "min("))
        return code, (name if item else None)  # an item itself shares memory with the list's

    def keyed_reads(self, sc, name, shape):
        """Reads of list ``name`` picking an item by a key lambda: ``max``/``min``, ``sorted(...)[0]``
        or ``[-1]``. The key scales the item by an expression, so it depends on the item."""
        var, inner = self.item_scope(sc)
        inner.kinds[var], inner.defined[var] = ("a", shape, False), None
        weight = self.expr(inner, shape, 1)[0]
        key = f"lambda {var}: NP.sum({var} * ({weight}))" if shape else f"lambda {var}: {var} * ({weight})"
        reads = [f"{reader}({name}, key={key})" for reader in ("max", "min") if self.call_builtin(sc, reader)]
        if self.call_builtin(sc, "sorted"):
            reads.append(f"sorted({name}, key={key})[{self.rng.choice(['0', '-1'])}]")
        if reads:
            self.mark("keyed")
        return reads

    def container_read(self, sc, shape):
        rng = self.rng
        options = []
        for name in sc.of_kind("c"):
            kind = sc.kinds[name][1]
            if kind[0] == "dict":
                options += [(f"{name}[{k!r}]", name) for k, s in kind[1].items() if s == shape]
            elif kind[0] in ("nt", "dc"):  # a record: by field, a named tuple by index too, the class's method
                cls = kind[2]
                options += [(f"{name}.{f}", name) for f, s in zip(RECORD_FIELDS, kind[1]) if s == shape]
                options += [(f"{name}[{i}]", name) for i, s in enumerate(kind[1]) if s == shape and kind[0] == "nt"]
                if kind[1][0] == shape:
                    options.append((f"{cls}.scaled({name})", None))
            else:
                options += [(f"{name}[{i}]", name) for i, s in enumerate(kind[1]) if s == shape]
        if not options:
            return self.leaf(sc, shape)
        code, name = rng.choice(options)
        return code, name

    def comprehension(self, sc, shape, depth, lazy=False):
        """A list comprehension read by sum/NP.stack/NP.array; ``lazy``: a generator expression read
        straight through by sum/max/min, or by list/tuple inside NP.stack/NP.array."""
        rng = self.rng
        var, inner = self.item_scope(sc)
        if shape == ():
            if not self.call_builtin(sc, "sum"):
                return self.leaf(sc, shape)
            src, elem = rng.choice([((4,), ()), ((3, 4), (4,)), ((3,), ())])
            it = self.expr(sc, src, 0)[0]
            inner.kinds[var], inner.defined[var] = ("a", elem, False), None
            body = self.expr(inner, (), depth)[0]
            if lazy:
                readers = [r for r in ("sum", "sum", "max", "min") if self.on("kinks") or r == "sum"]
                reader = rng.choice(readers)
                reader = reader if reader == "sum" or self.call_builtin(sc, reader) else "sum"
                self.mark("generators")
                return f"{reader}({body} for {var} in {it})", None
            return f"sum([{body} for {var} in {it}])", None
        if shape in ((3, 4), (4, 3)):
            n, elem = shape
            src = (n,) if self.p(0.5) else None
            if src is None and self.call_builtin(sc, "range"):
                inner.kinds[var], inner.defined[var] = ("i",), n
                body = self.expr(inner, (elem,), depth)[0]
                return f"NP.stack({self.items(sc, f'{body} for {var} in range({n})', lazy)})", None
            it = self.expr(sc, (n,), 0)[0]
            inner.kinds[var], inner.defined[var] = ("a", (), False), None
            body = self.expr(inner, (elem,), depth)[0]
            return f"NP.stack({self.items(sc, f'{body} for {var} in {it}', lazy)})", None
        if shape in ((3,), (4,)):
            src = rng.choice([s for s in ((3, 4), (4, 3), (3,), (4,)) if s[0] == shape[0]])
            it = self.expr(sc, src, 0)[0]
            inner.kinds[var], inner.defined[var] = ("a", src[1:], False), None
            body = self.expr(inner, (), depth)[0]
            return f"NP.array({self.items(sc, f'{body} for {var} in {it}', lazy)})", None
        return self.leaf(sc, shape)

    def item_scope(self, sc):
        """(var, scope): a variable for the items of a comprehension, generator or lambda, and the
        scope its body is generated in (``sc``'s names, and ``var`` once it is given a kind)."""
        var = self.rng.choice([n for n in self.pool if n not in sc.taken and n not in CALLED_BUILTINS
                               and sc.kinds.get(n, ("a",))[0] == "a"])
        inner = Scope(self, sc.taken, sc)
        inner.kinds, inner.defined = dict(sc.kinds), dict(sc.defined)
        inner.shadowed = sc.shadowed
        inner.calls = [fn for fn in sc.calls if not fn.name.startswith("super()")]  # refused in comprehensions
        inner.builtins_called = sc.builtins_called
        return var, inner

    def items(self, sc, clauses, lazy):
        """``[clauses]``, or lazily ``list(clauses)``/``tuple(clauses)``."""
        reader = self.rng.choice(["list", "tuple"])
        if lazy and self.call_builtin(sc, reader):
            self.mark("generators")
            return f"{reader}({clauses})"
        return f"[{clauses}]"


def _wrapped(code):
    return code if _simple(code) else f"({code})"


def _simple(code):
    """Whether ``code`` can take a method call or subscript without parentheses."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Subscript))
