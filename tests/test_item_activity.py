"""Activity item by item (probes 15A, 16A): an item of a tuple, list or dict that depends on no
parameter (an axis, an exponent, a time 0.0 kept beside the array) carries no derivative, so
it is not refused where a rule takes no derivative (``axis=``) and gives no 0 · ∞ = NaN where
a slope is infinite (``sqrt(0.0)``, a log of a negative base for an integer exponent). Items
that do depend on a parameter (any parameter: the gradient may be differentiated again in
another one), and containers changed after they were built, keep their derivatives. Every
value against finite differences."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError, SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

X = np.array([[0.3, -0.7, 1.1], [0.45, -1.3, 0.9]])


def with_axis(x):
    return np.tanh(x), 1


def axis_from_a_helper(x):
    y, ax = with_axis(x)
    return np.sum(np.sin(np.cumsum(y, axis=ax)))


def the_axis(x):
    return 1


def axis_alone_from_a_helper(x):
    return np.sum(np.sum(x, axis=the_axis(x)) ** 2)


def axis_in_a_tuple(x):
    state = (x, 1)
    y, k = state
    return np.sum(np.diff(y, n=k) ** 2) + np.sum(np.roll(y, k) * y)


def axis_in_a_dict(x):
    cfg = {"w": x, "axis": 0}
    return np.sum(np.cumsum(cfg["w"], axis=cfg["axis"]) ** 2)


def nested(x):
    t = ((x, 1), 2)
    inner = t[0]
    return np.sum(np.cumsum(inner[0], axis=inner[1]) ** t[1])


@pytest.mark.parametrize("f", [axis_from_a_helper, axis_alone_from_a_helper, axis_in_a_tuple, axis_in_a_dict,
                               nested])
def test_a_constant_item_is_no_derivative(f):
    # before: refused, "the derivative rule of numpy.cumsum does not differentiate its argument 'axis'"
    check_grads(f, (X,), modes=("rev",))
    check_jvp(f, (X,))


def with_exponent(x):
    return np.tanh(x), 2


def exponent_from_a_helper(x):
    y, p = with_exponent(x)
    return np.sum(y ** p)


def exponent_in_a_tuple(x):
    t = (x, 3)
    return np.sum(t[0] ** t[1])


@pytest.mark.parametrize("f", [exponent_from_a_helper, exponent_in_a_tuple])
def test_reverse_over_reverse_with_a_constant_exponent_at_a_negative_base(f):
    x = np.array([0.5, -0.8, 1.2])
    g = srcad.grad(f)
    expected = np.array([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(3)]).T
    with np.errstate(invalid="raise"):  # before: NaN, and a warning of log of a negative number
        np.testing.assert_allclose(srcad.jacobian(g)(x), expected, rtol=1e-5, atol=1e-7)


def start(x):
    return x * 1.0, 0.0


def time_beside_the_state(x):
    y, t = start(x)
    return np.sum(y * np.sqrt(t) + y ** 2)


def test_forward_mode_through_a_constant_time():
    x = np.array([0.5, -1.0])
    check_jvp(time_beside_the_state, (x,))  # before: NaN (a zero tangent times sqrt's infinite slope)
    assert np.all(np.isfinite(srcad.hessian(time_beside_the_state)(x)))


def both_items(x):
    return x, x * 2.0


def varied_items(x):
    a, b = both_items(x)
    return np.sum(a * b)


def stored_into(x):
    d = {"a": x, "b": 0.0}
    d["b"] = x * 3.0
    return np.sum(d["b"] * d["a"])


def rebound(x):
    t = (x, 0.0)
    t = (0.0, x ** 2)
    return np.sum(t[1])


def appended(x):
    L = [0.5, 1.0]
    L.append(x * 2.0)
    return np.sum(L[2] * L[0])


def scaled(x, n):
    return x * n, n


def parameter_item(x, n):
    y, m = scaled(x, n)
    return np.sum(y * m)


@pytest.mark.parametrize("f", [varied_items, stored_into, rebound, appended])
def test_items_that_carry_derivatives_keep_them(f):
    check_grads(f, (X,), modes=("rev",))
    check_jvp(f, (X,))


def test_an_item_that_is_a_parameter_carries_its_derivative_later():
    x, n = X[0], 1.7
    g = srcad.grad(parameter_item, wrt=0)
    expected = (g(x, n + 1e-6) - g(x, n - 1e-6)) / 2e-6
    np.testing.assert_allclose(srcad.jacobian(g, wrt=1)(x, n), expected, rtol=1e-6)


def offset(x):
    return (0.0,)


def shift_of(x):
    o = offset(x)
    return o[0]


def shifted(x):
    s = shift_of(x)
    return np.sum(x * 2.0 ** s)


def test_an_item_made_by_another_function_of_yours_follows_it_when_it_changes():
    # shift_of(x) returns what offset gives; rebound to depend on x, the derivative must follow:
    # shift_of carries no derivative the first time, so it is not compiled, and only a guard on
    # offset (which srcad does not keep for it) could tell: srcad does not take it for constant
    global offset
    x = X[0].copy()
    check_grads(shifted, (x,))
    saved = offset
    try:
        offset = lambda x: (np.sum(x) * 0.1,)  # noqa: E731
        check_grads(shifted, (x,))
    finally:
        offset = saved


def squash(x, bounds=None):
    if bounds is None:
        bounds = (0.0, 1.0)
    return np.clip(x, bounds[0], bounds[1])


def clipped(x, lo, hi):
    return np.sum(squash(x, (lo, hi)) ** 2)


def rebound_parameter(t, flag):
    if flag:
        t = (1.0, 2.0)
    return t[0] * 3.0 + t[1]


@pytest.mark.parametrize("wrt", [1, 2])
def test_a_parameter_rebound_on_a_branch_keeps_its_items_derivatives(wrt):
    # probe 17A: a parameter is bound by the call too; its items were taken for the display's
    check_grads(clipped, (np.array([-2.0, 0.3, 3.0]), -1.0, 2.0), wrt=wrt, modes=("rev",))
    check_jvp(clipped, (np.array([-2.0, 0.3, 3.0]), -1.0, 2.0), wrt=wrt)
    np.testing.assert_allclose(srcad.grad(rebound_parameter)((0.5, 1.5), False), (3.0, 1.0))


HISTORY = []


def record(x):
    HISTORY.append(x * 2.0)
    return HISTORY


def recorded(x):
    r = record(x)
    return np.sum(r[-1] ** 2)


def test_a_helper_that_stores_into_a_global_is_not_read_as_constant():
    # probe 17A: the global list it returns was taken for a constant; the gradient was 0
    with pytest.raises(SrcadSyntaxError, match="stores"):
        srcad.grad(recorded)(X[0])
    with pytest.raises(SrcadSyntaxError, match="stores|made for its effect"):
        srcad.jvp(recorded, (X[0],), (X[0],))
    HISTORY.clear()


def test_a_helper_whose_file_changed_since_it_was_imported_is_not_read_as_constant(tmp_path, monkeypatch):
    # what a helper returns is read off its source: once the file no longer holds the code that
    # runs, that reading is not trusted (here the running code depends on x, the file's does not)
    (tmp_path / "stale_helper.py").write_text("import numpy as np\n\ndef offset(x):\n    return (np.sum(x) * 0.1,)\n")
    (tmp_path / "stale_user.py").write_text(
        "import numpy as np\nfrom stale_helper import offset\n\n"
        "def shift(x):\n    o = offset(x)\n    return o[0]\n\n"
        "def loss(x):\n    s = shift(x)\n    return np.sum(x * 2.0 ** s)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import stale_helper  # noqa: F401  (imported before its file changes)
    import stale_user
    (tmp_path / "stale_helper.py").write_text("import numpy as np\n\ndef offset(x):\n    return (0.0,)\n")
    import linecache
    linecache.clearcache()
    x = X[0].copy()
    try:
        check_grads(stale_user.loss, (x,))
    except SrcadError as error:  # refused: the helper's file is not its code
        assert "edited" in str(error) or "not the code" in str(error)
