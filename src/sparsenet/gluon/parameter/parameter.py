""":class:`Parameter` and :class:`Constant`: a Gluon block's weights, one copy per context.

A :class:`Parameter` holds one copy of its value per context, and a gradient
buffer per copy in its ``grad_stype`` ('default', 'row_sparse' or 'csr'). The
copies are autograd variables: ``loss.backward()`` writes their buffers. A
``stype='row_sparse'`` parameter is read through :meth:`Parameter.row_sparse_data`,
which returns just the rows a batch needs.

>>> import sparsenet as mx
>>> p = mx.gluon.Parameter('w', shape=(4, 2), stype='row_sparse', init=mx.init.One())
>>> p.initialize()
>>> p.row_sparse_data(mx.nd.array([3])).indices.asnumpy()
array([3])
"""
import warnings

import numpy as np
import torch

from ... import autograd, initializer
from ...base import (IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError,
                     ParameterAssertionError, ShapeError, SparsenetError, StateError, numpy_dtype)
from ...context import Context, cpu, current_context, place
from ...ndarray import nonzero
from ...ndarray.creation import array as _array, zeros as _zeros
from ...ndarray.ndarray import NDArray, copy_into
from ...ndarray.row_sparse import RowSparseNDArray
from ...ops.registry import _MULTI_DEVICE

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "tensor_types"]

tensor_types = (NDArray,)
_STYPES = ("default", "row_sparse", "csr")
_GRAD_REQS = ("write", "add", "null")


class DeferredInitializationError(SparsenetError):
    """A parameter's shape is not known yet: run one forward pass first."""


def _shape_known(shape):
    return shape is not None and all(int(s) > 0 for s in shape)


def _as_ctx_list(ctx):
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    ctx = list(ctx)
    for c in ctx:
        if not isinstance(c, Context):
            raise InvalidArgumentTypeError(
                f"ctx must be a Context or a list of Contexts, got {c!r}")
    return ctx


class Parameter:
    """A weight of a Block, with one copy (and one gradient buffer) per context.

    Parameters
    ----------
    name : str
    grad_req : {'write', 'add', 'null'}
        How backward stores gradients: overwrite, accumulate (call
        :meth:`zero_grad` yourself), or no gradient at all.
    shape : int or tuple of int, optional
        ``0`` marks a dimension inferred at the first forward pass (deferred
        initialization, allowed with ``allow_deferred_init=True``).
    dtype : str or numpy dtype, default 'float32'
    lr_mult, wd_mult : float
        Multipliers of the optimizer's learning rate and weight decay.
    init : Initializer or str, optional
        Overrides the initializer given to :meth:`initialize`.
    allow_deferred_init : bool
    differentiable : bool
        False forces ``grad_req='null'``.
    stype : {'default', 'row_sparse', 'csr'}
        Storage type of the value.
    grad_stype : {'default', 'row_sparse', 'csr'}
        Storage type of the gradient.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.gluon.Parameter('w', shape=(4, 2), grad_stype='row_sparse')
    >>> w.initialize(init='zeros')
    >>> x = mx.nd.sparse.csr_matrix(([1.0], [2], [0, 1]), shape=(1, 4))
    >>> with mx.autograd.record():
    ...     y = mx.nd.dot(x, w.data())
    >>> y.backward()
    >>> w.grad().stype, w.grad().indices.asnumpy()
    ('row_sparse', array([2]))
    """

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        self._shape = tuple(int(s) for s in shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        for what, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value not in _STYPES:  # MXNet asserts: catchable as AssertionError and ValueError
                raise ParameterAssertionError(
                    f"{what} for Parameter '{name}' must be one of 'default', 'row_sparse', "
                    f"or 'csr', but got {value!r}")
        self._stype = stype
        self._grad_stype = grad_stype
        self.grad_req = grad_req
        self.init = init

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # ------------------------------------------------------------------ attributes
    @property
    def grad_req(self):
        """'write', 'add' or 'null'; settable before or after initialization."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise InvalidArgumentError(
                f"grad_req must be one of 'write', 'add' or 'null', got {req!r}")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            for arr in self._data:
                arr._grad, arr._grad_req = None, "null"
                arr._make_leaf(False)
        elif self._data is not None:
            self._init_grad()

    @property
    def stype(self):
        """Storage type of the value."""
        return self._stype

    @property
    def grad_stype(self):
        """Storage type of the gradient."""
        return self._grad_stype

    @property
    def dtype(self):
        """Element type; setting it casts the value (:meth:`cast`)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """Shape; ``0`` marks a dimension not known yet."""
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(int(s) for s in new_shape)
        if self._shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
                j in (0, i) for i, j in zip(new_shape, self._shape)):
            raise ShapeError(f"Parameter '{self.name}': expected shape {self._shape} is "
                             f"incompatible with given shape {new_shape}")
        self._shape = new_shape

    def _set_trainer(self, trainer):
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise StateError(f"Failed to set the trainer for Parameter '{self.name}' because "
                             f"it was already set: a {self._stype} Parameter can belong to "
                             f"one Trainer only")
        self._trainer = trainer

    # ------------------------------------------------------------------ lookup
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise StateError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                             f"It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                f"was deferred. Actual initialization happens during the first forward pass. "
                f"Please pass one batch of data through the network before accessing "
                f"Parameters. You can also avoid deferred initialization by specifying "
                f"in_units, num_features, etc., for network layers.")
        raise StateError(f"Parameter '{self.name}' has not been initialized. Note that you "
                         f"should initialize parameters and create Trainer with "
                         f"Block.collect_params() instead of Block.params because the later "
                         f"does not include Parameters of nested child Blocks")

    def data(self, ctx=None):
        """The value on context ``ctx`` (the only one when omitted); dense parameters only.

        >>> import sparsenet as mx
        >>> p = mx.gluon.Parameter('b', shape=(2,), init='ones'); p.initialize()
        >>> p.data(mx.cpu()).asnumpy()
        array([1., 1.], dtype=float32)
        """
        if self._stype != "default":
            raise StateError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} "
                             f"via data() because its storage type is {self._stype}. Please "
                             f"use row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def _data_like(self, x):
        """:meth:`data` on the context of array ``x`` (the forward pass's lookup)."""
        arrays = self._data
        if arrays is not None and len(arrays) == 1 and self._stype == "default" and \
                (not _MULTI_DEVICE or arrays[0].device == x.device):
            return arrays[0]
        return self.data(x.context)

    def list_data(self):
        """The values on all contexts, in initialization order (dense parameters only)."""
        if self._stype != "default":
            raise StateError(f"Cannot return copies of Parameter '{self.name}' on all "
                             f"contexts via list_data() because its storage type is "
                             f"{self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        """The gradient buffer on context ``ctx``."""
        if self._data is not None and self._grad is None:
            raise StateError(f"Cannot get gradient array for Parameter '{self.name}' "
                             f"because grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on all contexts."""
        if self._data is not None and self._grad is None:
            raise StateError(f"Cannot get gradient array for Parameter '{self.name}' "
                             f"because grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts the parameter lives on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise StateError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    def row_sparse_data(self, row_id):
        """The rows ``row_id`` of a row_sparse parameter, on ``row_id``'s context.

        The result is a row_sparse array of the full shape storing the requested
        rows (sorted, unique). Recorded computations on it send their gradient
        to the parameter's gradient buffer. Unlike MXNet this needs no Trainer.

        >>> import sparsenet as mx
        >>> p = mx.gluon.Parameter('emb', shape=(5, 2), init='ones', stype='row_sparse',
        ...                        grad_stype='row_sparse')
        >>> p.initialize()
        >>> p.row_sparse_data(mx.nd.array([3, 1, 3])).indices.asnumpy()
        array([1, 3])
        """
        if self._stype != "row_sparse":
            raise StateError(f"Cannot return a copy of Parameter {self.name} via "
                             f"row_sparse_data() because its storage type is {self._stype}. "
                             f"Please use data() instead.")
        self._check_row_id(row_id)
        full = self._check_and_get(self._data, row_id.context)
        self._pull_rows(full, row_id)
        return self._rows_view(full, row_id)

    def list_row_sparse_data(self, row_id):
        """:meth:`row_sparse_data` on every context."""
        if self._stype != "row_sparse":
            raise StateError(f"Cannot return copies of Parameter '{self.name}' on all "
                             f"contexts via list_row_sparse_data() because its storage type "
                             f"is {self._stype}. Please use data() instead.")
        self._check_row_id(row_id)
        out = []
        for full in self._check_and_get(self._data, list):
            self._pull_rows(full, row_id)
            out.append(self._rows_view(full, row_id))
        return out

    def _pull_rows(self, full, row_id):
        """With a Trainer whose kvstore updates this row_sparse parameter, bring the rows
        ``row_id`` of the local value ``full`` up to date from the store first (MXNet's
        ``row_sparse_data`` pulls through the trainer's store too)."""
        if self._trainer is not None:
            self._trainer._row_sparse_pull(self, full, row_id)

    def _check_row_id(self, row_id):
        if not isinstance(row_id, NDArray) or row_id.stype != "default":
            raise InvalidArgumentTypeError(f"row_id must be a dense NDArray of row ids, got "
                                           f"{type(row_id).__name__}")

    def _rows_view(self, full, row_id):
        ids = row_id._t.detach().reshape(-1).to(device=full.device)
        if ids.dtype.is_floating_point:
            ids = ids.round()
        ids = torch.unique(ids.to(torch.int64), sorted=True)
        n = self._shape[0]
        if ids.numel() and (int(ids[0]) < 0 or int(ids[-1]) >= n):
            bad = int(ids[0]) if int(ids[0]) < 0 else int(ids[-1])
            raise IndexOutOfRangeError(
                f"row_sparse_data: row id {bad} is out of range [0, {n}) for "
                f"Parameter '{self.name}'")
        stored = full._indices
        if stored.numel() == 0:
            values = full._data.new_zeros((ids.numel(),) + tuple(self._shape[1:]))
        else:
            pos = torch.searchsorted(stored, ids).clamp_(max=stored.numel() - 1)
            hit = (stored[pos] == ids).to(full._data.dtype)
            values = full._data.detach().index_select(0, pos) * \
                hit.reshape((-1,) + (1,) * (len(self._shape) - 1))
        view = place(RowSparseNDArray._from_parts(values, ids, tuple(self._shape)), full.context)
        if full._grad is not None and full._grad_req != "null":
            autograd.attach_row_view(view, full._grad, full._grad_req)
        return view

    # ------------------------------------------------------------------ initialization
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Allocate and fill the value (and gradient buffers) on ``ctx``.

        Parameters
        ----------
        init : Initializer or str, optional
            Overrides :attr:`init` and ``default_init``.
        ctx : Context or list of Context, optional
            One copy per context (default: the current context).
        default_init : Initializer
            Used when neither ``init`` nor :attr:`init` is given.
        force_reinit : bool
            Re-initialize a parameter that already holds values.
        """
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          f"force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        ctx = _as_ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_known(self._shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise InvalidArgumentError(f"Cannot initialize Parameter '{self.name}' because it has "
                                       f"invalid shape: {self._shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _shape_known(self._shape):
            raise InvalidArgumentError(f"Cannot initialize Parameter '{self.name}' because it has "
                                       f"invalid shape: {self._shape}. Please specify in_units, "
                                       f"in_channels, etc for `Block`s.")
        with autograd.pause():
            owned = data is None
            if owned:
                data = _zeros(self._shape, ctx=ctx[0], dtype=self._dtype, stype=self._stype)
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            self._init_impl(data, ctx, owned)

    def _init_impl(self, data, ctx_list, owned=False):
        self._ctx_list = list(ctx_list)
        self._ctx_map = {c: i for i, c in enumerate(self._ctx_list)}
        arrays = []
        for i, c in enumerate(self._ctx_list):
            if i == 0 and owned and data.context == c:
                arrays.append(data)
            else:
                arrays.append(data.copyto(c))
        self._data = arrays
        self._init_grad()

    def _init_grad(self):
        if self._grad_req == "null":
            self._grad = None
            return
        self._grad = []
        for d in self._data:
            g = _zeros(d.shape, ctx=d.context, dtype=d.dtype, stype=self._grad_stype)
            nonzero.mark_zero(g)
            self._grad.append(g)
        autograd.mark_variables(self._data, self._grad, self._grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """(Re)initialize from loaded array ``data`` (shape and dtype checked)."""
        if dtype_source not in ("current", "saved"):
            raise InvalidArgumentError(
                f"dtype_source must be 'current' or 'saved', got {dtype_source!r}")
        if self._shape:
            if len(self._shape) != len(data.shape) or not all(
                    s in (0, d) for s, d in zip(self._shape, data.shape)):
                raise ShapeError(f"Failed loading Parameter '{self.name}' from saved params: "
                                 f"shape incompatible expected {self._shape} vs saved "
                                 f"{data.shape}")
            self._shape = tuple(d if s == 0 else s for s, d in zip(self._shape, data.shape))
        if self._dtype is not None and numpy_dtype(self._dtype) != numpy_dtype(data.dtype):
            if not cast_dtype:
                raise InvalidArgumentError(
                    f"Failed loading Parameter '{self.name}' from saved params: "
                    f"dtype incompatible expected {numpy_dtype(self._dtype)} vs "
                    f"saved {numpy_dtype(data.dtype)}. Set cast_dtype=True to "
                    f"cast the dtype of saved params.")
            if dtype_source == "current":
                data = data.astype(self._dtype)
            else:
                self.cast(numpy_dtype(data.dtype).type)  # a NumPy type, as MXNet's
        if data.stype != self._stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise InvalidArgumentError(
                        f"Failed to load Parameter '{self.name}' on {ctx} because "
                        f"it was previous initialized on {self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            with autograd.pause():
                self._init_impl(data, ctx, owned=True)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise InvalidArgumentError(
                    f"Failed to load Parameter '{self.name}' on {ctx} because it "
                    f"was previous initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def reset_ctx(self, ctx):
        """Move the parameter to other context(s) (values kept)."""
        ctx = _as_ctx_list(ctx)
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx, owned=True)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise InvalidArgumentError(
                f"Cannot reset context for Parameter '{self.name}' because it has "
                f"not been initialized.")

    def set_data(self, data):
        """Set the value on every context (the storage type of the parameter is kept)."""
        if not isinstance(data, NDArray):
            data = _array(data, dtype=self._dtype)
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise StateError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        self._release_from_store()
        with torch.no_grad():
            for arr in self._data:
                copy_into(data, arr)

    def _store_holding(self):
        """The Trainer whose store updates this parameter (``update_on_kvstore``) and holds
        its value already, or None."""
        trainer = self._trainer
        if trainer is None or not getattr(trainer, "_kv_initialized", False) \
                or not getattr(trainer, "_update_on_kvstore", False):
            return None
        if any(p is self for p in trainer._params_to_init):
            return None
        return trainer

    def _release_from_store(self):
        """Before a new value is set: a Trainer whose store updates this parameter and holds
        it already forgets its store (MXNet's ``_reset_kvstore``; the next step sets it up
        again with the new value); a distributed store cannot be reset, so that raises
        StateError (a RuntimeError, as MXNet's) and the value is left as it was."""
        trainer = self._store_holding()
        if trainer is not None:
            trainer._reset_kvstore(self)

    def _reduce(self):
        """The value on the CPU (mean over contexts for dense parameters)."""
        if self._trainer is not None:  # lazy_update='exact': rows caught up before a save
            self._trainer.sync(self)
        ctx = cpu()
        block = self._data
        if self._stype == "default" and len(block) > 1:
            with torch.no_grad():
                total = sum(w._t.detach().to(ctx.torch_device) for w in block) / len(block)
            return NDArray(total)
        if self._stype == "row_sparse" and self._trainer is not None:  # every row, from the store
            every = place(NDArray(torch.arange(self._shape[0], device=block[0].device)),
                          block[0].context)
            self._pull_rows(block[0], every)
        return block[0].copyto(ctx)

    def zero_grad(self):
        """Set the gradient buffers to zero (row_sparse buffers: no stored rows)."""
        if self._grad is None:
            return
        for g in self._grad:
            autograd.zero_grad(g)

    def cast(self, dtype):
        """Cast value and gradient to ``dtype``."""
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.detach().astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            autograd.mark_variables(self._data, self._grad, self._grad_req)


class Constant(Parameter):
    """A parameter that autograd and the Trainer ignore (``grad_req='null'``).

    >>> import sparsenet as mx
    >>> c = mx.gluon.Constant('c', [[1, 2], [3, 4]])
    >>> c.initialize()
    >>> c.data().asnumpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    """

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            value = _array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape,
                         dtype=numpy_dtype(value.dtype).type, init=initializer.Constant(value))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.')
        self._grad_req = "null"
