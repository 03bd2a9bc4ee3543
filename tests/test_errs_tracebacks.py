"""Tracebacks of errors that pass through srcad: srcad's own frames hidden, the user's line named
where generated code raised (srcad.tracebacks, srcad.sourcemap), pdb still in the generated code."""
import io
import linecache
import os
import pdb
import re
import subprocess
import sys
import textwrap
import traceback
import warnings

import numpy as np
import pytest

import srcad
from source_lines import line_ending_with
from srcad import sourcemap
from srcad.errors import SrcadError

SRCAD_DIR = os.path.dirname(os.path.abspath(srcad.__file__)) + os.sep
HERE = os.path.abspath(__file__)


def line_of(text):
    return line_ending_with(HERE, text)


def solve_then_log(A, b):
    y = np.linalg.solve(A, b)  # <solve>
    return np.log(y).sum()


def inverse_sum(A):
    return np.sum(np.linalg.inv(A))  # <inv>


def root_sum(x):
    return np.sqrt(x).sum()  # <root>


def reciprocal_sum(x):
    return np.sum(1.0 / x)  # <reciprocal>


def frames(error):
    """(file, line, function) of each frame. Python 3.10 cannot drop the frame that re-raises at
    srcad's API boundary (it says so in the line it shows), nor show notes: the frame at the
    user's line carries the generated line in its name there."""
    out = []
    for fs in traceback.extract_tb(error.__traceback__):
        filename = os.path.abspath(fs.filename) if not fs.filename.startswith("<") else fs.filename
        if (sys.version_info < (3, 11) and filename == f"{SRCAD_DIR}tracebacks.py" and fs.name == "boundary"
                and fs.line.startswith("raise error  #") and "SRCAD_TRACEBACK=full" in fs.line):
            continue
        out.append((filename, fs.lineno, fs.name.split(" [srcad-generated: ")[0]))
    return out


def assert_user_line_before_generated(error, marker, name):
    entries = frames(error)
    user = (HERE, line_of(marker), name)
    assert user in entries, entries
    following = entries[entries.index(user) + 1]
    assert following[0].startswith("<srcad-generated "), entries
    assert not any(f.startswith(SRCAD_DIR) for f, _, _ in entries), entries
    return entries


def test_singular_matrix_in_the_forward_sweep_names_the_user_line():
    f = srcad.differentiable(solve_then_log)
    with pytest.raises(np.linalg.LinAlgError) as info:
        f.grad(np.zeros((2, 2)), np.ones(2))
    assert_user_line_before_generated(info.value, "# <solve>", "solve_then_log")
    if sys.version_info >= (3, 11):
        notes = "\n".join(info.value.__notes__)
        assert f"generated from {HERE}, line {line_of('# <solve>')}" in notes
        assert "y = np.linalg.solve(A, b)" in notes  # the generated line, quoted
        assert "SRCAD_TRACEBACK=full" in notes


def test_an_error_in_the_reverse_sweep_names_the_user_line():
    # sqrt(0) is fine forward; its derivative divides by zero in the reverse sweep only
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        srcad.grad(root_sum)(np.array([0.0, 1.0]))
    entries = assert_user_line_before_generated(info.value, "# <root>", "root_sum")
    generated = next(e for e in entries if e[0].startswith("<srcad-generated "))
    assert "/ (2 *" in linecache.getline(generated[0], generated[1])  # the reverse sweep's line


def test_derivative_of_a_derivative_maps_through_both_generated_files():
    with pytest.raises(np.linalg.LinAlgError) as info:  # forward over reverse: a jvp of the adjoint
        srcad.hvp(inverse_sum)(np.zeros((2, 2)), np.ones((2, 2)))
    entries = assert_user_line_before_generated(info.value, "# <inv>", "inverse_sum")
    assert any("jvp" in f for f, _, _ in entries if f.startswith("<srcad-generated "))
    with pytest.raises(np.linalg.LinAlgError) as info:  # the hessian's batched reverse over reverse
        srcad.hessian(inverse_sum)(np.zeros((2, 2)))
    assert_user_line_before_generated(info.value, "# <inv>", "inverse_sum")


def test_pullback_and_jvp_errors_name_the_user_line():
    y, pullback = srcad.vjp(solve_then_log, np.eye(2), np.ones(2))
    with pytest.raises(np.linalg.LinAlgError) as info:
        srcad.jvp(solve_then_log, (np.zeros((2, 2)), np.ones(2)), (np.ones((2, 2)), None))
    assert_user_line_before_generated(info.value, "# <solve>", "solve_then_log")
    assert np.isfinite(pullback(1.0)).all()
    y, pullback = srcad.vjp(root_sum, np.array([0.0, 1.0]))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        pullback(1.0)
    assert_user_line_before_generated(info.value, "# <root>", "root_sum")


def test_warnings_turned_into_errors_name_the_user_line():
    x = np.array([0.0, 1.0])
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        srcad.grad(reciprocal_sum)(x)
    assert_user_line_before_generated(info.value, "# <reciprocal>", "reciprocal_sum")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning) as info:
            srcad.grad(reciprocal_sum)(x)
    assert_user_line_before_generated(info.value, "# <reciprocal>", "reciprocal_sum")


def test_srcad_errors_show_the_callers_line_and_no_srcad_frame():
    def uses_try(x):  # a global statement: refused
        global SEEN
        SEEN = x
        return np.sin(x).sum()

    with pytest.raises(srcad.SrcadSyntaxError) as info:
        srcad.grad(uses_try)(np.ones(2))
    entries = frames(info.value)
    assert entries and not any(f.startswith(SRCAD_DIR) for f, _, _ in entries), entries
    assert entries[-1][2] == "test_srcad_errors_show_the_callers_line_and_no_srcad_frame"
    with pytest.raises(srcad.WrtError) as info:
        srcad.grad(uses_try, wrt="y")
    assert [e[2] for e in frames(info.value)] == ["test_srcad_errors_show_the_callers_line_and_no_srcad_frame"]
    with pytest.raises(srcad.WrtError) as info:
        srcad.differentiable(wrt="y")(uses_try)
    assert not any(f.startswith(SRCAD_DIR) for f, _, _ in frames(info.value))


def test_full_tracebacks_on_request(monkeypatch):
    monkeypatch.setenv("SRCAD_TRACEBACK", "full")
    with pytest.raises(srcad.WrtError) as info:
        srcad.grad(reciprocal_sum, wrt="y")
    assert any(f.startswith(SRCAD_DIR) for f, _, _ in frames(info.value))
    with pytest.raises(np.linalg.LinAlgError) as info:
        srcad.grad(solve_then_log)(np.zeros((2, 2)), np.ones(2))
    entries = frames(info.value)
    assert any(f.startswith(SRCAD_DIR) for f, _, _ in entries)
    assert (HERE, line_of("# <solve>"), "solve_then_log") in entries  # the user's line all the same


def test_a_bug_of_srcad_keeps_every_frame(monkeypatch):
    from srcad import pipeline
    from srcad.source import capture

    def broken(fn, options):  # a lookup inside srcad fails: srcad's bug, not the user's
        return capture(fn).lookup("a_name_bound_nowhere")

    monkeypatch.setattr(pipeline, "transform", broken)

    def fresh(x):
        return np.cos(x).sum()

    with pytest.raises(KeyError) as info:
        srcad.grad(fresh)(np.ones(2))
    assert frames(info.value)[-1][2] == "lookup"
    assert any(f.startswith(SRCAD_DIR) for f, _, _ in frames(info.value))


@srcad.extend.nondifferentiable
def checked_count(x):
    if not np.all(x > 0):
        raise ValueError("the user's own check fails")  # <own check>
    return float(len(x))


def scaled_by_count(x):
    n = checked_count(x)
    return np.sum(x) / n


def test_frames_of_user_code_called_by_srcad_are_kept():
    def raises_inside(x):
        raise ValueError("the user's own bug")  # <own bug>

    with pytest.raises(ValueError) as info:
        srcad.jacobian(raises_inside, mode="fwd")(np.ones(0))
    assert (HERE, line_of("# <own bug>"), "raises_inside") in frames(info.value)
    with pytest.raises(ValueError) as info:  # called by generated code
        srcad.grad(scaled_by_count)(np.array([1.0, -1.0]))
    entries = frames(info.value)
    assert entries[-1] == (HERE, line_of("# <own check>"), "checked_count"), entries
    assert (HERE, line_of("n = checked_count(x)"), "scaled_by_count") in entries


def test_pdb_post_mortem_steps_in_the_generated_code():
    f = srcad.differentiable(solve_then_log)
    with pytest.raises(np.linalg.LinAlgError) as info:
        f.grad(np.zeros((2, 2)), np.ones(2))
    depth = [fs.filename for fs in traceback.extract_tb(info.value.__traceback__)]
    ups = len(depth) - 1 - next(i for i, name in enumerate(depth) if name.startswith("<srcad-generated "))
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("up\n" * ups + "list\np b\nquit\n"), stdout=out, nosigint=True)
    debugger.use_rawinput = False
    debugger.reset()
    debugger.interaction(None, info.value.__traceback__)
    text = out.getvalue()
    assert "<srcad-generated " in text and "solve_then_log_adjoint" in text and "# line " in text
    assert "array([1., 1.])" in text  # a local of the generated frame


def test_the_terminal_traceback_names_the_user_line_and_hides_srcad(tmp_path):
    script = textwrap.dedent("""\
        import numpy as np
        import srcad


        def model(A, b):
            y = np.linalg.solve(A, b)
            return np.log(y).sum()


        srcad.grad(model)(np.zeros((2, 2)), np.ones(2))
        """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(SRCAD_DIR.rstrip(os.sep)))
    env.pop("SRCAD_TRACEBACK", None)
    path = tmp_path / "user_script.py"
    path.write_text(script)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)
    err = run.stderr
    assert run.returncode == 1 and "LinAlgError: Singular matrix" in err, err
    # Python 3.10 shows the frame that re-raises, and the generated line in the user frame's name
    err = re.sub(r'  File "[^"]*tracebacks.py", line \d+, in boundary\n.*SRCAD_TRACEBACK=full.*\n', "", err)
    err = err.replace(" [srcad-generated: y = np.linalg.solve(A, b)]", "")
    user_frame = f'  File "{path}", line 6, in model\n    y = np.linalg.solve(A, b)\n'
    assert user_frame + '  File "<srcad-generated __main__.model #1>", line' in err, err
    assert SRCAD_DIR not in err, err
    if sys.version_info >= (3, 11):
        assert "    y = np.linalg.solve(A, b)" in err  # the generated line, in the note
        assert "SRCAD_TRACEBACK=full" in err
    full = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                          env=dict(env, SRCAD_TRACEBACK="full"))
    assert f"{SRCAD_DIR}api.py" in full.stderr
    assert user_frame in full.stderr.replace(" [srcad-generated: y = np.linalg.solve(A, b)]", "")


def test_line_map_follows_blocks_and_ignores_strings():
    text = textwrap.dedent('''\
        def g_adjoint(x, v=None):
            s = """
            # line 99: not a comment
            """
            # line 4: y = x * 2
            y = x * 2
            if y.sum() > 0:
                # line 6: z = y
                z = y
            else:
                z = -y
            while False:
                # line 8: pass
                pass
            dx = z
            return dx
        ''')
    assert sourcemap.line_map(text) == {1: None, 2: None, 3: None, 4: None, 6: 4, 7: 4, 9: 6, 11: 4, 12: 4,
                                        14: 8, 15: 4, 16: 4}


def test_source_maps_die_with_their_code():
    import gc

    def short_lived(x):
        return np.exp(x).sum()

    f = srcad.differentiable(short_lived)
    f.grad(np.ones(2))
    filename = f._compiled.generated.filename
    assert sourcemap.is_generated(filename)
    del f
    srcad.compile._CACHE.clear()
    gc.collect()
    assert not sourcemap.is_generated(filename)


def test_a_relocated_error_is_freed_without_the_cycle_collector():
    import gc
    import weakref

    f = srcad.differentiable(solve_then_log)
    gc.disable()
    try:
        try:
            f.grad(np.zeros((2, 2)), np.ones(2))
        except np.linalg.LinAlgError as error:
            ref = weakref.ref(error)
            assert any(e[2] == "solve_then_log" for e in frames(error))
        assert ref() is None  # no reference cycle through the inserted frames
    finally:
        gc.enable()


def refused_in_a_conditional_expression(x, flag=True):
    return np.std(x, mean=np.mean(x)) if flag else 0.0  # (np.std's mean= has no derivative rule)


def test_a_refusal_inside_a_conditional_expression_names_its_line():
    """The branches of ``a if c else b`` became statements without a line (probe 13B)."""
    import inspect

    line = inspect.getsourcelines(refused_in_a_conditional_expression)[1] + 1
    with pytest.raises(srcad.SrcadError, match=rf"test_errs_tracebacks.py:{line}: the derivative rule of np.std"):
        srcad.grad(refused_in_a_conditional_expression)(np.ones(3))
