"""Rules for NumPy's numerical helpers and np.fft (srcad/rules/numpy_numerical.py,
numpy_fft.py) against finite differences: each row in reverse mode (joint and pullback),
forward mode, with float32 arguments, and second order (hvp in the first argument). FFT
programs are real-in, real-out: complex values stay between the transforms."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp
from library_check import check_first_order, check_float32, check_second_order

RNG = np.random.default_rng(12)


def R(*shape):
    return RNG.standard_normal(shape)


XP = np.linspace(-2.0, 2.0, 6)
COORDS = np.cumsum(RNG.uniform(0.3, 1.0, 5))
COORDS_2D = np.cumsum(RNG.uniform(0.3, 1.0, (4, 5)), axis=1)
H = R(6)
C = R(3, 5)


def f_append(x, m):
    return np.append(x, m)


def f_append_axis(m, n):
    return np.append(m, n, axis=1)


def f_insert(x, v):
    return np.insert(x, 2, v)


def f_insert_rows(m, v):
    return np.insert(m, [0, 2, 2], v, axis=1)


def f_insert_scalar(x, s):
    return np.insert(x, slice(0, 4, 2), s) * x[0]


def f_delete(x):
    return np.delete(x, [1, 3]) ** 2


def f_delete_axis(m):
    return np.delete(m, slice(None, None, 2), axis=0) * m[0, 0]


def f_nanmax(m):
    m = m * 1.0
    m[0, 1] = np.nan
    return np.nanmax(m, axis=1) + np.nanmin(m)


def f_gradient_2d(m):
    rows, cols = np.gradient(m)
    return rows * cols


def f_gradient_spacing_edge2(x):
    return np.gradient(x, 0.3, edge_order=2)


def f_gradient_coordinates(x):
    return np.gradient(x, COORDS)


def f_gradient_axis(m):
    return np.gradient(m, 0.5, axis=1)


def f_interp(x, fp):
    return np.interp(x, XP, fp)


def f_interp_in_knots(xp, x, fp):  # the sample points move (an endogenous grid)
    return np.interp(x, xp, fp)


def f_interp_left_right(x, fp, left):
    return np.interp(x, XP, fp, left=left, right=2.0)


def f_polyval(p, x):
    return np.polyval(p, x)


def f_trapezoid(m):
    return np.trapezoid(m)


def f_trapezoid_x_2d(m, x):
    return np.trapezoid(m, x, axis=1)


def f_trapezoid_x(m, x):
    return np.trapezoid(m, x=x)


def f_trapezoid_dx(m, dx):
    return np.trapezoid(m, dx=dx, axis=0)


def f_cumprod_with_zeros(x):
    return np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0]))


def f_constant_dot(x):
    return C.dot(x)


def f_constant_methods(x):
    return C.T.dot(C.dot(x)) + C.sum(axis=0) * x


def f_power_spectrum(x):
    return np.abs(np.fft.rfft(x)) ** 2


def f_rfft_n_ortho(x):
    return np.abs(np.fft.rfft(x, n=9, norm="ortho"))


def f_irfft_of_rfft(x):
    return np.fft.irfft(np.fft.rfft(x) + np.fft.rfft(x[::-1]), n=6)


def f_irfft_odd(x):
    return np.fft.irfft(np.fft.rfft(x), n=5, norm="forward")


def f_hfft(x):
    return np.fft.hfft(np.fft.rfft(x) + np.fft.fft(x[::-1])[:4])


def f_hfft_odd_ortho(x):
    return np.fft.hfft(np.fft.fft(x)[:4] - np.conj(np.fft.fft(x * x)[1:5]), n=7, norm="ortho")


def f_hfft_axis_forward(x):
    return np.fft.hfft(np.fft.fft(x, axis=0), n=4, axis=0, norm="forward")


def f_hfft_of_real(x):
    return np.fft.hfft(x, n=8)


def f_ihfft(x):
    return np.abs(np.fft.ihfft(x)) ** 2 + np.real(np.fft.ihfft(x * x))


def f_ihfft_n_forward(x):
    return np.imag(np.fft.ihfft(x, n=6, norm="forward"))


def f_ihfft_axis_ortho(x):
    return np.real(np.fft.ihfft(x, axis=0, norm="ortho")) * 2 - np.imag(np.fft.ihfft(x, axis=0, norm="ortho"))


def f_fft_real_imag(x):
    spectrum = np.fft.fft(x, n=8)
    return np.real(spectrum) ** 2 + np.imag(spectrum) * x[0]


def f_ifft_of_fft(x):
    return np.real(np.fft.ifft(np.fft.fft(x) - np.conj(np.fft.fft(x[::-1]))))


def f_fft2_abs(m):
    return np.abs(np.fft.fft2(m, norm="forward"))


def f_ifft2_axes(m):
    return np.abs(np.fft.ifft2(m, s=(3, 6), axes=(1, 0)))


def f_fftn_abs(m):
    return np.abs(np.fft.ifftn(m, s=(5, 7), axes=(0, 1)))


def f_fft_axis(m):
    return np.abs(np.fft.fft(m, axis=0, norm="ortho")) + np.abs(np.fft.ifft(m, n=7, axis=1))[:, :5]


def f_fftshift(x):
    return np.fft.fftshift(x) * x + np.fft.ifftshift(x)

def f_float64_conversions(x):
    total = np.float64(np.sum(x ** 2))
    return total * np.float64(x[0]) + np.float64(x) ** 3


def f_block_kkt(h, a):
    """A KKT matrix [[H, Aᵀ], [A, 0]] from a Hessian block, constraint rows and a scalar zero."""
    return np.block([[h, a.T], [a, np.zeros((2, 2))]])


def f_block_rows(x, m):
    return np.block([x, 0.5, m[0]]) * np.block([m[0], x * x, 1.0])  # 1-D: scalars join as length 1


def f_block_3d(a, b):
    return np.block([[[a, b]], [[b, a]]])


def f_cond(a):
    return np.linalg.cond(a)


def f_cond_minus_2(a):
    return np.linalg.cond(a, -2)


def f_cond_2_stack(a):
    return np.linalg.cond(a, p=2)


FIT_X = np.linspace(-1.0, 1.0, 7) + 0.05 * RNG.standard_normal(7)


def f_polyfit(x, y):
    return np.polyfit(x, y, 3)


def f_polyfit_in_y_columns(y):
    return np.polyfit(FIT_X, y, 2, rcond=1e-10)


def f_eigvals_parts(a):
    """A real matrix with a complex pair: the real parts, the moduli and the imaginary parts."""
    w = np.linalg.eigvals(a)
    return np.real(w) + np.abs(w) * np.imag(w)


def f_eigvals_real_stack(a):
    return np.real(np.linalg.eigvals(a))


OWN = np.random.default_rng(27)  # the draws of later cases: their own generator leaves the others' as they were


def f_ediff1d(x):
    return np.ediff1d(x) ** 2


def f_ediff1d_ends(x, end, begin):
    return np.ediff1d(x, to_end=end, to_begin=begin) ** 2


MASK = OWN.standard_normal((3, 4)) > -0.5
MASK[0] = True  # every column has an entry in the mask
#: entries far apart: float32's finite differences (steps of 1e-2) do not change which is the least
SPREAD = np.array([[0.3, -1.1, 0.6, 0.2], [-0.9, 1.4, -0.5, -1.3], [1.3, 0.1, -0.2, 0.9]])


def f_diagflat(x):
    return np.diagflat(x, 1) * np.diagflat(x[:2] * x[1:3], -1)[:4, :4].sum()


def f_vander(x):
    return np.vander(x, 4) + np.vander(x, increasing=True)


def f_broadcast_arrays(x, m):
    a, b = np.broadcast_arrays(x[:, None], m)
    return a * b


def f_meshgrid(x, y):
    a, b = np.meshgrid(x, y)
    return np.sin(a) * b ** 2


def f_meshgrid_ij_sparse(x, y, z):
    a, b, c = np.meshgrid(x, y, z, indexing="ij", sparse=True)
    g = np.meshgrid(z, x, sparse=True)
    return np.tanh(a + b * c) + np.sum(g[0] * g[1])


def f_meshgrid_one(m):
    (a,) = np.meshgrid(m)  # (raveled)
    return a ** 3


def f_pad_maximum(m):
    return np.pad(m, ((1, 2), (2, 0)), mode="maximum")


def f_pad_minimum_stat_length(m):
    return np.pad(m, 2, mode="minimum", stat_length=2)


def f_pad_mean(m):
    return np.pad(m, ((0, 3), (1, 1)), mode="mean", stat_length=((1, 3), (2, 2)))


def f_pad_median(m):
    return np.pad(m, 2, mode="median") + np.pad(m, 2, mode="median", stat_length=3)


def f_pad_linear_ramp(m):
    return np.pad(m, ((2, 1), (0, 3)), mode="linear_ramp", end_values=((0.5, -1.0), (2.0, 0.0)))


def f_pad_reflect_odd(m):
    return np.pad(m, ((1, 6), (3, 2)), mode="reflect", reflect_type="odd")


def f_pad_symmetric_odd(m):
    return np.pad(m, 5, mode="symmetric", reflect_type="odd")


def f_sum_where_initial(m, c):
    return np.sum(m ** 2, axis=0, initial=c, where=MASK) + np.sum(m, where=MASK)


def f_mean_where(m):
    return np.mean(m ** 2, axis=0, where=MASK) + np.mean(m, where=MASK, keepdims=True)


def f_max_initial(m, c):
    return np.max(m, axis=1, initial=c) - np.min(m[:, 1:], axis=0, initial=c)


def f_max_where(m):
    return np.max(m, where=MASK, initial=-9.0, axis=0, keepdims=True) + np.nanmin(m, where=MASK, initial=9.0)


def f_prod_where_initial(m, c):
    return np.prod(m, axis=1, where=MASK, initial=c) + np.prod(m, initial=c)


CASES = [
    ("ediff1d", f_ediff1d, [OWN.standard_normal((2, 3))]),
    ("ediff1d-to_end-to_begin", f_ediff1d_ends, [OWN.standard_normal(4), OWN.standard_normal(2), 0.7]),
    ("append", f_append, [R(5), R(2, 2)]),
    ("append-axis", f_append_axis, [R(4, 3), R(4, 2)]),
    ("insert", f_insert, [R(5), R(2)]),
    ("insert-axis-broadcast", f_insert_rows, [R(3, 4), R(3, 1)]),
    ("insert-slice-scalar", f_insert_scalar, [R(5), 0.7]),
    ("delete", f_delete, [R(5)]),
    ("delete-axis", f_delete_axis, [R(5, 3)]),
    ("nanmax-nanmin", f_nanmax, [R(3, 4)]),
    ("gradient-2d", f_gradient_2d, [R(4, 5)]),
    ("gradient-spacing-edge_order-2", f_gradient_spacing_edge2, [R(5)]),
    ("gradient-coordinates", f_gradient_coordinates, [R(5)]),
    ("gradient-axis", f_gradient_axis, [R(4, 5)]),
    ("interp", f_interp, [RNG.uniform(-2.8, 2.8, 7), R(6)]),
    ("interp-knots", f_interp_in_knots, [XP + 0.1 * RNG.uniform(-1, 1, 6), RNG.uniform(-2.8, 2.8, 7), R(6)]),
    ("interp-left-right", f_interp_left_right, [np.array([-2.5, -1.1, 0.3, 1.7, 2.6]), R(6), 0.5]),
    ("polyval", f_polyval, [R(4), R(3, 2)]),
    ("trapezoid", f_trapezoid, [R(4, 5)]),
    ("trapezoid-x-2d", f_trapezoid_x_2d, [R(4, 5), COORDS_2D]),
    ("trapezoid-x", f_trapezoid_x, [R(4, 5), COORDS]),
    ("trapezoid-dx", f_trapezoid_dx, [R(4, 5), 0.3]),
    ("cumprod-with-zeros", f_cumprod_with_zeros, [R(6)]),
    ("constant-array-dot", f_constant_dot, [R(5)]),
    ("constant-array-methods", f_constant_methods, [R(5)]),
    ("fft-power-spectrum", f_power_spectrum, [R(6)]),
    ("rfft-n-ortho", f_rfft_n_ortho, [R(6)]),
    ("irfft-of-rfft", f_irfft_of_rfft, [R(6)]),
    ("irfft-odd-forward", f_irfft_odd, [R(5)]),
    ("hfft", f_hfft, [R(6)]),
    ("hfft-odd-ortho", f_hfft_odd_ortho, [R(6)]),
    ("hfft-axis-forward", f_hfft_axis_forward, [R(3, 2)]),
    ("hfft-of-real", f_hfft_of_real, [R(5)]),
    ("ihfft", f_ihfft, [R(7)]),
    ("ihfft-n-forward", f_ihfft_n_forward, [R(5)]),
    ("ihfft-axis-ortho", f_ihfft_axis_ortho, [R(4, 3)]),
    ("fft-real-imag", f_fft_real_imag, [R(6)]),
    ("ifft-of-fft", f_ifft_of_fft, [R(6)]),
    ("fft2", f_fft2_abs, [R(3, 4)]),
    ("ifft2-s-axes", f_ifft2_axes, [R(4, 5)]),
    ("ifftn-s", f_fftn_abs, [R(4, 5)]),
    ("fft-axis-n", f_fft_axis, [R(4, 5)]),
    ("fftshift", f_fftshift, [R(5)]),
    ("float64-conversions", f_float64_conversions, [R(4)]),
    ("block-kkt", f_block_kkt, [R(3, 3), R(2, 3)]),
    ("block-scalars-and-rows", f_block_rows, [R(3), R(1, 3)]),
    ("block-3d", f_block_3d, [R(2, 1, 2), R(2, 1, 3)]),
    ("cond", f_cond, [R(3, 3) + 2 * np.eye(3)]),
    ("eigvals-complex-pair", f_eigvals_parts, [np.array([[0.5, -2.0, 0.3], [1.5, 0.2, -0.4], [0.1, 0.6, -1.0]])]),
    ("eigvals-stack", f_eigvals_real_stack, [R(2, 3, 3)]),
    ("polyfit", f_polyfit, [FIT_X, np.sin(2 * FIT_X)]),
    ("polyfit-columns", f_polyfit_in_y_columns, [R(7, 2)]),
    ("cond-p-minus-2-tall", f_cond_minus_2, [R(4, 2)]),
    ("cond-p-2-stack", f_cond_2_stack, [R(2, 3, 3) + 3 * np.eye(3)]),
    ("diagflat", f_diagflat, [OWN.standard_normal(4)]),
    ("vander", f_vander, [OWN.standard_normal(4)]),
    ("broadcast_arrays", f_broadcast_arrays, [OWN.standard_normal(3), OWN.standard_normal((1, 4))]),
    ("meshgrid", f_meshgrid, [OWN.standard_normal(3), OWN.standard_normal(2)]),
    ("meshgrid-ij-sparse", f_meshgrid_ij_sparse, [OWN.standard_normal(2), OWN.standard_normal(3),
                                                  OWN.standard_normal(4)]),
    ("meshgrid-one", f_meshgrid_one, [OWN.standard_normal((2, 2))]),
    ("pad-maximum", f_pad_maximum, [OWN.standard_normal((3, 4))]),
    ("pad-minimum-stat_length", f_pad_minimum_stat_length, [SPREAD]),
    ("pad-mean", f_pad_mean, [OWN.standard_normal((3, 4))]),
    ("pad-median", f_pad_median, [OWN.standard_normal((4, 5))]),
    ("pad-linear_ramp", f_pad_linear_ramp, [OWN.standard_normal((3, 4))]),
    ("pad-reflect-odd", f_pad_reflect_odd, [OWN.standard_normal((3, 4))]),
    ("pad-symmetric-odd", f_pad_symmetric_odd, [OWN.standard_normal((3, 4))]),
    ("sum-where-initial", f_sum_where_initial, [OWN.standard_normal((3, 4)), 0.4]),
    ("mean-where", f_mean_where, [OWN.standard_normal((3, 4))]),
    ("max-min-initial", f_max_initial, [np.array([[0.3, -1.1, 0.6, 0.2], [-0.9, -1.4, -0.7, -1.2], [1.3, 0.1, -0.2, 0.9]]),
                                        -0.2]),
    ("max-nanmin-where", f_max_where, [OWN.standard_normal((3, 4))]),
    ("prod-where-initial", f_prod_where_initial, [OWN.standard_normal((3, 4)), 0.7]),
]


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_first_order(name, fun, args):
    check_first_order(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_float32(name, fun, args):
    check_float32(fun, args)


def f_float32_conversion(x):
    return np.sum(np.float32(x) ** 3) + np.float16(x[0]) * 2.0


def test_narrower_float_conversions():
    # probe 20B: np.float64(...), np.float32(...) had no rule
    x = np.array([0.5, -1.25, 2.0])
    g = check_grads(f_float32_conversion, (x,), v=1.0, eps=1e-2, rtol=1e-2, atol=1e-3)
    np.testing.assert_allclose(g, 3 * x ** 2 + [2.0, 0.0, 0.0], rtol=1e-3)
    check_jvp(f_float32_conversion, (x,), eps=1e-2, rtol=1e-2, atol=1e-3)


#: np.cumprod's adjoint helper updates a view in place: srcad refuses to differentiate it again;
#: np.linalg.eigvals is differentiated once (tested below)
SECOND_ORDER_REFUSED = {"cumprod-with-zeros", "eigvals-complex-pair", "eigvals-stack"}
SECOND_ORDER = [c for c in CASES if c[0] not in SECOND_ORDER_REFUSED]


@pytest.mark.parametrize("name, fun, args", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_order(name, fun, args):
    check_second_order(fun, args)


@pytest.mark.parametrize("name", ["eigvals-complex-pair", "eigvals-stack"])
def test_second_order_of_eigvals_is_refused(name):
    _, fun, args = next(c for c in CASES if c[0] == name)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"test_library_numpy.py:\d+: srcad does not differentiate "
                                                     r"np.linalg.eigvals to second order"):
        check_second_order(fun, args)


def complex_eigenvalue_product(a):
    w = np.linalg.eigvals(a)
    return np.real(np.sum(w * w))


def test_a_product_of_complex_eigenvalues_is_refused_in_reverse_mode():
    """A control: eigvals makes complex values, and its rule being complex-safe lets only the
    complex-safe rules follow it (a complex product needs a conjugate)."""
    with pytest.raises(srcad.SrcadSyntaxError, match="complex values only through"):
        srcad.grad(complex_eigenvalue_product)(R(3, 3))


def test_second_order_through_cumprod():
    """Its adjoint's helper ``cumprod_grad`` has rules of its own (it was refused before)."""
    check_second_order(f_cumprod_with_zeros, [R(6)])


def _cubed(A):
    return np.sum(np.linalg.matrix_power(A, 3))


def test_second_order_through_a_rule_helper():
    """``matrix_power``'s adjoint calls ``matrix_power_grad``, which has rules of its own (the
    probe that found its refusal naming srcad's module: its message now names the user's line)."""
    check_second_order(_cubed, [R(3, 3)])


def _norm_of_powers(x):
    return np.linalg.norm(np.array([x, 1.0, x ** 2]))


def test_third_order_refused_inside_generated_helper_code_names_the_users_line():
    """At third order the refusal is met in the code srcad generated for a rule's helper: it
    named srcad's rule module; it names the user's line (probe 20B)."""
    with pytest.raises(srcad.SrcadSyntaxError, match=r"test_library_numpy.py:\d+: srcad takes no derivative"):
        srcad.grad(srcad.grad(srcad.grad(_norm_of_powers)))(0.6)


# ---- refusals ----------------------------------------------------------------------------------

def complex_product(x):
    spectrum = np.fft.rfft(x)
    return np.sum(np.abs(spectrum * spectrum))


def complex_exponential(x):
    z = np.exp(1j * x)
    return np.sum(np.abs(z * z + x))


def test_complex_product_is_refused_in_reverse_mode():
    """Regression: a complex product's adjoint needs a conjugate the real rules do not take;
    ``np.exp(1j * x)`` gave a silent wrong gradient. It is refused, and forward mode (where
    these rules are right for complex values) checks against finite differences."""
    x = R(6)
    for fun in (complex_product, complex_exponential):
        with pytest.raises(srcad.SrcadSyntaxError, match="complex values only through"):
            srcad.grad(fun)(x)
        srcad.testing.check_jvp(fun, (x,))


def complex_argument(z):
    return np.sum(np.abs(z))


def test_complex_arguments_are_refused():
    with pytest.raises(srcad.ArgumentError, match="complex array; srcad differentiates real arrays only"):
        srcad.grad(complex_argument)(np.array([1 + 2j, 3.0]))


def gradient_in_spacing(x, h):
    return np.gradient(x, h)


def interp_periodic(x):
    return np.sum(np.interp(x, XP, np.sin(XP), period=4.0))


def cond_frobenius(a):
    return np.linalg.cond(a, "fro")


def polyfit_weighted(y):
    return np.sum(np.polyfit(FIT_X, y, 2, w=np.arange(1.0, 8.0)))


def polyfit_cov(y):
    p, c = np.polyfit(FIT_X, y, 2, cov=True)
    return np.sum(p)


def test_refused_arguments():
    with pytest.raises(srcad.SrcadSyntaxError, match="np.gradient in its spacing"):
        srcad.grad(gradient_in_spacing, wrt=1)(R(5), 0.5)
    with pytest.raises(srcad.UnsupportedCaseError, match="period"):
        srcad.grad(interp_periodic, wrt=0)(R(3))
    with pytest.raises(srcad.UnsupportedCaseError, match=r"np.linalg.cond for p=None, 2 or -2 .* not p='fro'; write "
                                                         r"np.linalg.norm\(a, p\) \* np.linalg.norm\(np.linalg.inv\(a\), p\)"):
        srcad.grad(cond_frobenius)(R(3, 3) + 2 * np.eye(3))
    with pytest.raises(srcad.UnsupportedCaseError, match=r"np.polyfit\(x, y, deg\) and its rcond only, not w=; "
                                                         r"for weights write .*lstsq"):
        srcad.grad(polyfit_weighted)(R(7))
    with pytest.raises(srcad.UnsupportedCaseError, match=r"np.polyfit\(x, y, deg\) and its rcond only, not cov="):
        srcad.grad(polyfit_cov)(R(7))


# ---- one call of every rule, for the hygiene sweep (tests/test_rules_hygiene.py) ---------------

HYGIENE_CALLS = [
    (np.ediff1d, [OWN.standard_normal(4)], {"to_end": OWN.standard_normal(2), "to_begin": 0.5},
     (0, "to_end", "to_begin"), None),
    (np.cov, [R(3, 4)], {"rowvar": False}, (0,), None),
    (np.linalg.eigvals, [R(3, 3)], {}, (0,), "abs({fn}({0}))"),
    (np.polyfit, [FIT_X, R(7), 2], {}, (0, 1), None),
    (np.linalg.cond, [R(3, 3) + 2 * np.eye(3), -2], {}, (0,), None),
    (np.block, [R(2, 2), R(2, 1), R(1, 2)], {}, (0, 1, 2), "{fn}([[{0}, {1}], [{2}, 0.5]])"),
    (np.corrcoef, [R(3, 4)], {}, (0,), None),
    (np.append, [R(3), R(2, 2)], {}, (0, 1), None),
    (np.insert, [R(4), [1, 1], R(2)], {}, (0, 2), None),
    (np.delete, [R(3, 4), 1], {"axis": 1}, (0,), None),
    (np.nanmax, [R(3, 4)], {"axis": 0}, (0,), None),
    (np.nanmin, [R(3, 4)], {}, (0,), None),
    (np.gradient, [R(4, 5), 0.5], {"axis": 1, "edge_order": 2}, (0,), None),
    (np.interp, [RNG.uniform(-2.8, 2.8, 5), XP, R(6)], {"left": 0.3}, (0, 1, 2, "left"), None),
    (np.polyval, [R(4), R(3)], {}, (0, 1), None),
    (np.trapezoid, [R(4, 5), COORDS], {}, (0, 1), None),
    (np.fft.fft, [R(6), 8], {}, (0,), "abs({fn}({0}, {1}))"),
    (np.fft.ifft, [R(6), None, -1, "ortho"], {}, (0,), "abs({fn}({0}, {1}, {2}, {3}))"),
    (np.fft.rfft, [R(6)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.irfft, [R(6), 9], {}, (0,), "{fn}({0}, {1})"),
    (np.fft.hfft, [R(5), 7], {}, (0,), "{fn}({0}, {1})"),
    (np.fft.ihfft, [R(6)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.fft2, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.ifft2, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.fftn, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.ifftn, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.rfft2, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (np.take_along_axis, [R(3, 4), np.array([[0, 2], [1, 1], [3, 0]]), 1], {}, (0,), None),
    (np.fft.rfftn, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (np.fft.irfft2, [R(3, 4), (3, 5)], {}, (0,), "{fn}({0}, {1})"),
    (np.fft.irfftn, [R(3, 4), (3, 6), (0, 1)], {}, (0,), "{fn}({0}, {1}, {2})"),
    (np.fft.fftshift, [R(5)], {}, (0,), None),
    (np.lib.stride_tricks.sliding_window_view, [R(4, 5), (2, 2)], {}, (0,), None),
    (np.fft.ifftshift, [R(5)], {}, (0,), None),
    (np.diagflat, [R(2, 2), -1], {}, (0,), None),
    (np.vander, [R(3), 4, True], {}, (0,), None),
    (np.broadcast_arrays, [R(3, 1), R(4)], {}, (0, 1), "{fn}({0}, {1})[0] * {fn}({0}, {1})[1]"),
    (np.meshgrid, [R(3), R(2)], {}, (0, 1), "{fn}({0}, {1})[0] * {fn}({0}, {1})[1]"),
]
