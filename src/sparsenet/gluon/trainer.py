"""The Gluon :class:`Trainer`: applies an optimizer to a set of parameters.

``trainer.step(batch_size)`` reduces the gradients over the parameters'
contexts (in-process: summed and copied back to every context), then updates
every parameter whose gradient a backward pass wrote since the last step, with
``rescale_grad = 1 / batch_size``. Row_sparse gradients take the optimizer's
lazy path (only their rows change, with ``lazy_update=True``). Row_sparse
weights (``contrib.nn.SparseEmbedding``) are updated in place; no KVStore is
needed.

A dense gradient written by a sparse kernel (``dot(csr, W)``,
``FullyConnected(csr, W)``, ``Embedding``...) is known to be zero outside the
entries the batch touched (:func:`sparsenet.autograd.nonzero_entries`). When
the optimizer leaves zero-gradient entries unchanged (it says so:
``Optimizer._zero_grad_is_identity``; SGD without momentum and weight decay), the
update runs on those entries only: the result is identical
to the dense update, at the cost of the touched entries instead of the whole
weight.

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
import torch

from .. import grad_store
from .. import optimizer as opt
from ..atomic import atomic_write
from ..ops.binary import add_n
from ..ndarray import nonzero
from ..ndarray.ndarray import NDArray
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

_LOCAL_KVSTORES = (None, "local", "device")


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
    kvstore : {None, 'local', 'device'}
        Gradients of parameters living on several contexts are reduced in
        process whichever of these is given. Distributed stores are not
        supported by this Trainer.
    compression_params : None
        Gradient compression is not supported (None only).
    update_on_kvstore : bool, optional
        Accepted for compatibility; updates always run locally.
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
            raise ValueError(f"First argument must be a list or dict of Parameters, got "
                             f"{type(params)}.")
        self._params = []
        self._param2idx = {}
        seen = set()
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got "
                                 f"list of {type(param)}.")
            if id(param) in seen:
                raise ValueError(f"Parameter '{param.name}' appears twice in the parameter "
                                 f"list of the Trainer")
            seen.add(id(param))
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        if kvstore not in _LOCAL_KVSTORES:
            raise ValueError(f"kvstore={kvstore!r} is not supported by gluon.Trainer: use None, "
                             f"'local' or 'device' (gradients over contexts are reduced in "
                             f"process)")
        if compression_params is not None:
            raise ValueError("gradient compression is not supported: compression_params must "
                             "be None")
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._dense_sparsity = dense_sparsity
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise ValueError(f"All Parameters must be initialized on the same set of "
                                 f"contexts, but Parameter {param.name} is initialized on "
                                 f"{ctx} while previous Parameters are initialized on "
                                 f"{contexts}.")
            contexts = ctx
        return contexts or []

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError("optimizer_params must be None if optimizer is an instance of "
                                 "Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict  # shared: lr_mult/wd_mult edits apply
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    # ------------------------------------------------------------------ properties
    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The :class:`~sparsenet.optimizer.Optimizer`."""
        return self._optimizer

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        self._optimizer.set_learning_rate(lr)

    # ------------------------------------------------------------------ stepping
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
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum each parameter's gradients over its contexts (call :meth:`update` next)."""
        self._allreduce_grads()

    def update(self, batch_size, ignore_stale_grad=False):
        """Update the parameters from their (reduced) gradients: the second half of :meth:`step`."""
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    def _allreduce_grads(self):
        if len(self._contexts) <= 1:
            return
        for param in self._params:
            if param.grad_req == "null" or param._grad is None:
                continue
            grads = param._grad
            with torch.no_grad():
                if grads[0].stype == "default":
                    total = grads[0]._t.clone()
                    for g in grads[1:]:
                        total.add_(g._t.to(total.device))
                    for g in grads:
                        g._t.copy_(total)
                        nonzero.forget(g)
                else:
                    total = add_n(*[g.as_in_context(grads[0].context) for g in grads])
                    for g in grads:
                        g._replace(total.as_in_context(g.context) if g.context != total.context
                                   else total.copy())

    def _update(self, ignore_stale_grad=False):
        # collect every fresh gradient first: a failed step (stale gradient) consumes nothing
        updates = [[] for _ in self._updaters]
        fresh = grad_store.fresh_buffers()
        for i, param in enumerate(self._params):
            grads = param._grad
            if grads is None or param._grad_req == "null":
                continue
            for upd, data, g in zip(updates, param._data, grads):
                ref = fresh.get(id(g))  # written by a backward pass since the last step?
                if ref is not None and ref() is g:
                    upd.append((i, g, data))
                elif not ignore_stale_grad:
                    raise UserWarning(
                        f"Gradient of Parameter `{param.name}` on context {data.context} "
                        f"has not been updated by backward since last `step`. This could "
                        f"mean a bug in your model that made it only use a subset of the "
                        f"Parameters (Blocks) for this iteration. If you are intentionally "
                        f"only using a subset, call step with ignore_stale_grad=True to "
                        f"suppress this warning and skip updating of Parameters with stale "
                        f"gradient")
        for updater, upd in zip(self._updaters, updates):
            idx, gs, ws = [], [], []
            for i, g, data in upd:
                fresh.pop(id(g), None)
                if self._dense_sparsity and g.stype == "default":
                    where = nonzero.nonzero_entries(g)
                    if where is not None and self._update_touched(updater, i, g, data, where):
                        continue
                idx.append(i)
                gs.append(g)
                ws.append(data)
            if idx:
                updater(idx, gs, ws)

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
            sub = NDArray(w_sub)
            updater(index, NDArray(g_sub), sub)
            if kind == "rows":
                w.index_copy_(0, pos, sub._t)
            else:
                w.view(-1).index_copy_(0, pos, sub._t)
        return True

    # ------------------------------------------------------------------ states
    def save_states(self, fname):
        """Save the optimizer and its states (momentum...) to ``fname`` (atomic write)."""
        data = self._updaters[0].get_states(dump_optimizer=True) if self._updaters else b""
        atomic_write(fname, lambda f: f.write(data))

    def load_states(self, fname):
        """Load what :meth:`save_states` wrote (the optimizer included)."""
        with open(fname, "rb") as f:
            states = f.read()
        for updater in self._updaters:
            updater.set_states(states)
            updater.optimizer = self._updaters[0].optimizer
        if self._updaters:
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
