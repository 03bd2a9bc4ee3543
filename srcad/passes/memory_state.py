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

class State:
    """The facts at one program point: memory of each name, names whose memory another
    name updated (``stale``: name -> update statement), and memory earlier statements read."""

    __slots__ = ("names", "stale", "observed", "bound", "made", "flags", "ambiguous", "indices", "stacks_of_arrays",
                 "stacks_of_sequences")

    def __init__(self, names=None, stale=None, observed=(), bound=None, made=(), flags=None, ambiguous=(),
                 indices=(), stacks_of_arrays=(), stacks_of_sequences=()):
        self.names = dict(names or {})
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
        return State(self.names, self.stale, self.observed, self.bound, self.made, self.flags, self.ambiguous,
                     self.indices, self.stacks_of_arrays, self.stacks_of_sequences)

    def join(self, other):
        # (a join builds its own containers: handed to the new state as they are, not copied again)
        names = dict(self.names)
        for n, m in other.names.items():
            mine = names.get(n)
            if mine is None:
                names[n] = m
            elif mine is not m:  # (the two paths mostly share the same facts: no union to build)
                names[n] = mine | m
        stale = dict(other.stale)
        stale.update(self.stale)
        bound = dict(other.bound)
        bound.update(self.bound)  # (for hints: one of the bindings)
        # names both paths bind, by other statements: (name, binding) pairs of one path not in the other's
        differing = self.bound.items() - other.bound.items()
        ambiguous = self.ambiguous | other.ambiguous | {n for n, _ in differing if n in other.bound}
        flags = {n: v for n, v in self.flags.items() if other.flags.get(n) is v}
        joined = State.__new__(State)
        joined.names, joined.stale, joined.bound, joined.flags = names, stale, bound, flags
        joined.observed, joined.made, joined.ambiguous = self.observed | other.observed, self.made | other.made, ambiguous
        joined.indices = self.indices & other.indices
        joined.stacks_of_arrays = self.stacks_of_arrays & other.stacks_of_arrays
        joined.stacks_of_sequences = self.stacks_of_sequences & other.stacks_of_sequences
        return joined

    def __eq__(self, other):
        return (self.names == other.names and self.stale.keys() == other.stale.keys()
                and self.observed == other.observed and self.flags == other.flags
                and self.ambiguous == other.ambiguous and self.indices == other.indices
                and self.stacks_of_arrays == other.stacks_of_arrays
                and self.stacks_of_sequences == other.stacks_of_sequences)


# the paths a refusing check follows apart at once: the product of the path counts of the splits
# open around a statement (a split inside a loop's body closes at its end, so nesting, not the
# passes of loops, counts). A statement at loop depth d is read at most MAX_PATHS * MAX_PASSES ** d
# times; past it, exits are joined (flags lost: fail closed)
MAX_PATHS = 64


def join(a, b):
    """The facts after two paths, either of which may reach nothing (None)."""
    if a is None:
        return b
    return a if b is None else a.join(b)


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
    return bool(flags_tested(set_here, rest))


def flags_tested(names, rest):
    """The ``names`` that an ``if`` among the statements ``rest`` tests, itself or negated
    (``_t3 = not _skip1`` then ``if _t3:``)."""
    negations = {}  # a name bound to the negation of one of ``names`` -> that name
    tested = set()
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
