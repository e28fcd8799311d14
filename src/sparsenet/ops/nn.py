"""Neural-network layers as operators: FullyConnected, Embedding, Activation, Dropout, ...

``FullyConnected`` on a CSR input runs a sparse kernel (MXNet densifies the
batch) and ``Embedding`` gives a row_sparse weight gradient when the weight's
gradient buffer is row_sparse.

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 3], [0, 1, 2]), shape=(2, 4))
>>> w = mx.nd.ones((3, 4)); b = mx.nd.zeros((3,))
>>> mx.nd.FullyConnected(x, w, b, num_hidden=3).asnumpy()
array([[1., 1., 1.],
       [2., 2., 2.]], dtype=float32)
"""
import numpy as np
import torch
import torch.nn.functional as F

from .. import recording
from ..base import IndexOutOfRangeError, InvalidArgumentError, ShapeError
from ..ndarray.ndarray import NDArray
from .dot import _wants_sparse_grad, csr_dense_t_mm
from .layer_common import LayerParameterError
from .registry import (CSR, DEFAULT, ROW_SPARSE, defop, dtype_rule, input_shapes, output_shapes,
                       rule)

__all__ = ["FullyConnected", "Embedding", "Activation", "Dropout", "LeakyReLU"]


@defop
def FullyConnected(data, weight, bias=None, *, num_hidden=0, no_bias=False,  # noqa: N802
                   flatten=True):
    """Affine layer ``data @ weight.T + bias`` with ``weight`` of shape ``(num_hidden, in)``.

    With ``flatten`` the input is reshaped to ``(batch, -1)`` first; otherwise
    the product applies to the last axis. ``bias`` has shape ``(num_hidden,)``
    or ``(num_hidden, 1)`` (as MXNet accepts); either adds ``bias[j]`` to
    output column ``j``.

    >>> import sparsenet as mx
    >>> mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((3, 2)), mx.nd.zeros((3,)),
    ...                      num_hidden=3).asnumpy()
    array([[2., 2., 2.]], dtype=float32)
    >>> mx.nd.FullyConnected(mx.nd.ones((2, 2)), mx.nd.ones((3, 2)),
    ...                      mx.nd.array([[1.0], [2.0], [3.0]]), num_hidden=3).asnumpy()
    array([[3., 4., 5.],
           [3., 4., 5.]], dtype=float32)
    """
    x = data.reshape(data.shape[0], -1) if flatten and data.dim() != 2 else data
    if weight.dim() != 2 or weight.shape[1] != x.shape[-1]:
        raise ShapeError(f"FullyConnected: weight shape {tuple(weight.shape)} does not match "
                         f"input features {x.shape[-1]} (expected ({num_hidden or '?'}, "
                         f"{x.shape[-1]}))")
    return F.linear(x, weight, None if no_bias or bias is None else _bias_vector(bias, weight))


def _bias_vector(bias, weight):
    """The bias as a ``(num_hidden,)`` tensor; MXNet also accepts ``(num_hidden, 1)``."""
    n = weight.shape[0]
    if bias.dim() == 1 and bias.shape[0] == n:  # the common case first (per-step path)
        return bias
    if tuple(bias.shape) == (n, 1):
        return bias.reshape(n)
    raise InvalidArgumentError(f"FullyConnected: bias must have shape ({n},) or ({n}, 1) for "
                               f"num_hidden={n}, got {tuple(bias.shape)}")


def _fc_csr(data, weight, bias=None, *, num_hidden=0, no_bias=False, flatten=True):
    if weight.ndim != 2 or not data._data.dtype.is_floating_point:
        return NotImplemented
    if weight.shape[1] != data.shape[1]:
        raise ShapeError(f"FullyConnected: weight shape {weight.shape} does not match input "
                         f"features {data.shape[1]}")
    out = csr_dense_t_mm(data, weight)
    if bias is not None and not no_bias:
        out = out + _bias_vector(bias._t, weight._t)
    return NDArray(out)


rule(FullyConnected, CSR, DEFAULT, out=DEFAULT)(_fc_csr)
rule(FullyConnected, CSR, DEFAULT, DEFAULT, out=DEFAULT)(_fc_csr)


@input_shapes(FullyConnected)
def _fc_input_shapes(shapes, params):
    data, weight, bias = (list(shapes) + [None] * 3)[:3]
    n = params["num_hidden"]
    if data is not None and weight is None and n:
        features = int(np.prod(data[1:])) if params["flatten"] else data[-1]
        weight = (n, features)
    if bias is None and n and not params["no_bias"]:
        bias = (n,)
    return [data, weight, bias][:max(len(shapes), 2 if params["no_bias"] else 3)]


@defop
def Embedding(data, weight, *, input_dim=0, output_dim=0, dtype="float32",  # noqa: N802
              sparse_grad=False):
    """Look up rows of ``weight`` (``input_dim x output_dim``) at the integer ids ``data``.

    Ids must lie in ``[0, input_dim)``. The gradient of a weight variable
    travels as a sparse tensor of the looked-up rows and is stored in the
    weight's gradient buffer: row_sparse (sorted unique ids) or dense, whatever
    ``sparse_grad`` says (Gluon's ``Embedding(sparse_grad=True)`` gives the
    weight a row_sparse buffer).

    >>> import sparsenet as mx
    >>> w = mx.nd.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> mx.nd.Embedding(mx.nd.array([2, 0]), w, input_dim=3, output_dim=2).asnumpy()
    array([[4., 5.],
           [0., 1.]], dtype=float32)
    """
    return lookup_rows(data, weight, sparse_grad)


_INT_IDS = (torch.int64, torch.int32)


def _checked_ids(data, n):
    """The ids as an integer tensor (int32 and int64 ids as they are, others truncated to
    int64), checked against ``[0, n)``: :class:`~sparsenet.base.IndexOutOfRangeError`
    names the first bad extreme.

    >>> _checked_ids(torch.tensor([2.0, 0.0]), 3)
    tensor([2, 0])
    >>> _checked_ids(torch.tensor([3]), 3)
    Traceback (most recent call last):
    ...
    sparsenet.base.IndexOutOfRangeError: Embedding: id 3 is out of range [0, 3) (input_dim=3)
    """
    ids = data if data.dtype in _INT_IDS else data.to(torch.int64)
    if ids.numel():
        lo, hi = torch.aminmax(ids)
        lo, hi = int(lo), int(hi)
        if lo < 0 or hi >= n:
            bad = lo if lo < 0 else hi
            raise IndexOutOfRangeError(f"Embedding: id {bad} is out of range [0, {n}) "
                                       f"(input_dim={n})")
    return ids


def lookup_rows(data, weight, sparse=False):
    """``weight``'s rows at the ids ``data`` (torch's embedding lookup, a sparse gradient
    when ``sparse``), the ids checked against ``[0, weight.shape[0])`` as
    :func:`_checked_ids` checks them, at no cost when they are in range: on the CPU the
    lookup itself checks every id (its IndexError, raised before anything is computed,
    becomes the :class:`~sparsenet.base.IndexOutOfRangeError` that names the id); on
    other devices (where a bad id is a device-side assert) the ids are checked first.

    >>> lookup_rows(torch.tensor([1.0]), torch.tensor([[0.0], [5.0]]))
    tensor([[5.]])
    >>> lookup_rows(torch.tensor([-1]), torch.zeros(2, 1))
    Traceback (most recent call last):
    ...
    sparsenet.base.IndexOutOfRangeError: Embedding: id -1 is out of range [0, 2) (input_dim=2)
    """
    if not weight.is_cpu:
        return torch.embedding(weight, _checked_ids(data, weight.shape[0]), -1, False, sparse)
    ids = data if data.dtype in _INT_IDS else data.to(torch.int64)
    try:
        return torch.embedding(weight, ids, -1, False, sparse)
    except IndexError:
        _checked_ids(ids, weight.shape[0])  # names the bad id
        raise


@input_shapes(Embedding)
def _embedding_input_shapes(shapes, params):
    data, weight = shapes
    if weight is None and params["input_dim"] and params["output_dim"]:
        weight = (params["input_dim"], params["output_dim"])
    return [data, weight]


@output_shapes(Embedding)
def _embedding_output_shapes(params, shapes):
    """The ids' shape followed by the weight's row shape (MXNet's Embedding shape rule)."""
    data, weight = shapes
    return [tuple(data) + tuple(weight[1:])]


@dtype_rule(Embedding)
def _embedding_dtypes(dtypes, params):
    """The weight is ``dtype`` unless given; the output is the weight's (MXNet's rule)."""
    data, weight = dtypes
    if weight is None:
        weight = np.dtype(params.get("dtype") or "float32").name
    return [data, weight], [weight]


@rule(Embedding, DEFAULT, DEFAULT, out=DEFAULT)
def _embedding_dense_weight(data, weight, *, input_dim=0, output_dim=0, dtype="float32",
                            sparse_grad=False):
    return NDArray(lookup_rows(data._t, weight._t, _wants_sparse_grad(weight)))


@rule(Embedding, DEFAULT, ROW_SPARSE, out=DEFAULT)
def _embedding_rsp_weight(data, weight, **params):
    idx = weight._indices
    if weight.ndim == 2 and idx.numel() and weight._stores_every_row():
        # a Module's weight: ids are positions, checked by the lookup as a dense weight's
        rows = lookup_rows(data._t, weight._data, _wants_sparse_grad(weight))
        return NDArray(rows)
    ids = _checked_ids(data._t, weight.shape[0])
    flat = ids.reshape(-1)
    if idx.numel() == 0:
        rows = torch.zeros(flat.numel(), *weight.shape[1:], dtype=weight._data.dtype,
                           device=weight.device)
    elif weight._stores_every_row():
        rows = weight._data.index_select(0, flat)
    else:
        flat = flat.to(idx.dtype)
        pos = torch.searchsorted(idx, flat).clamp_(max=idx.numel() - 1)
        hit = (idx[pos] == flat).to(weight._data.dtype)
        mask = hit.reshape((-1,) + (1,) * (weight.ndim - 1))
        if weight.ndim == 2:  # a variable's gradient travels as the looked-up rows (zero ones
            # included, as MXNet gives them)
            rows = F.embedding(pos, weight._data, sparse=_wants_sparse_grad(weight)) * mask
        else:
            rows = weight._data.index_select(0, pos) * mask
    return NDArray(rows.reshape(tuple(ids.shape) + tuple(weight.shape[1:])))


@defop
def Activation(data, *, act_type="relu"):  # noqa: N802
    """Activation function: 'relu', 'sigmoid', 'tanh', 'softrelu' or 'softsign'.

    >>> import sparsenet as mx
    >>> mx.nd.Activation(mx.nd.array([-1.0, 0.0]), act_type='sigmoid').asnumpy()
    array([0.26894143, 0.5       ], dtype=float32)
    """
    if act_type == "relu":
        return torch.relu(data)
    if act_type == "sigmoid":
        return torch.sigmoid(data)
    if act_type == "tanh":
        return torch.tanh(data)
    if act_type == "softrelu":
        return F.softplus(data)
    if act_type == "softsign":
        return F.softsign(data)
    raise InvalidArgumentError(f"Activation: act_type must be relu, sigmoid, tanh, softrelu or "
                               f"softsign, got {act_type!r}")


def _relu_like(p):
    """act_type in ('relu', 'tanh', 'softsign')"""
    return p["act_type"] in ("relu", "tanh", "softsign")


@rule(Activation, CSR, out=CSR, when=_relu_like)
@rule(Activation, ROW_SPARSE, out=ROW_SPARSE, when=_relu_like)
def _activation_sparse(data, *, act_type):
    return data._with_data(Activation.fn(data._data, act_type=act_type))


@defop
def Dropout(data, *, p=0.5, mode="training", axes=()):  # noqa: N802
    """Randomly zero elements with probability ``p`` (scaled by ``1/(1-p)``) while training.

    Outside training (``autograd.train_mode``) it is the identity, unless
    ``mode='always'``.

    >>> import sparsenet as mx
    >>> mx.nd.Dropout(mx.nd.ones((3,)), p=0.5).asnumpy()
    array([1., 1., 1.], dtype=float32)
    """
    if p <= 0 or not (recording.is_training() or mode == "always"):
        return data.clone()
    if axes:
        mask_shape = [1 if i in axes else s for i, s in enumerate(data.shape)]
        mask = (torch.rand(mask_shape, device=data.device) >= p).to(data.dtype) / (1 - p)
        return data * mask
    return F.dropout(data, p=p, training=True)


def _prelu_needs_gamma(params):
    return ("gamma",) if params["act_type"] == "prelu" else ()


# outputs named output/mask; PReLU's gamma is created (starting at 0.25) when absent (MXNet 1.9.1)
@defop(num_outputs=lambda p: 2 if p["act_type"] == "rrelu" else 1,
       output_names=("output", "mask"), input_inits={"gamma": '["Constant", {"value": 0.25}]'},
       required_inputs=_prelu_needs_gamma)
def LeakyReLU(data, gamma=None, *, act_type="leaky", slope=0.25,  # noqa: N802
              lower_bound=0.125, upper_bound=0.334):
    """Leaky ReLU family, chosen by ``act_type``.

    * ``'leaky'``: ``x`` if ``x > 0`` else ``slope * x``;
    * ``'prelu'``: the same with the learned ``gamma`` as slope, one value or one
      per channel (axis 1); its gradient is ``sum(x * grad)`` over ``x <= 0``;
    * ``'rrelu'``: while training, a slope drawn uniformly from
      ``[lower_bound, upper_bound)`` for each element, else their mean; returns
      ``[output, mask]``, the mask holding the drawn slopes (zeros outside
      training, as in MXNet);
    * ``'elu'`` (``slope`` is alpha), ``'selu'``, ``'gelu'`` (the erf form).

    >>> import sparsenet as mx
    >>> mx.nd.LeakyReLU(mx.nd.array([-1.0, 2.0]), slope=0.1).asnumpy()
    array([-0.1,  2. ], dtype=float32)
    >>> mx.nd.LeakyReLU(mx.nd.array([[-1.0, -1.0]]), mx.nd.array([0.1, 0.2]),
    ...                 act_type='prelu').asnumpy()
    array([[-0.1, -0.2]], dtype=float32)
    """
    if act_type == "leaky":
        return F.leaky_relu(data, slope)
    if act_type == "prelu":
        return _prelu(data, gamma)
    if act_type == "rrelu":
        if recording.is_training():
            mask = torch.empty_like(data).uniform_(lower_bound, upper_bound)
        else:
            mask = torch.zeros_like(data)
        neg = mask if recording.is_training() else (lower_bound + upper_bound) / 2
        return torch.where(data > 0, data, data * neg), mask
    if act_type == "elu":
        return F.elu(data, slope)
    if act_type == "selu":
        return F.selu(data)
    if act_type == "gelu":
        return F.gelu(data)
    raise LayerParameterError(f"LeakyReLU: act_type must be 'leaky', 'prelu', 'rrelu', 'elu', "
                              f"'selu' or 'gelu', got {act_type!r}")


@input_shapes(LeakyReLU)
def _prelu_input_shapes(shapes, params):
    """PReLU's gamma: one slope per channel (axis 1 of data), as MXNet infers it."""
    shapes = list(shapes)
    if len(shapes) > 1 and shapes[1] is None and shapes[0] is not None and len(shapes[0]) > 1:
        shapes[1] = (shapes[0][1],)
    return shapes


def _prelu(data, gamma):
    if gamma is None:
        raise LayerParameterError("LeakyReLU: act_type='prelu' needs the gamma input (the "
                                  "slopes)")
    if gamma.numel() != 1:
        if data.dim() < 2 or gamma.numel() != data.shape[1]:
            raise LayerParameterError(f"LeakyReLU: prelu's gamma must hold 1 value or one per "
                                      f"channel (axis 1 of data {tuple(data.shape)}), got "
                                      f"shape {tuple(gamma.shape)}")
        gamma = gamma.reshape((1, -1) + (1,) * (data.dim() - 2))
    else:
        gamma = gamma.reshape(())
    return torch.where(data > 0, data, data * gamma)
