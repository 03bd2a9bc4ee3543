"""Probe round 25A: an internal crash (grad of a function returning a dataclass) and false
refusals of ordinary code: a validation helper called as a statement, ``zip(reversed(...),
reversed(...))`` in a loop that may stop early, and a checkpointed loop over the results of
SciPy functions srcad has rules for. Each fix is checked against finite differences in every
mode; each refusal that protects a gradient stays, with a message naming the user's line."""
import dataclasses
import linecache
import re

import numpy as np
import pytest
import scipy.linalg
from scipy.special import log_softmax, logsumexp, softmax
from scipy.stats import norm

import srcad
from srcad import CotangentError, SrcadSyntaxError, UnsupportedCaseError
from srcad.testing import check_grads

from lang_checks import check_all_modes

X = np.array([0.5, -1.2, 0.8])


def assert_names_line(err, line_text):
    assert err.filename == __file__, str(err)
    assert line_text in linecache.getline(err.filename, err.lineno), str(err)


# ---- grad of a function returning a dataclass ------------------------------------------------
# The scalar-output check took a dataclass record for a scalar (its "shape" is ()): the backward
# code got the seed 1.0 as the record's cotangent and failed with a TypeError.

@dataclasses.dataclass
class Priced:
    price: float
    path: np.ndarray


@dataclasses.dataclass
class OnlyPrice:
    price: float


def simulate(p):
    x = p * np.arange(1.0, 4.0)
    return Priced(price=float(np.sum(x)), path=x)


def price_only(p):
    return OnlyPrice(price=np.sum(p ** 2))


@pytest.mark.parametrize("f, cls", [(simulate, "Priced"), (price_only, "OnlyPrice")])
@pytest.mark.parametrize("derivative", [srcad.grad, srcad.value_and_grad, srcad.hessian])
def test_grad_of_a_dataclass_output_says_to_pass_a_cotangent(f, cls, derivative):
    with pytest.raises(CotangentError, match=f"the output has a {cls}, but a gradient needs a scalar output: "
                                             r"for vᵀJ pass the cotangent v") as info:
        derivative(f)(X)
    assert str(info.value).startswith(__file__)


def test_vjp_with_a_dataclass_cotangent_still_works():
    _, pullback = srcad.vjp(simulate, X)
    v = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(pullback(Priced(price=2.0, path=v)), 2.0 * np.arange(1.0, 4.0) + v * np.arange(1.0, 4.0))
    check_grads(lambda p: np.sum(simulate(p).path ** 2) + simulate(p).price, (X,))


# ---- a helper of yours that only reads its argument, called as a statement -------------------
# binding.module_helper leaves such a call as it is, and the check of calls made for their
# effect refused it for any varied argument. A helper whose memory summary says it updates
# nothing it is given and no global now runs as written, in every mode.

def _check_input(x):
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite")


def _report(x):
    print("norm", float(np.linalg.norm(x)))
    return np.sum(x)  # a result the caller drops


def validated_loss(x):
    _check_input(x)
    y = np.sin(x) * x
    _report(y)
    return np.sum(y ** 3)


def validated_in_a_loop(x):
    for _ in range(3):
        _check_input(x)
        x = np.tanh(x) + 0.5 * x
    return np.sum(x ** 2)


def validated_in_a_checkpointed_loop(x):
    for _ in srcad.checkpointed(range(4)):
        _check_input(x)
        x = np.sin(x) + 0.3 * x
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [validated_loss, validated_in_a_loop])
def test_a_read_only_helper_called_as_a_statement_is_differentiated(f):
    check_all_modes(f, (X,))


def test_a_read_only_helper_in_a_checkpointed_loop():
    check_grads(validated_in_a_checkpointed_loop, (X,))


def test_a_read_only_helper_still_raises_on_bad_input():
    with pytest.raises(ValueError, match="x must be finite"):
        srcad.grad(validated_loss)(np.array([1.0, np.nan]))


def _zero_out(x):
    np.copyto(x, 0.0)


def _remember(x):
    SEEN.append(x)


def _remember_in_default(x, seen=[]):
    seen.append(x)


SEEN = []


def updates_its_argument(x):
    y = x * 1.0
    _zero_out(y)
    return np.sum(y ** 2)


def stores_in_a_global(x):
    y = x * 1.0
    _remember(y)
    return np.sum(y ** 2)


def stores_in_its_default(x):
    y = x * 1.0
    _remember_in_default(y)
    return np.sum(y ** 2)


@pytest.mark.parametrize("f, line, message", [
    (updates_its_argument, "_zero_out(y)", "srcad cannot see what the call _zero_out(...) changes in 'y'"),
    (stores_in_a_global, "_remember(y)", "does not differentiate the call _remember(...) made for its effect"),
    (stores_in_its_default, "_remember_in_default(y)",
     "does not differentiate the call _remember_in_default(...) made for its effect"),
])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_helper_that_changes_something_stays_refused(f, line, message, mode):
    with pytest.raises(SrcadSyntaxError, match=re.escape(message)) as info:
        if mode == "grad":
            srcad.grad(f)(X)
        else:
            srcad.jvp(f, (X,), (X,))
    assert_names_line(info.value, line)


# ---- reversed(...) made in a loop's header that may stop early --------------------------------
# runtime.read_again refused every one-pass iterator where the loop may read only part of what
# it iterates (zip, break); reversed(L) made in the header is read by no one else, and of a
# list, tuple, range or array reads it by index.

def lbfgs_two_loop(g):
    s_list = [0.1 * g, 0.2 * g ** 2]
    y_list = [g + 1.0, 2.0 * g + 0.3]
    q = g.copy()
    for s, y in zip(reversed(s_list), reversed(y_list)):
        q = q - (s @ q) / (y @ s) * y
    return np.sum(q ** 2)


def reversed_rows_with_break(g):
    acc = 0.0
    for i, r in enumerate(reversed(np.outer(g, g))):
        if i == 2:
            break
        acc = acc + np.sum(np.sin(r)) * r[0]
    return acc


def reversed_tuple_and_range(g):
    acc = 0.0
    for k, v in zip(reversed(range(3)), reversed((g, 2.0 * g, g ** 2, g))):
        acc = acc + k * np.sum(v ** 2)
    return acc


@pytest.mark.parametrize("f", [lbfgs_two_loop, reversed_rows_with_break, reversed_tuple_and_range])
def test_reversed_in_the_header_of_a_loop_that_may_stop_early(f):
    check_all_modes(f, (X,))


def read_after_the_loop(g):
    it = reversed([g, 2.0 * g, 3.0 * g])
    acc = 0.0
    for a, b in zip(it, [g, g]):
        acc = acc + np.sum(a * b)
    for c in it:
        acc = acc + np.sum(c)
    return acc


class Backwards:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __reversed__(self):
        return iter(self.items[::-1])


BACKWARDS = Backwards([np.ones(3), 2.0 * np.ones(3)])


def reversed_of_your_class(g):
    acc = 0.0
    for a, b in zip(reversed(BACKWARDS), [g, g, g]):
        acc = acc + np.sum(a * b)
    return acc


@pytest.mark.parametrize("f, line, what", [
    (read_after_the_loop, "for a, b in zip(it, [g, g]):", r"a one-pass iterator \(a generator"),
    (reversed_of_your_class, "for a, b in zip(reversed(BACKWARDS)", r"reversed\(\.\.\.\) of a Backwards"),
])
def test_other_iterators_read_in_part_stay_refused(f, line, what):
    with pytest.raises(UnsupportedCaseError, match=f"this loop may stop before the end of what it iterates, here "
                                                   f"{what}") as info:
        srcad.grad(f)(X)
    assert f"{__file__}:" in str(info.value)
    lineno = int(str(info.value).split(f"{__file__}:")[1].split(":")[0])
    assert line in linecache.getline(__file__, lineno)


# ---- a checkpointed loop over results of SciPy functions with rules ------------------------
# The checkpoint analysis did not know logsumexp's (softmax's, norm.logpdf's, expm's) result is
# an array, so indexing it "may run code of yours"; and it read scipy's own source of
# logsumexp, a function with a rule, as if it were the user's.

A = np.random.default_rng(0).standard_normal((3, 3))


def hmm_forward(b):
    alpha = b * 1.0
    for t in srcad.checkpointed(range(3)):
        alpha = logsumexp(alpha[:, None] + A, axis=0)
    return np.sum(alpha)


def softmax_recursion(b):
    h = b * 1.0
    for t in srcad.checkpointed(range(3)):
        h = softmax(h[::-1] + A[0]) + log_softmax(h)[0]
    return np.sum(h * np.arange(3))


def logpdf_recursion(b):
    h = b * 1.0
    for t in srcad.checkpointed(range(3)):
        h = norm.logpdf(h[::-1] + A[0]) * 0.3
    return np.sum(h)


def expm_recursion(b):
    h = b * 1.0
    for t in srcad.checkpointed(range(3)):
        M = scipy.linalg.expm(0.1 * A * h[0])
        h = M @ h
    return np.sum(h)


@pytest.mark.parametrize("f", [hmm_forward, softmax_recursion, logpdf_recursion, expm_recursion])
def test_checkpointed_loop_over_scipy_results(f):
    check_grads(f, (X,))


# ---- second order of a windowed power spectrum ----------------------------------------------
# Where the window's realness is checked when the function runs (a global, np.hanning), the
# adjoint of np.abs tests the spectrum's dtype (`if np.iscomplexobj(X): ... else: np.sign(X)`);
# differentiated again, the branch for a real X was refused as if X might be complex there.

WINDOW = np.hanning(8)
SIGNAL = np.random.default_rng(3).standard_normal(8)


def spectrum_with_a_global_window(x):
    X = np.fft.rfft(x * WINDOW)
    return np.sum(np.abs(X) ** 2)


def spectrum_with_a_local_window(x):
    w = np.hanning(len(x))
    return np.sum(np.abs(np.fft.rfft(x * w)) ** 2) + np.sum(np.abs(np.fft.rfft(x)))


@pytest.mark.parametrize("f", [spectrum_with_a_global_window, spectrum_with_a_local_window])
def test_second_order_of_a_windowed_power_spectrum(f):
    # (reverse over reverse of np.abs of a complex value is refused, as for an unwindowed spectrum)
    check_all_modes(f, (SIGNAL,), second=False)
    gradient, eps = srcad.grad(f), 1e-6
    columns = np.array([(gradient(SIGNAL + eps * e) - gradient(SIGNAL - eps * e)) / (2 * eps) for e in np.eye(8)]).T
    np.testing.assert_allclose(srcad.hessian(f)(SIGNAL), columns, rtol=1e-5, atol=1e-6)
    u = np.random.default_rng(4).standard_normal(8)
    np.testing.assert_allclose(srcad.hvp(f)(SIGNAL, u), columns @ u, rtol=1e-5, atol=1e-6)


def sign_of_a_spectrum(x):
    X = np.fft.rfft(x)
    return np.sum(np.real(X * np.sign(X)))


def sign_after_a_test_whose_value_is_rebound(x):
    X = np.fft.rfft(x)
    if np.iscomplexobj(X):
        y = np.abs(X)
    else:
        X = np.fft.fft(x)
        y = np.sign(X)
    return np.sum(y ** 2)


@pytest.mark.parametrize("f, line", [(sign_of_a_spectrum, "return np.sum(np.real(X * np.sign(X)))"),
                                     (sign_after_a_test_whose_value_is_rebound, "y = np.sign(X)")])
def test_sign_of_what_may_be_complex_stays_refused(f, line):
    with pytest.raises(SrcadSyntaxError, match=r"numpy\.sign here may have a complex operand") as info:
        srcad.grad(f)(SIGNAL)
    assert_names_line(info.value, line)
