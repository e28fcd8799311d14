"""Imperative autograd over ``torch.autograd``: ``record``, ``pause``, ``backward``, ``grad``.

Operators are recorded only inside :func:`record`; outside it they run under
``torch.no_grad()``. Variables are arrays on which :meth:`NDArray.attach_grad`
was called (Gluon parameters are variables); :func:`backward` computes their
gradients with ``torch.autograd.grad`` and stores them by each variable's
``grad_req``: ``'write'`` overwrites, ``'add'`` accumulates (also for
row_sparse gradients, which MXNet refuses), ``'null'`` skips.

Sparse kernels (``dot(csr, W)``, ``FullyConnected(csr, W)``, ``Embedding``,
``take``) hand the gradient of a variable ``W`` to torch as a sparse COO
tensor. It is stored in the variable's gradient buffer without ever building a
dense intermediate: a row_sparse buffer receives the touched rows (sorted,
unique); a dense buffer is written in place, and only the entries written by
the previous step are cleared (the buffer remembers them, and checks the
tensor's version counter so that any other write makes it fall back to a full
clear).

>>> import sparsenet as mx
>>> x = mx.nd.array([1.0, 2.0, 3.0])
>>> x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad.asnumpy()
array([2., 4., 6.], dtype=float32)
"""
import threading
import weakref

import torch

from .base import SparsenetError

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "backward", "grad", "mark_variables", "Function",
           "zero_grad", "nonzero_entries"]


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False


STATE = _State()


class _Lazy:
    """Classes and kernels of modules that import this one, resolved on first use."""

    def __getattr__(self, name):
        from .ndarray.cast_storage import cast_storage
        from .ndarray.ndarray import NDArray
        from .ndarray.row_sparse import RowSparseNDArray
        from .ops.arithmetic import add_into
        from .ops.native_rows import coalesce_rows
        self.__dict__.update(NDArray=NDArray, RowSparseNDArray=RowSparseNDArray,
                             cast_storage=cast_storage, add_into=add_into,
                             coalesce_rows=coalesce_rows)
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(name) from None


_lazy = _Lazy()
_variables = {}        # id(array) -> weakref to an array with a gradient buffer
_fresh = {}            # id(grad buffer) -> weakref, for buffers written since the last step
_nonzero = {}          # id(dense grad buffer) -> _Entries or None (where its nonzeros may be)


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
    """Set the recording state; return the previous one.

    >>> set_recording(False)
    False
    """
    old, STATE.recording = STATE.recording, bool(is_record)
    if STATE.recording:
        torch.set_grad_enabled(True)
    return old


def set_training(train_mode_):
    """Set the training state; return the previous one.

    >>> set_training(False)
    False
    """
    old, STATE.training = STATE.training, bool(train_mode_)
    return old


class _Scope:
    """Context manager setting the recording/training state (None keeps a flag)."""

    __slots__ = ("_rec", "_train", "_old")

    def __init__(self, recording, training):
        self._rec, self._train = recording, training

    def __enter__(self):
        st = STATE
        self._old = (st.recording, st.training, torch.is_grad_enabled())
        if self._rec is not None:
            st.recording = self._rec
        if self._train is not None:
            st.training = self._train
        torch._C._set_grad_enabled(st.recording)
        return self

    def __exit__(self, *exc):
        st = STATE
        st.recording, st.training, grad_mode = self._old
        torch._C._set_grad_enabled(grad_mode)
        return False


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
    return _Scope(True, train_mode)


def pause(train_mode=False):  # noqa: A002
    """Return a scope in which operators are not recorded (inside a ``record()`` block).

    >>> with record():
    ...     with pause():
    ...         is_recording()
    False
    """
    return _Scope(False, train_mode)


def train_mode():
    """Return a scope with training behaviour on, recording unchanged.

    >>> with train_mode():
    ...     is_training()
    True
    """
    return _Scope(None, True)


def predict_mode():
    """Return a scope with training behaviour off, recording unchanged.

    >>> with record():
    ...     with predict_mode():
    ...         is_training()
    False
    """
    return _Scope(None, False)


# ---------------------------------------------------------------------- variables
class _Entry:
    """A variable's leaf tensor and its owner (an array, weakly held, or a strong sink)."""

    __slots__ = ("tensor", "ref", "sink")

    def owner(self):
        return self.sink if self.sink is not None else self.ref()


def register_variable(arr, sink=None):
    """Remember ``arr`` as a variable whose gradient :func:`backward` computes.

    The entry lives as long as the array's leaf tensor. ``sink`` (an object
    with ``_grad``, ``_grad_req`` and the array's structure, not holding the
    tensor) receives the gradient instead of ``arr``, and is kept alive even
    after ``arr`` is dropped (the recorded graph may still need it).
    """
    t = arr._autograd_tensor()
    old = _variables.get(id(t))
    if old is not None and old.tensor() is t and old.sink is None and old.ref() is arr \
            and sink is None:
        return
    _register(t, weakref.ref(arr), sink)


def _register(t, ref, sink):
    key = id(t)
    entry = _Entry()

    def _gone(_ref, key=key, entry=entry):
        if _variables.get(key) is entry:
            del _variables[key]

    entry.tensor = weakref.ref(t, _gone)
    entry.ref = ref
    entry.sink = sink
    _variables[key] = entry


def alias_of(var):
    """A new leaf tensor sharing ``var``'s storage whose gradient goes to ``var``'s buffer.

    Kernels whose sparse gradient layout cannot be summed by torch with other
    uses of the variable (the column-sparse gradient of ``dot(csr, W.T)``) read
    the variable through an alias; :func:`backward` adds the gradients of the
    variable and of its aliases in the buffer.
    """
    t = var._t.detach().requires_grad_(True)
    _register(t, None, var)
    return t


def _aliases(var):
    return [e.tensor() for e in list(_variables.values())
            if e.sink is var and e.tensor() is not None]


def attach_row_view(view, buf, grad_req):
    """Make row_sparse ``view`` (rows of a parameter) a variable writing ``buf``.

    The gradient with respect to the view's stored rows is stored in ``buf``
    (the parameter's gradient buffer) as a row_sparse array with those rows.
    """
    from .ndarray.row_sparse import RowSparseNDArray
    view._grad, view._grad_req = buf, grad_req
    view._make_leaf(True)
    sink = RowSparseNDArray._from_parts(None, view._indices, view.shape)
    sink._grad, sink._grad_req = buf, grad_req
    register_variable(view, sink=sink)


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


# ---------------------------------------------------------------------- gradient storage
class _Entries:
    """Where the nonzeros of a dense gradient buffer may be: rows of axis 0 or flat positions."""

    __slots__ = ("tensor", "version", "kind", "index")

    def __init__(self, tensor, kind, index):
        self.tensor = weakref.ref(tensor)
        self.version = tensor._version
        self.kind = kind        # 'rows' or 'flat'
        self.index = index      # int64 tensor (may hold duplicates)


def _entries(buf):
    e = _nonzero.get(id(buf))
    if e is None:
        return None
    t = buf._t
    if e.tensor() is not t or t._version != e.version:
        _nonzero[id(buf)] = None
        return None
    return e


def _forget(buf):
    if id(buf) in _nonzero:
        _nonzero[id(buf)] = None


def _remember(buf, kind, index):
    t = buf._t
    limit = t.shape[0] // 4 if kind == "rows" else t.numel() // 8
    key = id(buf)
    if key not in _nonzero:
        weakref.finalize(buf, _nonzero.pop, key, None)
    _nonzero[key] = None if index.numel() > limit else _Entries(t, kind, index)


def _mark_zero(buf):
    """Declare that dense buffer ``buf`` holds zeros (it was just allocated that way)."""
    if buf.stype == "default" and buf._t.dim() > 0:
        _remember(buf, "rows", buf._t.new_zeros(0, dtype=torch.int64))


def nonzero_entries(buf):
    """Where dense gradient ``buf`` may hold nonzeros: ``('rows', ids)``, ``('flat', pos)`` or None.

    ``None`` means unknown (anywhere). The answer is exact bookkeeping of the
    sparse gradients autograd wrote; any other write to the buffer makes it
    ``None``. Index tensors may contain duplicates.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.nd.ones((5, 2)); w.attach_grad()
    >>> x = mx.nd.sparse.csr_matrix(([1.0], [3], [0, 1]), shape=(1, 5))
    >>> with record():
    ...     y = mx.nd.dot(x, w)
    >>> y.backward()
    >>> kind, ids = nonzero_entries(w.grad)
    >>> kind, ids.tolist()
    ('rows', [3])
    """
    e = _entries(buf)
    return None if e is None else (e.kind, e.index)


def zero_grad(buf):
    """Set a gradient buffer to zero in place (row_sparse: no stored rows).

    A dense buffer whose nonzeros autograd knows is cleared only there.

    >>> import sparsenet as mx
    >>> g = mx.nd.ones((3,))
    >>> zero_grad(g)
    >>> g.asnumpy()
    array([0., 0., 0.], dtype=float32)
    """
    if buf.stype != "default":
        from .ops.kernels import empty_csr, empty_rsp
        empty = empty_rsp if buf.stype == "row_sparse" else empty_csr
        buf._replace(empty(buf.shape, buf._data.dtype, buf.device))
        return
    with torch.no_grad():
        _clear_dense(buf)
    _remember(buf, "rows", buf._t.new_zeros(0, dtype=torch.int64))


def _scale_(arr, scale):
    """Multiply ``arr`` in place by ``scale`` (a scalar tensor); zeros stay where they were."""
    with torch.no_grad():
        if arr.stype != "default":
            arr._data.mul_(scale)
            return
        e = _entries(arr)
        arr._t.mul_(scale)
        if e is not None:
            _remember(arr, e.kind, e.index)


def _clear_dense(buf):
    e = _entries(buf)
    t = buf._t
    if e is None:
        t.zero_()
    elif e.index.numel():
        if e.kind == "rows":
            t.index_fill_(0, e.index, 0)
        else:
            t.view(-1).index_fill_(0, e.index, 0)


def _coo_parts(g):
    """(kind, index, values) of a sparse COO gradient, as scattered into a dense buffer."""
    idx, vals = g._indices(), g._values()
    if g.sparse_dim() == 1:
        return "rows", idx[0], vals
    strides = torch.tensor(_row_major_strides(g.shape[:g.sparse_dim()]), dtype=torch.int64,
                           device=idx.device)
    flat = (idx * strides.unsqueeze(1)).sum(0)
    if g.dense_dim():
        inner = int(torch.tensor(g.shape[g.sparse_dim():]).prod())
        flat = (flat.unsqueeze(1) * inner + torch.arange(inner, device=flat.device)).reshape(-1)
        vals = vals.reshape(-1)
    return "flat", flat, vals


def _row_major_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return strides[::-1]


def _store_dense(buf, g, add, owned=False):
    t = buf._t
    if not g.is_sparse:
        if add:
            t.add_(g)
        elif owned and g.dtype == t.dtype and g.shape == t.shape and g.stride() == t.stride():
            buf._t = g  # autograd handed over a tensor nobody else references
        else:
            t.copy_(g)
        _forget(buf)
        return
    kind, index, vals = _coo_parts(g)
    prev = _entries(buf)
    if not add:
        _clear_dense(buf)
        prev = None
    vals = vals if vals.dtype == t.dtype else vals.to(t.dtype)
    if kind == "rows":
        t.index_add_(0, index, vals)
    else:
        t.view(-1).index_add_(0, index, vals)
    if (add and prev is None) or (prev is not None and prev.kind != kind):
        _forget(buf)
        return
    _remember(buf, kind, index if prev is None else torch.cat([prev.index, index]))


def _rsp_parts(g, shape, owned=False):
    """``(values, row ids)`` of the row_sparse form of sparse COO gradient ``g``."""
    if g.sparse_dim() == 1:
        if not g.is_coalesced():
            # None: torch's coalesce; ``owned``: nobody else holds g's values, sum in place
            rows = _lazy.coalesce_rows(g._indices(), g._values(), in_place=owned)
            if rows is not None:
                return rows[1], rows[0]
            g = g.coalesce()
        return g._values(), g._indices()[0]
    g = g.coalesce()
    idx, vals = g.indices(), g.values()
    rows, inv = torch.unique(idx[0], sorted=True, return_inverse=True)
    data = vals.new_zeros((rows.numel(),) + tuple(shape[1:]))
    data.index_put_((inv,) + tuple(idx[1:]), vals, accumulate=True)
    return data, rows


def _rsp_from_coo(g, shape, owned=False):
    data, rows = _rsp_parts(g, shape, owned)
    return _lazy.RowSparseNDArray._from_parts(data, rows, tuple(shape))


def _grad_array(var, g, owned=False):
    """A torch gradient of ``var`` as an array of its gradient buffer's storage type
    (``owned``: nobody else holds ``g``, its parts may be reused)."""
    NDArray, cast_storage = _lazy.NDArray, _lazy.cast_storage
    buf = var._grad
    gstype = buf.stype if buf is not None else var.stype
    if var.stype == "row_sparse" and g.is_sparse:
        # a sparse gradient over the stored rows (positions): keep the touched rows only
        from .ndarray.row_sparse import RowSparseNDArray
        g = g.coalesce()
        out = RowSparseNDArray._from_parts(g.values(), var._indices[g.indices()[0]], var.shape)
        return out if gstype == "row_sparse" else cast_storage(out, gstype)
    if var.stype != "default":  # gradient w.r.t. the stored values: same structure
        out = var._with_data(g.to_dense() if g.is_sparse else g)
        return out if gstype == var.stype else cast_storage(out, gstype)
    if g.is_sparse:
        if gstype == "row_sparse":
            return _rsp_from_coo(g, var.shape, owned)
        g = g.to_dense()
    out = NDArray(g)
    return out if gstype == "default" else cast_storage(out, gstype)


def store_grad(var, g, accumulate=False, owned=False):
    """Store torch gradient ``g`` of variable ``var`` into its buffer by ``grad_req``.

    ``accumulate`` adds even under ``'write'`` (a second variable sharing the
    buffer); ``owned`` says ``g`` is referenced nowhere else, so a dense buffer
    may take it over instead of copying it.
    """
    grad_mode = torch.is_grad_enabled()
    torch._C._set_grad_enabled(False)
    try:
        _store(var, g, accumulate, owned)
    finally:
        torch._C._set_grad_enabled(grad_mode)


def _store(var, g, accumulate, owned):
    buf = var._grad
    add = accumulate or var._grad_req == "add"
    if buf.stype == "default" and var.stype == "default":
        _store_dense(buf, g, add, owned)
    elif (not add and g.is_sparse and buf.stype == "row_sparse" and var.stype == "default"
          and buf._grad is None):
        # the row gradient of a dense weight: the buffer takes the touched rows
        buf._data, buf._indices = _rsp_parts(g, buf._shape, owned)
    else:
        new = _grad_array(var, g, owned)
        if add:
            _lazy.add_into(buf, new)
        else:
            buf._replace(new)
    _fresh[id(buf)] = weakref.ref(buf)


# ---------------------------------------------------------------------- backward
def _head_tensors(heads, head_grads):
    if head_grads is None and isinstance(heads, list) and len(heads) == 1:  # loss.backward()
        t = heads[0]._autograd_tensor()
        if t is not None and t.requires_grad:
            return [t], [torch.ones_like(t)]
    NDArray = _lazy.NDArray
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


# torch's engine entry behind torch.autograd.backward (after its argument checks), if present
_run_engine = getattr(getattr(torch.autograd, "graph", None), "_engine_run_backward", None)
# the engine itself: CPU graphs skip the wrapper's logging check and context stash (which only
# carry torch.compile's configuration to the device threads of CUDA backward passes)
_engine = getattr(getattr(torch.autograd, "variable", None), "Variable", None)
_engine = getattr(_engine, "_execution_engine", None)


def _run(outs, grads, inputs, **kwargs):
    return torch.autograd.grad(outs, inputs, grads, allow_unused=True, **kwargs)


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
    outs, grads = _head_tensors(heads, head_grads)
    # torch accumulates into the leaves' .grad, taking over tensors nobody else holds
    if head_grads is None and _run_engine is not None:
        # head gradients made here match their heads: skip torch.autograd.backward's checks
        run = _engine.run_backward if _engine is not None and outs[0].is_cpu else _run_engine
        run(tuple(outs), tuple(grads), bool(retain_graph), False, (), allow_unreachable=True,
            accumulate_grad=True)
    else:
        torch.autograd.backward(outs, grads, retain_graph=retain_graph)
    written = set()
    grad_mode = torch.is_grad_enabled()
    torch._C._set_grad_enabled(False)
    try:
        for entry in list(_variables.values()):
            t = entry.tensor()
            if t is None:
                continue
            g = t.grad
            if g is None:
                continue
            t.grad = None
            v = entry.sink if entry.sink is not None else entry.ref()
            if v is None or v._grad is None or v._grad_req == "null":
                continue
            key = id(v._grad)
            _store(v, g, key in written, True)  # views sharing one buffer add up
            written.add(key)
    finally:
        torch._C._set_grad_enabled(grad_mode)


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
    if isinstance(variables, NDArray):
        variables = [variables]
    outs, grads = _head_tensors(heads, head_grads)
    inputs, groups = [], []
    for v in variables:
        t = v._autograd_tensor()
        if t is None or not t.requires_grad:
            raise SparsenetError("grad: every variable needs attach_grad() before record()")
        ts = [t] + (_aliases(v) if v.stype == "default" else [])
        groups.append((len(inputs), len(ts)))
        inputs.extend(ts)
    if retain_graph is None:
        retain_graph = create_graph
    results = _run(outs, grads, inputs, retain_graph=retain_graph, create_graph=create_graph)
    out = []
    for v, (start, n) in zip(variables, groups):
        parts = [g for g in results[start:start + n] if g is not None]
        if not parts:
            parts = [torch.zeros_like(v._autograd_tensor())]
        total = _grad_array(v, parts[0])
        for g in parts[1:]:
            from .ops.arithmetic import add_into
            add_into(total, _grad_array(v, g))
        out.append(total)
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
