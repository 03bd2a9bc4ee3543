"""A value NumPy truncates to integers or booleans has no derivative, and an array updated in
place keeps its shape and dtype (or NumPy refuses the update). Storing a float into an
integer array, and a ``dtype=int`` given to a function whose rule ignores its ``dtype``, once
gave the float derivative (silent and wrong, in every mode). A store now cuts the derivative
where its target holds integers; a call given a ``dtype`` checks that its result is a float,
and says what to do otherwise. Checked against finite differences in every mode."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

X = np.array([0.33, 0.71, 1.27])


def store_into_int_array(x):
    y = np.zeros(3, dtype=int)
    y[:] = x * 4
    return np.sum(y * x)


def update_int_item(x):
    y = np.arange(3)
    y[1] += x[1] * 5
    return np.sum(y * x * x)


def store_into_bool_array(x):
    mask = np.zeros(3, dtype=bool)
    mask[0] = x[0] * 2.0
    return np.sum(mask * x) + np.sum(np.sin(x))


def fill_labels_in_a_loop(x, labels):
    out = np.empty_like(labels)
    for i in range(len(x)):
        out[i] = x[i] * 3.0
    return np.sum(out * x)


def store_into_float_array(x):
    y = np.zeros(3)
    y[1:] = x[:2] * 4
    y[0] = x[2] ** 2
    return np.sum(y * x)


@pytest.mark.parametrize("f, args", [(store_into_int_array, (X,)), (update_int_item, (X,)),
                                     (store_into_bool_array, (X,)), (fill_labels_in_a_loop, (X, np.arange(3))),
                                     (store_into_float_array, (X,))])
def test_a_store_truncated_to_integers_carries_no_derivative(f, args):
    check_all_modes(f, args)


def test_the_truncated_store_gives_the_integer_values_as_the_gradient():
    np.testing.assert_allclose(srcad.grad(store_into_int_array)(X), np.trunc(X * 4) + 0.0)


def int_sum(x):
    return np.sum(x * 3, dtype=int) * x[0]


def int_cumsum(x):
    return np.cumsum(x * 3, dtype=np.int64)[-1] * x[0]


def int_method_sum(x):
    return (x * 3).sum(dtype=np.int32) * x[0]


def int_full(x):
    return np.sum(np.full(3, x[0] * 3, dtype=int) * x)


@pytest.mark.parametrize("f", [int_sum, int_cumsum, int_method_sum, int_full])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_integer_dtype_the_rule_ignores_is_refused(f, mode):
    with pytest.raises(srcad.UnsupportedCaseError, match="given a dtype.*astype"):
        if mode == "grad":
            srcad.grad(f)(X)
        else:
            srcad.jvp(f, (X,), (np.ones(3),))


def float_dtypes(x):
    return (np.sum(x * x, dtype=float) + np.mean(x, dtype=np.float64) + np.sum(np.cumsum(x, dtype="float64"))
            + np.sum(np.full(3, x[0], dtype=np.float64) * x))


def test_a_float_dtype_is_differentiated():
    check_all_modes(float_dtypes, (X,))


def cast_after(x):
    return np.sum((x * 3).astype(int) * x) + np.sum(np.array([x[0], x[1]], dtype=int) * x[:2])


def test_casts_the_rules_know_stay_zero():
    check_all_modes(cast_after, (X,))


def test_numba_cuts_a_truncated_store_too():
    pytest.importorskip("numba")
    for f, args in [(fill_labels_in_a_loop, (X, np.arange(3))),
                    (store_into_float_array, (X,))]:
        np.testing.assert_allclose(srcad.grad(f, backend="numba")(*args), srcad.grad(f)(*args), rtol=1e-12)


def grows_in_place(x):
    acc = np.zeros(3)
    acc += np.outer(x, x)  # NumPy: the result's shape is not acc's
    return np.sum(acc)


def float_into_ints_in_place(x):
    counts = np.arange(3)
    counts += x * 2  # NumPy: a float result cannot be cast into the integer array
    return np.sum(counts * x)


def row_shrunk_in_place(x):
    Y = np.outer(x, x)
    Y[0] -= np.ones((1, 3)) * x  # the row is updated in place: a (1, 3) result does not fit (3,)
    return np.sum(Y)


@pytest.mark.parametrize("f, error", [(grows_in_place, ValueError), (float_into_ints_in_place, TypeError),
                                      (row_shrunk_in_place, ValueError)])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_in_place_update_numpy_refuses_is_refused_too(f, error, mode):
    # srcad wrote z op= e as z = z op e and returned a value and a gradient where NumPy raises
    with pytest.raises(error):
        f(X)
    with pytest.raises(error, match="in place"):
        if mode == "grad":
            srcad.grad(f)(X)
        else:
            srcad.jvp(f, (X,), (np.ones(3),))


def float32_updated_with_float64(x):
    y = x.astype(np.float32)
    y += x * 2.0  # stays float32, as NumPy keeps it
    return y


def test_an_array_updated_in_place_keeps_its_dtype():
    value, tangent = srcad.jvp(float32_updated_with_float64, (X,), (np.ones(3),))
    assert value.dtype == np.float32 and value.dtype == float32_updated_with_float64(X).dtype
    np.testing.assert_array_equal(value, float32_updated_with_float64(X))
    assert srcad.vjp(float32_updated_with_float64, X)[0].dtype == np.float32


def numbers_and_arrays_updated(x, scale):
    for k, _ in enumerate((4, 3)):
        scale += k  # a float is rebound, never updated in place (fuzz seed 113301339906: jvp 0)
    total = np.zeros(3)
    total += np.sin(x) * x
    total[1:] *= scale
    return np.sum(total) * scale


def test_augmented_assignment_of_numbers_and_arrays_in_every_mode():
    check_all_modes(numbers_and_arrays_updated, (X, 0.7), wrt=0)
    check_all_modes(numbers_and_arrays_updated, (X, 0.7), wrt=1)
