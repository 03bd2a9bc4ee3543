"""``operator.itemgetter``/``attrgetter`` (``getters`` feature): lists of (array, scale) tuples,
of dicts and of the tail's objects (``fuzz/local_lists.py``) picked by ``max``/``min``/``sorted``
with a getter as key, mapped by a getter, filtered and reduced; ``max``/``min`` over tuples;
a getter of several keys called on one item. A stream of its own, like ``local_lists``."""


class GetterStatements:
    """Mixed into ``program.ProgramGenerator``: the ``getters`` tail statements."""

    def tail_getters(self, sc):
        """Statements picking and mapping items by getters; (lines, scalar name)."""
        rng = self.rng
        m = self.tail_module
        op = m["operator"]
        n = rng.choice([3, 4])
        k = rng.randint(2, 4)
        arrays = [self.tail_float(sc, (n,)) for _ in range(k)]
        scales = [f"{self.tail_float(sc, ())} + {0.37 * i:.2f}" for i in range(k)]  # never tied
        acc = self.tail_local(sc, ("a", (), False))
        lines = [f"{acc} = 0.0"]
        for _ in range(rng.randint(1, 3)):
            lines += self.getter_use(sc, acc, op, n, arrays, scales)
        sc.defined[acc] = None
        return lines, acc

    def getter_use(self, sc, acc, op, n, arrays, scales):
        rng = self.rng
        m = self.tail_module
        pairs = self.tail_local(sc, ("o",))
        swapped = self.p(0.25)
        items = [f"({s}, {a})" if swapped else f"({a}, {s})" for a, s in zip(arrays, scales)]
        a_at, s_at = (1, 0) if swapped else (0, 1)
        build = f"{pairs} = [{', '.join(items)}]"
        form = rng.randrange(9)
        picker = rng.choice(["max", "min", "sorted"])
        if form <= 1 and self.call_builtin(sc, picker):
            key = f"key={op}.itemgetter({s_at})"
            if picker == "sorted":
                reverse = ", reverse=True" if self.p(0.3) else ""
                best = f"sorted({pairs}, {key}{reverse})[{rng.choice(['0', '-1', '1'])}]"
            else:
                best = f"{picker}({pairs}, {key})"
            it = self.tail_local(sc, ("o",))
            return [build, f"{it} = {best}", f"{acc} = {acc} + NP.sum({it}[{a_at}] * {it}[{s_at}])"]
        if form == 2 and swapped and self.call_builtin(sc, picker) and picker != "sorted":  # over the tuples
            it = self.tail_local(sc, ("o",))
            return [build, f"{it} = {picker}({pairs})", f"{acc} = {acc} + NP.sum(NP.sin({it}[1])) * {it}[0]"]
        if form == 3 and self.call_builtin(sc, "map") and self.call_builtin(sc, "list"):
            got = self.tail_local(sc, ("o",))
            return [build, f"{got} = list(map({op}.itemgetter({a_at}), {pairs}))",
                    f"{acc} = {acc} + NP.sum(NP.stack({got}) ** 2)"]
        if form == 4 and self.call_builtin(sc, "map"):
            v = self.tail_local(sc, ("o",))
            return [build, f"for {v} in map({op}.itemgetter({s_at}), {pairs}):", f"    {acc} = {acc} * 0.5 + {v}"]
        if form == 5:
            return self.getter_called(sc, acc, op, pairs, build, len(items), s_at, a_at)
        if form == 6:
            red = self.tail_local(sc, ("o",))
            if self.call_builtin(sc, "map"):
                return [build, f"{red} = {m['functools']}.reduce({op}.add, map({op}.itemgetter({a_at}), {pairs}))",
                        f"{acc} = {acc} + NP.sum(NP.tanh({red}))"]
            return [build, f"{acc} = {m['functools']}.reduce(lambda t, p: t + p[{s_at}] * NP.sum(p[{a_at}]), {pairs}, {acc})"]
        if form == 7 and self.call_builtin(sc, "filter") and self.call_builtin(sc, "list"):
            kept = self.tail_local(sc, ("o",))
            c = self.const(-0.5, 0.8)
            return [build, f"{kept} = list(filter(lambda p: {op}.itemgetter({s_at})(p) > {c}, {pairs}))",
                    f"for {pairs} in {kept}:", f"    {acc} = {acc} + NP.sum({pairs}[{a_at}]) * {pairs}[{s_at}]"]
        return self.getter_records(sc, acc, op, n, arrays, scales) or \
            self.getter_called(sc, acc, op, pairs, build, len(items), s_at, a_at)

    def getter_called(self, sc, acc, op, pairs, build, k, s_at, a_at):
        """A getter of two keys called on one item: ``s, a = itemgetter(1, 0)(pairs[i])``."""
        v, w = self.tail_local(sc, ("o",)), self.tail_local(sc, ("o",))
        return [build, f"{v}, {w} = {op}.itemgetter({s_at}, {a_at})({pairs}[{self.rng.randrange(k)}])",
                f"{acc} = {acc} + {v} * NP.sum({w})"]

    def getter_records(self, sc, acc, op, n, arrays, scales):
        """Dicts by ``itemgetter("s")``, objects of the tail's classes by ``attrgetter``."""
        rng = self.rng
        m = self.tail_module
        picker = rng.choice(["max", "min"])
        if not self.call_builtin(sc, picker):
            return []
        it = self.tail_local(sc, ("o",))
        if self.p(0.5):
            recs = self.tail_local(sc, ("o",))
            shown = ", ".join("{'w': %s, 's': %s}" % pair for pair in zip(arrays, scales))
            build = f"{recs} = [{shown}]"
            return [build, f"{it} = {picker}({recs}, key={op}.itemgetter('s'))",
                    f"{acc} = {acc} + NP.sum({it}['w']) * {it}['s']"]
        objs = self.tail_local(sc, ("o",))
        build = f"{objs} = [{', '.join(m['gate'] + '(' + s + ')' for s in scales)}]"
        x = arrays[0]
        if self.p(0.4) and self.call_builtin(sc, "map") and self.call_builtin(sc, "sum"):
            return [build, f"{acc} = {acc} + sum(map({op}.attrgetter('scale'), {objs}))"]
        return [build, f"{it} = {picker}({objs}, key={op}.attrgetter('scale'))",
                f"{acc} = {acc} + NP.sum({it}({x})) + {it}.scale"]
