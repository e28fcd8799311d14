"""Work a command starts in a background thread before torch is imported.

``import torch`` takes seconds and keeps one core busy with the GIL held for most of it,
while the second core waits. Work that needs no torch and spends its time in the LibSVM
parser (which releases the GIL), such as ``sparsenet train``'s pass over DATA when sizes
are inferred (:mod:`sparsenet.cli.data_scan`), runs meanwhile: a subcommand module may
define ``prepare(args)``, which :func:`sparsenet.cli.main.main` calls before it imports
torch, and which starts such work with :func:`start`. The result is taken where it is
needed with :meth:`Started.result`, which waits for it and raises the work's exception in
the caller's thread, as a plain call would have.

The thread is a daemon: a command that fails before it takes the result does not wait
for the work at exit.

Start-up allocates much and frees little: :func:`quiet_heap` keeps Python's cyclic garbage
collector off while a command starts (the imports of torch and sparsenet trigger several
full collections otherwise, about 0.1 s), and :func:`settle_heap`, called when the work
begins, moves what start-up made out of the collector's sight (:func:`gc.freeze`: the
training loop's collections no longer walk the modules' objects) and turns it back on.

:func:`read_early` starts the parse of a LibSVM file that a command will read with
:func:`sparsenet.cli.data_stream.batch_groups` (:func:`sparsenet.io.libsvm.stream.head_start`):
the first :data:`HEAD_START_BYTES` of it are parsed while torch loads, and the iterator
takes the parsed chunks over.

>>> job = start(sum, [1, 2, 3])
>>> job.result()
6
"""
import contextlib
import gc
import os
import threading

from ..base import SparsenetError

__all__ = ["start", "Started", "read_early", "HEAD_START_BYTES", "quiet_heap", "settle_heap"]

#: Text of a file parsed ahead by :func:`read_early`, at most (and at most 1/16 of the
#: machine's memory): 256 MiB of text are about 200 MB parsed, half a second of parsing on
#: one core, about what the import of torch leaves idle on a 2-core machine.
HEAD_START_BYTES = 256 << 20


class Started:
    """Work running in a daemon thread (:func:`start`)."""

    def __init__(self, fn, args, kwargs):
        self._value = self._error = None
        self._thread = threading.Thread(target=self._run, args=(fn, args, kwargs),
                                        name="sparsenet-head-start", daemon=True)
        self._thread.start()

    def _run(self, fn, args, kwargs):
        try:
            self._value = fn(*args, **kwargs)
        except BaseException as exc:  # builtin: handed to the caller of result(), raised there
            self._error = exc

    def result(self):
        """Wait for the work; return its value or raise its exception."""
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._value


def start(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` in a daemon thread now; return its :class:`Started`."""
    return Started(fn, args, kwargs)


def _memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # builtin: no sysconf (Windows)
        return None


def read_early(path, features, index_base, nbytes=HEAD_START_BYTES):
    """Start parsing the LibSVM file (or folder) ``path`` now, up to ``nbytes`` of text, in
    the background, for the first :class:`~sparsenet.io.LibSVMIter` over it with
    ``features`` columns and ``index_base`` (what :func:`sparsenet.cli.data_stream.
    batch_groups` makes) to take over. Return the stream (close it if no reader took it),
    or None when ``path`` cannot be listed (the command reports that itself, in order).
    """
    from ..io.libsvm.options import ParseOptions  # on first use (start-up)
    from ..io.libsvm.source import DEFAULT_CHUNK_SIZE, list_files  # on first use (start-up)
    from ..io.libsvm.stream import head_start  # on first use (start-up)

    memory = _memory()
    if memory is not None:
        nbytes = min(nbytes, memory // 16)
    try:
        files = list_files(path, "data_libsvm")
    except (SparsenetError, OSError):
        return None
    options = ParseOptions(zero_based=index_base == 0, num_features=features)
    return head_start(files, options, chunks=max(1, nbytes // DEFAULT_CHUNK_SIZE))


_frozen = []


@contextlib.contextmanager
def quiet_heap():
    """Run the body with the cyclic garbage collector off until :func:`settle_heap`; on exit
    restore the collector as it was (and release what :func:`settle_heap` froze)."""
    enabled = gc.isenabled()
    gc.disable()
    _frozen.append(False)
    try:
        yield
    finally:
        if _frozen.pop():
            gc.unfreeze()
        if enabled:
            gc.enable()


def settle_heap():
    """Start-up is over (inside :func:`quiet_heap`): freeze what it allocated and turn the
    collector back on. Outside :func:`quiet_heap` it does nothing."""
    if _frozen and not _frozen[-1]:
        gc.freeze()
        _frozen[-1] = True
        gc.enable()
