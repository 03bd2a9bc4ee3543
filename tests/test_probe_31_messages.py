"""Probe 31: a training loop logging into a dict of lists (``history["loss"].append(loss)``) is
refused (docs/limitations.md: keep the list in a name of its own), but the message told the
user to write ``history['loss'].copy()``, which would drop every item appended. It now says
what the limitations page says."""
import numpy as np
import pytest

import srcad


def logged_training(w, X, y):
    history = {"loss": [], "step": []}
    for step in range(3):
        loss = np.sum((X @ w - y) ** 2)
        history["loss"].append(loss)
        w = w - 0.01 * X.T @ (X @ w - y)
    return sum(history["loss"])


def rows_of_lists(w):
    rows = [[], []]
    for i in range(2):
        rows[i].append(w * i)
    return np.sum(rows[1][0])


@pytest.mark.parametrize("f, args", [
    (logged_training, (np.ones(3), np.ones((4, 3)), np.ones(4))),
    (rows_of_lists, (np.ones(3),)),
])
def test_growing_a_list_held_in_a_container_says_keep_it_in_a_name(f, args):
    with pytest.raises(srcad.SrcadError) as caught:
        srcad.grad(f)(*args)
    message = str(caught.value)
    assert "test_probe_31_messages.py:" in message
    assert "keep it in a name of its own ('items = []', then 'items.append(...)')" in message
    assert ".copy()" not in message


def logged_training_rewritten(w, X, y):
    losses = []
    for step in range(3):
        losses.append(np.sum((X @ w - y) ** 2))
        w = w - 0.01 * X.T @ (X @ w - y)
    history = {"loss": losses}
    return sum(history["loss"])


def test_the_advice_is_differentiated():
    from srcad.testing import check_grads
    rng = np.random.default_rng(0)
    check_grads(logged_training_rewritten, (rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(4)))
