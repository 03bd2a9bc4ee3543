"""``try`` statements in differentiated code (issue 10): the forward pass runs the user's
``try``; the reverse sweep differentiates the branch that ran (the body and ``else``, or the
handler that caught), like an ``if`` on a recorded flag. Checked against finite differences
in reverse (joint and pullback twice), forward and second order, on inputs that take each
path; refusals are checked for their message and line."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from lang_checks import check_all_modes
from srcad.testing import check_grads

SPD = np.array([[2.0, 0.3], [0.3, 1.0]])
INDEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])
X = np.array([0.5, 1.5])


def cholesky_or_diagonal(S, x):
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        L = np.diag(np.sqrt(np.abs(np.diag(S))))
    return np.sum(L @ x)


def returns_in_both(S):
    try:
        return np.sum(np.linalg.cholesky(S) ** 2)
    except np.linalg.LinAlgError as error:
        if "positive definite" not in str(error):
            raise
        return np.sum(S * S * 2.0)


def else_and_finally(x):
    out = x * 0.0
    try:
        y = np.sqrt(np.abs(x)) * x
        if np.any(x < 0):
            raise ValueError("negative")
    except (ValueError, FloatingPointError):
        y = x * 2.0
    else:
        y = y * 3.0
    finally:
        out = y + 1.0
    return (out * x).sum()


def two_handlers(S, x):
    try:
        y = np.linalg.cholesky(S) @ x
        if y[0] > 100.0:
            raise KeyError("large")
    except KeyError:
        y = x
    except np.linalg.LinAlgError:
        y = S @ x * 2.0
    return np.sum(y * y)


def nested_tries(S, x):
    try:
        try:
            y = np.linalg.cholesky(S) @ x
        except np.linalg.LinAlgError:
            y = np.linalg.cholesky(S + 5.0 * np.eye(2)) @ x
    except np.linalg.LinAlgError:
        y = x * x
    return np.sum(y ** 2)


def partial_body(S, x):
    a = x * 2.0
    try:
        a = a * x
        L = np.linalg.cholesky(S)
        b = L @ a
    except np.linalg.LinAlgError:
        a = x * 5.0  # bound again before it is read: the value the body reached is never seen
        b = a * 3.0
    return np.sum(b * x * a)


def reads_before_binding(x):
    s = np.sum(x)
    try:
        s = s * s
        t = s + 1.0
    except ValueError:
        s = 1.0
        t = s
    return t * s


def reraises(x):
    try:
        y = np.exp(x)
    except ValueError:
        raise
    return np.sum(y)


def kalman_update(P, H, R, x):
    S = H @ P @ H.T + R
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(S @ S.T + 1e-1 * np.eye(len(S)))
    K = np.linalg.solve(L.T, np.linalg.solve(L, H @ P)).T
    return x + K @ (np.ones(len(S)) - H @ x), P - K @ H @ P


def kalman_filter(x, P, H, R):
    total = 0.0
    for k in range(3):
        x, P = kalman_update(P * (1.0 + k), H, R, x)
        total = total + np.sum(x ** 2) + np.trace(P)
    return total


def local_helper_try(S, x):
    def factor(M):
        try:
            return np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            return np.eye(2) + M * 0.1
    return np.sum(factor(S) @ x)


@pytest.mark.parametrize("S", [SPD, INDEFINITE], ids=["body", "handler"])
@pytest.mark.parametrize("f", [cholesky_or_diagonal, two_handlers, nested_tries, partial_body, local_helper_try])
@pytest.mark.parametrize("wrt", [0, 1])
def test_matrix_paths(f, S, wrt):
    check_all_modes(f, (S, X), wrt=wrt)


def test_nested_innermost_handler_fails_too():
    check_all_modes(nested_tries, (-SPD, X), wrt=1)


@pytest.mark.parametrize("S", [SPD, INDEFINITE], ids=["body", "handler"])
def test_return_inside_try(S):
    check_all_modes(returns_in_both, (S,))


@pytest.mark.parametrize("x", [X, -X], ids=["else", "handler"])
def test_else_and_finally(x):
    check_all_modes(else_and_finally, (x,))


def test_reads_before_binding_and_reraise():
    check_all_modes(reads_before_binding, (X,))
    check_all_modes(reraises, (X,))


@pytest.mark.parametrize("R", [np.eye(2) * 0.5, -np.eye(2) * 1.2], ids=["body", "handler"])
def test_kalman_filter_with_try_in_a_helper(R):
    H = np.array([[1.0, 0.2], [0.0, 1.0]])
    P = np.array([[1.0, 0.1], [0.1, 0.8]])
    check_all_modes(kalman_filter, (X, P, H, R), wrt=0)
    check_grads(kalman_filter, (X, P, H, R), wrt=1)


def test_exception_not_caught_propagates_unchanged():
    def f(x):
        try:
            y = x * 2.0
            raise KeyError("not caught here")
        except ValueError:
            y = x
        return np.sum(y)

    for run in (lambda: srcad.grad(f)(X), lambda: srcad.vjp(f, X), lambda: srcad.jvp(f, (X,), (X,))):
        with pytest.raises(KeyError, match="not caught here"):
            run()


def test_finally_runs_when_an_exception_propagates():
    log = []

    def f(x):
        try:
            y = x * 2.0
            raise KeyError("leaves")
        finally:
            log.append("cleanup")
        return np.sum(y)

    with pytest.raises(KeyError, match="leaves"):
        srcad.grad(f)(X)
    assert log == ["cleanup"]


def _refused(f, args, message, line_offset):
    with pytest.raises(SrcadSyntaxError, match=message) as e:
        srcad.grad(f)(*args)
    assert e.value.lineno == f.__code__.co_firstlineno + line_offset
    return e.value


def test_try_with_except_in_a_loop_refused():
    def f(x):
        s = 0.0
        for i in range(3):
            try:
                t = np.sum(np.sqrt(x) * i)
            except ValueError:
                t = 1.0
            s = s + t
        return s

    _refused(f, (X,), "try statement with except inside a loop; put the try statement in a function defined at "
                      "module level", 3)


def test_in_place_update_in_try_body_refused():
    def f(x):
        y = x * 1.0
        try:
            y[0] = 2.0 * x[1]
        except IndexError:
            pass
        return np.sum(y * x)

    _refused(f, (X,), "updates no array, list or dict in place", 3)


def test_jump_in_finally_refused():
    def f(x):
        try:
            y = x * 2.0
        finally:
            return np.sum(x)

    _refused(f, (X,), "return, break or continue in a finally block", 4)


def test_name_bound_on_some_paths_only_refused():
    def f(x):
        if x[1] > 0:  # bound before the try on some paths only: the body's other paths hand on nothing
            y = x
        try:
            if x[0] > 0:
                y = x * 2.0
        except ValueError:
            y = x
        return np.sum(y)

    _refused(f, (X,), "'y' is bound on some paths of this try body only", 3)


def test_handler_reading_what_the_body_bound_refused():
    def f(S, x):
        a = x * 2.0
        try:
            a = a * x  # runs; then cholesky raises: Python's handler sees this a
            b = np.linalg.cholesky(S) @ a
        except np.linalg.LinAlgError:
            b = a * 3.0
        return np.sum(b * x)

    with pytest.raises(SrcadSyntaxError, match="'a' is bound in this try body and read after the exception "
                                               "handler without being bound again there") as e:
        srcad.grad(f)(INDEFINITE, X)
    assert e.value.lineno == f.__code__.co_firstlineno + 5


# ---- a jump before a try or with statement: Python never enters it, so neither its finally
# body nor the manager's exit runs (srcad ran them after the return, and crashed reading what
# the skipped body binds, or refused an update of the returned array as if it were later read)

def early_return_then_finally(x, c):
    if c > 0.0:
        return x[0] * c
    try:
        k = c * 2.0
    except ValueError:
        k = c
    finally:
        t = k ** 2
    return t


def loop_return_then_finally(x, c):
    for i in range(2):
        if x[i] > 0.4:
            return x[i] * c
    try:
        k = c * 2.0
    except ValueError:
        k = c
    finally:
        t = k ** 2
    return t


def early_return_then_with(x, c):
    if c > 0.0:
        return np.sum(x * c)
    with np.errstate(divide="ignore"):
        z = np.log(x) * c
    return np.sum(z)


def early_return_then_update_in_finally(x, c):
    y = x * c
    if c > 0.0:
        return y
    try:
        k = c * 2.0
    except ValueError:
        k = 1.0
    finally:
        y *= 3.0
    return y + k


def squares_of_early_return_then_update(x, c):  # (a scalar, for second order)
    return np.sum(early_return_then_update_in_finally(x, c) ** 2)


@pytest.mark.parametrize("f, args", [
    (early_return_then_finally, (X, 0.7)), (early_return_then_finally, (X, -0.7)),
    (loop_return_then_finally, (X, 0.7)), (loop_return_then_finally, (np.array([0.1, 0.2]), 0.7)),
    (early_return_then_with, (X, 0.7)), (early_return_then_with, (X, -0.7)),
    (squares_of_early_return_then_update, (X, 0.7)), (squares_of_early_return_then_update, (X, -0.7)),
], ids=lambda a: getattr(a, "__name__", None) or "")
def test_a_statement_after_a_jump_is_never_entered(f, args):
    np.testing.assert_allclose(srcad.vjp(f, *args, wrt=(0, 1))[0], f(*args))
    np.testing.assert_allclose(srcad.vjp(early_return_then_update_in_finally, *args)[0],
                               early_return_then_update_in_finally(*args))
    check_grads(f, args, wrt=(0, 1))
    check_all_modes(f, args, wrt=0)
