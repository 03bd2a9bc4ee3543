"""Code generation: from the finished joint adjoint to Python source.

Three functions come out of one joint adjoint ``f_adjoint(*params, v=None)``:
``f_adjoint`` itself (forward and reverse sweeps in one call), and the split pair
``f_forward(*params) -> (y, saved)`` / ``f_backward(saved, v=None) -> grads`` that
``vjp`` uses so one forward sweep can serve many cotangents. ``f_backward`` copies the
value stacks, the arrays it restores in place and the values it pops and then restores in
place, so it can be called again. The pair's trees and text are made and compiled when first
needed (``Generated.ensure_pair``): ``grad`` and ``adjoint`` never pay for them.
"""
import copy
import dataclasses

import gast
import numpy as np

from . import astutil as A
from .passes.array_stacks import as_lists
from .passes.simplify import tidy
from .pullback_values import (calls_of_yours, constant_saved, may_read_outer_memory, outer_reads, read_saved,
                              saved_copies, saved_values, stacks_holding)
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
    facts: list = dataclasses.field(default_factory=list)  # (scope, name path, object) it took as fixed (srcad.facts)
    pair_module_source: str = ""  # the factory of the forward/backward pair, once made
    make_pair: object = None  # () -> (forward_source, backward_source) until the pair is made
    trees: list = None  # the generated functions' trees, while they are at hand (the guards read them)

    factory_params: list = None  # the factory's parameters (every name the functions close over)

    def ensure_pair(self):
        """Make the forward/backward pair's sources (``vjp`` needs them; ``grad`` does not)."""
        if not self.pair_module_source:
            from .compile import factory_source

            self.forward_source, self.backward_source = self.make_pair()
            self.pair_module_source = factory_source(self.factory_params, [self.forward_source, self.backward_source],
                                                     [f"{self.name}_forward", f"{self.name}_backward"])
            self.make_pair = None


def _with_element_facts(node):
    """A shallow copy of ``node`` where each read of one array element (annotation
    ``"one_element"``, from ``passes.record_values``) is an annotated assignment,
    ``a: np.float64 = S[i, j]``. Python evaluates no annotation of a local variable; srcad,
    differentiating this code again, reads the fact back (``passes.normalize``)."""
    if isinstance(node, gast.Assign) and A.anno(node.value, "one_element") is not None:
        scalar = gast.Attribute(value=A.load("np"), attr=A.anno(node.value, "one_element").type.__name__,
                                ctx=gast.Load())
        return gast.AnnAssign(target=node.targets[0], annotation=scalar, value=node.value, simple=1)
    if not isinstance(node, (gast.FunctionDef, gast.If, gast.For, gast.While, gast.Try, gast.With, gast.ExceptHandler)):
        return node
    node = copy.copy(node)
    for field in ("body", "orelse", "finalbody", "handlers"):
        if isinstance(getattr(node, field, None), list):
            setattr(node, field, [_with_element_facts(s) for s in getattr(node, field)])
    return node


def _stored_names(stmts):
    return A.names_stored(gast.Module(body=stmts, type_ignores=[]))


def _read_names(stmts):
    return A.names_read(gast.Module(body=stmts, type_ignores=[]))


def _mutated_in_reverse(stmts):
    """Names whose contents the reverse sweep changes in place (element restores, pops, pushes),
    directly or through a name bound to them (a restored value updated in place)."""
    names, aliases = set(), []
    for s in A.walk(gast.Module(body=stmts, type_ignores=[])):
        target = s.targets[0] if isinstance(s, gast.Assign) else s.target if isinstance(s, gast.AugAssign) else None
        if isinstance(target, gast.Subscript):
            base = target.value
            if isinstance(base, gast.Name):
                names.add(base.id)
        elif isinstance(s, gast.Assign) and isinstance(target, gast.Name) and isinstance(s.value, gast.Name):
            aliases.append((target.id, s.value.id))  # `tk = _tk_2`: an update of tk changes _tk_2
        elif (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
              and isinstance(s.value.func, gast.Attribute) and s.value.func.attr in ("pop", "append")
              and isinstance(s.value.func.value, gast.Name)):
            names.add(s.value.func.value.id)
    grew = True
    while grew:  # through chains of plain renames
        grew = False
        for alias, original in aliases:
            if alias in names and original not in names:
                names.add(original)
                grew = True
    return names


def _copied_pops(stmts, mutated, copy_value):
    """``stmts`` (a copy) with each ``x = stack.pop()`` of a name in ``mutated`` (changed in
    place later) written ``x = copy_value(stack.pop())``: the backward function pops the values
    the forward function saved, and a second call must find them as they were."""
    stmts = [A.deepcopy(s) for s in stmts]
    for s in A.walk(gast.Module(body=stmts, type_ignores=[])):
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id in mutated
                and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
                and s.value.func.attr == "pop" and isinstance(s.value.func.value, gast.Name)):
            s.value = gast.Call(func=A.load(copy_value), args=[s.value], keywords=[])
    return stmts


def _pure(rhs):
    """Is computing ``rhs`` free of effects (so an unread result need not be computed)?"""
    if isinstance(rhs, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.Subscript,
                        gast.Attribute, gast.Tuple, gast.List, gast.Dict)):
        return True
    if isinstance(rhs, gast.Call):
        from . import registry

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
        made_from.setdefault(_bound(s), set()).update(A.names_read(s.value) | {_bound(s)} - {None})
    work = list(live)
    while work:
        for name in made_from.pop(work.pop(), ()):
            if name not in live:
                live.add(name)
                work.append(name)
    dead = {id(s) for s in removable if _bound(s) not in live}
    return A.drop_statements(fwd, lambda s: id(s) in dead) if dead else fwd


def _own_reads(stmt):
    """Names a statement reads itself (for a loop or branch: its header, not its body)."""
    if isinstance(stmt, gast.If):
        return A.names_read(stmt.test)
    if isinstance(stmt, gast.While):
        return A.names_read(stmt.test)
    if isinstance(stmt, gast.For):
        return A.names_read(stmt.iter)
    return A.names_read(stmt)


def _bound(s):
    """The name an assignment from ``_assignments`` binds."""
    return s.targets[0].id if isinstance(s, gast.Assign) else s.target.id


def _assignments(stmts):
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            yield s
        elif isinstance(s, gast.AugAssign) and A.anno(s, "reused_buffer"):  # reuse_buffers: nothing else sees it
            yield s
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            yield from _assignments(s.body)
            yield from _assignments(s.orelse)


def _defaulted(args):
    """The parameters that have a default."""
    positional = args.posonlyargs + args.args
    named = positional[len(positional) - len(args.defaults):] if args.defaults else []
    named += [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return [a.id for a in named]


def _proven_returned(returned):
    """The joint's ``return``: each ``finish(g, x)`` that ``prove_finishes`` proved returns
    ``g`` written as ``g`` (the pair keeps the call: batched pullbacks rewrite it)."""
    if not isinstance(returned, gast.Return) or returned.value is None:
        return returned
    calls = returned.value.elts if isinstance(returned.value, gast.Tuple) else [returned.value]
    if not any(A.anno(c, "proven") for c in calls):
        return returned
    kept = [c.args[0] if A.anno(c, "proven") else c for c in calls]
    value = gast.Tuple(elts=kept, ctx=gast.Load()) if isinstance(returned.value, gast.Tuple) else kept[0]
    return gast.Return(value=value)


def codegen(node, source, module, for_numba=False):
    """Sources for the joint adjoint and the forward/backward pair; see module doc.
    ``for_numba``: numba compiles the pair, and copies only arrays and numbers."""
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
    # the joint adjoint returns only gradients: forward values nothing reads are not computed (its
    # blocks are copies, which that drops statements from; the statements are the pair's too)
    joint_fwd, joint_rev = tidy(_without_unread(A.copy_blocks(fwd), rev_reads)), rev
    value_stack = A.anno(node, "array_stacks")
    if value_stack is not None:  # the pair keeps its saved values in lists (passes.array_stacks)
        fwd, rev = as_lists([fwd, rev], value_stack.__eq__)
        rev_reads = _read_names(rev)

    defined = set(params) | _stored_names(fwd)
    adjoint_names = _stored_names(rev) - defined
    live = sorted((rev_reads & defined) - adjoint_names | ({out.id} & defined if isinstance(out, gast.Name) else set()))
    live = sorted(set(live))
    saved = namer.unique("_saved")
    top_level = {t.id for s in fwd if isinstance(s, gast.Assign) for t in s.targets if isinstance(t, gast.Name)}
    # names bound only inside a branch or loop may be unbound when packed
    unbound = [A.assign(x, A.const(None)) for x in live if x not in top_level and x not in params]
    from . import runtime
    from .arguments import snapshot

    copy_value = module.ref("copy_value", runtime.copy_value)
    user_reads = _read_names(fwd) | rev_reads  # (the reverse sweep's reads, read once)
    user_reads = user_reads - defined - adjoint_names - {cot} - set(module.closure)
    # a parameter given its default (a helper's ``w=W0``) holds your object, as a global does
    defaulted = set(_defaulted(source.node.args)) & set(live)
    # saved values that may be your globals' memory (_t1 = PARAMS[0], rows M[i] pushed in a loop)
    # or what your functions and bound methods return (``W.view()``, ``CACHE.get(k)``), which may
    # be their objects' arrays: saved as copies, the stacks of them too (but not what your
    # functions return under numba, which copies no tuple)
    yours = calls_of_yours(fwd, None if for_numba else module.closure)
    copied, deep = saved_copies(fwd, params, live, yours) if may_read_outer_memory(
        user_reads, source.lookup) or yours else (set(), set())
    # (numba copies no list: there a stack of a parameter's default stays as it is, as the
    # stacks of your memory, which numba refuses to read, do not arise)
    deep |= stacks_holding(fwd, copied | deep | (set() if for_numba else defaulted)) & set(live)
    deep |= defaulted
    deep_copy = module.ref("snapshot", snapshot) if user_reads or deep else copy_value
    # the backward sweep reads the user's globals and closure variables (and the values rules
    # paste in: a custom_vjp rule's global ``W``) as the forward sweep saw them (a pullback called
    # after they change must not mix old values and new): saved under names of their own, so
    # the backward function reads no global of that name
    closure = dict(module.closure)

    def lookup(name):
        return closure[name] if name in closure else source.lookup(name)

    outer = outer_reads(rev, defined | adjoint_names | {cot}, lookup,
                        lambda base: namer.unique(f"_{base.lstrip('_')}_seen"))
    if outer:
        saved_outer = saved_values(outer, lookup, copy_value, module.ref("snapshot", snapshot))
    stacks = set(A.anno(node, "stacks") or ())
    # saved values no derivative can reach, read back as constants (read before the annotations go)
    free = A.anno(node, "derivative_free") or frozenset()
    constants = constant_saved(fwd, live, free, set(params) - free)
    if outer or constants:
        from .extend import stop_gradient as stop_gradient_function

        stop_gradient = module.ref("stop_gradient", stop_gradient_function)
    joint.body = joint_fwd + joint_rev[:-1] + [_proven_returned(joint_rev[-1])]
    joint_source = A.to_source(_with_element_facts(joint))
    # the pair is differentiated again too (a helper compiled apart, at second order)
    fwd, rev = [_with_element_facts(s) for s in fwd], [_with_element_facts(s) for s in rev]
    # the pair is made from these statements when first needed: they must not hold the user's
    # objects meanwhile; what the pair reads off modules is what they read (guarded now)
    forward_defaults, out = list(source.node.args.defaults), A.deepcopy(out)
    A.strip_annotations(gast.Module(body=fwd + rev + [gast.Expr(value=e) for e in forward_defaults + [out]],
                                    type_ignores=[]))

    def make_pair():
        pack = gast.Tuple(elts=[gast.Call(func=A.load(copy_value if x in copied else deep_copy), args=[A.load(x)],
                                          keywords=[]) if x in copied | deep else A.load(x) for x in live]
                          + (saved_outer if outer else []), ctx=gast.Load())
        returned = gast.Return(value=gast.Tuple(elts=[out, pack], ctx=gast.Load()))
        forward = gast.FunctionDef(
            name=f"{base}_forward", args=gast.arguments(
                args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in params],
                posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=forward_defaults),
            body=unbound + fwd + [returned], decorator_list=[], returns=None, type_comment=None, type_params=[])
        backward_body = []
        if live or outer:
            # constants (your values, an axis, a trip count) are unpacked under names of their
            # own and rebound through stop_gradient: where the pullback is differentiated, no
            # derivative flows into them (activity is by name: the unpacked names carry one)
            fixed = [x for x in live if x in constants] + list(outer.values())
            packed = {x: namer.unique(f"{x}_saved") for x in fixed}
            unpack = gast.Tuple(elts=[A.store(packed.get(x, x)) for x in live + list(outer.values())],
                                ctx=gast.Store())
            backward_body.append(gast.Assign(targets=[unpack], value=A.load(saved), type_comment=None))
            if fixed:
                names = [A.load(packed[x]) for x in fixed]
                arg = names[0] if len(fixed) == 1 else gast.Tuple(elts=names, ctx=gast.Load())
                target = A.store(fixed[0]) if len(fixed) == 1 else gast.Tuple(elts=[A.store(x) for x in fixed],
                                                                               ctx=gast.Store())
                backward_body.append(gast.Assign(targets=[target], value=gast.Call(
                    func=A.load(stop_gradient), args=[arg], keywords=[]), type_comment=None))
        mutated = _mutated_in_reverse(rev)
        for name in sorted(stacks | (mutated & set(live))):
            if name in live:
                backward_body.append(A.assign(name, gast.Call(func=A.load(copy_value), args=[A.load(name)],
                                                              keywords=[])))
        backward = gast.FunctionDef(
            name=f"{base}_backward", args=gast.arguments(
                args=[gast.Name(id=saved, ctx=gast.Param(), annotation=None, type_comment=None),
                      gast.Name(id=cot, ctx=gast.Param(), annotation=None, type_comment=None)],
                posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[A.const(None)]),
            body=backward_body + read_saved(_copied_pops(rev, mutated, copy_value), outer), decorator_list=[],
            returns=None,
            type_comment=None,  # printed, not changed
            type_params=[])
        return A.to_source(forward), A.to_source(backward)

    return module.finish(base, joint_source, make_pair, [joint, gast.Module(body=fwd, type_ignores=[])])
