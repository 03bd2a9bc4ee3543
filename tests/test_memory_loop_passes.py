"""The memory analysis reads a loop's body to a fixpoint and reports each statement to its
listener at every pass (``memory._Flow.loop``); what a listener keeps must be the fixpoint's
facts: the last report of a statement in a loop (nested too) holds every memory a name may
have there on any pass (the last pass starts from the fixpoint)."""
import gast

from srcad.passes.memory import memory_flow
from srcad.passes.normalize import normalize
from srcad.passes.resolve_calls import resolve_calls
from srcad.source import capture


def rotates(x, y, z):
    a, b = x, y
    out = x
    for i in range(3):
        for j in range(2):
            out = a  # a is x, then y, then z: the fixpoint holds all three
            a, b = b, z
    return out


def last_reports(fn, params):
    src = capture(fn)
    node = normalize(resolve_calls(src.node, src), src)
    last = {}

    def listener(s, state):
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id == "out"
                and isinstance(s.value, gast.Name) and s.value.id == "a"):  # (in the loops)
            last[id(s)] = set(state.names["a"].all())
    memory_flow(node.body, params, listener)
    return list(last.values())


def test_the_last_report_of_a_statement_in_nested_loops_holds_the_fixpoints_facts():
    (inner,) = last_reports(rotates, ["x", "y", "z"])
    assert {loc for loc in inner if loc[0] == "arg"} == {("arg", "x"), ("arg", "y"), ("arg", "z")}

