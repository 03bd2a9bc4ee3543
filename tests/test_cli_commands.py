"""``python -m srcad`` / ``srcad``: help, ``show``, and the exit status of every kind of failure
(0 done, 1 srcad refused, 2 a usage mistake)."""
import pathlib
import subprocess
import sys
import textwrap

import pytest

from srcad import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]

MODEL = '''
import numpy as np


def softplus(z):
    return np.log1p(np.exp(z))


def outer(z):
    return softplus(z) * np.exp(-z)


def loss(x, w):
    s = 0.0
    for i in range(3):
        s = s + outer(x * w[i]).sum()
    return s


def refused(x):
    global LAST
    LAST = x
    return np.sum(x)
'''


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "cli_commands_model.py"
    path.write_text(MODEL)
    return path


def run(*argv):
    return subprocess.run([sys.executable, "-m", "srcad", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_help_explains_commands_and_shapes():
    done = run("--help")
    assert done.returncode == 0
    for words in ("show FILE.py:FUNC", "export FILE.py:FUNC", "-o OUT.py", "generic adjoint", "every shape"):
        assert words in done.stdout
    done = run("export", "--help")
    assert done.returncode == 0
    for words in ("--wrt", "--containers", "only NumPy", "1000 entries", "every shape"):
        assert words in " ".join(done.stdout.split())


def test_no_command_is_a_usage_error(capsys):
    assert cli.main([]) == 2
    assert "show" in capsys.readouterr().err


def test_show_prints_the_adjoint_and_the_helpers_adjoints(model, capsys):
    assert cli.main(["show", f"{model}:loss"]) == 0
    out = capsys.readouterr().out
    assert out.index("def loss_adjoint(x, w, v=None):") < out.index("def outer_forward(") \
        < out.index("def softplus_forward(")
    for name in ("outer_backward", "softplus_backward", "# outer (cli_commands_model.py:9)"):
        assert name in out
    assert "dw" not in out
    assert cli.main(["show", f"{model}:loss", "--wrt", "x,w"]) == 0
    assert "dw" in capsys.readouterr().out


def test_export_to_stdout_through_python_dash_m(model):
    done = run("export", f"{model}:softplus")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('"""The adjoint of softplus') and "def softplus_adjoint(z, v=None):" in done.stdout
    compile(done.stdout, "exported", "exec")


@pytest.mark.parametrize("argv, status, words", [
    (["show", "{dir}/missing.py:loss"], 2, "no such file"),
    (["show", "{model}"], 2, "FILE.py:FUNC"),
    (["show", "{model}:lost"], 2, "functions there: loss, outer, refused, softplus"),
    (["export", "{model}:loss", "--wrt", "X"], 1, "did you mean 'x'"),
    (["export", "{model}:loss", "--containers", "q"], 1, "not a parameter"),
    (["export", "{model}:refused"], 1, "cli_commands_model.py:21"),
    (["export", "{model}:loss", "-o", "{dir}/no/such/directory/out.py"], 2, "cannot write"),
])
def test_failures_exit_with_a_message(model, capsys, argv, status, words):
    argv = [a.format(dir=model.parent, model=model) for a in argv]
    assert cli.main(argv) == status
    err = capsys.readouterr().err
    assert words in err and err.startswith(f"srcad {argv[0]}:")


def test_a_file_that_fails_to_import_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "cli_broken.py"
    path.write_text("import numpy as np\nraise RuntimeError('broken on purpose')\n")
    assert cli.main(["show", f"{path}:f"]) == 2
    err = capsys.readouterr().err
    assert "importing" in err and "broken on purpose" in err


def test_bad_options_exit_2():
    with pytest.raises(SystemExit) as raised:
        cli.main(["export", "--no-such-option"])
    assert raised.value.code == 2


def test_console_script_is_the_command_line():
    pyproject = (ROOT / "pyproject.toml").read_text()  # (tomllib is 3.11+)
    section = pyproject.split("[project.scripts]\n", 1)[1].split("\n[", 1)[0]
    assert 'srcad = "srcad.cli:main"' in section.splitlines()
    module, _, name = "srcad.cli:main".partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is cli.main
    with pytest.raises(SystemExit) as raised:
        cli.main(["--help"])
    assert raised.value.code == 0


def test_a_decorated_function_exports_with_its_own_wrt_unless_told(tmp_path):
    path = tmp_path / "cli_decorated.py"
    path.write_text(textwrap.dedent('''
        import numpy as np
        import srcad


        @srcad.differentiable(wrt="b")
        def f(a, b):
            return np.sum(a * np.cos(b))
    '''))
    from srcad.export import export_source

    target = cli.load_target(f"{path}:f")
    assert "('b',)" in export_source(target).split("def _f_adjoint")[0]
    assert "('a',)" in export_source(target, "a").split("def _f_adjoint")[0]
