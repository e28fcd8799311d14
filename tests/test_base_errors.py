"""Error classes and small ``mx.base`` names, against MXNet 1.9.1's (values measured with it)."""
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import base


def test_mxnet_error_is_a_runtime_error():
    # measured with MXNet 1.9.1: MXNetError.__mro__ == (MXNetError, RuntimeError, Exception, ...)
    assert issubclass(mx.MXNetError, RuntimeError)
    assert mx.base.MXNetError is mx.MXNetError is mx.SparsenetError
    with pytest.raises(RuntimeError):
        raise mx.MXNetError("boom")


@pytest.mark.parametrize("cls, builtin", [
    (base.StorageTypeError, TypeError), (base.SparseFormatError, ValueError),
    (base.FileFormatError, ValueError), (base.InvalidArgumentError, ValueError),
    (base.OperatorArgumentError, TypeError), (base.ParameterAssertionError, AssertionError),
    (base.ParameterAssertionError, ValueError),
    (base.NotImplementedForSymbol, NotImplementedError),
    (base.NotSupportedForSparseNDArray, NotImplementedError),
])
def test_error_classes_are_both_mxnet_errors_and_builtins(cls, builtin):
    assert issubclass(cls, mx.MXNetError) and issubclass(cls, builtin)


def test_unknown_operator_keyword_is_an_mxnet_error_and_a_type_error():
    # measured with MXNet 1.9.1: mx.nd.dot(a, a, foo=1) raises MXNetError "Cannot find argument 'foo'"
    a = mx.nd.ones((2, 2))
    with pytest.raises(mx.MXNetError, match=r"unexpected parameter\(s\) \['foo'\]"):
        mx.nd.dot(a, a, foo=1)
    with pytest.raises(TypeError, match="its parameters are"):
        mx.nd.dot(a, a, foo=1)
    with pytest.raises(mx.MXNetError, match="bogus"):
        mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, bogus=1)


def test_name_and_attr_keywords_are_not_parameters():
    a = mx.nd.array([[1.0, 2.0]])
    out = mx.nd.dot(a, a, transpose_b=True, name='d', attr={'k': 'v'})
    np.testing.assert_allclose(out.asnumpy(), [[5.0]])


@pytest.mark.parametrize("kw", ["stype", "grad_stype"])
def test_parameter_bad_stype_raises_like_mxnet(kw):
    # measured with MXNet 1.9.1: AssertionError with exactly this message
    msg = (f"{kw} for Parameter 'w' must be one of 'default', 'row_sparse', or 'csr', but got "
           f"'invalid'")
    with pytest.raises(AssertionError) as info:
        mx.gluon.Parameter('w', **{kw: 'invalid'})
    assert str(info.value) == msg
    assert isinstance(info.value, (mx.MXNetError, ValueError))


def test_not_implemented_for_symbol_message():
    # measured with MXNet 1.9.1
    x = mx.sym.var('x')
    for method in ("asnumpy", "asscalar", "wait_to_read", "backward", "detach", "copy"):
        with pytest.raises(mx.base.NotImplementedForSymbol) as info:
            getattr(x, method)()
        assert str(info.value) == (f"Function {method} is not implemented for Symbol and only "
                                   f"available in NDArray.")
    with pytest.raises(mx.MXNetError, match=r'Function __bool__ \(namely operator "bool"\)'):
        bool(x)
    with pytest.raises(mx.base.NotImplementedForSymbol, match=r"\+="):
        x += 1


def test_py_str_and_type_tuples():
    # measured with MXNet 1.9.1
    assert mx.base.py_str(b'abc') == 'abc'
    assert mx.base.string_types == (str,)
    assert mx.base.numeric_types == (float, int, np.generic)
    assert mx.base.integer_types == (int, np.int32, np.int64)
    assert isinstance(np.float32(1), mx.base.numeric_types)


def test_storage_type_ids():
    # measured with MXNet 1.9.1: mx.ndarray.ndarray._STORAGE_TYPE_STR_TO_ID
    expected = {'undefined': -1, 'default': 0, 'row_sparse': 1, 'csr': 2}
    assert mx.ndarray.ndarray._STORAGE_TYPE_STR_TO_ID == expected
    assert mx.ndarray.sparse._STORAGE_TYPE_STR_TO_ID == expected
    assert mx.base._STORAGE_TYPE_ID_TO_STR == {v: k for k, v in expected.items()}
    assert (mx.ndarray.ndarray._STORAGE_TYPE_CSR, mx.ndarray.ndarray._STORAGE_TYPE_ROW_SPARSE,
            mx.ndarray.ndarray._STORAGE_TYPE_DEFAULT) == (2, 1, 0)


def test_context_default_ctx_class_property():
    # measured with MXNet 1.9.1: a deprecated class property, readable and settable
    with pytest.warns(DeprecationWarning, match="default_ctx has been deprecated"):
        assert mx.Context.default_ctx == mx.cpu(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with mx.cpu(2):
            assert mx.Context.default_ctx == mx.cpu(2)
            assert mx.cpu().default_ctx == mx.cpu(2)
        mx.Context.default_ctx = mx.cpu(3)
        try:
            assert mx.current_context() == mx.cpu(3)
        finally:
            mx.Context.default_ctx = mx.cpu(0)
    assert mx.current_context() == mx.cpu(0)


def test_parameter_dtype_types(tmp_path):
    # measured with MXNet 1.9.1: the dtype as given (default: the type numpy.float32); a
    # Constant's and a dtype_source='saved' load's are NumPy types (numpy.float64)
    assert mx.gluon.Parameter('w', shape=(2,)).dtype is np.float32
    assert mx.gluon.Parameter('w', shape=(2,), dtype='float16').dtype == 'float16'
    c = mx.gluon.Constant('c', mx.nd.ones((2,), dtype='float64'))
    assert c.dtype is np.float64
    p = mx.gluon.Parameter('w', shape=(2,), dtype='float32')
    p.initialize()
    path = str(tmp_path / 'x.params')
    mx.nd.save(path, {'w': mx.nd.ones((2,), dtype='float64')})
    pd = mx.gluon.ParameterDict()
    pd._params['w'] = p
    pd.load(path, cast_dtype=True, dtype_source='saved')
    assert p.dtype is np.float64
    assert p.data().dtype == np.float64
