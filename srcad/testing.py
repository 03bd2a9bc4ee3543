"""Testing helpers shipped for users: check a gradient (``check_grads``) or a forward-mode
tangent (``check_jvp``) against finite differences."""
import copy
import inspect
from typing import Any, Callable, Literal, Optional, Sequence, Union

import numpy as np

from .pytrees import field_names, is_dataclass_instance, is_node, leaves as _flatten, rebuild as _unflatten, remade


def _random_like(x, rng):
    if is_node(x):
        return _unflatten(x, [_random_like(leaf, rng) for leaf in _flatten(x)])
    return rng.standard_normal(np.shape(x)) if np.ndim(x) else float(rng.standard_normal())


def _run(fn, args):
    """``fn(*args)`` on copies: a function that updates its arguments in place must see each
    time what the caller gave (Python would change the caller's arrays; srcad never does).
    Arguments Python cannot copy (an object holding a lock) are passed as they are."""
    return fn(*_copied(args))


def _copied(args):
    try:
        memo = {}
        _copy_named_tuples(args, memo)
        return copy.deepcopy(list(args), memo)
    except Exception:  # noqa: BLE001 (whatever copy.deepcopy raises for what it cannot copy)
        return list(args)


def _copy_named_tuples(x, memo):
    """Put in ``memo`` a deep copy of each named tuple in ``x``'s lists, tuples, dicts and
    dataclass fields, made without its ``__new__``: ``copy.deepcopy`` calls ``__new__`` again,
    and one of yours that scales or checks its arguments would change them."""
    if isinstance(x, dict):
        items = list(x.values())
    elif isinstance(x, (list, tuple)):
        items = list(x)
    elif is_dataclass_instance(x):
        items = [getattr(x, name) for name in field_names(x)]
    else:
        return
    for item in items:
        _copy_named_tuples(item, memo)
    if isinstance(x, tuple) and hasattr(type(x), "_fields") and id(x) not in memo:
        memo[id(x)] = remade(x, [copy.deepcopy(item, memo) for item in x])


def _assert_unchanged(args, kept, what):
    """Raise where an array of numbers among ``args`` no longer holds what ``kept`` (a deep copy
    made before srcad ran) holds."""
    for i, (now, before) in enumerate(zip(args, kept)):
        for a, b in zip(_flatten(now), _flatten(before)):
            if (isinstance(a, np.ndarray) and a.dtype.kind in "biufc"
                    and not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")):
                raise AssertionError(f"{what} changed the caller's argument {i}: srcad must never change it")


def _vdot(a, b):
    return float(sum(np.vdot(np.asarray(u, np.float64), np.asarray(w, np.float64))
                     for u, w in zip(_flatten(a), _flatten(b))))


def _axpy(x, t, direction):
    """``x + t * direction`` leaf by leaf: an array stays an array (a 0-d one too, which the
    function may store into), a number a float."""
    leaves = [np.asarray(np.asarray(u, np.float64) + t * np.asarray(w, np.float64)) if isinstance(u, np.ndarray)
              or np.ndim(u) else float(u) + t * float(w) for u, w in zip(_flatten(x), _flatten(direction))]
    return _unflatten(x, leaves)


def check_grads(fun: Callable[..., Any], args: Sequence[Any], wrt: Union[int, str, Sequence[Union[int, str]]] = 0,
                v: Any = None, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7, directions: int = 3,
                seed: int = 0, mode: Literal["joint", "split", "both"] = "both",
                modes: Optional[Sequence[Literal["rev", "fwd"]]] = None, order: int = 1) -> Any:
    """Check srcad's derivatives of ``fun`` at ``args`` against central finite differences, in
    reverse mode (vᵀJ) and forward mode (J·u), to first or second order.

    Reverse mode: for random directions u (over the ``wrt`` arguments) it compares
    ``⟨vᵀJ, u⟩`` with ``⟨v, (f(x + εu) - f(x - εu)) / 2ε⟩`` and raises ``AssertionError``
    with both numbers if they differ. ``mode`` picks which generated code is checked:
    ``"joint"`` (``f.adjoint``), ``"split"`` (``vjp`` then the pullback, called twice)
    or ``"both"``. Forward mode: ``check_jvp`` (J·u against the same differences), so a wrong
    ``defjvp`` is caught as a wrong ``defvjp`` is. ``order=2`` checks the gradient's own
    derivatives too (``fun`` must return a number): grad of grad in reverse mode and the
    Hessian-vector product (forward over reverse) against finite differences of the gradient,
    which catches a rule whose first derivative is right but whose derivative is not.
    Returns the gradient it checked.

    Parameters:
        fun: the function (anything ``srcad.grad`` accepts).
        args: its arguments, by position.
        wrt: position(s) or name(s) of the argument(s) to check; default ``0``.
        v: the cotangent, shaped like the output; default a random one.
        eps: the finite-difference step.
        rtol, atol: the tolerance, ``atol + rtol * max(|numeric|, |analytic|, 1)``.
        directions: how many random directions u (0: none; reverse mode's vᵀJ is computed and
            its shape checked, forward mode is not run).
        seed: the seed of the random directions (and of ``v``).
        mode: ``"joint"``, ``"split"`` or ``"both"`` (the reverse-mode code checked).
        modes: ``"rev"``, ``"fwd"`` or both; by default both, where a mode srcad refuses
            for ``fun`` (forward mode through a ``custom_vjp`` without ``defjvp``) is left out,
            since srcad computes nothing there that could be wrong. Named, each is checked
            and srcad's refusal raised.
        order: 1, or 2 to check the derivatives of the gradient too.

    Returns: vᵀJ as the first mode checked computed it (a tuple for a tuple ``wrt``); J·u
    for ``modes=("fwd",)``.

    Raises: ``AssertionError`` where srcad and finite differences disagree, where a
    gradient is not shaped like its argument, where two pullback calls differ, or where a
    second call with the same arguments compiles the code again; srcad's
    own errors (``WrtError``, ``ArgumentError``, ``SrcadSyntaxError``, ...) as ``srcad.vjp``.

    >>> import numpy as np
    >>> from srcad.testing import check_grads
    >>> def f(x, y):
    ...     return np.sin(x) * y
    >>> np.round(check_grads(f, (np.array([0.0, 1.0]), 2.0), wrt=(0, 1), v=np.ones(2))[0], 4)
    array([2.    , 1.0806])
    """
    from .errors import SrcadError

    if order not in (1, 2):
        raise ValueError(f"check_grads checks order 1 or 2, not {order!r}")
    asked = modes is not None
    modes = tuple(modes) if asked else ("rev", "fwd")
    if not modes or set(modes) - {"rev", "fwd"}:
        raise ValueError(f"modes must name 'rev', 'fwd' or both, not {modes!r}")
    checked = []
    if "rev" in modes:
        checked.append(_check_reverse(fun, args, wrt, v, eps, rtol, atol, directions, seed, mode))
    if "fwd" in modes and directions > 0:  # (no direction: nothing of forward mode's to compare)
        try:
            tangent = check_jvp(fun, args, wrt, eps=eps, rtol=rtol, atol=atol, directions=directions, seed=seed)
        except SrcadError:
            if asked:
                raise
        else:
            checked.append(tangent)
    if order == 2:
        from .api import grad

        gradient = grad(fun, wrt=wrt)
        try:
            check_grads(gradient, args, wrt, None, eps, rtol, atol, directions, seed, mode, modes if asked else None)
        except AssertionError as e:
            raise AssertionError(f"second order (derivative of the gradient): {e}") from None
    return checked[0]


def _check_reverse(fun, args, wrt, v, eps, rtol, atol, directions, seed, mode):
    """check_grads in reverse mode, first order."""
    from .api import _as_differentiable

    fn = fun  # a srcad.differentiable runs the original function (a bound method with its self)
    d = _as_differentiable(fn, wrt)  # a gradient made by srcad.grad: its generated adjoint
    args = list(args)
    positions = _positions(d, fn, wrt)
    kept = _copied(args)
    y = _run(fn, args)
    rng = np.random.default_rng(seed)
    if v is None:
        v = _random_like(y, rng)
    results = []
    name = getattr(fn, '__qualname__', fn)
    if mode in ("joint", "both"):
        results.append(("adjoint", d.adjoint(*args, v)))
        _assert_compiles_nothing(lambda: d.adjoint(*args, v), f"adjoint of {name}")
    if mode in ("split", "both"):
        y2, pullback = d.vjp(*args)
        _assert_compiles_nothing(lambda: d.vjp(*args), f"vjp of {name}")
        _assert_close(y2, y, "vjp's forward value", rtol, atol)
        first = pullback(v)
        again = pullback(v)
        for a, b in zip(_flatten(first), _flatten(again)):
            _assert_close(a, b, "a second pullback call", 0, 0)
        results.append(("pullback", first))
    for what, grads in results:
        grads_t = (grads,) if not isinstance(wrt, (tuple, list)) else grads
        _assert_unchanged(args, kept, what)
        for pos, g in zip(positions, grads_t):
            _assert_structure(g, args[pos], what)
        for k in range(directions):
            direction = [_random_like(args[p], rng) for p in positions]

            def shifted(t):
                moved = list(args)
                for p, u in zip(positions, direction):
                    moved[p] = _axpy(args[p], t, u)
                return _run(fn, moved)

            numeric = _vdot(v, _sub(shifted(eps), shifted(-eps))) / (2 * eps)
            analytic = sum(_vdot(g, u) for g, u in zip(grads_t, direction))
            if not abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic), 1.0):
                raise AssertionError(
                    f"{what} of {name}: directional derivative {analytic!r} "
                    f"but finite differences give {numeric!r} (direction {k})")
    return results[0][1]


def check_jvp(fun: Callable[..., Any], args: Sequence[Any], wrt: Union[int, str, Sequence[Union[int, str]]] = 0,
              direction: Optional[Any] = None, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7,
              directions: int = 3, seed: int = 0) -> Any:
    """Check srcad's forward mode J·u for ``fun`` at ``args`` against central finite differences.

    Along tangents u of the ``wrt`` arguments (positions or names; ``direction`` if given,
    shaped like the argument, a tuple of them when ``wrt`` is a tuple; else ``directions``
    random ones) it runs the generated forward-mode code through ``srcad.jvp``, checks that
    its value is ``fun(*args)`` and that the tangent has the result's structure and shapes,
    and compares the tangent entry by entry with ``(f(x + εu) - f(x - εu)) / 2ε``, raising
    ``AssertionError`` with both numbers where they differ by more than
    ``atol + rtol * max(|tangent|, |difference|)``. Returns the tangent of the first
    direction it checked (None for ``directions=0``).

    Parameters:
        fun: the function (anything ``srcad.jvp`` accepts).
        args: its arguments, by position.
        wrt: position(s) or name(s) of the argument(s) that move; default ``0``.
        direction: the tangent (a tuple of them for a tuple ``wrt``); default random ones.
        eps: the finite-difference step.
        rtol, atol: the tolerance.
        directions: how many random directions, when ``direction`` is not given.
        seed: the seed of the random directions.

    Returns: J·u for the first direction checked, shaped like the output; None for
    ``directions=0``.

    Raises: ``AssertionError`` where the value, the tangent's structure or its entries
    disagree, or where calling again compiles the code again; srcad's own errors as ``srcad.jvp``.

    >>> import numpy as np
    >>> from srcad.testing import check_jvp
    >>> def f(x):
    ...     return np.exp(x)
    >>> check_jvp(f, (np.array([0.0, 0.0]),), direction=np.array([1.0, 2.0]))
    array([1., 2.])
    """
    from .derivatives import jvp

    from .api import _as_differentiable

    positions = _positions(_as_differentiable(fun, wrt), fun, wrt)
    args = list(args)
    name = getattr(fun, "__qualname__", fun)
    kept = _copied(args)
    y = _run(fun, args)
    rng = np.random.default_rng(seed)
    if direction is not None:
        chosen = [tuple(direction) if isinstance(wrt, (tuple, list)) else (direction,)]
    else:
        chosen = [tuple(_random_like(args[p], rng) for p in positions) for _ in range(directions)]
    checked = []
    for k, tangents in enumerate(chosen):
        moving = [None] * len(args)
        for p, u in zip(positions, tangents):
            moving[p] = u
        value, tangent = jvp(fun, args, moving)
        if k == 0:
            _assert_compiles_nothing(lambda: jvp(fun, args, moving), f"jvp of {name}")
        _assert_unchanged(args, kept, f"jvp of {name}")
        _assert_close(value, y, "jvp's value", rtol, atol)
        # forward mode gives a named tuple result (slogdet, svd) a plain tuple of tangents
        _assert_structure(tangent, y, f"jvp of {name}", "tangent", "result", exact_types=False)

        def shifted(t):
            return _run(fun, [a if u is None else _axpy(a, t, u) for a, u in zip(args, moving)])

        plus, minus = _flatten(shifted(eps)), _flatten(shifted(-eps))
        for item, (got, up, down) in enumerate(zip(_flatten(tangent), plus, minus)):
            numeric = (np.asarray(up, np.float64) - np.asarray(down, np.float64)) / (2 * eps)
            _assert_tangent_close(np.asarray(got, np.float64), numeric, rtol, atol,
                                  f"jvp of {name}" + (f", result item {item}" if len(plus) > 1 else "")
                                  + f" (direction {k})")
        checked.append(tangent)
    return checked[0] if checked else None


def _positions(d, fn, wrt):
    """The positions among the arguments the caller passes (after a bound method's self or a
    partial's arguments) of the ``wrt`` parameters; ``d``: ``fn`` as srcad differentiates it."""
    wrt_tuple = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
    params = list(d._sig.visible) if d._sig is not None else list(inspect.signature(fn).parameters)
    return [w if isinstance(w, int) else params.index(w) for w in wrt_tuple]


def _assert_compiles_nothing(call, where):
    """``call()``, made once already, runs the code made then: a guard of that code that cannot
    hold would make srcad compile on every call."""
    from .compile import _CACHE

    made = _CACHE.made_in_this_thread()
    call()
    if _CACHE.made_in_this_thread() != made:
        raise AssertionError(f"{where}: called again with arguments of the same shapes, srcad compiled its code "
                             "again (a guard of the compiled code does not hold right after compiling it)")


def _assert_tangent_close(got, numeric, rtol, atol, where):
    excess = np.abs(got - numeric) - (atol + rtol * np.maximum(np.abs(got), np.abs(numeric)))
    wrong = ~(excess <= 0)  # NaN in either is wrong
    if wrong.any():
        worst = np.unravel_index(np.argmax(np.where(np.isnan(excess), np.inf, excess)), np.shape(excess))
        index = f" at index {tuple(int(i) for i in worst)}" if np.ndim(excess) else ""
        raise AssertionError(f"{where}: tangent {float(got[worst])!r} but finite differences give "
                             f"{float(numeric[worst])!r}"
                             f"{index} ({int(wrong.sum())} of {wrong.size} entries differ)")


def _sub(a, b):
    leaves = [np.asarray(u, np.float64) - np.asarray(w, np.float64) for u, w in zip(_flatten(a), _flatten(b))]
    return _unflatten(a, leaves) if is_node(a) else leaves[0]


def _assert_close(a, b, what, rtol, atol):
    for u, w in zip(_flatten(a), _flatten(b)):
        if not np.allclose(u, w, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{what} differs: {u!r} vs {w!r}")


def _assert_structure(g, x, name, what="gradient", of="argument", exact_types=True):
    """``g`` (the ``what``) is laid out like ``x`` (the ``of``): the same containers and shapes;
    without ``exact_types``, a plain tuple stands for a named tuple."""
    if isinstance(x, dict):
        assert isinstance(g, dict) and set(g) == set(x), f"{name}: {what} keys {list(g)} != {list(x)}"
        for k in x:
            _assert_structure(g[k], x[k], name, what, of, exact_types)
    elif isinstance(x, (list, tuple)):
        container = type(x) if exact_types else (list if isinstance(x, list) else tuple)
        assert isinstance(g, container) and len(g) == len(x), f"{name}: {what} {type(g).__name__} != {type(x).__name__}"
        for gi, xi in zip(g, x):
            _assert_structure(gi, xi, name, what, of, exact_types)
    elif is_node(x):  # a dataclass
        assert type(g) is type(x), f"{name}: {what} {type(g).__name__} != {type(x).__name__}"
        _assert_structure(_flatten(g), _flatten(x), name, what, of, exact_types)
    else:
        assert np.shape(g) == np.shape(x), f"{name}: {what} shape {np.shape(g)} != {of} shape {np.shape(x)}"
