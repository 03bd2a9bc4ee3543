"""Every ```python block in README.md and docs/*.md runs as written: the blocks of one file, in
order, as one script in a fresh process (srcad reads source, so the script is a real file).
A block that only illustrates (generated code, a fragment) is preceded by the line
``<!-- illustration -->`` and is skipped."""
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!-- illustration -->\n[ \t]*)?```python\n(.*?)```", re.S)


def runnable_blocks(text):
    return [code for marker, code in BLOCK.findall(text) if not marker]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_python_blocks_run(doc, tmp_path):
    blocks = runnable_blocks(doc.read_text())
    if not blocks:
        return
    script = tmp_path / f"{doc.stem.replace('-', '_')}_blocks.py"
    script.write_text("\n\n".join(blocks))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{doc.name}'s python blocks fail:\n{done.stderr[-3000:]}"
