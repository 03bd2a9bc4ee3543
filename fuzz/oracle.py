"""Load a generated program, keep its inputs away from kinks, and check srcad on it.

Every check compares srcad with central finite differences in random directions:
``rev`` (joint adjoint and the vjp pullback called twice, ``srcad.testing.check_grads``),
``fwd`` (``srcad.testing.check_jvp``), ``hvp`` (``srcad.hvp``, forward over reverse) and
``gog`` (``srcad.grad`` of ``srcad.grad``, reverse over reverse) — the last two against
finite differences of ``srcad.grad`` and only for scalar outputs — and, where numba is
installed, ``numba`` (the compiled backend's gradient against the NumPy backend's, to
rounding; what numba cannot compile is a refusal). After each check the caller's arrays must
be unchanged.

A ``SrcadError`` is a *refusal*; anything else that goes wrong is a *failure*, keyed by a
normalised description so that failures with one cause share a key.
"""
import ast
import builtins
import copy
import importlib.util
import itertools
import operator
import re
import signal
import sys
import traceback
from dataclasses import dataclass

import numpy as np

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads, check_jvp

MODES = ("rev", "fwd", "hvp", "gog", "numba")
DEFAULT_MODES = MODES[:4]  # numba compiles for seconds per program: asked for by name
MARGIN = 1e-3       # inputs are redrawn while a branch test or kink is closer than this
LIMIT = 1e4         # outputs larger than this make finite differences meaningless
TIMEOUT = 30.0      # CPU seconds per check (CPU, not wall: a loaded machine must not make timeouts)
_modules = itertools.count()


@dataclass
class Outcome:
    status: str      # "pass" | "refused" | "fail" | "n/a"
    key: str = ""    # refusal reason or failure key
    detail: str = ""


class Invalid(Exception):
    """The program itself does not run cleanly at these inputs (not srcad's fault)."""


class Timeout(Exception):
    pass


# ---- loading -------------------------------------------------------------------------------
def load(source, directory, entry, instrument=False):
    """Write ``source`` to a fresh file in ``directory`` and import it; return its ``entry``."""
    name = f"fz_{next(_modules)}"
    path = directory / f"{name}.py"
    if instrument:
        tree = _Instrument().visit(ast.parse(source))
        source = ast.unparse(ast.fix_missing_locations(tree))
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if instrument:
        module.__fz_compare__, module.__fz_kink__ = _compare, _kink
    spec.loader.exec_module(module)
    sys.modules[name] = module  # inspect.getsource finds the module
    return entry_of(module, entry)


def entry_of(module, entry):
    """The function ``entry`` names in ``module``: a function, or ``obj.method`` bound."""
    for part in entry.split("."):
        module = getattr(module, part)
    return module


# ---- margins: how close the inputs are to a branch boundary or a kink ------------------------
_margin = [np.inf]
_OPS = {"Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge,
        "Eq": operator.eq, "NotEq": operator.ne}
_KINKS = {"maximum", "minimum", "fmax", "fmin", "abs", "absolute", "fabs", "clip", "max", "min", "amax", "amin",
          "sort", "ptp", "median", "sign", "sorted"}


def _record(value):
    value = np.asarray(value, dtype=np.float64)
    if value.size:
        _margin[0] = min(_margin[0], float(np.min(np.abs(value))))


def _is_float(x):
    return isinstance(x, (float, np.floating)) or (isinstance(x, np.ndarray) and x.dtype.kind in "fc")


def _compare(left, ops, rights):
    result = True
    for op, right in zip(ops, rights):
        if _is_float(left) or _is_float(right):
            _record(np.subtract(left, right))
        value = _OPS[op](left, right)
        if len(ops) == 1:
            return value
        result = result and value
        if not result:
            return result
        left = right
    return result


def _gap(a, axis):
    a = np.asarray(a, dtype=np.float64)
    if a.size < 2:
        return
    s = np.sort(a, axis=axis) if axis is not None else np.sort(a.ravel())
    ax = axis if axis is not None else 0
    if s.shape[ax] >= 2:
        _record(np.diff(s, axis=ax))


def _kink(name, func, *args, **kwargs):
    try:
        owner = getattr(func, "__self__", None)
        if isinstance(owner, np.ndarray):  # a method: x.max(axis=0)
            args_ = (owner,) + args
        else:
            args_ = args
        if name in ("maximum", "minimum", "fmax", "fmin"):
            _record(np.subtract(args_[0], args_[1]))
        elif name in ("abs", "absolute", "fabs", "sign"):
            if _is_float(args_[0]):
                _record(args_[0])
        elif name == "clip":
            lo = args_[1] if len(args_) > 1 else kwargs.get("a_min", kwargs.get("min"))
            hi = args_[2] if len(args_) > 2 else kwargs.get("a_max", kwargs.get("max"))
            for bound in (lo, hi):
                if bound is not None:
                    _record(np.subtract(args_[0], bound))
        elif func in (builtins.max, builtins.min, builtins.sorted):
            if len(args_) == 1 and not hasattr(args_[0], "__len__"):  # a generator: read it once
                args = args_ = (list(args_[0]),)
            items = args_ if len(args_) > 1 else list(args_[0])
            items = list({id(i): i for i in items}.values())  # one value passed twice is no kink
            if kwargs.get("key") is not None:  # the items are picked by their keys: a tie of keys is the kink
                items = [kwargs["key"](i) for i in items]
            if all(_is_float(i) or isinstance(i, int) for i in items) and any(_is_float(i) for i in items):
                _gap(np.array([float(i) for i in items]), None)
        else:  # reductions and sort along an axis
            axis = kwargs.get("axis", args_[1] if len(args_) > 1 and isinstance(args_[1], (int, tuple)) else None)
            if _is_float(args_[0]):
                _gap(args_[0], axis if isinstance(axis, int) or axis is None else None)
    except Exception:  # measuring must never change what the program does
        pass
    return func(*args, **kwargs)


class _Instrument(ast.NodeTransformer):
    def visit_Compare(self, node):
        self.generic_visit(node)
        if not all(type(op).__name__ in _OPS for op in node.ops):
            return node
        ops = ast.List([ast.Constant(type(op).__name__) for op in node.ops], ast.Load())
        return ast.Call(ast.Name("__fz_compare__", ast.Load()),
                        [node.left, ops, ast.List(node.comparators, ast.Load())], [])

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in _KINKS:
            return ast.Call(ast.Name("__fz_kink__", ast.Load()), [ast.Constant(name), f] + node.args, node.keywords)
        return node


def margin(fn, args):
    """The smallest distance from a branch boundary or kink that running ``fn(*args)`` meets."""
    _margin[0] = np.inf
    fn(*copy.deepcopy(args))
    return _margin[0]


def unexecuted(fn, args, source):
    """Lines of statements inside functions of ``source`` that ``fn(*args)`` does not execute."""
    filename = fn.__code__.co_filename
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else []
            for inner in body:
                lines.update(n.lineno for n in ast.walk(inner) if isinstance(n, ast.stmt))
    ran = set()

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != filename:
            return None
        if event == "line":
            ran.add(frame.f_lineno)
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        with time_limit(5):  # a shrunk program may loop forever
            fn(*copy.deepcopy(args))
    except Timeout:
        raise
    except Exception:
        pass
    finally:
        sys.settrace(old)
    return lines - ran


# ---- the program at its inputs ---------------------------------------------------------------
def leaves(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in leaves(item)]
    return [x]


def same(a, b):
    la, lb = leaves(a), leaves(b)
    return len(la) == len(lb) and all(type(u) is type(w) and np.array_equal(u, w) for u, w in zip(la, lb))


def run_plain(fn, args):
    """Run ``fn`` on copies; raise Invalid unless it returns finite, moderate floats and leaves
    its arguments alone."""
    work = copy.deepcopy(args)
    try:
        with time_limit(10):
            y = fn(*work)
    except Timeout:
        raise Invalid("the program takes too long")
    except Exception as e:
        raise Invalid(f"the program raises {type(e).__name__}: {e}")
    if not same(work, args):
        raise Invalid("the program modifies its arguments")
    for leaf in leaves(y):
        a = np.asarray(leaf)
        if a.dtype.kind not in "fiu" or a.dtype.kind != "f" and not isinstance(leaf, float):
            raise Invalid(f"the program returns {a.dtype}")
        if not np.all(np.isfinite(a)) or np.any(np.abs(a) > LIMIT):
            raise Invalid("the program's output is not finite or too large")
    return y


class time_limit:
    """Raise ``Timeout`` after ``seconds`` of this process's CPU time."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        def alarm(signum, frame):
            raise Timeout()
        self.old = signal.signal(signal.SIGPROF, alarm)
        signal.setitimer(signal.ITIMER_PROF, self.seconds)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, self.old)
        return False


# ---- keys ------------------------------------------------------------------------------------
def normalise(message):
    """A message with what varies between programs (names, numbers, paths) blanked out."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else ""
    first = re.sub(r"<srcad-generated [^>]*>", "<srcad-generated>", first)
    first = re.sub(r"^\S+\.py:\d+: ", "", first)
    first = re.sub(r"/\S+\.py", "FILE", first)
    first = re.sub(r"'[^']*'", "'…'", first)
    first = re.sub(r"`[^`]*`", "`…`", first)
    first = re.sub(r"array\(.*", "array(…)", first)
    first = re.sub(r"\(\d+(, \d+)*,?\)", "(SHAPE)", first)
    first = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", first)
    first = re.sub(r"\b(of|for|to|in) [A-Za-z_][A-Za-z_0-9.]*", r"\1 NAME", first)
    return first[:160]


def _raised_in_checker(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and (frames[-1].filename.endswith("srcad/testing.py")
                             or frames[-1].filename.endswith("fuzz/oracle.py"))


def _mismatch_key(mode, message):
    text = str(message)
    for what in ("numba gradient", "gog: adjoint", "gog: pullback", "gog: a second pullback", "gog: vjp's forward value",
                 "gog: adjoint shape", "hvp shape", "hvp", "adjoint of", "pullback of", "vjp's forward value", "a second pullback call", "jvp's value",
                 "jvp of", "gradient shape", "gradient keys", "gradient", "tangent shape", "tangent"):
        if text.startswith(what) or f": {what}" in text[:80]:
            return f"{mode}: wrong {what.replace(' of', '')}"
    return f"{mode}: wrong value"


# ---- checks ----------------------------------------------------------------------------------
RTOL, ATOL = 1e-4, 1e-6


def _second_order_positions(program, args):
    return [k for k in program.wrt if isinstance(args[k], (float, np.ndarray))]


def _check_hvp(fn, args, k, eps, rtol, atol):
    rng = np.random.default_rng(1)
    u = rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else float(rng.standard_normal())
    got = srcad.hvp(fn, wrt=k)(*args, u)
    gradient = srcad.grad(fn, wrt=k)
    moved = lambda t: [a if i != k else a + t * u for i, a in enumerate(args)]
    numeric = (np.asarray(gradient(*moved(eps))) - np.asarray(gradient(*moved(-eps)))) / (2 * eps)
    if np.shape(got) != np.shape(numeric):
        raise AssertionError(f"hvp shape {np.shape(got)} != {np.shape(numeric)}")
    if not np.allclose(got, numeric, rtol=rtol, atol=atol):
        raise AssertionError(f"hvp {got!r} but finite differences of grad give {numeric!r}")


def _check_gog(fn, args, k, eps, rtol, atol):
    """vᵀ(∂ grad/∂x) by srcad (adjoint, and a pullback called twice) against finite differences
    of ``srcad.grad``. (``check_grads`` cannot take ``srcad.grad(f)`` itself: see the findings.)"""
    rng = np.random.default_rng(2)
    like = lambda: rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else float(rng.standard_normal())
    gradient = srcad.grad(fn, wrt=k)
    v = like()
    joint = srcad.adjoint(gradient, wrt=k)(*args, v)
    value, pullback = srcad.vjp(gradient, *args, wrt=k)
    first, again = pullback(v), pullback(v)
    if not np.array_equal(first, again):
        raise AssertionError("gog: a second pullback call differs")
    if not np.allclose(value, gradient(*args), rtol=rtol, atol=atol):
        raise AssertionError("gog: vjp's forward value differs from grad")
    for name, got in (("adjoint", joint), ("pullback", first)):
        if np.shape(got) != np.shape(args[k]):
            raise AssertionError(f"gog: {name} shape {np.shape(got)} != {np.shape(args[k])}")
        for _ in range(2):
            u = like()
            moved = lambda t: [a if i != k else a + t * u for i, a in enumerate(args)]
            numeric = float(np.vdot(v, (np.asarray(gradient(*moved(eps))) - np.asarray(gradient(*moved(-eps))))
                                    / (2 * eps)))
            analytic = float(np.vdot(got, u))
            if not abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic), 1.0):
                raise AssertionError(f"gog: {name} of grad: directional derivative {analytic!r} but finite "
                                     f"differences of grad give {numeric!r}")


# Steps of the strict check, then of the loose rechecks: (first order, second order). A loose
# recheck takes a larger step (rounding error) and smaller ones (curvature near a kink, or a
# value doubled in a loop until sin(2**17 * s) turns a full radian over a step of 1e-6).
STRICT_STEPS = (1e-6, 1e-5)
LOOSE_STEPS = ((1e-5, 1e-4), (1e-7, 1e-6), (1e-9, 1e-8), (1e-9, 1e-10))


def _check(mode, fn, program, args, steps=STRICT_STEPS, loose=False):
    rtol, atol = (1e-3, 1e-5) if loose else (RTOL, ATOL)
    eps, eps2 = steps
    if mode == "rev":
        check_grads(fn, args, wrt=program.wrt, rtol=rtol, atol=atol, eps=eps, modes=("rev",))  # (fwd: its own mode)
    elif mode == "fwd":
        check_jvp(fn, args, wrt=program.wrt, rtol=rtol, atol=atol, eps=eps)
    elif mode == "hvp":
        for k in _second_order_positions(program, args):
            _check_hvp(fn, args, k, eps2, rtol, atol)
    elif mode == "gog":
        for k in _second_order_positions(program, args):
            _check_gog(fn, args, k, eps2, rtol, atol)
    elif mode == "numba":
        _check_numba(fn, args, program.wrt)


def _check_numba(fn, args, wrt):
    """The compiled gradient equals the NumPy backend's to rounding (the same code, compiled)."""
    wrt = wrt if len(wrt) > 1 else wrt[0]
    expected = srcad.grad(fn, wrt=wrt)(*args)
    got = srcad.grad(fn, wrt=wrt, backend="numba")(*args)
    for e, g in zip(srcad.pytrees.leaves(expected), srcad.pytrees.leaves(got)):
        if not np.allclose(g, e, rtol=1e-9, atol=1e-12):
            raise AssertionError(f"numba gradient {g!r} but the NumPy backend's is {e!r}")


def applies(mode, program, args):
    if mode in ("hvp", "gog"):
        return program.scalar_output and bool(_second_order_positions(program, args))
    if mode == "numba":
        return program.scalar_output and importlib.util.find_spec("numba") is not None
    return True


def check(mode, fn, program, args):
    """Run one mode's check; an ``Outcome``."""
    if not applies(mode, program, args):
        return Outcome("n/a")
    saved = copy.deepcopy(args)
    try:
        with time_limit(TIMEOUT):
            _check(mode, fn, program, args)
        outcome = Outcome("pass")
    except Timeout:
        outcome = Outcome("fail", f"{mode}: timeout", f"no answer within {TIMEOUT} s")
    except SrcadError as e:
        outcome = Outcome("refused", normalise(e), str(e))
    except AssertionError as e:
        if _raised_in_checker(e):
            outcome = Outcome("fail", _mismatch_key(mode, e), str(e)[:2000])
            loose = _check_loosely(mode, fn, program, args)
            if loose is True:
                outcome = Outcome("pass", "noise", str(e)[:2000])  # finite differences at their limit
            elif isinstance(loose, SrcadError):  # agreed loosely up to a part srcad refuses
                outcome = Outcome("refused", normalise(loose), str(loose))
        else:
            outcome = Outcome("fail", f"{mode}: AssertionError in srcad: {normalise(e)}", _trace(e))
    except RecursionError as e:
        outcome = Outcome("fail", f"{mode}: RecursionError", _trace(e))
    except Exception as e:
        outcome = Outcome("fail", f"{mode}: {type(e).__name__}: {normalise(e)}", _trace(e))
    if not same(args, saved):
        return Outcome("fail", f"{mode}: modifies the caller's arrays", outcome.detail)
    return outcome


def _check_loosely(mode, fn, program, args):
    """True if a looser tolerance with a larger or a smaller finite-difference step agrees; the
    refusal if it agrees up to a part srcad refuses (second order checks one argument after
    another: the strict check stopped at a mismatch before it reached the refused one)."""
    for steps in LOOSE_STEPS:
        try:
            with time_limit(TIMEOUT):
                _check(mode, fn, program, args, steps, loose=True)
            return True
        except SrcadError as e:
            return e
        except Exception:
            pass
    return False


def _trace(e):
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])[:3000]
