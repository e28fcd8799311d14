"""MXNet 1.9.1's ``contrib.amp.amp`` functions: importable, and each refuses clearly.

MXNet's AMP rewrites operators by lists (which run in float16, which stay in
float32) and scales the loss through the Trainer. sparsenet does not rewrite
operators by list; mixed precision is reached through the optimizers'
``multi_precision=True`` (float32 master weights for float16 parameters) and
``torch.autocast`` around a block's forward. Every function here raises
:class:`~sparsenet.base.UnsupportedError` saying so, so code that only imports
the module (as MXNet's own test helpers do) runs, and code that calls it stops
with a reason instead of training at the wrong precision.

>>> from sparsenet.contrib import amp
>>> amp.init()
Traceback (most recent call last):
...
sparsenet.base.UnsupportedError: mx.contrib.amp.init: MXNet's operator-list automatic mixed precision is not provided by sparsenet; use the optimizer's multi_precision=True with float16 parameters, or torch.autocast around the forward
"""
from ...base import UnsupportedError

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_symbol",
           "convert_hybrid_block", "convert_bucketing_module"]

_HELP = ("MXNet's operator-list automatic mixed precision is not provided by sparsenet; use the "
         "optimizer's multi_precision=True with float16 parameters, or torch.autocast around "
         "the forward")


def _refuse(name):
    raise UnsupportedError(f"mx.contrib.amp.{name}: {_HELP}")


def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None, layout_optimization=False):
    """MXNet: patch the operator namespaces for mixed precision. Raises UnsupportedError."""
    _refuse("init")


def init_trainer(optimizer_or_trainer):
    """MXNet: attach a dynamic loss scaler to a Trainer. Raises UnsupportedError."""
    _refuse("init_trainer")


def scale_loss(loss, optimizer_or_trainer):
    """MXNet: context manager scaling the loss. Raises UnsupportedError."""
    _refuse("scale_loss")


def unscale(optimizer_or_trainer):
    """MXNet: undo the loss scale on the gradients. Raises UnsupportedError."""
    _refuse("unscale")


def convert_symbol(sym, target_dtype="float16", **kwargs):
    """MXNet: rewrite a Symbol for mixed precision. Raises UnsupportedError."""
    _refuse("convert_symbol")


def convert_model(sym, arg_params, aux_params, target_dtype="float16", **kwargs):
    """MXNet: rewrite a model (symbol and parameters). Raises UnsupportedError."""
    _refuse("convert_model")


def convert_hybrid_block(block, target_dtype="float16", **kwargs):
    """MXNet: rewrite a HybridBlock. Raises UnsupportedError."""
    _refuse("convert_hybrid_block")


def convert_bucketing_module(bucketing_mod, target_dtype="float16", **kwargs):
    """MXNet: rewrite a BucketingModule. Raises UnsupportedError."""
    _refuse("convert_bucketing_module")
