"""Shape, dtype and storage-type inference: same answers as the eager operators."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.ops.registry import OPERATORS, list_ops

STYPES = ("default", "csr", "row_sparse")


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def test_infer_shape_completes_parameters():
    x = mx.sym.var('data')
    fc = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    out = mx.sym.SoftmaxOutput(mx.sym.relu(fc), name='sm')
    args, outs, aux = out.infer_shape(data=(8, 2, 3))
    assert args == [(8, 2, 3), (4, 6), (4,), (8,)]
    assert outs == [(8, 4)] and aux == []
    # flatten=False uses the last axis
    fc2 = mx.sym.FullyConnected(x, num_hidden=5, flatten=False, name='g')
    assert fc2.infer_shape(data=(2, 3, 7))[0][1] == (5, 7)
    emb = mx.sym.Embedding(x, input_dim=10, output_dim=3, name='e')
    assert emb.infer_shape(data=(4, 2)) == ([(4, 2), (10, 3)], [(4, 2, 3)], [])
    lro = mx.sym.LinearRegressionOutput(x, name='lro')
    assert lro.infer_shape(data=(5, 1))[0] == [(5, 1), (5, 1)]


def test_infer_shape_positional_declared_and_partial():
    a = mx.sym.var('a', shape=(2, 3))
    b = mx.sym.var('b')
    y = mx.sym.dot(a, b)
    assert y.infer_shape(None, (3, 4)) == ([(2, 3), (3, 4)], [(2, 4)], [])
    with pytest.warns(UserWarning, match="Cannot decide shape.*b"):
        assert y.infer_shape() == (None, None, None)
    assert y.infer_shape_partial() == ([(2, 3), ()], [()], [])
    with pytest.raises(ValueError, match=r"\['c'\] are not arguments"):
        y.infer_shape(c=(1,))


def test_infer_shape_reports_the_node_and_its_inputs():
    y = mx.sym.dot(mx.sym.var('a'), mx.sym.var('b'), name='mm')
    with pytest.raises(ValueError, match=r"operator dot \(node 'mm'\) rejects its inputs "
                                         r"\(a\[2, 3\]:float32, b\[4, 5\]:float32\).*mismatch"):
        y.infer_shape(a=(2, 3), b=(4, 5))


def test_infer_type():
    a, b = mx.sym.var('a'), mx.sym.var('b', dtype='float16')
    assert (a + a).infer_type() == ([np.float32], [np.float32], [])
    assert (a + b).infer_type() == ([np.float16, np.float16], [np.float16], [])
    assert mx.sym.cast(a, dtype='int32').infer_type(a='float64') == \
        ([np.float64], [np.int32], [])
    # with shapes known, dtypes come from the dense definition itself
    c = mx.sym.var('c', shape=(3,))
    assert mx.sym.argmax(c, axis=0).infer_type(c='float64')[1] == \
        [mx.nd.argmax(mx.nd.zeros((3,), dtype='float64'), axis=0).dtype]


@pytest.mark.parametrize("sa", STYPES)
@pytest.mark.parametrize("sb", STYPES)
@pytest.mark.parametrize("opname", ["elemwise_add", "elemwise_sub", "elemwise_mul",
                                    "elemwise_div", "broadcast_add", "broadcast_mul"])
def test_storage_inference_matches_eager_binary(opname, sa, sb):
    a = mx.test_utils.rand_ndarray((4, 3), sa, density=0.5)
    b = mx.test_utils.rand_ndarray((4, 3), sb, density=0.5)
    with mx.config.storage_fallback('silent'):
        eager = OPERATORS[opname](a, b)
    sym = getattr(mx.sym, opname)(mx.sym.var('a', stype=sa), mx.sym.var('b', stype=sb))
    assert sym.infer_storage_type() == ([sa, sb], [eager.stype], [])


@pytest.mark.parametrize("stype", STYPES)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("rhs", ["default", "row_sparse"])
def test_storage_inference_matches_eager_dot(stype, ta, rhs):
    a = mx.test_utils.rand_ndarray((4, 4), stype, density=0.5)
    b = mx.test_utils.rand_ndarray((4, 2), rhs, density=0.5)
    with mx.config.storage_fallback('silent'):
        eager = mx.nd.dot(a, b, transpose_a=ta)
    sym = mx.sym.dot(mx.sym.var('a', stype=stype), mx.sym.var('b', stype=rhs), transpose_a=ta)
    assert sym.infer_storage_type()[1] == [eager.stype]
    # stypes given at call time override the declared ones
    assert sym.infer_storage_type(a='default', b='default')[1] == ['default']


def test_storage_inference_chain_and_forward_stype():
    x = mx.sym.var('x', stype='csr')
    y = mx.sym.sparse.negative(mx.sym.sqrt(x))           # csr -> csr -> csr
    z = mx.sym.dot(y, mx.sym.var('w'), transpose_a=True)  # csr.T x dns -> rsp
    assert z.infer_storage_type() == (['csr', 'default'], ['row_sparse'], [])
    forced = mx.sym.dot(mx.sym.var('a'), mx.sym.var('b'), forward_stype='row_sparse')
    assert forced.infer_storage_type()[1] == ['row_sparse']
    with pytest.raises(ValueError, match="storage type must be one of"):
        z.infer_storage_type(x='coo')


def _unary_candidates():
    """Single-input registry operators that run on a float (3, 4) array with defaults."""
    names = []
    x = mx.nd.array(np.random.RandomState(0).uniform(0.1, 0.9, (3, 4)))
    for name in list_ops():
        op = OPERATORS[name]
        if op.variadic or op.input_names != ("data",):
            continue
        try:
            op(x)
        except Exception:
            continue
        names.append(name)
    return names


@pytest.mark.parametrize("opname", _unary_candidates())
def test_inferred_shape_and_dtype_equal_eager(opname):
    op = OPERATORS[opname]
    x = mx.nd.array(np.random.uniform(0.1, 0.9, (3, 4)))
    eager = op(x)
    eager = eager if isinstance(eager, list) else [eager]
    sym = getattr(mx.sym, opname)(mx.sym.var('x'))
    _, outs, _ = sym.infer_shape(x=(3, 4))
    _, types, _ = sym.infer_type(x='float32')
    assert outs == [e.shape for e in eager]
    assert types == [e.dtype for e in eager]


def test_large_inputs_are_inferred_on_meta_tensors(monkeypatch):
    # a 10^6-feature layer is inferred on meta tensors: no 64 x 10^6 x 128 product
    import torch
    seen = []
    real_empty = torch.empty

    def spy(*args, **kwargs):
        seen.append(kwargs.get("device"))
        return real_empty(*args, **kwargs)
    monkeypatch.setattr(torch, "empty", spy)
    x = mx.sym.var('data', stype='csr')
    y = mx.sym.broadcast_add(mx.sym.dot(x, mx.sym.var('weight')), mx.sym.var('bias'))
    args, outs, _ = y.infer_shape(data=(64, 1000000), weight=(1000000, 128), bias=(1, 128))
    assert outs == [(64, 128)] and "meta" in seen
    # Embedding checks its ids (data-dependent): meta cannot, the zeros path answers
    emb = mx.sym.Embedding(mx.sym.var('ids'), input_dim=2000000, output_dim=64)
    assert emb.infer_shape(ids=(32, 5))[1] == [(32, 5, 64)]


@pytest.mark.parametrize("ids_shape, rows, dim", [((5,), 10, 3), ((2, 4), 2_000_000, 2),
                                                  ((3, 1, 2), 7, 1)])
def test_embedding_output_shape_rule_matches_the_operator(ids_shape, rows, dim):
    # Embedding infers its output shape by rule (no run on placeholder tensors, which for a
    # large table meant torch's meta tensors); the eager operator is the reference
    sym = mx.sym.Embedding(mx.sym.var("ids"), input_dim=rows, output_dim=dim, name="e")
    _, out_shapes, _ = sym.infer_shape(ids=ids_shape)
    ids = mx.nd.array(np.zeros(ids_shape))
    eager = mx.nd.Embedding(ids, mx.nd.zeros((min(rows, 10), dim)), input_dim=min(rows, 10),
                            output_dim=dim)
    assert out_shapes == [eager.shape] == [ids_shape + (dim,)]
    _, out_types, _ = sym.infer_type(ids="int32")
    assert out_types == [np.float32]
