"""The registry's cached dispatch plans and the per-call shortcuts of issue 33.

A call with no parameter given takes the rule row the registry found the first time for
its input storage types (``Operator._rule_plan``); adding a rule row empties the cache, and a
call with parameters still asks the rows each time. ``wrap`` builds the array
``NDArray(t)`` builds; ``sum`` over every axis and ``normalize_axes`` of one int axis take
short paths. Expected values come from NumPy and torch.
"""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.base import IndexOutOfRangeError
from sparsenet.ndarray.ndarray import NDArray, wrap
from sparsenet.ops.reduce import normalize_axes
from sparsenet.ops.registry import CSR, ROW_SPARSE, defop, rule

_VALUES = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], dtype=np.float32)


def _fresh_op(name):
    """A new test operator (a ``_doc_`` name stays out of the generated tables)."""
    @defop(name=name)
    def scale(data, *, factor=2.0):
        return data * factor
    return scale


def _scaled_values(data, *, factor):
    return data._with_data(data._data * factor)


def test_plan_is_cached_per_storage_types_and_follows_the_parameters():
    op = _fresh_op("_doc_plan_scale")
    rule(op, CSR, out=CSR, when={"factor": 2.0})(_scaled_values)
    csr = mx.nd.array(_VALUES).tostype("csr")
    for _ in range(2):  # the second call takes the cached plan
        res = op(csr)
        assert res.stype == "csr"
        np.testing.assert_array_equal(res.asnumpy(), _VALUES * 2)
    assert ("csr",) in op._rule_plans
    with mx.config.storage_fallback("silent"):  # parameters given: the rows are asked again
        res = op(csr, factor=3.0)
    assert res.stype == "default"
    np.testing.assert_array_equal(res.asnumpy(), _VALUES * 3)


def test_adding_a_rule_row_empties_the_plans():
    op = _fresh_op("_doc_plan_scale_added")
    rsp = mx.nd.array(_VALUES).tostype("row_sparse")
    with mx.config.storage_fallback("silent"):
        before = op(rsp)  # no row yet: the fallback, remembered as the plan
    assert before.stype == "default" and op._rule_plans[("row_sparse",)][0] is None
    rule(op, ROW_SPARSE, out=ROW_SPARSE)(_scaled_values)
    assert not op._rule_plans
    after = op(rsp)  # under the suite's 'error' policy: a fallback would raise
    assert after.stype == "row_sparse"
    np.testing.assert_array_equal(after.asnumpy(), _VALUES * 2)
    np.testing.assert_array_equal(before.asnumpy(), _VALUES * 2)


def test_fallback_policy_is_applied_on_every_cached_call():
    op = _fresh_op("_doc_plan_scale_policy")
    rsp = mx.nd.array(_VALUES).tostype("row_sparse")
    with mx.config.storage_fallback("silent"):
        op(rsp)
    with pytest.raises(mx.MXNetError, match="_doc_plan_scale_policy"):
        op(rsp)  # the plan is cached; the policy ('error' here) is still applied


def test_plan_cache_is_bounded():
    op = _fresh_op("_doc_plan_bounded")
    rule(op, CSR, out=CSR)(_scaled_values)
    op._rule_plans.update({("x",) * k: (None, None) for k in range(1, 200)})
    op(mx.nd.array(_VALUES).tostype("csr"))
    assert len(op._rule_plans) <= 64


def test_wrap_sets_the_slots_the_constructor_sets():
    t = torch.arange(6.0).reshape(2, 3)
    a, b = wrap(t), NDArray(t)
    for slot in NDArray.__slots__:
        if slot == "__weakref__":
            continue
        assert getattr(a, slot, "unset") is getattr(b, slot, "unset"), slot
    assert a.__class__ is NDArray


def test_wrap_makes_a_0d_tensor_shape_1_sharing_its_storage():
    t = torch.tensor(4.0, requires_grad=True)
    a = wrap(t * 1)
    assert a.shape == (1,) and a.asnumpy().tolist() == [4.0]
    (a._t * 3).sum().backward()
    assert t.grad.item() == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
def test_sum_over_every_axis_matches_numpy(shape, dtype):
    x = (np.arange(np.prod(shape)).reshape(shape) % 7).astype(dtype)
    res = mx.nd.array(x, dtype=dtype).sum()
    assert res.shape == (1,)
    assert res.asnumpy()[0] == np.sum(x.astype(np.float64))
    # the same dtype torch's reduction over all axes gives (the registry's earlier path)
    t = torch.from_numpy(x)
    assert res._t.dtype == torch.sum(t, dim=tuple(range(t.dim()))).dtype


@pytest.mark.parametrize("kwargs", [{"keepdims": True}, {"axis": 0}, {"axis": 1, "exclude": True},
                                    {"axis": (0, 1)}, {"axis": -1, "keepdims": True}])
def test_sum_with_parameters_matches_numpy(kwargs):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = mx.nd.sum(mx.nd.array(x), **kwargs).asnumpy()
    axis = kwargs.get("axis")
    if kwargs.get("exclude"):
        axis = 0  # every axis but 1
    expected = np.sum(x, axis=axis, keepdims=kwargs.get("keepdims", False))
    np.testing.assert_array_equal(got, np.atleast_1d(expected))


def test_sum_gradient_over_every_axis_is_ones():
    x = mx.nd.array(_VALUES)
    x.attach_grad()
    with mx.autograd.record():
        y = x.sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones_like(_VALUES))


@pytest.mark.parametrize("axis,ndim,expected", [(0, 2, (0,)), (1, 2, (1,)), (-1, 3, (2,)),
                                                (-3, 3, (0,)), (0, 0, (0,))])
def test_normalize_axes_of_one_int(axis, ndim, expected):
    assert normalize_axes(axis, ndim) == expected


@pytest.mark.parametrize("axis,ndim", [(2, 2), (-3, 2), (1, 0)])
def test_normalize_axes_out_of_range_raises(axis, ndim):
    with pytest.raises(IndexOutOfRangeError, match=f"axis {axis} is out of range"):
        normalize_axes(axis, ndim)


def test_normalize_axes_exclude_with_one_int():
    assert normalize_axes(1, 3, exclude=True) == (0, 2)
