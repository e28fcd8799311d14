"""The Gluon :class:`Trainer`: applies an optimizer to a set of parameters.

``trainer.step(batch_size)`` reduces the gradients over the parameters'
contexts (in-process: summed and copied back to every context), then updates
every parameter whose gradient a backward pass wrote since the last step, with
``rescale_grad = 1 / batch_size``. Row_sparse gradients take the optimizer's
lazy path (only their rows change, with ``lazy_update=True``). The store is
chosen as MXNet 1.9.1 chooses it (see :meth:`Trainer._init_kvstore`): a
'local'/'device' store over several contexts or for row_sparse weights
(``contrib.nn.SparseEmbedding``), none over one context; ``kvstore=None`` keeps
every update in process (row_sparse weights included, where MXNet refuses).

With a distributed store (``kvstore='dist_sync'`` or a KVStore object) the
gradients go through it as in MXNet: with ``update_on_kvstore`` (the default)
the store sums them over the workers and updates its weights, which are
pulled back (row_sparse weights: the rows ``row_sparse_data`` asks for);
without, the store sums the gradients and every worker updates its own copy.

A dense gradient written by a sparse kernel (``dot(csr, W)``,
``FullyConnected(csr, W)``, ``Embedding``...) is known to be zero outside the
entries the batch touched (:func:`sparsenet.autograd.nonzero_entries`). When
the optimizer leaves zero-gradient entries unchanged (it says so:
``Optimizer._zero_grad_is_identity``; SGD without momentum and weight decay), the
update runs on those entries only: the result is identical
to the dense update, at the cost of the touched entries instead of the whole
weight.

Threads: a trainer's methods take turns (a lock per trainer), so its optimizer states and
store stay consistent when several threads call them. A network trained from several
threads needs a lock around each whole iteration (forward, backward, step): a step between
another thread's forward and backward changes the weights that forward pass read, and that
backward raises :class:`~sparsenet.base.ConcurrentModificationError` instead of computing a
wrong gradient.

>>> import sparsenet as mx
>>> net = mx.gluon.nn.Dense(1, in_units=2)
>>> net.initialize(init='ones')
>>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
>>> with mx.autograd.record():
...     loss = net(mx.nd.array([[1.0, 2.0]]))
>>> loss.backward()
>>> trainer.step(1)
>>> net.weight.data().asnumpy()
array([[0.5, 0. ]], dtype=float32)
"""
import functools
import os
import threading
import warnings

import numpy as np
import torch

from .. import autograd, grad_store
from .. import kvstore as kvstore_mod
from .. import optimizer as opt
from ..base import InvalidArgumentError, InvalidArgumentTypeError, StateError
from ..kvstore import KVStore
from ..kvstore.compression import GradientCompression
from ..ndarray.creation import zeros
from ..ndarray.row_sparse import write_rows
from ..atomic import atomic_write
from ..context import place
from ..ndarray import nonzero
from ..ndarray.ndarray import NDArray
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

_LOCAL_KVSTORES = (None, "local", "device")

#: The exact-mode guard's advice to Trainer users (see ``Optimizer.exact_guard``).
CATCH_UP_HINT = ("call trainer.catch_up(param, row_ids) with the rows the batch reads (an "
                 "embedding's ids, a CSR batch's column indices x.indices) before the forward "
                 "pass, or trainer.sync() to bring every row up to date (row_sparse weights "
                 "read through row_sparse_data() are caught up by themselves)")


def _serialised(method):
    """Run ``method`` holding the trainer's lock: steps from several threads take turns, so
    the optimizer's states, counters and the store stay consistent."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class Trainer:
    """Applies an optimizer to a set of :class:`Parameter` s.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        The parameters to train (a dict is taken in sorted key order, as MXNet).
    optimizer : str or Optimizer
        Name (``'sgd'``, ...) or instance.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer (must be empty for an instance).
    kvstore : None, str or KVStore
        ``None``, ``'local'`` or ``'device'``: gradients of parameters living on
        several contexts are reduced in process. ``'dist_sync'`` (and the other
        ``'dist*'`` names) or a :class:`~sparsenet.kvstore.KVStore` object: the
        gradients go through that store (created at the first step).
    compression_params : dict, optional
        Gradient compression for a distributed kvstore, e.g. ``{'type': '2bit',
        'threshold': 0.5}`` (see ``KVStore.set_gradient_compression``); checked at
        construction. Without a distributed store it has no effect (a warning says so).
    update_on_kvstore : bool, optional
        With a store: whether the store runs the optimizer (default True, as
        MXNet; required, as in MXNet, for row_sparse weights, for row_sparse
        gradients on a ``'dist*'`` store and for ``'dist_async'``: False raises
        InvalidArgumentError, a ValueError).
    dense_sparsity : bool, default True
        Update a dense weight only where its sparse-kernel gradient is nonzero
        when that gives the dense result exactly (see the module docstring).

    Examples
    --------
    >>> import sparsenet as mx
    >>> emb = mx.gluon.nn.Embedding(10, 2, sparse_grad=True)
    >>> emb.initialize(init='ones')
    >>> trainer = mx.gluon.Trainer(emb.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> with mx.autograd.record():
    ...     out = emb(mx.nd.array([3]))
    >>> out.backward()
    >>> trainer.step(1)
    >>> emb.weight.data().asnumpy()[2:5, 0]
    array([1., 0., 1.], dtype=float32)
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None, dense_sparsity=True):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[k] for k in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise InvalidArgumentError(f"First argument must be a list or dict of Parameters, got "
                                       f"{type(params)}.")
        self._params = []
        self._param2idx = {}
        seen = set()
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise InvalidArgumentError("First argument must be a list or dict of Parameters, "
                                           f"got list of {type(param)}.")
            if id(param) in seen:
                raise InvalidArgumentError(f"Parameter '{param.name}' appears twice in the "
                                           f"parameter list of the Trainer")
            seen.add(id(param))
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        if not (kvstore is None or isinstance(kvstore, (str, KVStore))):
            raise InvalidArgumentTypeError(f"Trainer: kvstore must be None, a str or a KVStore, "
                                           f"got {type(kvstore).__name__}")
        if isinstance(kvstore, str) and kvstore not in _LOCAL_KVSTORES \
                and not kvstore.startswith("dist"):
            raise InvalidArgumentError(f"Trainer: unknown kvstore {kvstore!r}; use None, "
                                       f"'local', 'device' or a 'dist*' name")
        if compression_params is not None:  # checked now, handed to the store it creates
            GradientCompression.from_params(compression_params)
        self._compression_params = compression_params
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = list(self._params)  # keys the store has yet to be given
        self._dense_sparsity = dense_sparsity
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._lock = threading.RLock()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise InvalidArgumentError(f"All Parameters must be initialized on the same set "
                                           f"of contexts, but Parameter {param.name} is "
                                           f"initialized on {ctx} while previous Parameters are "
                                           f"initialized on {contexts}.")
            contexts = ctx
        return contexts or []

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise InvalidArgumentError("optimizer_params must be None if optimizer is an "
                                           "instance of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict  # shared: lr_mult/wd_mult edits apply
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]
        self._optimizer.exact_guard = CATCH_UP_HINT

    # ------------------------------------------------------------------ properties
    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The :class:`~sparsenet.optimizer.Optimizer`."""
        return self._optimizer

    @_serialised
    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        self._optimizer.set_learning_rate(lr)

    # ------------------------------------------------------------------ stepping
    @_serialised
    def step(self, batch_size, ignore_stale_grad=False):
        """Reduce gradients over contexts, then update with ``rescale_grad = 1/batch_size``.

        Parameters
        ----------
        batch_size : int
            Gradients are normalized by ``1/batch_size``.
        ignore_stale_grad : bool
            Skip parameters whose gradient no backward pass wrote since the last
            step, instead of raising.
        """
        self._optimizer.rescale_grad = self._scale / batch_size
        self._init_params()
        if self._kvstore is None:
            self._allreduce_grads()
            self._update(ignore_stale_grad)
            return
        fresh = self._fresh_grads(ignore_stale_grad)
        self._allreduce_grads(fresh)
        if not self._update_on_kvstore:
            self._update(ignore_stale_grad)

    @_serialised
    def allreduce_grads(self):
        """Sum each parameter's gradients over its contexts and workers (call :meth:`update`
        next; not with ``update_on_kvstore``, where the store updates)."""
        self._init_params()
        if self._update_on_kvstore:
            raise InvalidArgumentError("allreduce_grads() when parameters are updated on the "
                                       "kvstore is not supported: pass update_on_kvstore=False "
                                       "to the Trainer, or call step()")
        self._allreduce_grads(self._fresh_grads(True) if self._kvstore is not None else None)

    @_serialised
    def update(self, batch_size, ignore_stale_grad=False):
        """Update the parameters from their (reduced) gradients: the second half of :meth:`step`."""
        self._init_params()
        if self._update_on_kvstore:
            raise InvalidArgumentError("update() when parameters are updated on the kvstore "
                                       "is not supported: pass update_on_kvstore=False to the "
                                       "Trainer, or call step()")
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    # ------------------------------------------------------------------ kvstore
    def _init_kvstore(self):
        """Set up the store named at construction, as MXNet 1.9.1's Trainer does.

        The store: none for ``kvstore=None``, or for a 'local'/'device' name over one
        context with dense weights (contexts are then reduced in process); a KVStore object
        as given; otherwise the named store (a 'local'/'device' one over several contexts
        or for row_sparse weights, as MXNet). ``update_on_kvstore``: None without a store;
        True for row_sparse weights; for row_sparse gradients, whether the store is
        distributed; for dense ones ``MXNET_UPDATE_ON_KVSTORE`` (default 1; False for a
        'local' store holding a weight over 16M elements, True for 'dist_async'); the
        user's value overrides, except the combinations MXNet refuses (ValueError). The
        keys get their values later, by :meth:`_init_params`."""
        if self._kv_initialized:
            return
        kv = self._kvstore_params["kvstore"]
        sparse_weight = any(p._stype != "default" for p in self._params)
        local_name = kv is None or (isinstance(kv, str) and not kv.startswith("dist"))
        if kv is None or (local_name and len(self._contexts) <= 1 and not sparse_weight):
            if self._compression_params:
                warnings.warn("Trainer: compression_params has no effect without a "
                              "distributed kvstore (contexts are summed in process, "
                              "uncompressed)", UserWarning, stacklevel=3)
            self._kvstore, self._update_on_kvstore, self._distributed = None, None, False
            self._kv_initialized = True
            return
        if isinstance(kv, str):
            kv = kvstore_mod.create(kv)
        if self._compression_params:  # as MXNet: the store compresses the pushed gradients
            kv.set_gradient_compression(self._compression_params)
        self._update_on_kvstore = self._check_update_on_kvstore(kv)
        self._distributed = "dist" in kv.type
        self._kvstore = kv
        if self._update_on_kvstore:
            self._optimizer.exact_guard = None  # the store keeps the states: no catch_up here
            kv.set_optimizer(self._optimizer)  # (a new updater: MXNet resets the states too)
        self._kv_initialized = True

    def _check_update_on_kvstore(self, kv):
        """``update_on_kvstore`` for store ``kv`` by MXNet 1.9.1's rules (see
        :meth:`_init_kvstore`); raise InvalidArgumentError (a ValueError, as MXNet's) where
        MXNet refuses the user's value."""
        asked = self._kvstore_params["update_on_kvstore"]
        distributed = "dist" in kv.type
        if any(p._stype != "default" for p in self._params):
            if asked is False:
                raise InvalidArgumentError(
                    f"Cannot set update_on_kvstore=False when sparse weights are present "
                    f"(kvstore {kv.type!r}): a row_sparse weight is updated on the store")
            return True
        if any(p._grad_stype != "default" for p in self._params):
            if asked is False and distributed:
                raise InvalidArgumentError(
                    f"Cannot set update_on_kvstore=False on dist kvstore when sparse "
                    f"gradients are present (kvstore {kv.type!r}), as in MXNet: leave "
                    f"update_on_kvstore unset")
            return distributed if asked is None else bool(asked)
        if distributed and "async" in kv.type:
            if asked is False:
                raise InvalidArgumentError(f"Please set update_on_kvstore=True when training "
                                           f"in async mode (kvstore {kv.type!r})")
            return True
        if asked is not None:
            return bool(asked)
        default = os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1")
        try:
            default = bool(int(default))
        except ValueError:
            raise InvalidArgumentError(f"MXNET_UPDATE_ON_KVSTORE must be 0 or 1, got "
                                       f"{default!r}") from None
        if kv.type == "local" and self._params and max(
                int(np.prod(p.shape)) if p.shape else 0 for p in self._params) > 1024 * 1024 * 16:
            default = False  # as MXNet: a big weight is updated by the workers
        return default

    def _init_params(self):
        """Give the store the values of the parameters it does not hold yet (MXNet's
        ``Trainer._init_params``; deferred-initialisation parameters wait for their first
        forward pass). A key the store already holds, because another Trainer over the same
        store initialised it (keys are parameter positions, as in MXNet), is re-initialised
        with this Trainer's value, as MXNet re-initialises it."""
        self._init_kvstore()
        kv = self._kvstore
        if kv is None or not self._params_to_init:
            self._params_to_init = []
            return
        waiting = []
        with autograd.pause():  # may run inside record() (a forward's row_sparse_data)
            for param in self._params_to_init:
                if param._deferred_init:
                    waiting.append(param)
                    continue
                i = self._param2idx[param.name]
                arrays = param._check_and_get(param._data, list)
                if self._update_on_kvstore:  # the store updates the parameter's own array
                    kv._adopt(i, arrays[0], replace=True)
                else:
                    kv._init(i, arrays[0], replace=True)
                # every worker starts from the store's value; in one process the contexts'
                # copies already hold it (and a forward pass may have read them already:
                # writing them again would be a change under that pass)
                if param._stype == "default" and self._distributed:
                    kv.pull(i, arrays, priority=-i)
        self._params_to_init = waiting

    def _reset_kvstore(self, param=None):
        """Forget the store's copy of the parameters (MXNet's ``Trainer._reset_kvstore``):
        called when a parameter's value is set (``set_data``, ``load``) while the store
        updates it. The next step sets the store up again (a new optimizer state) with the
        new values. A distributed store cannot be reset, as in MXNet: StateError."""
        self._check_resettable(param)
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _check_resettable(self, param=None):
        """Raise StateError if the store cannot be reset (a distributed one, as in MXNet)."""
        if self._kvstore is not None and "dist" in self._kvstore.type:
            what = f"Parameter '{param.name}'" if param is not None else "the parameters"
            raise StateError(
                f"Cannot reset distributed KVStore: {what} of a Trainer that updates it on "
                f"the distributed kvstore {self._kvstore.type!r} (update_on_kvstore=True) "
                f"cannot be set or loaded after the store holds it. Load the parameters "
                f"before the Trainer's first step (or row_sparse_data), or (dense "
                f"parameters) create a new Trainer over them before loading: its first step "
                f"gives the store the loaded values")

    def _fresh_grads(self, ignore_stale_grad):
        """Indices of the parameters whose gradients a backward pass wrote (all contexts)."""
        out = []
        for i, param in enumerate(self._params):
            if param._grad is None or param._grad_req == "null":
                continue
            written = [grad_store.is_fresh(g) for g in param._grad]
            if all(written):
                out.append(i)
            elif not ignore_stale_grad:
                self._raise_stale(param, param._data[written.index(False)])
        return out

    def _allreduce_grads(self, indices=None):
        if self._kvstore is None:
            if len(self._contexts) <= 1:
                return
            for param in self._params:
                if param.grad_req != "null" and param._grad is not None:
                    grad_store.sum_replicas(param._grad)
            return
        if not indices:
            return
        kv = self._kvstore
        grads = [self._params[i]._grad for i in indices]
        kv.push(indices, grads)  # one call: a distributed store reduces every key together
        if not self._update_on_kvstore:
            kv.pull(indices, grads, ignore_sparse=False)
            return
        for block in grads:  # consumed: the store updated the weights
            for g in block:
                grad_store.take_fresh(g)
        dense = [i for i in indices if self._params[i]._stype == "default"]
        if dense:  # (a no-op for a parameter array the store holds itself)
            kv.pull(dense, [self._params[i]._data for i in dense])

    def _row_sparse_pull(self, param, full, row_id):
        """Bring the rows ``row_id`` of ``param``'s local value ``full`` up to date from the
        store (row_sparse weights updated on the store)."""
        self._init_params()
        if not self._update_on_kvstore:
            for updater, data in zip(self._updaters, param._data or ()):
                index = self._param2idx[param.name]
                if data is full and index in updater.states:  # lazy_update='exact'
                    self._optimizer.catch_up(full, updater.states[index], row_id)
            return
        with autograd.pause():  # called by a forward's row_sparse_data, inside record()
            rows = zeros(full.shape, ctx=full.context, dtype=full.dtype, stype="row_sparse")
            index = self._param2idx[param.name]
            self._kvstore.row_sparse_pull(index, out=rows, row_ids=row_id, priority=-index)
            write_rows(full, rows)

    def _update(self, ignore_stale_grad=False):
        # collect every fresh gradient first: a failed step (stale gradient) consumes nothing
        fresh = grad_store.fresh_buffers()
        updates = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            grads = param._grad
            if grads is None or param._grad_req == "null":
                continue
            for upd, data, g in zip(updates, param._data, grads):
                ref = fresh.get(id(g))  # written by a backward pass since the last step?
                if ref is not None and ref() is g:
                    upd.append((i, g, data))
                elif not ignore_stale_grad:
                    self._raise_stale(param, data)
        for updater, upd in zip(self._updaters, updates):
            self._run_updater(updater, upd, fresh)

    def _run_updater(self, updater, todo, fresh):
        """Consume the fresh gradients of ``todo`` (``(index, grad, weight)``) and update
        their weights: one index alone (the updater's per-index plan), several as lists (the
        optimizer may aggregate them)."""
        idx, gs, ws = [], [], []
        for i, g, data in todo:
            fresh.pop(id(g), None)
            if self._dense_sparsity and g.stype == "default":
                where = nonzero.nonzero_entries(g)
                if where is not None and self._update_touched(updater, i, g, data, where):
                    continue
            idx.append(i)
            gs.append(g)
            ws.append(data)
        if len(idx) == 1:
            updater(idx[0], gs[0], ws[0])
        elif idx:
            updater(idx, gs, ws)

    @staticmethod
    def _raise_stale(param, data):
        raise UserWarning(
            f"Gradient of Parameter `{param.name}` on context {data.context} has not been "
            f"updated by backward since last `step`. This could mean a bug in your model that "
            f"made it only use a subset of the Parameters (Blocks) for this iteration. If you "
            f"are intentionally only using a subset, call step with ignore_stale_grad=True to "
            f"suppress this warning and skip updating of Parameters with stale gradient")

    def _update_touched(self, updater, index, grad, weight, where):
        """Update only the entries a sparse kernel wrote (``where``, see
        :func:`~sparsenet.autograd.nonzero_entries`), when that equals the dense update."""
        if weight.stype != "default" or not self._optimizer._zero_grad_is_identity(index):
            return False
        kind, pos = where
        w, g = weight._t, grad._t
        with torch.no_grad():
            pos = torch.unique(pos)
            if kind == "rows":
                w_sub, g_sub = w.index_select(0, pos), g.index_select(0, pos)
            else:
                w_sub = w.reshape(-1).index_select(0, pos)
                g_sub = g.reshape(-1).index_select(0, pos)
            sub = place(NDArray(w_sub), weight.context)
            updater(index, place(NDArray(g_sub), weight.context), sub)
            if kind == "rows":
                w.index_copy_(0, pos, sub._t)
            else:
                w.view(-1).index_copy_(0, pos, sub._t)
        return True

    # ------------------------------------------------------------------ exact mode
    @_serialised
    def sync(self, param=None):
        """Bring the weights (only ``param``'s, when given) up to date: an optimizer with
        ``lazy_update='exact'`` applies the steps their rows skipped. A no-op otherwise.

        Called before a parameter is saved (``save_parameters``) or its states are; call it
        before evaluating on the weights. With a store that updates the weights
        (``update_on_kvstore``), its optimizer catches up there.
        """
        if self._update_on_kvstore and self._kvstore is not None:
            updater = getattr(self._kvstore, "_updater", None)
            if updater is not None and hasattr(updater, "sync"):
                updater.sync()
            return
        if param is None:
            for updater in self._updaters:
                updater.sync()
            return
        index = self._param2idx.get(param.name)
        for updater, data in zip(self._updaters, param._data or ()):
            if index in updater.states:
                self._optimizer.sync(data, updater.states[index])

    @_serialised
    def catch_up(self, param, row_ids):
        """Bring rows ``row_ids`` of ``param`` up to date (``lazy_update='exact'``).

        Call it before the forward pass with the rows the batch reads (an embedding's ids,
        a CSR batch's column indices ``x.indices``): a forward pass that read a row still
        waiting for its skipped steps makes ``step()`` raise StateError.
        """
        index = self._param2idx.get(getattr(param, "name", None))
        if index is None or self._params[index] is not param:
            raise InvalidArgumentError(f"catch_up: {param!r} is not a parameter of this "
                                       f"Trainer")
        for updater, data in zip(self._updaters, param._data or ()):
            if index in updater.states:
                self._optimizer.catch_up(data, updater.states[index], row_ids)

    # ------------------------------------------------------------------ states
    @_serialised
    def save_states(self, fname):
        """Save the optimizer and its states (momentum...) to ``fname`` (atomic write)."""
        self._init_params()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        data = self._updaters[0].get_states(dump_optimizer=True) if self._updaters else b""
        atomic_write(fname, lambda f: f.write(data))

    @_serialised
    def load_states(self, fname):
        """Load what :meth:`save_states` wrote (the optimizer included)."""
        self._init_params()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
            self._optimizer.param_dict = dict(enumerate(self._params))
            return
        with open(fname, "rb") as f:
            states = f.read()
        for updater in self._updaters:
            updater.set_states(states, where=str(fname))
            updater.optimizer = self._updaters[0].optimizer
        if self._updaters:
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
        self._optimizer.exact_guard = CATCH_UP_HINT
