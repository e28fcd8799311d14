"""Training callbacks (``mx.callback``): speed and metric logging, checkpoints, progress bars.

Batch-end callbacks receive a :class:`~sparsenet.model.BatchEndParam`
``(epoch, nbatch, eval_metric, locals)``; epoch-end callbacks receive
``(epoch, symbol, arg_params, aux_params)``.

>>> import logging, sparsenet as mx
>>> speed = mx.callback.Speedometer(batch_size=32, frequent=2)
>>> metric = mx.metric.create('mse')
>>> for i in range(3):
...     speed(mx.model.BatchEndParam(epoch=0, nbatch=i, eval_metric=metric, locals=None))
"""
import logging
import math
import sys
import time

from .model import save_checkpoint

__all__ = ["Speedometer", "do_checkpoint", "module_checkpoint", "log_train_metric",
           "ProgressBar", "LogValidationMetricsCallback", "EpochProgressBar"]

_clock = time.time  # the Speedometer's clock


def _metric_text(name_value):
    return "\t".join(f"{n}={v:f}" for n, v in name_value)


class Speedometer:
    """Log the training speed (samples/s) and metrics every ``frequent`` batches.

    Parameters
    ----------
    batch_size : int
    frequent : int
        Log every this many batches.
    auto_reset : bool
        Reset the metric's local statistics after each log line, so that each
        line shows the metric over the last ``frequent`` batches.

    Examples
    --------
    >>> import sparsenet as mx
    >>> s = Speedometer(batch_size=8, frequent=1, auto_reset=False)
    >>> s(mx.model.BatchEndParam(0, 0, None, None)); s(mx.model.BatchEndParam(0, 1, None, None))
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:  # a new epoch started
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = _clock()
            return
        if count % self.frequent:
            return
        elapsed = max(_clock() - self.tic, 1e-12)
        speed = self.frequent * self.batch_size / elapsed
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            if self.auto_reset:
                param.eval_metric.reset_local()
            logging.info("Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec\t%s", param.epoch,
                         count - self.frequent, count, speed, _metric_text(name_value))
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
        self.tic = _clock()


def do_checkpoint(prefix, period=1):
    """Epoch-end callback saving ``<prefix>-symbol.json`` and ``<prefix>-<epoch>.params``.

    Saves after every ``period`` epochs; the file number is ``epoch + 1``.

    >>> import os, tempfile, sparsenet as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'm')
    >>> do_checkpoint(prefix)(0, mx.sym.var('w') * 2, {'w': mx.nd.ones((1,))}, {})
    >>> os.path.exists(prefix + '-0001.params')
    True
    """
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Epoch-end callback calling ``mod.save_checkpoint`` every ``period`` epochs.

    >>> class Recorder:
    ...     def save_checkpoint(self, prefix, epoch, states):
    ...         print(prefix, epoch, states)
    >>> cb = module_checkpoint(Recorder(), 'run/m', period=2)
    >>> cb(0); cb(1)
    run/m 2 False
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def log_train_metric(period, auto_reset=False):
    """Batch-end callback logging the training metric every ``period`` batches.

    >>> import sparsenet as mx
    >>> cb = log_train_metric(period=10)
    >>> cb(mx.model.BatchEndParam(0, 10, mx.metric.create('acc'), None))
    """
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name,
                             value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class ProgressBar:
    """Batch-end callback logging a text progress bar ``[=====     ] 50.0%`` of ``total`` batches.

    >>> import sparsenet as mx
    >>> ProgressBar(total=4, length=8).bar(2)
    '[====----] 50.0%'
    """

    def __init__(self, total, length=80):
        self.total = total
        self.bar_len = length

    def bar(self, count):
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total) * 10) / 10
        return f"[{'=' * filled}{'-' * (self.bar_len - filled)}] {percents}%"

    def __call__(self, param):
        logging.info(self.bar(param.nbatch + 1))


class LogValidationMetricsCallback:
    """Eval-end callback logging the validation metrics.

    >>> import sparsenet as mx
    >>> LogValidationMetricsCallback()(mx.model.BatchEndParam(0, 0, mx.metric.MSE(), None))
    """

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)


class EpochProgressBar:
    """A tqdm progress bar per epoch, updated each batch with the training metric.

    ``Module.fit`` uses it when ``progress_bar`` is on (by default when stderr
    is a terminal).

    Parameters
    ----------
    total : int or None
        Batches per epoch, when known.
    file : file object, optional
        Where the bar is drawn (stderr by default).

    Examples
    --------
    >>> import io, sparsenet as mx
    >>> out = io.StringIO()
    >>> bar = EpochProgressBar(total=2, file=out)
    >>> bar.start(0)
    >>> bar(mx.model.BatchEndParam(0, 0, mx.metric.create('mse'), None))
    >>> bar.close()
    >>> 'Epoch 0' in out.getvalue()
    True
    """

    def __init__(self, total=None, file=None):
        self.total = total
        self.file = file
        self._bar = None

    def start(self, epoch):
        from tqdm.auto import tqdm  # on first use: importing tqdm.auto takes ~80 ms
        self.close()
        self._bar = tqdm(total=self.total, desc=f"Epoch {epoch}", unit="batch", leave=True,
                         file=self.file if self.file is not None else sys.stderr,
                         dynamic_ncols=True)

    def __call__(self, param):
        if self._bar is None:
            return
        self._bar.update(1)
        if param.eval_metric is not None:
            self._bar.set_postfix({n: f"{v:.4g}" for n, v in
                                   param.eval_metric.get_name_value()}, refresh=False)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
