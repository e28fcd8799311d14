"""``sparsenet train``'s defaults: what ``--help`` says is what a run does, and the batches
made ahead in a background thread train the very weights the plain iteration trains."""
import json
import os
import re

import numpy as np
import pytest

import sparsenet as mx
import sparsenet.cli.fit_loop as fit_loop
from sparsenet.cli.main import build_parser, main
from sparsenet.cli.read_ahead import read_ahead
from tests.cli.libsvm_data import FEATURES, make_task

# The defaults chosen from the grid in BENCHMARKS.md ("sparsenet train vs Vowpal Wabbit"),
# written out here: a change must be a decision, made in the docs and here too.
CHOSEN = {"epochs": 1, "batch_size": 1024, "optimizer": "adam", "lr": 0.02, "patience": 2}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_task(tmp_path_factory.mktemp("defaults"), "binary", rows=3000)


def _help(command):
    """``{flag: help text}`` of the subcommand, as ``--help`` prints it (one line each)."""
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    formatter = sub._get_formatter()
    return {flag: " ".join(formatter._expand_help(action).split())
            for action in sub._actions if action.help for flag in action.option_strings}


def _documented(helps, flag):
    """The ``(default ...)`` text of ``flag``'s help."""
    found = re.search(r"\(default:? ([^)]*)\)", helps[flag])
    assert found, f"{flag} documents no default"
    return found.group(1)


def test_help_states_the_chosen_defaults():
    text = _help("train")
    assert _documented(text, "--epochs").startswith(f"{CHOSEN['epochs']};")
    assert _documented(text, "--batch-size") == str(CHOSEN["batch_size"])
    assert _documented(text, "--patience") == str(CHOSEN["patience"])
    assert f"adam {CHOSEN['lr']:g}" in _documented(text, "--lr")
    assert text["--optimizer"] == "default adam"
    for command in ("eval", "predict"):
        assert _documented(_help(command), "--batch-size") == str(CHOSEN["batch_size"])


def test_a_run_with_the_defaults_does_what_help_says(data, tmp_path, capsys):
    train, val, _ = data
    out = tmp_path / "m"
    assert main(["train", train, "--features", str(FEATURES), "--val", val, "--out",
                 str(out), "--quiet"]) == 0
    config = json.loads((out / "model.json").read_text())
    assert config["batch_size"] == CHOSEN["batch_size"]
    assert config["optimizer"] == CHOSEN["optimizer"]
    assert config["optimizer_params"]["learning_rate"] == CHOSEN["lr"]
    with open(out / "metrics.jsonl") as f:
        history = [json.loads(line) for line in f]
    assert [r["epoch"] for r in history] == list(range(1, CHOSEN["epochs"] + 1))
    assert capsys.readouterr().out.startswith(f"epoch 1/{CHOSEN['epochs']} ")


def test_parser_defaults_match_the_documented_ones():
    args = build_parser().parse_args(["train", "d.svm", "--out", "m"])
    assert (args.epochs, args.optimizer, args.patience) == \
        (CHOSEN["epochs"], CHOSEN["optimizer"], CHOSEN["patience"])
    assert args.batch_size is None  # the default applied by run(), or a resumed run's own
    from sparsenet.cli.train import DEFAULT_BATCH_SIZE, OPTIMIZERS
    assert (DEFAULT_BATCH_SIZE, OPTIMIZERS["adam"]) == (CHOSEN["batch_size"], CHOSEN["lr"])


def _weights(out):
    config = json.loads(open(os.path.join(out, "model.json")).read())
    params = mx.nd.load(os.path.join(out, config["params_file"]))
    return {k: v.asnumpy() for k, v in params.items()}


def test_read_ahead_trains_the_same_weights_bit_for_bit(data, tmp_path, monkeypatch):
    """Batches made in the background thread (the default) against the plain iteration,
    same seed: identical weights and metrics, bit for bit."""
    train, val, _ = data
    flags = ["--features", str(FEATURES), "--val", val, "--quiet", "--epochs", "3",
             "--batch-size", "64", "--seed", "7"]
    ahead = tmp_path / "ahead"
    assert main(["train", train, "--out", str(ahead), *flags]) == 0
    monkeypatch.setattr(fit_loop, "read_ahead", lambda batches, depth=2: batches)
    plain = tmp_path / "plain"
    assert main(["train", train, "--out", str(plain), *flags]) == 0
    a, b = _weights(ahead), _weights(plain)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key].tobytes() == b[key].tobytes(), key
    assert (ahead / "metrics.jsonl").read_text().count('"val"') == 3
    strip = [re.sub(r'"seconds": [0-9.e-]+', "", p.read_text())
             for p in (ahead / "metrics.jsonl", plain / "metrics.jsonl")]
    assert strip[0] == strip[1]


def test_read_ahead_yields_in_order_and_raises_where_the_source_raised():
    def source():
        yield from range(3)
        raise mx.base.InvalidArgumentError("bad row")

    got = []
    with pytest.raises(mx.base.InvalidArgumentError, match="bad row"):
        for item in read_ahead(source(), depth=1):
            got.append(item)
    assert got == [0, 1, 2]


def test_read_ahead_stops_its_thread_when_the_consumer_stops():
    import threading

    made = []

    def source():
        for i in range(10_000):
            made.append(i)
            yield np.zeros(1)

    it = read_ahead(source(), depth=2)
    next(it)
    it.close()
    assert not any(t.name == "sparsenet-read-ahead" and t.is_alive()
                   for t in threading.enumerate())
    assert len(made) < 10
