"""Executors: a Symbol bound to arrays, run by the eager operators under ``sparsenet.autograd``.

Binding compiles the graph once: storage types are inferred node by node from
the registry rows (the ones the eager call dispatches on), each node that will
fall back to the dense kernel is reported once (``sparsenet.config`` policy:
a warning per node, an error, or nothing), and output arrays of the inferred
shapes, dtypes and storage types are allocated. ``forward`` then calls each
node's operator on the bound arrays — inside ``autograd.record`` when
``is_train`` — and ``backward`` asks ``torch.autograd`` for the gradients of the
arguments, stored by each argument's ``grad_req``. The gradient of a
row_sparse weight in ``dot(csr, weight)`` is row_sparse: only the rows the
batch touches.

Set ``MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING=1`` (or
``SPARSENET_INFER_STORAGE_TYPE_VERBOSE_LOGGING=1``) to log, at bind time, each
node's operator, input and output storage types and whether it dispatches a
sparse kernel, the dense kernel or a storage fallback (logger
``sparsenet.executor``).

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
import logging
import os
import sys

import numpy as np
import torch

from .. import autograd, config
from ..base import SparsenetError
from ..context import as_context, current_context
from ..ndarray.creation import zeros
from ..ndarray.ndarray import NDArray
from ..ndarray.stype import DEFAULT
from .grad_stype import grad_storage_types
from .infer import FALLBACK, InferenceError, arg_storage_types, propagate, storage_plan

__all__ = ["Executor", "Program", "simple_bind"]

_GRAD_REQS = ("write", "add", "null")
_VERBOSE_ENV = ("SPARSENET_INFER_STORAGE_TYPE_VERBOSE_LOGGING",
                "MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING")
logger = logging.getLogger("sparsenet.executor")


def _verbose():
    return any(os.environ.get(k, "0").strip() not in ("", "0") for k in _VERBOSE_ENV)


def _log(msg):
    if not logger.hasHandlers():  # MXNet always prints these; do not rely on logging config
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[sparsenet.executor] %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    logger.info(msg)


class _Step:
    """One operator node, compiled: operator, bound parameters, input and output slots."""

    __slots__ = ("op", "params", "inputs", "outputs", "fallback", "node")

    def __init__(self, node, inputs, outputs, fallback):
        self.node = node
        self.op = node.op
        self.params = node.op.bind_params(node.params)
        self.inputs, self.outputs, self.fallback = inputs, outputs, fallback


def _per_arg(value, names, what, default=None):
    """A per-argument value from a list (in argument order), a dict or one value for all."""
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"{what}: {unknown} are not arguments of the symbol; its "
                             f"arguments are {names}")
        return [value.get(n, default) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(f"{what}: got {len(value)} entries for {len(names)} arguments "
                             f"{names}")
        return list(value)
    return [value] * len(names)


class Program:
    """A Symbol compiled for given argument storage types: its operator calls, in order.

    :meth:`run` evaluates the graph on argument arrays with the eager
    operators, in the caller's autograd state (so a hybridized Gluon block's
    graph is recorded like its imperative calls). Compiling infers each node's
    storage decision from the registry rows, reports each falling-back node once
    (policy of :mod:`sparsenet.config`) and logs the plan when
    ``MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING=1``.

    >>> import sparsenet as mx
    >>> prog = Program(mx.sym.var('x') * 2 + 1, {'x': 'default'})
    >>> prog.run([mx.nd.array([1.0, 2.0])])[0].asnumpy()
    array([3., 5.], dtype=float32)
    """

    def __init__(self, symbol, arg_stypes):
        names = symbol.list_arguments()
        arg_stypes = arg_storage_types(symbol, arg_stypes)
        self.plan, entry_stypes = storage_plan(symbol, arg_stypes)
        slots = {n: i for i, n in enumerate(names)}
        nslots = len(names)
        steps = []
        verbose = _verbose()
        nodes = symbol._nodes()
        logged = 0
        for decision in self.plan:
            node = decision.node
            ins = [slots[c.name] if c.op is None else slots[(id(c), i)] for c, i in node.inputs]
            outs = []
            for i in range(node.num_outputs()):
                slots[(id(node), i)] = nslots
                outs.append(nslots)
                nslots += 1
            fallback = decision.dispatch == FALLBACK
            while verbose and nodes[logged] is not node:  # variables, in graph order
                if nodes[logged].op is None:
                    _log(f"node {logged} var '{nodes[logged].name}': "
                         f"{arg_stypes[nodes[logged].name]}")
                logged += 1
            if verbose:
                _log(f"node {logged} {node.op.name} '{node.name}': "
                     f"{decision.dispatch}; inputs ({', '.join(decision.in_stypes)}) -> "
                     f"outputs ({', '.join([decision.out_stype] * len(outs))})")
                logged += 1
            if fallback:
                config.report_fallback(node.op.name, decision.in_stypes,
                                       detail=f" at symbol node '{node.name}'",
                                       key=("symbol node", node.name, id(node)), count=False)
            steps.append(_Step(node, ins, outs, fallback))
        self.steps = steps
        self.num_args = len(names)
        self._free_slots = [None] * (nslots - len(names))
        self._has_fallback = any(st.fallback for st in steps)
        self.out_slots = [slots[n.name] if n.op is None else slots[(id(n), i)]
                          for n, i in symbol._outputs]
        self.out_stypes = [entry_stypes[n.name] if n.op is None else entry_stypes[(id(n), i)]
                           for n, i in symbol._outputs]

    def run(self, arrays):
        """The outputs for argument ``arrays`` (in ``list_arguments()`` order)."""
        values = list(arrays) + self._free_slots
        # each falling-back node was warned about once, when compiled
        quiet = self._has_fallback and config.get_storage_fallback() == "warn"
        for step in self.steps:
            inputs = [values[s] for s in step.inputs]
            try:
                if step.fallback and quiet:
                    with config.storage_fallback("silent"):
                        result = step.op._dispatch(inputs, step.params)
                else:
                    result = step.op._dispatch(inputs, step.params)
            except (ValueError, TypeError, IndexError) as e:
                located = _at_node(e, step.node)
                if located is e:
                    raise
                raise located from e
            if len(step.outputs) == 1 and not isinstance(result, list):
                values[step.outputs[0]] = result
            else:
                for s, r in zip(step.outputs, result):
                    values[s] = r
        return [values[s] for s in self.out_slots]


def _at_node(error, node):
    """``error`` with the symbol node it came from appended to its message."""
    try:
        return type(error)(f"{error} (operator {node.op.name} at symbol node '{node.name}')")
    except Exception:  # an exception class with another constructor: keep it as it is
        return error


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
    aux_states : list or dict, optional
        Must be empty: no registry operator has auxiliary states.

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
        names = symbol.list_arguments()
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"bind: different Variables share the name(s) {dup}; give each "
                             f"argument a unique name")
        self._arg_names = names
        if args is None:
            raise ValueError("bind: args is required (a list or dict of NDArrays); use "
                             "simple_bind() to allocate them")
        arrays = _per_arg(args, names, "bind args")
        missing = [n for n, a in zip(names, arrays) if a is None]
        if missing:
            raise ValueError(f"bind: no array given for argument(s) {missing}")
        for n, a in zip(names, arrays):
            if not isinstance(a, NDArray):
                raise TypeError(f"bind: argument '{n}' must be an NDArray, got "
                                f"{type(a).__name__}")
        self.arg_arrays = arrays
        self.grad_arrays = _per_arg(args_grad, names, "bind args_grad") if args_grad is not None \
            else [None] * len(names)
        reqs = _per_arg(grad_req, names, "bind grad_req", default="null")
        for n, r in zip(names, reqs):
            if r not in _GRAD_REQS:
                raise ValueError(f"bind: grad_req for '{n}' must be one of {_GRAD_REQS}, "
                                 f"got {r!r}")
        self._grad_req = [r if g is not None else "null" for r, g in zip(reqs, self.grad_arrays)]
        for n, a, g in zip(names, arrays, self.grad_arrays):
            if g is not None and tuple(g.shape) != tuple(a.shape):
                raise ValueError(f"bind: gradient buffer of '{n}' has shape {g.shape}, the "
                                 f"argument {a.shape}")
        if aux_states:
            raise ValueError(f"bind: the symbol has no auxiliary states, got {aux_states!r}")
        self.aux_arrays = []
        self._heads = None
        self._compile()
        self.outputs = self._allocate_outputs()

    # ------------------------------------------------------------------ compilation
    def _compile(self):
        self._program = Program(self._symbol, {n: a.stype for n, a in
                                               zip(self._arg_names, self.arg_arrays)})
        self._trained = [(a, g, req) for a, g, req in
                         zip(self.arg_arrays, self.grad_arrays, self._grad_req) if req != "null"]
        self._out_slots = self._program.out_slots
        self._out_stypes = self._program.out_stypes
        self._plan = self._program.plan

    def _allocate_outputs(self):
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
        try:
            _, _, entry_shape, entry_dtype = propagate(self._symbol, shapes, dtypes)
        except InferenceError as e:
            raise SparsenetError(f"bind: {e}") from None
        outs = []
        for (node, i), slot, stype in zip(self._symbol._outputs, self._out_slots,
                                          self._out_stypes):
            if node.op is None:
                outs.append(self.arg_arrays[slot])
                continue
            shape = entry_shape.get((id(node), i))
            if shape is None:
                raise SparsenetError(f"bind: cannot infer the shape of output "
                                     f"'{node.output_names()[i]}'")
            outs.append(zeros(shape, ctx=self._ctx, dtype=entry_dtype[(id(node), i)],
                              stype=stype))
        return outs

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
        """``{auxiliary state name: array}`` (always empty)."""
        return {}

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
            Record for :meth:`backward` and run layers such as Dropout in
            training mode.

        Returns
        -------
        list of NDArray
            :attr:`outputs`.
        """
        if kwargs:
            arg_dict = self.arg_dict
            for k, v in kwargs.items():
                if k not in arg_dict:
                    raise ValueError(f"forward: '{k}' is not an argument; arguments are "
                                     f"{self._arg_names}")
                if isinstance(v, NDArray):
                    v.copyto(arg_dict[k])
                else:
                    arg_dict[k][:] = v
        if is_train:
            for a, g, req in self._trained:
                a._grad, a._grad_req = g, req
                a._make_leaf(True)
            scope = autograd.record(train_mode=True)
        else:
            scope = autograd.pause(train_mode=False)
        with scope:
            heads = self._program.run(self.arg_arrays)
        self._heads = heads if is_train else None
        for i, (h, stype) in enumerate(zip(heads, self._out_stypes)):
            if self._out_slots[i] < len(self.arg_arrays):
                continue  # a variable output is the argument array itself
            self._store_output(i, h, stype)
        return self.outputs

    def _store_output(self, i, h, stype):
        if h.stype != stype:  # a kernel declined at run time and the dense path ran
            from ..ndarray.cast_storage import cast_storage
            with torch.no_grad():
                h = cast_storage(h, stype)
        out = self.outputs[i]
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
        if self._heads is None:
            raise SparsenetError("backward() needs a forward(is_train=True) first")
        if isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if out_grads is not None and len(out_grads) != len(self._heads):
            raise ValueError(f"backward: {len(self._heads)} outputs but {len(out_grads)} "
                             f"out_grads")
        outs, grads = [], []
        for k, h in enumerate(self._heads):
            t = h._autograd_tensor()
            if t is None or not t.requires_grad:
                continue
            outs.append(t)
            g = out_grads[k] if out_grads is not None else None
            grads.append(torch.ones_like(t) if g is None else autograd.head_grad_tensor(h, g))
        owners = [(a, g, req) for a, g, req in zip(self.arg_arrays, self.grad_arrays,
                                                   self._grad_req) if req != "null"]
        leaves = [a._autograd_tensor() for a, _, _ in owners]
        wanted = [t is not None and t.requires_grad for t in leaves]
        results = [None] * len(owners)
        if outs and any(wanted):
            got = torch.autograd.grad(outs, [t for t, w in zip(leaves, wanted) if w], grads,
                                      retain_graph=True, allow_unused=True)
            it = iter(got)
            results = [next(it) if w else None for w in wanted]
        with torch.no_grad():
            for (a, g, req), r in zip(owners, results):
                if r is not None:
                    a._grad, a._grad_req = g, req
                    a._store_grad(r)
                elif req == "write":
                    _clear(g)

    # ------------------------------------------------------------------ parameters
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy arrays into the arguments of the same name (storage types of the arguments kept).

        >>> import sparsenet as mx
        >>> exe = (mx.sym.var('w') * 2).simple_bind(mx.cpu(), w=(2,))
        >>> exe.copy_params_from({'w': mx.nd.ones((2,))})
        >>> exe.forward()[0].asnumpy()
        array([2., 2.], dtype=float32)
        """
        arg_dict = self.arg_dict
        for name, value in (arg_params or {}).items():
            if name in arg_dict:
                value.copyto(arg_dict[name])
            elif not allow_extra_params:
                raise ValueError(f"copy_params_from: '{name}' is not an argument of the "
                                 f"symbol; pass allow_extra_params=True to ignore it")
        if aux_params and not allow_extra_params:
            raise ValueError(f"copy_params_from: the symbol has no auxiliary states, got "
                             f"{sorted(aux_params)}")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new argument shapes, sharing the arrays whose shape is unchanged.

        Arguments named in ``kwargs`` take the new shapes; the others are
        inferred. An argument whose shape changes without being named needs
        ``partial_shaping=True``.
        """
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        given = {k: tuple(v) for k, v in kwargs.items()}
        unknown = [k for k in given if k not in shapes]
        if unknown:
            raise ValueError(f"reshape: {unknown} are not arguments; arguments are "
                             f"{self._arg_names}")
        arg_shape, _, _, _ = propagate(self._symbol, given)
        new_args, new_grads = [], []
        for n, a, g in zip(self._arg_names, self.arg_arrays, self.grad_arrays):
            shape = arg_shape[n] or shapes[n]
            if shape == tuple(a.shape):
                new_args.append(a)
                new_grads.append(g)
                continue
            if n not in given and not partial_shaping:
                raise ValueError(f"reshape: the shape of '{n}' changes from {a.shape} to "
                                 f"{shape} but it was not given; pass partial_shaping=True")
            new_args.append(zeros(shape, ctx=a.context, dtype=a.dtype, stype=a.stype))
            new_grads.append(None if g is None else
                             zeros(shape, ctx=g.context, dtype=g.dtype, stype=g.stype))
        return Executor(self._symbol, self._ctx, new_args, new_grads, self._grad_req, None)

    def debug_str(self):
        """The compiled plan: one line per operator node with its storage decision."""
        lines = [f"Symbol outputs: {self._symbol.list_outputs()}"]
        lines += [f"  {d!r}" for d in self._plan]
        return "\n".join(lines)

    def __repr__(self):
        return f"<Executor {self._symbol.list_outputs()} @{self._ctx}>"


def _clear(g):
    if g.stype == DEFAULT:
        g._t.zero_()
    else:
        g._replace(zeros(g.shape, ctx=g.context, dtype=g.dtype, stype=g.stype))


def simple_bind(symbol, ctx, grad_req="write", type_dict=None, stype_dict=None, shapes=None,
                shared_exec=None):
    """Infer shapes and dtypes, allocate zero arrays of the declared storage types, and bind.

    Arguments get ``stype_dict[name]``, else their ``Variable(stype=...)``, else
    dense storage. Gradient buffers get the storage type MXNet infers from the
    backward graph (:mod:`sparsenet.symbol.grad_stype`): row_sparse for the
    weight of ``dot(csr, w)`` or of ``Embedding(..., sparse_grad=True)``, dense
    for ``sum(w)``. With ``shared_exec``, arrays of the same name, shape, dtype
    and storage type are shared with that executor.

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
    names = symbol.list_arguments()
    shapes = dict(shapes or {})
    try:
        arg_shape, _, _, _ = propagate(symbol, shapes, type_dict)
    except InferenceError as e:
        raise SparsenetError(f"simple_bind: {e}") from None
    unknown = [k for k in shapes if k not in names]
    if unknown:
        raise ValueError(f"simple_bind: {unknown} are not arguments of the symbol; its "
                         f"arguments are {names}")
    missing = [n for n in names if arg_shape[n] is None]
    if missing:
        example = ", ".join(f"{n}=(...)" for n in missing)
        raise ValueError(f"simple_bind: cannot infer the shape of argument(s) {missing}; pass "
                         f"them as keywords (simple_bind(ctx, {example})) or declare "
                         f"Variable(shape=...)")
    from .infer import _propagate_types
    _, arg_dtype, _, _ = _propagate_types(symbol, {k: v for k, v in (type_dict or {}).items()})
    stypes = arg_storage_types(symbol, stype_dict)
    reqs = dict(zip(names, _per_arg(grad_req, names, "simple_bind grad_req", default="null")))
    grad_stypes = grad_storage_types(symbol, stypes) if any(
        r != "null" for r in reqs.values()) else {}
    shared_args = shared_exec.arg_dict if shared_exec is not None else {}
    shared_grads = shared_exec.grad_dict if shared_exec is not None else {}
    args, grads = [], []
    for n in names:
        shape, dtype, stype = arg_shape[n], arg_dtype[n], stypes[n]
        old = shared_args.get(n)
        if old is not None and old.shape == shape and old.stype == stype and \
                old.dtype == _np_type(dtype):
            args.append(old)
            grads.append(shared_grads.get(n) if reqs[n] != "null" else None)
            continue
        args.append(zeros(shape, ctx=ctx, dtype=dtype, stype=stype))
        grads.append(None if reqs[n] == "null" else
                     zeros(shape, ctx=ctx, dtype=dtype, stype=grad_stypes[n]))
    return Executor(symbol, ctx, args, grads, [reqs[n] for n in names], None)


def _np_type(dtype):
    return np.dtype(dtype).type

