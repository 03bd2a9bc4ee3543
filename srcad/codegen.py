"""Code generation: from the finished joint adjoint to Python source.

Three functions come out of one joint adjoint ``f_adjoint(*params, v=None)``:
``f_adjoint`` itself (forward and reverse sweeps in one call), and the split pair
``f_forward(*params) -> (y, saved)`` / ``f_backward(saved, v=None) -> grads`` that
``vjp`` uses so one forward sweep can serve many cotangents. ``f_backward`` copies the
value stacks and the arrays it restores in place, so it can be called again.
"""
import dataclasses
import re

import gast
import numpy as np

from . import astutil as A
from .passes.simplify import tidy
from .source import identifier


@dataclasses.dataclass
class Generated:
    name: str
    joint_source: str
    forward_source: str
    backward_source: str
    module_source: str
    closure: dict  # name -> object the generated functions close over
    filename: str = ""
    inherited: list = dataclasses.field(default_factory=list)  # guards of the user functions it calls
    resolved: list = dataclasses.field(default_factory=list)  # (name path, object) the compiler resolved


def _stored_names(stmts):
    return A.names_stored(gast.Module(body=stmts, type_ignores=[]))


def _read_names(stmts):
    return A.names_read(gast.Module(body=stmts, type_ignores=[]))


def _mutated_in_reverse(stmts):
    """Names whose contents the reverse sweep changes in place (element restores, pops, pushes)."""
    names = set()
    for s in A.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            base = s.targets[0].value
            if isinstance(base, gast.Name):
                names.add(base.id)
        elif (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
              and isinstance(s.value.func, gast.Attribute) and s.value.func.attr in ("pop", "append")
              and isinstance(s.value.func.value, gast.Name)):
            names.add(s.value.func.value.id)
    return names


def _pure(rhs):
    """Is computing ``rhs`` free of effects (so an unread result need not be computed)?"""
    from . import registry

    if isinstance(rhs, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.Subscript,
                        gast.Attribute, gast.Tuple, gast.List, gast.Dict)):
        return True
    if isinstance(rhs, gast.Call):
        callee = A.anno(rhs, "callee")
        if callee is None:
            return False
        if callee.kind == "method":
            return callee.name in registry.METHODS or callee.name in registry.NONDIFF_METHODS
        module = getattr(callee.obj, "__module__", None) or ""
        numpy_function = isinstance(callee.obj, np.ufunc) or module == "numpy" or module.startswith("numpy.linalg")
        return numpy_function and registry.lookup(registry.VJP, callee.obj) is not None
    return False


def _without_unread(fwd, rev_reads):
    """``fwd`` without assignments of pure values that nothing needs: live names are those the
    reverse sweep (``rev_reads``) or any statement with an effect reads, and what live values
    are made from (a worklist: each assignment's reads are added once)."""
    removable = [s for s in _assignments(fwd) if _pure(s.value)]
    candidates = {id(s) for s in removable}
    live = set(rev_reads)
    for s in A.walk_statements(fwd):
        if id(s) not in candidates:
            live |= _own_reads(s)
    made_from = {}  # name -> names its removable assignments read
    for s in removable:
        made_from.setdefault(s.targets[0].id, set()).update(A.names_read(s.value))
    work = list(live)
    while work:
        for name in made_from.pop(work.pop(), ()):
            if name not in live:
                live.add(name)
                work.append(name)
    dead = {id(s) for s in removable if s.targets[0].id not in live}
    return _drop(fwd, dead) if dead else fwd


def _own_reads(stmt):
    """Names a statement reads itself (for a loop or branch: its header, not its body)."""
    if isinstance(stmt, gast.If):
        return A.names_read(stmt.test)
    if isinstance(stmt, gast.While):
        return A.names_read(stmt.test)
    if isinstance(stmt, gast.For):
        return A.names_read(stmt.iter)
    return A.names_read(stmt)


def _assignments(stmts):
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            yield s
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            yield from _assignments(s.body)
            yield from _assignments(s.orelse)


def _drop(stmts, ids):
    out = []
    for s in stmts:
        if id(s) in ids:
            continue
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _drop(s.body, ids) or [gast.Pass()]
            s.orelse = _drop(s.orelse, ids)
        out.append(s)
    return out


def codegen(node, source, module):
    """Sources for the joint adjoint and the forward/backward pair; see module doc."""
    n = A.anno(node, "n_forward")
    fwd, rev = node.body[:n], node.body[n:]
    params = A.anno(node, "params")
    out = A.anno(node, "output")
    namer = A.anno(node, "namer")
    cot = A.anno(node, "cotangent")
    base = identifier(source.fn)
    rev_reads = _read_names(rev)
    joint = node
    joint.name = f"{base}_adjoint"
    joint.args.defaults = list(source.node.args.defaults) + [A.const(None)]
    # the joint adjoint returns only gradients: forward values nothing reads are not computed
    copies = [A.deepcopy(s) for s in fwd]
    joint_fwd = tidy(_without_unread(copies, rev_reads))

    defined = set(params) | _stored_names(fwd)
    adjoint_names = _stored_names(rev) - defined
    live = sorted((rev_reads & defined) - adjoint_names | ({out.id} & defined if isinstance(out, gast.Name) else set()))
    live = sorted(set(live))
    saved = namer.unique("_saved")
    top_level = {t.id for s in fwd if isinstance(s, gast.Assign) for t in s.targets if isinstance(t, gast.Name)}
    # names bound only inside a branch or loop may be unbound when packed
    unbound = [A.assign(x, A.const(None)) for x in live if x not in top_level and x not in params]
    pack = gast.Tuple(elts=[A.load(x) for x in live], ctx=gast.Load())
    returned = gast.Return(value=gast.Tuple(elts=[A.deepcopy(out), pack], ctx=gast.Load()))
    forward = gast.FunctionDef(
        name=f"{base}_forward", args=gast.arguments(
            args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in params],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=list(source.node.args.defaults)),
        body=[], decorator_list=[], returns=None, type_comment=None, type_params=[])
    backward_body = []
    if live:
        unpack = gast.Tuple(elts=[A.store(x) for x in live], ctx=gast.Store())
        backward_body.append(gast.Assign(targets=[unpack], value=A.load(saved), type_comment=None))
    from . import runtime

    copy_value = module.ref("copy_value", runtime.copy_value)
    for name in sorted(set(A.anno(node, "stacks") or ()) | (_mutated_in_reverse(rev) & set(live))):
        if name in live:
            backward_body.append(A.assign(name, gast.Call(func=A.load(copy_value), args=[A.load(name)], keywords=[])))
    backward = gast.FunctionDef(
        name=f"{base}_backward", args=gast.arguments(
            args=[gast.Name(id=saved, ctx=gast.Param(), annotation=None, type_comment=None),
                  gast.Name(id=cot, ctx=gast.Param(), annotation=None, type_comment=None)],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[A.const(None)]),
        body=[], decorator_list=[], returns=None, type_comment=None, type_params=[])
    # each statement is printed once: the reverse sweep's text serves the joint adjoint and
    # f_backward, the forward sweep's statements f_forward and (those kept) the joint adjoint
    fwd_texts = _statement_texts(fwd)
    rev_text = _body_text(rev)
    kept = {id(c): text for c, text, s in zip(copies, fwd_texts, fwd) if not isinstance(s, _COMPOUND)}
    changed = iter(_statement_texts([s for s in joint_fwd if id(s) not in kept]))  # branches and loops
    joint_fwd_text = "".join(kept[id(s)] if id(s) in kept else next(changed) for s in joint_fwd)
    joint_source = _header(joint) + joint_fwd_text + rev_text
    joint.body = joint_fwd + rev
    forward_source = _header(forward) + _body_text(unbound) + "".join(fwd_texts) + _body_text([returned])
    backward_source = _header(backward) + _body_text(backward_body) + rev_text
    return module.finish(base, joint_source, forward_source, backward_source)


_COMPOUND = (gast.If, gast.For, gast.While)


def _header(fn):
    """The ``def`` line(s) of ``fn``, printed as with a body."""
    stub = gast.FunctionDef(name=fn.name, args=fn.args, body=[gast.Pass()], decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
    text = A.to_source(stub)
    return text[:text.rindex("    pass\n")]


_SEPARATOR = "srcad: next statement"
_SEPARATOR_LINE = re.compile(r"^    (['\"])" + _SEPARATOR + r"\1\n", re.M)


def _statement_texts(stmts):
    """The text of each statement of ``stmts`` as ``_body_text`` prints it, printed in one go
    (a printer per statement costs more than the statement)."""
    if not stmts:
        return []
    separated = []
    for s in stmts:
        separated += [s, gast.Expr(value=A.const(_SEPARATOR))]
    texts = _SEPARATOR_LINE.split(_body_text(separated))[::2]  # split() also returns the quote groups
    if len(texts) != len(stmts) + 1 or texts[-1]:  # a statement printed a separator line itself
        return [_body_text([s]) for s in stmts]
    return texts[:-1]


def _body_text(stmts):
    """``stmts`` printed as (part of) a function body: lines indented once. Statements print
    alone as in a sequence (a line's wrapping depends only on the line)."""
    if not stmts:
        return ""
    stub = gast.FunctionDef(name="_", args=gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                                                          kw_defaults=[], kwarg=None, defaults=[]),
                            body=stmts, decorator_list=[], returns=None, type_comment=None, type_params=[])
    text = A.to_source(stub)
    return text[text.index("\n") + 1:]
