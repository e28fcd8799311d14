"""The ``Custom`` operator of the registry: ``mx.nd.Custom`` and the ``Custom`` symbol node.

``Custom`` is one registry operator whose inputs, outputs and inference come from
the property registered as its ``op_type`` parameter (see
:mod:`sparsenet.operator.props`). It takes any keyword parameter; each is kept as
a string, the form the property receives and MXNet's JSON holds. Beside the
registry's calling convention it declares what the symbol layer reads from an
operator whose signature depends on its parameters (:mod:`sparsenet.symbol.op_traits`):

* ``input_names_for(params)``: the property's arguments, then its auxiliary states;
  ``aux_inputs_for(params)``: the auxiliary states;
* ``input_shapes``: completes unknown input shapes with the property's ``infer_shape``;
* ``output_shapes_for``, ``dtype_rule`` and ``output_stypes_for``: the property's
  ``infer_shape``, ``infer_type`` and ``infer_storage_type`` (the dense definition
  never runs on placeholder inputs: it is the user's code);
* ``backward_stypes_for``: the input-gradient storage types from
  ``infer_storage_type_backward`` (the gradient buffers ``simple_bind`` allocates);
* ``create_state(params)``: a node of an executor's program keeps one operator
  (``create_operator`` is called once per executor, as MXNet does at bind, and again
  only when the input shapes change); an eager call creates one per call.

>>> import sparsenet as mx
>>> class Scale(mx.operator.CustomOp):
...     def __init__(self, factor):
...         self.factor = factor
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * self.factor)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * self.factor)
>>> @mx.operator.register('doc_scale')
... class ScaleProp(mx.operator.CustomOpProp):
...     def __init__(self, factor):
...         super().__init__(need_top_grad=True)
...         self.factor = float(factor)          # keywords arrive as strings
...     def create_operator(self, ctx, in_shapes, in_dtypes):
...         return Scale(self.factor)
>>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.Custom(x, op_type='doc_scale', factor=3)
>>> y.backward()
>>> y.asnumpy(), x.grad.asnumpy()
(array([3., 6.], dtype=float32), array([3., 3.], dtype=float32))
"""
from ..base import InvalidArgumentTypeError, OperatorArgumentError
from ..ndarray.ndarray import NDArray, copy_into
from ..ndarray.stype import DEFAULT
from ..ops.registry import Operator
from .invocation import Invocation, Plan, create_operator, run
from .props import CustomOpError, checked_backward_stypes, checked_infer, numpy_types, prop_for

__all__ = ["Custom", "CustomOperator"]


def _custom(*data, op_type=None, **kwargs):
    """Apply the custom operator registered as ``op_type`` (MXNet ``Custom``).

    The inputs are the property's arguments, then its auxiliary states, in the
    order of ``list_arguments()`` and ``list_auxiliary_states()``. The other
    keywords go to the property's constructor as strings. One output returns an
    NDArray, several a list. Inside ``autograd.record()`` the call is
    differentiable through the operator's ``backward``.

    Parameters
    ----------
    *data : NDArray
        Arguments, then auxiliary states (updated in place by the operator).
    op_type : str
        Name given to :func:`sparsenet.operator.register`.
    **kwargs
        Keywords of the property (passed as ``str(value)``).

    Examples
    --------
    >>> import sparsenet as mx
    >>> @mx.operator.register('doc_negate')
    ... class NegateProp(mx.operator.CustomOpProp):
    ...     def create_operator(self, ctx, in_shapes, in_dtypes):
    ...         class Negate(mx.operator.CustomOp):
    ...             def forward(self, is_train, req, in_data, out_data, aux):
    ...                 self.assign(out_data[0], req[0], -in_data[0])
    ...         return Negate()
    >>> mx.nd.Custom(mx.nd.array([1.0, -2.0]), op_type='doc_negate').asnumpy()
    array([-1.,  2.], dtype=float32)
    """
    outs = CUSTOM(*[NDArray(t) for t in data], op_type=op_type, **kwargs)
    outs = outs if isinstance(outs, list) else [outs]
    return tuple(o._dense_tensor() for o in outs) if len(outs) > 1 else outs[0]._dense_tensor()


def _names(params):
    """``(op_type, property, argument names, auxiliary state names)`` of bound ``params``."""
    prop = prop_for(params)
    return params["op_type"], prop, list(prop.list_arguments()), \
        list(prop.list_auxiliary_states())


def _num_outputs(params):
    return len(prop_for(params).list_outputs())


def _output_names(params, n):
    return list(prop_for(params).list_outputs())[:n]


class CustomOperator(Operator):
    # The registry's ``Custom`` operator (see the module docstring); one instance, CUSTOM,
    # registered as 'Custom'. No class docstring: an Operator's ``__doc__`` is a property,
    # its definition's documentation (what ``help(mx.nd.Custom)`` shows), kept here.
    __doc__ = Operator.__dict__["__doc__"]

    #: takes any keyword parameter (the property's), kept as a string
    open_params = True

    def __init__(self):
        super().__init__(_custom, name="Custom", num_outputs=_num_outputs,
                         output_names=_output_names)
        self.variadic = False   # the inputs are named, by the property
        self.input_names = ()
        self._dense_only = False
        self.input_shapes = self._complete_input_shapes
        self.dtype_rule = self._dtype_rule

    # ------------------------------------------------------------------ parameters
    def bind_params(self, kwargs):
        """The parameters as strings; ``op_type`` must name a registered operator.

        >>> import sparsenet as mx
        >>> @mx.operator.register('doc_bind')
        ... class BindProp(mx.operator.CustomOpProp):
        ...     def __init__(self, factor):
        ...         super().__init__()
        >>> CUSTOM.bind_params({'op_type': 'doc_bind', 'factor': 2})
        {'op_type': 'doc_bind', 'factor': '2'}
        """
        params = {k: v if isinstance(v, str) else str(v) for k, v in kwargs.items()
                  if k not in ("name", "attr") and not (k == "op_type" and v is None)}
        prop_for(params)  # the operator exists and its property builds
        return params

    # ------------------------------------------------------------------ symbol traits
    def input_names_for(self, params):
        """The property's arguments, then its auxiliary states."""
        _, _, args, aux = _names(self.bind_params(params))
        return tuple(args + aux)

    def aux_inputs_for(self, params):
        """The property's auxiliary states."""
        return tuple(_names(self.bind_params(params))[3])

    def _complete_input_shapes(self, shapes, params):
        """Unknown input shapes the property's ``infer_shape`` decides. With an argument's
        shape unknown, a property that cannot work without it (it raises) decides none
        yet: sparsenet also runs this pass for dtypes alone, where MXNet does not ask."""
        op_type, prop, args, _ = _names(params)
        n = len(args)
        given = [list(s) if s else [] for s in shapes[:n]]
        try:
            ins, _, aux = checked_infer(op_type, prop, "infer_shape", given)
        except CustomOpError:
            if all(given):
                raise
            return list(shapes)
        return ([old or new for old, new in zip(shapes[:n], ins)]
                + [old or new for old, new in zip(shapes[n:], aux)])

    def output_shapes_for(self, params, in_shapes):
        """Output shapes from the arguments' shapes (None where the property leaves one
        unknown)."""
        op_type, prop, args, _ = _names(params)
        return checked_infer(op_type, prop, "infer_shape",
                             [list(s) if s else [] for s in in_shapes[:len(args)]])[1]

    def _dtype_rule(self, in_dtypes, params):
        """``(input dtypes, output dtypes)`` from the property's ``infer_type`` given the
        arguments' dtypes (names, None where unknown); unknown ones it decides are filled."""
        op_type, prop, args, _ = _names(params)
        n = len(args)
        ins, outs, aux = checked_infer(op_type, prop, "infer_type", numpy_types(in_dtypes[:n]))
        return ([old or new for old, new in zip(in_dtypes[:n], ins)]
                + [old or new for old, new in zip(in_dtypes[n:], aux)]), outs

    def output_stypes_for(self, params, in_stypes):
        """Output storage types from the arguments'."""
        op_type, prop, args, _ = _names(params)
        return checked_infer(op_type, prop, "infer_storage_type",
                             list(in_stypes[:len(args)]))[1]

    def backward_stypes_for(self, params, in_stypes, ograd):
        """Storage types of the gradients of every input (auxiliary states: 'default')
        when the output gradients have storage type ``ograd``."""
        op_type, prop, args, aux = _names(params)
        n = len(args)
        outs = self.output_stypes_for(params, in_stypes)
        igrad = checked_backward_stypes(op_type, prop, [ograd] * len(outs), list(in_stypes[:n]),
                                        list(outs), ["undefined"] * n, list(in_stypes[n:]))[3]
        return list(igrad) + [DEFAULT] * len(aux)

    def infer_storage(self, stypes, params=None):
        """``(storage type of the first output, True)``: the property decides, no fallback."""
        params = self.bind_params(params or {})
        return self.output_stypes_for(params, stypes)[0], True

    def create_state(self, params):
        """The operator state of one program node (see :class:`NodeState`)."""
        return NodeState(self.bind_params(params))

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, out=None, **kwargs):
        arrays = [a for a in args]
        given = [k for k, v in kwargs.items() if isinstance(v, NDArray)]
        if given:
            raise OperatorArgumentError(f"Custom: pass the input arrays positionally (in "
                                        f"list_arguments() then list_auxiliary_states() "
                                        f"order), got array keyword(s) {given}")
        params = self.bind_params(kwargs)
        outs = self._dispatch(arrays, params)
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            for o, t in zip(outs if isinstance(outs, list) else [outs], targets):
                copy_into(o, t)
            return out
        return outs

    def _dispatch(self, inputs, params):
        op_type, prop, args, aux = _names(params)
        arrays, states = _split_inputs(op_type, inputs, args, aux)
        plan = Plan(op_type, prop, args + aux, arrays, states)
        invocation = Invocation(op_type, prop, None, plan, arrays, states, symbolic=False)
        invocation.op = create_operator(op_type, prop, invocation.ctx, arrays, states)
        outs = run(invocation, arrays)
        return outs[0] if len(outs) == 1 else outs


def _split_inputs(op_type, inputs, args, aux):
    if len(inputs) != len(args) + len(aux):
        raise OperatorArgumentError(
            f"Custom: operator {op_type!r} takes {len(args) + len(aux)} inputs (arguments "
            f"{args}" + (f", auxiliary states {aux}" if aux else "") + f"), got {len(inputs)}")
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArray):
            raise InvalidArgumentTypeError(f"Custom: input {i} of operator {op_type!r} must be "
                                           f"an NDArray, got {type(a).__name__}")
    return list(inputs[:len(args)]), list(inputs[len(args):])


class NodeState:
    """The operator of one ``Custom`` node of a program: created on the first run, kept
    while the input shapes and dtypes stay (MXNet creates it at bind)."""

    __slots__ = ("params", "key", "op")

    def __init__(self, params):
        self.params = params
        self.key = self.op = None

    def __call__(self, inputs):
        op_type, prop, args, aux = _names(self.params)
        arrays, states = _split_inputs(op_type, inputs, args, aux)
        plan = Plan(op_type, prop, args + aux, arrays, states)
        invocation = Invocation(op_type, prop, None, plan, arrays, states, symbolic=True)
        key = tuple((a.shape, a.dtype, a.stype) for a in inputs)
        if self.op is None or key != self.key:
            self.op = create_operator(op_type, prop, invocation.ctx, arrays, states)
            self.key = key
        invocation.op = self.op
        outs = run(invocation, arrays)
        return outs[0] if len(outs) == 1 else outs


#: The registry's ``Custom`` operator (``mx.nd.Custom``).
CUSTOM = CustomOperator()
Custom = CUSTOM
