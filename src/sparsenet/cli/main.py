"""Entry point of the ``sparsenet`` console script: one argparse parser, one subparser
per subcommand module.

A subcommand is a module of :mod:`sparsenet.cli` with two functions,
``add_parser(subparsers)`` (adds and returns its subparser) and ``run(args)``
(does the work, returns the exit status); adding one is adding its module to
:data:`SUBCOMMANDS`. A subcommand that reads paths may define ``check_inputs(args)``,
which raises for a missing one (:mod:`sparsenet.cli.paths`) and imports no torch:
:func:`main` calls it before anything else of the command.

>>> names = [module.__name__.rsplit(".", 1)[1] for module in SUBCOMMANDS]
>>> {"launch", "train", "evaluate", "predict", "inspect_cmd", "convert"} <= set(names)
True

A subcommand that fails on bad input raises the library's error (a
:class:`~sparsenet.base.SparsenetError`) or an ``OSError``; :func:`main` prints it
as one line, ``sparsenet: error: <message>``, on stderr (no traceback) and
returns 1. Ctrl-C (``KeyboardInterrupt``) prints ``sparsenet: interrupted`` and returns
130, as shells report a process stopped by SIGINT. A closed output pipe
(``sparsenet predict ... | head -1``) ends the command quietly with status 141, as a
Unix tool stopped by SIGPIPE does.

``sparsenet --version`` prints the version; a mistyped command or choice is answered
with the closest valid one (``did you mean 'train'?``, :mod:`difflib`, on every Python).

Start-up: building the parser imports no torch, NumPy or SciPy (a subcommand module
imports those inside its ``run``), and ``import sparsenet`` loads its namespaces on first
use, so ``sparsenet --help``, a usage error, ``sparsenet inspect`` and a missing input
path of ``train``, ``eval``, ``predict`` or ``convert`` (``check_inputs``) answer without
loading torch (tests/test_startup.py). A subcommand with ``--threads`` (``train``,
``eval``, ``predict``) runs under :func:`sparsenet.cli.threads.torch_threads`, which imports
torch; a subcommand module's optional ``prepare(args)`` runs before, and starts work that
needs no torch in the background, and such a command starts with the garbage collector off
until it settles (:mod:`sparsenet.cli.head_start`).
"""
import argparse
import atexit
import difflib
import os
import sys

from ..base import SparsenetError
from . import bench, convert, demo, evaluate, inspect_cmd, launch, predict, train
from .head_start import quiet_heap
from .threads import torch_threads

__all__ = ["SUBCOMMANDS", "build_parser", "main", "program", "ERRORS", "one_line",
           "INTERRUPTED", "BROKEN_PIPE", "Parser"]

#: Exit status after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130

#: Exit status when the reader of the output went away (128 + SIGPIPE), as ``yes | head``.
BROKEN_PIPE = 141

#: The errors :func:`main` reports as one line (exit status 1) instead of a traceback.
ERRORS = (SparsenetError, OSError)

#: The subcommand modules, in the order ``sparsenet --help`` lists them.
SUBCOMMANDS = (launch, train, evaluate, predict, inspect_cmd, convert, demo, bench)


class Parser(argparse.ArgumentParser):
    """argparse's parser, with ``did you mean`` for a mistyped choice (a command or an
    option's value), found with :func:`difflib.get_close_matches`; argparse's own
    ``suggest_on_error`` exists only on Python 3.14 and later.

    >>> p = Parser(prog="p")
    >>> _ = p.add_argument("--model", choices=("logistic", "linear"))
    >>> p._check_value(p._actions[-1], "logistc")
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument --model: invalid choice: 'logistc'; did you mean
    'logistic'? (choose from 'logistic', 'linear')
    """

    def _check_value(self, action, value):
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            return super()._check_value(action, value)
        names = [c for c in choices if isinstance(c, str)]
        close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listed = ", ".join(repr(c) for c in choices)
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} "
                                             f"(choose from {listed})")


def _version():
    """``sparsenet.__version__``: the parent package is imported before any of its
    subpackages, so it is read from ``sys.modules`` (no import across layers)."""
    return sys.modules[__name__.split(".", 1)[0]].__version__


def build_parser():
    """The ``sparsenet`` argument parser with every subcommand of :data:`SUBCOMMANDS`.

    >>> args = build_parser().parse_args(["launch", "-n", "3", __file__, "--lr", "0.1"])
    >>> args.nproc, args.script_args
    (3, ['--lr', '0.1'])
    """
    parser = Parser(
        prog="sparsenet", description="sparsenet: MXNet's sparse NDArray system on PyTorch.")
    parser.add_argument("--version", action="version", version=f"sparsenet {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run, _prepare=getattr(module, "prepare", None),
                         _check=getattr(module, "check_inputs", None))
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
        if args._check is not None:
            args._check(args)  # a missing input path, reported before torch loads
        if args._prepare is None:
            return _run(args)
        with quiet_heap():  # start-up: no garbage collection until the command settle_heap()s
            args._prepare(args)  # torch-free work, overlapping the import of torch
            return _run(args)
    except BrokenPipeError:  # the reader of our output is gone (| head): nothing to report
        _silence_stdout()
        return BROKEN_PIPE
    except ERRORS as exc:
        print(f"sparsenet: error: {one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sparsenet: interrupted", file=sys.stderr)
        return INTERRUPTED


def program():
    """The ``sparsenet`` program (``python -m sparsenet``): :func:`main` on ``sys.argv``,
    then the end of the process.

    Once a command has loaded torch, the interpreter's own teardown (freeing every module's
    objects one by one) takes 0.3-0.4 s, a fifth of a short ``sparsenet train``: so after
    stdout and stderr are flushed and the ``atexit`` handlers have run, the process ends at
    once with the command's status (:func:`os._exit`). Every file the commands write is
    closed before they return (:func:`sparsenet.atomic.atomic_write`). Without torch it
    returns the status, for ``sys.exit``.
    """
    code = main()
    if "torch" not in sys.modules:
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader of our output is gone (| head)
            code = BROKEN_PIPE if stream is sys.stdout else code
        except (OSError, ValueError):  # closed or not a file: nothing more to write there
            pass
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is not None:
        run_exit_handlers()
    os._exit(_status(code))


def _status(code):
    """The exit status ``sys.exit(code)`` would give: None is 0, an int itself, anything
    else 1 (after printing it to stderr, as ``sys.exit`` does).

    >>> _status(None), _status(3)
    (0, 3)
    """
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed: the status still says it failed
        pass
    return 1


def _run(args):
    if "threads" not in vars(args):
        return args._run(args)
    with torch_threads(args.threads):
        return args._run(args)


def _silence_stdout():
    """Point stdout at the null device, so that the interpreter's final flush of what was
    left in the buffer for the closed pipe raises nothing at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a file (a test's capture)
        pass


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
    sys.exit(program())
