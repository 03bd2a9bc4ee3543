"""The numba backend keeps lowered code in the persistent cache (``backends.numba_lowered``):
a later process skips the lowering when every name it resolved denotes the same, gets the
same text and the generated line numbers back, and never uses a tampered entry."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import gast
import numpy as np
import pytest

from srcad import astutil as A
from srcad import compile as srcad_compile

numba = pytest.importorskip("numba")  # the optional extra: srcad[numba]

from srcad.backends import numba_backend, numba_lowered  # noqa: E402

ROOT = str(pathlib.Path(importlib.util.find_spec("srcad").origin).parents[1])


def step(s, c):
    return s * c + np.sin(s)


def program(x, c):
    s = x
    for _ in range(4):
        s = step(s, c)
        if s > 1.0:
            s = s - 0.5
    return s * s


def lowered_once(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(tmp_path / "cache"))
    compiled = srcad_compile.compile_function(program, ("x", "c"))
    generated = compiled.generated
    generated.ensure_pair()
    source = generated.module_source + generated.pair_module_source
    names = [f"{generated.name}_{part}" for part in ("adjoint", "forward", "backward")]
    resolve = numba_backend._resolver(generated, program)
    recorder = numba_lowered.Recorder(resolve)
    lowered, count, text = numba_backend._lower(source, names, program, recorder, numba)
    return source, resolve, recorder, lowered, count, text


def statement_lines(functions):
    return [line for _, line in numba_lowered._statements(gast.Module(body=functions, type_ignores=[]))]


def test_a_kept_lowering_comes_back_with_its_text_and_generated_lines(tmp_path, monkeypatch):
    source, resolve, recorder, lowered, count, text = lowered_once(tmp_path, monkeypatch)
    assert recorder.asked and any(v is not None for v in recorder.asked.values())
    functions, kept_count, kept_text = numba_lowered.load(source, resolve, numba)
    assert kept_count == count and kept_text == text
    assert [f.name for f in functions] == [f.name for f in lowered]
    assert A.to_source(gast.Module(body=functions, type_ignores=[])) == text
    assert statement_lines(functions) == statement_lines(lowered)  # errors still name the user's lines
    assert len(set(statement_lines(functions))) > 3  # real generated lines, not a default


def test_an_entry_is_not_used_when_a_resolved_name_denotes_another_object(tmp_path, monkeypatch):
    source, resolve, recorder, *_ = lowered_once(tmp_path, monkeypatch)
    changed = next(name for name, obj in recorder.asked.items() if obj is not None)
    assert numba_lowered.load(source, lambda name: None if name == changed else resolve(name), numba) is None
    assert numba_lowered.load(source + "\n", resolve, numba) is None  # other generated code: another key


def test_a_tampered_entry_is_never_used(tmp_path, monkeypatch):
    source, resolve, *_ = lowered_once(tmp_path, monkeypatch)
    directory = tmp_path / "cache"
    for name in os.listdir(directory):
        path = directory / name
        if path.is_file():
            data = path.read_text(encoding="utf-8")
            header, _, payload = data.partition("\n\n")
            entry = json.loads(payload)
            if "lines" in entry:
                entry["text"] = entry["text"].replace("*", "+", 1)
                path.write_text(f"{header}\n\n{json.dumps(entry, sort_keys=True)}", encoding="utf-8")
    assert numba_lowered.load(source, resolve, numba) is None


SECOND_PROCESS = """
    import json, sys
    import numpy as np
    import srcad
    from srcad.passes import numba_lowering


    def step(s, c):
        return s * c + np.sin(s)


    def program(x, c):
        s = x
        for _ in range(3):
            s = step(s, c)
        return s * s


    if sys.argv[1] == "second":
        def refuse(*args, **kwargs):
            raise AssertionError("lowered again")
        numba_lowering.lower_for_numba = refuse
    grads = srcad.grad(program, wrt=(0, 1), backend="numba")(0.3, 0.7)
    print(json.dumps([float(g) for g in grads]))
"""


def run_twice(tmp_path, name, text):
    """``text`` as the script ``name``, run as a "first" then a "second" fresh process sharing
    one new ``SRCAD_CACHE_DIR``: the script's path, and the JSON each printed last."""
    env = {"PYTHONPATH": ROOT, "PATH": "", "SRCAD_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_NUM_THREADS": "1"}
    script = tmp_path / name
    script.write_text(textwrap.dedent(text), encoding="utf-8")
    outputs = []
    for which in ("first", "second"):
        result = subprocess.run([sys.executable, str(script), which], capture_output=True, text=True, cwd=ROOT,
                                env=env)
        assert result.returncode == 0, result.stderr
        outputs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return script, outputs


def test_a_second_process_runs_the_kept_lowering(tmp_path):
    script, runs = run_twice(tmp_path, "loop_program.py", SECOND_PROCESS)
    assert runs[0] == runs[1]

    def program(x, c):
        s = x
        for _ in range(3):
            s = s * c + np.sin(s)
        return s * s

    for k, h in enumerate((1e-6, 1e-6)):  # central differences in each argument
        at = [0.3, 0.7]
        up, down = list(at), list(at)
        up[k] += h
        down[k] -= h
        assert abs((program(*up) - program(*down)) / (2 * h) - runs[1][k]) < 1e-6


REFUSED = """
    import json, sys
    import numpy as np
    import srcad
    from srcad.backends.numba_backend import BackendCompileError
    from srcad.passes import numba_lowering


    def einsum_loss(x):
        s = 0.0
        for i in range(2):
            s = s + np.einsum("i,i->", x, x)
        return s


    if sys.argv[1] == "second":
        def refuse(*args, **kwargs):
            raise AssertionError("lowered again")
        numba_lowering.lower_for_numba = refuse
    try:
        srcad.grad(einsum_loss, backend="numba")(np.ones(3))
        message = None
    except BackendCompileError as exc:
        message = str(exc)
    print(json.dumps(message))
"""


def test_numba_refuses_kept_lowered_code_at_the_same_user_line(tmp_path):
    script, messages = run_twice(tmp_path, "refused_program.py", REFUSED)
    line = next(k for k, text in enumerate(script.read_text().splitlines(), 1) if "np.einsum" in text)
    assert messages[0] is not None and f"refused_program.py:{line}: backend='numba' cannot compile" in messages[0]
    assert messages[1] == messages[0]
