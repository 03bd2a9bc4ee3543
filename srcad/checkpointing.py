"""Checkpointing long loops: ``for t in srcad.checkpointed(range(n)):``.

Called normally, ``checkpointed`` returns its range and the loop runs as written. In the
reverse-mode adjoint the loop keeps only the loop-carried values at the start of each segment
of ``segment`` steps (√n snapshots by default) and recomputes one segment at a time in the
reverse sweep (``passes/checkpoint.py`` marks the loop, ``passes/checkpoint_adjoint.py``
builds the sweeps); ``checkpoint_segments`` is what the generated code calls.

>>> list(checkpointed(range(3)))
[0, 1, 2]
>>> checkpoint_segments(range(0, 10), None)
[range(0, 4), range(4, 8), range(8, 10)]
>>> segment_length(20000, None)
142
"""
import math
import numbers


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


def _check(steps, segment):
    if not isinstance(steps, range):
        raise TypeError(f"srcad.checkpointed takes a range, not {type(steps).__name__}: "
                        "write `for t in srcad.checkpointed(range(n)):`")
    if segment is not None and (isinstance(segment, bool) or not isinstance(segment, numbers.Integral)
                                or segment < 1):
        raise ValueError(f"srcad.checkpointed: segment= must be a positive integer (the number of steps "
                         f"between snapshots) or None for ceil(sqrt(n)); got {segment!r}")
