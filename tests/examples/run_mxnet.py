"""Run one example program on one recipe's data and print its result as JSON.

    /tmp/mx/bin/python tests/examples/run_mxnet.py PROGRAM RECIPE DATA_DIR [--library mxnet]
    .venv/bin/python    tests/examples/run_mxnet.py PROGRAM RECIPE DATA_DIR --library sparsenet

With ``--library mxnet`` (the default) the name ``sparsenet`` is made to resolve
to ``mxnet`` before the program is imported, so the program file that the tests
run on sparsenet runs unchanged on MXNet 1.9.1. This is how the MXNet numbers
hard-coded in ``test_*.py`` were measured, and how ``bench_examples.py`` times MXNet.
The data files are written into DATA_DIR first (skipped with ``--no-data`` when
they are there already). The result gains ``cpu_seconds``: the process's CPU time
over the program's timed blocks (:class:`tests.examples.common.Clock`).
"""
import argparse
import importlib
import json
import logging
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program")
    ap.add_argument("recipe")
    ap.add_argument("data_dir")
    ap.add_argument("--library", choices=("mxnet", "sparsenet"), default="mxnet")
    ap.add_argument("--no-data", action="store_true")
    ap.add_argument("--options", default="{}", help="JSON of extra train() keyword arguments")
    args = ap.parse_args()
    sys.path.insert(0, ROOT)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    if args.library == "mxnet":
        os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"
        import mxnet
        sys.modules["sparsenet"] = mxnet
    from tests.examples import common, recipes
    saved = os.path.join(args.data_dir, "kwargs.json")
    if args.no_data:
        with open(saved) as f:
            kwargs = json.load(f)
    else:
        kwargs = recipes.prepare(args.program, args.recipe, args.data_dir)
        with open(saved, "w") as f:
            json.dump(kwargs, f)
    kwargs.update(json.loads(args.options))
    program = importlib.import_module(f"tests.examples.{args.program}_program")
    result = program.train(args.data_dir, **kwargs)
    result.setdefault("cpu_seconds", common.Clock.process_cpu_seconds)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
