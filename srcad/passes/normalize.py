"""Normalization: rewrite a function into srcad's small A-normal form.

Afterwards the body holds only these statements, every operand an atom (a name or a
literal), every temporary a fresh ``_tN``:

- ``x = rhs`` where rhs is an atom, one operator or call on atoms, ``a.attr``,
  ``a[index]``, a tuple/list/dict display of atoms or a comparison;
- ``S[index] = atom`` (an in-place element update) and ``call(...)`` for its effect;
- ``if name: ... else: ...`` (the test may be ``not name``);
- ``for i in _range1: ...`` over a ``range`` object bound to a name;
- ``while name: ...`` whose test is recomputed at the end of the body;
- ``if _stopN: break`` as the last statement of a loop body, and one final ``return atom``.

This module normalises statements; the other rooms of the pass are ``normalize_exprs``
(expressions, operands first, in Python's order), ``normalize_calls`` (each kind of call
lowered by the room that knows it), ``effect_calls`` (a call made for its effect is a statement of its own), ``match_statements`` (``match`` as
``if``/``else``, first), ``jumps`` (``break``, ``continue`` and early ``return`` become flags and guards), ``loops``
(``for`` over anything becomes a ``range`` loop with indexing) and ``inline`` (helpers
defined in the function, ``def`` or ``lambda``, and list, dict and generator comprehensions
are inlined, each in a scope of fresh names; a helper's default values are evaluated where
it is defined, its arguments in the caller's order), ``random_draws`` (``rng.standard_normal(5)`` of a
generator the function makes calls NumPy's method) and ``sequence_joins`` (``t + (y,)`` of known
lengths is a display). Augmented assignment becomes plain assignment (and
``in_place_result``: an array keeps its shape and dtype, as NumPy's in-place update).

>>> import gast, numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.astutil import to_source
>>> def f(x, w):
...     y = np.tanh(x @ w).sum() * 2.0
...     return y
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x, w):
    _t1 = x @ w
    _t2 = np.tanh(_t1)
    _t3 = _t2.sum()
    y = _t3 * 2.0
    return y
"""
import functools

import gast

from .. import astutil as A
from ..naming import Namer
from .in_place import augmented_assignment, list_slice_check, unshared_store_check
from .binding import builtin_call
from .inline import check_named_exprs, check_no_function_values, lambda_def
from .item_forms import element_annotation
from .jumps import check_jumps_eliminated, eliminate_jumps
from .local_classes import attribute_store_advice
from .local_objects import unlowered_object
from .loops import lower_loop
from .match_statements import lower_matches
from .callees import local_names
from .effect_calls import check_assert
from .normalize_calls import call_statement
from .normalize_exprs import SYNCHRONOUS, ExpressionLowering
from .random_draws import read_draws
from .records import record_check
from .sequence_joins import join_known_sequences
from .statements import prepare_region

_RETURN_INSTEAD = ("return the new value instead (srcad.value_and_grad(f, has_aux=True) returns a value beside the "
                   "loss) and rebind the name after the call; to count calls or keep a log, do it in a function of "
                   "yours that calls the derivative")
# what srcad does not differentiate, and what to write instead
_UNSUPPORTED_STMTS = {
    gast.AsyncWith: ("async with", SYNCHRONOUS),
    gast.AsyncFor: ("async for", SYNCHRONOUS),
    gast.AsyncFunctionDef: ("async functions", SYNCHRONOUS),
    gast.ClassDef: ("class definitions inside a differentiated function", "define the class in the module"),
    gast.Global: ("global statements", _RETURN_INSTEAD),
    gast.Nonlocal: ("nonlocal statements", _RETURN_INSTEAD),
    gast.Delete: ("del statements", "remove it, or build the list or dict without the item"),
    gast.Import: ("imports inside a differentiated function", "import at the top of the module"),
    gast.ImportFrom: ("imports inside a differentiated function", "import at the top of the module"),
}


def normalize(node, source, namer=None, inline_loop_helpers="all"):
    """Return the A-normal form of the function ``node`` (see the module docstring);
    ``inline_loop_helpers``: which small helpers of the module a loop calls are inlined
    (``binding.module_helper``): "all", or "array results" (those returning ``np.array`` of numbers)."""
    # the module's globals too: a helper inlined here reads them by name, which no name
    # srcad makes may capture (its global `_t1` read as the caller's temporary `_t1`)
    namer = namer or Namer(A.all_names(node) | set(source.closure) | set(source.globals))
    lower_matches(node, namer, source)  # (helpers defined in the function too: they are inlined from here)
    check_named_exprs(node, source)
    read_draws(node)
    norm = _Normalizer(source, namer, inline_loop_helpers)
    norm.user_names = A.all_names(node)  # (helpers inlined from the module add theirs)
    norm.record_classes = dict(A.anno(node, "object_classes") or {})  # resolve_calls: s's class in replace(s, ...)
    if not source.is_generated():
        norm.updated_items = {n.target.value.id for n in A.walk(node) if isinstance(n, gast.AugAssign)
                              and isinstance(n.target, gast.Subscript) and isinstance(n.target.value, gast.Name)}
    params = [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    body = eliminate_jumps(node.body, namer, source, top_level=True, params=params)
    node.body = join_known_sequences(_read_before_rebinding(norm.block(body) or [gast.Pass()], namer), namer)
    check_jumps_eliminated(node.body, source)
    check_no_function_values(node, norm.local_functions, source)
    A.set_anno(node, "namer", namer)
    return node


def _read_before_rebinding(stmts, namer):
    """``x = f(x)`` as ``_t = f(x); x = _t``, wherever normalising made one (the reverse pass
    reads the old ``x`` after the new one is bound: it must have a name of its own)."""
    out = []
    for s in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list) and not isinstance(s, gast.FunctionDef):
                setattr(s, field, _read_before_rebinding(getattr(s, field), namer))
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and not A.is_atom(s.value)
                and s.targets[0].id in A.names_read(s.value)):
            temp = namer.fresh("_t")
            first = gast.copy_location(A.assign(temp, s.value), s)
            A.set_anno(first, "origin", A.anno(s, "origin"))
            if A.anno(s, "in_place") is not None:  # what the aliasing check reads off the computing statement
                A.set_anno(first, "in_place", A.anno(s, "in_place"))
            out.append(first)
            s.value = A.load(temp)
        out.append(s)
    return out


class _Normalizer(ExpressionLowering):
    def __init__(self, source, namer, inline_loop_helpers="all"):
        self.source = source
        self.namer = namer
        self.local_functions = {}  # name -> FunctionDef of a helper defined in the function
        self.static_functions = {}  # inlined parameter -> inline.StaticFunction it was passed
        self.inlining = []  # (name, loop depth of its call) of each helper being inlined
        self.loop_depth = 0  # loops around the statement being normalised
        self.line = None  # the line of the user's statement being normalised, for messages
        self.updated_items = set()  # names whose items an augmented assignment updates (L[i] += v)
        self.inline_loop_helpers = inline_loop_helpers  # binding.module_helper
        self.record_classes = {}  # name (or dotted path) -> the record class it holds (records.record_replace)

    def error(self, message, node):
        return self.source.syntax_error(message, node)

    @functools.cached_property
    def source_locals(self):
        """The names the user's function binds (asked once per inlined call: worked out once)."""
        return local_names(self.source.node)

    # ---- statements -------------------------------------------------------------
    def block(self, stmts):
        out = []
        for stmt in stmts:
            self.stmt(stmt, out)
        return out

    def stmt(self, s, out):
        for kind, (what, instead) in _UNSUPPORTED_STMTS.items():
            if isinstance(s, kind):
                raise self.error(f"srcad does not support {what}: {instead}", s)
        start = len(out)
        self.line = getattr(s, "lineno", None) or self.line
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise self.error(f"srcad does not support {type(s).__name__} statements", s)
        method(s, out)
        for new in out[start:]:
            if getattr(new, "lineno", None) is None:
                gast.copy_location(new, s)
            A.set_anno(new, "origin", A.anno(new, "origin") or s)

    def stmt_Pass(self, s, out):
        pass

    def stmt_Assert(self, s, out):
        check_assert(self, s)
        out.append(s)  # runs in the primal only; its operands are never differentiated

    def stmt_Raise(self, s, out):
        out.append(s)

    def stmt_Expr(self, s, out):
        if isinstance(s.value, gast.Constant):
            return  # a docstring or a bare literal
        if isinstance(s.value, gast.Call):
            call_statement(self, s, out)
            return
        self.atom(s.value, out)

    def stmt_FunctionDef(self, s, out):
        self.local_functions[s.name] = s
        # Python evaluates default values once, where the function is defined: keep them there
        s.args.defaults = [self.default_value(d, out) for d in s.args.defaults]
        s.args.kw_defaults = [None if d is None else self.default_value(d, out) for d in s.args.kw_defaults]

    def default_value(self, value, out):
        if isinstance(value, gast.Constant):
            return value
        name = self.namer.fresh("_default")
        out.append(gast.copy_location(A.assign(name, self.rhs(value, out)), value))
        return A.load(name)

    def stmt_AnnAssign(self, s, out):
        if s.value is not None:
            start = len(out)
            self.assign_to(s.target, s.value, out)
            dtype = element_annotation(s.annotation)
            if dtype is not None and self.source.is_generated():
                # srcad's own fact, ``a: np.float64 = S[i, j]`` (``codegen``): one element, no view
                reads = [t.value for t in out[start:] if isinstance(t, gast.Assign) and isinstance(t.value, gast.Subscript)]
                if reads:
                    A.set_anno(reads[-1], "one_element", dtype)

    def stmt_Assign(self, s, out):
        if isinstance(s.value, gast.Lambda) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            self.stmt_FunctionDef(gast.copy_location(lambda_def(s.targets[0].id, s.value), s), out)
            return
        if len(s.targets) == 1:
            self.assign_to(s.targets[0], s.value, out)
            if A.anno(s, "record_check") is not None:  # s = step(s, dt), taken to keep s's class
                out.append(record_check(self, s.targets[0].id, A.anno(s, "record_check"), s))
            return
        value = self.atom(s.value, out)
        for target in s.targets:
            self.assign_to(target, value, out)

    def stmt_AugAssign(self, s, out):
        augmented_assignment(self, s, out)

    def assign_to(self, target, value, out):
        if isinstance(target, gast.Name):
            rhs = self.rhs(value, out)
            if isinstance(rhs, gast.Name) and rhs.id == target.id:
                return
            if not A.is_atom(rhs) and target.id in A.names_read(rhs):
                # x = f(x) becomes _t = f(x); x = _t, so the reverse pass can read the old x
                temp = self.namer.fresh("_t")
                out.append(gast.copy_location(A.assign(temp, rhs), value))
                rhs = A.load(temp)
            out.append(A.assign(target.id, rhs))
        elif isinstance(target, (gast.Tuple, gast.List)):
            stars = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            if pairwise_display(target, value, stars):  # a, b = [], []: no tuple whose items both would share
                self.assign_pairwise(target, value, out)
                return
            if isinstance(value, gast.Call):  # unpacking consumes one pass: a, b = zip(*pairs)
                A.set_anno(value, "consumed", True)
            source = self.atom(value, out)
            after = len(target.elts) - (stars[0] + 1) if stars else 0
            for i, elt in enumerate(target.elts):
                if isinstance(elt, gast.Starred):  # first, *rest = seq: rest = list(seq[1:])
                    stop = A.const(-after) if after else None
                    part = gast.Subscript(value=A.deepcopy(source), slice=gast.Slice(A.const(i), stop, None),
                                          ctx=gast.Load())
                    self.assign_to(elt.value, builtin_call("list", part), out)
                    continue
                index = i if not stars or i < stars[0] else i - len(target.elts)
                item = gast.Subscript(value=A.deepcopy(source), slice=A.const(index), ctx=gast.Load())
                self.assign_to(elt, item, out)
        elif isinstance(target, gast.Subscript):
            base = target.value
            if not isinstance(base, gast.Name):
                raise self.error(
                    "srcad supports element updates of a named array (S[i, j] = ...), "
                    "not of an expression; index with one subscript, S[i, j]",
                    target,
                )
            index = self.index(target.slice, out)
            new = self.atom(value, out)
            if isinstance(index, gast.Slice) and not self.source.is_generated():  # a list keeps its length
                out.append(gast.copy_location(list_slice_check(self, base.id, index, new, target), target))
            elif base.id in self.updated_items and not any(isinstance(n, gast.Slice) for n in A.walk(index)):
                out.append(gast.copy_location(unshared_store_check(self, base.id, index, new, target), target))
            out.append(A.assign(gast.Subscript(value=A.load(base.id), slice=index, ctx=gast.Store()), new))
        else:
            raise self.error(unlowered_object(target) or (
                "srcad does not support setting an attribute ({} = ...) in a function it differentiates; {}".format(
                    A.to_source(target).strip(), attribute_store_advice())), target)

    def assign_pairwise(self, target, value, out):
        """``a, b = e1, e2``: both values first (Python's order), each bound to its target. A value
        that is a name the assignment binds is read into a temporary first (``a, b = b, a``)."""
        atoms = [self.atom(e, out) for e in value.elts]
        bound = A.names_stored(target)
        for k, atom in enumerate(atoms):
            if isinstance(atom, gast.Name) and atom.id in bound:
                temp = self.namer.fresh("_t")
                out.append(gast.copy_location(A.assign(temp, atom), value))
                atoms[k] = A.load(temp)
        for elt, atom in zip(target.elts, atoms):
            self.assign_to(elt, atom, out)

    def stmt_If(self, s, out):
        test = self.atom(s.test, out)
        body = self.block(s.body) or [gast.Pass()]
        prepare_region(self, test, body, s)
        orelse = self.block(s.orelse)
        out.append(gast.If(test=self.test_atom(test, out), body=body, orelse=orelse))

    def test_atom(self, test, out):
        if isinstance(test, gast.Constant):
            name = self.namer.fresh("_t")
            out.append(A.assign(name, test))
            return A.load(name)
        return test

    def stmt_While(self, s, out):
        lower_loop(self, s, out)

    def stmt_For(self, s, out):
        lower_loop(self, s, out)

    def stmt_Break(self, s, out):
        out.append(s)  # only `if _stopN: break` reaches here (see eliminate_jumps)

    def stmt_Return(self, s, out):
        value = A.const(None) if s.value is None else self.atom(s.value, out)
        out.append(gast.Return(value=value))


def pairwise_display(target, value, stars):
    """Is ``target = value`` a tuple (or list) display assigned to as many plain targets?"""
    return (not stars and isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts)
            and not any(isinstance(e, gast.Starred) for e in value.elts))

