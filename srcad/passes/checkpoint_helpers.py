"""Functions of yours a checkpointed loop calls, read as the loop is (``checkpoint_state``):
what each updates in place and whether it answers an array or a number, read once for each
combination of what is known of its arguments (an array given is one in it, and in the
functions it calls with it), and where in your code a problem it reaches is."""
import collections
import functools

import gast

from .. import astutil as A
from .. import registry
from ..errors import SrcadError
from ..source import capture
from ..sourcemap import generated_from, user_line
from .callees import parameter_names
from .checkpoint_kinds import ARRAY, CONTAINER, MODULE, SAFE, STRING, Kinds, Obj
from .checkpoint_problems import BEFORE_THE_LOOP, IN_A_VARIABLE, PLAIN_LOOP, Problem
from .fresh import known_pure, module_of
from .memory import updated_outside
from .memory_values import bind_call
from .normalize import normalize
from .resolve_calls import resolve_calls
from .call_binding import is_python_function, user_function_call
from .shape_values import UNKNOWN, Spec
from .shapes import abstract_values


def read_as_helper(callee):
    """Is ``callee`` a function of yours srcad reads as the loop is? One with a rule (``custom_vjp``,
    ``register_vjp``) too: the recomputation runs the function itself. (Not a function of the
    libraries srcad has rules for, ``scipy.special.logsumexp``: it leaves its arguments alone.)"""
    return user_function_call(callee) or is_python_function(callee.obj) and registry.lookup(
        registry.VJP, callee.obj) is not None and not known_pure(callee.obj)


class Read(collections.namedtuple("Read", "updates answers_number")):
    """What reading a function of yours found: the parameters it ``updates`` in place, and
    whether it ``answers_number`` (returns an array or a number)."""


def helper_updates(obj, name, body, call):
    """The parameters the function of yours ``obj`` updates in place; raise ``Problem`` if it
    may change anything else."""
    found = _read_once(obj, call, body.helpers, body.kinds.of, body.kinds.abstract)
    if isinstance(found, Problem):
        raise Problem(f"{name}(...) {found.what}", found.advice)
    return found.updates if found is not None else None  # (None: a recursive call, the rest answers for it)


def answers_number(helpers, call, numeric, abstract):
    """Does ``call`` of a function of yours answer an array or a number, given what is known of
    its arguments (an array or a number where ``numeric`` holds)? ``Kinds`` asks, so that a
    value the loop computes from it is known too (shape inference reads one level of calls)."""
    callee = A.anno(call, "callee")
    if callee is None or callee.kind != "object" or not read_as_helper(callee) or module_of(
            callee.obj).split(".")[0] == "srcad":  # (srcad's helpers: ``Kinds`` knows what they answer)
        return False
    found = _read_once(callee.obj, call, helpers, lambda arg: ARRAY if numeric(arg) else None, abstract)
    return isinstance(found, Read) and found.answers_number


def _read_once(obj, call, helpers, kind_of, abstract):
    """The ``Read`` of the function of yours ``obj`` (or the ``Problem`` found in it; None
    while it is being read), each function read once for what is known of its arguments in
    ``call`` (``kind_of`` each, the ``abstract`` value): an array given is one in it, and in the
    functions it calls with it."""
    fn = getattr(obj, "__srcad_function__", obj)
    known, classes = {}, {}
    bound = bind_call(obj, call) if call is not None else None
    for param, args in (bound or {}).items():
        kind = kind_of(args[0]) if len(args) == 1 else None
        known[param] = abstract(args[0]) if len(args) == 1 else UNKNOWN
        if isinstance(kind, Obj):
            classes[param] = kind.cls
        elif kind in SAFE and not isinstance(known[param], (Spec, list, tuple, dict)):
            known[param] = kind  # (its kind only)
    key = (fn, repr(sorted(known.items())), tuple(sorted((p, id(c)) for p, c in classes.items())), bound is None)
    if key not in helpers:
        helpers[key] = None  # a recursive call
        try:
            helpers[key] = _read_helper(fn, helpers, known, classes, bound is not None)
        except Problem as problem:
            helpers[key] = problem
    return helpers[key]


def _literal_defaults(node):
    """The kinds of the parameters of ``node`` whose default is None, a number or a string (the
    ``v=None`` of a derivative srcad made): what a call not giving them passes."""
    args = node.args
    pairs = list(zip(args.args[len(args.args) - len(args.defaults):], args.defaults)) + list(
        zip(args.kwonlyargs, args.kw_defaults))
    return {a.id: STRING if isinstance(d.value, str) else ARRAY for a, d in pairs
            if isinstance(d, gast.Constant) and (d.value is None or type(d.value) in (bool, int, float, str))}


def _read_helper(fn, helpers, known, classes, bound):
    """``fn``'s ``Read``: its statements are checked as the loop's are (an update through a name
    is left to the memory analysis, which follows it to what it reaches), and an attribute
    store or an update reaching a global is refused. ``bound``: ``known`` holds all the
    arguments the call gives (the others take their defaults)."""
    from .checkpoint_state import _Body, _check_statement  # the loop's own checks, on its statements

    try:
        source = capture(fn)
        node = resolve_calls(source.node, source)
    except (SrcadError, SyntaxError, OSError, TypeError):
        raise Problem("is a function whose source srcad cannot read, so it cannot tell what it changes",
                       BEFORE_THE_LOOP) from None
    for n in A.walk(node):  # (before normal form, which refuses them)
        if isinstance(n, gast.Attribute) and isinstance(n.ctx, gast.Store):
            raise Problem(f"stores the attribute .{n.attr} of an object (at {where(source, n)})",
                           f"compute what the loop needs from the object before the loop, or keep the value in a "
                           f"variable of the function, {PLAIN_LOOP}")
    try:
        node = normalize(node, source)
    except SrcadError:
        raise Problem("is a function srcad cannot read, so it cannot tell what it changes", BEFORE_THE_LOOP) from None
    params = [a.id for a in node.args.args]
    known = {**_literal_defaults(node), **known} if bound else known
    shapes = {p: v for p, v in known.items() if not isinstance(v, str)}
    env = abstract_values(node, {p: shapes.get(p, UNKNOWN) for p in params}) if len(params) == len(
        parameter_names(node)) else {}
    containers = {n for n, v in env.items() if isinstance(v, (list, tuple, dict))} | {
        p for p, v in known.items() if v == CONTAINER or isinstance(v, (list, tuple, dict))}
    arrays = {n: v for n, v in env.items() if isinstance(v, Spec)}
    arrays.update({p: v for p, v in known.items() if isinstance(v, Spec)})
    kinds = Kinds(node, source, arrays, containers, classes, node.body,
                  {n: v for n, v in env.items() if isinstance(v, (list, tuple, dict))},
                  strings={p for p, v in known.items() if v in (STRING, MODULE)},
                  numbers={p for p, v in known.items() if v == ARRAY},
                  answers_number=functools.partial(answers_number, helpers))
    body = _Body(kinds, helpers)
    for s in A.every_statement(node.body):
        try:
            _check_statement(s, body)
        except Problem as problem:
            what = problem.what[3:] if problem.what.startswith("it ") else problem.what
            raise Problem(f"reaches {where(source, A.anno(s, 'origin') or s, node)}, where {what}",
                           problem.advice) from None
    reached = updated_outside(node.body, sorted(parameter_names(node)))
    globals_ = sorted(owner for kind, owner in reached if kind == "global")
    if globals_:
        raise Problem(f"updates '{globals_[0]}', a global, in place ({where(source, node)})", IN_A_VARIABLE)
    returns = [n for n in A.walk(node) if isinstance(n, gast.Return)]
    return Read({owner for kind, owner in reached if kind == "arg"},
                 bool(node.body) and isinstance(node.body[-1], gast.Return) and all(
                     r.value is not None and kinds.of(r.value) == ARRAY for r in returns))


def where(source, n, fn_node=None):
    """``file:line`` of ``n`` in ``source``; in a derivative srcad made (a ``srcad.grad`` result
    the loop calls), the line of yours it differentiates."""
    lineno = getattr(n, "lineno", None) or fn_node.lineno
    mapped = user_line(source.filename, lineno) or generated_from(source.filename)
    if mapped is None:
        return f"{source.filename}:{lineno}"
    return f"{mapped[0]}:{mapped[1]} (in the derivative srcad made of {mapped[2]})"
