"""Shape, indexing and joining rules (srcad/rules/numpy_shapes.py, numpy_indexing.py,
numpy_joining.py) against finite differences.

Reverse rules run end to end through srcad (``check_grads``: joint adjoint and vjp
pullback); forward rules too (``check_jvp``), on the same functions and on single calls
with keyword arguments (``check_call_jvp``). ``jvp_of`` runs one jvp template by itself,
instantiated by srcad's template machinery exactly as a forward pass would.
"""
import itertools
import linecache
import math

import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad import registry, runtime
from srcad.naming import Namer
from srcad.template import instantiate
from srcad.template_binding import bind
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(1)


def R(*shape):
    return RNG.standard_normal(shape)


def wrt_all(args):
    return tuple(range(len(args))) if len(args) > 1 else 0


# ---- one call, end to end: ``function(*args, **kwargs)`` as code srcad reads -----------------

_CALLS = itertools.count()


def _is_literal(value):
    """A value A-normal form keeps as a literal operand: a number, string, None, or a tuple of them."""
    if isinstance(value, tuple):
        return all(_is_literal(v) and not isinstance(v, tuple) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)  # repr(inf) is not Python source
    return isinstance(value, (type(None), bool, int, str))


def _atom_name(key):
    """The name of operand ``key`` (a position or a keyword) in code made for a test."""
    return f"a{key}" if isinstance(key, int) else f"k_{key}"


def calling(function, args, kwargs, wrt):
    """``function(*args, **kwargs)`` as a Python function srcad can read, and the values to
    call it with. Its parameters are the operands ``wrt`` names (positions in ``args``,
    keyword names); the other operands are literals in its source where user code would
    write literals, and global names otherwise."""
    namespace = {"function": function}
    params, values = [], []

    def operand(key, value):
        name = _atom_name(key)
        if key in wrt:
            params.append(name)
            values.append(value)
            return name
        if _is_literal(value):
            return repr(value)
        namespace[name] = value
        return name

    call_args = [operand(i, a) for i, a in enumerate(args)] + [f"{k}={operand(k, v)}" for k, v in kwargs.items()]
    name = f"{getattr(function, '__name__', 'function')}_call"
    text = f"def {name}({', '.join(params)}):\n    return function({', '.join(call_args)})\n"
    filename = f"<call {next(_CALLS)} of {registry.describe(function)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name], values


def check_call_jvp(function, args, wrt=(0,), kwargs=None, **tolerances):
    """``check_jvp`` of the call ``function(*args, **kwargs)`` with the operands ``wrt``
    (positions, keyword names) moving; returns the tangent."""
    fun, values = calling(function, args, kwargs or {}, wrt)
    return check_jvp(fun, values, wrt_all(values), **tolerances)


# ---- one jvp template by itself ------------------------------------------------------------

class _TangentHandler:
    """The handler protocol of ``srcad.template.instantiate`` for tangents ``t_<name>``."""

    def __init__(self, active):
        self.active = active
        self.assigned = set()

    def is_active(self, var):
        return var in self.active or var == "y"

    def read(self, var):
        return A.load("t_" + var) if var in self.active else None

    def accumulate(self, var, expr):
        name = "t_" + var
        if name in self.assigned:
            expr = gast.Call(func=A.load("add_grads"), args=[A.load(name), expr], keywords=[])
        self.assigned.add(name)
        return [A.assign(name, expr)]

    def rule_branch(self, test, make_body, make_orelse):  # (power's rule: x ** 0 apart)
        before = set(self.assigned)
        body = make_body()
        after_body, self.assigned = self.assigned, set(before)
        orelse = make_orelse()
        assert after_body == self.assigned, "both branches of a rule assign the same tangents"
        return gast.If(test=test, body=body or [gast.Pass()], orelse=orelse)


class _Site:
    what = "the call under test"

    def error(self, message):
        return AssertionError(message)


def jvp_of(function, args, kwargs, tangents):
    """The tangent of ``function(*args, **kwargs)`` by its jvp rule alone when ``args[i]``
    (or the keyword argument ``i``) moves by ``tangents[i]``; literal arguments are
    literals, as in A-normal form. None means zero."""
    rule = registry.JVP[function]
    env = {"add_grads": runtime.add_grads}

    def atom(key, value):
        name = _atom_name(key)
        if _is_literal(value) and key not in tangents:
            if isinstance(value, tuple):
                return gast.Tuple(elts=[A.const(v) for v in value], ctx=gast.Load())
            return A.const(value)
        env[name] = value
        return A.load(name)

    arg_atoms = [atom(i, v) for i, v in enumerate(args)]
    keywords = [gast.keyword(arg=k, value=atom(k, v)) for k, v in kwargs.items()]
    for key, t in tangents.items():
        env["t_" + _atom_name(key)] = t
    env["y"] = function(*args, **kwargs)

    def refs(name, obj):
        env["_g_" + name] = obj
        return "_g_" + name

    handler = _TangentHandler({_atom_name(key) for key in tangents})
    body = instantiate(rule, A.load("y"), bind(rule, arg_atoms, keywords, _Site()), handler, Namer(set(env)), refs)
    module = gast.gast_to_ast(gast.fix_missing_locations(gast.Module(body=body, type_ignores=[])))
    exec(compile(module, f"<jvp rule of {registry.describe(function)}>", "exec"), env)
    return env.get("t_y")


# ---- reverse rules ---------------------------------------------------------------------------

def f_reshape(x):
    return np.reshape(x, (4, 3))


def f_reshape_f(x):
    return np.reshape(x, (2, 6), order="F")


def f_method_reshape(x):
    return np.sin(x.reshape(2, 2, 3))


def f_method_reshape_tuple(x):
    return x.reshape((12,), order="F")


def f_ravel(x):
    return np.ravel(x)


def f_ravel_f(x):
    return np.ravel(x, order="F")


def f_ravel_k(x):
    return np.ravel(x.T[::-1], order="K")


def f_flatten(x):
    return x.flatten()


def f_flatten_f(x):
    return x.flatten("F")


def f_transpose(x):
    return np.transpose(x)


def f_transpose_axes(x):
    return np.transpose(x, (1, 2, 0))


def f_transpose_negative(x):
    return np.transpose(x, (-1, 0, 1))


def f_method_transpose(x):
    return x.transpose(2, 0, 1)


def f_method_transpose_tuple(x):
    return x.transpose((1, 0, 2))


def f_method_transpose_none(x):
    return x.transpose()


def f_attribute_t(x):
    return x.T


def f_swapaxes(x):
    return np.swapaxes(x, 0, 2)


def f_attribute_mt(x):
    return np.tanh(x.mT @ x)  # NumPy 2's stacked matrix transpose, of an operand carrying a derivative


def f_matrix_transpose(x):
    return np.matrix_transpose(x) * x.mT


def f_method_swapaxes(x):
    return x.swapaxes(-1, 1)


def f_moveaxis(x):
    return np.moveaxis(x, 0, -1)


def f_moveaxis_many(x):
    return np.moveaxis(x, (0, 1), (2, 0))


def f_rollaxis(x):
    return np.rollaxis(x, 2)


def f_rollaxis_start(x):
    return np.rollaxis(x, 0, 2)


def f_rollaxis_end(x):
    return np.rollaxis(x, 1, 3)


def f_expand_dims(x):
    return np.expand_dims(x, 1)


def f_expand_dims_many(x):
    return np.expand_dims(x, (0, -1))


def f_squeeze(x):
    return np.squeeze(x)


def f_squeeze_axis(x):
    return np.squeeze(x, axis=0)


def f_method_squeeze(x):
    return x.squeeze(2)


def f_atleast_1d(x):
    return np.atleast_1d(x)


def f_atleast_2d(x):
    return np.atleast_2d(x)


def f_atleast_3d(x):
    return np.atleast_3d(x)


def f_atleast_3d_scalar(x):
    return np.atleast_3d(x * 2.0)


def f_atleast_2d_many(x, y):
    a, b = np.atleast_2d(x, y)
    return a * 2.0 + b


def f_broadcast_to(x):
    return np.broadcast_to(x, (2, 3, 4))


def f_tile(x):
    return np.tile(x, 2)


def f_tile_more(x):
    return np.tile(x, (2, 1, 3))


def f_repeat(x):
    return np.repeat(x, 3)


def f_repeat_axis(x):
    return np.repeat(x, [1, 0, 2], axis=1)


def f_method_repeat(x):
    return x.repeat(2, axis=0)


def f_flip(x):
    return np.flip(x)


def f_flip_axis(x):
    return np.flip(x, axis=(0, 2))


def f_fliplr(x):
    return np.fliplr(x)


def f_flipud(x):
    return np.flipud(x)


def f_roll(x):
    return np.roll(x, 2)


def f_roll_axes(x):
    return np.roll(x, (1, -2), axis=(0, 1))


def f_rot90(x):
    return np.rot90(x)


def f_rot90_k(x):
    return np.rot90(x, 3, axes=(1, 2))


def f_diag_build(x):
    return np.diag(x)


def f_diag_build_k(x):
    return np.diag(x, -2)


def f_diag_extract(x):
    return np.diag(x)


def f_diag_extract_k(x):
    return np.diag(x, k=1)


def f_diagonal(x):
    return np.diagonal(x)


def f_diagonal_axes(x):
    return np.diagonal(x, 1, 2, 0)


def f_method_diagonal(x):
    return x.diagonal(-1)


def f_tril(x):
    return np.tril(x)


def f_tril_k(x):
    return np.tril(x, -1)


def f_tril_vector(x):
    return np.tril(x, 1)


def f_triu(x):
    return np.triu(x, 1)


def f_pad(x):
    return np.pad(x, 2)


def f_pad_widths(x):
    return np.pad(x, ((1, 0), (2, 3)), constant_values=1.5)


def f_pad_value(x, c):
    return np.pad(x, ((1, 2), (0, 1)), constant_values=c)


def f_pad_pairs(x, c):
    return np.pad(x, 1, constant_values=c)


def f_pad_edge(x):
    return np.pad(x, ((2, 1), (1, 3)), mode="edge")


def f_pad_reflect(x):
    return np.pad(x, (3, 2), mode="reflect")


def f_pad_symmetric(x):
    return np.pad(x, ((1, 2), (2, 1)), mode="symmetric")


def f_pad_wrap(x):
    return np.pad(x, 4, mode="wrap")


def f_take(x):
    return np.take(x, [0, 2, 2, -1])


def f_take_axis(x):
    return np.take(x, np.array([[1, 0], [1, 1]]), axis=1)


def f_take_wrap(x):
    return np.take(x, [5, -7, 1], axis=0, mode="wrap")


def f_take_clip(x):
    return np.take(x, [9, -3, 1], mode="clip")


def f_method_take(x):
    return x.take([2, 0], axis=-1)


def f_sort(x):
    return np.sort(x)


def f_sort_axis(x):
    return np.sort(x, axis=0)


def f_sort_none(x):
    return np.sort(x, axis=None)


def f_partition(x):
    return np.partition(x, 2)


def f_partition_axis(x):
    return np.partition(x, (0, 3), axis=0)


def f_partition_none(x):
    return np.partition(x, 5, axis=None)


def f_concatenate(x, y):
    return np.concatenate([x, y])


def f_concatenate_axis(x, y):
    return np.concatenate((x, y, x), axis=-1)


def f_concatenate_none(x, y):
    return np.concatenate([x, y], axis=None)


def f_stack(x, y):
    return np.stack([x, y])


def f_stack_axis(x, y):
    return np.stack([x, y, x], axis=-1)


def f_vstack(x, y):
    return np.vstack([x, y])


def f_vstack_vectors(x, y):
    return np.vstack((x, y))


def f_hstack(x, y):
    return np.hstack([x, y])


def f_hstack_vectors(x, y):
    return np.hstack([x, y, x])


def f_dstack(x, y):
    return np.dstack([x, y])


def f_column_stack(x, y):
    return np.column_stack([x, y])


def f_column_stack_mixed(x, y):
    return np.column_stack((x, y))


def f_split(x):
    a, b, c = np.split(x, 3)
    return a * 1.0 + b * 2.0 - c


def f_split_indices(x):
    parts = np.split(x, [1, 3], axis=1)
    return np.sum(parts[0]) + np.sum(parts[2] ** 2)


def f_split_one(x):
    a, b = np.split(x, 2, axis=-1)
    return np.sin(b)


def f_array_split(x):
    a, b, c = np.array_split(x, 3)
    return np.sum(a) * 2.0 + np.sum(c ** 2)


def f_hsplit(x):
    a, b = np.hsplit(x, 2)
    return a - 2.0 * b


def f_vsplit(x):
    a, b = np.vsplit(x, [1])
    return np.sum(a) + np.sum(b ** 2)


def f_dsplit(x):
    a, b = np.dsplit(x, 2)
    return a * b


def f_array_list(x, y):
    return np.array([x, y]) ** 2


def f_array_scalars(x, y):
    z = x * y
    return np.array([[x, 2.0], [z, y]])


def f_array_copy(x):
    return np.array(x) * 2.0


def f_array_ndmin(x):
    return np.array(x, ndmin=3)


def f_array_int(x):
    return np.sum(np.array(x, dtype=int)) + np.sum(x)


def f_asarray(x, y):
    return np.asarray([x, y, x * y])


def f_asarray_float32(x):
    return np.asarray(x, dtype=np.float32) * 1.0


def f_copy(x):
    y = np.copy(x)
    return y * x


def f_method_copy(x):
    return x.copy() ** 2


def f_astype(x):
    return x.astype(np.float32) * 2.0


def f_diff(x):
    return np.diff(x)


def f_diff_n(x):
    return np.diff(x, n=2, axis=0)


def f_diff_prepend(x, p):
    return np.diff(x, prepend=p, axis=1)


def f_diff_append(x, p):
    return np.diff(x, 2, axis=0, append=p)


def f_diff_both(x, p, q):
    return np.diff(x, prepend=p, append=q)


VJP_CASES = [
    ("reshape", f_reshape, [R(3, 4)]),
    ("reshape-F", f_reshape_f, [R(3, 4)]),
    ("reshape-F-of-F-array", f_reshape_f, [np.asfortranarray(R(3, 4))]),
    ("ndarray.reshape", f_method_reshape, [R(3, 4)]),
    ("ndarray.reshape-tuple", f_method_reshape_tuple, [R(3, 4)]),
    ("ravel", f_ravel, [R(2, 3, 4)]),
    ("ravel-F", f_ravel_f, [R(3, 4)]),
    ("ravel-K", f_ravel_k, [R(3, 4)]),
    ("flatten", f_flatten, [R(3, 4)]),
    ("flatten-F", f_flatten_f, [R(2, 3, 2)]),
    ("transpose", f_transpose, [R(2, 3, 4)]),
    ("transpose-axes", f_transpose_axes, [R(2, 3, 4)]),
    ("transpose-negative-axes", f_transpose_negative, [R(2, 3, 4)]),
    ("ndarray.transpose", f_method_transpose, [R(2, 3, 4)]),
    ("ndarray.transpose-tuple", f_method_transpose_tuple, [R(2, 3, 4)]),
    ("ndarray.transpose-none", f_method_transpose_none, [R(2, 3, 4)]),
    (".T", f_attribute_t, [R(3, 4)]),
    ("swapaxes", f_swapaxes, [R(2, 3, 4)]),
    *([(".mT", f_attribute_mt, [R(2, 3, 4)]), ("matrix_transpose", f_matrix_transpose, [R(2, 3, 3)])]
      if hasattr(np, "matrix_transpose") else []),
    ("ndarray.swapaxes", f_method_swapaxes, [R(2, 3, 4)]),
    ("moveaxis", f_moveaxis, [R(2, 3, 4)]),
    ("moveaxis-many", f_moveaxis_many, [R(2, 3, 4)]),
    ("rollaxis", f_rollaxis, [R(2, 3, 4)]),
    ("rollaxis-start", f_rollaxis_start, [R(2, 3, 4)]),
    ("rollaxis-end", f_rollaxis_end, [R(2, 3, 4)]),
    ("expand_dims", f_expand_dims, [R(3, 4)]),
    ("expand_dims-many", f_expand_dims_many, [R(3, 4)]),
    ("squeeze", f_squeeze, [R(1, 3, 1)]),
    ("squeeze-axis", f_squeeze_axis, [R(1, 3, 1)]),
    ("ndarray.squeeze", f_method_squeeze, [R(2, 3, 1)]),
    ("atleast_1d", f_atleast_1d, [1.5]),
    ("atleast_2d", f_atleast_2d, [R(3)]),
    ("atleast_3d", f_atleast_3d, [R(2, 3)]),
    ("atleast_3d-scalar", f_atleast_3d_scalar, [0.7]),
    ("atleast_2d-several", f_atleast_2d_many, [R(3), R(2, 3)]),
    ("broadcast_to", f_broadcast_to, [R(3, 1)]),
    ("tile", f_tile, [R(3)]),
    ("tile-more-reps", f_tile_more, [R(2, 3)]),
    ("tile-2d", f_tile, [R(2, 3)]),
    ("repeat", f_repeat, [R(2, 3)]),
    ("repeat-axis-counts", f_repeat_axis, [R(2, 3)]),
    ("ndarray.repeat", f_method_repeat, [R(2, 3)]),
    ("flip", f_flip, [R(2, 3)]),
    ("flip-axes", f_flip_axis, [R(2, 3, 4)]),
    ("fliplr", f_fliplr, [R(2, 3)]),
    ("flipud", f_flipud, [R(2, 3)]),
    ("roll", f_roll, [R(2, 3)]),
    ("roll-axes", f_roll_axes, [R(3, 4)]),
    ("rot90", f_rot90, [R(2, 3)]),
    ("rot90-k-axes", f_rot90_k, [R(2, 3, 4)]),
    ("diag-vector", f_diag_build, [R(3)]),
    ("diag-vector-k", f_diag_build_k, [R(3)]),
    ("diag-matrix", f_diag_extract, [R(3, 4)]),
    ("diag-matrix-k", f_diag_extract_k, [R(4, 3)]),
    ("diagonal", f_diagonal, [R(3, 4)]),
    ("diagonal-axes", f_diagonal_axes, [R(3, 2, 4)]),
    ("ndarray.diagonal", f_method_diagonal, [R(4, 3)]),
    ("tril", f_tril, [R(3, 4)]),
    ("tril-batched", f_tril_k, [R(2, 3, 3)]),
    ("tril-vector", f_tril_vector, [R(3)]),
    ("triu", f_triu, [R(4, 3)]),
    ("pad", f_pad, [R(3)]),
    ("pad-widths", f_pad_widths, [R(2, 3)]),
    ("pad-constant-scalar", f_pad_value, [R(2, 3), 0.3]),
    ("pad-constant-pairs", f_pad_value, [R(2, 3), R(2, 2)]),
    ("pad-constant-before-after", f_pad_pairs, [R(2, 3), R(2)]),
    ("pad-edge", f_pad_edge, [R(2, 3)]),
    ("pad-reflect", f_pad_reflect, [R(4)]),
    ("pad-symmetric", f_pad_symmetric, [R(3, 3)]),
    ("pad-wrap", f_pad_wrap, [R(3)]),
    ("take", f_take, [R(2, 3)]),
    ("take-axis", f_take_axis, [R(2, 3, 2)]),
    ("take-wrap", f_take_wrap, [R(3, 2)]),
    ("take-clip", f_take_clip, [R(2, 3)]),
    ("ndarray.take", f_method_take, [R(2, 3)]),
    ("sort", f_sort, [R(3, 5)]),
    ("sort-axis", f_sort_axis, [R(3, 5)]),
    ("sort-flat", f_sort_none, [R(3, 5)]),
    ("partition", f_partition, [R(3, 5)]),
    ("partition-axis", f_partition_axis, [R(5, 2)]),
    ("partition-flat", f_partition_none, [R(3, 4)]),
    ("concatenate", f_concatenate, [R(2, 3), R(1, 3)]),
    ("concatenate-axis", f_concatenate_axis, [R(2, 3), R(2, 1)]),
    ("concatenate-flat", f_concatenate_none, [R(2, 3), R(4)]),
    ("stack", f_stack, [R(2, 3), R(2, 3)]),
    ("stack-axis", f_stack_axis, [R(2, 3), R(2, 3)]),
    ("vstack", f_vstack, [R(2, 3), R(1, 3)]),
    ("vstack-vectors", f_vstack_vectors, [R(3), R(3)]),
    ("hstack", f_hstack, [R(2, 3), R(2, 1)]),
    ("hstack-vectors", f_hstack_vectors, [R(3), R(2)]),
    ("dstack", f_dstack, [R(2, 3), R(2, 3, 2)]),
    ("column_stack", f_column_stack, [R(3), R(3)]),
    ("column_stack-mixed", f_column_stack_mixed, [R(3, 2), R(3)]),
    ("split", f_split, [R(6, 2)]),
    ("split-indices", f_split_indices, [R(2, 5)]),
    ("split-one-part-used", f_split_one, [R(3, 4)]),
    ("array_split", f_array_split, [R(7)]),
    ("hsplit", f_hsplit, [R(3, 4)]),
    ("vsplit", f_vsplit, [R(3, 4)]),
    ("dsplit", f_dsplit, [R(2, 1, 4)]),
    ("array-of-arrays", f_array_list, [R(3), R(3)]),
    ("array-of-scalars", f_array_scalars, [0.5, -1.5]),
    ("array-copy", f_array_copy, [R(2, 3)]),
    ("array-ndmin", f_array_ndmin, [R(3)]),
    ("array-int-dtype", f_array_int, [R(3) * 5]),
    ("asarray-list", f_asarray, [R(2), R(2)]),
    ("asarray-float32", f_asarray_float32, [R(3)]),
    ("copy", f_copy, [R(3)]),
    ("ndarray.copy", f_method_copy, [R(3)]),
    ("astype", f_astype, [R(3)]),
    ("diff", f_diff, [R(5)]),
    ("diff-n-axis", f_diff_n, [R(5, 3)]),
    ("diff-prepend-scalar", f_diff_prepend, [R(2, 4), 0.4]),
    ("diff-append-array", f_diff_append, [R(4, 3), R(2, 3)]),
    ("diff-prepend-append", f_diff_both, [R(5), R(2), 1.5]),
]


FLOAT32_RESULTS = {"asarray-float32", "astype"}  # finite differences need a larger step


@pytest.mark.parametrize("name, fun, args", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_vjp(name, fun, args):
    if name in FLOAT32_RESULTS:
        check_grads(fun, args, wrt=wrt_all(args), eps=1e-3, rtol=1e-3, atol=1e-5)
    else:
        check_grads(fun, args, wrt=wrt_all(args))


#: several jvp statements add into one tuple-valued tangent (see the report on forward.py)
TUPLE_TANGENT_SUMS = {"atleast_2d-several"}


@pytest.mark.parametrize("name, fun, args", [c for c in VJP_CASES if c[0] not in TUPLE_TANGENT_SUMS],
                         ids=[c[0] for c in VJP_CASES if c[0] not in TUPLE_TANGENT_SUMS])
def test_forward_mode(name, fun, args):
    if name in FLOAT32_RESULTS:
        check_jvp(fun, args, wrt_all(args), eps=1e-3, rtol=1e-3, atol=1e-5)
    else:
        check_jvp(fun, args, wrt_all(args))


def test_forward_mode_adds_the_tangents_of_a_tuple_result():
    """``np.atleast_2d(x, y)`` gets one tangent statement per argument, each a tuple."""
    check_jvp(f_atleast_2d_many, [R(3), R(2, 3)], (0, 1))


def test_array_int_dtype_has_no_gradient_through_the_cast():
    x = R(3) * 5
    grad = check_grads(f_array_int, [x], wrt=0, v=1.0)
    assert np.array_equal(grad, np.ones(3))


def test_pad_unsupported_mode_is_an_error():
    def f(x):
        return np.pad(x, 2, mode="empty")  # (its padding is whatever memory held)

    with pytest.raises(srcad.UnsupportedCaseError, match="mode='empty'"):
        srcad.adjoint(f)(R(3), np.ones(7))


def test_sort_with_ties_gives_a_valid_subgradient():
    def f(x):
        return np.sort(x) * np.arange(4.0)

    grad = check_grads(f, [np.array([1.0, 0.0, 1.0, -2.0])], wrt=0, v=np.ones(4), directions=0)
    assert sorted(grad) == [0.0, 1.0, 2.0, 3.0]


def f32_reshape_sort(x):
    return np.sort(np.reshape(x, (3, 2)), axis=0) * np.float32(2)


def f32_pad_take(x):
    return np.take(np.pad(x, 1, mode="edge"), [0, 3, 3])


def f32_stack_split(x, y):
    a, b = np.split(np.stack([x, y]), 2)
    return np.tile(a, (2, 1)) + np.flip(b)


@pytest.mark.parametrize("fun, args", [
    (f32_reshape_sort, [R(6)]),
    (f32_pad_take, [R(3)]),
    (f32_stack_split, [R(3), R(3)]),
], ids=["reshape-sort", "pad-take", "stack-split"])
def test_float32_gradients_stay_float32(fun, args):
    args = [a.astype(np.float32) for a in args]
    grads = check_grads(fun, args, wrt=wrt_all(args), eps=1e-3, rtol=2e-3, atol=1e-4)
    for g in (grads if isinstance(grads, tuple) else (grads,)):
        assert g.dtype == np.float32


# ---- forward rules ---------------------------------------------------------------------------

JVP_CASES = [
    (np.reshape, [R(3, 4), (2, 6)], {}, (0,)),
    (np.reshape, [R(3, 4), (4, 3)], {"order": "F"}, (0,)),
    (np.ndarray.reshape, [R(3, 4), 2, 6], {"order": "F"}, (0,)),
    (np.ravel, [R(2, 3)], {"order": "F"}, (0,)),
    (np.ndarray.flatten, [R(2, 3)], {}, (0,)),
    (np.transpose, [R(2, 3, 4), (-1, 0, 1)], {}, (0,)),
    (np.ndarray.transpose, [R(2, 3, 4), 1, 2, 0], {}, (0,)),
    (np.ndarray.transpose, [R(2, 3, 4)], {}, (0,)),
    (np.swapaxes, [R(2, 3, 4), 0, -1], {}, (0,)),
    (np.moveaxis, [R(2, 3, 4), 0, 2], {}, (0,)),
    (np.rollaxis, [R(2, 3, 4), 2, 1], {}, (0,)),
    (np.expand_dims, [R(3), (0, 2)], {}, (0,)),
    (np.squeeze, [R(1, 3, 1)], {"axis": 2}, (0,)),
    (np.atleast_2d, [R(3)], {}, (0,)),
    (np.atleast_3d, [R(3), R(2, 2)], {}, (0, 1)),
    (np.atleast_1d, [0.5, R(2)], {}, (1,)),
    (np.broadcast_to, [R(3, 1), (2, 3, 4)], {}, (0,)),
    (np.tile, [R(2, 3), (2, 1, 2)], {}, (0,)),
    (np.repeat, [R(2, 3), [2, 0, 1]], {"axis": 1}, (0,)),
    (np.flip, [R(2, 3)], {"axis": 1}, (0,)),
    (np.fliplr, [R(2, 3)], {}, (0,)),
    (np.flipud, [R(2, 3)], {}, (0,)),
    (np.roll, [R(3, 4), (1, 2)], {"axis": (0, 1)}, (0,)),
    (np.rot90, [R(2, 3)], {"k": -1}, (0,)),
    (np.diag, [R(3)], {"k": 1}, (0,)),
    (np.diag, [R(3, 4)], {"k": -1}, (0,)),
    (np.diagonal, [R(3, 2, 4), 1, 0, 2], {}, (0,)),
    (np.tril, [R(3, 4)], {"k": 1}, (0,)),
    (np.triu, [R(2, 3, 3)], {}, (0,)),
    (np.pad, [R(2, 3), ((1, 0), (2, 1))], {"constant_values": 0.5}, (0,)),
    (np.pad, [R(2, 3), 1], {"constant_values": R(2, 2)}, (0,)),
    (np.pad, [R(2, 3), 2], {"mode": "reflect"}, (0,)),
    (np.pad, [R(4), (1, 3)], {"mode": "wrap"}, (0,)),
    (np.take, [R(3, 4), [2, 0, 2]], {"axis": 1}, (0,)),
    (np.take, [R(3, 4), [13, -1]], {"mode": "wrap"}, (0,)),
    (np.sort, [R(3, 4)], {"axis": 0}, (0,)),
    (np.sort, [R(3, 4)], {"axis": None}, (0,)),
    (np.partition, [R(3, 5), 2], {}, (0,)),
    (np.concatenate, [[R(2, 3), R(1, 3)]], {}, (0,)),
    (np.concatenate, [[R(2, 3), R(2)]], {"axis": None}, (0,)),
    (np.stack, [[R(2, 3), R(2, 3)]], {"axis": 1}, (0,)),
    (np.vstack, [[R(3), R(2, 3)]], {}, (0,)),
    (np.hstack, [[R(2), R(3)]], {}, (0,)),
    (np.dstack, [[R(2, 3), R(2, 3)]], {}, (0,)),
    (np.column_stack, [[R(3), R(3, 2)]], {}, (0,)),
    (np.split, [R(6, 2), 3], {}, (0,)),
    (np.array_split, [R(2, 5), 2], {"axis": 1}, (0,)),
    (np.hsplit, [R(3, 4), [1]], {}, (0,)),
    (np.vsplit, [R(4, 3), 2], {}, (0,)),
    (np.dsplit, [R(1, 2, 4), 2], {}, (0,)),
    (np.array, [[R(2), R(2)]], {}, (0,)),
    (np.array, [R(3)], {"ndmin": 2}, (0,)),
    (np.asarray, [R(3)], {"dtype": np.float32}, (0,)),
    (np.copy, [R(3)], {}, (0,)),
    (np.ndarray.astype, [R(3), np.float32], {}, (0,)),
    (np.diff, [R(5, 3)], {"n": 2, "axis": 0}, (0,)),
    (np.diff, [R(5)], {"prepend": R(2), "append": 0.3}, (0, "prepend", "append")),
    (np.diff, [R(3, 4)], {"prepend": 0.3, "axis": 0}, ("prepend",)),
]


def _jvp_id(case):
    function, args, kwargs, _ = case
    return registry.describe(function).replace("numpy.", "") + "".join(f"-{k}" for k in kwargs)


@pytest.mark.parametrize("function, args, kwargs, wrt", JVP_CASES, ids=[_jvp_id(c) for c in JVP_CASES])
def test_jvp(function, args, kwargs, wrt):
    if kwargs.get("dtype") is np.float32 or any(a is np.float32 for a in args):
        check_call_jvp(function, args, wrt, kwargs, eps=1e-3, rtol=1e-3, atol=1e-5)
    else:
        check_call_jvp(function, args, wrt, kwargs)


def test_jvp_of_a_list_item_without_tangent_uses_zeros():
    x, y = R(2, 3), R(2, 3)
    got = jvp_of(np.stack, [[x, y]], {}, {0: [None, np.ones((2, 3))]})
    assert np.array_equal(got, np.stack([np.zeros((2, 3)), np.ones((2, 3))]))


def test_diff_with_keyword_prepend():
    def f(x, p):
        return np.diff(x, prepend=p) * np.arange(4.0)

    check_grads(f, [R(4), R(1)], wrt=(0, 1))


def test_array_of_a_nested_list_jvp():
    x, y = 0.5, R(2)
    check_call_jvp(np.array, [[[x, 1.0], list(y)]], (0,))


# ---- every reverse rule of the module has a forward rule ------------------------------------

MODULES = ("srcad.rules.numpy_shapes", "srcad.rules.numpy_reordering", "srcad.rules.numpy_indexing", "srcad.rules.numpy_joining",
           "srcad.rules.numpy_products", "srcad.rules.numpy_linalg", "srcad.rules.numpy_decompositions",
           "srcad.rules.numpy_spectral", "srcad.rules.scipy_special")


def test_every_vjp_of_these_modules_has_a_jvp():
    keys = [key for key, rule in registry.VJP.items() if rule.fn.__module__ in MODULES]
    assert len(keys) > 70
    missing = [registry.describe(k) for k in keys if registry.lookup(registry.JVP, k) is None]
    assert not missing, f"vjp without jvp: {missing}"
    jvp_keys = [k for k, rule in registry.JVP.items() if rule.fn.__module__ in MODULES]
    no_vjp = [registry.describe(k) for k in jvp_keys if registry.lookup(registry.VJP, k) is None]
    assert not no_vjp, f"jvp without vjp: {no_vjp}"
    for key in jvp_keys:
        assert registry.JVP[key].globals is not None  # every name the template uses resolves
