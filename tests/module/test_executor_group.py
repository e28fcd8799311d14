"""Module over several contexts (``mx.module.executor_group``): the batch is split, the
gradients summed, and training equals one-context training on the whole batch."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.module.executor_group import DataParallelExecutorGroup, split_input_slice


def test_split_input_slice_matches_mxnet():
    # measured with MXNet 1.9.1 (mxnet.executor_manager._split_input_slice)
    assert split_input_slice(5, [1, 1]) == [slice(0, 2), slice(2, 5)]
    assert split_input_slice(10, [1, 2, 2]) == [slice(0, 2), slice(2, 6), slice(6, 10)]
    assert split_input_slice(7, [3, 1]) == [slice(0, 5), slice(5, 7)]
    with pytest.raises(mx.MXNetError, match="some slices would be empty"):
        split_input_slice(2, [1, 1, 1])


def _linear_module(ctxs, sparse, work_load_list=None):
    x = mx.sym.var('data', stype='csr' if sparse else 'default')
    w = mx.sym.var('w_weight', stype='row_sparse' if sparse else 'default', shape=(6, 1))
    b = mx.sym.var('b_bias', shape=(1,))
    out = mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.dot(x, w), b), name='lro')
    mod = mx.mod.Module(out, data_names=['data'], label_names=['lro_label'], context=ctxs,
                        work_load_list=work_load_list)
    mod.bind(data_shapes=[('data', (8, 6))], label_shapes=[('lro_label', (8, 1))])
    return mod


def _train(ctxs, optimizer, sparse, steps=4, work_load_list=None):
    mx.random.seed(3)
    mod = _linear_module(ctxs, sparse, work_load_list)
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer=optimizer, optimizer_params={'learning_rate': 0.1})
    rs = np.random.RandomState(0)
    metric = mx.metric.MSE()
    for _ in range(steps):
        x = (rs.rand(8, 6) < 0.4) * rs.rand(8, 6)
        y = rs.rand(8, 1)
        data = mx.nd.array(x).tostype('csr') if sparse else mx.nd.array(x)
        batch = mx.io.DataBatch([data], [mx.nd.array(y)])
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    args, _ = mod.get_params()
    replicas = [e.arg_dict['w_weight'].asnumpy() for e in mod._exec_group.execs]
    return args, mod.get_outputs()[0].asnumpy(), metric.get()[1], replicas


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_module_over_contexts_equals_one_context(sparse, optimizer):
    ref_args, ref_out, ref_metric, _ = _train([mx.cpu(0)], optimizer, sparse)
    for ctxs in ([mx.cpu(0), mx.cpu(1)], [mx.cpu(0), mx.cpu(1), mx.cpu(2)]):
        args, out, metric, replicas = _train(ctxs, optimizer, sparse)
        for name in ref_args:
            np.testing.assert_allclose(args[name].asnumpy(), ref_args[name].asnumpy(),
                                       rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-7)
        if len(ctxs) == 2:  # MSE averages per-device means (MXNet): equal halves only
            assert metric == pytest.approx(ref_metric, rel=1e-5)
        for r in replicas[1:]:
            np.testing.assert_array_equal(r, replicas[0])


def test_uneven_work_loads_split_the_batch():
    args, out, _, _ = _train([mx.cpu(0), mx.cpu(1)], 'sgd', False, work_load_list=[3, 1])
    ref_args, ref_out, _, _ = _train([mx.cpu(0)], 'sgd', False)
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(args['w_weight'].asnumpy(), ref_args['w_weight'].asnumpy(),
                               rtol=1e-5, atol=1e-7)


def test_outputs_per_context_and_merged():
    mod = _linear_module([mx.cpu(1), mx.cpu(2)], sparse=False)
    mod.init_params(mx.init.One())
    x = np.arange(48, dtype='f4').reshape(8, 6)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.zeros((8, 1))]), is_train=False)
    merged = mod.get_outputs()[0]
    # mx.init.One() fills weights with 1 and, as in MXNet, biases with 0
    np.testing.assert_allclose(merged.asnumpy(), x.sum(axis=1, keepdims=True))
    assert merged.context == mx.cpu(1)
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.context for p in parts] == [mx.cpu(1), mx.cpu(2)]
    assert [p.shape for p in parts] == [(4, 1), (4, 1)]
    assert mod.output_shapes == [('lro_output', (8, 1))]


def test_group_binds_one_executor_per_context():
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc')
    group = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1), mx.cpu(2)], None,
                                      [('data', (6, 3))], None, ['fc_weight', 'fc_bias'],
                                      for_training=True, inputs_need_grad=False)
    assert [e.arg_dict['data'].shape for e in group.execs] == [(2, 3)] * 3
    assert [a.context for a in group.param_arrays[0]] == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    assert [g.context for g in group.grad_arrays[0]] == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]


def _train_with_store(ctxs, kv, steps=4):
    """The sparse linear model trained with the MXNet idiom for a store: prepare() pulls
    the rows the next batch needs, update() pushes the gradients."""
    mx.random.seed(3)
    mod = _linear_module(ctxs, sparse=True)
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(kvstore=kv, optimizer='adam', optimizer_params={'learning_rate': 0.1})
    rs = np.random.RandomState(0)

    def row_ids(batch):
        return {'w_weight': batch.data[0].indices}

    for _ in range(steps):
        x = (rs.rand(8, 6) < 0.4) * rs.rand(8, 6)
        batch = mx.io.DataBatch([mx.nd.array(x).tostype('csr')], [mx.nd.array(rs.rand(8, 1))])
        mod.prepare(batch, sparse_row_id_fn=row_ids)
        mod.forward_backward(batch)
        mod.update()
    return mod


@pytest.mark.parametrize("nctx", [1, 2])
def test_module_through_a_store_equals_local_training(nctx):
    ref_args, _, _, _ = _train([mx.cpu(0)], 'adam', True)
    kv = mx.kv.create('local')
    mod = _train_with_store([mx.cpu(i) for i in range(nctx)], kv)
    out = mx.nd.zeros((6, 1))
    kv.pull('w_weight', out=out, ignore_sparse=False)  # the store holds the trained table
    np.testing.assert_allclose(out.asnumpy(), ref_args['w_weight'].asnumpy(), rtol=1e-5,
                               atol=1e-7)
    bias = mod._exec_group.param_arrays[1]
    for b in bias:  # dense weights are pulled back into every replica after each update
        np.testing.assert_allclose(b.asnumpy(), ref_args['b_bias'].asnumpy(), rtol=1e-5)
