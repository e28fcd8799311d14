"""Storage types of the gradient buffers ``simple_bind`` allocates, inferred as MXNet does.

MXNet decides an argument's gradient storage type from the backward graph:
the head gradients have their outputs' storage types, each operator's backward
gives its inputs' gradient storage types, and the gradients an argument
receives from several uses are summed (row_sparse only when every part is
row_sparse). The backward rules, measured with MXNet 1.9.1:

* ``dot(csr, w)`` (neither operand transposed): ``w`` gets a row_sparse gradient,
  dense or row_sparse ``w`` alike; ``dot(csr.T, w)`` gives a dense one.
* ``Embedding(..., sparse_grad=True)`` and ``contrib.SparseEmbedding``: the
  weight's gradient is row_sparse, whatever the weight's storage type.
* ``cast_storage``: the gradient has the storage type of the output gradient.
* The operators of :data:`ROW_SPARSE_BACKWARD` (``relu``, ``square``, ``abs``,
  ``w * 2``, ``w + w``, ``add_n``, ``retain``, ...): a row_sparse input of a
  node whose sparse kernel returns row_sparse gets the output gradient's
  storage type.
* Every other input gets a dense gradient, even where the forward output is
  row_sparse (``sqrt(w)``, ``tanh(w)``, ``clip(w)``, ``elemwise_mul(w, x)``),
  and of course for ``sum(w)``, ``FullyConnected(csr, w)``, ``dot(csr.T, w)``.

>>> import sparsenet as mx
>>> x = mx.sym.var('x', stype='csr')
>>> grad_storage_types(mx.sym.dot(x, mx.sym.var('w')), {'x': 'csr', 'w': 'default'})
{'x': 'default', 'w': 'row_sparse'}
"""
from ..ndarray.stype import DEFAULT, ROW_SPARSE
from .infer import KERNEL, storage_plan
from .op_traits import backward_stypes

__all__ = ["grad_storage_types", "BACKWARD_STYPE_RULES", "ROW_SPARSE_BACKWARD"]

#: Operators whose backward keeps a row_sparse gradient row_sparse (measured with MXNet
#: 1.9.1 by ``simple_bind`` on a row_sparse argument; registry names).
ROW_SPARSE_BACKWARD = frozenset({
    "relu", "square", "abs", "sign", "negative", "ceil", "floor", "round", "rint", "fix",
    "trunc", "_copy", "BlockGrad", "zeros_like", "_square_sum", "retain",
    "_mul_scalar", "_div_scalar", "_plus_scalar", "_minus_scalar",
    "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
    "_lesser_scalar", "_lesser_equal_scalar",
    "elemwise_add", "elemwise_sub", "add_n",
})


def _dot(in_stypes, params, ograd):
    rhs = ROW_SPARSE if (in_stypes[0] == "csr" and not params["transpose_a"]
                         and not params["transpose_b"]) else DEFAULT
    return [DEFAULT, rhs]


def _embedding(in_stypes, params, ograd):
    return [DEFAULT, ROW_SPARSE if params["sparse_grad"] else DEFAULT]


def _sparse_embedding(in_stypes, params, ograd):
    return [DEFAULT, ROW_SPARSE]


def _cast_storage(in_stypes, params, ograd):
    return [ROW_SPARSE if ograd == ROW_SPARSE else DEFAULT]


#: Operators whose backward storage types differ from the generic rule:
#: ``name -> fn(input stypes, bound params, output-gradient stype) -> input-gradient stypes``.
BACKWARD_STYPE_RULES = {
    "dot": _dot,
    "Embedding": _embedding,
    "_contrib_SparseEmbedding": _sparse_embedding,
    "cast_storage": _cast_storage,
}


def _generic(decision, ograd):
    keeps_rows = (decision.node.op.name in ROW_SPARSE_BACKWARD and decision.dispatch == KERNEL
                  and decision.out_stype == ROW_SPARSE and ograd == ROW_SPARSE)
    return [ROW_SPARSE if keeps_rows and s == ROW_SPARSE else DEFAULT
            for s in decision.in_stypes]


def _sum_of(parts):
    """Storage type of a sum of gradients (None: no gradient arrives)."""
    if not parts:
        return None
    return ROW_SPARSE if all(p == ROW_SPARSE for p in parts) else DEFAULT


def grad_storage_types(symbol, arg_stypes):
    """``{argument name: storage type of its gradient buffer}`` for ``symbol``.

    ``arg_stypes`` maps every argument to its storage type. An argument no
    gradient reaches gets a dense buffer.

    >>> import sparsenet as mx
    >>> w = mx.sym.var('w', stype='row_sparse')
    >>> grad_storage_types(w * 2, {'w': 'row_sparse'}), grad_storage_types(mx.sym.sum(w),
    ...                                                                    {'w': 'row_sparse'})
    ({'w': 'row_sparse'}, {'w': 'default'})
    """
    plan, entry_stypes = storage_plan(symbol, arg_stypes)
    parts = {}

    def key(node, i):
        return node.name if node.op is None else (id(node), i)

    for node, i in symbol._outputs:
        parts.setdefault(key(node, i), []).append(entry_stypes[key(node, i)])
    for decision in reversed(plan):
        node = decision.node
        ograds = [_sum_of(parts.get((id(node), i), [])) for i in range(node.num_outputs())]
        if all(g is None for g in ograds):
            continue  # no gradient flows through this node
        ograd = _sum_of([g or DEFAULT for g in ograds])
        rule = BACKWARD_STYPE_RULES.get(node.op.name)
        own = backward_stypes(node.op)  # a custom operator's infer_storage_type_backward
        if own is not None:
            in_grads = own(node.op.bind_params(node.params), decision.in_stypes, ograd)
        elif rule is not None:
            in_grads = rule(decision.in_stypes, node.op.bind_params(node.params), ograd)
        else:
            in_grads = _generic(decision, ograd)
        for (child, i), g in zip(node.inputs, in_grads):
            parts.setdefault(key(child, i), []).append(g)
    return {name: _sum_of(parts.get(name, [])) or DEFAULT for name in arg_stypes}
