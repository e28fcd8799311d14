"""The recording switch and the variable registry (the layer below the arrays).

Operators are recorded for :func:`sparsenet.autograd.backward` only inside
:func:`record`; outside it they run under ``torch.no_grad()``. Variables are
arrays with a gradient buffer (``attach_grad``); the registry maps each
variable's leaf tensor to its owner so that backward knows where each
gradient goes. Everything here is re-exported by :mod:`sparsenet.autograd`,
the public module; the arrays import this one (it imports no array code).

Threads: the recording and training switches are per thread (as in MXNet, and
as torch's grad mode is). The registry is one per process (a network may be
built in one thread and trained in another); :data:`IN_FLIGHT` counts the
backward passes under way, so that a backward that runs alongside another
stores only the gradients of its own graph.

>>> with record():
...     is_recording(), is_training()
(True, True)
>>> is_recording()
False
"""
import threading
import weakref

import torch

from .torch_compat import set_grad_enabled

__all__ = ["STATE", "record", "pause", "train_mode", "predict_mode", "is_recording",
           "is_training", "set_recording", "set_training", "register_variable",
           "register_leaf", "alias_of", "aliases", "variables", "entry_of", "IN_FLIGHT"]


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False


STATE = _State()
_variables = {}        # id(leaf tensor) -> _Entry


def is_recording():
    """Return True inside :func:`record` (and not inside :func:`pause`).

    >>> is_recording()
    False
    """
    return STATE.recording


def is_training():
    """Return True in training mode (inside ``record()`` by default, or ``train_mode()``).

    >>> is_training()
    False
    """
    return STATE.training


def set_recording(is_record):
    """Set the recording state; return the previous one.

    >>> set_recording(False)
    False
    """
    old, STATE.recording = STATE.recording, bool(is_record)
    if STATE.recording:
        torch.set_grad_enabled(True)
    return old


def set_training(train_mode_):
    """Set the training state; return the previous one.

    >>> set_training(False)
    False
    """
    old, STATE.training = STATE.training, bool(train_mode_)
    return old


class _Scope:
    """Context manager setting the recording/training state (None keeps a flag)."""

    __slots__ = ("_rec", "_train", "_old")

    def __init__(self, recording, training):
        self._rec, self._train = recording, training

    def __enter__(self):
        st = STATE
        self._old = (st.recording, st.training, torch.is_grad_enabled())
        if self._rec is not None:
            st.recording = self._rec
        if self._train is not None:
            st.training = self._train
        set_grad_enabled(st.recording)
        return self

    def __exit__(self, *exc):
        st = STATE
        st.recording, st.training, grad_mode = self._old
        set_grad_enabled(grad_mode)
        return False


def record(train_mode=True):  # noqa: A002 - MXNet's name
    """Return a scope in which operators are recorded for :func:`backward`.

    Parameters
    ----------
    train_mode : bool
        Whether layers such as Dropout behave as in training (default True).

    Examples
    --------
    >>> with record():
    ...     is_recording(), is_training()
    (True, True)
    """
    return _Scope(True, train_mode)


def pause(train_mode=False):  # noqa: A002
    """Return a scope in which operators are not recorded (inside a ``record()`` block).

    >>> with record():
    ...     with pause():
    ...         is_recording()
    False
    """
    return _Scope(False, train_mode)


def train_mode():
    """Return a scope with training behaviour on, recording unchanged.

    >>> with train_mode():
    ...     is_training()
    True
    """
    return _Scope(None, True)


def predict_mode():
    """Return a scope with training behaviour off, recording unchanged.

    >>> with record():
    ...     with predict_mode():
    ...         is_training()
    False
    """
    return _Scope(None, False)


# ---------------------------------------------------------------------- variables
class _Entry:
    """A variable's leaf tensor and its owner (an array, weakly held, or a strong sink).

    ``full``: the leaf has the array's whole shape (a dense array, or the dense
    graph tensor of a sparse one); otherwise it holds a sparse array's stored
    values only (a row view of a Gluon parameter).
    """

    __slots__ = ("tensor", "ref", "sink", "full")

    def owner(self):
        return self.sink if self.sink is not None else self.ref()


def register_variable(arr, sink=None):
    """Remember ``arr`` as a variable whose gradient backward computes.

    The entry lives as long as the array's leaf tensor. ``sink`` (an object
    with ``_grad``, ``_grad_req`` and the array's structure, not holding the
    tensor) receives the gradient instead of ``arr``, and is kept alive even
    after ``arr`` is dropped (the recorded graph may still need it). A sparse
    variable whose dense graph tensor does not exist yet is registered when the
    first recorded operator creates it.
    """
    t = arr._autograd_tensor()
    if t is None or not t.requires_grad:
        return
    old = _variables.get(id(t))
    if old is not None and old.tensor() is t and old.sink is None and old.ref() is arr \
            and sink is None:
        return
    register_leaf(t, weakref.ref(arr), sink, full=tuple(t.shape) == tuple(arr.shape))


def register_leaf(t, ref, sink, full=True):
    """Register leaf tensor ``t`` whose gradient goes to ``ref()`` (or to ``sink``)."""
    key = id(t)
    entry = _Entry()

    def _gone(_ref, key=key, entry=entry):
        if _variables.get(key) is entry:
            del _variables[key]

    entry.tensor = weakref.ref(t, _gone)
    entry.ref = ref
    entry.sink = sink
    entry.full = full
    _variables[key] = entry


def variables():
    """The registered entries (a snapshot list)."""
    return list(_variables.values())


def entry_of(t):
    """The registry entry of leaf tensor ``t`` (None: ``t`` is not a variable's leaf)."""
    entry = _variables.get(id(t))
    if entry is None or entry.tensor() is not t:
        return None
    return entry


class _InFlight:
    """The number of backward passes between their start and the end of their store.

    A backward counts itself in (``count += 1`` under ``lock``) before torch runs
    its graph, then, holding ``lock`` again, stores its gradients and counts
    itself out. Passes start and store under one lock, so a pass that stores
    while ``count == 1`` has no other pass with torch accumulating gradients
    into leaves: every pending leaf gradient is its own, and it may take them
    from the registry. Otherwise it takes only the leaves its graph reaches.
    The lock is held only while counting and storing (no user code runs
    there), never while torch runs a graph. (:func:`sparsenet.autograd.backward`
    uses the lock inline: a step's backward pays two uncontended acquisitions.)

    >>> with IN_FLIGHT.lock:
    ...     IN_FLIGHT.count
    0
    """

    __slots__ = ("lock", "count")

    def __init__(self):
        self.lock = threading.RLock()
        self.count = 0


#: the backward passes under way (see :class:`_InFlight`)
IN_FLIGHT = _InFlight()


def alias_of(var):
    """A new leaf tensor sharing ``var``'s storage whose gradient goes to ``var``'s buffer.

    Kernels whose sparse gradient layout cannot be summed by torch with other
    uses of the variable (the column-sparse gradient of ``dot(csr, W.T)``) read
    the variable through an alias; backward adds the gradients of the variable
    and of its aliases in the buffer.
    """
    t = var._t.detach().requires_grad_(True)
    register_leaf(t, None, var)
    return t


def aliases(var):
    """The alias leaves of ``var`` that are still alive (see :func:`alias_of`)."""
    return [e.tensor() for e in list(_variables.values())
            if e.sink is var and e.tensor() is not None]
