"""Shared test helpers: random arrays of a given storage type and dense comparison."""
import numpy as np
import torch

import sparsenet as mx

STYPES = ("default", "csr", "row_sparse")


def make_array(shape, stype, density=0.5, low=-2.0, high=2.0, dtype="float32", ctx=None):
    """Random array of ``stype`` whose stored values lie in [low, high); zeros elsewhere.

    Returns ``(array, dense_numpy)``.
    """
    dense = np.random.uniform(low, high, size=shape).astype(dtype)
    if stype == "csr" or stype == "row_sparse":
        if stype == "csr":
            mask = np.random.rand(*shape) < density
        else:
            mask = np.broadcast_to((np.random.rand(shape[0]) < density).reshape(
                (-1,) + (1,) * (len(shape) - 1)), shape)
        dense = np.where(mask, dense, 0).astype(dtype)
    arr = mx.nd.array(dense, dtype=dtype, ctx=ctx)
    if stype != "default":
        arr = arr.tostype(stype)
    return arr, dense


def check_against_dense(result, expected, stype=None, rtol=1e-5, atol=1e-6):
    """Assert ``result`` (any storage type) equals the dense reference and has ``stype``."""
    if stype is not None:
        assert result.stype == stype, f"expected storage type {stype}, got {result.stype}"
    if result.stype != "default":
        result.check_format()
    got = result.asnumpy()
    exp = expected.asnumpy() if isinstance(expected, mx.nd.NDArray) else np.asarray(expected)
    assert got.shape == exp.shape, f"shape {got.shape} != {exp.shape}"
    np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)


def dense_tensor(x):
    """Dense torch tensor of a NumPy array or NDArray (for references computed in torch)."""
    if isinstance(x, mx.nd.NDArray):
        x = x.asnumpy()
    return torch.from_numpy(np.asarray(x))
