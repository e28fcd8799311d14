"""The two classes a custom operator is written with: :class:`CustomOp` and :class:`CustomOpProp`.

A custom operator, as in MXNet, is a pair: a *property* class (a subclass of
:class:`CustomOpProp`, registered under a name with
:func:`~sparsenet.operator.register`) describes the operator — its inputs,
outputs and auxiliary states, how their shapes, dtypes and storage types follow
from the inputs' — and creates the *operator* (a :class:`CustomOp`) that computes
``forward`` and ``backward`` on NDArrays. ``mx.nd.Custom(..., op_type=name)`` and
``mx.sym.Custom(..., op_type=name)`` apply it.

The defaults are MXNet 1.9.1's: one input ``data``, one output ``output``, no
auxiliary state; every output has the first input's shape and dtype; every
storage type is ``'default'`` (the default :meth:`CustomOpProp.infer_storage_type`
refuses sparse inputs: a property that takes them declares its storage types).

>>> import sparsenet as mx
>>> class Twice(CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * 2)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * 2)
>>> @mx.operator.register('doc_twice')
... class TwiceProp(CustomOpProp):
...     def create_operator(self, ctx, in_shapes, in_dtypes):
...         return Twice()
>>> mx.nd.Custom(mx.nd.array([1.0, 2.0]), op_type='doc_twice').asnumpy()
array([2., 4.], dtype=float32)
"""
from ..base import InvalidArgumentError, StorageTypeError
from ..ndarray.stype import DEFAULT

__all__ = ["CustomOp", "CustomOpProp", "REQS"]

#: The values a ``req`` entry takes: how an output (forward) or an input gradient
#: (backward) is to be written.
REQS = ("null", "write", "inplace", "add")


class CustomOp:
    """Base class of a custom operator's computation (MXNet ``mx.operator.CustomOp``).

    Override :meth:`forward` and :meth:`backward`; write results with
    :meth:`assign`, which honours ``req``. The arrays are NDArrays of the storage
    types the property declares (a ``CSRNDArray`` input stays CSR).

    Examples
    --------
    >>> import sparsenet as mx
    >>> op = CustomOp()
    >>> out = mx.nd.ones((2,))
    >>> op.assign(out, 'add', mx.nd.array([1.0, 2.0]))
    >>> out.asnumpy()
    array([2., 3.], dtype=float32)
    """

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute the outputs (the base class computes nothing, as MXNet's).

        Parameters
        ----------
        is_train : bool
            True inside ``autograd.record()`` in training mode, and in an
            executor's ``forward(is_train=True)``.
        req : list of str
            How to write each output: 'null', 'write', 'inplace' or 'add'.
        in_data : list of NDArray
            The inputs (read them, do not write them).
        out_data : list of NDArray
            The outputs, allocated with the inferred shapes, dtypes and storage types.
        aux : list of NDArray
            The auxiliary states, updated in place.
        """

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute the gradients of the inputs (the base class computes nothing, as MXNet's).

        Parameters
        ----------
        req : list of str
            How to write each input gradient: 'null' (the input takes no
            gradient), 'write', 'inplace' or 'add'.
        out_grad : list of NDArray
            Gradients with respect to the outputs.
        in_data, out_data, aux : list of NDArray
            The arrays of the forward pass.
        in_grad : list of NDArray
            Zero buffers for the input gradients, of the storage types
            :meth:`CustomOpProp.infer_storage_type_backward` declares.
        """

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says: 'null' skips, 'write' and 'inplace'
        copy, 'add' accumulates.

        Raises
        ------
        InvalidArgumentError
            For any other ``req`` (MXNet silently writes nothing).
        """
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise InvalidArgumentError(f"CustomOp.assign: req must be one of {REQS}, got "
                                       f"{req!r}")


class CustomOpProp:
    """Base class of a custom operator's property (MXNet ``mx.operator.CustomOpProp``).

    Subclass it, override what differs from the defaults, and register the
    subclass with :func:`~sparsenet.operator.register`. Its constructor receives
    the keyword arguments of ``Custom(...)`` (other than ``op_type``) as
    **strings**, as MXNet passes them: ``Custom(x, op_type='t', scale=2)`` calls
    ``Prop(scale='2')``.

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` reads the output gradients. A loss-like operator
        (whose backward computes the gradient from its inputs and outputs alone)
        passes False; the default :meth:`declare_backward_dependency` says so.

    Examples
    --------
    >>> p = CustomOpProp()
    >>> p.list_arguments(), p.list_outputs(), p.list_auxiliary_states()
    (['data'], ['output'], [])
    >>> p.infer_shape([[2, 3]])
    ([[2, 3]], ([2, 3],), ())
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """Shapes of the inputs, outputs and auxiliary states from the inputs' shapes.

        Parameters
        ----------
        in_shape : list of list of int
            One shape per argument (``list_arguments`` order); ``[]`` where unknown.

        Returns
        -------
        (in_shape, out_shape[, aux_shape])
            The default: the inputs unchanged, every output the first input's shape.
        """
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """Dtypes of the inputs, outputs and auxiliary states (numpy types; None where unknown).

        Returns
        -------
        (in_type, out_type[, aux_type])
            The default: every output and state takes the first input's dtype.

        >>> import numpy as np
        >>> CustomOpProp().infer_type([np.float64])
        ([<class 'numpy.float64'>], [<class 'numpy.float64'>], [])
        """
        return in_type, [in_type[0]] * len(self.list_outputs()), \
            [in_type[0]] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stype):
        """Storage types of the inputs, outputs and auxiliary states.

        Returns
        -------
        (in_stype, out_stype[, aux_stype])
            The default: everything 'default'; a sparse input raises, as in MXNet
            (a property that takes sparse inputs implements this method and
            :meth:`infer_storage_type_backward`).

        >>> CustomOpProp().infer_storage_type(['default'])
        (['default'], ['default'], [])
        """
        for i, stype in enumerate(in_stype):
            if stype != DEFAULT:
                raise StorageTypeError(
                    f"the default infer_storage_type takes 'default' inputs only, got "
                    f"{stype!r} for in_stype[{i}]; implement infer_storage_type and "
                    f"infer_storage_type_backward in the property to take sparse inputs")
        return in_stype, [DEFAULT] * len(self.list_outputs()), \
            [DEFAULT] * len(self.list_auxiliary_states())

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Storage types of the backward pass: output gradients, inputs, outputs, input
        gradients, auxiliary states (five lists, each as long as the one given).

        An input gradient is ``'undefined'`` when the input takes no gradient. The
        default makes everything 'default' and refuses sparse output gradients and
        sparse input gradients, as in MXNet.

        >>> CustomOpProp().infer_storage_type_backward(['default'], ['default'], ['default'],
        ...                                            ['undefined'], [])
        (['default'], ['default'], ['default'], ['default'], [])
        """
        for what, stypes in (("ograd_stype", ograd_stype), ("igrad_stype", igrad_stype)):
            for i, stype in enumerate(stypes):
                if stype not in (DEFAULT, "undefined"):
                    raise StorageTypeError(
                        f"the default infer_storage_type_backward takes 'default' gradients "
                        f"only, got {stype!r} for {what}[{i}]; implement "
                        f"infer_storage_type_backward in the property")
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        return tuple([DEFAULT] * len(stypes) for stypes in lists)

    def list_outputs(self):
        """Names of the outputs (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Names of the arguments, the inputs that take gradients (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """Names of the auxiliary states, inputs the operator updates itself (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The ids of the arrays ``backward`` reads (MXNet uses them to free the others).

        sparsenet keeps every array of the forward pass for ``backward``, so this
        method is not needed; it is kept, with MXNet's default, for code that
        calls or overrides it.

        >>> CustomOpProp(need_top_grad=False).declare_backward_dependency([0], [1], [2])
        [1, 2]
        """
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """Return the :class:`CustomOp` that computes this operator.

        Parameters
        ----------
        ctx : Context
            Where the inputs live.
        in_shapes : list of list of int
            Shapes of the arguments, then of the auxiliary states.
        in_dtypes : list of int
            Their dtypes as MXNet's type codes (0 float32, 1 float64, 2 float16,
            3 uint8, 4 int32, 5 int8, 6 int64).
        """
        return CustomOp()
