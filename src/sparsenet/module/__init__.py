"""``mx.mod`` / ``mx.module``: the Module API (bind, init_params, fit, score, predict, checkpoints).

>>> import sparsenet as mx
>>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
>>> mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name='softmax'))
>>> mod.bind(data_shapes=[('data', (4, 3))], label_shapes=[('softmax_label', (4,))])
>>> mod.output_shapes
[('softmax_output', (4, 2))]
"""
from .base_module import BaseModule
from .module import Module

__all__ = ["BaseModule", "Module"]
