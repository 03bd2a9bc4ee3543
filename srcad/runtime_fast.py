"""Faster equal forms of NumPy functions whose Python overhead outweighs their work at the
sizes loops use (re-exported by ``srcad.runtime``; ``passes.fast_forms`` puts them in generated
code). Each returns what the NumPy function returns, for every argument: it takes a short path
in the common case and calls the NumPy function otherwise. Each has the NumPy function's rules.
"""
import numpy as np


_UNSET = object()  # an option the caller left out: np.pad checks which options a mode takes


def padded(array, pad_width, mode="constant", stat_length=_UNSET, constant_values=_UNSET, end_values=_UNSET,
           reflect_type=_UNSET):
    """``np.pad(array, pad_width, mode, **options)``: the same new array (values, dtype, shape,
    memory order). Zeros of one int width around a float or complex ndarray are a new zero
    array and one slice assignment (np.pad is written in Python: 28 µs against 6 µs for a
    126×126 array).

    >>> a = np.arange(4.0).reshape(2, 2)
    >>> np.array_equal(padded(a, 1), np.pad(a, 1))
    True
    """
    if (mode == "constant" and stat_length is constant_values is end_values is reflect_type is _UNSET
            and array.__class__ is np.ndarray and pad_width.__class__ is int and pad_width >= 0 and array.ndim
            and array.dtype.kind in "fc"):
        order = "F" if array.flags.fnc else "C"  # as np.pad: a Fortran-ordered array stays one
        out = np.zeros(tuple(n + 2 * pad_width for n in array.shape), array.dtype, order=order)
        out[tuple(slice(pad_width, pad_width + n) for n in array.shape)] = array
        return out
    options = {name: value for name, value in (("stat_length", stat_length), ("constant_values", constant_values),
                                                ("end_values", end_values), ("reflect_type", reflect_type))
               if value is not _UNSET}
    return np.pad(array, pad_width, mode=mode, **options)
