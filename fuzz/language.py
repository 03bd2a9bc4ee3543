"""Python's language around the numbers in generated programs: generator expressions and
``map``/``filter`` in loop headers (``generators``), keyword-only, ``*args`` and ``**kwargs``
parameters (``keywords``), ``try`` statements (``try``) and tuple and list joins with starred
unpacking (``joins``)."""
from .templates import SHAPES, indent

ITERABLES = ((3,), (4,), (3, 4), (4, 3))


class LanguageStatements:
    """Statements and loop headers of ``ProgramGenerator`` (a mixin of it)."""

    # ---- generators ---------------------------------------------------------------------
    def lazy_test(self, sc, reader):
        """``any(body > c for v in it)`` (or ``all``): a test reading a generator straight through."""
        shape = self.rng.choice(ITERABLES)
        it = self.expr(sc, shape, 0)[0]
        var, inner = self.item_scope(sc)
        inner.kinds[var], inner.defined[var] = ("a", shape[1:], False), None
        body = self.expr(inner, shape[1:], 1)[0]
        if shape[1:]:
            body = f"NP.sum({body})"
        self.mark("generators")
        return f"{reader}({body} > {self.const(-0.8, 0.8)} for {var} in {it})"

    def lazy_header(self, sc):
        """(header, item kind) of ``for r in X`` with X a generator expression, ``map`` or ``filter``;
        None where the builtin it needs is a variable here."""
        rng = self.rng
        shape = rng.choice(ITERABLES)
        elem = shape[1:]
        it = self.expr(sc, shape, 0)[0]
        var, inner = self.item_scope(sc)
        inner.kinds[var], inner.defined[var] = ("a", elem, False), None
        form = rng.choice(["genexp", "map", "lambda", "filter"])
        if form == "genexp":
            source = f"({self.expr(inner, elem, 1)[0]} for {var} in {it})"
        elif form == "map" and self.call_builtin(sc, "map"):
            source = f"map(NP.{rng.choice(['sin', 'tanh', 'cos', 'square'])}, {it})"
        elif form == "lambda" and self.call_builtin(sc, "map"):
            source = f"map(lambda {var}: {self.expr(inner, elem, 1)[0]}, {it})"
        elif form == "filter" and self.call_builtin(sc, "filter"):
            test = f"{var}.sum()" if elem else var
            source = f"filter(lambda {var}: {test} > {self.const(-0.5, 0.5)}, {it})"
        else:
            return None
        self.mark("generators")
        return source, ("a", elem, False)

    # ---- keywords -----------------------------------------------------------------------
    def keyword_parameters(self, sc, params, defaults):
        """Turn a helper's signature keyword-minded: its defaulted parameter keyword-only, maybe a
        required keyword-only one, ``*args`` or ``**kwargs``. (head text, prologue lines, Fn fields)."""
        rng = self.rng
        kwonly = [p for p, _ in params if p in defaults and self.p(0.6)]
        if self.p(0.3):
            pname = sc.new_name(("a", (), False))
            if pname not in [p for p, _ in params]:
                params.append((pname, ()))
                sc.defined[pname] = None
                kwonly.append(pname)
        positional = [(p, s) for p, s in params if p not in kwonly]
        params[:] = positional + [(p, s) for p, s in params if p in kwonly]  # keyword-only last
        star, options, prologue = None, [], []
        head = [p + (f"={defaults[p]}" if p in defaults else "") for p, _ in positional]
        if self.p(0.3):
            rest = sc.new_name(("kw",))
            star = params[0][1]
            item = self.loop_var(sc, ("a", star, False))
            sc.defined[item] = None
            prologue += self.loop_body(sc, 1, f"for {item} in {rest}:", {item})
            head.append(f"*{rest}")
        elif kwonly:
            head.append("*")
        head += [p + (f"={defaults[p]}" if p in defaults else "") for p in kwonly]
        if self.p(0.3):
            opts = sc.new_name(("kw",))
            for _ in range(rng.randint(1, 2)):
                key = sc.new_name(("a", (), False))
                if key in options or key in [p for p, _ in params]:
                    continue
                options.append(key)
                sc.defined[key] = None
                getter = f"{opts}.get({key!r}, {self.const()})" if self.p(0.7) else \
                    f"{opts}[{key!r}] if {key!r} in {opts} else {self.const()}"
                prologue.insert(0, f"{key} = {getter}")
            head.append(f"**{opts}")
        if kwonly or star is not None or options:
            self.mark("keywords")
        return ", ".join(head), prologue, dict(kwonly=tuple(kwonly), star=star, options=tuple(options))

    # ---- try ----------------------------------------------------------------------------
    def st_try(self, sc, depth):
        """``try`` around new values (maybe raising on data), every handler binding again what the
        body binds (reading none of it); ``else`` and ``finally`` blocks. Never inside a loop."""
        rng = self.rng
        pre = sc.copy_defined()
        body = [line for _ in range(rng.randint(1, 3)) for line in self.st_assign(sc, depth)]
        bound = sorted({line.split(" = ")[0] for line in body})
        after = dict(sc.defined)
        lines = []
        if self.p(0.8):
            catchers = ["(ValueError, ArithmeticError)", "Exception"]
            sc.defined = {n: v for n, v in pre.items() if n not in bound}  # names the body leaves alone
            if self.p(0.6):
                at = rng.randrange(len(body) + 1)
                error, by = rng.choice([("ValueError('large')", "ValueError"), ("ArithmeticError", "ArithmeticError"),
                                        ("ZeroDivisionError('step')", "ArithmeticError")])
                body[at:at] = [f"if {self.condition(sc, 0)}:", f"    raise {error}"]
                catchers.append(by)
            handler = [f"{n} = {self.value_for(sc, sc.kinds[n][1], sc.kinds[n][2], depth - 1)}" for n in bound]
            lines = ["try:"] + indent(body) + [f"except {rng.choice(catchers)}:"] + indent(handler)
            sc.defined = dict(after)
            if self.p(0.4):
                lines += ["else:"] + indent(self.st_assign(sc, depth))
            sc.defined = {n: v for n, v in sc.defined.items() if n in pre or n in bound}
        else:
            lines = ["try:"] + indent(body)
        if len(lines) == len(body) + 1 or self.p(0.4):
            lines += ["finally:"] + indent(self.st_assign(sc, depth))
        self.mark("try")
        return lines

    # ---- joins --------------------------------------------------------------------------
    def st_join(self, sc, depth):
        """A tuple or list display joined with another of known length (``t + (y,)``, ``t += (y,)``,
        ``(y,) + t``), read by index and unpacking afterwards; or starred unpacking of one."""
        rng = self.rng
        seqs = [n for n in sc.of_kind("c") if sc.kinds[n][1][0] in ("tuple", "list")]
        if seqs and self.p(0.3):
            src = rng.choice(seqs)
            shapes = sc.kinds[src][1][1]
            if len(shapes) >= 2:
                if self.p(0.5):  # first, *rest = t
                    (one,), rest_shapes = self.targets(sc, shapes[:1]), shapes[1:]
                    targets = "{0}, *{1}"
                else:            # *init, last = t
                    (one,), rest_shapes = self.targets(sc, shapes[-1:]), shapes[:-1]
                    targets = "*{1}, {0}"
                rest = sc.new_name(("c", ("list", rest_shapes)))
                if rest != one:
                    sc.defined[rest] = None
                    self.mark("joins")
                    return [f"{targets.format(one, rest)} = {src}"]
        tag = rng.choice(["tuple", "tuple", "list"])
        first = [rng.choice(SHAPES) for _ in range(rng.randint(1, 2))]
        more = [rng.choice(SHAPES) for _ in range(rng.randint(1, 2))]
        show = (lambda vs: f"({', '.join(vs)},)") if tag == "tuple" else (lambda vs: f"[{', '.join(vs)}]")
        a = show([self.expr(sc, s, depth - 1)[0] for s in first])
        b = show([self.expr(sc, s, depth - 1)[0] for s in more])
        form = rng.randrange(3)
        total = more + first if form == 2 else first + more
        joined = sc.new_name(("c", (tag, total)))
        if form == 0:  # t += (y,): the name holds the joined sequence from then on
            lines = [f"{joined} = {a}", f"{joined} += {b}"]
        else:
            left = sc.new_name(("c", (tag, first)))
            sc.defined[left] = None
            lines = [f"{left} = {a}", f"{joined} = {left} + {b}" if form == 1 else f"{joined} = {b} + {left}"]
        sc.defined[joined] = None
        self.mark("joins")
        return lines
