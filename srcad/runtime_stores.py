"""What NumPy's in-place functions write, so that ``normalize`` can make a call of one an
element store srcad differentiates (``passes.effect_calls.library_store``):
``np.fill_diagonal(a, v)`` is ``a[diagonal_positions(a, v)] = v`` and ``np.copyto(a, v)`` is
``check_copyto(a, v); a[...] = v``; ``rng.shuffle(a)`` is ``a[...] = a[shuffle_order(rng, a)]``; a helper's ``p += e`` on the caller's array is ``p[...] += e``
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
