"""The Updater: an optimizer applied to indexed weights, with their states (what a KVStore
and a Gluon Trainer run), and the loading of pickled states through allow-list unpicklers.

>>> import sparsenet as mx
>>> upd = get_updater(mx.optimizer.SGD(learning_rate=0.5))
>>> w = mx.nd.ones((2,))
>>> upd(0, mx.nd.ones((2,)), w)
>>> w.asnumpy()
array([0.5, 0.5], dtype=float32)
"""
import pickle
import weakref

import numpy as np

from ..base import FileFormatError
from ..ndarray.ndarray import NDArray
from .optimizer import Optimizer

__all__ = ["Updater", "get_updater"]


class Updater:
    """Applies an optimizer to indexed weights and keeps their states (KVStore, Trainer).

    ``updater(index, grad, weight)`` creates the state on first use and updates
    the weight in place; ``get_states``/``set_states`` pickle the states (and
    optionally the optimizer). With ``lazy_update='exact'`` the weights are
    brought up to date before their states are returned; :meth:`sync` does it on
    demand (e.g. before evaluating).

    >>> import sparsenet as mx
    >>> upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    >>> w = mx.nd.ones((2,))
    >>> upd(0, mx.nd.ones((2,)), w)
    >>> w.asnumpy()
    array([0.9, 0.9], dtype=float32)
    >>> upd2 = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    >>> upd2.set_states(upd.get_states())
    >>> upd2.states[0].asnumpy()
    array([-0.1, -0.1], dtype=float32)
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = False
        self._weights = {}

    def __call__(self, index, grad, weight):
        if index.__class__ is int:  # one weight (a Trainer's single context): no lists
            self.optimizer._set_current_context(weight.context.device_id)
            self._prepare(index, weight)
            self.optimizer.update_multi_precision(index, weight, grad, self.states[index])
            return
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:  # update counters per context (cpu(0) and cpu(1) are two devices)
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if idx.__class__ is bytes:
                idx = indices[i] = idx.decode()
            self._prepare(idx, weights[i])
        states = self.states
        if len(indices) == 1:
            self.optimizer.update_multi_precision(indices[0], weights[0], grads[0],
                                                  states[indices[0]])
        else:  # one call with lists: optimizers may aggregate (SGD does)
            self.optimizer.update_multi_precision(indices, weights, grads,
                                                  [states[i] for i in indices])

    def _prepare(self, idx, weight):
        """Create ``idx``'s state on first use (or move loaded states to the weight's
        context) and remember the weight (for :meth:`sync`)."""
        states = self.states
        if not self.states_synced.get(idx, False) or idx not in states:  # new, or loaded
            if idx not in states:
                states[idx] = self.optimizer.create_state_multi_precision(idx, weight)
            else:
                states[idx] = self.sync_state_context(states[idx], weight.context)
            self.states_synced[idx] = True
        ref = self._weights.get(idx)
        if ref is None or ref() is not weight:
            self._weights[idx] = weakref.ref(weight)

    def sync_state_context(self, state, context):
        """Return ``state`` with every array moved to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def sync(self):
        """Bring every weight this updater has seen up to date (``lazy_update='exact'``)."""
        for idx, state in self.states.items():
            ref = self._weights.get(idx)
            weight = ref() if ref is not None else None
            if weight is not None:
                self.optimizer.sync(weight, state)

    def set_states(self, states, where=None):
        """Load states pickled by :meth:`get_states` (and the optimizer, when dumped).

        Read through allow-list unpicklers (no code in the blob runs): sparsenet's own
        by :mod:`sparsenet.optimizer.states_file`, MXNet 1.x ``.states`` files by
        :mod:`sparsenet.optimizer.mxnet_states`. ``where`` (the file name) is named in
        their errors.
        """
        from . import mxnet_states, states_file  # they import this module
        if mxnet_states.is_mxnet_states(states):
            where = where or "<MXNet .states>"
            states = mxnet_states.loads(states, where)
        else:
            where = where or "<optimizer states>"
            states = states_file.loads(states, where)
        optimizer = None
        if isinstance(states, tuple) and len(states) == 2 and isinstance(states[1], Optimizer):
            states, optimizer = states
        _check_states(states, where)
        self.states = states
        if optimizer is not None:
            self.optimizer = optimizer
        else:
            self.optimizer._forget_clocks()
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """Pickle the states (with the optimizer when ``dump_optimizer``), after :meth:`sync`."""
        self.sync()
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def _check_states(states, where):
    """Raise FileFormatError unless ``states`` is a dict of optimizer states by parameter
    index or name: each None, an NDArray, a number (a custom optimizer's counter), or a
    tuple, list or dict of those."""
    def valid(v):
        if v is None or isinstance(v, (NDArray, int, float, np.number)):
            return True
        if isinstance(v, dict):
            return all(valid(x) for x in v.values())
        return isinstance(v, (tuple, list)) and all(valid(x) for x in v)
    if not isinstance(states, dict):
        raise FileFormatError(f"{where}: not an optimizer-states file: it holds a "
                              f"{type(states).__name__}, expected a dict of states by "
                              f"parameter index")
    for key, value in states.items():
        if not isinstance(key, (int, str)) or isinstance(key, bool) or not valid(value):
            raise FileFormatError(f"{where}: not an optimizer-states file: the state of "
                                  f"{key!r} is a {type(value).__name__}, expected None, an "
                                  f"NDArray, a number or a tuple of them")


def get_updater(optimizer):
    """Return an :class:`Updater` for ``optimizer``.

    >>> import sparsenet as mx
    >>> type(mx.optimizer.get_updater(mx.optimizer.SGD())).__name__
    'Updater'
    """
    return Updater(optimizer)
