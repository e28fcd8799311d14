"""Gluon parameters: :class:`Parameter`, :class:`Constant` and :class:`ParameterDict`.

A :class:`Parameter` holds one copy of its value per context, and a gradient
buffer per copy in its ``grad_stype`` ('default', 'row_sparse' or 'csr'). The
copies are autograd variables: ``loss.backward()`` writes their buffers. A
``stype='row_sparse'`` parameter (e.g. ``contrib.nn.SparseEmbedding``'s weight)
is read through :meth:`Parameter.row_sparse_data`, which returns just the rows
a batch needs; their gradient lands in the parameter's row_sparse buffer.

>>> import sparsenet as mx
>>> p = mx.gluon.Parameter('fc_weight', shape=(2, 3), init=mx.init.One())
>>> p.initialize()
>>> p.data().asnumpy()
array([[1., 1., 1.],
       [1., 1., 1.]], dtype=float32)
>>> p.grad().stype
'default'
"""
from .parameter import Constant, DeferredInitializationError, Parameter, tensor_types
from .parameter_dict import ParameterDict, select_params

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types", "select_params"]
