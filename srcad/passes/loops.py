"""Loop lowering: every ``for`` loop becomes a loop over a ``range`` bound to a name.

Guarantee: ``for i in range(...)`` keeps its counter (a fresh ``_kN`` if the body rebinds
``i``, then ``i = _kN`` first in the body); any other iterable is evaluated once,
before the loop, into fresh names (so the loop variable may rebind the sequence's own name:
``for x in x``), and the loop variables are bound by indexing inside the body. The iterable
is ``range``, ``enumerate``, ``zip`` (nested in any combination, unpacked into any nesting
of names), ``d.keys()``, ``d.values()``, ``d.items()`` of a dict ``d``, or any other value,
which ``list(...)`` materialises: a sequence, an array (its rows) or a dict (its keys, as
Python iterates it). A ``while`` loop's test is recomputed at the end of each pass (before
its ``if _stopN: break``, and only if the loop goes on).

>>> import gast
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(x, y):
...     for i, (a, b) in enumerate(zip(x, y)):
...         s = a * b
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x, y):
    read_again(x, '<doctest srcad.passes.loops[5]>:2')
    _seq1 = list(x)
    _t1 = len(_seq1)
    read_again(y, '<doctest srcad.passes.loops[5]>:2')
    _seq2 = list(y)
    _t2 = len(_seq2)
    _t3 = min(_t1, _t2)
    _range1 = range(_t3)
    for _k1 in _range1:
        i = _k1
        a = _seq1[_k1]
        b = _seq2[_k1]
        s = a * b
"""
import builtins

import gast

from .. import astutil as A
from .. import runtime
from ..naming import builtin
from .binding import helper_call
from .jumps import is_break_guard
from .functional import check_mapping, mapped_comprehension, zip_rows
from .callees import Callee

_DICT_VIEWS = ("keys", "values", "items")


def lower_loop(norm, s, out):
    """Append the lowered form of the loop ``s`` to ``out``; ``norm`` normalises the parts."""
    norm.loop_depth += 1  # a try statement with except refuses to be inside a loop
    try:
        if isinstance(s, gast.While):
            _lower_while(norm, s, out)
        else:
            _lower_for(norm, s, out)
    finally:
        norm.loop_depth -= 1


def _lower_while(norm, s, out):
    cond = []
    test = norm.atom(s.test, cond)
    out.extend(cond)
    body = norm.block(s.body)
    recompute = [A.deepcopy(c) for c in cond]  # the test is recomputed after each pass
    if recompute and body and is_break_guard(body[-1]):
        # ... unless the loop is about to stop (the test may fail then): the guard stays last
        guard = body.pop()
        going_on = norm.namer.fresh("_t")
        body += [A.assign(going_on, gast.UnaryOp(op=gast.Not(), operand=A.deepcopy(guard.test))),
                 gast.If(test=A.load(going_on), body=recompute, orelse=[]), guard]
    else:
        body += recompute
    out.append(gast.While(test=test, body=body or [gast.Pass()], orelse=[]))


def _lower_for(norm, s, out):
    s = _lazy_items(norm, s, out)
    it = s.iter
    if isinstance(it, gast.Call):
        A.set_anno(it, "consumed", True)  # map(...) and filter(...) run out after one pass: this one
    if _is_call_to(it, builtins.range):
        if not isinstance(s.target, gast.Name):
            raise norm.error("a range loop needs a plain name as its variable", s.target)
        range_name = norm.namer.fresh("_range")
        out.append(A.assign(range_name, norm.rhs(it, out)))
        counter, body = s.target.id, []
        if counter in A.names_stored(gast.Module(body=s.body, type_ignores=[])):
            counter = norm.namer.fresh("_k")  # the body rebinds the variable: count apart from it
            body.append(A.assign(s.target.id, A.load(counter)))
        body += norm.block(s.body)
        out.append(gast.For(target=A.store(counter), iter=A.load(range_name), body=body or [gast.Pass()],
                            orelse=[], type_comment=None))
        return
    lengths, item = _iteration(norm, it, out, _reads_in_part(norm, s))
    n = lengths[0] if len(lengths) == 1 else norm.atom(_call(builtins.min, "min", lengths), out)
    range_name = norm.namer.fresh("_range")
    out.append(A.assign(range_name, _call(builtins.range, "range", [n])))
    counter = norm.namer.fresh("_k")
    body = []
    _bind(norm, s.target, item(counter), body)
    body = norm.block(body) + norm.block(s.body)
    out.append(gast.For(target=A.store(counter), iter=A.load(range_name), body=body or [gast.Pass()],
                        orelse=[], type_comment=None))


def _lazy_items(norm, s, out):
    """``for t in (E for v in K if C): body`` as ``for v' in K: if C': t = E'; body`` (``v``
    renamed apart): a generator expression, ``map`` or ``filter`` computes each item when the
    loop reads it, so what ``body`` changes reaches the next item, as in Python (under
    ``enumerate`` too, counting the items). Else ``s``."""
    it, count, start = s.iter, None, None
    if _is_call_to(it, builtins.enumerate) and it.args and _lazy(it.args[0]) and (
            len(it.args) + len(it.keywords) <= 2 and all(k.arg == "start" for k in it.keywords)):
        start = (it.args[1:] + [k.value for k in it.keywords] or [A.const(0)])[0]
        count, it = norm.namer.fresh("_count"), it.args[0]
    callee = A.anno(it, "callee") if isinstance(it, gast.Call) else None
    if _lazy(it) and not isinstance(it, gast.GeneratorExp):
        check_mapping(norm, it, callee)
        fn = it.args[0]
        root = fn
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(root, gast.Name) and root.id in A.names_stored(gast.Module(body=s.body, type_ignores=[])):
            raise norm.error(f"the loop's body rebinds '{root.id}', which {callee.name} calls for each item: "
                             f"call it in the body instead", it)
        it = mapped_comprehension(norm, it, callee.obj is builtins.filter, out)
    elif not isinstance(it, gast.GeneratorExp):
        return s
    if len(it.generators) != 1 or it.generators[0].is_async:
        raise norm.error("srcad supports a generator expression with one for clause in a loop's header; write "
                         "the loops out", s.iter)
    gen = it.generators[0]
    fresh = {name: norm.namer.fresh(f"_{name.lstrip('_')}") for name in sorted(A.names_stored(gen.target))}
    target, elt, ifs = (_renamed(A.deepcopy(n), fresh) for n in (gen.target, it.elt, gast.List(elts=gen.ifs,
                                                                                               ctx=gast.Load())))
    body = list(s.body)
    guard = [body.pop()] if body and is_break_guard(body[-1]) else []  # (it stays last: ``eliminate_jumps``)
    if count is not None:  # enumerate(...): (the count, the item), then the count goes on
        elt = gast.Tuple(elts=[A.load(count), elt], ctx=gast.Load())
        body.insert(0, A.assign(count, gast.BinOp(left=A.load(count), op=gast.Add(), right=A.const(1))))
        out.append(gast.copy_location(A.assign(count, start), s))
    body = [gast.copy_location(gast.Assign(targets=[s.target], value=elt, type_comment=None), s)] + body
    if ifs.elts:
        test = ifs.elts[0] if len(ifs.elts) == 1 else gast.BoolOp(op=gast.And(), values=ifs.elts)
        body = [gast.copy_location(gast.If(test=test, body=body, orelse=[]), s)]
    loop = gast.For(target=target, iter=gen.iter, body=body + guard, orelse=s.orelse, type_comment=None)
    return gast.copy_location(loop, s)


def _lazy(it):
    """Is ``it`` a generator expression, or a ``map``/``filter`` call (without ``*``)?"""
    if isinstance(it, gast.GeneratorExp):
        return True
    callee = A.anno(it, "callee") if isinstance(it, gast.Call) else None
    return callee is not None and callee.kind == "object" and callee.obj in (builtins.map, builtins.filter) and (
        not any(isinstance(a, gast.Starred) for a in it.args))


def _renamed(node, names):
    for n in A.walk(node):
        if isinstance(n, gast.Name) and n.id in names:
            n.id = names[n.id]
    return node


def _reads_in_part(norm, loop):
    """The line of the loop when Python may stop reading what it iterates before its end (a
    ``break`` or ``return`` in it, a ``zip`` of several sequences, a comprehension ``any``
    or ``all`` reads: annotation ``"read_in_part"``), else None."""
    stops = [n for n in A.walk(gast.Module(body=loop.body, type_ignores=[])) if isinstance(n, (gast.Break, gast.Return))]
    inner = {id(b) for n in A.walk(gast.Module(body=loop.body, type_ignores=[])) if isinstance(n, (gast.For, gast.While))
             for b in A.walk(gast.Module(body=n.body, type_ignores=[])) if isinstance(b, gast.Break)}
    zipped = any(_is_call_to(n, builtins.zip) and len(n.args) > 1 for n in A.walk(loop.iter))
    line = getattr(loop, "lineno", None) or norm.line or "?"  # (a loop srcad made: the user's statement's)
    return line if zipped or A.anno(loop, "read_in_part") or any(id(n) not in inner for n in stops) else None


def _iteration(norm, it, out, in_part=None):
    """``(lengths, item)``: the lengths of the sequences ``it`` walks (it stops at the shortest)
    and ``item(k)``, the expression of its ``k``-th element. Emits the sequences into ``out``;
    where the loop may read them only in part (``in_part``, its line), a check that none is a
    one-pass iterator (``runtime.read_again``)."""
    if _is_call_to(it, builtins.enumerate):
        if not it.args or len(it.args) + len(it.keywords) > 2 or any(k.arg != "start" for k in it.keywords):
            raise norm.error("srcad supports enumerate(sequence) and enumerate(sequence, start)", it)
        lengths, inner = _iteration(norm, it.args[0], out, in_part)
        start = it.args[1] if len(it.args) > 1 else it.keywords[0].value if it.keywords else None
        start = None if start is None else norm.atom(start, out)

        def counted(k):
            count = A.load(k) if start is None else gast.BinOp(left=A.load(k), op=gast.Add(), right=A.deepcopy(start))
            return gast.Tuple(elts=[count, inner(k)], ctx=gast.Load())
        return lengths, counted
    if _is_call_to(it, builtins.zip) and any(isinstance(a, gast.Starred) for a in it.args) and not it.keywords:
        it = zip_rows(norm, it, out)  # zip(*rows): the list of its tuples
    elif _is_call_to(it, builtins.zip):
        if not it.args or it.keywords or any(isinstance(a, gast.Starred) for a in it.args):
            raise norm.error("srcad supports zip of one or more sequences, without * or keywords", it)
        parts = [_iteration(norm, a, out, in_part) for a in it.args]

        def zipped(k):
            return gast.Tuple(elts=[item(k) for _, item in parts], ctx=gast.Load())
        return [n for lengths, _ in parts for n in lengths], zipped
    view = _dict_view(it)
    if view is not None:
        mapping = norm.namer.fresh("_seq")
        out.append(A.assign(mapping, norm.rhs(it.func.value, out)))
        keys_view = gast.Call(func=gast.Attribute(value=A.load(mapping), attr="keys", ctx=gast.Load()),
                              args=[], keywords=[])
        A.set_anno(keys_view, "callee", Callee("method", name="keys"))
        keys = _materialise(norm, keys_view, "_keys", out)

        def element(k):
            key = gast.Subscript(value=A.load(keys), slice=A.load(k), ctx=gast.Load())
            value = gast.Subscript(value=A.load(mapping), slice=A.deepcopy(key), ctx=gast.Load())
            return {"keys": key, "values": value, "items": gast.Tuple(elts=[A.deepcopy(key), value],
                                                                         ctx=gast.Load())}[view]
        return [_length(norm, keys, out)], element
    seq = _materialise(norm, it, "_seq", out, in_part)

    def indexed(k):
        return gast.Subscript(value=A.load(seq), slice=A.load(k), ctx=gast.Load())
    return [_length(norm, seq, out)], indexed


def _dict_view(it):
    """``keys``/``values``/``items`` for ``d.keys()`` etc. without arguments, else None."""
    callee = A.anno(it, "callee") if isinstance(it, gast.Call) else None
    if callee is not None and callee.kind == "method" and callee.name in _DICT_VIEWS and not it.args \
            and not it.keywords:
        return callee.name
    return None


def _materialise(norm, it, base, out, in_part=None):
    """``_seqN = list(it)``: the iterable evaluated once, as Python's ``for`` does, into a fresh
    name; where the loop may read it only in part (``in_part``), checked first not to be a
    one-pass iterator, which Python would leave partly unread."""
    if _lazy(it):  # (in zip(...): computed before the loop)
        raise norm.error("Python computes the items of a generator expression, map or filter as the loop reads "
                         "them (after the body may have changed what they read), srcad before the loop: write "
                         "list(...) around it, or loop over it alone", it)
    name = norm.namer.fresh(base)
    fresh = _is_call_to(it, builtins.range) or _is_call_to(it, builtins.list)
    if in_part is not None and not fresh:
        where = A.const(f"{norm.source.filename}:{in_part}")
        if _reversal(it):  # reversed(L) made here, which nothing else reads: L must be a sequence
            it.args[0] = norm.atom(it.args[0], out)
            check = [A.deepcopy(it.args[0]), where, A.const(True)]
        else:
            it = norm.atom(it, out)
            check = [A.deepcopy(it), where]
        out.append(gast.Expr(value=helper_call("read_again", runtime.read_again, *check)))
    reversal = _reversal(it)
    value = norm.rhs(it if fresh else _call(builtins.list, "list", [it]), out)
    if not fresh and isinstance(value, gast.Call):  # Python reads the list itself as the loop runs:
        A.set_anno(value, "iterates", True)  # the memory analysis sees a change to it (``memory_values``)
        if reversal and value.args and isinstance(value.args[0], gast.Name):  # so does its reverse iterator
            made = [s for s in out if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                    and s.targets[0].id == value.args[0].id and isinstance(s.value, gast.Call)]
            if made:
                A.set_anno(made[-1].value, "iterates", True)
    out.append(gast.copy_location(A.assign(name, value), it))
    return name


def _reversal(it):
    """Is ``it`` ``reversed(x)`` with one plain argument?"""
    return _is_call_to(it, builtins.reversed) and len(it.args) == 1 and not it.keywords and not isinstance(
        it.args[0], gast.Starred)


def _length(norm, seq, out):
    return norm.atom(_call(builtins.len, "len", [A.load(seq)]), out)


def _bind(norm, target, item, out):
    """``target = item``, matching nested tuples of names against tuple displays directly."""
    if isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, gast.Tuple) \
            and not any(isinstance(e, gast.Starred) for e in target.elts):  # a, *rest = ...: by indexing
        if len(target.elts) != len(item.elts):
            raise norm.error(f"this loop unpacks {len(item.elts)} values into {len(target.elts)} names", target)
        for elt, value in zip(target.elts, item.elts):
            _bind(norm, elt, value, out)
        return
    out.append(gast.copy_location(A.assign(target, item), target))


def _call(fn, name, args):
    call = gast.Call(func=builtin(name), args=list(args), keywords=[])
    A.set_anno(call, "callee", Callee("object", obj=fn, name=name))
    return call


def _is_call_to(node, obj):
    callee = A.anno(node, "callee") if isinstance(node, gast.Call) else None
    return callee is not None and callee.kind == "object" and callee.obj is obj
