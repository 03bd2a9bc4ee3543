"""Concurrency and memory: first use from many threads at once, and caches that let go of
functions, closures, generated code and its linecache entries when the user's code dies."""
import gc
import importlib.util
import linecache
import pathlib
import subprocess
import sys
import threading
import tracemalloc

import numpy as np

import srcad
from srcad import compile as srcad_compile
from srcad.testing import check_grads, check_jvp

X = np.array([0.1, 0.5, -0.3])


def _module(tmp_path, name, count, body):
    """A fresh module of ``count`` distinct functions ``f0, f1, ...`` (each its own code)."""
    lines = ["import numpy as np", "", "def shared(x):", "    return np.sin(x) * x", ""]
    for i in range(count):
        lines += [f"def f{i}(x):", "    " + body.format(i=i + 1), ""]
    path = tmp_path / f"{name}.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def test_first_use_from_many_threads_at_once(tmp_path):
    """Regression: a process-wide 'in progress' set made a thread see another thread's
    compilation of a shared callee as recursion ('shared calls itself')."""
    threads, per_thread = 8, 4
    module, _ = _module(tmp_path, "srcad_threads_module", threads * per_thread,
                        "return np.sum(shared(x) * {i}.0 + np.tanh(x) ** 2)")
    barrier = threading.Barrier(threads)
    errors = []

    def work(t):
        barrier.wait()
        for j in range(per_thread):
            fun = getattr(module, f"f{t * per_thread + j}")
            try:
                check_grads(fun, (X,), directions=1, modes=("rev",))
                check_jvp(fun, (X,), directions=1)
            except Exception as exc:  # collected: an assertion in a thread would be lost
                errors.append(f"f{t * per_thread + j}: {exc!r}")

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []


def test_recursion_is_still_refused_per_thread(tmp_path):
    module, _ = _module(tmp_path, "srcad_recursive_module", 1, "return np.sum(x) + f0(x)")
    errors = []

    def work():
        try:
            srcad.grad(module.f0)(X)
        except srcad.errors.SrcadError as exc:
            errors.append(str(exc))

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(errors) == 4 and all("calls itself" in e for e in errors)


def _retained_per_call(loop, n):
    # a first full run: srcad's lazily built tables, the first compilation, and the one-time
    # growth of tables earlier tests filled (a dict that resizes once is not a leak; a leak
    # grows again in the measured run)
    loop(n)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loop(n)
        gc.collect()
        return (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()


def _decorated_functions_and_closures_are_released():
    """Regression: the compiled code kept every function instance it was bound to (about
    1 KB per decorated function or short-lived closure, never freed)."""
    def decorated(n):
        for _ in range(n):
            @srcad.differentiable
            def f(x):
                return np.sum(np.sin(x) * x)
            f.grad(X)

    def make(a):
        def g(x):
            return np.sum(np.tanh(x) * a)
        return g

    def closures(n):
        for i in range(n):
            srcad.grad(make(float(i)))(X)

    assert _retained_per_call(decorated, 1000) < 64
    assert _retained_per_call(closures, 1000) < 64
    np.testing.assert_allclose(srcad.grad(make(2.0))(X), 2.0 * (1 - np.tanh(X) ** 2))


def _differentiate_all_then_drop(tmp_path, name, count):
    """Differentiate ``count`` distinct functions of a fresh module, then let the module go;
    returns the ids of their code objects."""
    module, path = _module(tmp_path, name, count, "return np.sum(shared(x) * {i}.0)")
    for i in range(count):
        srcad.differentiable(getattr(module, f"f{i}")).grad(X)
    assert len([n for n in linecache.cache if name in n]) >= count  # sources there while the code lives
    codes = {id(getattr(module, f"f{i}").__code__) for i in range(count)}
    del module
    sys.modules.pop(name, None)
    path.unlink()
    linecache.checkcache()
    gc.collect()
    return codes


def _traced_without_method_cache():
    """Traced bytes, less the visitor method names ('visit_Name'...) the interpreter's type
    method cache keeps (at most 4096 of them, so not a leak: small runs would still see them)."""
    snapshot = tracemalloc.take_snapshot().filter_traces([
        tracemalloc.Filter(False, "*/ast.py"), tracemalloc.Filter(False, "*/astor/*")])
    return sum(stat.size for stat in snapshot.statistics("filename"))


def _distinct_functions_release_their_generated_code_and_linecache(tmp_path):
    """Regression: every function ever differentiated stayed in the cache (about 10 KB each),
    with its generated source in linecache, after its module was gone."""
    count = 25
    check_grads(_module(tmp_path, "srcad_checked_module", 1, "return np.sum(shared(x) * {i}.0)")[0].f0, (X,))
    _differentiate_all_then_drop(tmp_path, "srcad_warm_module", count)  # srcad's tables grow once
    lines_before = len(linecache.cache)
    retained = []
    tracemalloc.start()
    try:
        # two batches: a leak shows in both, while a table the interpreter grows once (a dict
        # resized, a regex or frame cached: Python 3.10 has more of them) lands in one
        for batch in ("srcad_released_module", "srcad_released_again_module"):
            before = _traced_without_method_cache()
            codes = _differentiate_all_then_drop(tmp_path, batch, count)
            retained.append((_traced_without_method_cache() - before) / count)
            assert not [name for name in linecache.cache if batch in name]
            assert not codes & set(srcad_compile._CACHE._entries)
    finally:
        tracemalloc.stop()
    assert len(linecache.cache) <= lines_before
    assert min(retained) < 2000, retained  # it was about 10 KB per function


def _in_a_fresh_process(name, *args):
    """Run the measurement ``name`` in a new interpreter: what earlier tests and pytest's own
    recorders (warnings, captured output) keep is not srcad's to release."""
    here = pathlib.Path(__file__).resolve().parent
    code = (f"import sys; sys.path[:0] = [{str(here)!r}, {str(here.parent)!r}]; import pathlib; "
            f"import test_runtime_resources as t; t.{name}(*[pathlib.Path(a) for a in sys.argv[1:]])")
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_decorated_functions_and_closures_are_released():
    _in_a_fresh_process("_decorated_functions_and_closures_are_released")


def test_distinct_functions_release_their_generated_code_and_linecache(tmp_path):
    _in_a_fresh_process("_distinct_functions_release_their_generated_code_and_linecache", tmp_path)
