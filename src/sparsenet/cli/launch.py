"""``sparsenet launch``: run a training script as N processes on this machine.

A thin wrapper over PyTorch's launcher (``torchrun``, :mod:`torch.distributed.run`),
called in-process with ``torchrun --standalone --nnodes 1 --nproc-per-node N``
semantics: each worker runs ``script.py [script args...]`` as ``python script.py``
would (through :mod:`sparsenet.cli._worker`, which records a failure's traceback and
time for the report) with the standard ``torchrun`` environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``, ...), which
``mx.kv.create('dist_sync')`` reads. ``--timeout S`` sets ``SPARSENET_DIST_TIMEOUT=S``
(seconds) for the workers: the time any collective may wait before it fails. The exit
status is the failed worker's (0 when all succeed); torchrun's failure report, its
root cause first (:func:`root_cause_first`), goes to stderr.

For several machines, run plain ``torchrun`` on each (see ``docs/distributed.md``).

>>> from sparsenet.cli.main import build_parser
>>> args = build_parser().parse_args(["launch", "-n", "2", "--timeout", "60", __file__, "-v"])
>>> torchrun_argv(args)[:4]
['--standalone', '--nnodes', '1', '--nproc-per-node']
>>> torchrun_argv(args)[-2:] == [__file__, '-v']
True
"""
import argparse
import functools
import os
import signal
import sys
import uuid

from . import _worker
from .arg_types import number, port

__all__ = ["add_parser", "run", "torchrun_argv", "root_cause_first", "TIMEOUT_ENV", "WORKER",
           "PEER_LOST"]

#: The environment variable ``--timeout`` sets for the workers (seconds).
TIMEOUT_ENV = "SPARSENET_DIST_TIMEOUT"

#: The longest ``--timeout``: :data:`sparsenet.kvstore.collective.MAX_TIMEOUT`, restated
#: here so that building the parser imports no torch (tests/test_startup.py checks they agree).
MAX_TIMEOUT = 1e9

#: ``--timeout``: what :func:`sparsenet.kvstore.collective.timeout_seconds` accepts.
_TIMEOUT = number(float, lambda v: 0 < v <= MAX_TIMEOUT,
                  f"a number of seconds in (0, {MAX_TIMEOUT:g}]")

#: The file each worker runs, which runs the script (see :mod:`sparsenet.cli._worker`).
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")

_DESCRIPTION = """\
Run script.py as N processes on this machine (ranks 0..N-1), a thin wrapper over
torchrun --standalone --nnodes 1 --nproc-per-node N. Each worker gets the standard
torchrun environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), which
mx.kv.create('dist_sync') reads. The exit status is the failed worker's (0 when all
succeed), and torchrun's report names the failed rank."""

_EPILOG = """\
examples:
  sparsenet launch -n 2 train.py --epochs 3
  sparsenet launch -n 4 --timeout 120 --master-port 29501 train.py
  python -m sparsenet.cli launch -n 2 train.py     # without the console script

several machines: run plain torchrun on every node, e.g.
  torchrun --nnodes 2 --nproc-per-node 4 --rdzv-backend c10d \\
           --rdzv-endpoint HOST:29400 --rdzv-id JOB train.py
(see docs/distributed.md)."""


def _script(path):
    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "no such file"
        raise argparse.ArgumentTypeError(
            f"expected the path of a Python script to run, got {path!r} ({what})")
    return path


_nproc = number(int, lambda v: v >= 1, "a positive integer number of processes",
                show_value=True)


def add_parser(subparsers):
    """Add the ``launch`` subparser to ``subparsers`` and return it.

    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> add_parser(sub).prog.endswith("launch")
    True
    """
    parser = subparsers.add_parser(
        "launch", help="run a training script as N processes on this machine (torchrun)",
        description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--nproc", type=_nproc, required=True, metavar="N",
                        help="number of worker processes (ranks), a positive integer")
    parser.add_argument("--master-port", type=port, default=None, metavar="P",
                        help="TCP port of the rendezvous on 127.0.0.1 (default: a free port)")
    parser.add_argument("--timeout", type=_TIMEOUT, default=None, metavar="S",
                        help=f"seconds a collective may wait before it fails: sets {TIMEOUT_ENV} "
                             "for the workers (default: the store's default, 600)")
    parser.add_argument("script", type=_script, metavar="script.py",
                        help="the Python script every worker runs")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="...",
                        help="arguments passed to the script unchanged")
    return parser


def torchrun_argv(args):
    """The ``torchrun`` command line (without the program name) that ``args`` launches.

    >>> from argparse import Namespace
    >>> torchrun_argv(Namespace(nproc=2, master_port=None, script="t.py", script_args=[]))
    ['--standalone', '--nnodes', '1', '--nproc-per-node', '2', '.../_worker.py', 't.py']
    >>> torchrun_argv(Namespace(nproc=2, master_port=29501, script="t.py", script_args=[]))[:6]
    ['--nnodes', '1', '--nproc-per-node', '2', '--master-addr', '127.0.0.1']
    """
    if args.master_port is None:
        rendezvous = ["--standalone", "--nnodes", "1", "--nproc-per-node", str(args.nproc)]
    else:  # torchrun's static rendezvous on the given port: the workers' MASTER_PORT
        rendezvous = ["--nnodes", "1", "--nproc-per-node", str(args.nproc),
                      "--master-addr", "127.0.0.1", "--master-port", str(args.master_port),
                      "--rdzv-id", uuid.uuid4().hex]
    return rendezvous + [WORKER, args.script] + list(args.script_args)


#: Phrases of the errors a rank raises when another rank failed first: gloo's transport
#: errors, timeouts, and the DistributedError messages of :mod:`sparsenet.kvstore.collective`.
PEER_LOST = ("Connection closed by peer", "Connection reset by peer", "Broken pipe",
             "remote worker", "Timed out", "timed out", "lost the connection to a peer",
             "an earlier collective failed")


def _recorded_time(failure):
    """The exact time ``_worker`` recorded for ``failure``'s exception, or None."""
    data = failure.error_file_data.get("message")
    extra = data.get("extraInfo", {}) if isinstance(data, dict) else {}
    return float(extra[_worker.TIME_KEY]) if _worker.TIME_KEY in extra else None


def _failure_order(failure):
    """Sort key putting the root cause of a multi-rank failure first.

    First a rank killed by a signal other than SIGTERM (the signal torchrun stops
    the other workers with) that left no error file; then ranks that raised an
    error of their own, then ranks that raised because another rank failed or hung
    (:data:`PEER_LOST`), each by the time the worker recorded
    (``_worker.TIME_KEY``); then the rest (SIGTERM, non-zero exits without an error file).
    """
    when = _recorded_time(failure)
    if when is not None:
        lost = any(phrase in str(failure.message) for phrase in PEER_LOST)
        return (2 if lost else 1, when)
    if failure.exitcode < 0 and -failure.exitcode != signal.SIGTERM:
        return (0, float(failure.timestamp))
    return (3, float(failure.timestamp))


def __getattr__(name):
    """``launch.torchrun`` (:mod:`torch.distributed.run`), imported on first access."""
    if name == "torchrun":
        # on first use: torch.distributed is not imported to build the parser
        from torch.distributed import run as torchrun
        return torchrun
    # builtin: a module __getattr__ must raise AttributeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=None)
def _ordered_failures_class():
    """``_OrderedFailures``: a ``ChildFailedError`` whose root cause is its first failure
    (in insertion order). Built on first use: torch.distributed loads only when launching."""
    # on first use: torch.distributed is not imported to build the parser (sparsenet --help)
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    class _OrderedFailures(ChildFailedError):
        def get_first_failure(self):
            rank = next(iter(self.failures))
            return rank, self.failures[rank]

    return _OrderedFailures


def root_cause_first(exc, name):
    """``exc`` (a ``ChildFailedError``) named ``name``, its root cause reported first.

    torchrun's report calls the failure with the earliest timestamp the root
    cause, but its timestamps are whole seconds, and a rank that left no error
    file is stamped when the launcher noticed it; so it often names a rank that
    only saw its peer go away ("Connection closed by peer"). The failures are
    reordered by :func:`_failure_order` and the first one is the root cause.
    """
    ordered = dict(sorted(exc.failures.items(), key=lambda item: _failure_order(item[1])))
    return _ordered_failures_class()(name, ordered)


def _exit_status(failure):
    """The exit status of a failed worker, as a shell reports it.

    1 for a worker that raised (its exception was recorded, even if torchrun then
    stopped it with SIGTERM while it was cleaning up), else its exit code, a
    signal ``-k`` becoming ``128 + k``.
    """
    code = failure.exitcode
    if _recorded_time(failure) is not None or not code:
        return 1
    return code if code > 0 else 128 - code


def run(args):
    """Launch ``args.script`` on ``args.nproc`` local ranks; return the exit status.

    0 when every worker exits 0; otherwise torchrun's failure report (each failed
    rank with its exit code and traceback, the root cause first) is printed on
    stderr and the root cause's exit status returned.
    """
    # on first use: torch.distributed loads only when launching, not for sparsenet --help
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.api import (  # on first use (start-up)
        SignalException)
    from torch.distributed.elastic.multiprocessing.errors import (  # on first use (start-up)
        ChildFailedError)

    saved = os.environ.get(TIMEOUT_ENV)
    if args.timeout is not None:
        os.environ[TIMEOUT_ENV] = (str(int(args.timeout)) if args.timeout.is_integer()
                                   else repr(args.timeout))
    try:
        torchrun.run(torchrun.parse_args(torchrun_argv(args)))
    except ChildFailedError as exc:
        report = root_cause_first(exc, args.script)
        print(str(report), file=sys.stderr)
        _rank, failure = report.get_first_failure()
        return _exit_status(failure)
    except SignalException as exc:
        print(f"sparsenet launch: stopped by {signal.Signals(exc.sigval).name}; "
              "the workers were terminated", file=sys.stderr)
        return 128 + int(exc.sigval)
    finally:
        if saved is None:
            os.environ.pop(TIMEOUT_ENV, None)
        else:
            os.environ[TIMEOUT_ENV] = saved
    return 0
