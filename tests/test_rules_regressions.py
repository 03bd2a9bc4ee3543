"""Issue 9 regressions in the rules, each checked against finite differences in every mode
that applies: joint adjoint and vjp pullback (``check_grads``), jvp (``check_jvp``), and
second order — forward over reverse (``srcad.hvp`` against differences of ``srcad.grad``) and
reverse over reverse (the gradient of a function that calls ``srcad.grad``)."""
import linecache
import itertools
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(9)


def R(*shape):
    return RNG.standard_normal(shape)


def check_all_modes(fun, args, **tolerances):
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    check_grads(fun, args, wrt=wrt, **tolerances, modes=("rev",))
    check_jvp(fun, args, wrt=wrt, **tolerances)


_PENALTIES = itertools.count()


def gradient_penalty(fun, weights):
    """``x -> sum(grad(fun)(x) * weights)`` as source srcad reads: its gradient is reverse over
    reverse (H @ weights)."""
    text = "def penalty(x):\n    g = srcad.grad(fun)(x)\n    return np.sum(g * weights)\n"
    filename = f"<gradient penalty {next(_PENALTIES)} of {fun.__name__}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"srcad": srcad, "np": np, "fun": fun, "weights": weights}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["penalty"]


def check_second_order(fun, x, eps=1e-5, rtol=1e-5, atol=1e-7, reverse_over_reverse=True):
    """H·u by forward over reverse and by reverse over reverse, against central differences of
    the gradient in a random direction u."""
    u = RNG.standard_normal(np.shape(x))
    gradient = srcad.grad(fun)
    numeric = (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(fun)(x, u), numeric, rtol=rtol, atol=atol,
                               err_msg=f"forward over reverse of {fun.__name__}")
    if reverse_over_reverse:
        np.testing.assert_allclose(srcad.grad(gradient_penalty(fun, u))(x), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"reverse over reverse of {fun.__name__}")


# ---- np.split with unsorted or negative indices: empty and overlapping pieces ---------------

def split_unsorted(x):
    a, b, c = np.split(x, [2, 1])  # b is empty, c overlaps a
    return np.sum(a) + np.sum(b) * 2 + np.sum(c ** 2)


def split_negative(x):
    a, b, c = np.split(x, [-1, 1], axis=1)
    return np.sum(a * a) + np.sum(b) + np.sum(np.sin(c))


def array_split_unsorted(x):
    pieces = np.array_split(x, [3, 1, 4])
    return np.sum(pieces[0] ** 2) + np.sum(pieces[2] * 3.0) + np.sum(pieces[3] ** 3)


def hsplit_unsorted(x):
    a, b, c = np.hsplit(x, [3, 1])
    return np.sum(a ** 2) + np.sum(c ** 3)


def vsplit_unsorted(x):
    a, b, c = np.vsplit(x, [2, 1])
    return np.sum(a ** 2) + np.sum(c ** 3)


def dsplit_unsorted(x):
    a, b, c = np.dsplit(x, [2, 1])
    return np.sum(a ** 2) + np.sum(c ** 3)


def array_split_uneven(x):
    a, b, c = np.array_split(x, 3, axis=0)
    return np.sum(a ** 2) + np.sum(b * 2.0) + np.sum(c ** 3)


@pytest.mark.parametrize("fun, shape", [
    (split_unsorted, (4,)),
    (split_negative, (2, 4)),
    (array_split_unsorted, (6,)),
    (hsplit_unsorted, (2, 4)),
    (vsplit_unsorted, (4, 2)),
    (dsplit_unsorted, (1, 2, 4)),
    (array_split_uneven, (7, 2)),
], ids=lambda p: getattr(p, "__name__", ""))
def test_split_with_empty_and_overlapping_pieces(fun, shape):
    x = R(*shape)
    check_all_modes(fun, (x,))
    check_second_order(fun, x)


# ---- second order through the rules' own helpers (np.repeat's Hessian was zero) --------------

IDX = np.array([0, 2, 2, 1])


def repeat_axis0(x):
    return np.sum(np.repeat(x, 2, axis=0) ** 3)


def repeat_counts(x):
    return np.sum(np.repeat(x, [1, 2, 0], axis=1) ** 3)


def repeat_flat(x):
    return np.sum(np.repeat(x, 2) ** 3)


def tile_(x):
    return np.sum(np.tile(x, (2, 1)) ** 3)


def vstack_(x):
    return np.sum(np.vstack([x, x ** 2]) ** 3)


def hstack_(x):
    return np.sum(np.hstack([x, np.sin(x)]) ** 3)


def column_stack_(x):
    return np.sum(np.column_stack([x[0], x]) ** 3)


def kron_(x):
    return np.sum(np.kron(x, x ** 2) ** 2)


def cross_(x):
    return np.sum(np.cross(x, x ** 2 + 1.0) ** 2)


def cross_2d(x):
    return np.sum(np.cross(x[:, :2], x[:, 1:] * 2.0) ** 2)


def _numpy_crosses_2d():
    """NumPy 2.0 deprecated ``np.cross`` of 2-vectors and 2.5 removed it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
        except ValueError:
            return False
    return True


def sort_(x):
    return np.sum(np.sort(x, axis=1) ** 3 * np.arange(3.0))


def partition_flat(x):
    return np.sum(np.partition(x, 4, axis=None) ** 3 * np.arange(9.0))


def diff_(x):
    return np.sum(np.diff(x, axis=1) ** 3)


def diff_prepend(x):
    return np.sum(np.diff(x, n=2, prepend=x[0, 0] ** 2) ** 3)


def max_axis(x):
    return np.sum(np.max(x ** 3, axis=1) ** 2)


def prod_axis(x):
    return np.sum(np.prod(x, axis=0) ** 2)


def array_of_scalars(x):
    return np.sum(np.array([x[0, 0] ** 2, x[1, 1] * x[0, 1], 3.0]) ** 3)


def array_nested(x):
    return np.sum(np.array([[x[0, 0], x[1, 2]], [x[2, 1] ** 2, 1.0]]) ** 3)


def fancy_read(x):
    return np.sum(x[IDX % 3][:, [0, 2, 2]] ** 3)


def pad_reflect(x):
    return np.sum(np.pad(x, 1, mode="reflect") ** 3)


@pytest.mark.parametrize("fun", [
    repeat_axis0, repeat_counts, repeat_flat, tile_, vstack_, hstack_, column_stack_, kron_, cross_,
    pytest.param(cross_2d, marks=pytest.mark.skipif(not _numpy_crosses_2d(), reason="this NumPy has no 2-d np.cross")),
    sort_, partition_flat, diff_, diff_prepend, max_axis, prod_axis, array_of_scalars, fancy_read, pad_reflect,
], ids=lambda f: f.__name__)
def test_second_order_through_rule_helpers(fun):
    check_second_order(fun, R(3, 3))


def test_second_order_through_a_nested_array_forward_over_reverse():
    """Reverse over reverse is not checked here: the adjoint code reads rows of the nested list
    ``array_grad`` returns (``dG[1] += dB``), and the reverse pass treats a list a call returned
    as an array (reported to the reverse pass; ``array_tangent`` now fails loudly on it)."""
    check_second_order(array_nested, R(3, 3), reverse_over_reverse=False)


# ---- np.linspace with differentiated endpoints (was silently zero) --------------------------

def linspace_endpoints(x):
    return np.sum(np.linspace(x[0], x[1], 5) ** 2)


def linspace_arrays(x):
    return np.sum(np.sin(np.linspace(x[0], x[1:], 4, axis=-1)) * np.arange(8.0).reshape(2, 4))


def linspace_no_endpoint(x):
    return np.sum(np.linspace(x[:2], 2.0, 3, endpoint=False, axis=0) ** 3)


def linspace_single(x):
    return np.sum(np.linspace(x[0], x[2], 1) ** 2)


@pytest.mark.parametrize("fun", [linspace_endpoints, linspace_arrays, linspace_no_endpoint, linspace_single],
                         ids=lambda f: f.__name__)
def test_linspace_endpoints(fun):
    x = R(3)
    check_all_modes(fun, (x,))
    check_second_order(fun, x)


def linspace_with_step(x):
    samples, step = np.linspace(x[0], x[1], 5, retstep=True)
    return np.sum(samples) * step


def test_linspace_retstep_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="np.linspace with retstep=True"):
        srcad.grad(linspace_with_step)(R(2))


# ---- functions with a derivative srcad does not compute are refused, not zero ---------------

def logspace_(x):
    return np.sum(np.logspace(x[0], x[1], 4))


def arange_(x):
    return np.sum(np.arange(x[0], 3.0, 0.5) ** 2)


def unique_(x):
    return np.sum(np.unique(x) ** 2)


def histogram_weights(x):
    h, edges = np.histogram(np.arange(3.0), bins=3, weights=x)
    return np.sum(h ** 2)


def heaviside_at_zero(x):
    return np.sum(np.heaviside(np.zeros(3), x) * 2.0)


def sorted_(x):
    s = sorted(x)
    return s[0] * 2.0 + s[2]


def divmod_(x):
    q, r = divmod(x[0], 0.3)
    return r * 2.0


def zip_list(x):
    pairs = list(zip(x, x ** 2))
    return pairs[0][0] * pairs[1][1]


def normal_(x):
    return np.sum(np.random.normal(x, 1.0))


@pytest.mark.parametrize("fun, what", [
    (logspace_, "np.logspace in its start"), (arange_, "np.arange in a float argument"),
    (unique_, "np.unique"), (histogram_weights, "np.histogram"),
    (heaviside_at_zero, "np.heaviside in its second argument"), (sorted_, "sorted"), (divmod_, "divmod"),
    (normal_, "np.random.normal in its loc"),
], ids=lambda p: getattr(p, "__name__", ""))
def test_a_derivative_srcad_lacks_is_refused_in_both_modes(fun, what):
    x = np.abs(R(3)) + 0.2
    for run in (lambda: srcad.grad(fun)(x), lambda: srcad.jvp(fun, (x,), (np.ones(3),))):
        with pytest.raises(srcad.SrcadSyntaxError, match=f"srcad does not differentiate {what}") as caught:
            run()
        assert caught.value.filename == __file__  # names the user's file and line


def test_a_list_of_zip_is_differentiated():
    # once refused ("zip"); list(zip(...)) is now the list of its tuples (issue 10)
    x = np.abs(R(3)) + 0.2
    check_grads(zip_list, (x,), modes=("rev",))
    check_jvp(zip_list, (x,))


def arange_of_a_count(x):
    return np.sum(x * np.arange(3)) + np.sum(np.unique(np.array([2.0, 1.0, 2.0])) * x[0])


def test_constant_arguments_still_pass_through():
    check_all_modes(arange_of_a_count, (R(3),))


# ---- np.r_[...] and np.c_[...]: index tricks whose key holds the data (was silently zero) ----

def r_arrays(x):
    return np.sum(np.r_[x, x * 2] ** 2)


def r_scalars(x):
    return np.sum(np.r_[x[0], 1.5, x[1:] ** 2, x[2]] ** 3)


def c_columns(x):
    return np.sum(np.c_[x, np.sin(x), x ** 2] ** 3 * np.arange(9.0).reshape(3, 3))


def c_matrix(x):
    return np.sum(np.c_[np.outer(x, x), x] ** 2)


@pytest.mark.parametrize("fun", [r_arrays, r_scalars, c_columns, c_matrix], ids=lambda f: f.__name__)
def test_index_trick_concatenation(fun):
    x = R(3)
    check_all_modes(fun, (x,))
    check_second_order(fun, x)


def r_directive(x):
    return np.sum(np.r_["0,2", x, x])


def r_slice_bounds(x):
    return np.sum(np.r_[0.0:x[0]:5j] ** 2)


def mgrid_constant(x):
    grid = np.mgrid[0:3, 0:2]
    return np.sum(grid[0] * x[0]) + np.sum(np.ogrid[0:3][0] * x)


def test_index_trick_directives_are_refused():
    with pytest.raises(srcad.UnsupportedCaseError, match="no directive strings or slices"):
        srcad.grad(r_directive)(R(3))


def test_index_trick_slice_with_differentiated_bounds_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="a slice with differentiated bounds") as caught:
        srcad.grad(r_slice_bounds)(R(3))
    assert caught.value.filename == __file__


def test_index_tricks_with_constant_keys_pass_through():
    check_all_modes(mgrid_constant, (R(3),))


# ---- 0 * inf: an infinite local derivative (sqrt at 0) gives NaN, as in JAX and PyTorch ------

def nbody_in_place(x):
    diff = x[:, None] - x[None, :]
    r = np.sqrt(diff ** 2)  # the diagonal is identically 0
    r[r > 0] = 1 / r[r > 0]
    return np.sum(r)


def nbody_double_where(x):
    diff = x[:, None] - x[None, :]
    r2 = diff ** 2
    safe = np.where(r2 > 0, r2, 1.0)  # the documented recipe: never evaluate sqrt's slope at 0
    return np.sum(np.where(r2 > 0, 1 / np.sqrt(safe), 0.0))


def test_infinite_local_derivative_gives_nan_not_a_plausible_number():
    """The diagonal distance sqrt((x_i - x_i) ** 2) is identically 0, but the chain rule meets
    sqrt's slope 1 / (2 * 0) there, and the IEEE product inf * 0 is NaN. srcad keeps that NaN
    (a loud signal, as JAX and PyTorch give) rather than a where() in every sqrt, power and
    division rule (1.4-1.7x their cost, and 6x for power's zero slope)."""
    x = np.array([0.0, 1.0, 3.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = srcad.grad(nbody_in_place)(x)
    assert np.all(np.isnan(grad))


def test_the_double_where_recipe_gives_the_derivative():
    x = np.array([0.0, 1.0, 3.0])
    check_all_modes(nbody_double_where, (x,))
    check_second_order(nbody_double_where, x)


def take_and_diagonal(x):
    return np.sum(np.take(x, [0, 5, 5, 7]) ** 3) + np.sum(np.diagonal(np.outer(x[0], x[1]), 1) ** 2)


def convolved(x):
    return np.sum(np.convolve(x[0], x[1] ** 2, "same") ** 2)


@pytest.mark.parametrize("fun", [take_and_diagonal, convolved], ids=lambda f: f.__name__)
def test_second_order_through_take_diagonal_convolve(fun):
    check_second_order(fun, R(3, 3))


def median_of_cubes(x):
    return np.median(x ** 3)


def test_a_helper_that_is_not_pure_is_not_read_as_source():
    """srcad's own helpers are read as source only if they compute values without updating
    anything in place; ``median_slope`` updates its arrays, and is a piecewise constant slope:
    listed as having no derivative, so second order through ``np.median`` is exact."""
    from srcad import registry
    from srcad.rules import numpy_reductions

    assert registry.is_nondifferentiable(numpy_reductions.median_slope)
    x, u = R(5), R(5)
    hv = srcad.hvp(median_of_cubes)(x, u)
    gradient = srcad.grad(median_of_cubes)
    numeric = (gradient(x + 1e-6 * u) - gradient(x - 1e-6 * u)) / 2e-6
    np.testing.assert_allclose(hv, numeric, rtol=1e-6, atol=1e-8)


def r_one_item(x):
    return np.sum(np.r_[x ** 2] * np.arange(3.0)) + np.sum(np.c_[x] ** 3)


def test_index_trick_of_one_item():
    x = R(3)
    check_all_modes(r_one_item, (x,))
    check_second_order(r_one_item, x)


def complex_of_two(x):
    return abs(complex(1.0, x))


def test_complex_imaginary_part_is_refused_in_forward_mode():
    """Its jvp used only the real part's tangent (the imaginary part's was dropped)."""
    with pytest.raises(srcad.SrcadSyntaxError, match="complex\\(\\) in its imaginary part"):
        srcad.jvp(complex_of_two, (0.5,), (1.0,))
