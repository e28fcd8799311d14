"""Batches made ahead in a background thread while the current one trains.

:class:`~sparsenet.io.LibSVMIter` already parses the file's chunks in background threads
(the parser releases the GIL); what is left on the training thread is cutting the parsed
chunks into batches and wrapping them (CSR slicing, labels, ``--scale``). :func:`read_ahead`
moves that too onto one thread of its own, ``depth`` items ahead, so that it runs while
torch's kernels (which release the GIL) compute the current step. ``sparsenet train`` hands
it whole groups (the batches of a parsed chunk, labels checked:
:func:`sparsenet.cli.data_stream.training_groups`), so one hand-over serves several steps.
The items and their order are those of the plain iteration, so training gives the same
weights bit for bit.

An exception raised while making a batch is raised by the consumer at that batch, and a
consumer that stops early (an error in the step, Ctrl-C) stops the thread.

>>> list(read_ahead(iter(range(5)), depth=2))
[0, 1, 2, 3, 4]
"""
import queue
import threading

__all__ = ["read_ahead"]

_END = object()


def read_ahead(batches, depth=2):
    """Yield the items of the iterable ``batches``, made ``depth`` ahead in a daemon thread.

    Parameters
    ----------
    batches : iterable
        Any iterable; it is iterated in the background thread only.
    depth : int
        Items made ahead of the consumer (bounds memory).

    Yields
    ------
    object
        The items of ``batches``, in order.
    """
    items = queue.Queue(maxsize=max(1, int(depth)))
    stop = threading.Event()

    def put(item):
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for item in batches:
                if not put((item, None)):
                    return
        except BaseException as exc:  # builtin: handed to the consumer, raised there
            put((_END, exc))
            return
        put((_END, None))

    thread = threading.Thread(target=produce, name="sparsenet-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = items.get()
            if item is _END:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        stop.set()
        thread.join(timeout=5)
