"""The optimizer side of a KVStore: ``set_optimizer``, ``set_updater`` and the states files.

:class:`UpdatingStore` is a base class of :class:`sparsenet.kvstore.KVStore`; it keeps
``self._updater`` (None, an :class:`~sparsenet.optimizer.Updater`, or a function
``updater(key, grad, weight)``), which ``push`` calls. States files are written
atomically and read through the Updater's allow-list unpicklers (sparsenet's and
MXNet 1.x's ``.states`` pickles; nothing in a file is run), with the file named in
every format error.

>>> import sparsenet as mx
>>> kv = mx.kv.create('local')
>>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
>>> type(kv._updater).__name__
'Updater'
"""
import os

from ..atomic import atomic_write
from ..base import FileFormatError, InvalidArgumentError, InvalidArgumentTypeError, SparsenetError
from ..optimizer.optimizer import Optimizer
from ..optimizer.updater import Updater, get_updater

__all__ = ["UpdatingStore"]


class UpdatingStore:
    """The optimizer methods of :class:`sparsenet.kvstore.KVStore` (see there)."""

    _updater = None

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the store: each push updates the stored weight.

        Parameters
        ----------
        optimizer : Optimizer

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        >>> kv.init(0, mx.nd.ones((2,)))
        >>> kv.push(0, mx.nd.ones((2,)))
        >>> out = mx.nd.zeros((2,)); kv.pull(0, out=out); out.asnumpy()
        array([0.9, 0.9], dtype=float32)
        """
        if not isinstance(optimizer, Optimizer):
            raise InvalidArgumentTypeError(
                f"kvstore set_optimizer: optimizer must be an Optimizer instance (e.g. "
                f"mx.optimizer.create('sgd')), got {type(optimizer).__name__}")
        self._updater = get_updater(optimizer)

    def set_updater(self, updater):
        """Use ``updater(key, grad, weight)`` (updates ``weight`` in place) for every push.

        ``key`` is an int, or ``bytes`` for a str key (as MXNet passes it).

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.set_updater(lambda key, grad, weight: weight.__isub__(grad * 2))
        >>> kv.init('w', mx.nd.ones((2,)))
        >>> kv.push('w', mx.nd.ones((2,)))
        >>> out = mx.nd.zeros((2,)); kv.pull('w', out=out); out.asnumpy()
        array([-1., -1.], dtype=float32)
        """
        if not callable(updater):
            raise InvalidArgumentTypeError(f"kvstore set_updater: updater must be callable "
                                           f"(key, grad, weight), got {type(updater).__name__}")
        self._updater = updater

    _set_updater = set_updater  # MXNet 1.x's name

    def is_capable(self, capability):
        """Whether the store can do ``capability`` (``'optimizer'``: True).

        >>> import sparsenet as mx
        >>> mx.kv.create('local').is_capable('optimizer')
        True
        """
        if not isinstance(capability, str) or capability.lower() != "optimizer":
            raise InvalidArgumentError(f"kvstore is_capable: unknown capability {capability!r}; "
                                       f"known: 'optimizer'")
        return True

    def _updater_only_reads(self):
        """Whether the updater reads a pushed gradient without writing or keeping it: an
        optimizer :class:`~sparsenet.optimizer.Updater` (the contract the Trainer and Module
        rely on when they hand it their own gradient buffers); not a custom function.

        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv._updater_only_reads()
        False
        >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1)); kv._updater_only_reads()
        True
        >>> kv.set_updater(lambda key, grad, weight: None); kv._updater_only_reads()
        False
        """
        return isinstance(self._updater, Updater)

    def _need_updater(self, method):
        if self._updater is None:
            raise SparsenetError(f"kvstore {method}: the store has no optimizer; call "
                                 f"kv.set_optimizer(optimizer) first")
        if not hasattr(self._updater, "get_states"):
            raise SparsenetError(f"kvstore {method}: the store's updater is a custom function "
                                 f"(set_updater) and keeps no states; use set_optimizer")

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer states (and the optimizer with ``dump_optimizer``) to ``fname``.

        The file is written atomically; :meth:`load_optimizer_states` reads it
        back without running code from it.

        Examples
        --------
        >>> import os, tempfile, sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        >>> kv.init(0, mx.nd.ones((2,))); kv.push(0, mx.nd.ones((2,)))
        >>> fname = os.path.join(tempfile.mkdtemp(), 'kv.states')
        >>> kv.save_optimizer_states(fname)
        >>> kv2 = mx.kv.create('local')
        >>> kv2.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        >>> kv2.load_optimizer_states(fname)
        >>> kv2._updater.states[0].asnumpy()
        array([-0.1, -0.1], dtype=float32)
        """
        self._need_updater("save_optimizer_states")
        blob = self._updater.get_states(dump_optimizer)
        atomic_write(fname, lambda f: f.write(blob))

    def load_optimizer_states(self, fname):
        """Load optimizer states written by :meth:`save_optimizer_states` (sparsenet or MXNet 1.x).

        Raises
        ------
        FileFormatError
            A truncated, corrupt or foreign file, or one whose pickle refers to
            anything a states file never holds (nothing in it is run).
        """
        self._need_updater("load_optimizer_states")
        with open(fname, "rb") as f:
            blob = f.read()
        try:
            self._updater.set_states(blob)
        except FileFormatError as e:
            detail = str(e)
            if detail.startswith("<"):  # the updater names the blob "<...>": name the file
                detail = detail.split(": ", 1)[-1]
            raise FileFormatError(f"{os.fspath(fname)}: {detail}") from None
