"""``mx.module.executor_group``: one executor per context, the batch split between them.

A :class:`DataParallelExecutorGroup` binds the symbol once per context with
that context's share of the batch (``work_load_list`` weights the shares, as in
MXNet), feeds each executor its slice of every data and label array, and merges
the outputs and input gradients back along the batch axis. Parameters live on
every context as replicas; :class:`~sparsenet.module.Module` keeps them equal
by summing the gradients over the contexts before updating each replica with
the same step.

>>> import sparsenet as mx
>>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc')
>>> group = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], None,
...                                   [('data', (4, 3))], None, ['fc_weight', 'fc_bias'],
...                                   for_training=False, inputs_need_grad=False)
>>> group.slices, [e.arg_dict['data'].context for e in group.execs]
([slice(0, 2, None), slice(2, 4, None)], [cpu(0), cpu(1)])
"""
import logging

from ..base import InvalidArgumentError, ShapeError
from ..grad_store import sum_replicas
from ..ndarray.ndarray import NDArray
from ..ops.indexing import concat
from ..symbol.executor import simple_bind
from .base_module import parse_data_desc

__all__ = ["DataParallelExecutorGroup", "split_input_slice"]


def split_input_slice(batch_size, work_load_list):
    """The batch slices of each device: shares proportional to ``work_load_list``.

    >>> split_input_slice(5, [1, 1])
    [slice(0, 2, None), slice(2, 5, None)]
    """
    total = float(sum(work_load_list))
    counts = [int(round(w * batch_size / total)) for w in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for n in counts:
        begin = min(end, batch_size)
        end = min(begin + n, batch_size)
        if begin >= end:
            raise InvalidArgumentError(f"cannot split a batch of {batch_size} over "
                                       f"{len(work_load_list)} devices with work loads "
                                       f"{list(work_load_list)}: some slices would be empty")
        slices.append(slice(begin, end))
    return slices


def _descs(shapes, kind):
    """``[(name, shape)]`` or ``[DataDesc]`` as descriptors (names as given)."""
    names = [d.name if hasattr(d, "name") else d[0] for d in shapes]
    return parse_data_desc(names, shapes, kind)


def _describe(value):
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


def _merge(arrays):
    """``arrays`` (one per device) concatenated along the batch axis on the first device."""
    if len(arrays) == 1:
        return arrays[0]
    ctx = arrays[0].context
    return concat(*[a.as_in_context(ctx) for a in arrays], dim=0)


class DataParallelExecutorGroup:
    """Executors of ``symbol`` on ``contexts``, each computing its slice of the batch.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of float or None
        Relative share of the batch of each context (None: equal shares).
    data_shapes, label_shapes : list of DataDesc or (name, shape)
        Shapes of the whole batch.
    param_names : list of str
    for_training, inputs_need_grad : bool
    shared_group : DataParallelExecutorGroup, optional
        Share parameter arrays with this group's executors.
    fixed_param_names : list of str, optional
        Parameters that get no gradient.
    grad_req : str
    state_names : list of str, optional
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None, group2ctxs=None):
        self.symbol = symbol
        self._output_names = symbol.list_outputs()
        self.contexts = list(contexts)
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        if len(self.workload) != len(self.contexts):
            raise InvalidArgumentError(f"work_load_list has {len(self.workload)} entries for "
                                       f"{len(self.contexts)} contexts")
        self.param_names = list(param_names)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = list(fixed_param_names or ())
        self.state_names = list(state_names or ())
        self._default_grad_req = grad_req
        self.logger = logger
        self.execs = []
        # per context: the arrays of the arguments that are not parameters (data, labels,
        # ...), shared with the groups bound with shared_group=self (MXNet's shared_buffer)
        self.shared_data_arrays = shared_group.shared_data_arrays \
            if shared_group is not None else [{} for _ in self.contexts]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    # ------------------------------------------------------------------ binding
    def _grad_reqs(self):
        """MXNet's per-argument requests: ``grad_req`` a str (parameters and, with
        ``inputs_need_grad``, the data), a list/tuple (one per argument) or a dict (updates
        the defaults, ``'write'``, by name)."""
        data = {d.name for d in self.data_shapes}
        args = self.symbol.list_arguments()
        given = self._default_grad_req
        if isinstance(given, (list, tuple)):
            if len(given) != len(args):
                raise InvalidArgumentError(f"grad_req: {len(given)} entries for the "
                                           f"{len(args)} arguments {args}")
            return dict(zip(args, given)) if self.for_training else dict.fromkeys(args, "null")
        default = given if isinstance(given, str) else "write"
        reqs = {}
        for n in args:
            if not self.for_training:
                reqs[n] = "null"
            elif n in self.param_names:
                reqs[n] = "null" if n in self.fixed_param_names else default
            elif n in data:
                reqs[n] = default if self.inputs_need_grad else "null"
            else:
                reqs[n] = "null"
        if isinstance(given, dict) and self.for_training:
            # names that are not arguments are ignored, as in MXNet (one dict may serve
            # several symbols, e.g. a fused and an unfused network)
            reqs.update({n: r for n, r in given.items() if n in reqs})
        return reqs

    def _sliced_shapes(self, descs, s):
        return {d.name: (s.stop - s.start,) + tuple(d.shape[1:]) for d in descs or ()}

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with ``reshape``, re-bind for new shapes) one executor per context."""
        self.data_shapes = _descs(data_shapes, "data")
        self.label_shapes = _descs(label_shapes, "label") if label_shapes else None
        self.batch_size = self.data_shapes[0].shape[0]
        self.slices = split_input_slice(self.batch_size, self.workload)
        types = {d.name: d.dtype for d in self.data_shapes + (self.label_shapes or [])
                 if getattr(d, "dtype", None)}
        reqs = self._grad_reqs()
        self.grad_req = reqs
        execs = []
        for k, (ctx, s) in enumerate(zip(self.contexts, self.slices)):
            shapes = self._sliced_shapes(self.data_shapes, s)
            shapes.update(self._sliced_shapes(self.label_shapes, s))
            if reshape:
                execs.append(self.execs[k].reshape(partial_shaping=True, **shapes))
                continue
            shared = shared_group.execs[k] if shared_group is not None else None
            execs.append(simple_bind(self.symbol, ctx, grad_req=reqs, type_dict=types,
                                     shapes=shapes, shared_exec=shared,
                                     shared_arg_names=self.param_names,
                                     shared_buffer=self.shared_data_arrays[k]))
        self.execs = execs
        names = [d.name for d in self.data_shapes]
        labels = [d.name for d in self.label_shapes or ()]
        self.data_arrays = [[e.arg_dict[n] for e in execs] for n in names]
        self.label_arrays = [[e.arg_dict[n] for e in execs] for n in labels]
        self.param_arrays = [[e.arg_dict[n] for e in execs] for n in self.param_names]
        self.grad_arrays = [[e.grad_dict.get(n) for e in execs] for n in self.param_names]
        self.aux_names = self.symbol.list_auxiliary_states()
        self.aux_arrays = [[e.aux_dict[n] for e in execs] for n in self.aux_names]
        self.state_arrays = [[e.arg_dict[n] for e in execs] for n in self.state_names]
        self.input_grad_arrays = [[e.grad_dict.get(n) for e in execs] for n in names]

    def reshape(self, data_shapes, label_shapes=None):
        """Re-bind for new batch shapes, keeping the parameter arrays."""
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    # ------------------------------------------------------------------ parameters
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy the given values into every executor's parameters and auxiliary states."""
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Fill ``arg_params``/``aux_params`` with CPU copies of the first replica's values
        (the replicas are kept equal)."""
        for name, block in zip(self.param_names, self.param_arrays):
            arg_params[name] = block[0].copyto(arg_params[name].context) \
                if name in arg_params else block[0].copy()
        for name, block in zip(self.aux_names, self.aux_arrays):
            aux_params[name] = block[0].copy()

    # ------------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None, feed=None):
        """Give each executor its slice of the batch and run it."""
        data = data_batch.data
        labels = getattr(data_batch, "label", None) or ()
        for arrays, src in zip(self.data_arrays, data):
            self._load(arrays, src, feed)
        for arrays, src in zip(self.label_arrays, labels):
            self._load(arrays, src, feed)
        for exe in self.execs:
            exe.forward(is_train=self.for_training if is_train is None else is_train)

    def _load(self, arrays, src, feed):
        if len(arrays) == 1:
            feed(arrays[0], src)
            return
        if not isinstance(src, NDArray):
            raise InvalidArgumentError(f"a batch split over {len(arrays)} contexts must hold "
                                       f"NDArrays, got {type(src).__name__}")
        for dst, s in zip(arrays, self.slices):
            feed(dst, src[s].as_in_context(dst.context))

    def backward(self, out_grads=None):
        """Backward on every executor (``out_grads`` are split like the batch)."""
        for k, exe in enumerate(self.execs):
            grads = out_grads
            if out_grads is not None and len(self.execs) > 1:
                grads = [g[self.slices[k]].as_in_context(self.contexts[k]) for g in
                         (out_grads if isinstance(out_grads, (list, tuple)) else [out_grads])]
            exe.backward(out_grads=grads)

    def get_outputs(self, merge_multi_context=True):
        """Outputs: merged along the batch axis, or one list per output of per-device arrays."""
        outputs = [[e.outputs[i] for e in self.execs] for i in range(len(self.execs[0].outputs))]
        if merge_multi_context:
            return [_merge(o) for o in outputs]
        return outputs

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (merged like :meth:`get_outputs`)."""
        if merge_multi_context:
            return [_merge(g) for g in self.input_grad_arrays]
        return self.input_grad_arrays

    def get_states(self, merge_multi_context=True):
        """State arrays (merged like :meth:`get_outputs`)."""
        if merge_multi_context:
            return [_merge(s) for s in self.state_arrays]
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set every executor's states from ``states`` or fill them with the scalar ``value``.

        ``states`` holds one entry per state name: a list with one array per device
        (what ``get_states(merge_multi_context=False)`` and ``get_outputs(False)`` give),
        or one array for all devices, split along axis 0 into the devices' rows (what
        ``get_states()`` gives). Arrays are copied; the caller's arrays are not kept.
        """
        if states is None:
            for arrays in self.state_arrays:
                for dst in arrays:
                    dst[:] = value
            return
        names = self.state_names
        if not isinstance(states, (list, tuple)) or len(states) != len(names):
            raise InvalidArgumentError(
                f"set_states: expected a list of {len(names)} states (one per state name "
                f"{names}), got {_describe(states)}")
        copies = []  # every state is checked before any is written
        for name, src, arrays in zip(names, states, self.state_arrays):
            for dst, part in zip(arrays, self._state_parts(name, src, arrays)):
                if tuple(part.shape) != tuple(dst.shape):
                    raise ShapeError(f"set_states: state '{name}' on {dst.context} has shape "
                                     f"{tuple(dst.shape)}, got an array of shape "
                                     f"{tuple(part.shape)}")
                copies.append((part, dst))
        for part, dst in copies:
            part.copyto(dst)

    @staticmethod
    def _state_parts(name, src, arrays):
        """``src`` as one array per device: a per-device list as is, one array split by rows."""
        if isinstance(src, (list, tuple)):
            if len(src) != len(arrays) or not all(isinstance(a, NDArray) for a in src):
                raise InvalidArgumentError(
                    f"set_states: state '{name}' must be one NDArray per device "
                    f"({len(arrays)}) or one NDArray for all, got {_describe(src)}")
            return list(src)
        if not isinstance(src, NDArray):
            raise InvalidArgumentError(f"set_states: state '{name}' must be an NDArray or a "
                                       f"list of NDArrays, got {type(src).__name__}")
        if len(arrays) == 1:
            return [src]
        rows = [int(a.shape[0]) for a in arrays]
        if src.ndim == 0 or int(src.shape[0]) != sum(rows):
            raise ShapeError(f"set_states: state '{name}' given as one array must have the "
                             f"devices' {sum(rows)} rows ({rows}) on axis 0, got shape "
                             f"{tuple(src.shape)}")
        starts = [sum(rows[:k]) for k in range(len(rows))]
        return [src[b:b + r] for b, r in zip(starts, rows)]

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with each executor's outputs and its slice of ``labels``."""
        names = [d.name for d in self.label_shapes or ()]
        outputs = self._output_names
        for k, exe in enumerate(self.execs):
            if pre_sliced:
                part = labels[k]
            elif len(self.execs) == 1:
                part = labels
            else:
                part = [lab[self.slices[k]] for lab in labels or ()]
            eval_metric.update_dict(dict(zip(names, part or [])), dict(zip(outputs, exe.outputs)))

    def reduce_grads(self):
        """Sum each parameter's gradients over the devices and give every device the sum."""
        for grads in self.grad_arrays:
            if grads[0] is not None:
                sum_replicas(grads)
