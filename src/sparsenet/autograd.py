"""Imperative autograd over ``torch.autograd``: ``record``, ``pause``, ``backward``, ``grad``.

Operators are recorded only inside :func:`record`; outside it they run under
``torch.no_grad()``. Variables are arrays on which :meth:`NDArray.attach_grad`
was called (Gluon parameters are variables); :func:`backward` computes their
gradients and stores them by each variable's ``grad_req``: ``'write'``
overwrites, ``'add'`` accumulates (also for row_sparse gradients, which MXNet
refuses), ``'null'`` skips. How a gradient lands in a buffer of each storage
type is the table of :mod:`sparsenet.grad_store`.

The gradient with respect to a sparse variable is the full mathematical
gradient, as in MXNet: a recorded operator reads a sparse variable through a
dense graph tensor, so positions the array does not store get their gradient
too (stored in the buffer's storage type). The row views of a Gluon
row_sparse parameter (``row_sparse_data``) are the exception: they are
variables over the rows they hold, the rows the batch needs.

Sparse kernels (``dot(csr, W)``, ``FullyConnected(csr, W)``, ``Embedding``,
``take``) hand the gradient of a dense weight ``W`` to torch as a sparse COO
tensor; it is stored without ever building a dense intermediate.

>>> import sparsenet as mx
>>> x = mx.nd.array([1.0, 2.0, 3.0])
>>> x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad.asnumpy()
array([2., 4., 6.], dtype=float32)
"""
import weakref

import torch

from . import grad_store, recording
from .base import InvalidArgumentError, SparsenetError, UnsupportedError
from .grad_store import zero_grad
from .ndarray import ndarray as _ndarray_module
from .ndarray.ndarray import NDArray
from .ndarray.nonzero import nonzero_entries
from .ndarray.row_sparse import RowSparseNDArray
from .recording import (is_recording, is_training, pause, predict_mode, record, set_recording,
                        set_training, train_mode)
from .torch_compat import modified_error, run_backward, set_grad_enabled

# MXNet's module has no __all__, so `from mxnet.autograd import *` also gives the NDArray
# class it imports (MXNet's own tests rely on it)
__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "backward", "grad", "mark_variables", "Function",
           "zero_grad", "nonzero_entries", "get_symbol", "NDArray"]

_CONSUMED = "_sparsenet_backward_done"   # head-tensor flag: backward ran, graph freed


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables and give them gradient buffers (MXNet's low-level API).

    Parameters
    ----------
    variables : NDArray or list of NDArray
    gradients : NDArray or list of NDArray
        Buffers that receive the gradients; their storage type is kept.
    grad_reqs : str or list of str
        ``'write'``, ``'add'`` or ``'null'``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.ones((2,)); g = mx.nd.zeros((2,))
    >>> mark_variables([x], [g])
    >>> with record():
    ...     y = x * 3
    >>> y.backward()
    >>> g.asnumpy()
    array([3., 3.], dtype=float32)
    """
    if not isinstance(variables, (list, tuple)):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise InvalidArgumentError(
            f"mark_variables: got {len(variables)} variables, {len(gradients)} "
            f"gradients and {len(grad_reqs)} grad_reqs; the lengths must match")
    for var, g, req in zip(variables, gradients, grad_reqs):
        var._attach_grad_buffer(g, req)


def attach_row_view(view, buf, grad_req):
    """Make row_sparse ``view`` (rows of a parameter) a variable writing ``buf``.

    The gradient with respect to the view's stored rows is stored in ``buf``
    (the parameter's gradient buffer) as a row_sparse array with those rows.
    """
    view._grad, view._grad_req = buf, grad_req
    view._make_values_leaf()
    sink = RowSparseNDArray._from_parts(None, view._indices, view.shape)
    sink._grad, sink._grad_req = buf, grad_req
    recording.register_leaf(view._data, weakref.ref(view), sink, full=False)


# ---------------------------------------------------------------------- backward
def _head_tensors(heads, head_grads):
    """``(head tensors, head gradient tensors)`` of a backward pass (:func:`backward` takes
    ``loss.backward()``'s single head with the default gradient without calling here)."""
    if isinstance(heads, NDArray):
        heads = [heads]
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise InvalidArgumentError(
            f"backward: {len(heads)} heads but {len(head_grads)} head gradients")
    outs, grads = [], []
    for h, hg in zip(heads, head_grads):
        t = h._autograd_tensor()
        if t is None or not t.requires_grad:
            raise SparsenetError(
                "cannot differentiate: the head array was not computed inside "
                "autograd.record() from a variable with attach_grad()")
        outs.append(t)
        grads.append(torch.ones_like(t) if hg is None else head_grad_tensor(h, hg))
    return outs, grads


def head_grad_tensor(head, head_grad):
    """``head_grad`` as the gradient of ``head``'s autograd tensor.

    A head whose autograd tensor has its whole shape (dense, or sparse with a
    dense graph tensor) takes the head gradient densely; a row view's values
    take it at the stored positions.
    """
    t = head._autograd_tensor()
    g = head_grad._dense_tensor().to(device=t.device, dtype=t.dtype)
    if head.stype == "default" or head._grad_is_full():
        return g.expand_as(t)
    if tuple(g.shape) != tuple(head.shape):
        g = g.expand(head.shape)
    if head.stype == "csr":
        return g[head.row_ids(), head._indices]
    return g.index_select(0, head._indices)


def _check_not_consumed(outs):
    for t in outs:
        if getattr(t, _CONSUMED, False):
            raise SparsenetError(
                "backward: the graph of this head was already freed by an earlier backward() "
                "(record the computation again, or pass retain_graph=True to the first "
                "backward to run it more than once)")


def _run_torch_backward(outs, grads, retain_graph, checked):
    try:
        if checked:  # head gradients made here match their heads: skip torch's checks
            run_backward(outs, grads, retain_graph)
        else:
            torch.autograd.backward(outs, grads, retain_graph=retain_graph)
    except RuntimeError as e:
        if "second time" in str(e) or "already been freed" in str(e):
            raise SparsenetError(
                f"backward: the graph was already freed by an earlier backward() (pass "
                f"retain_graph=True to keep it); torch said: {e}") from None
        mapped = modified_error(e)  # run_backward maps it; torch.autograd.backward does not
        if mapped is not None:
            raise mapped from e
        raise


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: A002
    """Compute the gradients of ``heads`` with respect to every marked variable.

    Every variable the heads depend on gets its gradient buffer written
    (``grad_req='write'``) or added to (``'add'``); other variables keep theirs.

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Outputs recorded inside :func:`record`.
    head_grads : NDArray or list of NDArray, optional
        Gradients of some loss with respect to ``heads`` (ones by default).
    retain_graph : bool
        Keep the graph for another backward pass.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.nd.array([[1.0, 2.0]]); w.attach_grad()
    >>> with record():
    ...     out = mx.nd.dot(w, mx.nd.array([[3.0], [4.0]]))
    >>> backward(out)
    >>> w.grad.asnumpy()
    array([[3., 4.]], dtype=float32)
    """
    t = None
    if head_grads is None and heads.__class__ is list and len(heads) == 1:  # loss.backward()
        t = heads[0]._autograd_tensor()
    if t is not None and t.requires_grad:
        outs, grads = [t], [torch.ones_like(t)]
    else:
        outs, grads = _head_tensors(heads, head_grads)
    for t in outs:  # _check_not_consumed, inline: the per-step path
        if getattr(t, _CONSUMED, False):
            _check_not_consumed(outs)  # raises
    in_flight = recording.IN_FLIGHT
    lock = in_flight.lock
    with lock:
        in_flight.count += 1
    try:
        # torch accumulates into the leaves' .grad, taking over tensors nobody else holds
        _run_torch_backward(outs, grads, retain_graph, head_grads is None)
    except BaseException:
        with lock:  # what torch accumulated before the error is dropped, not kept for the
            in_flight.count -= 1  # next backward to add to
            _drop_pending(_graph_entries(outs))
        raise
    with lock:
        try:
            if not retain_graph:
                for t in outs:  # flag the heads (a new recording makes new head tensors)
                    if t.grad_fn is not None:
                        setattr(t, _CONSUMED, True)
            # alone: every pending leaf gradient is this pass's (no other pass is running
            # its graph), and the registry is the short way to them; else only this graph's
            _store_pending(recording.variables() if in_flight.count == 1
                           else _graph_entries(outs),
                           grad_store.caller_storages(grads) if head_grads is not None
                           else ())
        finally:
            in_flight.count -= 1


def _store_pending(entries, callers=()):
    """Move the pending torch gradient of each of ``entries`` into its variable's buffer.

    A gradient is stored before the leaf lets it go; if a store fails, the pending
    gradients of every entry are dropped (none is left for the next backward to add to).
    A gradient that is a view of a head gradient the caller passed (``callers``, storage
    addresses) is read, never written into or kept.
    """
    written = set()
    grad_mode = torch.is_grad_enabled()
    set_grad_enabled(False)
    try:
        for entry in entries:
            t = entry.tensor()
            if t is None:
                continue
            g = t.grad
            if g is None:
                continue
            v = entry.sink if entry.sink is not None else entry.ref()
            if v is None or v._grad is None or v._grad_req == "null":
                t.grad = None
                continue
            key = id(v._grad)
            # views sharing one buffer add up
            grad_store.store_nograd(v, g, key in written,
                                    not callers or grad_store.kernel_owned(g, callers),
                                    entry.full)
            t.grad = None
            written.add(key)
    except BaseException:
        _drop_pending(entries)
        raise
    finally:
        set_grad_enabled(grad_mode)


def _drop_pending(entries):
    """Clear the pending torch gradient of each of ``entries``."""
    for entry in entries:
        t = entry.tensor()
        if t is not None:
            t.grad = None


def _graph_entries(outs):
    """The registry entries of the variable leaves that the graph of ``outs`` reaches.

    A walk over torch's graph, from the heads to its ``AccumulateGrad`` nodes (each
    node once); used when another backward pass runs at the same time (see
    :data:`sparsenet.recording.IN_FLIGHT`) and after a failed pass.
    """
    entries, seen, stack = [], set(), []
    for t in outs:
        fn = t.grad_fn
        if fn is not None:
            stack.append(fn)
            continue
        entry = recording.entry_of(t)  # a head that is itself a variable
        if entry is not None and id(t) not in seen:
            seen.add(id(t))
            entries.append(entry)
    while stack:
        for node, _ in stack.pop().next_functions:
            if node is None or node in seen:
                continue
            seen.add(node)
            leaf = getattr(node, "variable", None)  # an AccumulateGrad node
            if leaf is None:
                stack.append(node)
                continue
            entry = recording.entry_of(leaf)
            if entry is not None:
                entries.append(entry)
    return entries


_ndarray_module._AUTOGRAD["backward"] = backward  # what NDArray.backward calls


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):  # noqa: A002
    """Return the gradients of ``heads`` with respect to ``variables`` (nothing is stored).

    Parameters
    ----------
    heads : NDArray or list of NDArray
    variables : NDArray or list of NDArray
    head_grads : NDArray or list of NDArray, optional
    retain_graph : bool, optional
        Defaults to ``create_graph``.
    create_graph : bool
        Record the gradient computation for higher-order gradients.

    Returns
    -------
    list of NDArray
        One gradient per variable, in each variable's gradient storage type.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.array([2.0]); x.attach_grad()
    >>> with record():
    ...     y = x * x * x
    >>> grad(y, [x])[0].asnumpy()
    array([12.], dtype=float32)
    """
    if isinstance(variables, NDArray):
        variables = [variables]
    outs, grads = _head_tensors(heads, head_grads)
    inputs, groups = [], []
    for v in variables:
        if v._grad_req == "null" or (v._grad is None and not v._grad_is_full()):
            raise SparsenetError("grad: every variable needs attach_grad() before record()")
        t = v._autograd_tensor()
        if t is None or not t.requires_grad:
            if v.stype == "default" or not v._grad_is_full():
                raise SparsenetError("grad: every variable needs attach_grad() before record()")
            ts = []  # a sparse variable no recorded operator read: its gradient is zero
        else:
            ts = [t] + (recording.aliases(v) if v.stype == "default" else [])
        groups.append((len(inputs), len(ts)))
        inputs.extend(ts)
    if retain_graph is None:
        retain_graph = create_graph
    try:
        results = torch.autograd.grad(outs, inputs, grads, allow_unused=True,
                                      retain_graph=retain_graph, create_graph=create_graph)
    except RuntimeError as e:
        mapped = modified_error(e)
        if mapped is None:
            raise
        raise mapped from e
    out = []
    for v, (start, n) in zip(variables, groups):
        parts = [g for g in results[start:start + n] if g is not None]
        stype = v._grad.stype if v._grad is not None else v.stype
        if create_graph and stype == "default" and parts and not any(p.is_sparse for p in parts):
            total = parts[0]
            for g in parts[1:]:
                total = total + g
            out.append(NDArray(total))  # keeps the graph, for higher-order gradients
        else:
            out.append(grad_store.grad_array(v, parts, full=v._grad_is_full(), stype=stype))
    return out


def get_symbol(x):
    """The recorded computation of ``x`` as a Symbol (MXNet's ``autograd.get_symbol``).

    >>> import sparsenet as mx
    >>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
    >>> with record():
    ...     y = mx.nd.sum(mx.nd.relu(x))
    >>> s = get_symbol(y)
    >>> s.list_arguments()
    ['var0']
    >>> s.eval(var0=x)[0].asnumpy()
    array([3.], dtype=float32)
    """
    from .symbol.recorded import symbol_of_recorded  # the symbol layer sits above autograd
    return symbol_of_recorded(x)


class Function:
    """User-defined differentiable function (MXNet ``autograd.Function``).

    Subclass it and define ``forward(self, *inputs)`` and ``backward(self,
    *output_grads)`` on NDArrays; call ``self.save_for_backward(...)`` in
    ``forward`` and read ``self.saved_tensors`` in ``backward``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> class Square(Function):
    ...     def forward(self, x):
    ...         self.save_for_backward(x)
    ...         return x * x
    ...     def backward(self, dy):
    ...         x, = self.saved_tensors
    ...         return 2 * x * dy
    >>> x = mx.nd.array([3.0]); x.attach_grad()
    >>> with record():
    ...     y = Square()(x)
    >>> y.backward()
    >>> x.grad.asnumpy()
    array([6.], dtype=float32)
    """

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def forward(self, *inputs):
        raise UnsupportedError("subclasses of autograd.Function define forward()")

    def backward(self, *output_grads):
        raise UnsupportedError("subclasses of autograd.Function define backward()")

    def __call__(self, *inputs):
        fn = self

        class _Bridge(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *tensors):
                with pause():
                    outs = fn.forward(*[NDArray(t.detach()) for t in tensors])
                single = isinstance(outs, NDArray)
                ctx.single = single
                outs = [outs] if single else list(outs)
                return tuple(o._t for o in outs)

            @staticmethod
            def backward(ctx, *grads):
                with pause():
                    res = fn.backward(*[NDArray(g) for g in grads])
                res = [res] if isinstance(res, NDArray) else list(res)
                return tuple(r._t for r in res)

        outs = _Bridge.apply(*[x._t for x in inputs])
        outs = [NDArray(o) for o in outs]
        return outs[0] if len(outs) == 1 else outs
