"""Executors: a Symbol bound to arrays, run by the eager operators under ``sparsenet.autograd``.

Binding compiles the graph once into a :class:`~sparsenet.symbol.program.Program`
(storage types inferred node by node from the registry rows, each falling-back
node reported once) and allocates output arrays of the inferred shapes, dtypes
and storage types. ``forward`` then calls each node's operator on the bound
arrays — inside ``autograd.record`` when ``is_train`` — and ``backward`` asks
``torch.autograd`` for the gradients of the arguments, stored by each
argument's ``grad_req``. The gradient of a row_sparse weight in
``dot(csr, weight)`` is row_sparse: only the rows the batch touches.

Auxiliary states (BatchNorm's moving statistics) are bound beside the
arguments (``aux_states``, :attr:`Executor.aux_dict`); they get no gradient,
and the operators that own them update them in place (BatchNorm in the backward
pass of a training step, as MXNet).

>>> import sparsenet as mx
>>> x = mx.sym.var('x', stype='csr'); w = mx.sym.var('w', stype='row_sparse')
>>> exe = mx.sym.sum(mx.sym.dot(x, w)).simple_bind(mx.cpu(), x=(2, 4), w=(4, 1))
>>> exe.arg_dict['x'][:] = mx.nd.array([[0, 1, 0, 0], [0, 0, 0, 2]]).tostype('csr')
>>> exe.arg_dict['w'][:] = mx.nd.ones((4, 1))
>>> exe.forward(is_train=True)[0].asnumpy()
array([3.], dtype=float32)
>>> exe.backward()
>>> g = exe.grad_dict['w']
>>> g.stype, g.indices.asnumpy(), g.data.asnumpy().ravel()
('row_sparse', array([1, 3]), array([1., 2.], dtype=float32))
"""
import numpy as np
import torch

from .. import autograd, grad_store
from ..base import (InvalidArgumentError, InvalidArgumentTypeError, OutOfMemoryError, ShapeError,
                    SparsenetError)
from ..context import as_context, current_context
from ..ndarray.creation import zeros
from ..ndarray.memory import over_memory
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.stype import DEFAULT, ROW_SPARSE
from ..ops.cast import cast_storage
from ..torch_compat import run_grad
from .grad_stype import grad_storage_types
from .infer import InferenceError, _propagate_types, arg_storage_types, propagate
from .program import Program

__all__ = ["Executor", "Program", "simple_bind"]

_GRAD_REQS = ("write", "add", "null")


def _per_arg(value, names, what, default=None, ignored=(), extra="raise"):
    """A per-argument value from a list (in argument order), a dict or one value for all.

    Dict keys in ``ignored`` (auxiliary states, which take no gradient) are skipped.
    ``extra="ignore"`` skips dict keys that are not arguments, as MXNet 1.9.1's
    ``bind(args=dict)`` does (a misspelt key still fails: its argument is missing).
    """
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names and k not in ignored]
        if unknown and extra != "ignore":
            raise InvalidArgumentError(f"{what}: {unknown} are not arguments of the symbol; its "
                                       f"arguments are {names}")
        return [value.get(n, default) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise InvalidArgumentError(
                f"{what}: got {len(value)} entries for {len(names)} arguments "
                f"{names}")
        return list(value)
    return [value] * len(names)


def _aux_arrays(aux_states, names):
    """The auxiliary state arrays, in ``names`` order, from a list or a dict."""
    if not names:
        if aux_states:
            got = sorted(aux_states) if isinstance(aux_states, dict) else len(aux_states)
            raise InvalidArgumentError(f"bind: the symbol has no auxiliary states, got {got}")
        return []
    if aux_states is None:
        raise InvalidArgumentError(
            f"bind: aux_states is required: the symbol has the auxiliary states "
            f"{names} (a list in that order, or a dict)")
    if isinstance(aux_states, dict):
        unknown = [k for k in aux_states if k not in names]
        if unknown:
            raise InvalidArgumentError(
                f"bind: {unknown} are not auxiliary states of the symbol; its "
                f"auxiliary states are {names}")
        missing = [n for n in names if aux_states.get(n) is None]
        if missing:
            raise InvalidArgumentError(f"bind: no array given for auxiliary state(s) {missing}")
        arrays = [aux_states[n] for n in names]
    elif isinstance(aux_states, (list, tuple)):
        if len(aux_states) != len(names):
            raise InvalidArgumentError(f"bind: got {len(aux_states)} aux_states for the "
                                       f"{len(names)} auxiliary states {names}")
        arrays = list(aux_states)
    else:
        raise InvalidArgumentTypeError(f"bind: aux_states must be a list or dict of NDArrays, got "
                                       f"{type(aux_states).__name__}")
    for n, a in zip(names, arrays):
        if not isinstance(a, NDArray):
            raise InvalidArgumentTypeError(f"bind: auxiliary state '{n}' must be an NDArray, got "
                                           f"{type(a).__name__}")
    return arrays


def _full_rows(a):
    """Whether ``a`` is a row_sparse array storing every row (its values are the dense array).

    Such an argument is differentiated through its stored values: the kernels that
    read it (``dot(csr, w)``, ``Embedding``) then give gradients over the rows a
    batch touches, and none builds a dense copy of the weight per step.
    """
    return a.stype == ROW_SPARSE and a._stores_every_row()


class Executor:
    """A Symbol bound to argument arrays (and gradient buffers): run it with forward/backward.

    Create one with :meth:`Symbol.simple_bind` (allocates the arrays) or
    :meth:`Symbol.bind` (uses yours).

    Parameters
    ----------
    symbol : Symbol
    ctx : Context
    args : list or dict of NDArray
        One array per argument (``symbol.list_arguments()`` order, or by name).
    args_grad : list or dict of NDArray, optional
        Gradient buffers; their storage types are kept.
    grad_req : str, list or dict
        ``'write'``, ``'add'`` or ``'null'`` per argument.
    aux_states : list or dict of NDArray, optional
        One array per auxiliary state (``symbol.list_auxiliary_states()``); required
        when the symbol has any.

    Examples
    --------
    >>> import sparsenet as mx
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> exe = (a * b).bind(mx.cpu(), args={'a': mx.nd.array([2.0]), 'b': mx.nd.array([5.0])},
    ...                    args_grad={'a': mx.nd.zeros((1,)), 'b': mx.nd.zeros((1,))})
    >>> exe.forward(is_train=True)[0].asnumpy()
    array([10.], dtype=float32)
    >>> exe.backward(mx.nd.array([1.0]))
    >>> exe.grad_dict['a'].asnumpy(), exe.grad_dict['b'].asnumpy()
    (array([5.], dtype=float32), array([2.], dtype=float32))
    """

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req="write", aux_states=None):
        self._symbol = symbol
        self._ctx = as_context(ctx) if ctx is not None else current_context()
        arg_nodes, aux_nodes = symbol._split_inputs()
        names = [n.name for n in arg_nodes]
        aux_names = [n.name for n in aux_nodes]
        every = names + aux_names
        dup = sorted({n for n in every if every.count(n) > 1})
        if dup:
            raise InvalidArgumentError(
                f"bind: different Variables share the name(s) {dup}; give each "
                f"argument a unique name")
        self._arg_names, self._aux_names = names, aux_names
        if args is None:
            raise InvalidArgumentError("bind: args is required (a list or dict of NDArrays); use "
                                       "simple_bind() to allocate them")
        arrays = _per_arg(args, names, "bind args", extra="ignore")
        missing = [n for n, a in zip(names, arrays) if a is None]
        if missing:
            unknown = sorted(set(args) - set(names)) if isinstance(args, dict) else []
            hint = (f"; the args dict also holds {unknown}, which are not arguments"
                    if unknown else "")
            raise InvalidArgumentError(f"bind: no array given for argument(s) {missing}{hint}")
        for n, a in zip(names, arrays):
            if not isinstance(a, NDArray):
                raise InvalidArgumentTypeError(f"bind: argument '{n}' must be an NDArray, got "
                                               f"{type(a).__name__}")
        self.arg_arrays = arrays
        self.aux_arrays = _aux_arrays(aux_states, aux_names)
        self.grad_arrays = _per_arg(args_grad, names, "bind args_grad") if args_grad is not None \
            else [None] * len(names)
        reqs = _per_arg(grad_req, names, "bind grad_req", default="null", ignored=aux_names)
        for n, r in zip(names, reqs):
            if r not in _GRAD_REQS:
                raise InvalidArgumentError(f"bind: grad_req for '{n}' must be one of {_GRAD_REQS}, "
                                           f"got {r!r}")
        self._grad_req = [r if g is not None else "null" for r, g in zip(reqs, self.grad_arrays)]
        for n, a, g in zip(names, arrays, self.grad_arrays):
            if g is not None and tuple(g.shape) != tuple(a.shape):
                raise ShapeError(f"bind: gradient buffer of '{n}' has shape {g.shape}, the "
                                 f"argument {a.shape}")
        self._heads = None
        self._owners = ()
        self._compile()
        self.outputs = self._allocate_outputs()

    # ------------------------------------------------------------------ compilation
    def _compile(self):
        self._inputs = self.arg_arrays + self.aux_arrays
        self._program = Program(self._symbol, {n: a.stype for n, a in
                                               zip(self._program_names(), self._inputs)})
        self._trained = [(a, g, req) for a, g, req in
                         zip(self.arg_arrays, self.grad_arrays, self._grad_req) if req != "null"]
        self._out_slots = self._program.out_slots
        self._out_stypes = self._program.out_stypes
        self._plan = self._program.plan
        self._n_inputs = len(self._inputs)

    def _program_names(self):
        return self._arg_names + self._aux_names

    def _allocate_outputs(self):
        names = self._program_names()
        shapes = {n: a.shape for n, a in zip(names, self._inputs)}
        dtypes = {n: a.dtype for n, a in zip(names, self._inputs)}
        try:
            _, _, entry_shape, entry_dtype = propagate(self._symbol, shapes, dtypes)
        except InferenceError as e:
            raise SparsenetError(f"bind: {e}") from None
        todo = []
        for (node, i), slot, stype in zip(self._symbol._outputs, self._out_slots,
                                          self._out_stypes):
            if node.op is None:
                todo.append(self._inputs[slot])
                continue
            shape = entry_shape.get((id(node), i))
            if shape is None:
                raise SparsenetError(f"bind: cannot infer the shape of output "
                                     f"'{node.output_names()[i]}'")
            todo.append((f"output '{node.output_names()[i]}'", shape,
                         entry_dtype[(id(node), i)], stype))
        _check_fits([t for t in todo if isinstance(t, tuple)], self._ctx, "bind")
        return [_allocate(*t, self._ctx, "bind") if isinstance(t, tuple) else t for t in todo]

    # ------------------------------------------------------------------ dictionaries
    @property
    def arg_dict(self):
        """``{argument name: array}``."""
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        """``{argument name: gradient buffer}`` (None where grad_req is 'null')."""
        return dict(zip(self._arg_names, self.grad_arrays))

    @property
    def aux_dict(self):
        """``{auxiliary state name: array}``.

        >>> import sparsenet as mx
        >>> exe = mx.sym.BatchNorm(mx.sym.var('x'), name='bn').simple_bind(mx.cpu(), x=(2, 3))
        >>> sorted(exe.aux_dict)
        ['bn_moving_mean', 'bn_moving_var']
        """
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        """``{output name: array}``."""
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    @property
    def symbol(self):
        return self._symbol

    # ------------------------------------------------------------------ running
    def forward(self, is_train=False, **kwargs):
        """Run the graph; ``kwargs`` are copied into the named arguments first.

        Parameters
        ----------
        is_train : bool
            Record for :meth:`backward` and run layers such as Dropout and
            BatchNorm in training mode.

        Returns
        -------
        list of NDArray
            :attr:`outputs`.
        """
        if kwargs:
            self._copy_inputs(kwargs)
        if is_train:
            owners = []
            for a, g, req in self._trained:
                a._grad, a._grad_req = g, req
                owners.append(_as_leaf(a))
            self._owners = owners
            with autograd.record(train_mode=True):
                heads = self._program.run(self._inputs)
            self._heads = heads
        else:
            with autograd.pause(train_mode=False):
                heads = self._program.run(self._inputs)
            self._heads = None
        n_inputs = self._n_inputs
        for i, (h, stype) in enumerate(zip(heads, self._out_stypes)):
            if self._out_slots[i] >= n_inputs:  # a variable output is the input array itself
                self._store_output(i, h, stype)
        return self.outputs

    def _copy_inputs(self, kwargs):
        arg_dict = self.arg_dict
        for k, v in kwargs.items():
            if k not in arg_dict:
                raise InvalidArgumentError(f"forward: '{k}' is not an argument; arguments are "
                                           f"{self._arg_names}")
            if isinstance(v, NDArray):
                v.copyto(arg_dict[k])
            else:
                arg_dict[k][:] = v

    def _store_output(self, i, h, stype):
        out = self.outputs[i]
        if h.__class__ is NDArray and out.__class__ is NDArray:  # dense, as planned
            t = h._t.detach()
            if t.shape == out._t.shape:
                out._replace(NDArray(t))
                return
        if h.stype != stype:  # a kernel declined at run time and the dense path ran
            with torch.no_grad():
                h = cast_storage(h, stype=stype)
        if h.stype == DEFAULT:
            detached = NDArray(h._t.detach())
        else:
            detached = type(h)._from_parts(*[p.detach() for p in h._parts()], h.shape)
        if out.stype == detached.stype and out.shape == detached.shape:
            out._replace(detached)
        else:
            self.outputs[i] = detached

    def backward(self, out_grads=None, is_train=True):
        """Compute the gradients of the arguments from the last ``forward(is_train=True)``.

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Gradients with respect to the outputs (ones by default; loss
            outputs such as ``LinearRegressionOutput`` ignore them).
        """
        heads = self._heads
        if heads is None:
            raise SparsenetError("backward() needs a forward(is_train=True) first")
        if isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if out_grads is not None and len(out_grads) != len(heads):
            raise InvalidArgumentError(f"backward: {len(heads)} outputs but {len(out_grads)} "
                                       f"out_grads")
        outs, grads, callers = [], [], set()
        for k, h in enumerate(heads):
            t = h._autograd_tensor()
            if t is None or not t.requires_grad:
                continue
            outs.append(t)
            g = out_grads[k] if out_grads is not None else None
            if g is None:
                grads.append(torch.ones_like(t))
            else:
                grads.append(autograd.head_grad_tensor(h, g))
                callers |= grad_store.caller_storages(grads[-1:])
        # a sparse argument's dense graph tensor exists once the forward pass used it
        leaves = [a._autograd_tensor() if t is None else t for a, t in self._owners]
        wanted = [t for t in leaves if t is not None and t.requires_grad]
        results = iter(run_grad(outs, grads, wanted, retain_graph=True) if outs and wanted
                       else [None] * len(wanted))
        for (a, _), t in zip(self._owners, leaves):
            r = next(results) if t is not None and t.requires_grad else None
            if r is not None:
                # every leaf has the argument's whole shape (see _as_leaf); a sparse
                # gradient is the backward kernel's own tensor, reused in place, unless
                # its values are the caller's head gradient (an Embedding's backward
                # hands the head gradient on as its values rows)
                grad_store.store(a, r, owned=r.is_sparse and grad_store.kernel_owned(r, callers),
                                 full=True)
            elif a._grad_req == "write":
                _clear(a._grad)

    # ------------------------------------------------------------------ parameters
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy arrays into the arguments and auxiliary states of the same name.

        The storage types of the bound arrays are kept. A name the symbol lacks
        raises ``ValueError`` unless ``allow_extra_params``.

        >>> import sparsenet as mx
        >>> exe = (mx.sym.var('w') * 2).simple_bind(mx.cpu(), w=(2,))
        >>> exe.copy_params_from({'w': mx.nd.ones((2,))})
        >>> exe.forward()[0].asnumpy()
        array([2., 2.], dtype=float32)
        """
        for params, table, what in ((arg_params, self.arg_dict, "an argument"),
                                    (aux_params, self.aux_dict, "an auxiliary state")):
            for name, value in (params or {}).items():
                if name in table:
                    with torch.no_grad():
                        value.copyto(table[name])
                elif not allow_extra_params:
                    raise InvalidArgumentError(f"copy_params_from: '{name}' is not {what} of the "
                                               f"symbol; pass allow_extra_params=True to ignore it")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new argument shapes, sharing the arrays whose shape is unchanged.

        Arguments named in ``kwargs`` take the new shapes; the others (and the
        auxiliary states) are inferred. An array whose shape changes without being
        named needs ``partial_shaping=True``.
        """
        names = self._program_names()
        shapes = {n: a.shape for n, a in zip(names, self._inputs)}
        given = {k: tuple(v) for k, v in kwargs.items()}
        unknown = [k for k in given if k not in shapes]
        if unknown:
            raise InvalidArgumentError(f"reshape: {unknown} are not arguments; arguments are "
                                       f"{self._arg_names}")
        arg_shape, _, _, _ = propagate(self._symbol, given)

        def resized(n, a):
            shape = arg_shape[n] or shapes[n]
            if shape == tuple(a.shape):
                return None
            if n not in given and not partial_shaping:
                raise ShapeError(f"reshape: the shape of '{n}' changes from {a.shape} to "
                                 f"{shape} but it was not given; pass partial_shaping=True")
            return shape

        new_args, new_grads = [], []
        for n, a, g in zip(self._arg_names, self.arg_arrays, self.grad_arrays):
            shape = resized(n, a)
            new_args.append(a if shape is None else
                            zeros(shape, ctx=a.context, dtype=a.dtype, stype=a.stype))
            new_grads.append(g if shape is None or g is None else
                             zeros(shape, ctx=g.context, dtype=g.dtype, stype=g.stype))
        new_aux = []
        for n, a in zip(self._aux_names, self.aux_arrays):
            shape = resized(n, a)
            new_aux.append(a if shape is None else
                           zeros(shape, ctx=a.context, dtype=a.dtype, stype=a.stype))
        return Executor(self._symbol, self._ctx, new_args, new_grads, self._grad_req, new_aux)

    def debug_str(self):
        """The compiled plan: one line per operator node with its storage decision."""
        lines = [f"Symbol outputs: {self._symbol.list_outputs()}"]
        lines += [f"  {d!r}" for d in self._plan]
        return "\n".join(lines)

    def __repr__(self):
        return f"<Executor {self._symbol.list_outputs()} @{self._ctx}>"


def _as_leaf(a):
    """Make trained argument ``a`` an autograd leaf; return ``(a, leaf tensor or None)``.

    Every leaf has the argument's whole shape. A dense leaf that is still one
    (the optimizer updates it in place) is kept. A row_sparse argument storing
    every row is differentiated through its stored values, which are the whole
    array (positions are row ids). Any other sparse argument differentiates
    through a dense graph tensor, made when the forward pass first uses it (None
    here). An integer argument (Embedding's ids) has no gradient: None, and
    ``backward`` writes zeros to its buffer under ``'write'`` (MXNet's Embedding
    raises "doesn't support calculate data gradient" there).
    """
    if a.stype == DEFAULT:
        t = a._t
        if not (t.requires_grad and t.is_leaf):
            if not (t.is_floating_point() or t.is_complex()):
                return a, None  # integer ids (Embedding's data) have no gradient: 'write' zeros
            a._make_leaf(True)
            t = a._t
        return a, t
    if _full_rows(a):
        t = a._data
        if not (t.requires_grad and t.is_leaf and a._gt is None and not a._full_grad):
            a._make_values_leaf()
            t = a._data
        return a, t
    a._make_leaf(True)
    return a, None


def _check_fits(arrays, ctx, where):
    """Raise :class:`~sparsenet.base.OutOfMemoryError` before anything is allocated when the
    zero arrays ``arrays`` (``(name, shape, dtype, stype)`` each) need more than the memory of
    ``ctx``'s device (a shape rule or a custom operator's ``infer_shape`` declaring a huge
    shape); names the largest and its shape."""
    over = over_memory([a[1:] for a in arrays], ctx)
    if over is None:
        return
    k, sizes, limit = over
    name, shape, dtype, stype = arrays[k]
    raise OutOfMemoryError(f"{where}: {name} of shape {tuple(shape)} ({dtype}, {stype}) needs "
                           f"{sizes[k]} bytes ({sum(sizes)} for all {len(sizes)} arrays), more "
                           f"than the {limit} bytes of memory of {ctx}")


def _allocate(name, shape, dtype, stype, ctx, where):
    """A zero array; a failed allocation raises :class:`~sparsenet.base.OutOfMemoryError`
    naming ``name`` and its shape, not torch's allocator message."""
    try:
        return zeros(shape, ctx=ctx, dtype=dtype, stype=stype)
    except SparsenetError:
        raise
    except (RuntimeError, MemoryError) as e:  # torch's allocator
        raise OutOfMemoryError(f"{where}: cannot allocate {name} of shape {tuple(shape)} "
                               f"({dtype}, {stype}) on {ctx}: {e}") from e


def _clear(g):
    """Write a zero gradient: a dense buffer is zeroed, a sparse one stores nothing (gradient
    buffers are never autograd variables: no grad mode needed)."""
    if g.stype == DEFAULT:
        g._t.zero_()
    elif g.stype == ROW_SPARSE:  # no rows: empty slices of its own parts
        g._replace(RowSparseNDArray._from_parts(g._data[:0], g._indices[:0], g._shape))
    else:
        g._replace(zeros(g.shape, ctx=g.context, dtype=g.dtype, stype=g.stype))


def _group_contexts(nodes, group2ctx, ctx):
    """The context of each variable node: ``group2ctx`` of its ``ctx_group`` attribute (MXNet's
    placement by ``AttrScope(ctx_group=...)``), else ``ctx``."""
    if group2ctx is None:
        return {n.name: ctx for n in nodes}
    if not isinstance(group2ctx, dict):
        raise InvalidArgumentTypeError(f"simple_bind: group2ctx must be a dict from ctx_group "
                                       f"name to Context, got {type(group2ctx).__name__}")
    table = {str(g): as_context(c) for g, c in group2ctx.items()}
    out = {}
    for n in nodes:
        group = n.attrs.get("__ctx_group__", n.attrs.get("ctx_group"))
        out[n.name] = table.get(group, ctx)
    return out


def simple_bind(symbol, ctx, grad_req="write", type_dict=None, stype_dict=None, shapes=None,
                shared_exec=None, group2ctx=None, shared_arg_names=None, shared_buffer=None):
    """Infer shapes and dtypes, allocate zero arrays of the declared storage types, and bind.

    Arguments get ``stype_dict[name]``, else their ``Variable(stype=...)``, else
    dense storage. Gradient buffers get the storage type MXNet infers from the
    backward graph (:mod:`sparsenet.symbol.grad_stype`): row_sparse for the
    weight of ``dot(csr, w)`` or of ``Embedding(..., sparse_grad=True)``, dense
    for ``sum(w)``. Auxiliary states are zero arrays without gradients. With
    ``shared_exec``, arrays of the same name, shape, dtype and storage type are
    shared with that executor.

    >>> import sparsenet as mx
    >>> w = mx.sym.var('w', stype='row_sparse')
    >>> exe = simple_bind(w * 2, mx.cpu(), shapes={'w': (3, 1)})
    >>> exe.arg_dict['w'].stype, exe.grad_dict['w'].stype, exe.outputs[0].stype
    ('row_sparse', 'row_sparse', 'row_sparse')
    >>> e = mx.sym.Embedding(mx.sym.var('ids'), input_dim=5, output_dim=2, sparse_grad=True,
    ...                      name='emb')
    >>> simple_bind(e, mx.cpu(), grad_req={'emb_weight': 'write'},
    ...             shapes={'ids': (3,)}).grad_dict['emb_weight'].stype
    'row_sparse'
    """
    ctx = as_context(ctx) if ctx is not None else current_context()
    arg_nodes, aux_nodes = symbol._split_inputs()
    names, aux_names = [n.name for n in arg_nodes], [n.name for n in aux_nodes]
    shapes = dict(shapes or {})
    try:
        arg_shape, _, _, _ = propagate(symbol, shapes, type_dict)
    except InferenceError as e:
        raise SparsenetError(f"simple_bind: {e}") from None
    unknown = [k for k in shapes if k not in names and k not in aux_names]
    if unknown:
        raise InvalidArgumentError(f"simple_bind: {unknown} are not arguments of the symbol; its "
                                   f"arguments are {names}")
    missing = [n for n in names + aux_names if arg_shape[n] is None]
    if missing:
        example = ", ".join(f"{n}=(...)" for n in missing)
        raise ShapeError(f"simple_bind: cannot infer the shape of argument(s) {missing}; pass "
                         f"them as keywords (simple_bind(ctx, {example})) or declare "
                         f"Variable(shape=...)")
    _, arg_dtype, _, _ = _propagate_types(symbol, dict(type_dict or {}))
    stypes = arg_storage_types(symbol, stype_dict)
    reqs = dict(zip(names, _per_arg(grad_req, names, "simple_bind grad_req", default="null",
                                    ignored=aux_names)))
    grad_stypes = grad_storage_types(symbol, stypes) if any(
        r != "null" for r in reqs.values()) else {}
    shared_args = dict(shared_exec.arg_dict) if shared_exec is not None else {}
    shared_grads = shared_exec.grad_dict if shared_exec is not None else {}
    if shared_arg_names is not None:
        # MXNet: only these arguments come from shared_exec; the others (data, labels,
        # arguments that are not parameters) from shared_buffer, which keeps the new ones
        keep = set(shared_arg_names)
        shared_args = {n: a for n, a in shared_args.items() if n in keep}
    if shared_buffer is not None:
        for n in names:
            if n not in shared_args and (shared_arg_names is None or n not in keep) and \
                    n in shared_buffer and stypes[n] == "default":
                shared_args[n] = shared_buffer[n]
    shared_aux = shared_exec.aux_dict if shared_exec is not None else {}

    def reusable(old, n):
        return old is not None and old.shape == arg_shape[n] and old.stype == stypes[n] and \
            old.dtype == np.dtype(arg_dtype[n]).type

    new = [(f"argument '{n}'", arg_shape[n], arg_dtype[n], stypes[n]) for n in names
           if not reusable(shared_args.get(n), n)]
    new += [(f"gradient of '{n}'", arg_shape[n], arg_dtype[n], grad_stypes[n]) for n in names
            if reqs[n] != "null" and not reusable(shared_args.get(n), n)]
    new += [(f"auxiliary state '{n}'", arg_shape[n], arg_dtype[n], stypes[n])
            for n in aux_names if not reusable(shared_aux.get(n), n)]
    _check_fits(new, ctx, "simple_bind")

    places = _group_contexts(arg_nodes + aux_nodes, group2ctx, ctx)

    def alloc(what, n, stype):
        return _allocate(f"{what} '{n}'", arg_shape[n], arg_dtype[n], stype, places[n],
                         "simple_bind")

    args, grads = [], []
    for n in names:
        old = shared_args.get(n)
        if reusable(old, n):
            args.append(old)
            grads.append(shared_grads.get(n) if reqs[n] != "null" else None)
            continue
        args.append(alloc("argument", n, stypes[n]))
        grads.append(None if reqs[n] == "null" else alloc("gradient of", n, grad_stypes[n]))
        if shared_buffer is not None and stypes[n] == "default" and (
                shared_arg_names is None or n not in keep):
            shared_buffer[n] = args[-1]
    aux = []
    for n in aux_names:
        old = shared_aux.get(n)
        aux.append(old if reusable(old, n) else alloc("auxiliary state", n, stypes[n]))
    return Executor(symbol, ctx, args, grads, [reqs[n] for n in names], aux)
