"""Property test: random straight-line and looping NumPy programs, written to a file (srcad
reads source), differentiated and checked against finite differences."""
import importlib.util
import itertools
import os

import numpy as np
from hypothesis import given, settings, strategies as st

from srcad.testing import check_grads

UNARY = ["np.sin({})", "np.tanh({})", "np.exp(0.3 * ({}))", "np.sqrt(({}) ** 2 + 1.0)", "-({})", "(({}) ** 2)",
         "np.log1p(({}) ** 2)", "np.abs({} + 0.1)"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (1.5 + ({}) ** 2))", "np.maximum({}, {})"]
SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((3,), ()), ((2, 3), (2, 3))]
_counter = itertools.count()
EXAMPLES = int(os.environ.get("SRCAD_EXAMPLES", 40))  # SRCAD_EXAMPLES=1000 for a longer hunt


def expressions(depth):
    leaf = st.sampled_from(["x", "y", "x", "y", "1.5"])
    if depth == 0:
        return leaf
    sub = expressions(depth - 1)
    return st.one_of(
        leaf,
        st.builds(lambda f, a: f.format(a), st.sampled_from(UNARY), sub),
        st.builds(lambda f, a, b: f.format(a, b), st.sampled_from(BINARY), sub, sub),
    )


def build(tmp_path, body):
    path = tmp_path / f"generated_{next(_counter)}.py"
    path.write_text("import numpy as np\n\n\n" + body)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@settings(max_examples=EXAMPLES, deadline=None)
@given(expr=expressions(3), shapes=st.sampled_from(SHAPES), reduce=st.sampled_from(["", ".sum()", ".mean()"]),
       loop=st.booleans(), seed=st.integers(0, 2**16))
def test_random_programs(tmp_path_factory, expr, shapes, reduce, loop, seed):
    tmp_path = tmp_path_factory.mktemp("programs")
    if loop:
        body = (f"def f(x, y):\n    acc = 0.0 * x\n    for k in range(3):\n"
                f"        acc = acc + {expr} * (k + 1)\n        x = x * 0.9\n    return acc{reduce}\n")
    else:
        body = f"def f(x, y):\n    z = {expr}\n    return (z + 0.0 * x * y){reduce}\n"
    f = build(tmp_path, body)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, shapes[0])
    y = rng.uniform(-1.0, 1.0, shapes[1]) if shapes[1] else float(rng.uniform(-1.0, 1.0))
    check_grads(f, (x, y), wrt=(0, 1), rtol=1e-4, atol=1e-6)


STATEMENTS = [
    "s = s + np.sin(x[{i}]) * y",
    "s = s * 0.9 + x[{i}] ** 2",
    "if x[{i}] > y:\n        s = s + x[{i}] * 2.0\n    else:\n        s = s - np.tanh(x[{i}])",
    "buf[{i}] = s * x[{i}]",
    "buf[{i}] += x[{j}] * y",
    "acc.append(s * x[{j}])",
    "t = x[{i}]\n    if t > 0.5:\n        s = s + t\n    s = s * t",
    "while s < 1.0:\n        s = s + 0.3 + x[{i}] ** 2",
    "r = buf[1:3]\n    s = s + (r * r * x[{i}]).sum()\n    buf[{j}] = s * 0.5",
    "buf[:2] = buf[:2] * x[{i}] + s",
]


def flow_programs():
    statement = st.tuples(st.sampled_from(STATEMENTS), st.integers(0, 3), st.integers(0, 3))
    return st.lists(statement, min_size=1, max_size=6)


@settings(max_examples=EXAMPLES, deadline=None)
@given(body=flow_programs(), loop=st.booleans(), seed=st.integers(0, 2**16))
def test_random_control_flow(tmp_path_factory, body, loop, seed):
    lines = [template.format(i=i, j=j) for template, i, j in body]
    indent = "        " if loop else "    "
    inner = "\n".join(indent + line.replace("\n    ", "\n" + indent) for line in lines)
    text = ("def f(x, y):\n    s = 0.5 * y\n    buf = np.zeros(4)\n    acc = [x[0]]\n"
            + ("    for k in range(2):\n" if loop else "") + inner
            + "\n    return s + (buf * x).sum() + np.stack(acc).sum()\n")
    f = build(tmp_path_factory.mktemp("flow"), text)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, 4)
    y = float(rng.uniform(0.2, 1.0))
    # keep away from branch boundaries, where the derivative jumps
    if any(abs(x[i] - y) < 1e-3 or abs(x[i] - 0.5) < 1e-3 for i in range(4)):
        x = x + 0.01
    check_grads(f, (x, y), wrt=(0, 1), rtol=1e-4, atol=1e-6)
