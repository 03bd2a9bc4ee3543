"""Finding a test's own lines, to check that srcad reports the user's file and line."""


def line_ending_with(path, text):
    """The number of the one line of the file ``path`` that ends with ``text``."""
    with open(path) as f:
        found = [i for i, line in enumerate(f, 1) if line.rstrip().endswith(text)]
    assert len(found) == 1, (text, found)
    return found[0]
