"""Batched weight adjoints (``passes.batch_products``): a reverse loop's per-step products
``dW += P.T @ D`` summed in one product after the loop.

Checked against finite differences in random directions, at first order in both generated
forms and at second order (the batched code is differentiated again); the pass's
conditions are checked one by one on generated-style code, run before and after with the
same arrays."""
import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad.naming import Namer
from srcad.passes.batch_products import batch_products
from srcad.passes.shapes import Spec
from srcad.testing import check_grads


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    total = 0.0
    for step in range(xs.shape[0]):
        h = np.tanh(xs[step] @ Wx + h @ Wh + b)
        total = total + np.sum(h * h)
    return total


def gru_like(W, U, xs, h0):
    """A gate and a state sharing one step: two weights, their operands made in the step."""
    h = h0
    out = 0.0
    for t in range(len(xs)):
        z = 1.0 / (1.0 + np.exp(-(xs[t] @ W)))
        h = z * h + (1.0 - z) * np.tanh(h @ U)
        out = out + np.sum(np.sin(h))
    return out


def lstm(Wx, Wh, b, xs, h0):
    """Gates sliced from one product: their adjoints are stored into slices of one array."""
    H = h0.shape[1]
    h, c = h0, h0 * 0.5
    loss = 0.0
    for t in range(xs.shape[0]):
        a = xs[t] @ Wx + h @ Wh + b
        i = 1.0 / (1.0 + np.exp(-a[:, :H]))
        f = 1.0 / (1.0 + np.exp(-a[:, H:2 * H]))
        g = np.tanh(a[:, 2 * H:])
        c = f * c + i * g
        h = np.tanh(c)
        loss = loss + np.sum(h * h)
    return loss


def _lstm_args(rng, steps=4, batch=3, inputs=2, hidden=3):
    return (rng.standard_normal((inputs, 3 * hidden)) * 0.5, rng.standard_normal((hidden, 3 * hidden)) * 0.5,
            rng.standard_normal(3 * hidden) * 0.1, rng.standard_normal((steps, batch, inputs)),
            rng.standard_normal((batch, hidden)) * 0.3)


def _rnn_args(rng, steps=6, batch=4, inputs=3, hidden=5):
    return (rng.standard_normal((inputs, hidden)) * 0.5, rng.standard_normal((hidden, hidden)) * 0.5,
            rng.standard_normal(hidden) * 0.1, rng.standard_normal((steps, batch, inputs)),
            rng.standard_normal((batch, hidden)) * 0.3)


def _adjoint_source(fn, args, wrt):
    d = srcad.differentiable(fn, wrt=wrt)
    d.adjoint(*args)
    return d.adjoint_source


def test_rnn_weight_adjoints_are_one_product_and_match_finite_differences():
    args = _rnn_args(np.random.default_rng(0))
    assert "np.concatenate(" in _adjoint_source(rnn, args, (0, 1, 2))  # the path under test is taken
    check_grads(rnn, args, wrt=(0, 1, 2, 3, 4))


def test_a_loop_that_never_runs_adds_nothing():
    args = _rnn_args(np.random.default_rng(1), steps=0)
    gWx, gWh, gb = srcad.grad(rnn, wrt=(0, 1, 2))(*args)
    assert not gWx.any() and not gWh.any() and not gb.any()


def test_one_step_and_many_steps():
    for steps in (1, 2, 17):
        check_grads(rnn, _rnn_args(np.random.default_rng(steps), steps=steps), wrt=(0, 1, 2))


def test_iterating_a_stack_of_inputs():
    rng = np.random.default_rng(2)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 4)) * 0.5, rng.standard_normal((5, 2, 3)),
            rng.standard_normal((2, 4)) * 0.2)
    assert "np.concatenate(" in _adjoint_source(gru_like, args, (0, 1))
    check_grads(gru_like, args, wrt=(0, 1, 3))


def test_gate_adjoints_stored_into_slices_then_batched():
    args = _lstm_args(np.random.default_rng(8))
    assert "np.concatenate(" in _adjoint_source(lstm, args, (0, 1, 2))
    check_grads(lstm, args, wrt=(0, 1, 2, 4))
    check_grads(srcad.grad(lstm, wrt=1), args, wrt=1, v=np.random.default_rng(9).standard_normal(args[1].shape),
                rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtypes(dtype):
    args = tuple(a.astype(dtype) for a in _rnn_args(np.random.default_rng(3)))
    gradients = srcad.grad(rnn, wrt=(0, 1))(*args)
    args64 = tuple(a.astype(np.float64) for a in args)
    expected = srcad.grad(rnn, wrt=(0, 1))(*args64)
    for g, e, a in zip(gradients, expected, args):
        assert g.dtype == a.dtype
        np.testing.assert_allclose(g, e, rtol=1e-4 if dtype is np.float32 else 1e-10)


def test_second_order_through_the_batched_code():
    args = _rnn_args(np.random.default_rng(4), steps=4)
    rng = np.random.default_rng(5)
    # reverse over reverse: the gradient, batched, differentiated again
    check_grads(srcad.grad(rnn, wrt=1), args, wrt=1, v=rng.standard_normal(args[1].shape), rtol=1e-4, atol=1e-6)
    check_grads(srcad.grad(rnn, wrt=0), args, wrt=(0, 1), v=rng.standard_normal(args[0].shape), rtol=1e-4,
                atol=1e-6)


def test_arguments_are_not_changed():
    args = _rnn_args(np.random.default_rng(6))
    before = [a.copy() for a in args]
    srcad.grad(rnn, wrt=(0, 1, 2, 3, 4))(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


# ---- the conditions, on generated-style code --------------------------------------------

_TEMPLATE = '''
def f_adjoint(W, xs, v):
    dW = zeros_like(W)
    dh = zeros_like(v)
    h = v
    d = v * 1.0
    for t in reversed(_range1):
{body}
    return dW
'''
_POSITIVE = """\
        d = dh * xs[t]
        dW += h.T @ d
        dh = d @ W.T
        dh += v"""


def _run(body, transform):
    fn = gast.parse(_TEMPLATE.format(body=body)).body[0]
    specs = {"W": Spec((3, 3), np.float64), "v": Spec((2, 3), np.float64), "h": Spec((2, 3), np.float64),
             "d": Spec((2, 3), np.float64), "e": Spec((2, 3), np.float64)}
    A.set_anno(fn, "specs", specs)
    A.set_anno(fn, "adjoint_of", {"dW": "W", "dh": "h"})
    A.set_anno(fn, "n_forward", 0)
    A.set_anno(fn, "namer", Namer({n.id for n in A.walk(fn) if isinstance(n, gast.Name)} | {"f_adjoint"}))
    if transform:
        fn = batch_products(fn, lambda name, obj: name)
    text = A.to_source(fn)
    rng = np.random.default_rng(7)
    W, xs, v = rng.standard_normal((3, 3)), rng.standard_normal((5, 2, 3)), rng.standard_normal((2, 3))
    namespace = {"np": np, "zeros_like": np.zeros_like, "_range1": range(5), "copy_value": np.copy}
    exec(text, namespace)
    return text, namespace["f_adjoint"](W, xs, v)


@pytest.mark.parametrize("body, batched", [
    (_POSITIVE, True),
    # the accumulator is read in the loop: the partial sums are seen
    (_POSITIVE + "\n        dh = dh + dW[0]", False),
    # the kept operand is updated in place after the product
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        d += v
        dh = d @ W.T""", False),
    # the other operand is updated in place (and has another name)
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        h += d
        dh = d @ W.T""", False),
    # an in-place update of a name whose array another name holds
    ("""\
        e = dh * 2.0
        h = e
        d = dh * xs[t]
        dW += h.T @ d
        e += v
        dh = d @ W.T""", False),
    # the kept operand updated in place under another name
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        e = d
        e += v
        dh = d @ W.T""", False),
    # an in-place update of a name another name passes on, neither kept: batched
    ("""\
        e = dh
        d = e * xs[t]
        dW += h.T @ d
        dh = d @ W.T
        dh += e""", True),
    # the kept operand finished in place before it is kept: batched
    ("""\
        d = dh * xs[t]
        d += v
        dW += h.T @ d
        dh = d @ W.T""", True),
    # made anew each pass, its items stored before it is kept: batched
    ("""\
        d = dh * 0.0
        d[:, :1] += xs[t][:, :1]
        d[:, 1:] = v[:, 1:]
        dW += h.T @ d
        dh = d @ W.T""", True),
    # ... an item stored after it is kept
    ("""\
        d = dh * 0.0
        d[:, :1] += xs[t][:, :1]
        dW += h.T @ d
        d[:, 1:] = v[:, 1:]
        dh = d @ W.T""", False),
    # ... updated again after it is kept
    ("""\
        d = dh * xs[t]
        d += v
        dW += h.T @ d
        d += v
        dh = d @ W.T""", False),
    # ... updated before it is made (last pass's array)
    ("""\
        dh = dh * 1.0
        d += v
        d = dh * xs[t]
        dW += h.T @ d
        dh = d @ W.T""", False),
    # a subscript store in the loop
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        d[0] = 1.0
        dh = d @ W.T""", False),
    # a call that may change an array
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        np.copyto(d, v)
        dh = d @ W.T""", False),
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        np.multiply(d, 2.0, out=d)
        dh = d @ W.T""", False),
    # an early exit: the statements after it do not run every pass
    ("""\
        d = dh * xs[t]
        if t == 2:
            break
        dW += h.T @ d
        dh = d @ W.T""", False),
    # an operand bound outside the loop too, never updated in place: batched
    ("""\
        dW += h.T @ dh
        dh = dh @ W.T""", True),
    # an operand bound again between two statements keeping it: a list per value
    ("""\
        d = dh * xs[t]
        dW += h.T @ d
        d = d * 0.5 + v
        dW += h.T @ d
        dh = d @ W.T""", True),
])
def test_conditions(body, batched):
    text, result = _run(body, transform=True)
    _, expected = _run(body, transform=False)
    assert ("np.concatenate" in text) == batched, text
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


# ---- random recurrent programs: batched and not, the same gradients -------------------

_STEP_LINES = [
    "z = xs[t] @ Wx + h @ Wh + b",
    "z = xs[t] @ Wx + h @ Wh",
    "z = (xs[t] @ Wx) * 0.5 + np.tanh(h @ Wh)",
    "z = h @ Wh + b * 0.3",
]
_STATE_LINES = [
    "h = np.tanh(z)",
    "h = 0.5 * h + 0.5 * np.tanh(z)",
    "h = np.sin(z) * 0.7",
    "h = np.tanh(z) + 0.1 * h",
]
_EXTRA_LINES = [
    "total = total + np.sum(h * h)",
    "total = total + np.sum(np.tanh(h @ Wh))",
    "g = h\n        total = total + np.sum(g * 2.0)",
    "h *= 0.9",
    "h = h * 1.0\n        h += 0.01",
    "total = total + np.sum(h @ Wh.T)",
    "total = total + np.sum(xs[t] @ Wx * h)",
]


def _recurrent_program(rng, index):
    lines = []
    for _ in range(int(rng.integers(1, 3))):
        lines.append(_STEP_LINES[rng.integers(len(_STEP_LINES))])
        lines.append(_STATE_LINES[rng.integers(len(_STATE_LINES))])
        for _ in range(int(rng.integers(0, 3))):
            lines.append(_EXTRA_LINES[rng.integers(len(_EXTRA_LINES))])
    body = "\n        ".join(lines)
    text = (f"def recurrent_{index}(Wx, Wh, b, xs, h0):\n    h = h0\n    total = 0.0\n"
            f"    for t in range(xs.shape[0]):\n        {body}\n    return total + np.sum(h)\n")
    return text


def _batched_and_not(tmp_path, monkeypatch, text, name, args, wrt):
    import importlib.util

    from srcad import compile as srcad_compile
    from srcad import pipeline

    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name)
    srcad_compile._CACHE.clear()
    d = srcad.differentiable(fn, wrt=wrt)
    batched = d.adjoint(*args)
    source = d.adjoint_source
    with monkeypatch.context() as m:
        m.setattr(pipeline, "batch_products", lambda node, ref: node)
        srcad_compile._CACHE.clear()
        plain = srcad.differentiable(fn, wrt=wrt).adjoint(*args)
    srcad_compile._CACHE.clear()
    return fn, source, batched, plain


def test_random_recurrent_programs_batched_and_not(tmp_path, monkeypatch):
    rng = np.random.default_rng(2024)
    fired = 0
    for index in range(30):
        text = _recurrent_program(rng, index)
        args = _rnn_args(rng, steps=int(rng.integers(1, 6)), batch=int(rng.integers(1, 4)))
        fn, source, batched, plain = _batched_and_not(tmp_path, monkeypatch, text, f"recurrent_{index}", args,
                                                      (0, 1, 2))
        fired += "np.concatenate(" in source
        for g, p in zip(batched, plain):
            np.testing.assert_allclose(g, p, rtol=1e-10, atol=1e-12, err_msg=text)
        if index % 5 == 0:
            check_grads(fn, args, wrt=(0, 1, 2, 4), rtol=1e-4, atol=1e-6)
    assert fired >= 10  # the pass is exercised, not skipped by every program
