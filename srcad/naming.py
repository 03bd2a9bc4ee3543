"""Deterministic names for everything srcad generates.

The convention (documented in docs/generated-code.md):

- ``_t1, _t2, ...``      A-normal-form temporaries, numbered in source order.
- ``dx``                 the adjoint of ``x`` (``dx_`` if the function already uses ``dx``).
- ``x_dot``              the tangent of ``x`` in forward mode.
- ``_x_stack``           values of ``x`` saved inside loops; ``_x_1`` saved outside loops.
- ``_range1``, ``_seq1`` loop helpers; ``_n1`` trip counts; ``_skip1``/``_stop1`` break flags.
- ``<fn>_<name>``        locals of a helper function inlined into its caller.
"""
import keyword
import re

_NOT_WORD = re.compile(r"\W")


def identifier(text):
    """``text`` made a valid Python identifier: generated names are built from user objects'
    names (``f.__name__``), which need not be one (``<lambda>``, ``functools.partial``)."""
    if text.isascii() and text.isidentifier():  # (most are: the pattern is for the others)
        return "_" + text if keyword.iskeyword(text) else text
    name = _NOT_WORD.sub("_", text) or "_"
    return "_" + name if name[0].isdigit() or keyword.iskeyword(name) else name


class Namer:
    """Hands out fresh names that never collide with the user's or with each other."""

    def __init__(self, taken=()):
        self.taken = set(taken)
        self.counters = {}

    def reserve(self, names):
        self.taken.update(names)

    def fresh(self, base):
        """``_t`` -> ``_t1``, ``_t2``, ...; numbering is per base, so output is deterministic."""
        base = identifier(base)
        n = self.counters.get(base, 0)
        while True:
            n += 1
            name = f"{base}{n}"
            if name not in self.taken:
                self.counters[base] = n
                self.taken.add(name)
                return name

    def unique(self, name):
        """``name`` itself if free, else ``name_``, ``name__``, ..."""
        name = identifier(name)
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name


BUILTIN = "builtin"  # annotation of a Name that means a Python builtin, whatever the user's scope says


def builtin(name):
    """A read of the builtin ``name`` (``range``, ``len``, ``slice``...) in generated code.

    Passes emit builtins through this, never as a bare name, which user code could shadow
    (``len = 3``, a global ``range``); the compiler binds it to the real builtin under a
    name the function does not use (``compile.Module.bind_builtins``).
    """
    from .astutil import load, set_anno

    return set_anno(load(name), BUILTIN, name)
