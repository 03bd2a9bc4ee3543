"""Random loop nests (for and while, up to depth three) with break, continue, early return
and loop ``else`` at random places, each checked against finite differences in reverse mode
(joint adjoint, and the pullback called twice) and in forward mode."""
import importlib.util
import random

import numpy as np
import pytest

from srcad.testing import check_grads, check_jvp

N = 4  # the length of x; every index is taken modulo N


class _Program:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.loops = 0

    def emit(self, indent, text):
        self.lines.extend("    " * indent + line for line in text.split("\n"))

    def index(self, names):
        picked = self.rng.sample(names, min(len(names), self.rng.randint(0, 2))) or ["0"]
        return f"x[({' + '.join(picked)} + {self.rng.randint(0, N - 1)}) % {N}]"

    def update(self, indent, names):
        a, b = self.index(names), self.index(names)
        self.emit(indent, self.rng.choice([
            f"s = s + {a} * {b}",
            f"s = s * 0.9 + np.sin({a})",
            f"s = s + np.tanh({a} * s)",
        ]))

    def jump(self, indent, names):
        if not names:
            return
        v = self.rng.choice(names)
        test = self.rng.choice([f"{v} > {self.rng.randint(0, 2)}", f"({v} + {len(names)}) % 2 == 0",
                                f"{v} == {self.rng.randint(0, 2)}"])
        what = self.rng.choice(["break", "continue", "return s * 1.5", "return s - x[0]"])
        self.emit(indent, f"if {test}:\n    {what}")

    def block(self, indent, depth, names, in_loop):
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.random()
            if kind < 0.35 and depth < 3:
                self.loop(indent, depth, names)
            elif kind < 0.6 and in_loop:
                self.jump(indent, names)
            else:
                self.update(indent, names)

    def loop(self, indent, depth, names):
        self.loops += 1
        v = f"i{self.loops}"
        n = self.rng.randint(1, 4)
        if self.rng.random() < 0.5:
            self.emit(indent, f"for {v} in range({n}):")
        else:
            more = self.rng.choice(["", " and s < 40.0"])
            self.emit(indent, f"{v} = -1\nwhile {v} < {n - 1}{more}:\n    {v} = {v} + 1")
        self.block(indent + 1, depth + 1, names + [v], True)
        self.update(indent + 1, names + [v])
        if self.rng.random() < 0.25:
            self.emit(indent, "else:")
            self.update(indent + 1, names)

    def source(self, name):
        self.emit(0, f"def {name}(x):\n    s = 0.5")
        self.block(1, 0, [], False)
        self.emit(1, "return s")
        return "\n".join(self.lines)


def _programs(count, seed):
    rng = random.Random(seed)
    return ["import numpy as np\n\n\n" + _Program(rng).source(f"program_{k}") for k in range(count)]


@pytest.mark.parametrize("k", range(20))
def test_random_loop_nests_with_jumps(k, tmp_path):
    text = _programs(20, seed=2026)[k]
    path = tmp_path / f"nest_{k}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"nest_{k}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = getattr(module, f"program_{k}")
    x = np.random.default_rng(k).uniform(0.2, 1.0, N)
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
