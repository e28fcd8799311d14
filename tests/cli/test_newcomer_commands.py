"""The ``sparsenet`` command as a newcomer meets it: ``--version``, "did you mean" for a
mistyped command or choice, ``--help`` in plain text, ``| head`` ends quietly, and one
"no such file" wording for every command."""
import importlib.metadata
import os
import re
import subprocess
import sys

import pytest

from sparsenet.cli.main import SUBCOMMANDS, build_parser
from tests.cli.newcomer_data import random_rows, run, write_rows

ENV = dict(os.environ, OMP_NUM_THREADS="1")


def test_version():
    status, out, _ = run(["--version"])
    assert (status, out) == (0, f"sparsenet {importlib.metadata.version('sparsenet')}\n")


def test_mistyped_command_gets_the_closest():
    status, _, err = run(["trian", "d.svm"])
    assert status == 2
    assert err.splitlines()[-1] == (
        "sparsenet: error: argument COMMAND: invalid choice: 'trian'; did you mean 'train'? "
        "(choose from 'launch', 'train', 'eval', 'predict', 'inspect', 'convert', 'demo', "
        "'bench')")


def test_mistyped_choice_gets_the_closest():
    status, _, err = run(["train", "d.svm", "--out", "m", "--model", "logistc"])
    assert status == 2
    assert err.splitlines()[-1].endswith(
        "argument --model: invalid choice: 'logistc'; did you mean 'logistic'? (choose from "
        "'linear', 'logistic', 'softmax', 'fm', 'widedeep', 'mlp')")


def test_nothing_close_gets_no_guess():
    status, _, err = run(["xyzzy"])
    assert status == 2 and "did you mean" not in err and "invalid choice: 'xyzzy'" in err


_NAMES = [m.__name__.rsplit(".", 1)[1] for m in SUBCOMMANDS]
_COMMANDS = {"evaluate": "eval", "inspect_cmd": "inspect"}


@pytest.mark.parametrize("command", [_COMMANDS.get(n, n) for n in _NAMES])
def test_help_is_plain_text(command, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: sparsenet {command}")
    # no Sphinx/reST markup: roles such as :class:`~x`, ``literals``
    assert not re.search(r":[a-z]+:`|``", text), text


def test_predict_into_a_closed_pipe_ends_quietly(tmp_path):
    # ~500 KB of predictions: far more than a pipe's buffer (64 KiB), so the writer is
    # still writing when the reader goes away
    rows = random_rows(20000, 20, seed=0)
    data = write_rows(tmp_path / "d.svm", [i % 2 for i in range(20000)], rows)
    model = tmp_path / "m"
    status, _, err = run(["train", data, "--features", "20", "--out", str(model), "--quiet",
                          "--epochs", "1"])
    assert status == 0, err
    # a real pipe: the reader takes one line and closes it, as `| head -1` does
    proc = subprocess.Popen([sys.executable, "-m", "sparsenet", "predict", str(model), data,
                             "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert len(first.split()) == 2
    assert err == ""  # no "[Errno 32] Broken pipe", no "Exception ignored"
    assert proc.returncode == 141  # 128 + SIGPIPE, as a Unix tool stopped by it


def test_missing_file_one_format_for_all_commands(tmp_path):
    rows = random_rows(10, 5, seed=0)
    data = write_rows(tmp_path / "d.svm", [i % 2 for i in range(10)], rows)
    model = tmp_path / "m"
    assert run(["train", data, "--out", str(model), "--quiet", "--epochs", "1"])[0] == 0
    nope = str(tmp_path / "nope.svm")
    expected = f"sparsenet: error: {nope}: no such file or directory\n"
    for argv in (["train", nope, "--out", str(tmp_path / "o")], ["inspect", nope],
                 ["eval", str(model), nope], ["predict", str(model), nope],
                 ["convert", nope, str(tmp_path / "o.npz")]):
        status, _, err = run(argv)
        assert (status, err) == (1, expected), argv
