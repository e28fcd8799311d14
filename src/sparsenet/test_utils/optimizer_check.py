"""Compare two optimizers (or an optimizer and a reference) step for step.

>>> import numpy as np, sparsenet as mx
>>> sgd = lambda: mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
>>> compare_optimizer(sgd(), sgd(), (3, 4), np.float32)
"""
import copy

from ..base import InvalidArgumentError
from ..random import uniform
from .compare import assert_almost_equal
from .devices import default_context
from .random_data import rand_ndarray

__all__ = ["compare_ndarray_tuple", "compare_optimizer"]


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Assert that two (nested tuples of) arrays are close; None on either side skips.

    >>> import sparsenet as mx
    >>> compare_ndarray_tuple((mx.nd.ones(2), None), (mx.nd.ones(2), mx.nd.zeros(3)))
    """
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def _pair(shape, stype, dtype, density):
    """A random array of ``stype`` and its dense copy."""
    ctx = default_context()
    if stype == "default":
        second = uniform(shape=shape, ctx=ctx, dtype=dtype)
        return second.copyto(ctx), second
    if stype in ("row_sparse", "csr"):
        second = rand_ndarray(shape, stype, density=density, dtype=dtype)
        return second.copyto(ctx).tostype("default"), second
    raise InvalidArgumentError(f"compare_optimizer: storage type must be 'default', "
                               f"'row_sparse' or 'csr', got {stype!r}")


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Assert that one update of ``opt1`` and ``opt2`` from the same weight and gradient agree.

    ``opt1`` gets dense copies; ``opt2`` gets the weight and gradient of
    storage types ``w_stype`` / ``g_stype`` (a sparse weight is fully
    stored; a sparse gradient has random density). States are compared
    after creation and after the update, and so are the weights. With a
    list of shapes, ``opt2`` makes one multi-tensor update of ``ntensors``
    weights and ``opt1`` one update per weight.

    Parameters
    ----------
    opt1, opt2 : Optimizer
    shape : tuple or list of tuple
    dtype : dtype
    w_stype, g_stype : {'default', 'row_sparse', 'csr'}
    rtol, atol : float
    compare_states : bool
    ntensors : int
        Number of weights, for a list of shapes.
    """
    if not isinstance(shape, list):
        if ntensors != 1:
            raise InvalidArgumentError(f"ntensors must be 1 for a single shape, got {ntensors}")
        w1, w2 = _pair(shape, w_stype, dtype, density=1)
        g1, g2 = _pair(shape, g_stype, dtype, density=None)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    ctx = default_context()
    w1 = tuple(uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
