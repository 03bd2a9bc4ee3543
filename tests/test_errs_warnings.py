"""Warnings raised while generated code runs (NumPy's RuntimeWarning) name the user's file and
line, and say which line's derivative raised them (issue 11): shown, recorded and filtered there."""
import io
import os
import warnings

import numpy as np

import srcad
from source_lines import line_ending_with

HERE = os.path.abspath(__file__)


def line_of(text):
    return line_ending_with(HERE, text)


def reciprocal_sum(x):
    return np.sum(1.0 / x)  # <reciprocal>


def log_then_scale(x):
    y = np.log(x) * 2.0  # <log>
    return np.sum(y * x)


def recorded(run):
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        run()
    return [m for m in log if issubclass(m.category, RuntimeWarning)]


def test_a_warning_of_the_reverse_sweep_names_the_users_line():
    log = recorded(lambda: srcad.grad(reciprocal_sum)(np.array([0.0, 2.0])))
    assert log, "dividing by zero warns"
    line = line_of("# <reciprocal>")
    for m in log:
        assert (os.path.abspath(m.filename), m.lineno) == (HERE, line), (m.filename, m.lineno)
        assert f"in srcad's derivative of line {line} of reciprocal_sum: " in str(m.message)
        assert m.category is RuntimeWarning and isinstance(m.message, RuntimeWarning)


def test_pullback_jvp_and_second_order_warnings_name_the_users_line():
    x = np.array([0.0, 1.5])
    line = line_of("# <log>")
    _, pullback = srcad.vjp(log_then_scale, x)
    runs = [lambda: pullback(1.0), lambda: srcad.jvp(log_then_scale, (x,), (np.ones(2),)),
            lambda: srcad.hvp(log_then_scale)(x, np.ones(2))]
    for run in runs:
        log = recorded(run)
        assert log and any(m.lineno == line for m in log)
        for m in log:  # log(0) at <log>, then -inf * 0 on the next line
            assert os.path.abspath(m.filename) == HERE and m.lineno in (line, line + 1), (m.filename, m.lineno)
            assert f"in srcad's derivative of line {m.lineno} of log_then_scale: " in str(m.message)


def test_the_shown_warning_prints_the_users_file_line_and_source():
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda *a: out.write(warnings.formatwarning(*a[:4], line=None))
        srcad.grad(reciprocal_sum)(np.array([0.0, 2.0]))
    text = out.getvalue()
    assert f"{HERE}:{line_of('# <reciprocal>')}: RuntimeWarning: divide by zero" in text
    assert "return np.sum(1.0 / x)  # <reciprocal>" in text
    assert "srcad-generated" not in text


def test_warnings_of_other_code_are_left_as_they_are():
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        np.log(np.zeros(1))  # <plain>
    assert [(os.path.abspath(m.filename), m.lineno) for m in log] == [(HERE, line_of("# <plain>"))]
    assert "srcad" not in str(log[0].message)


def test_a_warning_filter_on_the_users_module_still_applies():
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=__name__)
        srcad.grad(reciprocal_sum)(np.array([0.0, 2.0]))
    assert not [m for m in log if issubclass(m.category, RuntimeWarning)]


def grows_in_a_loop(x):
    big = x
    for k in range(4):
        big = big * big * 1e80  # <grows>
    return np.sum(np.minimum(big, 1.0)) + np.sum(x)


def test_a_warning_inside_a_loop_of_the_forward_sweep_names_the_line_in_the_loop():
    # every block of the forward sweep carries the user's line, loop bodies too (they named
    # the loop's header)
    line = line_of("# <grows>")
    for run in (lambda: srcad.grad(grows_in_a_loop)(np.array([1.0, 2.0])),
                lambda: srcad.vjp(grows_in_a_loop, np.array([1.0, 2.0]))[1](1.0)):
        log = recorded(run)
        assert log, "the forward sweep overflows"
        for m in log:
            assert (os.path.abspath(m.filename), m.lineno) == (HERE, line), (m.filename, m.lineno, str(m.message))
