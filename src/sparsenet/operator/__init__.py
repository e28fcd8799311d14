"""``mx.operator``: operators written in Python (MXNet's custom operators).

Subclass :class:`CustomOp` (the computation) and :class:`CustomOpProp` (the
description: inputs, outputs, shapes, dtypes, storage types), register the
property with :func:`register`, and apply it with ``mx.nd.Custom(...,
op_type=name)`` (eager, differentiable under ``autograd.record()``) or
``mx.sym.Custom(..., op_type=name)`` (in symbols, executors and Modules).

>>> import sparsenet as mx
>>> @mx.operator.register('doc_square')
... class SquareProp(mx.operator.CustomOpProp):
...     def create_operator(self, ctx, in_shapes, in_dtypes):
...         return Square()
>>> class Square(mx.operator.CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * in_data[0])
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])
>>> y = mx.sym.Custom(mx.sym.var('x'), op_type='doc_square', name='sq')
>>> y.list_arguments(), y.list_outputs()
(['x'], ['sq_output'])
>>> y.eval(x=mx.nd.array([3.0]))[0].asnumpy()
array([9.], dtype=float32)
"""
# The nd namespace first: importing any sparsenet.ndarray module runs sparsenet.ndarray's
# __init__, which imports this package's modules; started here, before they are half
# loaded, it finds them whole (``import sparsenet`` no longer imports mx.nd first).
from ..ndarray import stype as _stype  # noqa: F401
from .custom_op import CustomOp, CustomOpProp
from .props import (register, registered, CustomOpError, CustomOpValueError, CustomOpTypeError,
                    CustomOpIndexError, CustomOpKeyError, CustomOpAssertionError,
                    CustomOpArithmeticError, CustomOpMemoryError)
from .custom import Custom

__all__ = ["CustomOp", "CustomOpProp", "register", "registered", "Custom", "CustomOpError",
           "CustomOpValueError", "CustomOpTypeError", "CustomOpIndexError", "CustomOpKeyError",
           "CustomOpAssertionError", "CustomOpArithmeticError", "CustomOpMemoryError"]
