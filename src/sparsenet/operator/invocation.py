"""One run of a custom operator: plan the outputs, call the user's ``forward``, record it for
``torch.autograd``, and call the user's ``backward`` when the gradient comes.

A run, eager (``mx.nd.Custom``) or in an executor, does what MXNet's engine does
around the Python callbacks:

1. the property infers the output shapes, dtypes and storage types from the
   inputs' (``infer_shape``, ``infer_type``, ``infer_storage_type``);
2. the outputs are allocated as zero arrays of those storage types (declared sizes
   beyond the device's memory are refused first, see
   :mod:`~sparsenet.operator.allocation`), and the operator's ``forward(is_train, req,
   in_data, out_data, aux)`` writes them, with recording off and training on when
   ``is_train`` (as MXNet runs it); afterwards ``out_data`` must still hold those
   arrays, with the inferred shapes and dtypes (an entry rebound instead of written
   into is refused; ``backward``'s ``in_grad`` likewise);
3. inside ``autograd.record()``, when an input is in the graph, the run is one
   node of torch's graph (:class:`_Bridge`, a ``torch.autograd.Function``): the
   outputs' graph tensors are its outputs, the inputs' graph tensors (a sparse
   input's dense graph tensor) its inputs;
4. torch's backward calls the operator's ``backward(req, out_grad, in_data,
   out_data, in_grad, aux)`` with the output gradients cast to the storage types
   ``infer_storage_type_backward`` declares and zero ``in_grad`` buffers of the
   declared storage types. A row_sparse input gradient goes back to torch as a
   hybrid COO tensor (the rows it stores), as sparsenet's own sparse kernels give
   theirs, so a row_sparse gradient buffer receives only those rows.

``req`` for an input gradient is 'null' when the input takes no gradient, 'add'
when an executor argument with ``grad_req='add'`` feeds the operator directly
(MXNet's executor), else 'write'. The arrays a run keeps for backward hold no
reference to the graph (no cycle through torch's graph nodes).
"""
import torch

from ..base import InvalidArgumentTypeError, ShapeError
from ..context import current_context, place
from ..ndarray.creation import zeros
from ..ndarray.ndarray import NDArray
from ..ndarray.stype import DEFAULT, ROW_SPARSE
from ..ops.cast import cast_storage
from ..recording import STATE, pause
from .allocation import allocate, check_fits, check_written
from .props import (CustomOpTypeError, CustomOpValueError, DTYPE_CODES, checked_backward_stypes,
                    checked_infer, numpy_types, user_call)

__all__ = ["Plan", "Invocation", "create_operator", "run"]


class Plan:
    """What the property says about a run on given inputs: output shapes, dtypes and
    storage types, and the storage types the operator takes its inputs in."""

    __slots__ = ("out_shapes", "out_dtypes", "out_stypes", "in_stypes")

    def __init__(self, op_type, prop, names, args, aux):
        ishape, oshape, ashape = checked_infer(op_type, prop, "infer_shape",
                                               [list(a.shape) for a in args])
        for what, arrays, shapes in (("input", args, ishape), ("auxiliary state", aux, ashape)):
            for name, a, s in zip(names, arrays, shapes):
                if s is not None and tuple(s) != tuple(a.shape):
                    raise ShapeError(f"custom operator {op_type!r}: {what} '{name}' has shape "
                                     f"{a.shape}, infer_shape says {s}")
            names = names[len(arrays):]
        if any(s is None for s in oshape):
            raise CustomOpValueError(f"custom operator {op_type!r}: infer_shape left output "
                                     f"shapes unknown ({oshape}) for input shapes "
                                     f"{[a.shape for a in args]}")
        _, otype, _ = checked_infer(op_type, prop, "infer_type",
                                    numpy_types([a.dtype.name for a in args]))
        if any(d is None for d in otype):
            raise CustomOpValueError(f"custom operator {op_type!r}: infer_type left output "
                                     f"dtypes unknown ({otype})")
        istype, ostype, _ = checked_infer(op_type, prop, "infer_storage_type",
                                          [a.stype for a in args])
        self.out_shapes, self.out_dtypes, self.out_stypes = oshape, otype, ostype
        self.in_stypes = istype


def create_operator(op_type, prop, ctx, args, aux):
    """Ask the property for its :class:`~sparsenet.operator.CustomOp` (MXNet's arguments:
    the context, the input shapes as lists and the dtypes as MXNet's codes)."""
    arrays = list(args) + list(aux)
    op = user_call(op_type, f"{type(prop).__name__}.create_operator", prop.create_operator,
                   ctx, [list(a.shape) for a in arrays],
                   [DTYPE_CODES.get(a.dtype.name, -1) for a in arrays])
    if not (callable(getattr(op, "forward", None)) and callable(getattr(op, "backward", None))):
        raise CustomOpTypeError(f"custom operator {op_type!r}: create_operator must return a "
                                f"CustomOp, got {type(op).__name__}")
    return op


def _context(args, aux):
    for a in list(args) + list(aux):
        return a.context
    return current_context()


def _read_view(a, stype, ctx):
    """``a`` for the operator to read: cut from the graph, in the declared storage type."""
    if a.stype == DEFAULT:
        view = place(NDArray(a._t.detach()), ctx)
    else:
        view = a.detach()
    if view.stype != stype:
        with torch.no_grad():
            view = cast_storage(view, stype=stype)
    return view


def _detached(a):
    return NDArray(a._t.detach()) if a.stype == DEFAULT else a.detach()


class Invocation:
    """One run of a custom operator on ``args`` (and auxiliary states ``aux``).

    ``symbolic``: the run is a node of an executor's program (sets ``req`` 'add'
    for the arguments bound with ``grad_req='add'``).
    """

    def __init__(self, op_type, prop, op, plan, args, aux, symbolic):
        self.op_type, self.prop, self.op, self.plan = op_type, prop, op, plan
        self.ctx = _context(args, aux)
        self.aux = list(aux)
        self.is_train = STATE.recording and STATE.training
        self.shapes = [a.shape for a in args]
        self.dtypes = [a.dtype for a in args]
        self.reqs = ["add" if symbolic and a._grad is not None and a._grad_req == "add"
                     else "write" for a in args]
        self.in_data = [_read_view(a, s, self.ctx) for a, s in zip(args, plan.in_stypes)]
        self.out_data = self.handoff = None
        self.sparse_ok = None

    def forward(self):
        """Allocate the outputs (checked against memory first), run the operator's forward
        and check that it wrote into them; return the outputs."""
        plan, op_type = self.plan, self.op_type
        names = list(user_call(op_type, "list_outputs", self.prop.list_outputs))
        check_fits(op_type, "output", names, plan.out_shapes, plan.out_dtypes, plan.out_stypes,
                   self.ctx)
        self.out_data = [allocate(op_type, "output", k, names[k] if k < len(names) else None,
                                  s, d, st, self.ctx)
                         for k, (s, d, st) in enumerate(zip(plan.out_shapes, plan.out_dtypes,
                                                            plan.out_stypes))]
        given = list(self.out_data)
        where = f"{type(self.op).__name__}.forward"
        with pause(train_mode=self.is_train):
            user_call(op_type, where, self.op.forward,
                      is_train=self.is_train, req=["write"] * len(given),
                      in_data=self.in_data, out_data=given, aux=self.aux)
        check_written(op_type, where, "out_data", given, self.out_data, plan.out_shapes,
                      plan.out_dtypes, plan.out_stypes)
        return list(self.out_data)

    def forward_tensors(self):
        """Run forward inside :class:`_Bridge`; return the outputs' dense tensors (the
        arrays kept for backward are detached views, so they hold no graph node)."""
        visible = self.forward()
        self.out_data = [_detached(o) for o in visible]
        self.handoff = visible  # taken by run(), which gives them their graph tensors
        return tuple(o._t if o.stype == DEFAULT else o._dense_tensor() for o in visible)

    def backward(self, grads, needs):
        """Run the operator's backward for output gradients ``grads`` (torch tensors or
        None); return one torch gradient (or None) per input."""
        plan, n_out = self.plan, len(self.out_data)
        ograd, _, _, igrad, _ = checked_backward_stypes(
            self.op_type, self.prop, list(plan.out_stypes), list(plan.in_stypes),
            list(plan.out_stypes), [DEFAULT if n else "undefined" for n in needs],
            [a.stype for a in self.aux])
        out_grad = [self._out_grad(grads[k] if k < len(grads) else None, k, ograd[k])
                    for k in range(n_out)]
        in_grad = [allocate(self.op_type, "input gradient", k, None, s, d.name, st, self.ctx)
                   for k, (s, d, st) in enumerate(zip(self.shapes, self.dtypes, igrad))]
        given = list(in_grad)
        reqs = [r if n else "null" for r, n in zip(self.reqs, needs)]
        where = f"{type(self.op).__name__}.backward"
        with pause(train_mode=True):
            user_call(self.op_type, where, self.op.backward,
                      req=reqs, out_grad=out_grad, in_data=self.in_data,
                      out_data=self.out_data, in_grad=given, aux=self.aux)
        check_written(self.op_type, where, "in_grad", given, in_grad, self.shapes,
                      [d.name for d in self.dtypes], igrad)
        return tuple(_torch_grad(g, ok) if n else None
                     for g, n, ok in zip(in_grad, needs, self.sparse_ok))

    def _out_grad(self, g, k, stype):
        out = self.out_data[k]
        if g is None:
            arr = zeros(out.shape, ctx=self.ctx, dtype=out.dtype)
        else:
            arr = place(NDArray(g.to_dense() if g.is_sparse else g), self.ctx)
        if stype != DEFAULT:
            arr = cast_storage(arr, stype=stype)
        return arr


def _torch_grad(g, sparse_ok):
    """An input gradient as torch takes it: dense, or the rows of a row_sparse one (for a
    leaf)."""
    if g.stype == DEFAULT:
        return g._t
    if g.stype == ROW_SPARSE and sparse_ok:
        return g.to_torch()
    return g._dense_tensor()


class _Bridge(torch.autograd.Function):
    """A custom operator's run as one node of torch's graph."""

    @staticmethod
    def forward(ctx, invocation, *graph_inputs):
        ctx.invocation = invocation
        return invocation.forward_tensors()

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + ctx.invocation.backward(grads, ctx.needs_input_grad[1:])


def _graph_input(a):
    """The tensor through which the run is differentiated with respect to argument ``a``:
    a dense array's tensor; a sparse array's dense graph tensor; the stored values of a
    row_sparse array that stores every row and is differentiated through them (an
    executor's row_sparse weight); else the values made dense (a row view of a Gluon
    parameter: its gradient flows back to the stored rows)."""
    if a.stype == DEFAULT:
        return a._t
    t = a._graph_tensor()
    if t is not None:
        return t
    if a.stype == ROW_SPARSE and a._data.requires_grad and a._stores_every_row():
        return a._data
    return a._dense_tensor()


def run(invocation, args):
    """Run ``invocation`` on arguments ``args``; return its outputs (a list of NDArrays).

    Inside ``autograd.record()`` with an argument in the graph, the run is recorded
    (dense outputs are the graph tensors, sparse outputs carry theirs).
    """
    for a in args:
        if not isinstance(a, NDArray):
            raise InvalidArgumentTypeError(f"custom operator {invocation.op_type!r}: inputs must "
                                           f"be NDArrays, got {type(a).__name__}")
    graph = None
    if STATE.recording:
        graph = [_graph_input(a) for a in args]
        if not any(t.requires_grad for t in graph):
            graph = None
    if graph is None:
        with torch.no_grad():
            return invocation.forward()
    # a sparse gradient goes to leaves only (torch cannot send one back through other nodes)
    invocation.sparse_ok = [t.is_leaf for t in graph]
    tensors = _Bridge.apply(invocation, *graph)
    visible, invocation.handoff = invocation.handoff, None  # the invocation keeps no output
    outs = []
    for o, t in zip(visible, tensors):
        if o.stype == DEFAULT:
            outs.append(place(NDArray(t), invocation.ctx))
        else:
            o._set_graph(t)
            outs.append(o)
    return outs
