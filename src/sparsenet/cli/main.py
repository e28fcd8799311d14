"""Entry point of the ``sparsenet`` console script: one argparse parser, one subparser
per subcommand module.

A subcommand is a module of :mod:`sparsenet.cli` with two functions,
``add_parser(subparsers)`` (adds and returns its subparser) and ``run(args)``
(does the work, returns the exit status); adding one is adding its module to
:data:`SUBCOMMANDS`.

>>> names = [module.__name__.rsplit(".", 1)[1] for module in SUBCOMMANDS]
>>> {"launch", "train", "evaluate", "predict", "inspect_cmd", "convert"} <= set(names)
True

A subcommand that fails on bad input raises the library's error (a
:class:`~sparsenet.base.SparsenetError`) or an ``OSError``; :func:`main` prints it
as one line, ``sparsenet: error: <message>``, on stderr (no traceback) and
returns 1. Ctrl-C (``KeyboardInterrupt``) prints ``sparsenet: interrupted`` and returns
130, as shells report a process stopped by SIGINT.

Start-up: building the parser imports no torch, NumPy or SciPy (a subcommand module
imports those inside its ``run``), and ``import sparsenet`` loads its namespaces on first
use, so ``sparsenet --help``, a usage error and ``sparsenet inspect`` answer without
loading torch (tests/test_startup.py). A subcommand with ``--threads`` (``train``,
``eval``, ``predict``) runs under :func:`sparsenet.cli.threads.torch_threads`.
"""
import argparse
import sys

from ..base import SparsenetError
from . import bench, convert, demo, evaluate, inspect_cmd, launch, predict, train
from .threads import torch_threads

__all__ = ["SUBCOMMANDS", "build_parser", "main", "ERRORS", "one_line", "INTERRUPTED"]

#: Exit status after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130

#: The errors :func:`main` reports as one line (exit status 1) instead of a traceback.
ERRORS = (SparsenetError, OSError)

#: The subcommand modules, in the order ``sparsenet --help`` lists them.
SUBCOMMANDS = (launch, train, evaluate, predict, inspect_cmd, convert, demo, bench)


def build_parser():
    """The ``sparsenet`` argument parser with every subcommand of :data:`SUBCOMMANDS`.

    >>> args = build_parser().parse_args(["launch", "-n", "3", __file__, "--lr", "0.1"])
    >>> args.nproc, args.script_args
    (3, ['--lr', '0.1'])
    """
    parser = argparse.ArgumentParser(
        prog="sparsenet", description="sparsenet: MXNet's sparse NDArray system on PyTorch.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv=None):
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the subcommand, return its exit status.

    Usage errors exit with status 2 through argparse, as every argparse program does;
    the errors of :data:`ERRORS` a subcommand raises are printed as
    ``sparsenet: error: <message>`` on stderr and give status 1.

    >>> try:
    ...     main(["launch", "-n", "0", "train.py"])   # argparse prints the error on stderr
    ... except SystemExit as exc:
    ...     print(exc.code)
    2
    """
    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
        if "threads" not in vars(args):
            return args._run(args)
        with torch_threads(args.threads):
            return args._run(args)
    except ERRORS as exc:
        print(f"sparsenet: error: {one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sparsenet: interrupted", file=sys.stderr)
        return INTERRUPTED


def one_line(exc):
    """``exc``'s message on one line (an ``OSError`` with its file name, as the shell words it).

    >>> one_line(FileNotFoundError(2, "no such file or directory", "d.svm"))
    'd.svm: no such file or directory'
    >>> one_line(ValueError("a\\nb"))
    'a b'
    """
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
