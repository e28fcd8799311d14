"""How many torch threads ``sparsenet train``, ``eval`` and ``predict`` use (``--threads``).

torch starts with one intra-op thread per core of the machine. That oversubscribes the
cores when the process may run on fewer of them (a CPU affinity mask: ``taskset``,
containers, batch schedulers) and when other programs are already using them: OpenMP's
threads then wait on each other at every operator. Measured on a 2-core machine with
other work running, ``sparsenet train`` with torch's default ran 10x slower than with one
thread (5.2 s against 0.5 s an epoch on 40,000 rows); small-batch training gains little
from more threads anyway.

So without ``--threads`` a command uses :func:`default_threads`: the cores this process
may run on (``len(os.sched_getaffinity(0))``) less those other work keeps busy (the
1-minute load average, scaled to those cores, whole cores only), at least 1, and never
more than torch's own count. An explicit choice is kept: ``--threads N`` sets N, and
with ``OMP_NUM_THREADS`` set (which torch reads itself) the count is left alone. The count
is restored when the command returns (``main()`` called in a Python program).

>>> default_threads(affinity=4, load=0.0, cpu_count=4, torch_threads=4)
4
>>> default_threads(affinity=2, load=3.5, cpu_count=2, torch_threads=2)  # a busy machine
1
>>> default_threads(affinity=1, load=0.0, cpu_count=64, torch_threads=64)  # taskset -c 0
1
"""
import contextlib
import os

from .arg_types import positive_int

__all__ = ["add_threads_option", "default_threads", "usable_cores", "torch_threads",
           "THREADS_ENV"]

#: The environment variable that, when set, is an explicit thread count torch already obeys.
THREADS_ENV = "OMP_NUM_THREADS"

_HELP = ("torch threads (default: the cores this process may run on, less those other work "
         "keeps busy, at least 1; OMP_NUM_THREADS, when set, is kept)")


def add_threads_option(parser):
    """Add ``--threads N`` (default ``None``: :func:`default_threads`) to ``parser``."""
    parser.add_argument("--threads", type=positive_int, default=None, metavar="N", help=_HELP)


def usable_cores():
    """The number of CPUs this process may run on (its affinity mask; ``os.cpu_count()``
    where the platform has no ``sched_getaffinity``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # builtin: macOS and Windows have no affinity call
        return os.cpu_count() or 1


def _load():
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # builtin: Windows has no load average
        return 0.0


def default_threads(affinity=None, load=None, cpu_count=None, torch_threads=None):
    """The thread count a command uses without ``--threads`` (see the module docstring).

    Parameters
    ----------
    affinity : int, optional
        CPUs this process may run on (default :func:`usable_cores`).
    load : float, optional
        The machine's 1-minute load average (default ``os.getloadavg()[0]``).
    cpu_count : int, optional
        CPUs of the machine (default ``os.cpu_count()``): the load is spread over them.
    torch_threads : int, optional
        torch's current count (default ``torch.get_num_threads()``): never exceeded, so a
        smaller count a program set with ``torch.set_num_threads`` is kept.

    Returns
    -------
    int
        ``max(1, min(torch_threads, affinity - int(load * affinity / cpu_count)))``.
    """
    affinity = usable_cores() if affinity is None else affinity
    load = _load() if load is None else load
    cpu_count = max(cpu_count or os.cpu_count() or affinity, affinity)
    if torch_threads is None:
        import torch  # on first use: called by a command that runs torch anyway
        torch_threads = torch.get_num_threads()
    busy = int(load * affinity / cpu_count)
    return max(1, min(torch_threads, affinity - busy))


@contextlib.contextmanager
def torch_threads(requested=None):
    """Run the body with torch's thread count set to ``requested`` (``--threads``), or to
    :func:`default_threads` unless ``OMP_NUM_THREADS`` is set; restore it afterwards.

    Yields the count in use.
    """
    import torch  # on first use: only the commands that run torch enter this

    before = torch.get_num_threads()
    if requested is not None:
        count = requested
    elif os.environ.get(THREADS_ENV, "").strip():
        count = before  # the user's explicit choice, which torch has already applied
    else:
        count = default_threads(torch_threads=before)
    if count != before:
        torch.set_num_threads(count)
    try:
        yield count
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
