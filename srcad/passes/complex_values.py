"""Complex values: refuse every derivative srcad would take wrongly for a complex operand.

srcad's rules are derivatives of real functions; only the rules in ``registry.COMPLEX_SAFE``
are also right for complex values (with the cotangent convention ∂L/∂Re + i ∂L/∂Im).
Arguments are real (``srcad.arguments`` refuses complex ones), so a complex value can enter
the derivative only from a complex literal, a call that makes complex values (``np.fft.fft``,
``astype(complex)``, ``dtype=``), or a value srcad does not compute itself (a global, an
attribute of an object, the result of a call that carries no derivative). This pass decides,
fail closed:

- which names may hold complex values (flow-insensitive, through every operation except
  those that return real values: ``np.real``, ``np.abs``, comparisons, shape queries);
- that no active statement applies a rule outside ``registry.COMPLEX_SAFE`` (or a function
  without derivative, or a user function) to a value that may be complex: a srcad error at
  the user's line;
- that every value srcad does not compute and a derivative reads is checked to be real when
  the function runs (``runtime.real_constant`` before the statement: a cheap dtype test);
- that every value srcad does not type (``passes.outside_values``: where such values are made)
  that may reach an operator is checked, where it is made, to be a number or an array srcad's
  rules are right for (``runtime.numeric_constant``, which checks it real too where both apply:
  one call per value).

>>> import gast, numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.passes.activity import activity
>>> def f(x):
...     z = np.fft.fft(x)
...     return np.real(np.sum(np.exp(z)))
>>> src = capture(f)
>>> node = activity(normalize(resolve_calls(src.node, src), src), src, wrt=("x",))
>>> check_complex(node, src, lambda name, obj: name)
Traceback (most recent call last):
...
srcad.errors.SrcadSyntaxError: ...complex...
"""
import builtins

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from .. import runtime
from ..code_reading import attribute_now
from ..naming import BUILTIN
from ..rules.numpy_fft import rfft_grad, rfftn_grad
from ..rules.numpy_spectral import eigvals_grad
from .complex_operands import atom_source, atoms_source, complex_dtype, complex_value, global_complex
from .fresh import PLAIN_ATTRIBUTES, is_in
from .outside_values import (Statements, code_value, library_module, made_outside, operands, runtime_check, target,
                             unknown_dtypes, untyped_operands, unverified)
from .shape_values import Spec
from .user_text import UserText

#: calls that may return a complex value for real operands
_COMPLEX_MAKERS = {np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.fftn, np.fft.ifftn, np.fft.fft2, np.fft.ifft2,
                   np.fft.rfftn, np.fft.rfft2, np.fft.ihfft, np.linalg.eig, np.linalg.eigvals, np.roots, np.poly,
                   builtins.complex, np.complex64, np.complex128, np.vectorize, np.frompyfunc}
_COMPLEX_MAKERS |= {getattr(np.emath, n) for n in dir(np.emath) if callable(getattr(np.emath, n))}
#: calls whose result is real (or an index) whatever their operands
_REAL_RESULTS = {np.real, np.imag, np.abs, np.absolute, builtins.abs, np.angle, np.isnan, np.isinf, np.isfinite,
                 np.iscomplex, np.isreal, np.iscomplexobj, np.isrealobj, np.argmax, np.argmin, np.argsort,
                 np.argpartition, np.nanargmax, np.nanargmin, np.fft.irfft, np.fft.irfft2, np.fft.irfftn, np.fft.hfft,
                 np.nonzero, np.flatnonzero, np.count_nonzero, np.shape, np.ndim, np.size, builtins.len,
                 builtins.int, builtins.float, builtins.bool, builtins.range, np.linalg.norm, runtime.real_constant,
                 runtime.numeric_constant, builtins.slice,  # a complex step in a slice counts points (np.r_[0:1:5j])
                 rfft_grad, rfftn_grad,  # the adjoints of rfft of a real input (in a derivative differentiated again)
                 eigvals_grad}  # the adjoint of eigvals' real matrix
#: functions without derivative that are right to treat as such for complex operands: their
#: results are indices, flags or shapes (np.sign is not: for complex z it is z / |z|)
_COMPLEX_CONSTANT = (_REAL_RESULTS - {np.real, np.imag, np.abs, np.absolute, builtins.abs, np.angle,
                                      np.linalg.norm, builtins.float}) | {np.round, np.around, np.rint,
                                                                          runtime.zeros_like}  # (a zero adjoint)

def check_complex(node, source, ref, mode="rev", specs=None):
    """Refuse (``SrcadSyntaxError`` at the user's line) every active statement that would apply
    a derivative not right for complex values to one that may be complex, and insert
    ``runtime.real_constant(value, message)`` before each such statement that reads a value
    srcad does not compute (a global, an attribute, an inactive call's result) unless it is
    surely real. ``ref(name, obj)`` names an object in generated code; ``mode`` is ``"rev"`` or
    ``"fwd"`` (forward mode also takes holomorphic functions' rules, ``f'(z) · dz``).
    ``specs`` (parameter -> ``passes.shapes.arg_spec``, where the code is specialised) proves
    the transpose of a real array parameter the body never rebinds real: it is not checked."""
    active, varied = A.anno(node, "active"), A.anno(node, "varied")
    statements = Statements(s for s in A.walk_statements(node.body) if not isinstance(s, (gast.If, gast.While)))
    stored = A.names_stored(node)
    local = stored | {a.id for a in node.args.args}
    sources = _complex_sources(statements, source, local)
    complex_names = _may_be_complex(statements, sources)
    complex_names |= {n for n in set().union(*map(statements.read, statements))
                      if n not in local and global_complex(n, source)}  # complex globals
    fixed_real = _real_array_parameters(node, specs, stored)
    # a value srcad does not compute (an attribute of an object, a call of yours run as written)
    # or makes with a dtype it cannot read now (a parameter, your global, an argument's
    # attribute) may be complex each time the function runs: where it may reach a rule right for
    # real values only, through any operation, it is checked when it is made
    params = {a.id for a in node.args.args}
    outside = made_outside(statements, active, local, source, fixed_real,
                           lambda obj: _real_result(obj) or _known_real(obj))
    unknown = unknown_dtypes(statements, source, local, params, varied | fixed_real)
    seeds = {id(s): s for s in unknown + list(outside.values())}
    maybe_complex = _may_be_complex(statements, sources, set(seeds)) if seeds else set()
    check_made = False
    unchecked = unverified(statements, active, local, source, outside)
    for n in A.walk(node) if unchecked else ():  # srcad's own objects (a record's class) are no user values
        if isinstance(n, gast.Name) and A.anno(n, BUILTIN) is not None:
            unchecked.pop(n.id, None)
    needs_real = set()  # statements whose operands srcad does not compute must be real when they run
    tested_real = _complex_after_tests(node, complex_names, statements, source, local)
    for s in statements:
        bound = statements.bound(s)
        read = statements.read(s)
        # an active statement, or one that drops the derivative of a varied operand (np.sign)
        if bound is None or not (bound & active or read & varied):
            continue
        operation = _operation(s)
        if _right_for_complex(operation, mode):
            continue
        check_made |= bool((read | bound) & maybe_complex) and not _scaled_by_real_constant(
            s, operation, maybe_complex, active)
        complex_here = (read | bound) & complex_names if id(s) not in tested_real else tested_real[id(s)]
        if complex_here and not _scaled_by_real_constant(s, operation, complex_names, active):
            raise source.syntax_error(
                f"srcad differentiates complex values only through {registry.COMPLEX_SAFE_SUMMARY}; "
                f"{_describe(operation)} here may have a complex operand or result: take np.real or "
                "np.imag (or np.abs) of the complex value first, or differentiate its real and imaginary "
                "parts as separate real arrays", A.anno(s, "origin") or s)
        needs_real.add(id(s))
    made_real = {i: s for i, s in seeds.items() if statements.bound(s) & maybe_complex} if check_made else {}
    unchecked = {n: v for n, v in unchecked.items() if not (n in outside and id(outside[n]) in made_real)}
    # a value srcad does not type that an operator reads is checked when it is made to be a
    # number or an array (in the same call as its realness where both are checked)
    library = {n for n, s in outside.items() if isinstance(s.value, gast.Attribute)
               and library_module(s.value.value, source, local) is not None}  # np.r_: a library's own object
    typed, at_entry = untyped_operands(statements, active, varied, params,
                                       {n: s for n, s in outside.items() if n not in library},
                                       _untyped_containers(statements, local, source),
                                       _array_parameters(specs) - _subclass_defaults(source))
    _insert_checks(node, needs_real, unchecked, made_real, {id(s) for s in unknown}, typed, source, ref)
    _check_at_entry(node, at_entry, source, ref)
    return node


def _array_parameters(specs):
    """The parameters the code is made for NumPy arrays or numbers, or lists and tuples of them
    (its key holds the class: an argument of a subclass of yours is refused by
    ``passes.operators``)."""
    def numbers(spec):
        return isinstance(spec, Spec) or isinstance(spec, (list, tuple)) and all(numbers(s) for s in spec)

    return {p for p, spec in (specs or {}).items() if numbers(spec)}


def _subclass_defaults(source):
    """Parameters whose default is an instance of a subclass of ``float`` or ``int`` (yours,
    an ``IntEnum``): the key of a call leaving it out says a number; its operators may not be."""
    import inspect

    try:
        parameters = inspect.signature(source.fn).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in parameters if p.default is not p.empty and isinstance(p.default, (float, int))
            and type(p.default) not in (float, int, bool)}


def _untyped_containers(statements, local, source):
    """Globals and closure variables the statements read whose items srcad cannot type now (a
    list of your objects): any but a module, class or function, a number or a NumPy array of
    numbers (an array's items are its numbers; rebinding the name is guarded)."""
    found, seen = set(), set(local)  # each name looked up once
    for s in statements:
        for name in statements.read(s) - seen:
            seen.add(name)
            if code_value(source, name):
                continue
            try:
                value = source.lookup(name)
                if value.__class__ in (float, int, bool) or value.__class__ is np.ndarray and value.dtype.kind in "biuf":
                    continue
            except KeyError:
                continue
            except Exception:  # (a weak proxy whose object is gone: its items are not known)
                pass
            found.add(name)
    return found


def _check_at_entry(node, names, source, ref):
    """``runtime.numeric_constant`` of each parameter in ``names`` first in the function."""
    where = f"{source.filename}:{getattr(node, 'lineno', '?')}"
    node.body[:0] = [runtime_check(runtime.numeric_constant, [A.load(name), A.const(f"{where}: the argument '{name}'")],
                                   ref, node) for name in names]


def _string_names(statements):
    """Names bound to a string: a string names a dtype only where a dtype is read ('F' is also
    an order, 'ij,j->' a subscript)."""
    strings = {}
    for s in statements:
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.Constant) and isinstance(s.value.value, str):
            for name in target(s) or ():
                strings.setdefault(name, []).append(s.value.value)
    return strings


def _may_be_complex(statements, sources, assumed=frozenset()):
    """Names that may hold complex values; the statements whose ids are ``assumed`` are taken
    to make them. ``sources`` is ``_complex_sources``' of the statements."""
    found = set()
    changed = True
    while changed:
        changed = False
        for s in statements:
            bound = statements.bound(s)
            if bound is None or bound <= found:
                continue
            surely, names = sources[id(s)]
            if id(s) in assumed or surely or not names.isdisjoint(found):
                found |= bound
                changed = True
    return found


def _complex_sources(statements, source, local):
    """id(statement) -> ``_complex_source`` of each statement that binds a name: read once,
    for the fixpoints of ``_may_be_complex`` to ask of each round."""
    strings = _string_names(statements)
    return {id(s): _complex_source(s, source, local, strings) for s in statements if statements.bound(s) is not None}


def _complex_after_tests(node, complex_names, statements, source, local):
    """id(statement) -> the names among its operands and results that may be complex, for each
    statement of a branch a dtype test made just before says ``X`` is real in (``t =
    np.iscomplexobj(X)`` then ``if t: ... else: <here>``, as the adjoint of ``abs`` is written,
    and differentiated again): straight-line branches that do not rebind ``X``, followed in order."""
    strings = _string_names(statements)
    found = {}
    for block in A.blocks(node.body):
        for test, s in zip(block, block[1:]):
            call = test.value if isinstance(test, gast.Assign) and len(test.targets) == 1 else None
            callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
            if not (isinstance(s, gast.If) and isinstance(s.test, gast.Name) and callee is not None
                    and callee.kind == "object" and (callee.obj is np.iscomplexobj or callee.obj is np.isrealobj)
                    and len(call.args) == 1
                    and not call.keywords and isinstance(call.args[0], gast.Name)
                    and A.names_stored(test.targets[0]) == {s.test.id}):
                continue
            real = call.args[0].id
            branch = s.orelse if callee.obj is np.iscomplexobj else s.body
            if real in complex_names and all(isinstance(b, (gast.Assign, gast.Expr)) for b in branch) \
                    and real not in set().union(*(target(b) or set() for b in branch)):
                known = set(complex_names) - {real}
                for b in branch:
                    bound = target(b) or set()
                    makes = _makes_complex(b, known, source, local, strings)
                    found[id(b)] = (operands(b) & known) | (bound if makes else set())
                    plain = isinstance(b, gast.Assign) and not isinstance(b.targets[0], gast.Subscript)
                    known = known | bound if makes else known - bound if plain else known
    return found


def _makes_complex(s, found, source, local, strings):
    """May ``s`` bind a complex value (or a complex dtype: ``astype(d)`` and ``dtype=d`` then
    make complex values) where the names in ``found`` may hold them?"""
    surely, names = _complex_source(s, source, local, strings)
    return surely or not names.isdisjoint(found)


def _complex_source(s, source, local, strings):
    """``(surely, names)``: ``s`` may bind a complex value (or a complex dtype) if ``surely``,
    or if one of ``names`` may hold one."""
    if isinstance(s, gast.For):
        return atom_source(s.iter, source, local)
    if isinstance(s, gast.Expr):  # L.append(z): L holds a complex value
        return atoms_source(s.value.args, source, local)
    rhs = s.value
    if isinstance(rhs, gast.Call):
        callee = A.anno(rhs, "callee")
        obj = callee.obj if callee is not None and callee.kind == "object" else None
        name = callee.name if callee is not None and callee.kind == "method" else None
        if _real_result(obj) or name in ("real", "imag", "__abs__"):
            return _NEVER
        if _complex_maker(obj):
            return _SURELY
        dtypes = [k.value for k in rhs.keywords if k.arg == "dtype"]
        if name in ("astype", "view") and rhs.args:
            dtypes.append(rhs.args[0])
        if any(complex_dtype(d, strings) for d in dtypes):
            return _SURELY
        operands = list(rhs.args) + [k.value for k in rhs.keywords]  # a dtype like x.dtype among them
        if name is not None:
            operands.append(rhs.func.value)
        return atoms_source(operands, source, local)
    if isinstance(rhs, gast.Attribute):
        if rhs.attr in ("real", "imag") or rhs.attr in PLAIN_ATTRIBUTES - {"dtype"}:
            return _NEVER
        if isinstance(rhs.value, gast.Name) and rhs.value.id not in local:  # np.complex128, cfg.c
            try:
                return complex_value(attribute_now(source.lookup(rhs.value.id), rhs.attr)), frozenset()
            except Exception:
                pass
        return atom_source(rhs.value, source, local)
    if isinstance(rhs, gast.Compare):
        return _NEVER
    if isinstance(rhs, gast.Subscript):  # a complex step in a slice counts points: np.r_[0:1:5j]
        return atom_source(rhs.value, source, local)
    if any(isinstance(n, gast.Constant) and not isinstance(n.value, str) and complex_value(n.value)
           for n in A.walk(rhs)):
        return _SURELY
    names = A.names_read(rhs)
    return any(n not in local and global_complex(n, source) for n in names), frozenset(names)


_NEVER, _SURELY = (False, frozenset()), (True, frozenset())


def _real_array_parameters(node, specs, rebound):
    """Parameters that hold a real NumPy array (or scalar) for the whole call: specialised on
    a real dtype and never rebound in the body (``rebound``: the names it stores)."""
    if not specs:
        return set()
    return {a.id for a in node.args.args if a.id not in rebound and isinstance(specs.get(a.id), Spec)
            and specs[a.id].python is None and specs[a.id].dtype.kind in "biuf"}


def _complex_maker(obj):  # NumPy's, or one an optional rule module registered (scipy.fft's)
    return is_in(obj, _COMPLEX_MAKERS) or registry.makes_complex(obj)


def _real_result(obj):
    return is_in(obj, _REAL_RESULTS) or registry.gives_real(obj)


def _known_real(obj):
    """A library function with a real rule or none needed, not one that makes complex values."""
    if obj is None or _complex_maker(obj):
        return False
    return (registry.lookup(registry.VJP, obj) is not None or registry.lookup(registry.JVP, obj) is not None
            or registry.is_nondifferentiable(obj))


def _insert_checks(node, needs_real, names, made_real, dtyped, typed, source, ref):
    """``runtime.real_constant`` of each value in ``names`` a statement in ``needs_real``
    reads, before it; and of what each statement in ``made_real`` makes, after it (those in
    ``dtyped`` make it with a dtype read when the function runs). ``typed`` (id(statement) ->
    names): ``runtime.numeric_constant`` of those names after the statement, which checks them
    real too where ``made_real`` asks for that."""
    if not names and not made_real and not typed:
        return
    user = UserText(node, source)
    real_advice = "take np.real/np.imag of it first, or pass its real and imaginary parts separately"

    def checked(s, name, text, advice, typed_too=False):
        origin = A.anno(s, "origin") or s
        subject = f"{source.filename}:{getattr(origin, 'lineno', '?')}: {text}"
        message = A.const(f"{subject} is complex; srcad differentiates real values only here: {advice}")
        check = runtime.numeric_constant if typed_too else runtime.real_constant
        if typed_too:  # (complex values pass where no advice says what to do with them)
            args = [A.load(name), A.const(subject)] + ([message] if advice else [])
        else:
            args = [A.load(name), message]
        new = runtime_check(check, args, ref, s)
        A.set_anno(new, "origin", origin)
        return new

    def made(s):
        """The checks of what ``s`` binds."""
        real = target(s) if id(s) in made_real else set()
        numeric = typed.get(id(s), set())
        advice = ("its dtype is read when the function runs; pass a real dtype, or take np.real/np.imag of the "
                  "value first") if id(s) in dtyped else real_advice
        value = s.value if isinstance(s.targets[0], gast.Name) else None
        sequence = user.loop_sequence(value.value.id) if isinstance(value, gast.Subscript) and isinstance(
            value.value, gast.Name) else None
        return [checked(s, name, f"'{name}' (an item of {user.value(sequence)})" if sequence is not None
                        else f"'{user.value(value if value is not None else A.load(name))}'",
                        advice if name in real else None, name in numeric) for name in sorted(real | numeric)]

    def visit(block):
        out = []
        for s in block:
            for inner in (getattr(s, "body", None), getattr(s, "orelse", None)):
                if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                    visit(inner)
            if id(s) in needs_real:
                out.extend(checked(s, name, f"'{user.value(names[name])}'", real_advice)
                           for name in sorted(operands(s) & set(names)))
            out.append(s)
            if id(s) in made_real or id(s) in typed:
                out.extend(made(s))
        block[:] = out

    visit(node.body)


def _operation(s):
    """What the statement applies: a rule key, ``"method:<name>"``, or a structural kind."""
    rhs = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
    if isinstance(rhs, gast.BinOp):
        return type(rhs.op)
    if isinstance(rhs, gast.UnaryOp):
        return type(rhs.op)
    if isinstance(rhs, gast.Call):
        callee = A.anno(rhs, "callee")
        if callee is None:
            return "call"
        if callee.kind == "object":
            return callee.obj
        method = registry.METHODS.get(callee.name)
        return method if method is not None else f"method:{callee.name}"
    if isinstance(rhs, gast.Attribute):
        return {"real": np.real, "imag": np.imag}.get(rhs.attr, f"attribute:{rhs.attr}")
    return "structure"  # copies, indexing, displays, loop items: linear and right for complex values


def _scaled_by_real_constant(s, operation, complex_names, active):
    """``z * c``, ``c * z``, ``z / c`` with one complex operand ``z`` and a real constant ``c``:
    the rule multiplies the cotangent by ``c`` (or ``1 / c``), which is its own conjugate."""
    if not is_in(operation, _SCALINGS):
        return False
    rhs = s.value
    operands = [rhs.left, rhs.right] if isinstance(rhs, gast.BinOp) else list(rhs.args)
    if len(operands) != 2 or (isinstance(rhs, gast.Call) and rhs.keywords):
        return False
    kinds = [_kind(a, complex_names, active) for a in operands]
    if is_in(operation, _DIVISIONS):
        return kinds == ["complex", "constant"]
    return sorted(kinds) == ["complex", "constant"]


def _kind(atom, complex_names, active):
    if isinstance(atom, gast.Constant):
        return "constant" if isinstance(atom.value, (int, float)) else "other"
    if isinstance(atom, gast.Name):
        if atom.id in complex_names:
            return "complex"
        return "other" if atom.id in active else "constant"
    return "other"


_DIVISIONS = {gast.Div, np.divide, np.true_divide}
_SCALINGS = _DIVISIONS | {gast.Mult, np.multiply}


def _right_for_complex(operation, mode):
    if operation in ("structure", "attribute:T", "method:append", "method:pop", "method:copy", "method:conj",
                     "method:conjugate") or operation in {f"attribute:{a}" for a in PLAIN_ATTRIBUTES}:
        return True
    if isinstance(operation, str):
        return False
    # a call that makes complex values has its own rule, which decides (np.fft.fft, complex())
    return (registry.is_complex_safe(operation) or is_in(operation, _COMPLEX_CONSTANT)
            or _complex_maker(operation) or mode == "fwd" and is_in(operation, _HOLOMORPHIC))


#: forward mode pushes a tangent through f'(z) · dz, right for complex z when f is holomorphic
#: (its rules never take an absolute value, a conjugate or a real part)
_HOLOMORPHIC = {gast.Add, gast.Sub, gast.Mult, gast.Div, gast.USub, gast.UAdd, gast.MatMult, np.add, np.subtract,
                np.multiply, np.divide, np.true_divide, np.negative, np.positive, np.exp, np.expm1, np.log, np.log1p,
                np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh, np.sqrt, np.square, np.reciprocal, np.sum,
                np.cumsum, np.prod, np.mean, np.matmul, np.dot, np.inner, np.outer, np.tensordot, np.einsum,
                np.transpose, np.reshape, np.ravel, np.concatenate, np.stack, np.trace, np.diag, np.squeeze,
                np.expand_dims, np.linalg.inv, np.linalg.solve}


def _describe(operation):
    if isinstance(operation, str):
        return {"call": "this call"}.get(operation, f"'{operation.split(':', 1)[1]}'" if ":" in operation else operation)
    return registry.describe(operation)


