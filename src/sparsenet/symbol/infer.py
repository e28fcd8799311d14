"""Shape, dtype and storage-type inference over a Symbol graph.

* Shapes and dtypes: each operator's dense definition (``op.fn``) runs on
  stride-0 zero tensors (one element each, expanded to the input shapes), or on
  torch meta tensors for large inputs, so the inferred output shapes and dtypes
  are by construction those of the eager path. Unknown input shapes are
  first completed by the operator's ``input_shapes`` rule when it has one
  (``FullyConnected``'s weight and bias, ``Embedding``'s weight, a loss output's
  label), which is how ``simple_bind(data=(32, 100))`` sizes the parameters.
  Inference also runs backwards through elementwise operators (``same_shape``):
  the shape a consumer requires of an entry (a *hint*) sizes the inputs of the
  elementwise node producing it, as MXNet's two-way inference does.
* Storage types: each node asks its operator's rule rows
  (:meth:`~sparsenet.ops.registry.Operator.infer_storage`) — the rows the eager
  call dispatches on — and records whether it runs a sparse kernel, the dense
  kernel, or a storage fallback.

>>> import sparsenet as mx
>>> x = mx.sym.var('x', stype='csr'); w = mx.sym.var('w', stype='row_sparse')
>>> y = mx.sym.broadcast_add(mx.sym.dot(x, w), mx.sym.var('b'))
>>> y.infer_shape(x=(4, 10), w=(10, 2), b=(1, 2))
([(4, 10), (10, 2), (1, 2)], [(4, 2)], [])
>>> y.infer_storage_type()
(['csr', 'row_sparse', 'default'], ['default'], [])
"""
import warnings

import numpy as np
import torch

from ..base import InvalidArgumentError, SparsenetError, numpy_dtype, torch_dtype
from ..ndarray.stype import DEFAULT, STYPES
from .op_traits import dtype_rule, input_shapes, output_shapes, output_stypes, same_shape

__all__ = ["infer_shape", "infer_type", "infer_storage_type", "propagate", "storage_plan",
           "arg_storage_types", "NodeStorage", "InferenceError", "KERNEL",
           "DENSE", "FALLBACK"]

KERNEL, DENSE, FALLBACK = "sparse kernel", "dense kernel", "storage fallback"


class InferenceError(SparsenetError, ValueError):
    """An operator node rejects the shapes or dtypes of its inputs.

    >>> import sparsenet as mx
    >>> y = mx.sym.dot(mx.sym.var('a'), mx.sym.var('b'), name='mm')
    >>> try:
    ...     y.infer_shape(a=(2, 3), b=(4, 1))
    ... except InferenceError as e:
    ...     print(str(e)[:40])
    operator dot (node 'mm') rejects its inp
    """


def _given(symbol, args, kwargs, what):
    """Map positional values to argument names and keywords to input names (arguments or
    auxiliary states, as MXNet); reject unknown names."""
    names = symbol.list_arguments()
    inputs = symbol.list_inputs()
    out = {}
    if args:
        if len(args) > len(names):
            raise InvalidArgumentError(
                f"{what}: got {len(args)} positional values for {len(names)} "
                f"arguments {names}")
        out.update({n: a for n, a in zip(names, args) if a is not None})
    unknown = [k for k in kwargs if k not in inputs]
    if unknown:
        aux = [n for n in inputs if n not in names]
        raise InvalidArgumentError(
            f"{what}: {unknown} are not arguments of the symbol; its arguments "
            f"are {names}" + (f" and its auxiliary states {aux}" if aux else ""))
    out.update({k: v for k, v in kwargs.items() if v is not None})
    return out


def _shape(s):
    if isinstance(s, (int, np.integer)):
        return (int(s),)
    return tuple(int(d) for d in s)


# ---------------------------------------------------------------------- shapes and dtypes
_META_ABOVE = 1 << 20  # input elements from which a node is inferred on meta tensors


def _run_dense(node, params, shapes, dtypes):
    """Output shapes and dtypes of ``node`` from its dense definition.

    Small inputs: one zero expanded to each input shape (no input memory); the
    operator computes on zeros. Large inputs (more than ``2**20`` elements in
    all): torch *meta* tensors, which compute nothing; their first use imports
    torch's Python meta registrations (seconds), which small graphs need not
    pay. Operators with data-dependent checks that meta tensors cannot run fall
    back to the zeros.
    """
    if sum(int(np.prod(s)) for s in shapes) > _META_ABOVE:
        meta = [torch.empty(s, dtype=torch_dtype(d), device="meta")
                for s, d in zip(shapes, dtypes)]
        try:
            return _outputs_of(node.op.fn, meta, params)
        except Exception:  # noqa: BLE001 - retried on zeros, which report real errors
            pass
    zeros = [torch.zeros((), dtype=torch_dtype(d)).expand(s) for s, d in zip(shapes, dtypes)]
    try:
        return _outputs_of(node.op.fn, zeros, params)
    except Exception as e:  # the operator's own message says what is wrong
        raise _node_error(node, shapes, dtypes, e) from None


def _run_node(node, params, shapes, dtypes):
    """Output shapes and dtypes of ``node``: its operator's own inference when it has one
    (``Custom``, whose property infers them; None where it cannot), else :func:`_run_dense`."""
    own = output_shapes(node.op)
    if own is None:
        return _run_dense(node, params, shapes, dtypes)
    out_dtypes = dtype_rule(node.op)(list(dtypes), params)[1]
    return list(own(params, shapes)), [numpy_dtype(d).name if d is not None else None
                                       for d in out_dtypes]


def _outputs_of(fn, tensors, params):
    with torch.no_grad():
        res = fn(*tensors, **params)
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    return ([tuple(r.shape) if r.dim() else (1,) for r in res],
            [numpy_dtype(r.dtype).name for r in res])


def _node_error(node, shapes, dtypes, e):
    inputs = ", ".join(f"{c.name}{list(s)}:{d}" for (c, _), s, d in
                       zip(node.inputs, shapes, dtypes))
    return InferenceError(f"operator {node.op.name} (node '{node.name}') rejects its inputs "
                          f"({inputs}): {e}")


def propagate(symbol, shapes=None, dtypes=None, fill_dtype="float32"):
    """Infer what can be inferred; return ``(arg_shapes, arg_dtypes, entry_shapes, entry_dtypes)``.

    ``shapes``/``dtypes`` map argument names to known values. The result maps
    argument names, and ``(node id, output index)`` entries, to shapes (None when
    unknown) and dtype names. An argument whose dtype nothing decides takes
    ``fill_dtype`` (None: stays unknown). Raises :class:`InferenceError` when an
    operator rejects the shapes it is given.

    >>> import sparsenet as mx
    >>> fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, name='fc')
    >>> arg_shape, arg_dtype, _, _ = propagate(fc, {'x': (5, 3)})
    >>> arg_shape['fc_weight'], arg_dtype['fc_weight']
    ((2, 3), 'float32')
    """
    shapes, dtypes = dict(shapes or {}), dict(dtypes or {})
    nodes = symbol._nodes()
    arg_shape, arg_dtype = {}, {}
    for n in nodes:
        if n.op is None:
            given = shapes.get(n.name)
            arg_shape[n.name] = _shape(given) if given is not None else n.shape()
            d = dtypes.get(n.name)
            arg_dtype[n.name] = numpy_dtype(d).name if d is not None else n.dtype()
    entry_shape, entry_dtype = {}, {}
    bound = {id(n): n.op.bind_params(n.params) for n in nodes if n.op is not None}

    hint = {}  # (node id, output index) -> the shape a consumer requires of that entry

    def get(c, i):
        if c.op is None:
            return arg_shape[c.name], arg_dtype[c.name]
        return entry_shape.get((id(c), i)), entry_dtype.get((id(c), i))

    def require(c, i, shape):
        """Record that input entry ``(c, i)`` must have ``shape``; return whether news."""
        if c.op is None:
            if arg_shape[c.name] is None:
                arg_shape[c.name] = tuple(int(d) for d in shape)
                return True
            return False
        if (id(c), i) in entry_shape or (id(c), i) in hint:
            return False
        hint[(id(c), i)] = tuple(int(d) for d in shape)
        return True

    for _ in range(len(nodes) + 1):
        changed = False
        for n in nodes:
            if n.op is None or (id(n), 0) in entry_shape:
                continue
            params = bound[id(n)]
            ins = [get(c, i) for c, i in n.inputs]
            in_shapes = [s for s, _ in ins]
            complete = input_shapes(n.op)
            if complete is not None and any(s is None for s in in_shapes):
                filled = complete(list(in_shapes), params)
                for (c, i), old, new in zip(n.inputs, in_shapes, filled):
                    if old is None and new is not None:
                        changed |= require(c, i, new)
                ins = [get(c, i) for c, i in n.inputs]
                in_shapes = [s for s, _ in ins]
            if same_shape(n.op) and any(s is None for s in in_shapes):
                known = next((s for s in in_shapes if s is not None), hint.get((id(n), 0)))
                if known is not None:
                    for (c, i), old in zip(n.inputs, in_shapes):
                        if old is None:
                            changed |= require(c, i, known)
                ins = [get(c, i) for c, i in n.inputs]
                in_shapes = [s for s, _ in ins]
            changed |= _fill_rule_dtypes(n, ins, params, arg_dtype)
            ins = [get(c, i) for c, i in n.inputs]
            known = [d for _, d in ins if d is not None]
            for c, _ in n.inputs:
                fill = known[0] if known else fill_dtype
                if c.op is None and arg_dtype[c.name] is None and fill is not None:
                    arg_dtype[c.name] = fill
                    changed = True
            ins = [get(c, i) for c, i in n.inputs]
            if any(s is None for s, _ in ins) or any(d is None for _, d in ins):
                continue
            out_shapes, out_dtypes = _run_node(n, params, [s for s, _ in ins],
                                                [d for _, d in ins])
            for i, (s, d) in enumerate(zip(out_shapes, out_dtypes)):
                entry_shape[(id(n), i)], entry_dtype[(id(n), i)] = s, d
            changed = True
        if not changed:
            break
    return arg_shape, arg_dtype, entry_shape, entry_dtype


def _fill_rule_dtypes(node, ins, params, arg_dtype):
    """Give the unknown-dtype variables at ``node``'s inputs what its operator's
    :func:`~sparsenet.ops.registry.dtype_rule` decides; return whether any changed."""
    rule = dtype_rule(node.op)
    in_dtypes = [d for _, d in ins]
    if rule is None or all(d is not None for d in in_dtypes):
        return False
    filled, _ = rule(list(in_dtypes), params)
    changed = False
    for (c, _), old, new in zip(node.inputs, in_dtypes, filled):
        if old is None and new is not None and c.op is None:
            arg_dtype[c.name] = numpy_dtype(new).name
            changed = True
    return changed


def _outputs(symbol, arg_values, entry_values):
    out = []
    for node, i in symbol._outputs:
        out.append(arg_values[node.name] if node.op is None else entry_values.get((id(node), i)))
    return out


def infer_shape(symbol, args, kwargs, partial=False):
    """See :meth:`Symbol.infer_shape`.

    >>> import sparsenet as mx
    >>> infer_shape(mx.sym.var('a') * 2, (), {'a': (3,)}, partial=False)
    ([(3,)], [(3,)], [])
    """
    given = _given(symbol, args, kwargs, "infer_shape")
    arg_shape, _, entry_shape, _ = propagate(symbol, shapes=given)
    names, aux = symbol.list_arguments(), symbol.list_auxiliary_states()
    args_out = [arg_shape[n] for n in names]
    aux_out = [arg_shape[n] for n in aux]
    outs = _outputs(symbol, arg_shape, entry_shape)
    if partial:
        return [s or () for s in args_out], [s or () for s in outs], [s or () for s in aux_out]
    missing = [n for n, s in zip(names + aux, args_out + aux_out) if s is None]
    if missing or any(s is None for s in outs):
        warnings.warn("Cannot decide shape for the following arguments (give them to "
                      "infer_shape or declare Variable(shape=...)): " + ", ".join(missing),
                      stacklevel=3)
        return None, None, None
    return args_out, outs, aux_out


def infer_type(symbol, args, kwargs, partial=False):
    """See :meth:`Symbol.infer_type` (and ``infer_type_partial``: None where unknown).

    >>> import sparsenet as mx
    >>> infer_type(mx.sym.var('a') * 2, (), {'a': 'float16'})[1]
    [<class 'numpy.float16'>]
    >>> infer_type(mx.sym.var('a') + mx.sym.var('b'), (), {}, partial=True)
    ([None, None], [None], [])
    """
    given = _given(symbol, args, kwargs, "infer_type")
    dtypes = {k: numpy_dtype(v).name for k, v in given.items()}
    fill = None if partial else "float32"
    _, arg_dtype, _, entry_dtype = _propagate_types(symbol, dtypes, fill_dtype=fill)
    names, aux = symbol.list_arguments(), symbol.list_auxiliary_states()
    as_type = lambda d: np.dtype(d).type if d is not None else None  # noqa: E731
    return ([as_type(arg_dtype[n]) for n in names],
            [as_type(d) for d in _outputs(symbol, arg_dtype, entry_dtype)],
            [as_type(arg_dtype[n]) for n in aux])


def _propagate_types(symbol, dtypes, fill_dtype="float32"):
    """Types need shapes for the dense run; nodes whose shapes are unknown use a rule.

    The rule: the operator's own :func:`~sparsenet.ops.registry.dtype_rule` when it
    has one; else an operator with a ``dtype`` parameter (or a fixed
    ``output_dtype``) gives that dtype, any other gives the dtype of its first
    input. Unknown dtypes become ``fill_dtype`` (None: they stay None).
    """
    arg_shape, arg_dtype, entry_shape, entry_dtype = propagate(symbol, dtypes=dtypes,
                                                               fill_dtype=fill_dtype)
    for n in symbol._nodes():
        if n.op is None or (id(n), 0) in entry_dtype:
            continue
        rule = dtype_rule(n.op)
        if rule is not None:
            ins = [arg_dtype[c.name] if c.op is None else entry_dtype.get((id(c), i))
                   for c, i in n.inputs]
            _, outs = rule(ins, n.op.bind_params(n.params))
            for i, d in enumerate(outs):
                entry_dtype[(id(n), i)] = numpy_dtype(d).name if d is not None else fill_dtype
            continue
        first = n.inputs[0] if n.inputs else None
        d = n.params.get("dtype") or n.op.output_dtype
        if d is None and first is not None:
            c, i = first
            d = arg_dtype[c.name] if c.op is None else entry_dtype.get((id(c), i))
        for i in range(n.num_outputs()):
            entry_dtype[(id(n), i)] = numpy_dtype(d).name if d is not None else fill_dtype
    for name, d in arg_dtype.items():
        if d is None:
            arg_dtype[name] = fill_dtype
    return arg_shape, arg_dtype, entry_shape, entry_dtype


# ---------------------------------------------------------------------- storage types
class NodeStorage:
    """The storage decision of one operator node: input and output stypes, dispatch kind.

    >>> import sparsenet as mx
    >>> plan, _ = storage_plan(mx.sym.log(mx.sym.var('x'), name='l'), {'x': 'csr'})
    >>> plan[0]
    log 'l': (csr) -> default [storage fallback]
    """

    __slots__ = ("node", "in_stypes", "out_stype", "dispatch", "out_stypes")

    def __init__(self, node, in_stypes, out_stype, dispatch, out_stypes=None):
        self.node, self.in_stypes = node, tuple(in_stypes)
        self.out_stype, self.dispatch = out_stype, dispatch
        # one per output (they differ only for an operator deciding them itself: Custom)
        self.out_stypes = tuple(out_stypes or [out_stype] * node.num_outputs())

    def __repr__(self):
        return (f"{self.node.op.name} '{self.node.name}': ({', '.join(self.in_stypes)}) -> "
                f"{self.out_stype} [{self.dispatch}]")


def storage_plan(symbol, arg_stypes):
    """Per-node storage decisions from the registry rows, inputs before users.

    Returns ``(plan, entry_stypes)``: ``plan`` is a list of :class:`NodeStorage`
    for the operator nodes; ``entry_stypes`` maps ``(node id, output index)`` and
    argument names to storage types.

    >>> import sparsenet as mx
    >>> y = mx.sym.negative(mx.sym.var('x'), name='n')
    >>> [d.dispatch for d in storage_plan(y, {'x': 'csr'})[0]]
    ['sparse kernel']
    """
    stypes = dict(arg_stypes)
    plan = []
    for n in symbol._nodes():
        if n.op is None:
            stypes.setdefault(n.name, n.stype())
            continue
        ins = [stypes[c.name] if c.op is None else stypes[(id(c), i)] for c, i in n.inputs]
        params = n.op.bind_params(n.params)
        own = output_stypes(n.op)
        if own is not None:  # the operator decides (a custom operator's property)
            outs = list(own(params, ins))
            for i, st in enumerate(outs):
                stypes[(id(n), i)] = st
            dispatch = KERNEL if any(st != DEFAULT for st in ins + outs) else DENSE
            plan.append(NodeStorage(n, ins, outs[0] if outs else DEFAULT, dispatch, outs))
            continue
        out, ok = n.op.infer_storage(ins, params)
        if not ok:
            dispatch = FALLBACK
        elif n.op.find_rule(tuple(ins), params) is not None and (
                any(s != DEFAULT for s in ins) or out != DEFAULT):
            dispatch = KERNEL
        else:
            dispatch = DENSE
        for i in range(n.num_outputs()):
            stypes[(id(n), i)] = out
        plan.append(NodeStorage(n, ins, out, dispatch))
    return plan, stypes


def arg_storage_types(symbol, given=None):
    """Each input's stype (arguments and auxiliary states): the given one, else its
    Variable's, else 'default'.

    >>> import sparsenet as mx
    >>> y = mx.sym.var('a', stype='csr') + mx.sym.var('b')
    >>> arg_storage_types(y, {'b': 'row_sparse'})
    {'a': 'csr', 'b': 'row_sparse'}
    """
    given = dict(given or {})
    out = {}
    for n in symbol._input_nodes():
        s = given.get(n.name, n.stype())
        if s not in STYPES:
            raise InvalidArgumentError(
                f"argument '{n.name}': storage type must be one of {STYPES}, "
                f"got {s!r}")
        out[n.name] = s
    return out


def infer_storage_type(symbol, args, kwargs):
    """See :meth:`Symbol.infer_storage_type`.

    >>> import sparsenet as mx
    >>> infer_storage_type(mx.sym.var('a') * 2, (), {'a': 'row_sparse'})
    (['row_sparse'], ['row_sparse'], [])
    """
    given = _given(symbol, args, kwargs, "infer_storage_type")
    arg_stypes = arg_storage_types(symbol, given)
    _, stypes = storage_plan(symbol, arg_stypes)
    names, aux = symbol.list_arguments(), symbol.list_auxiliary_states()
    outs = [stypes[n.name] if n.op is None else stypes[(id(n), i)] for n, i in symbol._outputs]
    return [arg_stypes[n] for n in names], outs, [arg_stypes[n] for n in aux]
