"""The in-process cache of compiled code: entries held as long as the user's code object
lives, one compilation at a time, and recursion (a function met again while it is being
compiled) refused."""
import threading
import weakref

from . import registry
from .errors import SrcadError

LOCK = threading.RLock()  # one compilation at a time; re-entered for callees
_LOCAL = threading.local()  # .in_progress: this thread's compilations (recursion detection)
# variants kept per key, the least recently used dropped first: a closure made anew per step
# whose cell holds a new function, object or dict (what the code was resolved through) needs
# code of its own, and the shared code object would otherwise hold every one made, for ever
MAX_VARIANTS = 8


class CodeCache:
    """Compiled code per user code object, held only as long as that code object lives.

    Keyed by identity (code objects compare equal across files), with a weak reference
    whose callback drops the entry; each entry maps (mode, wrt, containers, shapes) to
    the compiled variants, one per set of bindings (at most ``MAX_VARIANTS``).
    """

    def __init__(self):
        self._entries = {}  # id(code) -> (weakref to code, {rest of key: [Compiled, ...]})
        # how many times each thread made code: ``srcad.testing`` checks that calling again with
        # the same arguments makes none (a guard that cannot hold would compile on every call);
        # per thread, so that another thread's first use is not taken for this one's
        self._made = threading.local()

    def made_in_this_thread(self):
        return getattr(self._made, "count", 0)

    def note_made(self):
        self._made.count = self.made_in_this_thread() + 1

    def variants(self, key):
        mode, code, rest = key[0], key[1], (key[0],) + key[2:]
        entry = self._entries.get(id(code))
        if entry is None or entry[0]() is not code:
            entry = (weakref.ref(code, self._dropper(id(code))), {})
            self._entries[id(code)] = entry
        return entry[1].setdefault(rest, [])

    def _dropper(self, ident):
        entries = self._entries

        def drop(ref):
            if entries.get(ident, (None,))[0] is ref:
                del entries[ident]

        return drop

    def __iter__(self):
        """Keys ``(mode, code, wrt, containers, shapes)`` of what is cached."""
        for ref, by_rest in list(self._entries.values()):
            code = ref()
            if code is not None:
                for rest in list(by_rest):
                    yield (rest[0], code) + rest[1:]

    def __len__(self):
        return sum(1 for _ in self)

    def clear(self):
        self._entries.clear()


def cached(cache, key, fn, make, recursion):
    """The compiled code in ``cache`` for ``key`` whose bindings match ``fn``'s, made by
    ``make()`` if none (made again once a rule is registered: see ``registry.GENERATION``).
    ``recursion``: what a compilation of ``fn`` in progress is known by (the mode, the function,
    what is differentiated, the classes of the objects it is compiled for, not the shapes): met
    again, it is recursion (``Module.__call__`` compiled for a ``Net`` calling it for the
    ``Scale`` the net holds is not, nor are two generated backward functions that share their
    code)."""
    key += (registry.GENERATION,)
    variants = cache.variants(key)
    for compiled in list(variants):
        if compiled.matches(fn):
            if compiled is not variants[-1]:
                _use(variants, compiled)
            return compiled
    in_progress = getattr(_LOCAL, "in_progress", None)
    if in_progress is None:
        in_progress = _LOCAL.in_progress = set()
    if recursion in in_progress:
        raise Recursion(fn)
    with LOCK:
        variants = cache.variants(key)
        for compiled in variants:  # another thread may have made it meanwhile
            if compiled.matches(fn):
                return compiled
        in_progress.add(recursion)
        try:
            compiled = make()
        finally:
            in_progress.discard(recursion)
        cache.note_made()
        if compiled.matches(fn):  # (one that does not, never found again, would only pile up)
            variants.append(compiled)
            del variants[:-MAX_VARIANTS]
    return compiled


def _use(variants, compiled):
    """Mark ``compiled`` the most recently used of ``variants`` (the last)."""
    with LOCK:
        if compiled in variants:  # (another thread may have dropped it meanwhile)
            variants.remove(compiled)
            variants.append(compiled)


class Recursion(SrcadError):
    def __init__(self, fn):
        super().__init__(f"{fn.__name__} calls itself (directly or through other functions); srcad does "
                         "not differentiate recursion. Write it as a loop, or give it a rule with "
                         "srcad.custom_vjp")
