"""Shape inference: the shape and dtype of every variable, for one set of argument shapes.

srcad specialises generated code on the shapes and dtypes of the arguments (the cache key
includes them), so most shapes are known when the adjoint is generated. Afterwards the
function carries the annotation ``"specs"``: for each variable whose every assignment has
the same known shape and dtype, a ``Spec`` (and ``"item_specs"``: for a tuple of them, the
tuple of their ``Spec``s); variables whose shape depends on data (boolean
masks, lists grown in loops) or differs between assignments are absent. Rules use this to
decide ``if np.ndim(x) == 2:`` at generation time, and ``unbroadcast`` disappears where
no broadcasting happened.

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import anno
>>> def f(x, W):
...     h = np.tanh(x @ W)
...     return h.sum(axis=0)
>>> src = capture(f)
>>> node = normalize(resolve_calls(src.node, src), src)
>>> specs = anno(infer_shapes(node, {"x": arg_spec(np.ones((4, 3))), "W": arg_spec(np.ones((3, 2)))}), "specs")
>>> specs["h"], specs["_t2"]
(Spec((4, 2), float64), Spec((2,), float64))
"""
import builtins
import numbers

import gast
import numpy as np

from .. import astutil as A
from .shape_rules import (ARGUMENT_SHAPES, ARITHMETIC, LINALG_SHAPES, arithmetic_dtype, broadcast, is_python_number,
                          one_of, python_arithmetic)
from .shape_values import (BOTTOM, UNKNOWN, Spec, arg_spec, as_value, freeze, join, same, spec_key,  # noqa: F401
                           specs_key)
from .shape_containers import ContainerFlow, holds_no_container, operand_names
from .shape_helpers import HelperResults
from .standins import (hashable, is_large, is_shape_query, method_runs_on_standin, runs_on_known_values,
                       standin_positions)


def _concrete(value):
    return value is not UNKNOWN and value is not BOTTOM and not isinstance(value, Spec)


def _to_dummy(value):
    if isinstance(value, Spec):
        return value.dummy()
    if isinstance(value, list):
        return [_to_dummy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_dummy(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_dummy(v) for k, v in value.items()}
    if value is UNKNOWN or value is BOTTOM:
        raise LookupError
    return value


def _shape(dummy):
    return dummy.shape if isinstance(dummy, np.ndarray) else np.shape(dummy)


def _from_result(result):
    if isinstance(result, np.ndarray):
        return Spec(result.shape, result.dtype)
    if isinstance(result, np.generic):
        return Spec((), result.dtype)
    if isinstance(result, bool):
        return Spec((), np.bool_, bool)
    if isinstance(result, float):
        return Spec((), np.float64, float)
    if isinstance(result, (int, tuple, str, type(None))) and not isinstance(result, bool):
        return result if not isinstance(result, tuple) or all(isinstance(v, (int, type(None))) for v in result) else UNKNOWN
    return UNKNOWN


def _holds_unknown(value):
    """Is ``value``, or an item of a list, tuple or dict in it, unknown?"""
    if value is UNKNOWN:
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_unknown(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_unknown(v) for v in value.values())
    return False


def _holds_mutable(value):
    """Is ``value`` a list or dict, or a tuple holding one (a tuple of shapes cannot change)?"""
    if isinstance(value, (list, dict)):
        return True
    return isinstance(value, tuple) and any(_holds_mutable(v) for v in value)


def _has_standin(value):
    """Does ``value`` hold a ``Spec`` (a value known only by its shape and dtype)?"""
    if isinstance(value, Spec):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_standin(v) for v in value)
    if isinstance(value, dict):
        return any(_has_standin(v) for v in value.values())
    return False


def _typed(result):
    """What a result computed from stand-ins says: its kind, never its stand-in value."""
    if isinstance(result, bool):
        return Spec((), np.bool_, bool)
    if isinstance(result, numbers.Integral) and not isinstance(result, np.generic):
        return Spec((), np.int64, int)
    if isinstance(result, (tuple, list, dict, range)):
        return UNKNOWN
    return _from_result(result)


class _Interpreter:
    def __init__(self, env, local_names=(), helpers=None):
        self.env = env
        self.locals = set(local_names)
        self.helper_calls = False  # may a call to the user's own function be read (see ``helper_result``)?
        self.helpers = helpers if helpers is not None else HelperResults(_returned)

    def value(self, node):
        if isinstance(node, gast.Constant):
            if isinstance(node.value, (float, complex)):  # values of floats do not matter, their kind does
                return Spec((), np.float64 if isinstance(node.value, float) else np.complex128, type(node.value))
            return node.value
        if isinstance(node, gast.Name):
            return self.env.get(node.id, BOTTOM if node.id in self.locals else UNKNOWN)
        if isinstance(node, gast.UnaryOp) and A.is_atom(node):  # -3 or +3
            return self.value(node.operand) if isinstance(node.op, gast.UAdd) else self.negated(node.operand)
        if isinstance(node, gast.Tuple) and A.is_atom(node):  # (3, 4)
            return tuple(self.value(e) for e in node.elts)
        return UNKNOWN

    def negated(self, constant):
        value = self.value(constant)
        if isinstance(value, Spec):
            return value
        return -value if isinstance(value, numbers.Number) else UNKNOWN

    def rhs(self, node, waiting):
        """The value of ``node``, or ``BOTTOM`` while a name of ``waiting`` (the local names it
        reads as operands, ``operand_names``: the only names it reads) is not computed yet (and
        only then: every value in ``env`` is computed, and so is every item of one)."""
        if any(self.env.get(n, BOTTOM) is BOTTOM for n in waiting):
            return BOTTOM  # an operand not computed yet: come back in the next round
        try:
            return self._rhs(node)
        except Exception:  # an operation the stand-ins cannot run: shape unknown
            return UNKNOWN

    def _rhs(self, node):
        if A.is_atom(node):
            return self.value(node)
        if isinstance(node, gast.BinOp):
            return self.binop(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, gast.UnaryOp):
            operand = self.value(node.operand)
            if isinstance(node.op, gast.Not):
                return Spec((), np.bool_, bool)
            if _concrete(operand) and isinstance(operand, numbers.Number):
                return -operand if isinstance(node.op, gast.USub) else operand
            return operand if isinstance(operand, Spec) else UNKNOWN
        if isinstance(node, gast.Attribute):
            base = self.value(node.value)
            if isinstance(base, Spec):
                if node.attr in ("shape", "ndim", "size", "T", "real", "imag", "dtype"):
                    return _from_result(getattr(base.dummy(), node.attr)) if node.attr != "dtype" else UNKNOWN
            return UNKNOWN
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            items = [self.value(e) for e in node.elts]
            return tuple(items) if isinstance(node, gast.Tuple) else list(items)
        if isinstance(node, gast.Dict):
            keys = [self.value(k) for k in node.keys]
            if all(isinstance(k, str) for k in keys):
                return {k: self.value(v) for k, v in zip(keys, node.values)}
            return UNKNOWN
        if isinstance(node, gast.Call):
            return self.call(node)
        return UNKNOWN

    def binop(self, op, a, b):
        if _concrete(a) and _concrete(b) and isinstance(a, int) and isinstance(b, int):
            if isinstance(op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
                return {gast.Add: a + b, gast.Sub: a - b, gast.Mult: a * b,
                        gast.FloorDiv: a // b if b else None, gast.Mod: a % b if b else None}[type(op)]
        if isinstance(op, gast.MatMult):
            return self.matmul(a, b)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        da, db = _to_dummy(a), _to_dummy(b)
        if is_python_number(da) and is_python_number(db):
            return python_arithmetic(op, da, b)
        if isinstance(op, ARITHMETIC):
            shape = broadcast(_shape(da), _shape(db))
            is_float, dtype = arithmetic_dtype(op, da, db)
            if isinstance(a, Spec) and a.python and isinstance(b, Spec) and b.python or (
                    isinstance(da, (int, float)) and isinstance(db, (int, float))):
                return Spec((), np.float64, float) if is_float or dtype.kind == "f" else UNKNOWN
            return Spec(shape, dtype)
        return UNKNOWN

    def matmul(self, a, b):
        if not (isinstance(a, Spec) and isinstance(b, Spec)) or not a.shape or not b.shape:
            return UNKNOWN
        sa, sb = a.shape, b.shape
        dtype = np.result_type(a.dtype, b.dtype)
        if len(sa) == 1 and len(sb) == 1:
            return Spec((), dtype) if sa == sb else UNKNOWN
        left = sa if len(sa) > 1 else (1,) + sa
        right = sb if len(sb) > 1 else sb + (1,)
        if left[-1] != right[-2]:
            return UNKNOWN
        shape = np.broadcast_shapes(left[:-2], right[:-2]) + (left[-2], right[-1])
        if len(sa) == 1:
            shape = shape[:-2] + shape[-1:]
        if len(sb) == 1:
            shape = shape[:-1]
        return Spec(shape, dtype)

    def dot(self, a, b):
        """``np.dot``: ``@``'s shape up to 2-D; beyond, a's last axis meets b's second-to-last
        and the other axes of both are kept (no broadcasting)."""
        if isinstance(a, Spec) and isinstance(b, Spec) and min(len(a.shape), len(b.shape)) >= 2 \
                and max(len(a.shape), len(b.shape)) > 2:
            if a.shape[-1] != b.shape[-2]:
                return UNKNOWN
            return Spec(a.shape[:-1] + b.shape[:-2] + b.shape[-1:], np.result_type(a.dtype, b.dtype))
        return self.matmul(a, b)

    def subscript(self, node):
        base = self.value(node.value)
        if isinstance(base, (list, tuple)):
            key = self.value(node.slice) if not isinstance(node.slice, (gast.Slice, gast.Tuple)) else None
            if isinstance(key, Spec) or key is UNKNOWN:  # an item chosen at run time: all must agree
                items = list(base)
                joined = items[0] if items else UNKNOWN
                for item in items[1:]:
                    joined = join(joined, item) if same(joined, item) else UNKNOWN
                return joined
        index = self.index(node.slice)
        if isinstance(base, (list, tuple, dict)) and _concrete(index) and not isinstance(index, (tuple, slice)):
            return base[index]
        if isinstance(base, (tuple, list)) and isinstance(index, slice):
            return base[index]
        if isinstance(base, Spec):
            return _from_result(base.dummy()[_to_dummy(index)])
        return UNKNOWN

    def index(self, idx):
        if isinstance(idx, gast.Slice):
            parts = [None if p is None else self.value(p) for p in (idx.lower, idx.upper, idx.step)]
            if any(p is UNKNOWN or isinstance(p, Spec) for p in parts):
                raise LookupError  # a slice whose bounds depend on data
            return slice(*parts)
        if isinstance(idx, gast.Tuple):
            return tuple(self.index(e) for e in idx.elts)
        value = self.value(idx)
        if isinstance(value, Spec) and value.shape == () and value.dtype.kind in "iu":
            return 0  # any integer selects the same shape
        if isinstance(value, Spec) or value is UNKNOWN:
            raise LookupError  # an index array: the result's shape depends on it
        return value

    def call(self, node):
        """The result of a call, run on stand-ins only where only their shapes matter."""
        callee = A.anno(node, "callee")
        args = [self.value(a) if not isinstance(a, gast.Starred) else UNKNOWN for a in node.args]
        kwargs = {k.arg: self.value(k.value) for k in node.keywords}
        if any(_holds_unknown(v) for v in args + list(kwargs.values())):
            return UNKNOWN  # np.stack([p, q]) of unknown p, q is not a stack of two objects
        if callee.kind == "object" and _is_user_function(callee.obj):
            return self.helper_result(callee.obj, node) if self.helper_calls else UNKNOWN
        if callee.kind == "method":
            receiver = self.value(node.func.value)
            if not isinstance(receiver, Spec) or receiver.python is not None:
                return UNKNOWN
            if callee.name == "dot" and len(args) == 1 and not kwargs:
                return self.dot(receiver, args[0])
            if not method_runs_on_standin(callee.name) or _has_standin(args) or _has_standin(kwargs):
                return UNKNOWN
            fn, args, data = getattr(np.ndarray, callee.name), [receiver] + args, (0,)
        elif callee.kind == "object":
            fn = callee.obj
            if fn is np.matmul or fn is np.dot:
                if len(args) != 2 or kwargs:
                    return UNKNOWN
                return self.matmul(*args) if fn is np.matmul else self.dot(*args)
            rule = LINALG_SHAPES.get(fn) if isinstance(fn, type(np.linalg.inv)) else None
            if rule is not None:  # never run on stand-ins: np.linalg.inv of zeros fails
                return rule(*args) if not kwargs and all(isinstance(a, Spec) for a in args) else UNKNOWN
            rule = ARGUMENT_SHAPES.get(fn) if hashable(fn) is not None else None
            if rule is not None:
                try:
                    return rule(*args, **kwargs)
                except TypeError:  # a call that does not bind: NumPy says so when it runs
                    return UNKNOWN
            if not (_has_standin(args) or _has_standin(kwargs)):  # known values: compute
                if not runs_on_known_values(fn):
                    return UNKNOWN
                if any(is_large(a) for a in args + list(kwargs.values())):
                    return UNKNOWN  # np.ones((10**5, 10**5)) is not built at generation time
                with np.errstate(all="ignore"):
                    return _from_result(fn(*args, **kwargs))
            if fn in (builtins.min, builtins.max) and len(args) > 1 and not kwargs:
                return one_of(args)
            if fn in (builtins.list, builtins.tuple) and len(args) == 1 and not kwargs and isinstance(
                    args[0], (list, tuple)):
                return fn(args[0])  # list(L), tuple(L) of a list or tuple: a new one of the same items
            if fn in (builtins.int, builtins.float) and len(args) == 1 and not kwargs and args[0].shape == ():
                return Spec((), np.int64, int) if fn is builtins.int else Spec((), np.float64, float)
            data = standin_positions(fn, len(args))
            if data is None or _has_standin(kwargs) or any(
                    _has_standin(a) for i, a in enumerate(args) if i not in data):
                return UNKNOWN
        elif callee.kind == "object" and self.helper_calls:
            return self.helper_result(callee.obj, node)
        else:
            return UNKNOWN
        if any(isinstance(a, Spec) and a.python is None and int(np.prod(a.shape)) > 1_000_000 for a in args):
            return UNKNOWN  # too large to run on stand-ins at generation time
        with np.errstate(all="ignore"):
            result = fn(*[_to_dummy(a) for a in args], **{k: _to_dummy(v) for k, v in kwargs.items()})
        return _from_result(result) if is_shape_query(fn) else _typed(result)

    def helper_result(self, fn, node):
        """What the user's own function ``fn`` returns, from shape inference on its source
        with what is known of the arguments (the reverse pass specialises its adjoint on the
        same shapes). One level deep: calls inside it are left unknown."""
        import inspect

        try:
            signature = inspect.signature(fn, follow_wrapped=False)
            params = signature.parameters.values()
            if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
                return UNKNOWN
            bound = signature.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except (TypeError, ValueError):
            return UNKNOWN
        known = {p.name: UNKNOWN for p in params}
        known.update({name: self.value(arg) for name, arg in bound.arguments.items()})
        return self.helpers.returned(fn, known)


def _is_user_function(obj):
    import types

    from .. import registry

    return (isinstance(getattr(obj, "__srcad_function__", obj), types.FunctionType)
            and registry.lookup(registry.VJP, obj) is None and not registry.is_nondifferentiable(obj))


def _returned(node, known):
    """The abstract value the function ``node`` (normal form) returns given abstract
    parameters ``known``, or unknown."""
    returns = [r for r in gast.walk(node) if isinstance(r, gast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return UNKNOWN
    env = _infer(node, known)
    value = _Interpreter(env, ()).value(returns[0].value)
    return UNKNOWN if _holds_unknown(value) or value is BOTTOM else value


def region_shape(base, index, specs):
    """The shape of ``base[index]`` (``index`` a gast index) from the known ``specs``, or None."""
    if not isinstance(specs.get(base), Spec):
        return None
    read = gast.Subscript(value=A.load(base), slice=index, ctx=gast.Load())
    try:
        region = _Interpreter(dict(specs), ()).subscript(read)
    except Exception:  # an index not known when the code is generated
        return None
    return region.shape if isinstance(region, Spec) else None


def infer_shapes(node, specs):
    """Annotate ``node`` (A-normal form) with ``"specs"``; ``specs`` maps parameters to ``arg_spec``s."""
    env = _infer(node, {name: as_value(spec) for name, spec in specs.items()}, A.anno(node, "active"))
    A.set_anno(node, "specs", {k: v for k, v in env.items() if isinstance(v, Spec)})
    # tuple results (slogdet's pair): the reverse pass may keep one adjoint per item
    A.set_anno(node, "item_specs", {k: v for k, v in env.items() if isinstance(v, tuple) and v
                                    and all(isinstance(item, Spec) for item in v)})
    A.set_anno(node, "container_values", {k for k, v in env.items() if isinstance(v, (list, tuple, dict))})
    A.set_anno(node, "param_specs", dict(specs))
    return node


def abstract_values(node, known):
    """The abstract value of every variable of ``node`` (A-normal form), its parameters'
    given in ``known`` (``checkpoint_state`` reads a function of yours with them)."""
    return _infer(node, dict(known))


def _infer(node, env, active=None):
    """The abstract value of every variable of ``node`` (parameters' values in ``env``); the
    results of calls to the user's own functions are read where they are ``active`` (whose
    callees the reverse pass compiles, guarded like the caller)."""
    code, helpers = _Code(node), HelperResults(_returned)
    flow = code.flow
    if not flow.given:
        return _fixpoint(code, env, active, flow.changing(), helpers)[0]
    # first as if what calls are given holds no list or dict (a state array): checked after
    changing = flow.changing(leave_out=flow.given)
    found, held_containers = _fixpoint(code, dict(env), active, changing, helpers)
    if all(holds_no_container(found.get(name, UNKNOWN)) for name in flow.given):
        return found
    every = flow.changing()
    if not held_containers & (every - changing):
        return found  # the names changing now never held a list or dict: it would run as it ran
    return _fixpoint(code, env, active, every, helpers)[0]


class _Code:
    """What inference reads off a function once: its assignments to names and the names each
    reads as operands, its loops, its local names, how its lists and dicts may change."""

    def __init__(self, node):
        from .callees import local_names

        nodes = list(A.walk(node))
        self.assigns = [s for s in nodes if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)]
        self.operands = [operand_names(s.value) for s in self.assigns]
        self.loops = [s for s in nodes if isinstance(s, gast.For)]
        self.locals = local_names(node)
        read = {id(s.value): names for s, names in zip(self.assigns, self.operands)}
        self.flow = ContainerFlow(nodes, lambda e: read[id(e)] if id(e) in read else operand_names(e))


def _fixpoint(code, env, active, changing, helpers):
    """``(env, held_containers)``: the fixpoint, and the names that held a list or dict on the
    way (the only ones ``changing`` made a difference to)."""
    params = set(env)
    interp = _Interpreter(env, code.locals, helpers)
    assigns = code.assigns
    held_containers = {name for name in params if _holds_mutable(env[name])}
    for name in changing & held_containers:
        env[name] = UNKNOWN
    never = set()  # assigned from values that are never computed here: unknown, not ignored
    # an assignment is evaluated again only once a name it reads (an operand: nothing else is
    # read, see ``rhs``) or its target is bound to a new value: with the values it last saw, it
    # would join in what it joined then (join is idempotent)
    waiting = [[n for n in operands if n in interp.locals] for operands in code.operands]
    readers = {}
    for k, s in enumerate(assigns):
        for name in {s.targets[0].id, *code.operands[k]}:
            readers.setdefault(name, []).append(k)
    stale = [True] * len(assigns)

    def bind(name, value):
        env[name] = value
        for k in readers.get(name, ()):
            stale[k] = True

    for _ in range(40):
        changed = False
        for k, s in enumerate(assigns):
            if not stale[k]:
                continue
            name = s.targets[0].id
            interp.helper_calls = bool(active) and name in active
            new = join(env.get(name, BOTTOM) if name in env or name in params else BOTTOM,
                       interp.rhs(s.value, waiting[k]))
            if _holds_mutable(new):
                held_containers.add(name)
            if name in never or (name in changing and _holds_mutable(new)):
                new = UNKNOWN  # unknown, or a list or dict whose items change after it is bound
            if not same(env.get(name, BOTTOM), new):
                bind(name, new)
                changed = True
            stale[k] = False
        for loop in code.loops:
            rng = env.get(loop.iter.id, UNKNOWN)
            new = Spec((), np.int64, int)
            if isinstance(rng, range) and len(rng) == 1:
                new = rng[0]
            name = loop.target.id
            if not same(env.get(name, BOTTOM), join(env.get(name, BOTTOM), new)):
                bind(name, join(env.get(name, BOTTOM), new))
                changed = True
        if not changed:  # (an assignment's value is BOTTOM exactly while it waits on an operand)
            stuck = {s.targets[0].id for s, names in zip(assigns, waiting)
                     if any(env.get(n, BOTTOM) is BOTTOM for n in names)} - never
            if not stuck:
                break
            never |= stuck
            stale[:] = [True] * len(assigns)  # an assignment to a name now in ``never`` changes
    else:  # no fixpoint: claim nothing rather than something unsound
        env = {}
    return env, held_containers
