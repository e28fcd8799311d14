"""Custom operators written carelessly or with hostile values.

* ``infer_shape`` declaring outputs larger than memory: a ``CustomOpMemoryError`` (an
  ``MXNetError`` and a ``MemoryError``) naming the operator and the shape, before torch's
  allocator is asked;
* an exception of any class raised by user code keeps its class (``except OSError``,
  ``except MemoryError``, ``except MyError`` catch it) and is an ``MXNetError``;
* a forward (or backward) that rebinds ``out_data[0]`` (``in_grad[0]``) instead of writing into
  it is refused: the output keeps the inferred shape;
* shapes must be non-negative integers: floats and booleans are refused, not truncated;
* property instances are cached with a bound.
"""
import errno
import gc
import pickle
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.base import InvalidArgumentTypeError, ShapeError
from sparsenet.operator import props

CustomOpError = mx.operator.CustomOpError


class QuotaExceeded(Exception):
    """A user's own exception class, with a field of its own."""

    def __init__(self, message, quota=None):
        super().__init__(message)
        self.quota = quota


class NeedsTwoArgs(Exception):
    """A user's exception whose constructor cannot take a single message."""

    def __new__(cls, a, b):
        return super().__new__(cls, a, b)

    def __init__(self, a, b):
        super().__init__(a, b)


def _raise(kind):
    if kind == "FileNotFoundError":
        open("/nonexistent-dir-sparsenet/x.bin", "rb")  # noqa: SIM115 - raises
    if kind == "PermissionError":
        raise PermissionError(errno.EACCES, "Permission denied", "/root/secret")
    if kind == "MemoryError":
        raise MemoryError("cannot hold the table")
    if kind == "ZeroDivisionError":
        return 1 / 0
    if kind == "UnicodeDecodeError":
        return b"\xff".decode("utf-8")
    if kind == "QuotaExceeded":
        raise QuotaExceeded("over quota", quota=7)
    if kind == "NeedsTwoArgs":
        raise NeedsTwoArgs("a", "b")
    if kind == "KeyError":
        return {}["missing"]
    raise AssertionError(kind)


class Hostile(mx.operator.CustomOp):
    def __init__(self, mode, raise_in):
        super().__init__()
        self.mode, self.raise_in = mode, raise_in

    def forward(self, is_train, req, in_data, out_data, aux):
        if self.raise_in == "forward":
            _raise(self.mode)
        if self.mode == "rebind":
            out_data[0] = in_data[0].tile((3,))  # a new array: the output is NOT written
            return
        if self.mode == "drop":
            out_data.pop()
            return
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        if self.raise_in == "backward":
            _raise(self.mode)
        if self.mode == "rebind_grad":
            in_grad[0] = out_grad[0] * 2
            return
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("test_hostile")
class HostileProp(mx.operator.CustomOpProp):
    def __init__(self, mode="ok", raise_in="none", shape="same"):
        super().__init__(need_top_grad=True)
        self.mode, self.raise_in, self.shape = mode, raise_in, shape

    def infer_shape(self, in_shape):
        if self.shape == "same":
            return in_shape, [in_shape[0]], []
        return in_shape, [eval(self.shape)], []  # noqa: S307 - the tests' own literal shapes

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Hostile(self.mode, self.raise_in)


def _run(**kwargs):
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_hostile", **kwargs)
    y.backward()
    return y, x.grad


# ---------------------------------------------------------------------- huge declared shapes
@pytest.mark.parametrize("shape", ["(2**40, 2**10)", "(2**62, 2**62)", "(10**30,)"])
def test_a_declared_shape_larger_than_memory_is_refused_before_allocating(shape):
    # before: torch's allocator raised a bare RuntimeError ("DefaultCPUAllocator: can't
    # allocate memory: you tried to allocate 4503599627370496 bytes")
    dims = eval(shape)  # noqa: S307
    with pytest.raises(mx.MXNetError, match=rf"custom operator 'test_hostile': infer_shape "
                                            rf"declared output 0 'output' of shape "
                                            rf"\({dims[0]},.*more than the \d+ bytes of "
                                            rf"memory of cpu\(0\)") as info:
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile", shape=shape)
    assert isinstance(info.value, MemoryError)
    assert isinstance(info.value, mx.operator.CustomOpMemoryError)


def test_a_declared_sparse_output_of_a_huge_shape_is_not_refused():
    # a row_sparse output stores no row: only its dense size would not fit
    @mx.operator.register("test_hostile_rsp")
    class RspProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [(2**40, 4)], []

        def infer_storage_type(self, in_stype):
            return in_stype, ["row_sparse"], []

        def create_operator(self, ctx, in_shapes, in_dtypes):
            class Noop(mx.operator.CustomOp):
                pass
            return Noop()

    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile_rsp")
    assert y.stype == "row_sparse" and y.shape == (2**40, 4) and y.indices.shape == (0,)


# ---------------------------------------------------------------------- exception classes
@pytest.mark.parametrize("raise_in", ["forward", "backward"])
@pytest.mark.parametrize("kind,caught_as", [
    ("FileNotFoundError", OSError), ("PermissionError", PermissionError),
    ("MemoryError", MemoryError), ("ZeroDivisionError", ZeroDivisionError),
    ("UnicodeDecodeError", UnicodeDecodeError), ("QuotaExceeded", QuotaExceeded),
    ("KeyError", KeyError)])
def test_an_exception_keeps_its_class_and_is_an_mxnet_error(kind, caught_as, raise_in):
    # before: FileNotFoundError, MemoryError and user classes became a plain CustomOpError,
    # which `except OSError` / `except MemoryError` / `except QuotaExceeded` missed
    with pytest.raises(caught_as) as info:
        _run(mode=kind, raise_in=raise_in)
    e = info.value
    assert isinstance(e, mx.MXNetError) and isinstance(e, CustomOpError)
    assert type(e.__cause__).__name__ == kind
    assert str(e).startswith(f"custom operator 'test_hostile': Hostile.{raise_in} raised "
                             f"{kind}: ")


def test_the_original_fields_are_kept():
    with pytest.raises(FileNotFoundError) as info:
        _run(mode="FileNotFoundError", raise_in="forward")
    assert info.value.errno == errno.ENOENT
    assert info.value.filename == "/nonexistent-dir-sparsenet/x.bin"
    with pytest.raises(QuotaExceeded) as info:
        _run(mode="QuotaExceeded", raise_in="forward")
    assert info.value.quota == 7


def test_a_class_that_cannot_take_a_message_still_gives_a_named_mxnet_error():
    with pytest.raises(mx.MXNetError, match=r"Hostile.forward raised NeedsTwoArgs") as info:
        _run(mode="NeedsTwoArgs", raise_in="forward")
    assert isinstance(info.value.__cause__, NeedsTwoArgs)


def test_the_combined_errors_pickle():
    with pytest.raises(OSError) as info:
        _run(mode="FileNotFoundError", raise_in="forward")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is type(info.value) and str(again) == str(info.value)


def test_a_nested_custom_operator_error_is_not_wrapped_twice():
    @mx.operator.register("test_hostile_outer")
    class OuterProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            class Outer(mx.operator.CustomOp):
                def forward(self, is_train, req, in_data, out_data, aux):
                    mx.nd.Custom(in_data[0], op_type="test_hostile", mode="MemoryError",
                                 raise_in="forward")
            return Outer()

    with pytest.raises(MemoryError) as info:
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile_outer")
    assert isinstance(info.value, mx.MXNetError)
    assert "'test_hostile_outer': Outer.forward raised" in str(info.value)


# ---------------------------------------------------------------------- outputs as inferred
def test_rebinding_out_data_instead_of_writing_is_refused():
    # before: the output became the rebound (6,) array against infer_shape's (2,)
    with pytest.raises(ValueError, match=r"Hostile.forward replaced out_data\[0\] \(shape "
                                         r"\(2,\), float32, default\) with a NDArray of shape "
                                         r"\(6,\) instead of writing into it; write with "
                                         r"self.assign\(out_data\[0\], req\[0\], value\)") as i:
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile", mode="rebind")
    assert isinstance(i.value, mx.MXNetError)


def test_shrinking_out_data_is_refused():
    with pytest.raises(mx.MXNetError, match=r"changed the length of out_data from 1 to 0"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile", mode="drop")


def test_rebinding_in_grad_instead_of_writing_is_refused():
    # before: the gradient was silently zero
    with pytest.raises(mx.MXNetError, match=r"Hostile.backward replaced in_grad\[0\]"):
        _run(mode="rebind_grad")


def test_a_well_behaved_operator_still_runs():
    y, g = _run()
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(g.asnumpy(), [2.0, 2.0])


# ---------------------------------------------------------------------- shape values
@pytest.mark.parametrize("shape,cls,what", [
    ("[2.5]", InvalidArgumentTypeError, "dimension 0 is float 2.5"),
    ("[2.0]", InvalidArgumentTypeError, "dimension 0 is float 2.0"),
    ("[True, 2]", InvalidArgumentTypeError, "dimension 0 is bool True"),
    ("[2, np.bool_(True)]", InvalidArgumentTypeError, "dimension 1 is bool"),
    ("[-1, 2]", ShapeError, "dimension 0 is negative"),
    ("7", InvalidArgumentTypeError, "expected a shape"),
])
def test_a_shape_that_is_not_non_negative_integers_is_refused(shape, cls, what):
    # before: [2.5] gave an output of shape (2,), [True, 2] one of shape (1, 2)
    with pytest.raises(cls, match=r"custom operator 'test_hostile': HostileProp.infer_shape "
                                  r"returned output 0: .*" + what):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile", shape=shape)


def test_numpy_integer_dimensions_are_accepted():
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile", shape="[np.int64(2)]")
    assert y.shape == (2,)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.integers(-2, 4), st.floats(-2, 4, allow_nan=False),
                          st.booleans()), min_size=1, max_size=3))
def test_returned_dimensions_are_used_exactly_or_refused(dims):
    # property: never truncated; a shape is taken as given only when every dimension is a
    # non-negative int (not a bool)
    valid = all(type(d) is int and d >= 0 for d in dims)
    ok = (not valid) or int(np.prod(dims)) == 2  # forward writes in_data * 2: same size
    if valid and not ok:
        return
    try:
        y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile", shape=repr(dims),
                         mode="ok" if valid else "rebind")
    except (InvalidArgumentTypeError, ShapeError):
        assert not valid
        return
    except mx.MXNetError:
        assert valid  # e.g. a (1, 2) output written from a (2,) value: assign refuses
        return
    assert valid and y.shape == tuple(dims)


# ---------------------------------------------------------------------- bounded cache
def test_property_instances_are_cached_with_a_bound():
    # before: one instance per distinct keyword value, never freed
    made = []

    @mx.operator.register("test_hostile_counted")
    class CountedProp(mx.operator.CustomOpProp):
        def __init__(self, step):
            super().__init__()
            made.append(step)

    first = props.prop_for({"op_type": "test_hostile_counted", "step": "0"})
    ref = weakref.ref(first)
    del first
    for i in range(1, 3 * props.MAX_PROPERTIES):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile_counted", step=i)
        # a repeated keyword value reuses the instance of the same keywords
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_hostile_counted", step=i)
    assert len(made) == 3 * props.MAX_PROPERTIES
    assert len(props._INSTANCES) <= props.MAX_PROPERTIES
    gc.collect()
    assert ref() is None  # the evicted property is freed


@pytest.mark.parametrize("shape", ["(2**40, 2**10)", "(10**30,)"])
def test_a_declared_shape_larger_than_memory_is_refused_by_bind(shape):
    # the symbol path: simple_bind allocates the outputs infer_shape declares (before: torch's
    # allocator's bare RuntimeError)
    sym = mx.sym.Custom(mx.sym.var("x"), op_type="test_hostile", shape=shape, name="big")
    with pytest.raises(mx.base.OutOfMemoryError,
                       match=r"bind: output 'big_output' of shape .* more than the \d+ bytes "
                             r"of memory of cpu\(0\)") as info:
        sym.simple_bind(mx.cpu(), x=(2,))
    assert isinstance(info.value, MemoryError) and isinstance(info.value, mx.MXNetError)


def test_simple_bind_refuses_arguments_larger_than_memory():
    # a shape rule (FullyConnected's weight) that would need petabytes: refused, named
    sym = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2**40, no_bias=True, name="fc")
    with pytest.raises(mx.base.OutOfMemoryError,
                       match=r"simple_bind: argument 'fc_weight' of shape \(1099511627776, 4\)"):
        sym.simple_bind(mx.cpu(), x=(2, 4))
