"""Checkpointing long loops: ``for t in srcad.checkpointed(range(n)):``.

Called normally, ``checkpointed`` returns its range and the loop runs as written. In the
reverse-mode adjoint the loop keeps only the loop-carried values at the start of each segment
of ``segment`` steps (√n snapshots by default) and recomputes one segment at a time in the
reverse sweep (``passes/checkpoint.py`` marks the loop, ``passes/checkpoint_adjoint.py``
builds the sweeps); ``checkpoint_segments`` and ``check_recomputed`` are what the generated
code calls.

The recomputation must arrive where the first run did: ``check_recomputed`` compares the values
a segment ends with in the reverse sweep with the next segment's snapshot (the loop's final
values for the last segment), so a body depending on state no snapshot holds (an object whose
``__float__`` counts its calls, a random generator) is an error, not a wrong gradient.

>>> list(checkpointed(range(3)))
[0, 1, 2]
>>> checkpoint_segments(range(0, 10), None)
[range(0, 4), range(4, 8), range(8, 10)]
>>> segment_length(20000, None)
142
>>> check_recomputed((np.array([1.0, np.nan]), 2), (np.array([1.0, np.nan]), 2), ("u", "k"), "f.py:3")
>>> check_recomputed((np.ones(2),), (np.zeros(2),), ("u",), "f.py:3")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
srcad.errors.CheckpointReplayError: f.py:3: srcad's reverse sweep ran a segment of this checkpointed loop ...
"""
import dataclasses
import math
import numbers

import numpy as np

from .errors import CheckpointReplayError


def checkpointed(steps, *, segment=None):
    """Mark a ``for`` loop over ``steps`` (a ``range``) for checkpointing in the adjoint.

    Returns ``steps`` itself: the function runs as plain Python. srcad's adjoint saves the
    loop-carried values every ``segment`` steps (default ``ceil(sqrt(len(steps)))``) and
    recomputes each segment's values in the reverse sweep, so memory grows with the number
    and length of segments instead of with the number of steps.
    """
    _check(steps, segment)
    return steps


def segment_length(n, segment):
    """The number of steps per segment: ``segment``, or ``ceil(sqrt(n))`` (at least 1)."""
    if segment is None:
        return max(1, math.isqrt(n - 1) + 1) if n > 1 else 1
    return int(segment)


def checkpoint_segments(steps, segment):
    """``steps`` (a range) cut into consecutive ranges of ``segment_length`` steps."""
    _check(steps, segment)
    k = segment_length(len(steps), segment)
    return [steps[i:i + k] for i in range(0, len(steps), k)]


def check_recomputed(expected, recomputed, names, where):
    """Raise ``CheckpointReplayError`` unless the values of ``names`` a segment's recomputation
    ended with (``recomputed``) are exactly those the first run held there (``expected``)."""
    for name, held, again in zip(names, expected, recomputed):
        if not _same(held, again):
            raise CheckpointReplayError(
                f"{where}: srcad's reverse sweep ran a segment of this checkpointed loop again from its snapshot "
                f"and '{name}' came out different from the first run: the loop's body reads or changes state the "
                "snapshots do not hold (an object whose methods or special methods, such as __float__, __len__, "
                "__array__ or __iter__, change it; a random generator; a global), so the gradient would be wrong. "
                "Move the code that changes that state out of the loop (compute what the loop needs before it), "
                "or use a plain loop (drop srcad.checkpointed)")


def _same(a, b):
    """Are ``a`` and ``b`` the same value, exactly (NaN where NaN)? Arrays, numbers, strings,
    lists, tuples, dicts and dataclass records by their contents; other objects by ``==``."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):  # (NaN positions compared only where == finds a difference: one pass)
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            (a == b).all() or a.dtype.kind in "fc" and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, (int, float, complex, np.generic)):
        return bool(a == b or a != a and b != b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    try:
        return bool(a == b)
    except Exception:  # (an object whose == answers an array, or fails)
        return False


def _check(steps, segment):
    if not isinstance(steps, range):
        raise TypeError(f"srcad.checkpointed takes a range, not {type(steps).__name__}: "
                        "write `for t in srcad.checkpointed(range(n)):`")
    if segment is not None and (isinstance(segment, bool) or not isinstance(segment, numbers.Integral)
                                or segment < 1):
        raise ValueError(f"srcad.checkpointed: segment= must be a positive integer (the number of steps "
                         f"between snapshots) or None for ceil(sqrt(n)); got {segment!r}")
