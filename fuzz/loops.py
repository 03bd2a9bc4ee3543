"""Loop statements for the program generator: ``for`` over ranges, arrays' rows, ``enumerate``,
``zip``, dicts and lists (a copy: the body may append), lazy generators, and counted ``while``."""
from .templates import SHAPES, indent

LEAD = {(3,): 3, (4,): 4, (12,): 12, (3, 4): 3, (4, 3): 4}  # the length of an array's leading axis


class LoopStatements:
    """Mixed into ``program.ProgramGenerator``: the loop statements it draws."""

    def loop_body(self, sc, depth, header, bound_names, first=()):
        pre = sc.copy_defined()
        sc.loop_depth += 1
        body = list(first) + self.block(sc, self.rng.randint(1, 4), depth - 1)
        sc.loop_depth -= 1
        sc.defined = {k: v for k, v in pre.items() if k not in bound_names}
        return [header] + indent(body)

    def loop_var(self, sc, kind):
        for _ in range(20):
            name = sc.new_name(kind)
            if name not in sc.defined:
                return name
        name = f"loop{len(sc.kinds)}"
        sc.kinds[name] = kind
        return name

    def st_for(self, sc, depth):
        rng = self.rng
        form = rng.randrange(8)
        lazy = self.on("generators") and self.p(0.3) and self.lazy_header(sc)
        if lazy:
            source, kind = lazy
            r = self.loop_var(sc, kind)
            sc.defined[r] = None
            return self.loop_body(sc, depth, f"for {r} in {source}:", {r})
        if (form <= 2 or form == 7) and self.call_builtin(sc, "range"):
            i = self.loop_var(sc, ("i",))
            k = rng.randint(2, 4)
            heads = [(f"range({k})", k), (f"range(1, {k})", k), (f"range({k - 1}, -1, -1)", k)]
            if self.call_builtin(sc, "reversed"):
                heads.append((f"reversed(range({k}))", k))
            ints = [n for n in sc.of_kind("n")]
            if ints:
                heads.append((f"range({ints[0]})", 3))
            arrays = [n for n in sc.floats() if sc.kinds[n][1] in LEAD]
            if arrays and self.call_builtin(sc, "len"):
                a = rng.choice(arrays)
                heads.append((f"range(len({a}))", LEAD[sc.kinds[a][1]]))
            head, bound = rng.choice(heads)
            sc.defined[i] = bound
            return self.loop_body(sc, depth, f"for {i} in {head}:", {i})
        if form in (3, 4):
            shape = rng.choice([s for s in SHAPES if s != ()])
            it = self.expr(sc, shape, 0)[0]
            r = self.loop_var(sc, ("a", shape[1:], False))
            sc.defined[r] = None
            if form == 4 and self.call_builtin(sc, "enumerate"):
                i = self.loop_var(sc, ("i",))
                sc.defined[i] = shape[0]
                return self.loop_body(sc, depth, f"for {i}, {r} in enumerate({it}):", {i, r})
            return self.loop_body(sc, depth, f"for {r} in {it}:", {r})
        if form == 5 and self.call_builtin(sc, "zip"):
            shape = rng.choice([s for s in SHAPES if s != ()])
            other = rng.choice([s for s in SHAPES if s != () and s[0] == shape[0]])
            first, second = self.expr(sc, shape, 0)[0], self.expr(sc, other, 0)[0]
            a = self.loop_var(sc, ("a", shape[1:], False))
            sc.defined[a] = None
            b = self.loop_var(sc, ("a", other[1:], False))
            sc.defined[b] = None
            return self.loop_body(sc, depth, f"for {a}, {b} in zip({first}, {second}):", {a, b})
        lists = [n for n in sc.of_kind("l")]
        dicts = [n for n in sc.of_kind("c") if sc.kinds[n][1][0] == "dict"]
        if form == 6 and dicts:
            d = rng.choice(dicts)
            shapes = set(sc.kinds[d][1][1].values())
            if len(shapes) == 1:
                shape = shapes.pop()
                v = self.loop_var(sc, ("a", shape, False))
                key = self.loop_var(sc, ("key",))
                sc.defined[v] = None
                if self.p(0.5):
                    return self.loop_body(sc, depth, f"for {key}, {v} in {d}.items():", {key, v})
                return self.loop_body(sc, depth, f"for {key} in {d}:", {key, v}, first=[f"{v} = {d}[{key}]"])
        if lists:
            acc = rng.choice(lists)
            item = self.loop_var(sc, ("a", sc.kinds[acc][1], False))
            sc.defined[item] = None
            # iterate over a copy: the body may append to the list
            return self.loop_body(sc, depth, f"for {item} in {acc}[:]:" if self.p(0.5) else
                                  f"for {item} in list({acc}):" if self.call_builtin(sc, "list") else
                                  f"for {item} in {acc}[:]:", {item})
        return self.st_assign(sc, depth)

    def st_while(self, sc, depth):
        k = self.loop_var(sc, ("i",))
        limit = self.rng.randint(2, 4)
        lines = [f"{k} = 0"]
        sc.defined[k] = limit + 1
        test = f"{k} < {limit}" if self.p(0.3) else f"{k} < {limit} and {self.condition(sc, 0)}"
        lines += self.loop_body(sc, depth, f"while {test}:", {k}, first=[f"{k} += 1"])
        return lines
