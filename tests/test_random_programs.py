"""Property test: random straight-line and looping NumPy programs, written to a file (srcad
reads source), differentiated and checked against finite differences."""
import importlib.util
import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from srcad.testing import check_grads

UNARY = ["np.sin({})", "np.tanh({})", "np.exp(0.3 * ({}))", "np.sqrt(({}) ** 2 + 1.0)", "-({})", "(({}) ** 2)",
         "np.log1p(({}) ** 2)", "np.abs({} + 0.1)"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (1.5 + ({}) ** 2))", "np.maximum({}, {})"]
SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((3,), ()), ((2, 3), (2, 3))]
_counter = itertools.count()


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


@settings(max_examples=40, deadline=None)
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
