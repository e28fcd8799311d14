"""Every error an operator raises on bad input is an ``mx.MXNetError`` refining a builtin.

A sweep over every registered operator calls it with inputs of shapes that do not
fit each other (dense and sparse), with 0-d and 1-d inputs, and with each keyword
parameter set to values of the wrong type or range. Whatever the operator does with
them, an error it raises must be a :class:`sparsenet.MXNetError` (MXNet 1.9.1 raises
``MXNetError`` for all of them). Errors from torch inside a kernel are converted at
the operator boundary (:mod:`sparsenet.ops.errors`).
"""
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import (IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError,
                            ShapeError, StorageTypeError, UnknownOperatorError)
from sparsenet.ops.errors import raise_op_error
from sparsenet.ops.layer_common import LayerParameterError
from sparsenet.ops.registry import get_op, list_ops
from sparsenet.ops.update_rules.core import UpdateOperator

BAD_VALUES = ("bad", -7, 2.5, (99, -99), 99)
# input shapes per call: mismatched (2-D and 1-D/4-D), all 3-D, all 1-D, all 0-d
SHAPE_SETS = ([(2, 3), (4, 5), (3,), (1, 2, 3, 4), (5,)], [(2, 3, 4)] * 5, [(3,)] * 5,
              [()] * 5)
# mismatched 2-D shapes in sparse storage types
SPARSE_SETS = ([("csr", (2, 3)), ("csr", (4, 5))], [("row_sparse", (2, 3)), ("default", (4, 5))],
               [("default", (2, 3)), ("csr", (1, 5))], [("row_sparse", (3, 2))] * 2)


def _arrays(op, specs):
    n = 2 if op.variadic else len(op.input_names)
    out = []
    for i in range(n):
        stype, shape = specs[i % len(specs)]
        a = mx.nd.array(np.arange(1, 1 + int(np.prod(shape))).reshape(shape) % 3)
        out.append(a if stype == "default" else a.tostype(stype))
    return out


def _calls(op):
    for shapes in SHAPE_SETS:
        yield [("default", s) for s in shapes], {}
    for specs in SPARSE_SETS:
        yield specs, {}
    for name in op.defaults:
        for value in BAD_VALUES:
            yield [("default", (2, 3))], {name: value}


def _escaped_errors(name):
    """The calls of operator ``name`` whose error is not an MXNetError."""
    op = get_op(name)
    escaped = []
    for specs, params in _calls(op):
        arrays = _arrays(op, specs)
        try:
            with mx.config.storage_fallback("silent"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op(*arrays, **params)
        except mx.MXNetError:
            pass
        except Exception as e:  # noqa: BLE001 - the point of the sweep
            escaped.append(f"{name}({specs}, {params}): {type(e).__name__}: {e}")
    return escaped


def test_the_sweep_covers_the_update_operators():
    assert sum(isinstance(get_op(n), UpdateOperator) for n in list_ops()) >= 20


@pytest.mark.parametrize("name", list_ops())
def test_every_error_is_an_mxnet_error(name):
    escaped = _escaped_errors(name)
    assert not escaped, "\n".join(escaped[:5])


# ------------------------------------------------------------------ the classes, pinned
# (MXNet 1.9.1 raises MXNetError for each of these calls, measured)
@pytest.mark.parametrize("call,cls,builtin,match", [
    (lambda: mx.nd.Activation(mx.nd.ones((2, 2)), act_type="bad"), InvalidArgumentError,
     ValueError, r"Activation: act_type must be .* got 'bad'"),
    (lambda: mx.nd.ones((2, 3)) + mx.nd.ones((4, 5)), ShapeError, ValueError,
     r"broadcast_add: shapes \(2, 3\) and \(4, 5\) cannot be broadcast"),
    (lambda: mx.nd.dot(mx.nd.ones((3, 4)), mx.nd.ones((5, 2))), ShapeError, ValueError,
     r"dot: shape mismatch, \(3, 4\) x \(5, 2\)"),
    (lambda: mx.nd.dot(mx.nd.ones((3, 4)).tostype("csr"), mx.nd.ones((5, 2))), ShapeError,
     ValueError, r"dot: shape mismatch"),
    (lambda: mx.nd.ones((3, 4)).tostype("coo"), InvalidArgumentError, ValueError,
     r"unknown storage type 'coo'"),
    (lambda: mx.nd.sum(mx.nd.ones((2, 3)), axis=5), IndexOutOfRangeError, IndexError,
     r"axis 5 is out of range"),
    (lambda: mx.nd.sum(mx.nd.ones((2, 3)), axis=-3), IndexOutOfRangeError, ValueError,
     r"axis -3 is out of range"),
    (lambda: mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 5, 4))),
     InvalidArgumentError, ValueError, r"^batch_dot: .*\(inputs: \(2, 3, 4\) default, "
     r"\(2, 5, 4\) default\)"),
    (lambda: mx.nd.transpose(mx.nd.ones((2, 3)), axes=(0, 5)), IndexOutOfRangeError,
     IndexError, r"^transpose: "),
    (lambda: mx.nd.elemwise_add(mx.nd.ones((2, 3)).tostype("csr"), mx.nd.ones((1, 3))),
     ShapeError, ValueError, r"elemwise_add: shapes must be equal"),
    (lambda: mx.nd.elemwise_mul(mx.nd.ones((2, 3)).tostype("csr"), mx.nd.ones((1, 3))),
     ShapeError, ValueError, r"elemwise_mul: shapes must be equal"),
    (lambda: mx.nd.ones((2, 3)).tostype("csr") * mx.nd.ones((4, 5)), ShapeError, ValueError,
     r"broadcast_mul: shapes \(2, 3\) and \(4, 5\)"),
    (lambda: mx.nd.contrib.getnnz(mx.nd.ones((2, 3))), StorageTypeError, TypeError,
     r"getnnz: data must be a CSRNDArray, got NDArray"),
    (lambda: mx.nd.take(mx.nd.ones((2, 3)), mx.nd.array([5]), mode="raise"),
     IndexOutOfRangeError, IndexError, r"take: index 5 is out of range"),
    (lambda: mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), forward_stype="coo"),
     InvalidArgumentError, ValueError, r"forward_stype must be None or one of"),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 2, 4, 4)), mx.nd.ones((3, 2, 2, 2)),
                               kernel=(2, 2), num_filter=4, no_bias=True),
     LayerParameterError, ValueError, r"Convolution"),
])
def test_error_class_and_message(call, cls, builtin, match):
    with pytest.raises(cls, match=match) as info:
        call()
    assert isinstance(info.value, mx.MXNetError) and isinstance(info.value, builtin)


def test_layer_parameter_error_is_an_invalid_argument_error():
    assert issubclass(LayerParameterError, InvalidArgumentError)


def test_unknown_operator_is_a_key_error():
    with pytest.raises(UnknownOperatorError, match="no operator named 'nope'") as info:
        get_op("nope")
    assert isinstance(info.value, KeyError) and isinstance(info.value, mx.MXNetError)
    assert str(info.value) == "no operator named 'nope'"


def test_conversion_keeps_the_cause_and_classes():
    with pytest.raises(InvalidArgumentTypeError, match=r"^op: bad type \(inputs: none\)$") as info:
        raise_op_error("op", TypeError("bad type"), [])
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(InvalidArgumentError, match="integer modulo"):
        raise_op_error("op", ZeroDivisionError("integer modulo by zero"), [])
    for kept in (RecursionError("deep"), MemoryError(), RuntimeError("CUDA out of memory"),
                 ShapeError("already ours")):
        with pytest.raises(type(kept)) as info:
            raise_op_error("op", kept, [])
        assert info.value is kept


def test_scalar_comparison_with_a_non_number():
    with pytest.raises(InvalidArgumentTypeError, match=r"^_equal_scalar: "):
        get_op("_equal_scalar")(mx.nd.ones((2,)), scalar="bad")
