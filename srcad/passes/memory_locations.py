"""What a name's value may share, as abstract memory locations (``Memory``): the facts the
memory analysis (``passes.memory``) keeps per name, and which of them a shallow copy still holds."""


EMPTY = frozenset()


def shallow_copy_keeps(memory):
    """The locations of ``memory``, besides its ``inner``, that ``runtime.copy_value``'s copy of
    the value still holds: none where the value is surely an array, a number, a list, a tuple
    or a dict (an array's copy is new memory; a container's ``own`` is the container object
    only, its items being ``inner``); else all its ``own``, which may hold its items too (a
    tuple a call returned, its items not told apart), and copy_value returns a tuple as it is."""
    return frozenset() if memory.array or memory.sequence else memory.own


class Memory:
    """What a name's value may share: ``own`` (its own memory) and ``inner`` (memory of
    the values inside it, for lists, tuples and dicts), as sets of abstract locations.

    A location is ``("arg", p)`` (an argument), ``("global", n)``, or ``(age, id)`` for what a
    statement allocated: ``"new"`` for its latest run, ``"old"`` for earlier runs (so an array
    made afresh in each pass of a loop is told apart from last pass's). Immutable."""

    __slots__ = ("own", "inner", "array", "listy", "sequence", "items", "keys", "_all")

    def __init__(self, own=EMPTY, inner=EMPTY, array=False, listy=None, sequence=False, items=None, keys=None):
        # (``frozenset`` of a frozenset is that set itself, and costs no call of Python's)
        self.own, self.inner = frozenset(own), frozenset(inner)
        self.array = array  # surely an array or a number: it holds no other values
        # the part of ``own`` the value may be as a list or dict object: what ``L.append(e)`` and
        # ``L.pop()`` change (``own`` unless the value is known to be an array there)
        self.listy = self.own if listy is None else frozenset(listy)
        # surely a list, a tuple or a dict: an item of it is never the object itself, and a slice
        # or a shallow copy of it is a new one holding the same items (an array's is a view)
        self.sequence = sequence
        # a tuple whose items are known one by one: the Memory of each (their locations are in
        # ``inner`` too), or None
        self.items = items
        # a dict (surely one) whose items under these constant string keys are known: key -> the
        # Memory of the value stored there (its locations are in ``inner`` too), or None. Only
        # which object each key holds is read from it (``key_item``): what an item holds may grow
        # as the item is updated, which ``inner`` follows
        self.keys = keys
        self._all = None

    def all(self):
        if self._all is None:  # (read for every name at every update: built once)
            self._all = self.own | self.inner if self.inner else self.own
        return self._all

    def mapped(self, change):
        """This memory with ``change`` applied to each set of locations (aging; a call's result in the caller's)."""
        items = None if self.items is None else tuple(m.mapped(change) for m in self.items)
        keys = None if self.keys is None else {k: m.mapped(change) for k, m in self.keys.items()}
        return Memory(change(self.own), change(self.inner), self.array, change(self.listy), self.sequence, items,
                      keys)

    def __eq__(self, other):
        return self is other or (self.own == other.own and self.inner == other.inner
                                 and self.array == other.array and self.listy == other.listy
                                 and self.sequence == other.sequence and self.items == other.items
                                 and self.keys == other.keys)

    def __or__(self, other):
        if other is self or other == self:  # joins mostly meet the same facts: no new object
            return self
        items = None
        if self.items is not None and other.items is not None and len(self.items) == len(other.items):
            items = tuple(a | b for a, b in zip(self.items, other.items))
        keys = None  # (a key known on one path only is read as any item)
        if self.keys is not None and other.keys is not None:
            keys = {k: m | other.keys[k] for k, m in self.keys.items() if k in other.keys}
        return Memory(self.own | other.own, self.inner | other.inner, self.array and other.array,
                      self.listy | other.listy, self.sequence and other.sequence, items, keys)

    def key_item(self, key):
        """The memory of ``d[key]`` where this is a dict whose item under the constant ``key`` is
        known, else None: that object's own memory, and what it holds as this dict's items may
        (an array holds nothing)."""
        if self.keys is None or key not in self.keys:
            return None
        item = self.keys[key]
        return Memory(item.own, item.inner if item.array else self.inner, item.array, item.listy, item.sequence)
