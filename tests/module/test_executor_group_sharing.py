"""DataParallelExecutorGroup shares MXNet's way: parameters with the shared group's
executors, the other arguments (data, labels, arguments that are not parameters) through
``shared_data_arrays`` (MXNet's shared_buffer); ``grad_req`` is a per-argument dict and a
dict given updates it (MXNet 1.9.1's test_module.py::test_executor_group, small)."""
import sparsenet as mx
from sparsenet.module.executor_group import DataParallelExecutorGroup
from sparsenet.test_utils import same_array


def _net(layers):
    stack = mx.rnn.SequentialRNNCell()
    for i in range(layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=4, prefix="lstm_l%d_" % i))
    embed = mx.sym.Embedding(mx.sym.var("data"), input_dim=10, output_dim=3, name="embed")
    out, _ = stack.unroll(5, inputs=embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(out, shape=(-1, 4)), num_hidden=10, name="pred")
    return mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(mx.sym.var("softmax_label"), shape=(-1,)),
                                name="softmax")


def test_groups_share_parameters_and_data_arrays():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    shapes = dict(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4, 5))])
    sym1 = _net(1)
    params = [n for n in sym1.list_arguments() if n not in ("data", "softmax_label")]
    g1 = DataParallelExecutorGroup(sym1, ctxs, [1, 1], param_names=params, for_training=True,
                                   inputs_need_grad=False, **shapes)
    assert [sorted(d) for d in g1.shared_data_arrays] == [["data", "softmax_label"]] * 2
    assert g1.grad_req["lstm_l0_i2h_weight"] == "write" and g1.grad_req["data"] == "null"
    sym2 = _net(2)
    g2 = DataParallelExecutorGroup(sym2, ctxs, [1, 1], param_names=params, for_training=True,
                                   inputs_need_grad=False, shared_group=g1, **shapes)
    extra = sorted(n for n in sym2.list_arguments() if n not in params)
    for i in range(2):
        assert g2.shared_data_arrays[i] is g1.shared_data_arrays[i]
        assert sorted(g1.shared_data_arrays[i]) == extra
        e1, e2 = g1.execs[i], g2.execs[i]
        for n in params:
            assert same_array(e1.arg_dict[n], e2.arg_dict[n])
            assert same_array(e1.grad_dict[n], e2.grad_dict[n])
        for n in extra:
            assert same_array(g1.shared_data_arrays[i][n], e2.arg_dict[n])


def test_grad_req_dict_updates_the_defaults_and_ignores_other_names():
    sym = _net(1)
    params = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    g = DataParallelExecutorGroup(sym, [mx.cpu()], None, [("data", (2, 5))],
                                  [("softmax_label", (2, 5))], params, True, True,
                                  grad_req={"data": "null", "lstm_l0_h2h_bias": "add",
                                            "parameters": "null"})
    assert g.grad_req["data"] == "null" and g.grad_req["lstm_l0_h2h_bias"] == "add"
    assert g.grad_req["lstm_l0_i2h_weight"] == "write"
