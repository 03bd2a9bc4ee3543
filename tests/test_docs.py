"""The docs show what the code does now: generated code quoted in docs/ is regenerated here."""
import pathlib
import re

import numpy as np

from srcad.pipeline import Options, transform_jvp

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def f(x):
    return np.stack([-x ** 3, 5 * x])


def quoted_function(text, name):
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        if block.startswith(f"def {name}("):
            return block
    raise AssertionError(f"no quoted {name} in the doc")


def without_line_numbers(text):
    return re.sub(r"# line \d+:", "# line N:", text).strip()


def test_forward_doc_quotes_the_generated_jvp():
    doc = (DOCS / "forward-vs-reverse.md").read_text()
    generated = transform_jvp(f, Options(wrt=(0,))).source
    assert without_line_numbers(quoted_function(doc, "f_jvp")) == without_line_numbers(generated)


def test_forward_doc_numbers():
    import srcad

    y, y_dot = srcad.jvp(f, (1.0,), (1.0,))
    np.testing.assert_array_equal(y, [-1.0, 5.0])
    np.testing.assert_array_equal(y_dot, [-3.0, 5.0])
    np.testing.assert_array_equal(srcad.jacobian(f, mode="fwd")(1.0), [-3.0, 5.0])
