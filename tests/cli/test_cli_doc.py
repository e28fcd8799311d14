"""``tools/gen_cli_doc.py``: docs/cli.md holds every subcommand's --help, whatever the terminal."""
import importlib.util
import os

from sparsenet.cli.main import SUBCOMMANDS, build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "gen_cli_doc", os.path.join(ROOT, "tools", "gen_cli_doc.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_subcommand_has_its_help(monkeypatch):
    tool = _tool()
    monkeypatch.setenv("COLUMNS", "40")
    text = tool.render()
    assert os.environ["COLUMNS"] == "40"
    monkeypatch.setenv("COLUMNS", "200")
    assert tool.render() == text  # the terminal's width does not matter
    parser = build_parser()
    names = [a for a in parser._actions if hasattr(a, "choices") and a.choices][0].choices
    assert len(names) == len(SUBCOMMANDS)
    for name in names:
        assert f"## sparsenet {name}\n\n```text\nusage: sparsenet {name} [-h]" in text
    assert "--max-dense-bytes B" in text and "--index-base {0,1,auto}" in text


def test_user_guide_python_example_runs(tmp_path, monkeypatch, capsys):
    """The user guide's Python block runs as written and its loss goes down."""
    with open(os.path.join(ROOT, "docs", "user_guide.md")) as f:
        text = f.read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "user_guide.md", "exec"), {})  # noqa: S102 -- the documented example
    losses = [float(line.split()[1]) for line in capsys.readouterr().out.splitlines()]
    assert len(losses) == 3 and losses[2] < losses[0] < 0.75
