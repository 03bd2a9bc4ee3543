"""Complex intermediate values: every derivative srcad takes of one is right or refused.

Arguments are real; complex values come from np.fft, complex literals, globals and attributes.
Each function here is checked against central finite differences in reverse and forward mode,
or must be refused with a srcad error (never a silent wrong gradient)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

R = np.random.default_rng(7).standard_normal
PHASES = np.exp(1j * np.arange(4.0))


class Holder:
    def __init__(self, c):
        self.c = c


# (the tests spell out np.sum(np.real(w) + 0.7 * np.imag(w)): a user function called with a
# complex value is refused, since srcad transforms it for real arguments)


# linear maps with real coefficients: right in both modes
def lin_reshape(x):
    w = np.reshape(np.fft.fft(x) * 0.3, (2, 2))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_transpose(x):
    w = np.transpose(np.reshape(np.fft.fft(x), (2, 2))) / 2.0
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_concatenate(x):
    w = np.concatenate([np.fft.fft(x), np.fft.fft(x * x)])
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_stack(x):
    w = np.stack([np.fft.fft(x), np.fft.fft(x * x)])
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_cumsum(x):
    w = np.cumsum(np.fft.fft(x))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_mean(x):
    w = np.mean(np.fft.fft(x))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_diff(x):
    w = np.diff(np.fft.fft(x))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_flip(x):
    w = np.flip(np.fft.fft(x))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_roll(x):
    w = np.roll(np.fft.fft(x), 1)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_take(x):
    w = np.take(np.fft.fft(x), [0, 2])
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_tile(x):
    w = np.tile(np.fft.fft(x), 2)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_repeat(x):
    w = np.repeat(np.fft.fft(x), 2)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_asarray(x):
    w = np.asarray(np.fft.fft(x)) * 2.0
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_trace(x):
    w = np.trace(np.reshape(np.fft.fft(x), (2, 2)))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_diag(x):
    w = np.diag(np.fft.fft(x))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_squeeze(x):
    w = np.squeeze(np.expand_dims(np.fft.fft(x), 0))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_swapaxes(x):
    w = np.swapaxes(np.reshape(np.fft.fft(x), (2, 2)), 0, 1)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_moveaxis(x):
    w = np.moveaxis(np.reshape(np.fft.fft(x), (2, 2)), 0, 1)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_broadcast(x):
    w = np.broadcast_to(np.fft.fft(x), (3, 4))
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_hstack(x):
    w = np.hstack([np.fft.fft(x), np.fft.fft(x * x)])
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_vstack(x):
    w = np.vstack([np.fft.fft(x), np.fft.fft(x * x)])
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def lin_scaled(x):
    w = np.fft.fft(x) * 0.3 / 2.0 - 1.0
    return np.sum(np.real(w) + 0.7 * np.imag(w))

LINEAR = [lin_reshape, lin_transpose, lin_concatenate, lin_stack, lin_cumsum, lin_mean, lin_diff, lin_flip,
          lin_roll, lin_take, lin_tile, lin_repeat, lin_asarray, lin_trace, lin_diag, lin_squeeze,
          lin_swapaxes, lin_moveaxis, lin_broadcast, lin_hstack, lin_vstack, lin_scaled]


@pytest.mark.parametrize("fun", LINEAR, ids=lambda f: f.__name__)
def test_linear_maps_of_complex_values(fun):
    x = R(4)
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


# holomorphic functions: forward mode is right (f'(z) dz); reverse mode needs a conjugate: refused
def holo_exp(x):
    w = np.exp(np.fft.fft(x) * 0.3)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def holo_product(x):
    w = np.fft.fft(x) * np.fft.fft(x * x)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def holo_tanh(x):
    w = np.tanh(np.fft.fft(x) * 0.2)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def holo_inverse(x):
    w = np.linalg.inv(np.reshape(np.fft.fft(x), (2, 2)) + 3.0 * np.eye(2))
    return np.sum(np.real(w) + 0.7 * np.imag(w))


@pytest.mark.parametrize("fun", [holo_exp, holo_product, holo_tanh, holo_inverse], ids=lambda f: f.__name__)
def test_holomorphic_functions_forward_right_reverse_refused(fun):
    x = R(4)
    check_jvp(fun, (x,))
    with pytest.raises(srcad.SrcadError, match="complex"):
        srcad.grad(fun)(x)


# not holomorphic, not handled: refused in both modes (np.sign of complex z is z/|z|, not constant)
def bad_sign(x):
    w = np.sign(np.fft.fft(x)) * 1.0
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def bad_norm(x): return np.linalg.norm(np.fft.fft(x))
def bad_vdot(x): return np.real(np.vdot(np.fft.fft(x), np.fft.fft(x * x)))
def bad_angle(x): return np.sum(np.angle(np.fft.fft(x) + 0.1))
def bad_maximum(x):
    w = np.maximum(np.fft.fft(x), 0.1)
    return np.sum(np.real(w) + 0.7 * np.imag(w))


def bad_pad(x):  # np.pad's adjoint sums with np.bincount, which takes real weights only
    w = np.pad(np.fft.fft(x), 1)
    return np.sum(np.real(w))


@pytest.mark.parametrize("fun", [bad_sign, bad_norm, bad_vdot, bad_angle, bad_maximum, bad_pad], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_other_functions_of_complex_values_are_refused(fun, mode):
    x = R(4)
    with pytest.raises(srcad.SrcadError, match="complex"):
        if mode == "rev":
            srcad.grad(fun)(x)
        else:
            srcad.jvp(fun, (x,), (np.ones(4),))


# values srcad does not compute: a global, an attribute of an object (checked when the code runs)
def global_product(x):
    w = np.exp(x * PHASES)
    return np.sum(np.real(w) + 0.7 * np.imag(w))
def attribute_product(x, h): return np.sum(np.real(x * h.c))


def test_complex_values_from_outside():
    """Regression: a complex global multiplying x gave the conjugated (wrong) gradient in reverse
    mode. Reverse mode refuses it (statically for a global, when the code runs for an attribute);
    forward mode's product rule is right for complex values and checks against finite differences."""
    x = R(4)
    cases = [(global_product, (x,)), (attribute_product, (x, Holder(PHASES)))]
    for fun, args in cases:
        with pytest.raises(srcad.SrcadError, match="complex"):
            srcad.grad(fun)(*args)
        check_jvp(fun, args, wrt=0)


def test_real_attribute_is_checked_at_each_call_and_passes():
    """An attribute that is real runs (the check costs a dtype test); made complex later, the same
    compiled code refuses it."""
    x = R(4)
    h = Holder(np.arange(4.0))
    check_grads(attribute_product, (x, h), wrt=0)
    h.c = PHASES
    with pytest.raises(srcad.SrcadError, match="'h.c' is complex"):
        srcad.grad(attribute_product)(x, h)


def helper_real_part(w):
    return np.real(w)


def calls_helper_with_complex(x):
    return np.sum(helper_real_part(np.fft.fft(x)))


def test_user_function_called_with_a_complex_value_is_refused():
    with pytest.raises(srcad.SrcadError, match="complex"):
        srcad.grad(calls_helper_with_complex)(R(4))


def real_part_then_modulus(x):
    """The adjoint of z starts real (np.real's) and then gets a complex part (np.abs's): it is
    added into a new array, not in place (which raised UFuncOutputCastingError; found by an
    adversarial probe)."""
    z = np.fft.rfft(x)
    return np.sum(np.real(z) * np.arange(3)) + np.sum(np.abs(z))


def test_real_adjoint_part_then_complex_part():
    x = np.array([0.3, -1.2, 0.8, 1.9])
    check_grads(real_part_then_modulus, (x,), modes=("rev",))
    check_jvp(real_part_then_modulus, (x,))
