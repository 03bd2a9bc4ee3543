"""docs/rules.md is generated from the rule tables and must be current."""
import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_tool():
    spec = importlib.util.spec_from_file_location("rules_doc", ROOT / "tools" / "rules_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rules_doc_is_current():
    # a fresh interpreter: rules that other tests register must not leak into the document
    generated = subprocess.run([sys.executable, str(ROOT / "tools" / "rules_doc.py"), "--stdout"], check=True,
                               capture_output=True, text=True, encoding="utf-8").stdout.splitlines()
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8").splitlines()
    tool = load_tool()
    stale = "docs/rules.md is stale: run `python tools/rules_doc.py`"
    missing = [line for line in generated if line not in committed]
    assert all(tool.first_name(line) in tool.OLDER_NUMPY_ONLY for line in missing), (stale, missing)
    generated = [line for line in generated if line not in missing]
    # lines this Python or NumPy cannot generate (math.cbrt before 3.11) must name
    # something that does not exist here; any other difference is drift
    extra = [line for line in committed if line not in generated]
    assert all(tool.first_name(line) and not tool.resolves(tool.first_name(line)) for line in extra), (stale, extra)
    assert [line for line in committed if line not in extra] == generated, stale


def test_names_resolve():
    tool = load_tool()
    assert tool.resolves("numpy.linalg.norm") and tool.resolves("math.hypot") and tool.resolves("gast.Add")
    assert not tool.resolves("math.no_such_function") and not tool.resolves("nosuchmodule.f")
    assert tool.first_name("| `numpy.absolute` (`numpy.abs`) | ✓ | ✓ | numpy_core |") == "numpy.absolute"
    assert tool.first_name("## numpy") is None
    assert tool.first_name("| `x.clip()` | `numpy.clip` | ✓ | ✓ |") is None
    assert tool.first_name("| `x + y` (`gast.Add`) | ✓ | ✓ | operators |") is None
