"""Imperative autograd over ``torch.autograd``: ``record``, ``pause``, ``backward``, ``grad``.

Operators are recorded only inside :func:`record`; outside it they run under
``torch.no_grad()``. Variables are arrays on which :meth:`NDArray.attach_grad`
was called; :func:`backward` computes their gradients with
``torch.autograd.grad`` and stores them by each variable's ``grad_req``:
``'write'`` overwrites, ``'add'`` accumulates (also for row_sparse gradients,
which MXNet refuses), ``'null'`` skips.

>>> import sparsenet as mx
>>> x = mx.nd.array([1.0, 2.0, 3.0])
>>> x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad.asnumpy()
array([2., 4., 6.], dtype=float32)
"""
import contextlib
import threading
import weakref

import torch

from .base import SparsenetError

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "backward", "grad", "mark_variables", "Function"]


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False


STATE = _State()
_variables = weakref.WeakSet()


def is_recording():
    """Return True inside :func:`record` (and not inside :func:`pause`).

    >>> is_recording()
    False
    """
    return STATE.recording


def is_training():
    """Return True in training mode (inside ``record()`` by default, or ``train_mode()``).

    >>> is_training()
    False
    """
    return STATE.training


def set_recording(is_record):
    """Set the recording state; return the previous one."""
    old, STATE.recording = STATE.recording, bool(is_record)
    return old


def set_training(train_mode_):
    """Set the training state; return the previous one."""
    old, STATE.training = STATE.training, bool(train_mode_)
    return old


@contextlib.contextmanager
def _scope(recording, training):
    old_rec, old_train = STATE.recording, STATE.training
    if recording is not None:
        STATE.recording = recording
    if training is not None:
        STATE.training = training
    grad_ctx = torch.enable_grad() if STATE.recording else torch.no_grad()
    try:
        with grad_ctx:
            yield
    finally:
        STATE.recording, STATE.training = old_rec, old_train


def record(train_mode=True):  # noqa: A002 - MXNet's name
    """Return a scope in which operators are recorded for :func:`backward`.

    Parameters
    ----------
    train_mode : bool
        Whether layers such as Dropout behave as in training (default True).

    Examples
    --------
    >>> with record():
    ...     is_recording(), is_training()
    (True, True)
    """
    return _scope(True, train_mode)


def pause(train_mode=False):  # noqa: A002
    """Return a scope in which operators are not recorded (inside a ``record()`` block).

    >>> with record():
    ...     with pause():
    ...         is_recording()
    False
    """
    return _scope(False, train_mode)


def train_mode():
    """Return a scope with training behaviour on, recording unchanged.

    >>> with train_mode():
    ...     is_training()
    True
    """
    return _scope(None, True)


def predict_mode():
    """Return a scope with training behaviour off, recording unchanged.

    >>> with record():
    ...     with predict_mode():
    ...         is_training()
    False
    """
    return _scope(None, False)


def register_variable(arr):
    """Remember ``arr`` as a variable whose gradient :func:`backward` computes."""
    _variables.add(arr)


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
        raise ValueError(f"mark_variables: got {len(variables)} variables, {len(gradients)} "
                         f"gradients and {len(grad_reqs)} grad_reqs; the lengths must match")
    for var, g, req in zip(variables, gradients, grad_reqs):
        var._attach_grad_buffer(g, req)


def _head_tensors(heads, head_grads):
    from .ndarray.ndarray import NDArray
    if isinstance(heads, NDArray):
        heads = [heads]
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise ValueError(f"backward: {len(heads)} heads but {len(head_grads)} head gradients")
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

    A sparse head differentiates through its stored values, so a head gradient
    given densely (any storage type) is read at the head's stored positions.
    """
    t = head._autograd_tensor()
    if head.stype == "default":
        return head_grad._dense_tensor().to(device=t.device, dtype=t.dtype).expand_as(t)
    g = head_grad._dense_tensor().to(device=t.device, dtype=t.dtype)
    if tuple(g.shape) != tuple(head.shape):
        g = g.expand(head.shape)
    if head.stype == "csr":
        return g[head.row_ids(), head._indices]
    return g.index_select(0, head._indices)


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: A002
    """Compute the gradients of ``heads`` with respect to every marked variable.

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
    outs, grads = _head_tensors(heads, head_grads)
    variables = [v for v in list(_variables) if v._grad_req != "null"]
    inputs, owners = [], []
    for v in variables:
        t = v._autograd_tensor()
        if t is not None and t.requires_grad:
            inputs.append(t)
            owners.append(v)
    if not inputs:
        raise SparsenetError("backward: no variable has a gradient buffer; call "
                             "attach_grad() on the arrays you differentiate against")
    results = torch.autograd.grad(outs, inputs, grads, retain_graph=retain_graph,
                                  allow_unused=True)
    for v, g in zip(owners, results):
        if g is not None:
            v._store_grad(g)


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
    from .ndarray.ndarray import NDArray
    single = isinstance(variables, NDArray)
    if single:
        variables = [variables]
    outs, grads = _head_tensors(heads, head_grads)
    inputs = [v._autograd_tensor() for v in variables]
    for v, t in zip(variables, inputs):
        if t is None or not t.requires_grad:
            raise SparsenetError("grad: every variable needs attach_grad() before record()")
    if retain_graph is None:
        retain_graph = create_graph
    results = torch.autograd.grad(outs, inputs, grads, retain_graph=retain_graph,
                                  create_graph=create_graph, allow_unused=True)
    out = []
    for v, g in zip(variables, results):
        if g is None:
            g = torch.zeros_like(v._autograd_tensor())
        out.append(v._wrap_grad(g))
    return out


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
        raise NotImplementedError("subclasses of autograd.Function define forward()")

    def backward(self, *output_grads):
        raise NotImplementedError("subclasses of autograd.Function define backward()")

    def __call__(self, *inputs):
        from .ndarray.ndarray import NDArray
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
