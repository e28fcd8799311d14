"""One error contract: every error a caller's mistake causes is an ``mx.MXNetError`` and
still the builtin class it refines, so ``except mx.MXNetError`` (what MXNet code writes:
MXNet 1.9.1 raises ``MXNetError`` for a bad shape, storage type, dtype, index or keyword)
and ``except ValueError``/``TypeError``/... both catch it.

A table of bad calls through the public API, one pytest id per row; each row names
the builtin class the error must also be. ``OSError`` rows (a missing file) are the
documented file errors and are not ``MXNetError``s; they are checked apart.
"""
import json

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import base


def _dense(*shape):
    return mx.nd.ones(shape)


def _csr(*shape):
    return mx.nd.sparse.zeros("csr", shape)


def _rsp(*shape):
    return mx.nd.sparse.zeros("row_sparse", shape)


def _fc_symbol():
    return mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")


def _module_forward_unbound():
    mod = mx.mod.Module(_fc_symbol(), label_names=None)
    mod.forward(mx.io.DataBatch([_dense(1, 3)]))


def _module_update_without_optimizer():
    mod = mx.mod.Module(_fc_symbol(), label_names=None)
    mod.bind(data_shapes=[("data", (1, 3))])
    mod.init_params()
    mod.update()


def _module_fit_without_epochs():
    mx.mod.Module(_fc_symbol(), label_names=None).fit(mx.io.NDArrayIter(_dense(2, 3)))


def _gluon_uninitialized_data():
    return mx.gluon.nn.Dense(2, in_units=3).weight.data()


def _gluon_trainer_unknown_optimizer():
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize()
    return mx.gluon.Trainer(net.collect_params(), "no_such_optimizer")


def _gluon_load_parameters(path):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.load_parameters(str(path))


def _gluon_load_parameters_missing_name(tmp):
    mx.nd.save(str(tmp / "other.params"), {"something_else": _dense(2)})
    _gluon_load_parameters(tmp / "other.params")


def _gluon_params_shape_mismatch(tmp):
    mx.nd.save(str(tmp / "w.params"), {"weight": _dense(5, 5), "bias": _dense(2)})
    _gluon_load_parameters(tmp / "w.params")


def _kv_rsp_pull_dense_out():
    kv = mx.kv.create("local")
    kv.init("w", _dense(2, 2).tostype("row_sparse"))
    kv.row_sparse_pull("w", out=_dense(2, 2), row_ids=mx.nd.array([0]))


def _kv_init_twice():
    kv = mx.kv.create("local")
    kv.init(1, _dense(2))
    kv.init(1, _dense(2))


def _kv_push_shape():
    kv = mx.kv.create("local")
    kv.init(1, _dense(2))
    kv.push(1, _dense(3))


def _checkpoint_bad_params(tmp):
    _fc_symbol().save(str(tmp / "m-symbol.json"))
    (tmp / "m-0001.params").write_bytes(b"\x00" * 7)
    mx.model.load_checkpoint(str(tmp / "m"), 1)


def _write(tmp, name, data):
    path = tmp / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return str(path)


def _libsvm_iter(tmp, text="1 3:0.5\n", **kw):
    kw.setdefault("data_shape", (4,))
    kw.setdefault("batch_size", 1)
    it = mx.io.LibSVMIter(data_libsvm=_write(tmp, "d.libsvm", text), **kw)
    return next(iter(it))


def _xavier_on_vector():
    mx.init.Xavier()(mx.init.InitDesc("fc_weight"), mx.nd.zeros((3,)))


def _torch_sgd(**kw):
    import torch

    from sparsenet.torch import optim
    return optim.SGD([torch.nn.Parameter(torch.zeros(6, 3))], **kw)


def _torch_load_broadcast_state():
    import torch

    from sparsenet.torch import optim
    small = optim.SGD([torch.nn.Parameter(torch.zeros(1, 3))], lr=0.1, momentum=0.9)
    small.state[small.param_groups[0]["params"][0]]["mom"] = torch.zeros(1, 3)
    big = _torch_sgd(lr=0.1, momentum=0.9)
    state = small.state_dict()
    state["state"] = {0: {"mom": torch.zeros(1, 3)}}
    big.load_state_dict(state)


def _torch_load_string_step():
    import torch

    from sparsenet.torch import optim
    opt = optim.Adam([torch.nn.Parameter(torch.zeros(2, 3))], lr=0.1)
    state = opt.state_dict()
    state["state"] = {0: {"step": "three", "exp_avg": torch.zeros(2, 3),
                          "exp_avg_sq": torch.zeros(2, 3)}}
    opt.load_state_dict(state)


class _RaisingOp(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        open("/nonexistent/sparsenet-contract")  # FileNotFoundError in user code


@mx.operator.register("contract_raising")
class _RaisingProp(mx.operator.CustomOpProp):
    def __init__(self, shape="same"):
        super().__init__(need_top_grad=False)
        self.shape = shape

    def infer_shape(self, in_shape):
        if self.shape == "same":
            out = in_shape[0]
        else:  # a whole number as an int, anything else as the float it is
            out = [int(self.shape) if self.shape.isdigit() else float(self.shape), 2]
        return in_shape, [out], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _RaisingOp()


def _model_dir(tmp, text):
    from sparsenet.cli import model_dir
    (tmp / "model.json").write_text(text)
    return model_dir.read_config(str(tmp))


# (id, call taking the tmp directory, builtin class the error must also be)
CASES = [
    # shapes
    ("add-shapes", lambda t: _dense(2, 3) + _dense(4, 5), ValueError),
    ("dot-shapes", lambda t: mx.nd.dot(_dense(3, 4), _dense(5, 2)), ValueError),
    ("csr-dot-shapes", lambda t: mx.nd.dot(_csr(3, 4), _dense(5, 2)), ValueError),
    ("reshape-size", lambda t: _dense(2, 3).reshape((4, 2)), ValueError),
    ("zeros-negative-dim", lambda t: mx.nd.zeros((-1, 2)), ValueError),
    ("copyto-shape", lambda t: _dense(2).copyto(_dense(3)), ValueError),
    ("asscalar-size", lambda t: _dense(2).asscalar(), ValueError),
    ("tostype-csr-3d", lambda t: _dense(2, 2, 2).tostype("csr"), ValueError),
    ("rsp-shape-mismatch", lambda t: mx.nd.sparse.row_sparse_array(np.ones((2, 2)), shape=(3, 2)),
     ValueError),
    ("sgd-update-shape", lambda t: mx.nd.sgd_update(_dense(2), _dense(3), lr=0.1), ValueError),
    ("split-data-uneven", lambda t: mx.gluon.utils.split_data(_dense(5, 2), 2), ValueError),
    # storage types
    ("tostype-coo", lambda t: _dense(2, 2).tostype("coo"), ValueError),
    ("attach-grad-stype", lambda t: _dense(2).attach_grad(stype="coo"), ValueError),
    ("csr-reshape", lambda t: _csr(2, 2).reshape((4,)), NotImplementedError),
    ("csr-size", lambda t: _csr(2, 2).size, NotImplementedError),
    ("csr-asscalar", lambda t: _csr(1, 1).asscalar(), NotImplementedError),
    ("csr-column-index", lambda t: _csr(2, 2)[0, 1], ValueError),
    ("csr-step-slice", lambda t: _csr(4, 2)[0:4:2], ValueError),
    ("csr-not-iterable", lambda t: list(iter(_csr(2, 2))), TypeError),
    ("rsp-setitem-row", lambda t: _rsp(2, 2).__setitem__(0, 1), ValueError),
    ("rsp-setitem-string", lambda t: _rsp(2, 2).__setitem__(slice(None), "x"), TypeError),
    ("storage-fallback", lambda t: mx.nd.exp(_csr(2, 2)), RuntimeError),
    ("save-libsvm-rsp", lambda t: mx.io.save_libsvm(str(t / "o.libsvm"), _rsp(2, 2), _dense(2)),
     TypeError),
    ("kv-row-sparse-pull-dense-out", lambda t: _kv_rsp_pull_dense_out(), TypeError),
    # sparse formats
    ("csr-bad-indptr", lambda t: mx.nd.sparse.csr_matrix(([1.0], [0], [0, 2]), shape=(1, 2)),
     ValueError),
    ("csr-coo-column-out-of-range",
     lambda t: mx.nd.sparse.csr_matrix(([1.0], ([0], [5])), shape=(2, 2)), ValueError),
    ("csr-coo-negative-row",
     lambda t: mx.nd.sparse.csr_matrix(([1.0], ([-1], [0])), shape=(2, 2)), ValueError),
    ("rsp-index-out-of-range",
     lambda t: mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [7]), shape=(2, 2)), ValueError),
    # dtypes
    ("array-complex-dtype", lambda t: mx.nd.array([1, 2], dtype="complex64"), TypeError),
    ("zeros-complex-dtype", lambda t: mx.nd.zeros((2,), dtype="complex128"), TypeError),
    ("astype-unknown-dtype", lambda t: _dense(2).astype("float128x"), TypeError),
    ("zeros-float-dim", lambda t: mx.nd.zeros((2.5, 2)), TypeError),
    ("save-non-ndarray", lambda t: mx.nd.save(str(t / "x.nd"), {"a": 1}), TypeError),
    # indices
    ("sum-axis", lambda t: mx.nd.sum(_dense(2, 3), axis=2), IndexError),
    ("csr-row-out-of-range", lambda t: _csr(2, 2)[5], IndexError),
    ("take-raise", lambda t: mx.nd.take(_dense(2, 2), mx.nd.array([5]), mode="raise"), IndexError),
    ("embedding-id", lambda t: mx.nd.Embedding(mx.nd.array([9]), _dense(3, 2), input_dim=3,
                                               output_dim=2), IndexError),
    ("symbol-output-index", lambda t: mx.sym.var("a")[3], IndexError),
    ("metric-index", lambda t: mx.metric.CompositeEvalMetric().get_metric(3), IndexError),
    # unknown keywords and operators
    ("nd-unknown-keyword", lambda t: mx.nd.dot(_dense(1, 1), _dense(1, 1), foo=1), TypeError),
    ("sym-unknown-keyword",
     lambda t: mx.sym.FullyConnected(mx.sym.var("a"), num_hidden=2, foo=1), TypeError),
    ("sgd-update-no-lr", lambda t: mx.nd.sgd_update(_dense(2), _dense(2)), TypeError),
    ("truth-value", lambda t: bool(_dense(2)), ValueError),
    # unknown names
    ("optimizer-unknown", lambda t: mx.optimizer.create("no_such_optimizer"), ValueError),
    ("optimizer-register-non-class", lambda t: mx.optimizer.register(3), TypeError),
    ("optimizer-lazy-update", lambda t: mx.optimizer.SGD(lazy_update="sometimes"), ValueError),
    ("initializer-unknown", lambda t: mx.init.create("no_such_initializer"), ValueError),
    ("initializer-xavier-vector", lambda t: _xavier_on_vector(), ValueError),
    ("metric-unknown", lambda t: mx.metric.create("no_such_metric"), ValueError),
    ("metric-shapes", lambda t: mx.metric.Accuracy().update([_dense(2)], [_dense(3, 2)]),
     ValueError),
    ("metric-topk", lambda t: mx.metric.TopKAccuracy(top_k=1), ValueError),
    ("lr-factor-step", lambda t: mx.lr_scheduler.FactorScheduler(step=0), ValueError),
    ("lr-multifactor-order", lambda t: mx.lr_scheduler.MultiFactorScheduler(step=[3, 2]),
     ValueError),
    ("config-policy", lambda t: mx.config.set_storage_fallback("loud"), ValueError),
    ("kv-unknown-type", lambda t: mx.kv.create("no_such_store"), ValueError),
    # files
    ("nd-load-garbage", lambda t: mx.nd.load(_write(t, "g.nd", b"not an ndarray file" * 3)),
     ValueError),
    ("load-parameters-garbage",
     lambda t: _gluon_load_parameters(_write(t, "g.params", b"\x12\x01" * 20)), ValueError),
    ("load-parameters-missing-name", lambda t: _gluon_load_parameters_missing_name(t), ValueError),
    ("load-parameters-shape", lambda t: _gluon_params_shape_mismatch(t), ValueError),
    ("load-checkpoint-garbage", lambda t: _checkpoint_bad_params(t), ValueError),
    ("sym-load-bad-json", lambda t: mx.sym.load(_write(t, "s.json", "{not json")), RuntimeError),
    ("sym-load-unknown-op", lambda t: mx.sym.load_json(json.dumps({
        "nodes": [{"op": "no_such_op", "name": "x", "inputs": []}], "arg_nodes": [],
        "heads": [[0, 0, 0]]})), RuntimeError),
    ("libsvm-bad-token", lambda t: _libsvm_iter(t, "1 3:x\n"), ValueError),
    ("libsvm-feature-out-of-range", lambda t: _libsvm_iter(t, "1 9:1\n"), ValueError),
    ("libsvm-data-shape", lambda t: _libsvm_iter(t, data_shape=(0,)), ValueError),
    ("libsvm-batch-size", lambda t: _libsvm_iter(t, batch_size=0), ValueError),
    # io iterators
    ("ndarrayiter-none", lambda t: mx.io.NDArrayIter(None), ValueError),
    ("ndarrayiter-batch-size", lambda t: mx.io.NDArrayIter(_dense(4, 2), batch_size=0),
     ValueError),
    ("ndarrayiter-handle",
     lambda t: mx.io.NDArrayIter(_dense(4, 2), batch_size=2, last_batch_handle="drop_it"),
     ValueError),
    ("ndarrayiter-lengths", lambda t: mx.io.NDArrayIter(_dense(4, 2), _dense(3), batch_size=2),
     ValueError),
    ("ndarrayiter-type", lambda t: mx.io.NDArrayIter("abc"), TypeError),
    # Gluon misuse
    ("gluon-uninitialized", lambda t: _gluon_uninitialized_data(), RuntimeError),
    ("gluon-grad-req", lambda t: mx.gluon.Parameter("w", shape=(2,), grad_req="sometimes"),
     ValueError),
    ("gluon-stype", lambda t: mx.gluon.Parameter("w", shape=(2,), stype="coo"), ValueError),
    ("gluon-constant-missing", lambda t: mx.gluon.ParameterDict().get_constant("c"), KeyError),
    ("gluon-trainer-optimizer", lambda t: _gluon_trainer_unknown_optimizer(), ValueError),
    ("gluon-dataloader-batch-size",
     lambda t: mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(_dense(4))), ValueError),
    ("gluon-arraydataset-lengths", lambda t: mx.gluon.data.ArrayDataset(_dense(4), _dense(3)),
     ValueError),
    ("gluon-batch-sampler",
     lambda t: mx.gluon.data.BatchSampler(mx.gluon.data.SequentialSampler(4), 0), ValueError),
    ("gluon-leakyrelu-alpha", lambda t: mx.gluon.nn.LeakyReLU(-1.0), ValueError),
    ("gluon-lambda-name", lambda t: mx.gluon.nn.Lambda("no_such_function"), ValueError),
    ("gluon-conv-layout", lambda t: mx.gluon.nn.Conv2D(2, 3, layout="XYZW"), ValueError),
    ("gluon-stack-sparse-mixed",
     lambda t: mx.gluon.data.batchify.stack_sparse([_csr(1, 2), _rsp(1, 2)]), TypeError),
    # Module misuse
    ("module-forward-unbound", lambda t: _module_forward_unbound(), RuntimeError),
    ("module-update-no-optimizer", lambda t: _module_update_without_optimizer(), RuntimeError),
    ("module-fit-no-epochs", lambda t: _module_fit_without_epochs(), ValueError),
    # KVStore misuse
    ("kv-pull-uninitialized", lambda t: mx.kv.create("local").pull(3, out=_dense(2)), ValueError),
    ("kv-init-twice", lambda t: _kv_init_twice(), ValueError),
    ("kv-push-shape", lambda t: _kv_push_shape(), ValueError),
    # symbols
    ("sym-var-empty-name", lambda t: mx.sym.var(""), TypeError),
    ("sym-infer-unknown-name", lambda t: mx.sym.var("a").infer_shape(b=(2,)), ValueError),
    ("sym-infer-positional",
     lambda t: (mx.sym.var("a") + mx.sym.var("b")).infer_shape((2,), (2,), (2,)), ValueError),
    ("sym-asnumpy", lambda t: mx.sym.var("a").asnumpy(), NotImplementedError),
    ("sym-bind-missing",
     lambda t: (mx.sym.var("a") + mx.sym.var("b")).bind(mx.cpu(), {"a": _dense(2)}), ValueError),
    ("sym-simple-bind-unknown",
     lambda t: (mx.sym.var("a") + mx.sym.var("b")).simple_bind(mx.cpu(), c=(2,)), ValueError),
    # autograd and optimizer operators
    ("autograd-head-grads",
     lambda t: mx.autograd.backward([_dense(1)], [_dense(1), _dense(1)]), ValueError),
    ("ftrl-zero-lr", lambda t: mx.nd.ftrl_update(_dense(2), _dense(2), mx.nd.zeros((2,)),
                                                 mx.nd.zeros((2,)), lr=0.0), ValueError),
    # the PyTorch optimizers
    ("torch-optim-negative-lr", lambda t: _torch_sgd(lr=-1.0), ValueError),
    ("torch-optim-lazy-mode", lambda t: _torch_sgd(lr=0.1, lazy_update="sometimes"), ValueError),
    ("torch-optim-state-shape", lambda t: _torch_load_broadcast_state(), ValueError),
    ("torch-optim-flag-tensor", lambda t: _torch_sgd(lr=0.1, nesterov=np.zeros(3)), TypeError),
    ("torch-optim-state-step-type", lambda t: _torch_load_string_step(), ValueError),
    # custom operators: the user's exception keeps its class; shapes are checked
    ("custom-op-user-oserror",
     lambda t: mx.nd.Custom(_dense(2), op_type="contract_raising"), FileNotFoundError),
    ("custom-op-float-shape",
     lambda t: mx.nd.Custom(_dense(2), op_type="contract_raising", shape="2.5"), TypeError),
    ("custom-op-huge-shape",
     lambda t: mx.nd.Custom(_dense(2), op_type="contract_raising", shape="1" + "0" * 15),
     MemoryError),
    ("bind-huge-output", lambda t: mx.sym.FullyConnected(
        mx.sym.var("x"), num_hidden=2**40, no_bias=True).simple_bind(mx.cpu(), x=(2, 4)),
     MemoryError),
    # the CLI's model directories
    ("model-dir-not-json", lambda t: _model_dir(t, "{"), ValueError),
    ("model-dir-negative-epoch", lambda t: _model_dir(t, json.dumps({
        "format": "sparsenet-model", "version": 1, "model": "logistic", "task": "binary",
        "features": 4, "classes": None, "arch": {}, "epoch": -3})), ValueError),
    ("model-dir-deep-nesting", lambda t: _model_dir(t, "[" * 100000 + "]" * 100000),
     ValueError),
]


def test_table_is_large_and_ids_are_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) >= 60
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("call, builtin", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_call_is_mxnet_error_and_builtin(call, builtin, tmp_path):
    with pytest.raises(mx.MXNetError) as info:
        call(tmp_path)
    err = info.value
    assert isinstance(err, builtin), f"{type(err).__name__} is not a {builtin.__name__}: {err}"
    assert isinstance(err, base.SparsenetError) and isinstance(err, RuntimeError)
    assert str(err), "the message must say what was expected and what came"


@pytest.mark.parametrize("call", [
    lambda t: mx.nd.load(str(t / "missing.nd")),
    lambda t: mx.model.load_checkpoint(str(t / "missing"), 1),
], ids=["nd-load", "load-checkpoint"])
def test_missing_file_is_the_documented_oserror(call, tmp_path):
    with pytest.raises(FileNotFoundError):
        call(tmp_path)


def test_new_classes_refine_their_builtins():
    assert issubclass(base.UnknownNameError, KeyError)
    assert issubclass(base.UnsupportedError, NotImplementedError)
    assert issubclass(base.StateError, RuntimeError)
    for cls in (base.UnknownNameError, base.UnsupportedError, base.StateError):
        assert issubclass(cls, mx.MXNetError)


def test_key_error_message_is_unchanged():
    # KeyError's str() quotes its message; the subclass keeps that builtin behaviour
    with pytest.raises(KeyError) as info:
        mx.gluon.ParameterDict().get_constant("c")
    assert str(info.value).startswith("\"No constant named 'c'.")
