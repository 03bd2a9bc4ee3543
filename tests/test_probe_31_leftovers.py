"""What probe 31 (application-style code) left: false refusals and messages that did not say
the truth.

- Second order through a store into a shallow copy of a dict or list parameter
  (``p = params.copy()`` or ``copy.copy(params)``, then ``p["w"] = ...``) was refused with
  "copy first": the derivative srcad made starts with ``params = as_real(params)``, and the
  memory analysis no longer knew ``params`` held a dict (a call it could not read may return
  anything), so the copy of it was not a new dict.
- A helper listing a dict's keys (``sorted(p)``, ``sorted(p.keys())``, ``list(p)``) called on a
  dict of arrays was refused at second order as "sorted() of differentiated values": the
  helper's derivative returns those keys to its backward sweep, and differentiated again
  nothing told the helper that its argument was a dict whose keys are strings.
"""
import copy

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([[1.0, 0.5, -0.3], [0.2, -0.8, 1.1]])


def _dict_args():
    return ({"w": np.array([0.7, -1.2, 0.4]), "b": 0.3},)


def _list_args():
    return ([np.array([0.7, -1.2, 0.4]), np.array([0.5, -0.4])],)


def method_copied_dict(params):
    p = params.copy()
    p["w"] = p["w"] * 3.0
    return np.sum(np.tanh(X @ p["w"])) * params["b"] + np.sum(p["w"] * params["w"])


def copy_copied_dict(params):
    p = copy.copy(params)
    p["w"] = p["w"] * 3.0 + p["b"]
    return np.sum(np.tanh(X @ p["w"]) ** 2) * params["b"]


def method_copied_list(ws):
    p = ws.copy()
    p[0] = p[0] * 3.0
    return np.sum(np.tanh(X @ p[0])) * np.sum(ws[1] ** 2)


def _check_to_second_order(f, args):
    kept = copy.deepcopy(args)
    check_grads(f, args, modes=("rev",))
    check_jvp(f, args)
    check_grads(srcad.grad(f), args, rtol=1e-4, atol=1e-6, modes=("rev",))  # reverse over reverse
    check_jvp(srcad.grad(f), args, rtol=1e-4, atol=1e-6)  # forward over reverse (hvp, hessian)
    for given, before in zip(args, kept):
        for k in (given.keys() if isinstance(given, dict) else range(len(given))):
            np.testing.assert_array_equal(given[k], before[k])


@pytest.mark.parametrize("f, make", [(method_copied_dict, _dict_args), (copy_copied_dict, _dict_args),
                                     (method_copied_list, _list_args)])
def test_second_order_through_a_store_into_a_shallow_copy_of_a_parameter(f, make):
    _check_to_second_order(f, make())


def test_hessian_through_a_store_into_a_copied_dict():
    args = _dict_args()
    h = srcad.hessian(method_copied_dict)(*args)
    e, w = 1e-5, args[0]["w"]
    grad = srcad.grad(method_copied_dict)
    for i in range(3):
        up, down = dict(args[0]), dict(args[0])
        up["w"], down["w"] = w + e * np.eye(3)[i], w - e * np.eye(3)[i]
        column = (grad(up)["w"] - grad(down)["w"]) / (2 * e)
        np.testing.assert_allclose(np.asarray(h["w"]["w"])[:, i], column, rtol=1e-5, atol=1e-7)


def sorted_keys(p):
    return sorted(p)


def sorted_key_view(p):
    return sorted(p.keys())


def listed_keys(p):
    return list(p)


def flattened_by_sorted_keys(params):
    keys = sorted_keys(params)
    return np.concatenate([np.ravel(params[k]) for k in keys])


def flattened_by_key_view(params):
    keys = sorted_key_view(params)
    return np.concatenate([np.ravel(params[k]) for k in keys])


def flattened_by_listed_keys(params):
    return np.concatenate([np.ravel(params[k]) for k in listed_keys(params)])


def flattened_here(params):
    keys = sorted(params)
    return np.concatenate([np.ravel(params[k]) for k in keys])


def _loss_of(flattened):
    def loss(params):
        v = flattened(params)
        return np.sum(np.tanh(v) ** 2) + params["b"] * np.sum(np.sin(v) * v)
    return loss


def _params():
    return {"w": np.array([0.7, -1.2, 0.4]), "b": np.array(0.3)}


@pytest.mark.parametrize("flattened", [flattened_by_sorted_keys, flattened_by_key_view, flattened_by_listed_keys,
                                       flattened_here])
def test_a_helper_listing_the_keys_of_a_dict_of_arrays(flattened):
    loss = _loss_of(flattened)
    _check_to_second_order(loss, (_params(),))
    h = srcad.hessian(loss)(_params())
    assert set(h) == {"w", "b"} and np.shape(h["w"]["w"]) == (3, 3)


# Item 3: ``L = [[w]]; L[0].append(v)``. The memory analysis keeps what a list holds at any depth
# together, so it cannot tell L[0] (a new list) from w: the refusal says so, and what to write.
def grows_a_list_in_a_list(w, v):
    L = [[w]]
    L[0].append(v)  # grows-item
    return np.sum(L[0][0] * L[0][1])


def grows_its_own_row(w, v):
    row = [w]
    row.append(v)
    L = [row]
    return np.sum(L[0][0] * L[0][1])


def test_growing_a_list_held_in_a_list_says_what_srcad_cannot_tell_apart():
    w, v = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])
    with pytest.raises(srcad.SrcadSyntaxError) as caught:
        srcad.grad(grows_a_list_in_a_list)(w, v)
    message = str(caught.value)
    assert "test_probe_31_leftovers.py:" in message and "# grows-item" in message
    assert "'L[0]', a list held in a list or dict" in message
    assert "may be the argument 'w'" in message
    assert "keep it in a name of its own" in message and ".copy()" not in message
    check_grads(grows_its_own_row, (w, v), wrt=(0, 1))  # the advice, taken


# Item 4: ``CACHE[key] = value`` into a module-level dict said "copy first ('CACHE = ....copy()')".
CACHE = {}


def caches_a_value(w):
    y = np.tanh(w)
    CACHE["last"] = y  # cache-store
    return np.sum(y ** 2)


def caches_without_derivative(w):
    y = np.tanh(w)
    CACHE.update({"last": srcad.stop_gradient(y)})
    return np.sum(y ** 2)


def test_storing_into_a_dict_of_the_module_says_why_and_what_to_write():
    w = np.array([0.5, -1.0, 2.0])
    with pytest.raises(srcad.SrcadSyntaxError) as caught:
        srcad.grad(caches_a_value)(w)
    message = str(caught.value)
    assert "# cache-store" in message and "....copy()" not in message
    assert "srcad does not change 'CACHE', a dict of your module, in place" in message
    assert "write 'CACHE.update({'last': srcad.stop_gradient(y)})', which runs as written" in message
    assert "has_aux=True" in message
    assert CACHE == {}
    check_grads(caches_without_derivative, (w,))  # the advice, taken
    srcad.grad(caches_without_derivative)(w)  # the update runs as written, once
    np.testing.assert_array_equal(CACHE["last"], np.tanh(w))
