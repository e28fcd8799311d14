"""The user guide's Python example runs as written (the CLI reference itself is built
from the parser by sphinx-argparse: tests/test_docs_build.py checks its option entries)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_user_guide_python_example_runs(tmp_path, monkeypatch, capsys):
    """The user guide's Python block runs as written and its loss goes down."""
    with open(os.path.join(ROOT, "docs", "user_guide.md")) as f:
        text = f.read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "user_guide.md", "exec"), {})  # noqa: S102 -- the documented example
    losses = [float(line.split()[1]) for line in capsys.readouterr().out.splitlines()]
    assert len(losses) == 3 and losses[2] < losses[0] < 0.75
