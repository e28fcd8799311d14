"""The module interface: the training loop (``fit``), ``score``, ``predict`` and checkpoints.

:class:`BaseModule` holds what does not depend on how a model computes:
iterating a data iterator, calling ``forward``/``backward``/``update``,
updating metrics, callbacks and progress bars. :class:`~sparsenet.module.Module`
implements the computation with a Symbol and an executor.
"""
import logging
import sys
import time
from collections import namedtuple

from .. import initializer as init_mod
from .. import metric as _metric
from ..atomic import atomic_write
from ..base import InvalidArgumentError, ShapeError, StateError
from ..callback import EpochProgressBar
from ..model import BatchEndParam, split_params
from ..ndarray import serialization
from ..ops.indexing import concat

__all__ = ["BaseModule", "DataShape", "parse_data_desc"]

DataShape = namedtuple("DataShape", ["name", "shape", "dtype", "layout"])
DataShape.__new__.__defaults__ = ("float32", "NCHW")


def parse_data_desc(names, shapes, kind):
    """Normalise ``[(name, shape)]`` or ``[DataDesc]`` to a list of descriptors, checking names.

    >>> parse_data_desc(['data'], [('data', (2, 3))], 'data')[0].shape
    (2, 3)
    """
    if shapes is None:
        return None
    out = []
    for d in shapes:
        if hasattr(d, "name") and hasattr(d, "shape"):
            out.append(d)
        else:
            name, shape = d[0], d[1]
            out.append(DataShape(name, tuple(shape)))
    given = [d.name for d in out]
    if list(given) != list(names):
        raise ShapeError(f"bind: {kind} shapes are given for {given} but the module's "
                         f"{kind}_names are {list(names)} (same names, same order expected)")
    return out


def _as_list(callbacks):
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


class BaseModule:
    """The module API shared by every module: ``fit``, ``score``, ``predict``, params I/O.

    Subclasses implement ``bind``, ``init_params``, ``init_optimizer``,
    ``forward``, ``backward``, ``update``, ``update_metric``, ``get_outputs``,
    ``get_params`` and ``set_params``.

    >>> import sparsenet as mx
    >>> isinstance(mx.mod.Module(mx.sym.var('data') * 2, label_names=None), BaseModule)
    True
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ------------------------------------------------------------------ high level
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run prediction on ``eval_data`` and return ``eval_metric.get_name_value()``.

        Parameters
        ----------
        eval_data : DataIter
        eval_metric : str or EvalMetric
        num_batch : int, optional
            Stop after this many batches.
        reset : bool
            Reset ``eval_data`` first.
        """
        self._check_ready("score", optimizer=False)
        if reset:
            eval_data.reset()
        eval_metric = _metric.create(eval_metric)
        eval_metric.reset()
        nbatch = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            self.update_metric(eval_metric, batch.label)
            for cb in _as_list(batch_end_callback):
                cb(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                 locals=locals()))
        for cb in _as_list(score_end_callback):
            cb(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                             locals=locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch; padding rows are removed from outputs."""
        self._check_ready("iter_predict", optimizer=False)
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            yield self._unpadded_outputs(batch), nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Outputs on all of ``eval_data`` (concatenated over batches, padding removed).

        Returns one NDArray for a single-output model (unless
        ``always_output_list``), else a list; with ``merge_batches=False`` a list
        of per-batch lists.
        """
        per_batch = [outs for outs, _, _ in self.iter_predict(
            eval_data, num_batch=num_batch, reset=reset, sparse_row_id_fn=sparse_row_id_fn)]
        if not per_batch or not merge_batches:
            return per_batch
        merged = [concat(*[outs[i] for outs in per_batch], dim=0)
                  for i in range(len(per_batch[0]))]
        if len(merged) == 1 and not always_output_list:
            return merged[0]
        return merged

    def _unpadded_outputs(self, batch):
        pad = getattr(batch, "pad", 0) or 0
        outs = []
        for out in self.get_outputs():
            if pad:
                out = out[0:out.shape[0] - pad]
            outs.append(out.copy())
        return outs

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None, aux_params=None,
            allow_missing=False, force_rebind=False, force_init=False, begin_epoch=0,
            num_epoch=None, validation_metric=None, monitor=None, sparse_row_id_fn=None,
            progress_bar=None):
        """Train: bind, initialise, then for each epoch run every batch and the callbacks.

        Parameters
        ----------
        train_data : DataIter
        eval_data : DataIter, optional
            Scored with ``validation_metric`` (default ``eval_metric``) after each epoch.
        eval_metric : str or EvalMetric
        epoch_end_callback, batch_end_callback : callable or list, optional
        kvstore, optimizer, optimizer_params :
            See :meth:`init_optimizer`.
        initializer : Initializer, optional
            Default ``Uniform(0.01)``.
        num_epoch : int
        sparse_row_id_fn : callable, optional
            ``batch -> {param name: row ids}`` for ``prepare`` (row_sparse_pull).
        progress_bar : bool, optional
            A tqdm bar per epoch (sparsenet addition); default: when stderr is a
            terminal.
        """
        if num_epoch is None:
            raise InvalidArgumentError("fit: please specify num_epoch")
        if monitor is not None:
            raise InvalidArgumentError(
                "fit: monitor is not supported by sparsenet; log what you need "
                "from a batch_end_callback")
        if initializer is None:
            initializer = init_mod.Uniform(0.01)
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        validation_metric = validation_metric if validation_metric is not None else eval_metric
        eval_metric = _metric.create(eval_metric)
        if progress_bar is None:
            progress_bar = sys.stderr.isatty()
        bar = None
        if progress_bar:
            bar = EpochProgressBar(total=_num_batches(train_data))
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            if bar is not None:
                bar.start(epoch)
            nbatch = self._fit_epoch(train_data, eval_metric, epoch, batch_end_callback,
                                     sparse_row_id_fn, bar)
            if bar is not None:
                bar.close()
            for name, val in eval_metric.get_global_name_value():
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f (%d batches)", epoch, time.time() - tic,
                             nbatch)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            for cb in _as_list(epoch_end_callback):
                cb(epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _fit_epoch(self, train_data, eval_metric, epoch, batch_end_callback, sparse_row_id_fn,
                   bar):
        data_iter = iter(train_data)
        try:
            next_batch = next(data_iter)
        except StopIteration:
            return 0
        self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
        callbacks = _as_list(batch_end_callback) + ([bar] if bar is not None else [])
        nbatch, done = 0, False
        while not done:
            batch = next_batch
            self.forward_backward(batch)
            self.update()
            # the metric reads this batch's labels before the iterator may reuse their buffers
            self.update_metric(eval_metric, batch.label)
            try:
                next_batch = next(data_iter)
                self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                done = True
            if callbacks:  # the progress bar is called last
                param = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                      locals=locals())
                for cb in callbacks:
                    cb(param)
            nbatch += 1
        return nbatch

    # ------------------------------------------------------------------ parameters I/O
    def save_params(self, fname):
        """Save the parameters to ``fname`` (``arg:``/``aux:`` keys, stypes kept, atomic)."""
        self._write_params(fname, *self.get_params())

    @staticmethod
    def _write_params(fname, arg_params, aux_params):
        data = {f"arg:{k}": v for k, v in arg_params.items()}
        data.update({f"aux:{k}": v for k, v in aux_params.items()})
        serialization.save(fname, data)

    def load_params(self, fname):
        """Load parameters saved by :meth:`save_params` into the module."""
        arg_params, aux_params = split_params(serialization.load(fname), fname)
        self.set_params(arg_params, aux_params)

    def _write_bytes(self, fname, payload):
        atomic_write(fname, lambda f: f.write(payload))

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for the next batch (``row_sparse_pull`` with a kvstore; see Module)."""

    def _check_ready(self, what, optimizer=False):
        if not self.binded:
            raise StateError(f"{what}: call bind() first")
        if not self.params_initialized:
            raise StateError(f"{what}: call init_params() (or set_params) first")
        if optimizer and not self.optimizer_initialized:
            raise StateError(f"{what}: call init_optimizer() first")

    @property
    def symbol(self):
        """The symbol the module computes."""
        return self._symbol


def _num_batches(data):
    try:
        return len(data)
    except TypeError:
        pass
    n, bs = getattr(data, "num_data", None), getattr(data, "batch_size", None)
    if n and bs:
        handle = getattr(data, "last_batch_handle", "pad")
        return n // bs if handle == "discard" else -(-n // bs)
    return None
