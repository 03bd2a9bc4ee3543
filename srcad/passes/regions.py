"""Regions back to ``try`` statements: the last stage before names are bound.

``passes.statements`` lowered each ``with`` and ``try`` to a *region*, ``if _flag: body``
whose test carries a ``Region``. Every analysis read it as a branch; in the code that runs
the user's statements (the forward sweep of the joint adjoint, ``f_forward``, ``f_jvp``) it
must catch again what the user's statement caught. Guarantee: afterwards each region there is

- ``with``: ``try: body`` / ``except BaseException as e: manager.__exit__(type(e), e,
  e.__traceback__); raise`` (the normal exit follows the region already);
- ``except``: ``try: body`` and one ``except`` per handler, in the user's order, each setting
  the region's flag to False, the handler's number and the exception;
- ``finally``: ``try: body`` / ``except BaseException: cleanup; raise``.

The reverse sweep's copies of region tests stay branches: they only choose which
derivatives run, and an exception there propagates unchanged.

>>> import gast
>>> from srcad.astutil import to_source, load, set_anno, assign, const
>>> from srcad.passes.statements import Region
>>> region = Region("except", flag="_try1", caught="_caught1", exception="_exception1",
...                 handlers=[gast.parse("ValueError", mode="eval").body])
>>> fn = gast.parse("def f(): pass").body[0]
>>> fn.body = [gast.If(test=set_anno(load("_try1"), "region", region), body=[assign("a", const(1))], orelse=[])]
>>> print(to_source(restore_regions(fn)).strip())
def f():
    try:
        a = 1
    except ValueError as _exception1_:
        _try1 = False
        _caught1 = 1
        _exception1 = _exception1_
"""
import gast

from .. import astutil as A
from ..naming import builtin


def restore_regions(node, part="all"):
    """``node`` (a generated function) with every region in it, at any depth, made a
    ``try`` statement again (module doc): in its whole body (``f_jvp``), or in the forward
    sweep of a joint adjoint (``part="forward"``: its first ``n_forward`` statements)."""
    n = len(node.body) if part == "all" else A.anno(node, "n_forward")
    node.body[:n] = _restore(node.body[:n])
    return node


def _restore(stmts):
    for i, s in enumerate(stmts):
        if isinstance(s, (gast.If, gast.For, gast.While)):
            _restore(s.body)
            _restore(s.orelse)
        region = A.anno(s.test, "region") if isinstance(s, gast.If) else None
        if region is not None:
            stmts[i] = gast.copy_location(_try(region, s.body), s)
    return stmts


def _try(region, body):
    handlers = []
    if region.kind == "except":
        raised = region.exception + "_"
        for i, kind in enumerate(region.handlers):
            handlers.append(gast.ExceptHandler(type=A.deepcopy(kind), name=A.store(raised), body=[
                A.assign(region.flag, A.const(False)),
                A.assign(region.caught, A.const(i + 1)),
                A.assign(region.exception, A.load(raised)),
            ]))
    elif region.kind == "with":
        raised = region.manager + "_exception"
        info = [gast.Call(func=builtin("type"), args=[A.load(raised)], keywords=[]), A.load(raised),
                gast.Attribute(value=A.load(raised), attr="__traceback__", ctx=gast.Load())]
        leave = gast.Call(func=gast.Attribute(value=A.load(region.manager), attr="__exit__", ctx=gast.Load()),
                          args=info, keywords=[])
        handlers.append(gast.ExceptHandler(type=builtin("BaseException"), name=A.store(raised),
                                           body=[gast.Expr(value=leave), gast.Raise(exc=None, cause=None)]))
    else:  # finally
        cleanup = [A.deepcopy(s) for s in region.cleanup]
        name = A.store(region.name) if region.name is not None else None
        handlers.append(gast.ExceptHandler(type=builtin("BaseException"), name=name,
                                           body=cleanup + [gast.Raise(exc=None, cause=None)]))
    return gast.Try(body=body or [gast.Pass()], handlers=handlers, orelse=[], finalbody=[])
