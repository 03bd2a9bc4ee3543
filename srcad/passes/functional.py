"""Functions as values: ``map``, ``filter``, ``functools.reduce``, ``operator.add`` and the
like, and ``np.testing.assert_*`` checks; part of normalisation.

Guarantee: afterwards no call of these is left.

- ``operator.add(a, b)`` (and ``sub``, ``mul``, ``truediv``, ``matmul``, ``pow``, ``neg``,
  ``getitem``, comparisons, ...) is the operator itself, ``a + b``; so is the builtin ``pow(a, b)``.
- ``map(f, xs, ys)`` is the list ``[f(x, y) for x, y in zip(xs, ys)]`` and ``filter(f, xs)``
  ``[x for x in xs if f(x)]`` (``filter(None, xs)``: ``if x``), where ``f`` is a lambda, a
  function of the module or of the function (inlined), a library function or an ``operator``
  function. Python's ``map`` and ``filter`` return iterators that run out; a list does not, so
  they are taken only where one pass consumes them: as the argument of ``list``, ``tuple``,
  ``sum``, ``sorted``, ``min``, ``max``, ``zip``, ``enumerate``, ``np.array``/``np.stack``/...,
  or the iterable of a ``for`` loop or comprehension. Elsewhere they are refused.
- ``zip(xs, ys)`` and ``zip(*rows)`` where one pass consumes them (as ``map``), and
  ``zip(*rows)`` as a loop's iterable, are the list of tuples Python's iterator yields:
  ``[(x, y) for x, y in zip(xs, ys)]``, and for ``zip(*rows)`` the rows' items at each index
  up to the shortest row (``zip_rows``).
- ``operator.itemgetter(1)`` and ``operator.attrgetter("a.b")`` with constant keys, as the
  function of ``map``, ``filter``, ``reduce`` or the ``key=`` of ``sorted``, ``max`` and ``min``,
  are the reads they make,
  ``t[1]`` and ``t.a.b`` (several keys: the tuple of them).
- ``functools.reduce(f, xs[, start])`` is a loop ``acc = f(acc, x)``, and
  ``itertools.accumulate(xs[, f], initial=a)``, where one pass consumes it (as ``map``), the
  list of its running results: ``R = [a]`` (without ``initial``: ``xs[:1]``), then a loop
  ``R.append(f(R[k - 1], xs[k]))`` (``+`` without ``f``).
- ``np.testing.assert_*(...)`` for its effect is a check: it runs in the forward pass like an
  ``assert`` statement (so not under ``python -O``), its operands are never differentiated.

>>> import gast, operator
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(x, y):
...     return sum(map(operator.mul, x, y))
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x, y):
    _list1 = []
    read_again(x, '<doctest srcad.passes.functional[5]>:2')
    _seq1 = list(x)
    _t1 = len(_seq1)
    read_again(y, '<doctest srcad.passes.functional[5]>:2')
    _seq2 = list(y)
    _t2 = len(_seq2)
    _t3 = min(_t1, _t2)
    _range1 = range(_t3)
    for _k1 in _range1:
        _item11 = _seq1[_k1]
        _item21 = _seq2[_k1]
        _t4 = _item11 * _item21
        _list1.append(_t4)
    _t5 = sum(_list1)
    return _t5
"""
import builtins
import functools
import itertools
import math
import operator
import sys

import gast
import numpy as np

from .. import astutil as A
from ..naming import builtin
from .binding import builtin_call, helper_call
from .callees import Callee
from .getter_calls import GETTERS, getter_read
from .resolve_calls import resolve_calls

_BINARY = {operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult, operator.truediv: gast.Div,
           operator.floordiv: gast.FloorDiv, operator.mod: gast.Mod, operator.pow: gast.Pow,
           operator.matmul: gast.MatMult, operator.and_: gast.BitAnd, operator.or_: gast.BitOr,
           operator.xor: gast.BitXor, pow: gast.Pow}  # the builtin pow(a, b) is a ** b (pow(a, b, m) is not)
_UNARY = {operator.neg: gast.USub, operator.pos: gast.UAdd, operator.not_: gast.Not, operator.invert: gast.Invert}
_COMPARE = {operator.lt: gast.Lt, operator.le: gast.LtE, operator.gt: gast.Gt, operator.ge: gast.GtE,
            operator.eq: gast.Eq, operator.ne: gast.NotEq}
#: calls that consume one pass of an iterable given to them
_CONSUMERS = {builtins.list, builtins.tuple, builtins.sum, builtins.sorted, builtins.min, builtins.max,
              builtins.zip, builtins.enumerate, builtins.any, builtins.all, np.array, np.asarray, np.stack,
              np.vstack, np.hstack, np.concatenate, np.column_stack}


def _checks():
    """The ``np.testing.assert_*`` functions, if ``numpy.testing`` is imported: code that calls
    one has imported it, and srcad does not (it costs ``import srcad`` ~40 ms)."""
    testing = sys.modules.get("numpy.testing")
    return _assert_functions(testing) if testing is not None else frozenset()


@functools.cache
def _assert_functions(testing):
    return frozenset(getattr(testing, n) for n in dir(testing) if n.startswith("assert"))


def _is(obj, table):
    try:
        return obj in table
    except TypeError:
        return False


def mark_consumed(callee, call, namer):
    """Mark a ``map``/``filter`` argument of a call that consumes one pass of it. An argument
    of a builtin that only iterates it becomes a list: ``reversed(x)`` becomes
    ``list(reversed(x))``, since the consumer's derivative reads its argument again
    (``sum(reversed(L))``: an iterator that has run out), and ``d.values()``/``d.items()``
    the comprehension of its items (a dict view has no derivative rule; a loop over it is
    differentiated). NumPy's functions take neither as a sequence: theirs stay as they are."""
    if callee.kind == "object" and _is(callee.obj, _CONSUMERS):
        builtin_consumer = getattr(callee.obj, "__module__", None) == "builtins"
        for k, arg in enumerate(call.args):
            if isinstance(arg, gast.Call):
                A.set_anno(arg, "consumed", True)
                inner = A.anno(arg, "callee")
                if not builtin_consumer or inner is None:
                    continue
                if inner.kind == "object" and inner.obj is builtins.reversed and callee.obj is not builtins.list:
                    call.args[k] = gast.copy_location(builtin_call("list", arg), arg)
                elif inner.kind == "method" and inner.name in ("values", "items") and not arg.args \
                        and not arg.keywords:
                    item = namer.fresh("_item")
                    loop = gast.comprehension(target=A.store(item), iter=arg, ifs=[], is_async=0)
                    items = gast.copy_location(gast.ListComp(elt=A.load(item), generators=[loop]), arg)
                    call.args[k] = A.set_anno(items, "dict_items", True) if inner.name == "items" else items


# What reads a generator expression through before it returns, running none of your code between
# its items (not zip or enumerate, whose items a loop reads one by one; not np.array, which makes
# an object array holding the generator)
_READ_THROUGH = {builtins.list, builtins.tuple, builtins.set, builtins.frozenset, builtins.dict, builtins.sum,
                 builtins.sorted, builtins.min, builtins.max, builtins.any, builtins.all, math.fsum, math.prod,
                 np.fromiter}


def mark_read_through(callee, call):
    """Mark a generator expression given to a call that reads all its items at once
    (``sum(...)``, ``list(...)``, ``", ".join(...)``): only there is computing its items where
    it is written, as srcad does, what Python does (``passes.normalize`` refuses the others)."""
    joins = callee.kind == "method" and callee.name == "join" and isinstance(call.func, gast.Attribute) and (
        isinstance(call.func.value, gast.Constant) and isinstance(call.func.value.value, str))
    if joins or callee.kind == "object" and _is(callee.obj, _READ_THROUGH):
        for arg in call.args[:1]:
            if isinstance(arg, gast.GeneratorExp):
                A.set_anno(arg, "read_through", True)


def mark_read_in_part(callee, call, norm):
    """Mark a generator expression given to ``any``/``all``, which stop at the first item that
    decides (its loops then check they read no one-pass iterator: ``passes.loops``); refuse one
    given to ``next``, which reads one item where srcad would compute them all."""
    if callee is None or callee.kind != "object" or not _is(callee.obj, (builtins.any, builtins.all, builtins.next)):
        return
    for arg in call.args:
        if isinstance(arg, gast.GeneratorExp):
            if callee.obj is builtins.next:
                raise norm.error("srcad does not differentiate next() of a generator expression (it reads the first "
                                 "item Python would compute, srcad would compute them all): write a for loop that "
                                 "breaks at the first item", call)
            A.set_anno(arg, "read_in_part", True)


def is_check(call):
    """Is ``call`` a ``np.testing.assert_*`` call?"""
    callee = A.anno(call, "callee")
    return callee is not None and callee.kind == "object" and _is(callee.obj, _checks())


def check_statement(norm, call, out):
    """``np.testing.assert_*(...)`` for its effect, as an ``assert`` of its result on atoms."""
    args = [norm.atom(a, out) for a in call.args]
    keywords = [gast.keyword(arg=k.arg, value=norm.atom(k.value, out)) for k in call.keywords]
    checked = A.set_anno(gast.Call(func=call.func, args=args, keywords=keywords), "callee", A.anno(call, "callee"))
    test = gast.Compare(left=checked, ops=[gast.Is()], comparators=[A.const(None)])
    out.append(gast.copy_location(gast.Assert(test=test, msg=None), call))


def functional_rhs(norm, call, callee, out):
    """The lowered form of ``call`` if it is one this module rewrites (see the module doc),
    else None."""
    if callee.kind != "object":
        return None
    obj = callee.obj
    if _is(obj, (builtins.zip,)) and A.anno(call, "consumed") and call.args and not call.keywords:
        return norm.rhs(zip_rows(norm, call, out), out)
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if _is(obj, _BINARY) and len(call.args) == 2 and not call.keywords:
        return gast.BinOp(left=norm.atom(call.args[0], out), op=_BINARY[obj](), right=norm.atom(call.args[1], out))
    if _is(obj, _UNARY) and len(call.args) == 1 and not call.keywords:
        return gast.UnaryOp(op=_UNARY[obj](), operand=norm.atom(call.args[0], out))
    if _is(obj, _COMPARE) and len(call.args) == 2 and not call.keywords:
        left = norm.atom(call.args[0], out)
        return gast.Compare(left=left, ops=[_COMPARE[obj]()], comparators=[norm.atom(call.args[1], out)])
    # itemgetter(1, 0)(f(x)), made in the call (on a name: getter_calls); a getter held by a name
    # (CURRENT = attrgetter("v") at module level) is called as any other object is
    if isinstance(obj, GETTERS) and isinstance(call.func, gast.Call):
        picked = getter_read(call.func, [norm.atom(a, out) for a in call.args]) if not call.keywords else None
        if picked is None:
            raise norm.error(f"srcad reads operator.{type(obj).__name__}(...)(item) with its keys written as "
                             "literals and one item; write the reads themselves (p[1], obj.w)", call)
        return norm.rhs(picked, out)
    if obj is operator.getitem and len(call.args) == 2 and not call.keywords:
        return norm.rhs(gast.Subscript(value=call.args[0], slice=call.args[1], ctx=gast.Load()), out)
    if obj in (builtins.map, builtins.filter):
        if not A.anno(call, "consumed"):
            raise norm.error(
                f"srcad takes {callee.name}(...) where one pass consumes it (list({callee.name}(...)), "
                f"sum(...), a for loop); Python's {callee.name} is an iterator that runs out, so "
                f"write list({callee.name}(...)) to keep it", call)
        check_mapping(norm, call, callee)
        return norm.rhs(mapped_comprehension(norm, call, obj is builtins.filter, out), out)
    if obj is functools.reduce and 2 <= len(call.args) <= 3 and not call.keywords:
        return _reduce(norm, call, out)
    if obj is itertools.accumulate:
        return _accumulate(norm, call, out)
    if obj in (builtins.min, builtins.max) and _key_defined_here(norm, call) or (
            obj is builtins.sorted and _key_of(call) is not None):  # sorted's rule takes no key=
        return _by_key(norm, call, obj, out)
    if obj is builtins.sorted and len(call.args) == 1 and A.anno(call.args[0], "dict_items") and all(
            k.arg == "reverse" for k in call.keywords):
        return _items_by_key(norm, call, out)
    return None


def _key_defined_here(norm, call):
    """Is ``call``'s ``key=`` a lambda, a function of the function (which srcad inlines, so
    no value of it exists to pass), or a getter of constant keys (the read it makes)?"""
    key = _key_of(call)
    return isinstance(key, gast.Lambda) or isinstance(key, gast.Name) and (
        key.id in norm.local_functions or key.id in norm.static_functions) or (
        key is not None and getter_read(key, [A.load("_")]) is not None)


def _by_key(norm, call, obj, out):
    """``max(items, key=f)`` and ``min`` with ``f`` defined in the function, ``sorted`` with
    any ``key=``: the keys computed by ``f`` (inlined where it can be), then the items picked by
    position (``extreme_index``, ``key_order``: Python's choice among ties), so the derivative
    follows the items taken."""
    from ..rules.builtin_rules import extreme_index, key_order

    name = "sorted" if obj is builtins.sorted else obj.__name__
    options = [k for k in call.keywords if k.arg != "key"]
    if not call.args or any(k.arg != "reverse" or obj is not builtins.sorted for k in options) or (
            obj is builtins.sorted and len(call.args) != 1):
        raise norm.error(f"srcad supports {name}(items, key=f) with reverse=; pass other options without it"
                         if obj is builtins.sorted else
                         f"srcad supports {name}(items, key=f) and {name}(a, b, ..., key=f); pass other options "
                         "without it", call)
    items = builtin_call("list", call.args[0]) if len(call.args) == 1 else gast.List(elts=list(call.args),
                                                                                         ctx=gast.Load())
    seq = norm.atom(items, out)
    item = A.store(norm.namer.fresh("_item"))
    keys = norm.atom(gast.ListComp(elt=_function_call(norm, _key_of(call), [A.load(item.id)], out, call),
                                   generators=[gast.comprehension(target=item, iter=A.deepcopy(seq), ifs=[],
                                                                  is_async=0)]), out)
    if obj is builtins.sorted:
        reverse = norm.atom(options[0].value, out) if options else A.const(False)
        return _in_order(norm, seq, norm.atom(helper_call("key_order", key_order, keys, reverse), out), out)
    index = norm.atom(helper_call("extreme_index", extreme_index, keys, A.const(obj is builtins.max)), out)
    return gast.Subscript(value=A.deepcopy(seq), slice=index, ctx=gast.Load())


def _items_by_key(norm, call, out):
    """``sorted(d.items())`` (``reverse=`` too): Python compares the items, tuples, by their
    keys, and by their values only where two keys are equal, which distinct dict keys of the
    kinds ``items_order`` checks when it runs never are. So the items are picked by the keys'
    order, and the values, never compared, are differentiated as the items taken."""
    from ..rules.builtin_rules import items_order

    seq = norm.atom(call.args[0], out)  # the list of the items (``mark_consumed``)
    item = norm.namer.fresh("_item")
    key = gast.Subscript(value=A.load(item), slice=A.const(0), ctx=gast.Load())
    keys = norm.atom(gast.ListComp(elt=key, generators=[
        gast.comprehension(target=A.store(item), iter=A.deepcopy(seq), ifs=[], is_async=0)]), out)
    reverse = norm.atom(call.keywords[-1].value, out) if call.keywords else A.const(False)
    where = A.const(f"{norm.source.filename}:{getattr(call, 'lineno', None) or norm.line or '?'}")
    return _in_order(norm, seq, norm.atom(helper_call("items_order", items_order, keys, reverse, where), out), out)


def _in_order(norm, seq, order, out):
    """``[seq[k] for k in order]``: the items of ``seq`` at the positions ``order`` lists."""
    position = A.store(norm.namer.fresh("_k"))
    picked = gast.Subscript(value=A.deepcopy(seq), slice=A.load(position.id), ctx=gast.Load())
    return norm.rhs(gast.ListComp(elt=picked, generators=[
        gast.comprehension(target=position, iter=order, ifs=[], is_async=0)]), out)


def _key_of(call):
    return next((k.value for k in call.keywords if k.arg == "key"), None)


def zip_rows(norm, call, out):
    """``zip(xs, ys)`` (or ``zip(*rows)``) as the list comprehension of its tuples; emits the
    rows of a ``*rows`` into ``out`` first (each evaluated once, as ``zip`` does)."""
    if any(isinstance(a, gast.Starred) for a in call.args):
        if len(call.args) != 1:
            raise norm.error("srcad supports zip(*rows) with the one starred argument, or zip(xs, ys, ...)", call)
        k, row = norm.namer.fresh("_k"), norm.namer.fresh("_row")
        rows = A.load(norm.namer.fresh("_rows"))
        out.append(gast.copy_location(A.assign(rows.id, norm.rhs(gast.ListComp(
            elt=builtin_call("list", A.load(row)),
            generators=[gast.comprehension(target=A.store(row), iter=call.args[0].value, ifs=[], is_async=0)]),
            out)), call))
        lengths = norm.atom(gast.ListComp(elt=builtin_call("len", A.load(row)), generators=[
            gast.comprehension(target=A.store(row), iter=A.deepcopy(rows), ifs=[], is_async=0)]), out)
        count = norm.atom(gast.IfExp(test=A.deepcopy(lengths), body=builtin_call("min", A.deepcopy(lengths)),
                                     orelse=A.const(0)), out)  # zip() of no rows is empty
        item = gast.Subscript(value=A.load(row), slice=A.load(k), ctx=gast.Load())
        column = gast.ListComp(elt=item, generators=[
            gast.comprehension(target=A.store(row), iter=A.deepcopy(rows), ifs=[], is_async=0)])
        return gast.ListComp(elt=builtin_call("tuple", column), generators=[
            gast.comprehension(target=A.store(k), iter=builtin_call("range", count), ifs=[], is_async=0)])
    items = [norm.namer.fresh("_item") for _ in call.args]
    pairs = gast.Call(func=call.func, args=list(call.args), keywords=[])
    A.set_anno(pairs, "callee", A.anno(call, "callee"))
    return gast.ListComp(elt=gast.Tuple(elts=[A.load(i) for i in items], ctx=gast.Load()), generators=[
        gast.comprehension(target=gast.Tuple(elts=[A.store(i) for i in items], ctx=gast.Store()), iter=pairs,
                           ifs=[], is_async=0)])


def _function_call(norm, fn, args, out, node):
    """A call of the function value ``fn`` (a lambda becomes a helper of the function; a
    parameter of an inlined helper that holds a known function calls that function)."""
    if isinstance(fn, gast.Name) and fn.id in norm.static_functions:
        return norm.static_functions[fn.id].call(args, [], node)
    picked = getter_read(fn, args)
    if picked is not None:
        return picked
    if isinstance(fn, gast.Lambda):
        name = norm.namer.fresh("_lambda")
        ret = gast.copy_location(gast.Return(value=fn.body), fn.body)
        fdef = gast.FunctionDef(name=name, args=fn.args, body=[ret], decorator_list=[], returns=None,
                                type_comment=None, type_params=[])
        norm.stmt_FunctionDef(gast.copy_location(fdef, fn), out)
        call = gast.Call(func=A.load(name), args=args, keywords=[])
        return A.set_anno(gast.copy_location(call, node), "callee", Callee("local", name=name))
    call = gast.copy_location(gast.Call(func=A.deepcopy(fn), args=args, keywords=[]), node)
    root = fn
    while isinstance(root, gast.Attribute):
        root = root.value
    if isinstance(root, gast.Name) and root.id in norm.local_functions and root is fn:
        return A.set_anno(call, "callee", Callee("local", name=fn.id))
    if isinstance(root, gast.Name) and root.id in norm.source_locals:
        raise norm.error(f"'{root.id}' is a local variable, so srcad cannot tell which function it holds; pass "
                         "a function by its global name, a lambda, or one defined with def in this function", node)
    scope = gast.FunctionDef(name="_", args=norm.source.node.args, body=[gast.Expr(value=call)], decorator_list=[],
                             returns=None, type_comment=None, type_params=[])
    resolve_calls(scope, norm.source, norm.local_functions)  # as the call's own site would resolve it
    return call


def check_mapping(norm, call, callee):
    """Refuse a ``map``/``filter`` call srcad does not lower: with keywords, a filter of several."""
    if call.keywords or len(call.args) < 2 or callee.obj is builtins.filter and len(call.args) != 2:
        raise norm.error(f"srcad supports {callee.name}(function, iterable...) without keywords", call)


def mapped_comprehension(norm, call, keep, out):
    """``map(fn, *iterables)`` (``filter`` where ``keep``) as the list comprehension it reads as."""
    fn, iterables = call.args[0], call.args[1:]
    # the comprehension gives its variables fresh names of their own
    items = [A.store(f"item{i + 1}" if len(iterables) > 1 else "item") for i in range(len(iterables))]
    if len(iterables) == 1:
        target, source = items[0], iterables[0]
    else:
        target = gast.Tuple(elts=items, ctx=gast.Store())
        source = A.set_anno(gast.Call(func=builtin("zip"), args=list(iterables), keywords=[]), "callee",
                            Callee("object", obj=builtins.zip, name="zip"))
    loads = [A.load(t.id) for t in items]
    if keep:  # filter
        test = loads[0] if A.is_none(fn) else _function_call(norm, fn, loads, out, call)
        return gast.ListComp(elt=A.load(items[0].id), generators=[
            gast.comprehension(target=target, iter=source, ifs=[test], is_async=0)])
    return gast.ListComp(elt=_function_call(norm, fn, loads, out, call), generators=[
        gast.comprehension(target=target, iter=source, ifs=[], is_async=0)])


def _reduce(norm, call, out):
    fn, sequence = call.args[0], call.args[1]
    items = norm.namer.fresh("_seq")
    out.append(A.assign(items, norm.rhs(A.set_anno(gast.Call(func=builtin("list"), args=[sequence], keywords=[]),
                                                   "callee", Callee("object", obj=builtins.list, name="list")), out)))
    acc = norm.namer.fresh("_acc")
    start = 0
    if len(call.args) == 3:
        out.append(A.assign(acc, norm.rhs(call.args[2], out)))
    else:  # the first item starts (Python raises TypeError for an empty sequence; this IndexError)
        out.append(A.assign(acc, gast.Subscript(value=A.load(items), slice=A.const(0), ctx=gast.Load())))
        start = 1
    item = norm.namer.fresh("_item")
    rest = gast.Subscript(value=A.load(items), slice=gast.Slice(A.const(start), None, None), ctx=gast.Load())
    step = A.assign(acc, _function_call(norm, fn, [A.load(acc), A.load(item)], out, call))
    loop = gast.For(target=A.store(item), iter=rest, body=[step], orelse=[], type_comment=None)
    norm.stmt(gast.copy_location(loop, call), out)
    return A.load(acc)


def _accumulate(norm, call, out):
    """``itertools.accumulate(xs, f, initial=a)`` as the loop building its list (module doc)."""
    given = {**dict(zip(("iterable", "func"), call.args)), **{k.arg: k.value for k in call.keywords}}
    if len(call.args) > 2 or "iterable" not in given or set(given) - {"iterable", "func", "initial"}:
        raise norm.error("srcad supports itertools.accumulate(iterable[, func], initial=...)", call)
    if not A.anno(call, "consumed"):
        raise norm.error("srcad takes itertools.accumulate(...) where one pass consumes it (list(...), sum(...), a "
                         "for loop); Python's accumulate is an iterator that runs out, so write "
                         "list(itertools.accumulate(...)) to keep it", call)
    items, results, k = norm.namer.fresh("_seq"), norm.namer.fresh("_list"), norm.namer.fresh("_k")
    out.append(A.assign(items, norm.rhs(builtin_call("list", given["iterable"]), out)))
    initial, fn = given.get("initial"), given.get("func")
    if initial is None or A.is_none(initial):  # the first item itself starts (none of an empty iterable)
        first = gast.Subscript(value=A.load(items), slice=gast.Slice(None, A.const(1), None), ctx=gast.Load())
        back = 1
    else:
        first, back = gast.List(elts=[initial], ctx=gast.Load()), 0
    norm.stmt(gast.copy_location(A.assign(results, first), call), out)
    previous = gast.Subscript(value=A.load(results), ctx=gast.Load(), slice=gast.BinOp(
        left=A.load(k), op=gast.Sub(), right=A.const(1)) if back else A.load(k))
    item = gast.Subscript(value=A.load(items), slice=A.load(k), ctx=gast.Load())
    step = (gast.BinOp(left=previous, op=gast.Add(), right=item) if fn is None or A.is_none(fn)
            else _function_call(norm, fn, [previous, item], out, call))
    append = A.set_anno(gast.Call(func=gast.Attribute(value=A.load(results), attr="append", ctx=gast.Load()),
                                  args=[step], keywords=[]), "callee", Callee("method", name="append"))
    ranged = builtin_call("range", A.const(back), builtin_call("len", A.load(items)))
    loop = gast.For(target=A.store(k), iter=ranged, body=[gast.Expr(value=append)], orelse=[], type_comment=None)
    norm.stmt(gast.copy_location(loop, call), out)
    return A.load(results)
