"""State stepped by a module-level helper returning a tuple (``stepping`` feature): the helper
``step(h, x[, rate=c])`` returns ``(h', err)``, a new state of ``h``'s shape and a scalar;
functions unpack it back into the state in ``for`` loops and in ``while`` loops whose test reads
the helper's last ``err`` (a convergence loop, counted so it ends), or index the returned tuple."""
from .generate import Fn, Scope
from .names import CALLED_BUILTINS
from .templates import SHAPES, indent


class SteppingStatements:
    """Mixed into ``program.ProgramGenerator``: the step helper and the loops calling it."""

    def step_helper(self):
        """The module's step helper's lines; ``self.stepper`` its ``Fn`` (result: [state, ()])."""
        rng = self.rng
        name = rng.choice([n for n in self.pool if n not in self.module_names and n not in CALLED_BUILTINS])
        self.module_names.add(name)
        sc = Scope(self, self.module_names)
        state = rng.choice([s for s in SHAPES if s != ()] + [()])
        params = []
        for shape in (state, rng.choice(SHAPES)):
            pname = sc.new_name(("a", shape, False))
            while pname in [p for p, _ in params]:
                pname = sc.new_name(("a", shape, False))
            params.append((pname, shape))
            sc.defined[pname] = None
        defaults = {}
        if self.p(0.5):
            pname = sc.new_name(("a", (), False))
            if pname not in [p for p, _ in params]:
                params.append((pname, ()))
                defaults[pname] = self.const(0.1, 0.6)
                sc.defined[pname] = None
        sc.result = ("tuple", [state, ()])
        body = self.block(sc, rng.randint(1, 2), 1)
        delta = sc.new_name(("a", state, False))
        while delta in [p for p, _ in params]:
            delta = sc.new_name(("a", state, False))
        body.append(f"{delta} = {self.expr(sc, state, 2)[0]}")
        rate = next(iter(defaults), self.const(0.1, 0.6))
        # the new state and its error both follow the state and the step
        returned = f"{params[0][0]} - {rate} * {delta}, NP.mean(({delta}) ** 2)"
        head = ", ".join(p + (f"={defaults[p]}" if p in defaults else "") for p, _ in params)
        self.stepper = Fn(name, params, defaults, [state, ()])
        return [f"def {name}({head}):"] + indent(body + [f"return {returned}"])

    def step_call(self, sc, state_name, depth):
        """``step(state, x...)``: the state passed first, the other arguments drawn."""
        fn = self.stepper
        rest = [self.expr(sc, shape, depth)[0] for _, shape in fn.params[1:len(fn.params) - len(fn.defaults)]]
        if fn.defaults and self.p(0.5):
            rest.append(self.const(0.1, 0.6))
        return f"{fn.name}({', '.join([state_name] + rest)})"

    def st_step(self, sc, depth):
        """The state stepped ``k`` times by the helper, in a ``for`` loop, or in a ``while`` loop
        testing the helper's last ``err`` (and a counter), or once through an index of its tuple."""
        rng = self.rng
        state, _ = self.stepper.result
        h = sc.new_name(("a", state, False))
        err = sc.new_name(("a", (), False))
        while err == h:
            err = sc.new_name(("a", (), False))
        lines = [f"{h} = {self.expr(sc, state, depth - 1)[0]}"]
        sc.defined[h] = None
        self.mark("stepping")
        form = rng.randrange(3)
        if form == 0 and self.call_builtin(sc, "range"):
            i = self.loop_var(sc, ("i",))
            sc.defined[i] = k = rng.randint(2, 4)
            lines += self.loop_body(sc, depth, f"for {i} in range({k}):", {i},
                                    first=[f"{h}, {err} = {self.step_call(sc, h, depth - 1)}"])
            sc.defined[err] = None  # (the loop runs: err is bound after it)
            return lines
        if form == 1:
            lines.append(f"{h}, {err} = {self.step_call(sc, h, depth - 1)}")
            sc.defined[err] = None
            k = self.loop_var(sc, ("i",))
            limit = rng.randint(2, 4)
            lines.append(f"{k} = 0")
            sc.defined[k] = limit + 1
            test = f"{k} < {limit} and {err} {rng.choice(['>', '<'])} {self.const(-0.8, 0.8)}"
            lines += self.loop_body(sc, depth, f"while {test}:", {k},
                                    first=[f"{k} += 1", f"{h}, {err} = {self.step_call(sc, h, depth - 1)}"])
            return lines
        out = sc.new_name(("c", ("tuple", [state, ()])))
        lines += [f"{out} = {self.step_call(sc, h, depth - 1)}", f"{h} = {out}[0]"]
        sc.defined[out] = None
        return lines
