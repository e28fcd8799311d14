"""``foreach`` on NDArrays (MXNet ``mx.nd.contrib.foreach``) and the nesting helpers it shares
with the symbolic loop (:mod:`sparsenet.symbol.control_flow`).

``foreach(body, data, init_states)`` runs ``out, states = body(data[i], states)`` for every
``i`` along axis 0 of ``data`` and stacks the outputs along a new axis 0. ``data``, the
states and the outputs are an array or a (nested) list of arrays. On NDArrays it is a Python
loop of eager calls, so ``autograd.record()`` records every step.

>>> import sparsenet as mx
>>> step = lambda x, s: (x + s[0], [x + s[0]])
>>> x = mx.nd.array([[1.0], [2.0], [3.0]])
>>> outs, states = mx.nd.contrib.foreach(step, x, [mx.nd.zeros((1,))])
>>> outs.asnumpy().ravel(), states[0].asnumpy()
(array([1., 3., 6.], dtype=float32), array([6.], dtype=float32))
"""
from ..base import InvalidArgumentError, InvalidArgumentTypeError
from ..ndarray.ndarray import NDArray
from .indexing import stack

__all__ = ["foreach", "flatten_nested", "regroup_nested", "loop_length"]


def flatten_nested(args, leaf, what, width=None, none=False):
    """``(flat list of leaves, format)`` of an array or a (nested) list of arrays.

    The format is what :func:`regroup_nested` needs to rebuild the nesting: ``0`` for a
    leaf, ``n`` for a leaf that stands for ``n`` outputs (``width(leaf) = n > 1``: a
    multi-output Symbol, split into its outputs), a list of formats for a list.

    Parameters
    ----------
    args : leaf or (nested) list or tuple of leaves
    leaf : type
        The type of a leaf (NDArray, Symbol).
    what : str
        What ``args`` is, for the error message ("foreach input", ...).
    width : callable, optional
        ``width(leaf) -> (number of outputs, list of single-output leaves)``.
    none : bool
        Accept ``None`` (format ``-1``, no leaf), as a hybridized block's arguments may hold.

    Examples
    --------
    >>> import sparsenet as mx
    >>> a, b = mx.nd.zeros((1,)), mx.nd.ones((1,))
    >>> flat, fmt = flatten_nested([a, [b]], NDArray, 'states')
    >>> len(flat), fmt
    (2, [0, [0]])
    """
    if args is None and none:
        return [], -1
    if isinstance(args, (list, tuple)):
        flat, fmts = [], []
        for item in args:
            sub, fmt = flatten_nested(item, leaf, what, width, none)
            flat.extend(sub)
            fmts.append(fmt)
        return flat, fmts
    if not isinstance(args, leaf):
        raise InvalidArgumentTypeError(f"{what} must be a {leaf.__name__} or a (nested) list of "
                                       f"{leaf.__name__}s, got {type(args).__name__}")
    if width is not None:
        n, parts = width(args)
        if n > 1:
            return list(parts), n
    return [args], 0


def regroup_nested(flat, fmt):
    """``(nested structure, leftover leaves)``: the inverse of :func:`flatten_nested`
    (a ``-1`` is ``None``; lists come back as lists).

    >>> regroup_nested(['a', 'b', 'c'], [0, [0]])
    (['a', ['b']], ['c'])
    >>> regroup_nested(['a', 'b'], 2)
    (['a', 'b'], [])
    >>> regroup_nested(['a'], [0, -1])
    (['a', None], [])
    """
    if isinstance(fmt, int):
        if fmt == -1:
            return None, list(flat)
        if fmt == 0:
            return flat[0], list(flat[1:])
        return list(flat[:fmt]), list(flat[fmt:])
    out = []
    for f in fmt:
        item, flat = regroup_nested(flat, f)
        out.append(item)
    return out, list(flat)


def loop_length(arrays):
    """The common length of ``arrays`` along axis 0 (the number of iterations)."""
    lengths = []
    for a in arrays:
        if a.ndim == 0:
            raise InvalidArgumentError("foreach: data arrays must have an axis 0 to loop over, "
                                       "got a 0-d array")
        lengths.append(a.shape[0])
    if len(set(lengths)) > 1:
        raise InvalidArgumentError(f"foreach: every data array must have the same length along "
                                   f"axis 0, got lengths {lengths}")
    if not lengths or lengths[0] == 0:
        raise InvalidArgumentError(f"foreach: the data must have at least one element along "
                                   f"axis 0 to loop over, got lengths {lengths}")
    return lengths[0]


def foreach(body, data, init_states):
    """Run ``body`` over axis 0 of ``data`` (MXNet ``mx.nd.contrib.foreach``).

    Equivalent to::

        states = init_states
        for i in range(data.shape[0]):
            out, states = body(data[i], states)
            outs.append(out)
        outs = stack(*outs)

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)``; ``data_slice`` has the
        nesting of ``data``; ``outputs`` an NDArray, a (nested) list of them, or ``[]``.
    data : NDArray or (nested) list of NDArray
        Sliced along axis 0; every array has the same length there.
    init_states : NDArray or (nested) list of NDArray
        The states of the first iteration.

    Returns
    -------
    outputs : NDArray or (nested) list of NDArray
        Each output of ``body`` stacked along a new axis 0.
    states : NDArray or (nested) list of NDArray
        The states after the last iteration, as ``body`` returned them.

    Examples
    --------
    >>> import sparsenet as mx
    >>> outs, _ = mx.nd.contrib.foreach(lambda x, s: (x * 2, s), mx.nd.array([[1.0], [2.0]]), [])
    >>> outs.asnumpy().ravel()
    array([2., 4.], dtype=float32)
    """
    flat_data, _ = flatten_nested(data, NDArray, "foreach input")
    flatten_nested(init_states, NDArray, "foreach states")
    length = loop_length(flat_data)
    single = isinstance(data, NDArray)
    states = init_states
    steps, out_fmt = [], None
    for i in range(length):
        eles = data[i] if single else _slice_nested(data, i)
        outs, states = body(eles, states)
        flat, out_fmt = flatten_nested(outs, NDArray, "foreach output")
        steps.append(flat)
    stacked = [stack(*column, axis=0) for column in zip(*steps)]
    outputs, _ = regroup_nested(stacked, out_fmt)
    return outputs, states


def _slice_nested(data, i):
    if isinstance(data, NDArray):
        return data[i]
    return [_slice_nested(d, i) for d in data]
