"""astor's line wrapping of generated code, made safe for annotated assignments.

astor wraps a line longer than 79 columns; where the target side of an assignment is long it
puts it in parentheses. For an annotated assignment, ``a: np.float64 = S[i]`` (how srcad marks
a read of one array element, ``codegen``), that gives ``(a: np.float64) = S[i]``, which is not
Python: deep in nested blocks, with the long names of code differentiated again, the generated
module did not compile. Here the target and its annotation are one piece that astor never
splits; the value is wrapped as before, and every other line exactly as astor wraps it.
"""
from astor.source_repr import split_lines


def pretty_source(items):
    """The text of astor's source pieces ``items``, wrapped (``astor.to_source``'s ``pretty_source``)."""
    items = list(items)
    merged, done = [], 0
    for colon in [k for k, item in enumerate(items) if item == ": "]:
        end = _annotated_target_end(items, colon - 1) if colon - 1 >= done else None
        if end is not None:
            merged.extend(items[done:colon - 1])
            merged.append("".join(items[colon - 1:end]))
            done = end
    merged.extend(items[done:])
    return "".join(split_lines(merged))


def _annotated_target_end(items, i):
    """If ``items[i]`` begins ``name: annotation = `` at the start of a line, the index after
    that `` = ``; else None."""
    if not (items[i].isidentifier() and i + 1 < len(items) and items[i + 1] == ": "):
        return None
    before = items[i - 1] if i >= 1 else "\n"
    if not (before.startswith("\n") or before.strip() == "" and (i < 2 or items[i - 2].startswith("\n"))):
        return None  # (a dict display's key, a lambda's parameter)
    for j in range(i + 2, len(items)):
        if items[j].startswith("\n"):
            return None  # an annotation without a value
        if items[j] == " = ":
            return j + 1
    return None
