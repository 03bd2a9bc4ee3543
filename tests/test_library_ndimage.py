"""Rules for scipy.ndimage's linear filters (srcad/rules/scipy_ndimage.py) against finite
differences, in every boundary mode, with kernels of odd and even sizes, origins off the centre
and inputs too short for the kernel (the extension reflects more than once): reverse mode,
forward mode, float32 and second order, as tests/test_library_scipy.py checks its rows."""
import numpy as np
import pytest
import scipy.ndimage as ndimage

import srcad
from library_check import check_first_order, check_float32, check_second_order, samplers

R, _, _ = samplers(11)

MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-mirror", "grid-wrap", "grid-constant"]


def rows(mode):
    """(name, function, arguments) for every filter in ``mode``."""
    return [
        (f"correlate-{mode}", lambda x, w: ndimage.correlate(x, w, mode=mode, cval=0.4), [R(5, 4), R(2, 3)]),
        (f"correlate-origin-{mode}", lambda x, w: ndimage.correlate(x, w, mode=mode, origin=(1, -1)),
         [R(3, 6), R(3, 4)]),
        (f"correlate-in-weights-{mode}", lambda w, x: ndimage.correlate(x, w, mode=mode), [R(2, 3), R(4, 5)]),
        (f"convolve-{mode}", lambda x, w: ndimage.convolve(x, w, mode=mode, origin=(0, 1)), [R(4, 6), R(3, 4)]),
        (f"convolve-in-weights-{mode}", lambda w, x: ndimage.convolve(x, w, mode=mode, cval=-0.3),
         [R(4, 2), R(3, 5)]),
        (f"correlate1d-{mode}", lambda x, w: ndimage.correlate1d(x, w, axis=0, mode=mode, origin=-1),
         [R(3, 5), R(4)]),
        (f"correlate1d-in-weights-{mode}", lambda w, x: ndimage.correlate1d(x, w, mode=mode), [R(5), R(2, 3)]),
        (f"convolve1d-{mode}", lambda x, w: ndimage.convolve1d(x, w, mode=mode), [R(7), R(4)]),
        (f"convolve1d-in-weights-{mode}", lambda w, x: ndimage.convolve1d(x, w, 0, mode=mode, origin=1),
         [R(4), R(6, 2)]),
        (f"uniform_filter1d-{mode}", lambda x: ndimage.uniform_filter1d(x, 4, mode=mode, origin=1), [R(3, 6)]),
        (f"uniform_filter-{mode}", lambda x: ndimage.uniform_filter(x, (3, 2), mode=mode), [R(5, 4)]),
        (f"gaussian_filter1d-{mode}", lambda x: ndimage.gaussian_filter1d(x, 1.2, axis=0, order=1, mode=mode),
         [R(5, 3)]),
        (f"gaussian_filter-{mode}", lambda x: ndimage.gaussian_filter(x, (0.8, 1.5), mode=mode), [R(6, 5)]),
    ]


CASES = [row for mode in MODES for row in rows(mode)] + [
    ("uniform_filter-3d-origin", lambda x: ndimage.uniform_filter(x, 2, origin=(0, -1, 0)), [R(3, 4, 2)]),
    ("gaussian_filter-orders-radius", lambda x: ndimage.gaussian_filter(x, 1.0, order=(2, 0), radius=(2, 1)),
     [R(4, 5)]),
]


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_first_order(name, fun, args):
    check_first_order(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_float32(name, fun, args):
    check_float32(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_second_order(name, fun, args):
    check_second_order(fun, args)


def test_an_output_type_is_not_a_buffer():
    check_first_order(lambda x: ndimage.gaussian_filter(x, 0.7, output=np.float64), [R(6)])


def test_the_adjoint_of_a_reflecting_filter_is_not_the_flipped_filter():
    """The cotangent reflected back at the edges: ``Σ g · F(x)`` equals ``Σ grad · x`` exactly,
    where the flipped filter would not."""
    x, g, w = R(7), R(7), np.array([0.5, 2.0, -1.0, 0.3])

    def pairing(x):
        return np.sum(g * ndimage.correlate1d(x, w, mode="nearest"))

    grad = srcad.grad(pairing)(x)
    np.testing.assert_allclose(grad, [pairing(e) for e in np.eye(7)], rtol=1e-12, atol=1e-12)
    assert not np.allclose(grad, ndimage.convolve1d(g, w, mode="nearest"))


def modes_per_axis(x):
    return np.sum(ndimage.uniform_filter(x, 3, mode=["reflect", "wrap"]))


def some_axes(x):
    return np.sum(ndimage.gaussian_filter(x, 1.0, axes=(1,)))


def integer_output(x):
    return np.sum(ndimage.correlate(x, np.ones((2, 2)), output=np.int64))


def moving_cval(x):
    return np.sum(ndimage.uniform_filter(x, 3, mode="constant", cval=x[0, 0]))


def moving_sigma(x):
    return np.sum(ndimage.gaussian_filter(x, x[0, 0] ** 2))


def unknown_keyword(x):
    return np.sum(ndimage.gaussian_filter(x, 1.0, bogus=2))


#: (the function, what the error says; the calls sit on lines of their own, since a message
#: quotes the user's line)
REFUSED = [
    (modes_per_axis, "one boundary mode of"),
    (some_axes, "filters with axes"),
    (integer_output, "not output=<class 'numpy.int64'>"),
    (moving_cval, "its argument 'cval'"),
    (moving_sigma, "its argument 'sigma'"),
    (unknown_keyword, "does not support the keyword argument 'bogus'"),
]


@pytest.mark.parametrize("how", ["grad", "jvp"])
@pytest.mark.parametrize("fun, message", REFUSED)
def test_refused(fun, message, how):
    x = R(4, 5)
    with pytest.raises(srcad.SrcadError, match=message.replace("(", r"\(").replace("[", r"\[")):
        srcad.grad(fun)(x) if how == "grad" else srcad.jvp(fun, (x,), (x,))


#: one call of every rule, for the hygiene sweep (tests/test_rules_hygiene.py)
HYGIENE_CALLS = [
    (ndimage.correlate, [R(4, 5), R(2, 3)], {"mode": "nearest"}, (0, 1), None),
    (ndimage.convolve, [R(4, 5), R(2, 3)], {"mode": "mirror"}, (0, 1), None),
    (ndimage.correlate1d, [R(6), R(3)], {"mode": "wrap"}, (0, 1), None),
    (ndimage.convolve1d, [R(6), R(4)], {}, (0, 1), None),
    (ndimage.uniform_filter1d, [R(6), 3], {}, (0,), None),
    (ndimage.uniform_filter, [R(4, 5)], {}, (0,), None),
    (ndimage.gaussian_filter1d, [R(6), 1.0], {}, (0,), None),
    (ndimage.gaussian_filter, [R(4, 5), 1.0], {}, (0,), None),
]
