r"""The paths of the memory analysis (``passes.memory``): loops read to a fixpoint, the facts of
branches and loop exits joined, and the rest of a block followed apart where a flag it tests
is known on each path (bounded by ``memory_state.MAX_PATHS``).

A loop's body is read from the facts at its head until they no longer grow (at most
``MAX_PASSES`` passes); what a statement made on an earlier run is told apart from what it
makes now (``age``), so the facts only grow, and finitely.

>>> import gast
>>> from srcad.passes.memory import memory_flow
>>> body = gast.parse("y = x\nfor i in range(3):\n    z = y\n    y = z * 2.0\nw = y").body
>>> seen = {}
>>> _ = memory_flow(body, ["x"], lambda s, state: seen.update({s.targets[0].id: state.names.get("y")}))
>>> sorted(kind for kind, _ in seen["w"].own)  # after the loop: the argument, or a pass's product
['arg', 'new']
"""
import contextlib
import functools

import gast

from .. import astutil as A
from .memory_locations import Memory
from .memory_state import MAX_PATHS, flags_tested, join
from .memory_updates import Updates


MAX_PASSES = 50  # passes of a loop's body to a fixpoint


class Paths(Updates):
    """Loops, branches and exits of ``memory._Flow`` (which supplies ``block``, ``bind``, ``reads``
    and the counters ``paths``, ``breaks``, ``holders`` and ``item_counts``)."""

    def exits_by_tested_flags(self, exits, rest):
        """The loop's ``exits`` joined where they agree on the flags ``rest`` tests (one state
        if they all do, or following them apart would pass MAX_PATHS)."""
        tested = flags_tested({n for e in exits for n in e.flags}, rest)
        groups = {}
        for e in exits:
            key = tuple(sorted((n, e.flags[n]) for n in tested if n in e.flags))
            groups[key] = self.joined(groups.get(key), e)
        if self.paths * len(groups) > MAX_PATHS:
            return [functools.reduce(self.joined, exits)]
        return list(groups.values())

    @contextlib.contextmanager
    def split(self, count):
        """The rest of a block followed on ``count`` paths apart (``paths``: split inside split multiplies)."""
        self.paths *= count
        try:
            yield
        finally:
            self.paths //= count

    def known_test(self, s, state):
        """Checking, the True or False the test of the ``if`` ``s`` holds on every path to
        ``state`` (a flag; not a try region's, which turns False where its body raises), or None."""
        if not self.check or not isinstance(s.test, gast.Name) or A.anno(s.test, "region") is not None:
            return None
        return state.flags.get(s.test.id)

    def made_earlier(self, state, stmts):
        """``state`` on a path that does not run ``stmts`` now: what they made is from an earlier run."""
        for inner in A.walk_statements(stmts):
            if id(inner) in state.made:
                state = self.age(state, id(inner))
        return state

    def branches_joined(self, s, taken, not_taken):
        """The facts after the branches of ``if`` ``s``. On each path, what the other branch made
        is from an earlier run (of an enclosing loop): aged there, it is not mixed with what that
        branch makes on its own path (``d = zeros_like(x) if d is None else copy_grad(d)``)."""
        if taken is not None:
            taken = self.made_earlier(taken, s.orelse)
        if not_taken is not None:
            not_taken = self.made_earlier(not_taken, s.body)
        return self.joined(taken, not_taken)

    def joined(self, a, b, changed=None):
        """``memory_state.join``, where a parameter bound again on one path only still holds the
        argument on the other (absent from that state, it would take the binding's memory).
        ``changed``: the names the two may differ at, where known (``State.join``)."""
        if a is not None and b is not None:
            for p in sorted(self.params):
                if (p in a.names) != (p in b.names):
                    self.tracked(b if p in a.names else a, p)
        return join(a, b, changed)

    def loop(self, s, state):
        """The facts after the loop ``s`` (``loop_exits``, joined)."""
        return functools.reduce(self.joined, self.loop_exits(s, state))

    def loop_exits(self, s, state):
        """The facts at each exit of the loop ``s`` from the facts ``state`` before it: first at
        its head (its body read to a fixpoint of the loop head's facts), then at each break of
        the last pass. Each pass reports its statements (``on_statement``); the last, which
        starts from the fixpoint, reports last, so what a listener keeps per statement is the
        fixpoint's (a listener keeps the latest facts, or their union or intersection, which
        earlier passes, starting from fewer facts, do not change)."""
        head = s.iter if isinstance(s, gast.For) else s.test
        self.reads(s, self.names_read(head), state)
        # what the body made on an earlier run (an outer loop's last pass) is older than anything
        # a pass of this loop makes: without aging it here, the loop head would mix the two
        entry = self.made_earlier(state, s.body)  # (``state`` is this loop's: read only through ``entry``)
        for _ in range(MAX_PASSES):
            end, breaks = self._pass(s, entry)
            # a pass notes the names it writes (``memory_state.Names``): the head's facts differ at those only
            changed = end.names.written if end is not None else None
            joined = self.joined(entry, end, changed)
            if joined.same(entry, changed):
                break
            entry = joined
        else:  # (never met: the facts only grow, and finitely) a final pass reports the last facts
            end, breaks = self._pass(s, entry)
        for at_break in breaks:  # (noted from the last pass only: what differs from before the loop is too)
            before, since = entry.names.written, at_break.names.written
            at_break.names.written = None if before is None or since is None else since | before
        return [entry, *breaks]  # the loop ends at its head, or at a break

    def _pass(self, s, entry):
        """One pass of the body of the loop ``s`` from the loop-head facts ``entry``: the facts
        at its end, and at each break."""
        inside = entry.copy()
        inside.names.written = set()  # (what this pass writes: ``loop_exits``)
        if isinstance(s, gast.For):
            inside = self.bind(inside, s.target.id, Memory(), s)
        self.breaks.append([])
        end = self.block(s.body, inside)
        return end, self.breaks.pop()

    def age(self, state, here):
        """A statement runs again: what it made before (through a user function's call too) is now old memory."""
        made = [here, *((here, k) for k in range(self.item_counts.get(here, 0)))]
        news = frozenset(("new", m) for m in made)

        def aged(locations):
            hit = locations & news
            return (locations - hit) | {("old", loc[1]) for loc in hit} if hit else locations

        names = state.names
        for n in set().union(*(self.holders.get(m, ()) for m in made)):
            m = names.get(n)
            if m is not None and (m.own & news or m.inner & news or m.listy & news):
                names[n] = m.mapped(aged)
        hit = state.observed & news
        if hit:  # (in place: the set is the state's own, and much larger than what ages)
            state.observed -= hit
            state.observed |= {("old", loc[1]) for loc in hit}
        state.made.discard(here)
        return state
