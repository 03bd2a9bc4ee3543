"""``srcad export``: the module it writes runs where srcad cannot be imported, and computes what
``srcad.differentiable(f).adjoint`` computes, which central finite differences confirm."""
import ast
import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcad
from srcad import cli
from srcad.export import export_source
from srcad.testing import _axpy, _random_like, _vdot

MODEL = '''
import numpy as np
import scipy.special as sp
import srcad
from scipy.stats import norm

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
SCALE = 1.5


def softplus(z):
    if np.all(z > 30.0):  # a branch: the helper is not inlined where the loop calls it (a pair of its own)
        return z
    return np.log1p(np.exp(z))


def helper_in_loop(x, w):
    s = 0.0
    for i in range(3):
        s = s + softplus(x * w[i]).sum()
    return s


def stack_loop(x, n):
    stack = []
    y = x
    for i in range(n):
        y = np.sin(y) * 1.5
        stack.append(y)
    t = 0.0
    while stack:
        t = t + (stack.pop() ** 2).sum()
    return t


def special_functions(x):
    return sp.gammaln(x).sum() + sp.expit(x) @ x


def count(n):
    return 2 * n


def with_globals(x, n=3):
    return (np.tanh(W @ x) * SCALE).sum() * count(n)


def vector_out(A, x):
    return np.tanh(A @ x) * softplus(x[:2])


@srcad.custom_vjp
def smooth(x):
    return np.log1p(np.exp(x))


@smooth.defvjp
def smooth_vjp(y, x):
    d[x] += d[y] * sp.expit(x)


def uses_rule(x):
    return smooth(x * 2.0).sum()


@srcad.differentiable(wrt="b")
def decorated(a, b):
    return np.sum(a * np.cos(b))


def v_param(x, v):
    return np.sum(x * v) ** 2


square = lambda t: np.sum(np.sin(t) ** 2)  # noqa: E731


def uses_grad(x):
    return np.sum(srcad.grad(nested_helpers)(x) * x)


@srcad.differentiable(wrt=("x",))
def one_tuple(x, y):
    return np.sum(x * np.exp(y))


def log_density(x, mu):
    return np.sum(norm.logpdf(x, mu, 2.0))


def stopped(x):
    return np.sum(x * srcad.stop_gradient(np.sin(x)))


def dict_params(p, x):
    return np.sum(np.tanh(p["w"] * x) + p["b"]) * p["scale"]


def nested_helpers(x):
    return outer_helper(x).sum()


def outer_helper(z):
    return softplus(z) * np.exp(-z)


gradient = srcad.grad(nested_helpers)  # exported: vᵀH, a Hessian-vector product
'''

rng = np.random.default_rng(3)
X4, W3 = rng.normal(size=4), rng.normal(size=3)
X3, A23 = rng.normal(size=3), rng.normal(size=(2, 3))
V2 = rng.normal(size=2)

# (function, --wrt, arguments of the calls, cotangent or None): every call is made in both worlds
CASES = {
    "helper_in_loop": ("helper_in_loop", None, (X4, W3), None),
    "helper_in_loop_xw": ("helper_in_loop", "x,w", (X4, W3), None),
    "stack_loop": ("stack_loop", None, (X3, 4), None),
    "special_functions": ("special_functions", None, (np.abs(X4) + 0.5,), None),
    "with_globals": ("with_globals", None, (X3,), None),
    "with_globals_n": ("with_globals", None, (X3, 4), 0.5),
    "vector_out": ("vector_out", "A,x", (A23, X3), V2),
    "uses_rule": ("uses_rule", None, (X4,), None),
    "decorated": ("decorated", None, (X3, W3), None),
    "v_param": ("v_param", None, (X3, W3), 2.0),
    "nested_helpers": ("nested_helpers", None, (X4,), None),
    "square": ("square", None, (X4,), None),
    "smooth": ("smooth", None, (X4,), np.ones(4)),
    "uses_grad": ("uses_grad", None, (X4,), None),
    "one_tuple": ("one_tuple", None, (X3, W3), None),
    "log_density": ("log_density", "x,mu", (X3, 0.3), None),
    "stopped": ("stopped", None, (X3,), None),
    "dict_params": ("dict_params", None, ({"w": W3, "b": X3, "scale": 1.5}, X3), None),
    "gradient": ("gradient", None, (X4,), np.arange(4.0)),
}
CONTAINERS_OF = {"dict_params": "p"}

# the function finite differences see: stop_gradient's value is a constant there
FINITE_DIFFERENCES_OF = {"stopped": lambda x: np.sum(x * np.sin(X3))}

ISOLATED = '''
import importlib.abc, pickle, sys

class NoSrcad(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("srcad", "gast", "astor"):
            raise ImportError("srcad is not importable here: " + name)

sys.meta_path.insert(0, NoSrcad())
calls = pickle.load(sys.stdin.buffer)
out = []
for module, function, args in calls:
    try:
        out.append(("ok", getattr(__import__(module), function)(*args)))
    except Exception as exc:
        out.append((type(exc).__name__, str(exc)))
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("srcad", "gast", "astor"))
sys.stdout.buffer.write(pickle.dumps((out, leaked)))
'''


def run_isolated(directory, calls):
    """Run ``module.function(*args)`` for each call in ``python -I -S`` with only NumPy's
    site-packages and ``directory`` on the path, and ``import srcad`` blocked."""
    site = str(pathlib.Path(np.__file__).resolve().parents[1])
    code = f"import sys; sys.path[:0] = [{str(directory)!r}, {site!r}]\n" + ISOLATED
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=pickle.dumps(calls),
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    out, leaked = pickle.loads(done.stdout)
    assert leaked == []
    return out


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every case exported by the command line, and the results of its calls in isolation."""
    directory = tmp_path_factory.mktemp("cli_export")
    (directory / "cli_model.py").write_text(MODEL)
    calls = []
    for case, (function, wrt, args, v) in CASES.items():
        argv = ["export", f"{directory / 'cli_model.py'}:{function}", "-o", str(directory / f"exported_{case}.py")]
        containers = ["--containers", CONTAINERS_OF[case]] if case in CONTAINERS_OF else []
        assert cli.main(argv + (["--wrt", wrt] if wrt else []) + containers) == 0
        calls.append((f"exported_{case}", f"{function}_adjoint", args + ((v,) if v is not None else ())))
    calls.append(("exported_helper_in_loop", "helper_in_loop_adjoint", (np.array([1, 2, 3, 4]), W3)))
    calls.append(("exported_vector_out", "vector_out_adjoint", (A23, X3)))
    calls.append(("exported_vector_out", "vector_out_adjoint", (A23, X3, np.ones(3))))
    calls.append(("exported_helper_in_loop", "helper_in_loop_adjoint", ([1.0, 2.0, 3.0, 4.0], W3)))
    results = run_isolated(directory, calls)
    model = sys.modules["cli_model"]  # imported by the first export
    return directory, model, dict(zip(list(CASES) + ["int_x", "no_v", "bad_v", "list_x"], results))


def _wrt(wrt):
    if wrt is None:
        return None
    parts = wrt.split(",")
    return parts[0] if len(parts) == 1 else tuple(parts)


def same(got, want):
    """Equal structure, types, shapes and values (to rounding)."""
    if isinstance(want, (list, tuple, dict)):
        if type(got) is not type(want) or len(got) != len(want):
            return False
        if isinstance(want, dict):
            return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
        return all(same(a, b) for a, b in zip(got, want))
    return type(got) is type(want) and np.shape(got) == np.shape(want) and np.allclose(got, want, 1e-12, 1e-14)


def _finite_differences(f, args, positions, v, seed=0, eps=1e-6):
    """(⟨v, (f(x + εu) - f(x - εu)) / 2ε⟩, u) for a random direction u over ``positions``."""
    rng = np.random.default_rng(seed)
    directions = {p: _random_like(args[p], rng) for p in positions}

    def shifted(t):
        return f(*[_axpy(a, t, directions[p]) if p in directions else a for p, a in enumerate(args)])

    return _vdot(v, (shifted(eps) - shifted(-eps)) / (2 * eps)), directions


@pytest.mark.parametrize("case", list(CASES))
def test_exported_module_matches_srcad_and_finite_differences(exported, case):
    directory, model, results = exported
    function, wrt, args, v = CASES[case]
    status, grads = results[case]
    assert status == "ok", grads
    target = getattr(model, function)
    d = srcad.differentiable(target, wrt=_wrt(wrt)) if wrt else (
        target if isinstance(target, srcad.api.Differentiable) else srcad.differentiable(target))
    expected = d.adjoint(*args, v) if v is not None else d.adjoint(*args)
    assert same(grads, expected)
    several = isinstance(d._wrt, tuple) and not d._single
    params = list(srcad.dispatch.generated_params(d._source_function(())))
    positions = [params.index(n) for n in d._names]
    plain = FINITE_DIFFERENCES_OF.get(case, d.func)
    numeric, directions = _finite_differences(plain, args[:len(params)], positions, 1.0 if v is None else v)
    analytic = sum(_vdot(g, directions[p]) for g, p in zip(grads if several else (grads,), positions))
    assert abs(numeric - analytic) <= 1e-7 + 1e-5 * max(abs(numeric), abs(analytic), 1.0)


def test_exported_module_refuses_what_srcad_refuses(exported):
    directory, model, results = exported
    d = srcad.differentiable(model.helper_in_loop)
    for key, call in (("int_x", lambda: d.adjoint(np.array([1, 2, 3, 4]), W3)),
                      ("no_v", lambda: srcad.differentiable(model.vector_out, wrt=("A", "x")).adjoint(A23, X3)),
                      ("bad_v", lambda: srcad.differentiable(model.vector_out, wrt=("A", "x")).adjoint(
                          A23, X3, np.ones(3)))):
        with pytest.raises(srcad.SrcadError) as raised:
            call()
        status, message = results[key]
        assert status == type(raised.value).__name__
        assert message == str(raised.value).replace(str(directory) + "/", "")


def test_exported_module_refuses_arguments_it_was_not_made_for(exported):
    status, message = exported[2]["list_x"]
    assert status == "ArgumentError" and "--containers" in message


def test_exported_module_imports_only_numpy_scipy_and_the_standard_library(exported):
    directory = exported[0]
    for path in directory.glob("exported_*.py"):
        tree = ast.parse(path.read_text())
        roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        roots |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert roots <= {"numpy", "scipy", "numbers", "math", "copy", "collections", "builtins", "dataclasses"}, (path.name, roots)
    # a program that uses no SciPy reads no name of it (srcad's messages may mention it)
    tree = ast.parse((directory / "exported_stack_loop.py").read_text())
    assert not any(isinstance(n, ast.Name) and n.id == "scipy" or isinstance(n, ast.alias) and "scipy" in n.name
                   or isinstance(n, ast.ImportFrom) and "scipy" in (n.module or "") for n in ast.walk(tree))


def test_export_is_deterministic_and_inlines_each_helper_once(exported):
    directory, model, _ = exported
    first = export_source(model.helper_in_loop)
    assert first == export_source(model.helper_in_loop)
    assert first == (directory / "exported_helper_in_loop.py").read_text()
    tree = ast.parse(first)
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert len(defined) == len(set(defined))
    assert {"helper_in_loop_adjoint", "_helper_in_loop_adjoint", "softplus_forward", "softplus_backward",
            "unbroadcast", "finish", "CotangentError"} <= set(defined)
    assert "W = np.array(" in export_source(model.with_globals) and "SCALE = 1.5" in export_source(model.with_globals)


def test_names_that_collide_are_renamed_in_the_code_that_reads_them(tmp_path):
    # the user's global `finish` and a parameter named `np` must not capture srcad's helper or NumPy
    (tmp_path / "cli_collide.py").write_text(textwrap.dedent('''
        import numpy


        def finish(t):
            return t + 1.0


        def collide(x, np):
            return numpy.sum(numpy.sin(x) * np) + finish(2.0)
    '''))
    out = tmp_path / "exported_collide.py"
    assert cli.main(["export", f"{tmp_path / 'cli_collide.py'}:collide", "-o", str(out)]) == 0
    text = out.read_text()
    assert "def finish_(" in text or "def finish(" in text
    x, scale = np.array([0.1, 0.2]), np.array([1.5, -2.0])
    [(status, grads)] = run_isolated(tmp_path, [("exported_collide", "collide_adjoint", (x, scale))])
    assert status == "ok"
    np.testing.assert_allclose(grads, np.cos(x) * scale, rtol=1e-12)


REFUSED = {
    "big_array": ("BIG = np.ones(5000)\n\ndef f(x):\n    return np.sum(x * BIG[:3])\n", "5000 entries"),
    "object": ("class Config:\n    scale = 2.0\n\nCFG = Config()\n\ndef f(x):\n    return np.sum(x * CFG.scale)\n",
               "Config"),
    "closure_helper": ("def make():\n    k = 2.0\n    def helper(n):\n        return n * k\n    return helper\n\n"
                       "helper = make()\n\ndef f(x, n):\n    return np.sum(x) * helper(n)\n",
                       "not defined at the top level"),
    "global_statement": ("CALLS = 0\n\ndef counted(n):\n    global CALLS\n    CALLS += 1\n    return n\n\n"
                         "def f(x, n):\n    return np.sum(x) * counted(n)\n", "global statement"),
    "generator": ("RNG = np.random.default_rng(0)\n\ndef f(x):\n    return np.sum(x * RNG.standard_normal(3))\n",
                  "numpy.random._generator.Generator"),
    "module": ("import decimal\n\ndef f(x, n):\n    return np.sum(x) * float(decimal.Decimal(n))\n", "decimal"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_export_refuses_what_it_cannot_write_down(tmp_path, capsys, case):
    source, why = REFUSED[case]
    path = tmp_path / f"cli_refused_{case}.py"
    path.write_text("import numpy as np\n\n" + source)
    assert cli.main(["export", f"{path}:f", "-o", str(tmp_path / "out.py")]) == 1
    err = capsys.readouterr().err
    assert "ExportError" in err and "cannot export" in err and why in err and f"{path.name}:" in err
    assert not (tmp_path / "out.py").exists()
