"""The facts the memory analysis (``passes.memory``) keeps at a program point, and how the
facts of two paths join.

``State`` holds, for each name, the abstract memory its value owns and reaches, the names
another name's update made stale, the memory earlier statements read, and the names known to
hold True or False on every path (jump flags, which the refusing check follows path by path:
``sets_a_tested_flag``). ``join`` of two paths keeps what holds on both; a path that reaches
nothing (after a ``break``) is None.

>>> a, b = State(flags={"skip": True}), State(flags={"skip": False})
>>> join(a, None).flags, join(a, b).flags
({'skip': True}, {})
"""
import gast

from .. import astutil as A


class Names(dict):
    """A state's name -> ``Memory``, noting in ``written`` (where it is not None) each name
    assigned: since a loop's pass or a branch began (``memory_paths``), so that a join or a
    comparison of states that began there reads only those names, the others holding the same
    objects on both paths. Names change one by one (``names[n] = m``), which is noted."""

    __slots__ = ("written",)

    def __init__(self, names=(), written=None):
        super().__init__(names)
        self.written = written

    def __setitem__(self, name, memory):
        dict.__setitem__(self, name, memory)
        if self.written is not None:
            self.written.add(name)

    def _unnoted(self, *args, **kwargs):
        raise TypeError("a state's names change one by one (names[n] = m), so that the change is noted")

    update = setdefault = pop = popitem = clear = __delitem__ = __ior__ = _unnoted


class State:
    """The facts at one program point: memory of each name, names whose memory another
    name updated (``stale``: name -> update statement), and memory earlier statements read."""

    __slots__ = ("names", "stale", "observed", "bound", "made", "flags", "ambiguous", "indices", "stacks_of_arrays",
                 "stacks_of_sequences")

    def __init__(self, names=None, stale=None, observed=(), bound=None, made=(), flags=None, ambiguous=(),
                 indices=(), stacks_of_arrays=(), stacks_of_sequences=()):
        self.names = Names(names or {})
        self.flags = dict(flags or {})  # name -> the True or False it holds on every path here
        self.stale = dict(stale or {})  # name -> (name updated, update statement, its binding)
        self.observed = set(observed)
        self.bound = dict(bound or {})  # name -> (sequence number, statement that last bound it), for hints
        self.made = set(made)  # statements whose ("new", id) location may appear here: only those can age
        self.ambiguous = set(ambiguous)  # names bound by other statements on the paths joined here
        self.indices = set(indices)  # names holding an index array on every path here (indexing copies)
        self.stacks_of_arrays = set(stacks_of_arrays)  # stacks (``values.stacks``) holding arrays or numbers only
        self.stacks_of_sequences = set(stacks_of_sequences)  # ... holding lists or tuples only (``Memory.sequence``)

    def copy(self):
        copied = State(self.names, self.stale, self.observed, self.bound, self.made, self.flags, self.ambiguous,
                       self.indices, self.stacks_of_arrays, self.stacks_of_sequences)
        written = self.names.written
        copied.names.written = None if written is None else set(written)
        return copied

    def join(self, other, changed=None):
        """The facts on either path. ``changed``: the names whose memory or binding may differ
        between the two (where both note their writes: those they wrote); None: any."""
        mine, theirs = self.names.written, other.names.written
        if changed is None and mine is not None and theirs is not None:
            changed = mine | theirs
        # (a join builds its own containers: handed to the new state as they are, not copied again)
        names, new = Names(self.names), []
        for n, m in other.names.items() if changed is None else ((n, other.names.get(n)) for n in changed):
            here = names.get(n)
            if m is None or here is m:  # (the two paths mostly share the same facts: no union to build)
                continue
            if here is None:
                new.append(n)
            else:
                names[n] = here | m
        for n in new if changed is None else _in_order(other.names, new):  # (as ``other`` holds them)
            names[n] = other.names[n]
        names.written = None if mine is None or theirs is None else mine | theirs
        stale = dict(other.stale)
        stale.update(self.stale)
        if changed is None:
            bound = dict(other.bound)
            bound.update(self.bound)  # (for hints: one of the bindings)
        else:  # (elsewhere the two hold the same bindings; read by name only, in no order)
            bound = dict(self.bound)
            for n in changed:
                if n not in bound and n in other.bound:
                    bound[n] = other.bound[n]
        # names both paths bind, by other statements (the paths mostly share their bindings: the
        # same objects, compared by identity first, not hashed as (name, binding) pairs)
        ambiguous = self.ambiguous | other.ambiguous
        other_binding = other.bound.get
        for n, binding in self.bound.items() if changed is None else ((n, self.bound.get(n)) for n in changed):
            their = other_binding(n, binding)
            if binding is not None and their is not binding and their != binding:
                ambiguous.add(n)
        flags = {n: v for n, v in self.flags.items() if other.flags.get(n) is v}
        joined = State.__new__(State)
        joined.names, joined.stale, joined.bound, joined.flags = names, stale, bound, flags
        joined.observed, joined.made, joined.ambiguous = self.observed | other.observed, self.made | other.made, ambiguous
        joined.indices = self.indices & other.indices
        joined.stacks_of_arrays = self.stacks_of_arrays & other.stacks_of_arrays
        joined.stacks_of_sequences = self.stacks_of_sequences & other.stacks_of_sequences
        return joined

    def __eq__(self, other):
        return self.same(other)

    def same(self, other, changed=None):
        """``self == other``, where their names may differ at ``changed`` only (if not None)."""
        if changed is None or len(self.names) != len(other.names):
            names_equal = self.names == other.names
        else:
            names_equal = all(_same_memory(self.names.get(n), other.names.get(n)) for n in changed)
        return (names_equal and self.stale.keys() == other.stale.keys()
                and self.observed == other.observed and self.flags == other.flags
                and self.ambiguous == other.ambiguous and self.indices == other.indices
                and self.stacks_of_arrays == other.stacks_of_arrays
                and self.stacks_of_sequences == other.stacks_of_sequences)


def _in_order(names, some):
    """``some`` of the keys of ``names``, in its order. They are among its last: a state's names
    keep their order as they change, and ``some`` are those one path bound and the other did
    not (after the state both began from), so the walk from the end stops soon."""
    if len(some) < 2:
        return some
    wanted, found = set(some), []
    for n in reversed(names):
        if n in wanted:
            found.append(n)
            if len(found) == len(wanted):
                break
    return found[::-1]


def _same_memory(a, b):
    return a is b or (a is not None and b is not None and a == b)


# the paths a refusing check follows apart at once: the product of the path counts of the splits
# open around a statement (a split inside a loop's body closes at its end, so nesting, not the
# passes of loops, counts). A statement at loop depth d is read at most MAX_PATHS * MAX_PASSES ** d
# times; past it, exits are joined (flags lost: fail closed)
MAX_PATHS = 64


def join(a, b, changed=None):
    """The facts after two paths, either of which may reach nothing (None) (``State.join``)."""
    if a is None:
        return b
    return a if b is None else a.join(b, changed)


def flag_value(state, rhs):
    """The True or False ``rhs`` is on every path to ``state``, or None."""
    if isinstance(rhs, gast.Constant) and isinstance(rhs.value, bool):
        return rhs.value
    if isinstance(rhs, gast.UnaryOp) and isinstance(rhs.op, gast.Not) and isinstance(rhs.operand, gast.Name):
        known = state.flags.get(rhs.operand.id)
        return None if known is None else not known
    return None


def sets_a_tested_flag(s, rest):
    """Is ``s`` an ``if`` that sets a name to True or False in a branch (at any depth: a return
    in a nested ``if`` sets its loop's stop flag there), a name that (or its negation) an ``if``
    among the statements ``rest`` after it tests?"""
    if not isinstance(s, gast.If):
        return False
    set_here = {t.targets[0].id for t in A.walk_statements(list(s.body) + list(s.orelse))
                if isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name)
                and isinstance(t.value, gast.Constant) and isinstance(t.value.value, bool)}
    return bool(set_here) and bool(flags_tested(set_here, rest))


def flags_tested(names, rest):
    """The ``names`` that an ``if`` among the statements ``rest`` tests, itself or negated
    (``_t3 = not _skip1`` then ``if _t3:``)."""
    negations = {}  # a name bound to the negation of one of ``names`` -> that name
    tested = set()
    if not names:  # (none to look for: the rest, maybe long, is not read)
        return tested
    for t in rest:
        if (isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name) and isinstance(t.value, gast.UnaryOp)
                and isinstance(t.value.op, gast.Not) and isinstance(t.value.operand, gast.Name)
                and (t.value.operand.id in names or t.value.operand.id in negations)):
            negations[t.targets[0].id] = negations.get(t.value.operand.id, t.value.operand.id)
        if isinstance(t, gast.If) and isinstance(t.test, gast.Name):
            if t.test.id in names:
                tested.add(t.test.id)
            elif t.test.id in negations:
                tested.add(negations[t.test.id])
    return tested
