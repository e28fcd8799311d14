"""``mx.mod.Module``: a Symbol, its executor, its parameters and an optimizer.

Row_sparse parameters (``Variable(stype='row_sparse')``) are initialised with
every row stored; their gradients hold only the rows a batch touches, and
``update`` hands those row_sparse gradients to the optimizer, so its lazy
update runs. Auxiliary states (BatchNorm's moving statistics) are initialised
with the parameters, returned by ``get_params()`` as its second dict, updated
by the forward/backward passes (never by the optimizer) and checkpointed
under ``aux:`` keys. Checkpoints keep storage types and are written atomically.

>>> import sparsenet as mx
>>> x = mx.sym.var('data', stype='csr')
>>> w = mx.sym.var('weight', stype='row_sparse', shape=(4, 1))
>>> out = mx.sym.LinearRegressionOutput(mx.sym.dot(x, w), name='lro')
>>> mod = mx.mod.Module(out, data_names=['data'], label_names=['lro_label'])
>>> mod.bind(data_shapes=[('data', (2, 4))], label_shapes=[('lro_label', (2, 1))])
>>> mod.init_params(mx.init.Zero())
>>> w = mod.get_params()[0]['weight']
>>> w.stype, w.indices.asnumpy()  # every row stored, zeros included
('row_sparse', array([0, 1, 2, 3]))
"""
import logging
import os
import warnings

import numpy as np
import torch

from .. import initializer as init_mod
from .. import kvstore as kvstore_mod
from .. import optimizer as opt
from ..atomic import atomic_write
from ..base import (InvalidArgumentError, InvalidArgumentTypeError, ParameterAssertionError,
                    SparsenetError, StateError)
from ..context import as_context, cpu
from ..initializer import InitDesc
from ..kvstore import KVStore
from ..kvstore.compression import GradientCompression
from ..model import checkpoint_paths, load_checkpoint
from ..ndarray.creation import zeros
from ..ndarray.ndarray import NDArray, copy_into
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.stype import ROW_SPARSE
from ..symbol.symbol import _visible_attrs
from .base_module import BaseModule, parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]

#: The exact-mode guard's advice to Module users (see ``Optimizer.exact_guard``).
CATCH_UP_HINT = ("call mod.catch_up(name, row_ids) with the rows the batch reads (an "
                 "embedding's ids, a CSR batch's column indices x.indices) before forward(), "
                 "or mod.sync() to bring every row up to date")


def _names(value, default):
    if value is None:
        return list(default)
    return [value] if isinstance(value, str) else list(value)


class Module(BaseModule):
    """A module computing ``symbol``: bind shapes, initialise, train, predict, checkpoint.

    Parameters
    ----------
    symbol : Symbol
    data_names : list of str
        Arguments fed from ``DataBatch.data``.
    label_names : list of str
        Arguments fed from ``DataBatch.label``.
    logger : logging.Logger
    context : Context or list of Context
        With several contexts, each computes its share of every batch (data
        parallelism, :mod:`~sparsenet.module.executor_group`); the gradients are
        summed over them and every replica takes the same step.
    work_load_list : list of float, optional
        Relative share of the batch of each context (equal by default).
    fixed_param_names : list of str, optional
        Parameters that are not updated.
    state_names : list of str, optional
        Arguments that are states kept between batches (set with set_states).

    Examples
    --------
    >>> import sparsenet as mx
    >>> scale = mx.sym.var('scale_weight', shape=(2, 1))
    >>> net = mx.sym.LinearRegressionOutput(mx.sym.var('data') * scale, name='lro')
    >>> mod = mx.mod.Module(net, label_names=['lro_label'])
    >>> mod.bind(data_shapes=[('data', (2, 1))], label_shapes=[('lro_label', (2, 1))])
    >>> mod.set_params({'scale_weight': mx.nd.array([[3.0], [3.0]])})
    >>> mod.forward(mx.io.DataBatch([mx.nd.array([[1.0], [2.0]])], [mx.nd.zeros((2, 1))]))
    >>> mod.get_outputs()[0].asnumpy().ravel()
    array([3., 6.], dtype=float32)
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if context is None:
            context = [cpu()]
        elif not isinstance(context, (list, tuple)):
            context = [context]
        if not context:
            raise InvalidArgumentError("Module: context must name at least one Context")
        self._context = [as_context(c) for c in context]
        if work_load_list is not None and len(work_load_list) != len(self._context):
            raise InvalidArgumentError(f"Module: work_load_list has {len(work_load_list)} entries "
                                       f"for {len(self._context)} contexts")
        self._work_load_list = work_load_list
        if compression_params is not None:  # checked now, handed to a distributed store
            GradientCompression.from_params(compression_params)
        self._compression_params = compression_params
        self._symbol = symbol
        self._data_names = _names(data_names, ())
        self._label_names = _names(label_names, ())
        self._state_names = _names(state_names, ())
        self._fixed_param_names = _names(fixed_param_names, ())
        args = symbol.list_arguments()
        for kind, names in (("data", self._data_names), ("state", self._state_names),
                            ("fixed_param", self._fixed_param_names)):
            missing = [n for n in names if n not in args]
            if missing:
                raise InvalidArgumentError(f"Module: {kind}_names {missing} are not arguments of "
                                           f"the symbol; its arguments are {args}")
        absent = [n for n in self._label_names if n not in args]
        if absent:
            warnings.warn(f"Module: label_names {absent} are not arguments of the symbol and "
                          f"will be ignored", UserWarning, stacklevel=2)
            self._label_names = [n for n in self._label_names if n in args]
        inputs = set(self._data_names + self._label_names + self._state_names)
        self._param_names = [n for n in args if n not in inputs]
        # (optimizer index, name, position among the executor's arguments)
        self._param_slots = [(i, n, args.index(n)) for i, n in enumerate(self._param_names)]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._exec = self._exec_group = None
        self._data_shapes = self._label_shapes = None
        self._bound_shapes = ()
        self._optimizer = self._updater = self._kvstore = None
        self._update_on_kvstore = False
        self._preload_opt_states = None
        self._preset_args = self._preset_auxs = None  # values given before bind()

    # ------------------------------------------------------------------ properties
    @property
    def data_names(self):
        return list(self._data_names)

    @property
    def label_names(self):
        return list(self._label_names)

    @property
    def output_names(self):
        return list(self._output_names)

    @property
    def data_shapes(self):
        self._check_bound("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        self._check_bound("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check_bound("output_shapes")
        outs = [[e.outputs[i].shape for e in self._exec_group.execs]
                for i in range(len(self._output_names))]
        return [(n, (sum(s[0] for s in shapes),) + tuple(shapes[0][1:]) if shapes[0] else ())
                for n, shapes in zip(self._output_names, outs)]

    def _check_bound(self, what):
        if not self.binded:
            raise StateError(f"{what}: call bind() first")

    # ------------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Allocate the executor for the given input shapes.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Usually ``train_iter.provide_data`` / ``provide_label``.
        for_training : bool
            Allocate gradients (parameters get ``grad_req``).
        inputs_need_grad : bool
            Also compute gradients of the data inputs.
        shared_module : Module, optional
            Share parameter arrays with this bound module.
        """
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = parse_data_desc(self._data_names, data_shapes, "data")
        if label_shapes is not None and not self._label_names:
            label_shapes = None
        self._label_shapes = parse_data_desc(self._label_names, label_shapes, "label")
        if shared_module is not None and not shared_module.binded:
            raise StateError("bind: shared_module must be bound first")
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group=shared_module._exec_group if shared_module is not None else None,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names)
        self._bind_inputs()
        self.binded = True
        if shared_module is not None:
            self.params_initialized = shared_module.params_initialized
        elif self._preset_args is not None:  # from Module.load or set before binding
            self._copy_params(self._preset_args, self._preset_auxs, allow_missing=False,
                              allow_extra=True)
            self.params_initialized = True

    def _bind_inputs(self):
        """Remember the first executor and the bound batch shapes (read by every forward)."""
        self._exec = self._exec_group.execs[0]
        self._bound_shapes = [tuple(d.shape) for d in self._data_shapes]

    def reshape(self, data_shapes, label_shapes=None):
        """Re-bind for new input shapes, keeping the parameter arrays."""
        self._check_bound("reshape")
        self._data_shapes = parse_data_desc(self._data_names, data_shapes, "data")
        self._label_shapes = parse_data_desc(self._label_names, label_shapes, "label")
        self._exec_group.reshape(self._data_shapes, self._label_shapes)
        self._bind_inputs()

    # ------------------------------------------------------------------ parameters
    def init_params(self, initializer=init_mod.Uniform(0.01), arg_params=None,  # noqa: B008
                    aux_params=None, allow_missing=False, force_init=False, allow_extra=False):
        """Initialise the parameters and auxiliary states: copy them from ``arg_params`` /
        ``aux_params``, or run the initializer.

        A variable's own ``init`` attribute wins over ``initializer`` (BatchNorm's
        ``moving_var`` starts at ones, its ``moving_mean`` at zeros); a row_sparse
        parameter is filled densely and stored with all its rows. With a dict and
        ``allow_missing=True``, a name missing from it is filled by
        ``initializer``, or keeps its current value when ``initializer`` is None
        (as in MXNet: ``set_params(..., allow_missing=True)`` leaves the other
        parameters as they are); without ``allow_missing`` it raises
        ``RuntimeError``. ``aux_params=None`` initialises every auxiliary state
        with ``initializer`` (``Uniform(0.01)`` unless given, as MXNet).

        >>> import sparsenet as mx
        >>> net = mx.sym.BatchNorm(mx.sym.var('data'), name='bn')
        >>> mod = mx.mod.Module(net, label_names=None)
        >>> mod.bind(data_shapes=[('data', (4, 3))])
        >>> mod.init_params(mx.init.Uniform(0.5))
        >>> args, aux = mod.get_params()
        >>> sorted(args), aux['bn_moving_var'].asnumpy()
        (['bn_beta', 'bn_gamma'], array([1., 1., 1.], dtype=float32))
        """
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params "
                          "call ignored.", UserWarning, stacklevel=2)
            return
        self._check_bound("init_params")
        if initializer is None and arg_params is None:
            initializer = init_mod.Uniform(0.01)
        for given, names, what in ((arg_params, self._param_names, "parameters"),
                                   (aux_params, self._aux_names, "auxiliary states")):
            extra = [k for k in (given or {}) if k not in names]
            if extra and not allow_extra:
                raise InvalidArgumentError(f"init_params: {extra} are not {what} of the module; "
                                           f"pass allow_extra=True to ignore them")
        nodes = {n.name: n for n in self._symbol._input_nodes()}
        for given, table, names, what in (
                (arg_params, self._exec.arg_dict, self._param_names, "arg_params"),
                (aux_params, self._exec.aux_dict, self._aux_names, "aux_params")):
            for name in names:
                arr = table[name]
                if given is not None and name in given:
                    self._assign(arr, given[name])
                elif given is not None and not allow_missing:
                    raise SparsenetError(f"init_params: '{name}' is not in {what}; pass "
                                         f"allow_missing=True to initialise it with the "
                                         f"initializer")
                elif initializer is not None:
                    self._initialize(name, arr, nodes[name], initializer)
                # else: allowed to be missing and no initializer: the current value stays
        self._broadcast_params()
        self._preset_args, self._preset_auxs = None, None
        self.params_initialized = True

    def _broadcast_params(self):
        """Copy the first executor's parameters and auxiliary states to the other replicas."""
        group = self._exec_group
        with torch.no_grad():
            for block in group.param_arrays + group.aux_arrays:
                for arr in block[1:]:
                    copy_into(block[0], arr)

    def _initialize(self, name, arr, node, initializer):
        attrs = _visible_attrs(node)
        if node.init is not None:
            attrs["__init__"] = node.init
        dense = zeros(arr.shape, ctx=arr.context, dtype=arr.dtype)
        initializer(InitDesc(name, attrs=attrs), dense)
        if arr.stype == ROW_SPARSE:  # every row stored, as MXNet (apache/mxnet#10835)
            rows = torch.arange(arr.shape[0], device=dense.device)
            arr._replace(RowSparseNDArray._from_parts(dense._t.detach(), rows, arr.shape))
        else:
            dense.copyto(arr)

    @staticmethod
    def _assign(arr, value):
        if not isinstance(value, NDArray):
            raise InvalidArgumentTypeError("parameter values must be NDArrays, got "
                                           f"{type(value).__name__}")
        if tuple(value.shape) != tuple(arr.shape):
            raise InvalidArgumentError(f"parameter shape {value.shape} does not match the bound "
                                       f"shape {arr.shape}")
        with torch.no_grad():
            value.as_in_context(arr.context).copyto(arr)

    def _copy_params(self, arg_params, aux_params, allow_missing, allow_extra):
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=True, allow_extra=allow_extra)

    @property
    def _arg_params(self):
        """MXNet's attribute: CPU copies of the parameters once bound and initialised (taken at
        each read, as :meth:`get_params`; MXNet keeps such copies), else the values waiting
        for :meth:`bind`."""
        if self.binded and self.params_initialized:
            return self.get_params()[0]
        return self._preset_args

    @_arg_params.setter
    def _arg_params(self, values):
        # MXNet's CustomModule.load (example/rnn/large_word_lm) sets it before bind()
        self._preset_args = values

    @property
    def _aux_params(self):
        """MXNet's attribute: CPU copies of the auxiliary states (see ``_arg_params``)."""
        if self.binded and self.params_initialized:
            return self.get_params()[1]
        return self._preset_auxs

    @_aux_params.setter
    def _aux_params(self, values):
        self._preset_auxs = values

    def get_params(self):
        """``(arg_params, aux_params)``: CPU copies of the parameters and auxiliary states
        (storage types kept).

        Row_sparse weights updated on a kvstore are pulled from it whole; for a table
        sharded over the workers that is a collective call (every worker calls it).
        """
        self._check_ready("get_params")
        self.sync()
        arg_dict, aux_dict = self._exec.arg_dict, self._exec.aux_dict
        args = {n: arg_dict[n].copyto(cpu()) for n in self._param_names}
        if self._update_on_kvstore:  # row_sparse weights: every row, from the store (as MXNet)
            for i, n in enumerate(self._param_names):
                if args[n].stype == ROW_SPARSE:
                    every = NDArray(torch.arange(args[n].shape[0]))
                    self._kvstore.row_sparse_pull(n, out=args[n], row_ids=every, priority=-i)
        return args, {n: aux_dict[n].copyto(cpu()) for n in self._aux_names}

    def set_params(self, arg_params, aux_params=None, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (see :meth:`init_params`)."""
        if not self.binded:  # kept until bind()
            self._preset_args = dict(arg_params)
            self._preset_auxs = dict(aux_params) if aux_params is not None else None
            self.params_initialized = True
            return
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def sync(self):
        """Bring lazily updated weights up to date (optimizers with ``lazy_update='exact'``)."""
        if self._updater is not None and hasattr(self._updater, "sync"):
            self._updater.sync()

    def catch_up(self, name, row_ids):
        """Bring rows ``row_ids`` of parameter ``name`` up to date (``lazy_update='exact'``;
        a no-op otherwise).

        Call it before :meth:`forward` with the rows the batch reads (an embedding's ids, a
        CSR batch's column indices ``x.indices``): a forward pass that read a row still
        waiting for its skipped steps makes :meth:`update` raise
        :class:`~sparsenet.base.StateError`. :meth:`sync` brings every row up to date.

        >>> import sparsenet as mx
        >>> w = mx.sym.var('w_weight', stype='row_sparse', shape=(3, 1), init=mx.init.One())
        >>> out = mx.sym.sparse.dot(mx.sym.var('data', stype='csr'), w)
        >>> mod = mx.mod.Module(mx.sym.make_loss(mx.sym.sum(out)), label_names=None)
        >>> mod.bind(data_shapes=[('data', (1, 3))])
        >>> mod.init_params()
        >>> mod.init_optimizer(optimizer='sgd', optimizer_params={
        ...     'learning_rate': 0.1, 'wd': 0.5, 'lazy_update': 'exact', 'rescale_grad': 1.0})
        >>> for cols in ([0], [0], [2]):
        ...     x = mx.nd.sparse.csr_matrix(([1.0], cols, [0, 1]), shape=(1, 3))
        ...     mod.catch_up('w_weight', x.indices)
        ...     mod.forward(mx.io.DataBatch([x]), is_train=True)
        ...     mod.backward(); mod.update()
        >>> mod.sync(); mod.get_params()[0]['w_weight'].asnumpy().ravel().round(4)
        array([0.6721, 0.8574, 0.7574], dtype=float32)
        """
        self._check_ready("catch_up", optimizer=True)
        if name not in self._param_names:
            raise InvalidArgumentError(f"catch_up: {name!r} is not a parameter of the module; "
                                       f"parameters are {self._param_names}")
        if self._updater is None:  # the store updates the weights and keeps their states
            return
        i = self._param_names.index(name)
        group = self._exec_group
        n = len(group.execs)
        states = self._updater.states
        for k, weight in enumerate(group.param_arrays[i]):
            if i * n + k in states:  # (plain SGD's state is None)
                self._optimizer.catch_up(weight, states[i * n + k], row_ids)

    # ------------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Create the optimizer (an instance or a registered name) and its updater.

        In one process ('local'/'device', or None) the module sums the gradients
        over its contexts and updates its parameters itself. A KVStore object (or
        a 'dist_*' name) updates on the store: dense weights are pulled back after
        each update, row_sparse weights get the rows a batch needs from
        :meth:`prepare`.
        """
        self._check_ready("init_optimizer")
        if self.optimizer_initialized and not force_init:
            warnings.warn("optimizer already initialized, ignoring...", UserWarning,
                          stacklevel=2)
            return
        kv = self._create_kvstore(kvstore)
        if kv is not None and self._compression_params:
            kv.set_gradient_compression(self._compression_params)
        batch_size = self._data_shapes[0].shape[0]
        if kv is not None and "dist" in getattr(kv, "type", "") and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        if kv is not None:
            idx2name = dict(enumerate(self._param_names))
        else:  # MXNet's indices: a replica per device, parameter i on device k is i * n + k
            n = len(self._context)
            idx2name = {i * n + k: name for i, name in enumerate(self._param_names)
                        for k in range(n)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise InvalidArgumentTypeError("init_optimizer: optimizer must be a name or an "
                                               f"Optimizer, got {type(optimizer).__name__}")
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(f"Optimizer created manually outside Module but rescale_grad is "
                              f"not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              f"intended?", UserWarning, stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = kv is not None
        if kv is not None:
            group = self._exec_group
            for i, name in enumerate(self._param_names):
                replicas = group.param_arrays[i]
                if kv.is_sharded(name):
                    # a table partitioned over the workers (declared on the store before):
                    # this worker keeps only the rows prepare() pulls for each batch
                    for r in replicas:
                        r._replace(zeros(r.shape, ctx=r.context, dtype=r.dtype, stype=r.stype))
                    continue
                kv.init(name, replicas[0])
                if replicas[0].stype != ROW_SPARSE:  # every worker starts from the store's value
                    kv.pull(name, replicas if len(replicas) > 1 else replicas[0], priority=-i)
            kv.set_optimizer(optimizer)
            self._updater = None
        else:
            self._updater = opt.get_updater(optimizer)
            optimizer.exact_guard = CATCH_UP_HINT
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    @staticmethod
    def _create_kvstore(kvstore):
        if kvstore is None:
            return None
        if isinstance(kvstore, str):
            if "dist" not in kvstore:
                return None  # in process: the module sums over its contexts and updates
            return kvstore_mod.create(kvstore)
        if not isinstance(kvstore, KVStore):
            raise InvalidArgumentTypeError("init_optimizer: kvstore must be None, a str or a "
                                           f"KVStore, got {type(kvstore).__name__}")
        return kvstore

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, updater and kvstore."""
        if not shared_module.optimizer_initialized:
            raise StateError("borrow_optimizer: the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname):
        """Write the optimizer states to ``fname`` atomically."""
        self._check_ready("save_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            self._write_bytes(fname, self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Load optimizer states written by :meth:`save_optimizer_states`."""
        self._check_ready("load_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            return
        if not os.path.exists(fname):
            raise FileNotFoundError(f"no such file: '{fname}'")
        with open(fname, "rb") as f:
            self._updater.set_states(f.read(), where=str(fname))

    # ------------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        """Copy the batch into the bound inputs and run the executor.

        A batch whose shapes differ from the bound ones (e.g. a smaller last
        batch) re-binds for its shapes, keeping the parameters.
        """
        self._check_ready("forward")
        if is_train is None:
            is_train = self.for_training
        data = data_batch.data
        labels = getattr(data_batch, "label", None) or ()  # prediction batches may have none
        if len(data) != len(self._data_names):
            raise InvalidArgumentError(f"forward: the batch has {len(data)} data arrays, the "
                                       f"module expects {len(self._data_names)} "
                                       f"({self._data_names})")
        new_data = [tuple(a.shape) for a in data]
        if new_data != self._bound_shapes:
            label_shapes = None
            if self._label_shapes is not None and labels:
                label_shapes = [(d.name, tuple(a.shape)) for d, a in
                                zip(self._label_shapes, labels)]
            self.reshape([(n, s) for n, s in zip(self._data_names, new_data)], label_shapes)
        self._exec_group.forward(data_batch, is_train=is_train, feed=_feed)

    def backward(self, out_grads=None):
        """Gradients of the parameters (and inputs when ``inputs_need_grad``)."""
        self._check_ready("backward")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer to every parameter that has a gradient (row_sparse stays sparse).

        Without a kvstore the updater is called once with the lists of indices,
        gradients and weights, as MXNet's ``Module.update`` does (optimizers may
        aggregate them).
        """
        self._check_ready("update", optimizer=True)
        group = self._exec_group
        n = len(group.execs)
        if self._update_on_kvstore:
            for i, name, _ in self._param_slots:
                grads, weights = group.grad_arrays[i], group.param_arrays[i]
                if grads[0] is None:
                    continue
                self._kvstore.push(name, grads if n > 1 else grads[0], priority=-i)
                if weights[0].stype != ROW_SPARSE:  # row_sparse weights: prepare() pulls rows
                    self._kvstore.pull(name, weights if n > 1 else weights[0], priority=-i)
            return
        group.reduce_grads()
        for k in range(n):
            todo = [(i * n + k, group.grad_arrays[i][k], group.param_arrays[i][k])
                    for i, _, _ in self._param_slots if group.grad_arrays[i][k] is not None]
            if todo:
                indices, grad_list, weight_list = zip(*todo)
                self._updater(list(indices), list(grad_list), list(weight_list))

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward."""
        self._check_ready("get_outputs")
        return self._exec_group.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._check_ready("get_input_grads")
        if not self.inputs_need_grad:
            raise StateError("get_input_grads: bind with inputs_need_grad=True")
        return self._exec_group.get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The state arrays (``state_names``)."""
        self._check_ready("get_states")
        return self._exec_group.get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states (``state_names``) from arrays, or fill them with a scalar ``value``.

        Parameters
        ----------
        states : list, optional
            One entry per state name: a list of one NDArray per device (as
            ``get_states(merge_multi_context=False)`` and
            ``get_outputs(merge_multi_context=False)`` return them), or one NDArray
            split along axis 0 over the devices (as ``get_states()`` returns it).
        value : number, optional
            Fill every state with this value.

        Exactly one of ``states`` and ``value`` is given (``ParameterAssertionError``,
        an ``AssertionError`` as in MXNet, otherwise).
        """
        self._check_ready("set_states")
        if states is not None and value is not None:
            raise ParameterAssertionError("set_states: only one of states & value can be "
                                          "specified")
        if states is None and value is None:
            raise ParameterAssertionError("set_states: at least one of states & value must "
                                          "be specified")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with ``labels`` and the outputs of the last forward."""
        self._check_ready("update_metric")
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull the rows of row_sparse parameters the next batch needs (with a kvstore).

        ``sparse_row_id_fn(batch)`` returns ``{param name: row ids}``. Without a
        kvstore the parameters are local and complete, so nothing is pulled.
        """
        self._check_bound("prepare")
        if sparse_row_id_fn is None:
            return
        if self._kvstore is None or not self._update_on_kvstore:
            warnings.warn("Parameters are not updated in the KVStore. No need to call "
                          "sparse_row_id_fn.", UserWarning, stacklevel=2)
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise InvalidArgumentTypeError("sparse_row_id_fn must return a dict "
                                           "{param name: row ids}")
        group = self._exec_group
        names, outs, ids_per_out = [], [], []
        for name, ids in row_ids.items():
            if name not in self._param_names:
                raise InvalidArgumentError(f"sparse_row_id_fn returned row ids for '{name}', which "
                                           f"is not a parameter")
            replicas = group.param_arrays[self._param_names.index(name)]
            if replicas[0].stype != ROW_SPARSE:
                warnings.warn(f"{name}.stype is not 'row_sparse'. No need to perform "
                              f"row_sparse_pull.", UserWarning, stacklevel=2)
                continue
            names.append(name)
            outs.append(list(replicas))
            ids_per_out.extend([ids] * len(replicas))
        if names:  # one pull: the store checks each row ids array once for all its keys
            self._kvstore.row_sparse_pull(names, outs, row_ids=ids_per_out,
                                          priority=-self._param_names.index(names[0]))

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """Write ``<prefix>-symbol.json``, ``<prefix>-<epoch>.params`` (and ``.states``).

        The parameters are saved as ``arg:<name>``, the auxiliary states as ``aux:<name>``.
        With a distributed kvstore, worker 0 writes the files; when a table is sharded
        over the workers every worker must call this (it gathers the table), and
        each writes its share of the optimizer states.
        """
        sym_path, params_path = checkpoint_paths(prefix, epoch)
        arg_params, aux_params = self.get_params()
        if self._kvstore is None or self._kvstore.rank == 0:
            text = self._symbol.tojson().encode("utf-8")
            self._write_params(params_path, arg_params, aux_params)  # first: see model.py
            atomic_write(sym_path, lambda f: f.write(text))
        if save_optimizer_states:
            self.save_optimizer_states(f"{prefix}-{int(epoch):04d}.states")

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from a checkpoint; bind it (and ``init_optimizer``) before use.

        With ``load_optimizer_states`` the ``.states`` file is read by
        ``init_optimizer``.
        """
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._preset_args, mod._preset_auxs = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            path = f"{prefix}-{int(epoch):04d}.states"
            if not os.path.exists(path):
                raise FileNotFoundError(f"no such file: '{path}'")
            mod._preload_opt_states = path
        return mod


def _feed(dst, src):
    """Give a bound input the batch's values (the input's storage type, dtype, device kept).

    A batch array that already has the input's storage type, dtype, shape and
    device is shared, not copied: the executor never writes to its inputs.
    """
    if not isinstance(src, NDArray):
        dst[:] = np.asarray(src)
    elif src is not dst:
        # same container class: same storage type
        if (src.__class__ is dst.__class__ and dst._grad_req == "null" and src.shape == dst.shape
                and src.dtype == dst.dtype and src.device == dst.device):
            dst._replace(src)
        else:
            with torch.no_grad():
                src.copyto(dst)
