"""Globals named like srcad's own names, read by helpers srcad inlines: a helper reading the
module's global ``_t1``, inlined into a caller (called with a ``*`` spread, or small and in a
loop), read the caller's temporary ``_t1`` instead (a broadcasting error, or a wrong value;
found by the fuzzer, seed 113402340664, present before this stop). Every global of the module
is now a name srcad never makes. Every mode against finite differences."""
import numpy as np
import pytest

from lang_checks import check_all_modes

_t1 = np.linspace(0.5, 1.5, 4)
_t2 = 0.25
_range1 = 3.0
finish = 2.0
unbroadcast = -0.5
dx = 0.75
v = 1.25
_saved = 0.5


def reads_srcad_looking_globals(a):
    b = a * _t1 + _t2 * finish
    return np.sum(np.sin(b) * unbroadcast) + dx * v * _range1 * _saved


def spread_call(x):
    y = x * 2.0
    return reads_srcad_looking_globals(*(y + 1.0,))


def in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + reads_srcad_looking_globals(x * (k + 1.0))
    return total


def direct(x):
    t = x * 3.0
    return np.sum(t * _t1) * finish + reads_srcad_looking_globals(t)


@pytest.mark.parametrize("f", [spread_call, in_a_loop, direct])
def test_globals_named_like_srcad_names(f):
    check_all_modes(f, (np.array([0.3, -0.2, 0.5, 0.1]),))
