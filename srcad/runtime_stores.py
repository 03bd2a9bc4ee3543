"""What NumPy's in-place functions write, so that ``normalize`` can make a call of one an
element store srcad differentiates (``passes.effect_calls.library_store``):
``np.fill_diagonal(a, v)`` is ``a[diagonal_positions(a, v)] = v`` and ``np.copyto(a, v)`` is
``check_copyto(a, v); a[...] = v``; ``a.fill(v)`` is ``check_fill(a, v, ...); a[...] = v`` and
``np.put_along_axis(a, i, v, axis)`` is ``a[along_axis_positions(a, i, axis, ...)] = v``; ``rng.shuffle(a)`` is ``a[...] = a[shuffle_order(rng, a)]``; a helper's ``p += e`` on the caller's array is ``p[...] += e``
after ``check_updated_array(p, ...)``; ``b = self.W.copy()``, updated in place later, runs after
``check_array_receiver(self.W, ...)``. All raise where the NumPy call would fail, or where the store
would not be that call (or the method not an array's)."""
import numpy as np

from .errors import UnsupportedCaseError


def diagonal_positions(a, val, wrap, where):
    """The positions ``np.fill_diagonal(a, val, wrap)`` (at ``where``, ``file:line``) writes,
    as an index (NumPy's errors too). The store ``a[positions] = val`` is that call where ``val`` is one number or one per
    position; NumPy repeats or cuts any other ``val`` to fit, which a store does not: refused."""
    marks = np.zeros_like(a, dtype=bool)
    np.fill_diagonal(marks, True, wrap=wrap)
    positions = np.nonzero(marks)
    count = positions[0].size  # (fill_diagonal refuses an array of fewer than 2 dimensions)
    if np.ndim(val) > 1 or np.size(val) not in (1, count):
        raise UnsupportedCaseError(
            f"{where}: np.fill_diagonal(a, val) with val of shape {np.shape(val)}: srcad writes val to the {count} "
            "diagonal positions as an element store, which takes one number or one per position; NumPy repeats "
            f"or cuts any other val to fit: pass np.resize(val, {count}) instead")
    return positions


def shuffle_order(rng, a, name, where):
    """The order in which ``rng.shuffle(a)`` (at ``where``, ``file:line``; ``a`` named ``name``) puts the rows of the
    array ``a``: ``rng.permutation(len(a))``, which draws what the shuffle draws (NumPy's
    ``permutation`` of a length shuffles ``np.arange``); ``rng`` None is ``np.random``'s global
    generator. A list (or any other value) is refused: the store ``a[...] = a[order]`` is the
    shuffle only for an array."""
    if a.__class__ is not np.ndarray:
        raise UnsupportedCaseError(
            f"{where}: srcad differentiates a shuffle of a NumPy array as a permutation of its rows; here it is a "
            f"{type(a).__name__}: write '{name} = [{name}[k] for k in rng.permutation(len({name}))]' (or shuffle an array)")
    return (np.random if rng is None else rng).permutation(len(a))


def along_axis_positions(a, indices, axis, where):
    """The index ``np.put_along_axis(a, indices, values, axis)`` (at ``where``, ``file:line``)
    stores through, as NumPy builds it: ``indices`` on ``axis``, each other axis its ``arange``
    shaped to broadcast. NumPy's errors (a wrong axis, ndim, index dtype or bound) are raised by
    the gather ``np.take_along_axis`` of the same arguments; an array ``a`` only (a list's store
    would be no such call)."""
    if a.__class__ is not np.ndarray:
        raise UnsupportedCaseError(
            f"{where}: srcad differentiates np.put_along_axis as an element store into a NumPy array; here it is "
            f"given a {type(a).__name__}: make it an array first (np.array(...))")
    np.take_along_axis(a, indices, axis)
    axis = axis % a.ndim  # (in range: the gather checked it)
    return tuple(indices if k == axis else np.arange(n).reshape([n if j == k else 1 for j in range(a.ndim)])
                 for k, n in enumerate(a.shape))


def check_fill(a, value, text, where):
    """Raise unless ``a.fill(value)`` (``text``, at ``where``) is the store ``a[...] = value``:
    ``a`` a NumPy array (not of objects: another object's ``fill`` may do anything), ``value``
    one number (NumPy's own error for any other, which the store would broadcast)."""
    if a.__class__ is not np.ndarray or a.dtype == object:
        held = "a NumPy array of objects" if a.__class__ is np.ndarray else f"a {type(a).__qualname__}"
        raise UnsupportedCaseError(
            f"{where}'{text}' holds {held} here, but srcad made this code taking '{text}.fill(...)' for a NumPy "
            f"array's, the store '{text}[...] = value': call that object's method outside the function srcad "
            "differentiates, or hold a NumPy array in it")
    if np.ndim(value) != 0:
        np.empty((), a.dtype).fill(value)  # (NumPy's error for a value that is no scalar)


def check_copyto(dst, src):
    """Raise NumPy's error where ``np.copyto(dst, src)`` would fail to cast ``src`` into
    ``dst``'s dtype (casting ``same_kind``), which the store ``dst[...] = src`` would do silently."""
    if isinstance(dst, np.ndarray) and np.asarray(src).dtype != dst.dtype:  # (a list is no dtype to np.result_type)
        np.copyto(np.empty_like(dst), src)


def check_updated_array(value, update, helper, where):
    """Raise unless ``value`` is a NumPy array: the helper ``helper``, called for its effect, updates
    it with ``update`` (``'v += ...'``), which changes the caller's value in place only for an array
    (a number is rebound in the helper alone; srcad writes the update ``v[...] += ...``)."""
    if value.__class__ is not np.ndarray:
        raise UnsupportedCaseError(
            f"{where}'{update}' in {helper}, which is called for its effect, changes the caller's value in "
            f"place only where it is a NumPy array; here it is a {type(value).__name__}, which {helper} rebinds "
            f"for itself. Return the new value from {helper} and assign it where {helper} is called")


def check_array_receiver(value, method, text, where):
    """Raise unless ``value`` is a NumPy array (not of objects) or a number: srcad took the result of
    ``text.method(...)`` (``self.W.copy()``, ``W.sum(axis=1)``, at ``where``) for new memory, which it
    updates in place, as an array's or a number's method returns (``passes.array_receivers``); the
    method of another object may return memory it keeps."""
    kind = value.__class__
    if kind is np.ndarray and value.dtype != object or kind in (bool, int, float, complex) or (
            isinstance(value, np.generic) and kind.__module__ == "numpy" and not isinstance(value, np.object_)):
        return
    held = "a NumPy array of objects" if kind is np.ndarray else f"a {kind.__qualname__}"
    raise UnsupportedCaseError(
        f"{where}'{text}' holds {held} here, but srcad made this code taking '{text}.{method}(...)' for new "
        f"memory, as a NumPy array's .{method}() is (the code updates its result in place); the .{method}() of "
        f"{held} may share memory with it, or return what it keeps, which the update would change. Make a new array of "
        f"its result first ('np.array({text}.{method}(...))'), or hold a NumPy array in it")
