"""MXNet 1.9.1's 2-bit gradient compression in the in-process and distributed stores.

Expected values come from outside the code under test:

* ``np_quantize``: MXNet's kernel rule (``src/kvstore/gradient_compression-inl.h``,
  ``quantize_2bit``) re-written here in NumPy float32;
* ``mxnet_expected_2bit``: the logic of MXNet's own ``compute_expected_2bit_quantization``
  (``tests/nightly/test_kvstore.py``), bit strings and all, giving the packed words;
* figures measured with MXNet 1.9.1 (pip ``mxnet==1.9.1``, ``mx.kv.create('device')`` on
  CPU contexts), pasted below.
"""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.base import (InvalidArgumentError, InvalidArgumentTypeError, MXNetError,
                            StorageTypeError)
from sparsenet.kvstore.compression import (dequantize_2bit, pack_2bit, packed_words,
                                           quantize_2bit, unpack_2bit)
from tests.kvstore.dist_helpers import run_ranks, values

T = 0.5


# ---------------------------------------------------------------------- references
def np_quantize(grad, residual, threshold):
    """MXNet's quantize_2bit in float32: returns (sent values, new residual)."""
    t = np.float32(threshold)
    res = residual.astype(np.float32) + grad.astype(np.float32).reshape(-1)
    sent = np.zeros_like(res)
    pos, neg = res >= t, res <= -t
    sent[pos], sent[neg] = t, -t
    res[pos] -= t
    res[neg] += t  # MXNet: residual -= neg_threshold
    return sent, res


def mxnet_expected_2bit(arr, curr_residual, threshold):
    """MXNet 1.9.1's ``compute_expected_2bit_quantization`` logic (residual kept in float32,
    as the kernel keeps it): (packed words as uint32, new residual, dequantized values)."""
    str_quant, new_residual, decompr = "", [], []
    for i, a in np.ndenumerate(arr.reshape(-1)):
        a = np.float32(a) + np.float32(curr_residual[i])
        if a >= np.float32(threshold):
            str_quant += "11"
            new_residual.append(a - np.float32(threshold))
            decompr.append(threshold)
        elif a <= np.float32(-threshold):
            str_quant += "10"
            new_residual.append(a + np.float32(threshold))
            decompr.append(-threshold)
        else:
            str_quant += "00"
            new_residual.append(a)
            decompr.append(0)
    if len(str_quant) % 32 != 0:  # MXNet pads to 16 bits, then reads 32 at a time
        str_quant += "0" * (32 - len(str_quant) % 32)
    compr = []
    for i in range(0, len(str_quant), 32):
        cur = (str_quant[i + 24:i + 32] + str_quant[i + 16:i + 24] + str_quant[i + 8:i + 16]
               + str_quant[i:i + 8])
        # MXNet stores the word in a float array; its bits are copied, never converted (a
        # round trip through a Python float would quiet a signalling-NaN pattern)
        compr.append(int(cur, 2))
    return (np.array(compr, dtype=np.uint32), np.array(new_residual, dtype=np.float32),
            np.array(decompr, dtype=np.float32))


floats = st.floats(-3, 3, width=32, allow_nan=False)


# ---------------------------------------------------------------------- kernels
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(floats, min_size=0, max_size=40), min_size=1, max_size=4),
       st.sampled_from([0.5, 0.1, 1.0, 0.3, 2.5]))
def test_quantize_matches_mxnet_rule_over_several_pushes(pushes, threshold):
    n = max(len(p) for p in pushes)
    residual_np = np.zeros(n, np.float32)
    residual = torch.zeros(n)
    for p in pushes:
        grad = np.array(p + [0.0] * (n - len(p)), np.float32)
        sent_np, residual_np = np_quantize(grad, residual_np, threshold)
        codes = quantize_2bit(torch.from_numpy(grad.copy()), residual, threshold)
        np.testing.assert_array_equal(dequantize_2bit(codes, threshold).numpy(), sent_np)
        np.testing.assert_array_equal(residual.numpy(), residual_np)


@settings(max_examples=40, deadline=None)
@given(st.lists(floats, min_size=1, max_size=70), st.lists(floats, min_size=70, max_size=70))
def test_packed_words_are_mxnets_compressed_floats(grad, res0):
    grad = np.array(grad, np.float32)
    res0 = np.array(res0[:grad.size], np.float32) / 4
    words, new_res, decompr = mxnet_expected_2bit(grad, res0, T)
    residual = torch.from_numpy(res0.copy())
    codes = quantize_2bit(torch.from_numpy(grad), residual, T)
    packed = pack_2bit(codes)
    assert packed.numel() == packed_words(grad.size) == math.ceil(grad.size / 16)
    # the bit pattern of every word equals MXNet's compressed float's
    np.testing.assert_array_equal(packed.numpy().view(np.uint32), words[:packed.numel()])
    np.testing.assert_array_equal(residual.numpy(), new_res)
    np.testing.assert_array_equal(dequantize_2bit(unpack_2bit(packed, grad.size), T).numpy(),
                                  decompr)


def test_pack_layout_by_hand():
    # code j of a word: byte j // 4 (little-endian), bits 7-2(j%4) and 6-2(j%4)
    codes = torch.zeros(17, dtype=torch.uint8)
    codes[0], codes[5], codes[15], codes[16] = 3, 2, 3, 2
    words = pack_2bit(codes).numpy().view(np.uint32)
    assert words.tolist() == [0xC0 | (0x20 << 8) | (0x03 << 24), 0x80]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([0, 2, 3]), min_size=0, max_size=100))
def test_pack_unpack_round_trip(codes):
    c = torch.tensor(codes, dtype=torch.uint8)
    words = pack_2bit(c)
    assert words.dtype == torch.int32 and words.numel() == -(-len(codes) // 16)
    assert torch.equal(unpack_2bit(words, len(codes)), c)
    # the padding codes are zero
    assert not unpack_2bit(words, words.numel() * 16)[len(codes):].any()


def test_unpack_refuses_short_input():
    with pytest.raises(InvalidArgumentError, match="at least 2 words for 17 codes"):
        unpack_2bit(torch.zeros(1, dtype=torch.int32), 17)


# ---------------------------------------------------------------------- argument checks
@pytest.mark.parametrize("params, error, match", [
    # MXNet 1.9.1: "Unknown type for gradient compression 1bit"
    ({"type": "1bit", "threshold": 0.5}, InvalidArgumentError,
     "unknown type for gradient compression '1bit'"),
    ({"type": "none"}, InvalidArgumentError, "unknown type for gradient compression 'none'"),
    # MXNet 1.9.1: "threshold must be greater than 0"
    ({"type": "2bit", "threshold": 0}, InvalidArgumentError, "threshold must be greater than 0"),
    ({"type": "2bit", "threshold": -1}, InvalidArgumentError, "threshold must be greater than 0"),
    ({"type": "2bit", "threshold": float("nan")}, InvalidArgumentError, "greater than 0"),
    ({"type": "2bit", "threshold": float("inf")}, InvalidArgumentError, "finite"),
    # MXNet 1.9.1: "Invalid Parameter format for threshold expect float but value='abc'"
    ({"type": "2bit", "threshold": "abc"}, InvalidArgumentError,
     "invalid parameter format for threshold, expected a float, got 'abc'"),
    ({"type": "2bit", "threshold": True}, InvalidArgumentError, "expected a float"),
    # MXNet 1.9.1: "Required parameter type of string is not presented"
    ({"threshold": 0.5}, InvalidArgumentError, "required parameter 'type' is not present"),
    ({"type": "2bit", "thresold": 0.1}, InvalidArgumentError, r"unknown parameter\(s\) thresold"),
    # MXNet 1.9.1: AssertionError "unexpected type for param_dict"
    ("2bit", InvalidArgumentTypeError, "compression_params must be a dict"),
])
@pytest.mark.parametrize("name", ["local", "device"])
def test_bad_parameters_raise_mxnet_errors(name, params, error, match):
    kv = mx.kv.create(name)
    with pytest.raises(error, match=match) as info:
        kv.set_gradient_compression(params)
    assert isinstance(info.value, MXNetError)
    assert isinstance(info.value, ValueError if error is InvalidArgumentError else TypeError)


def test_threshold_as_string_is_accepted_as_mxnet_does():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": "0.25"})
    kv.init(0, mx.nd.zeros((2,)))
    kv.push(0, mx.nd.full((2,), 0.3))
    out = mx.nd.zeros((2,))
    kv.pull(0, out=out)
    assert out.asnumpy().tolist() == [0.25, 0.25]


# ---------------------------------------------------------------------- in-process stores
def pulled(kv, key, shape):
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()


@pytest.mark.parametrize("name", ["device", "local"])
def test_local_store_matches_mxnet_measured(name):
    # measured with MXNet 1.9.1, mx.kv.create('device'), threshold 0.5, no optimizer:
    # pushes 0.4, 0.1, 0.2, 0.3, -0.7, -0.4 pull 0, 0.5, 0, 0.5, -0.5, -0.5; a key
    # initialised with ones pulls ones (init is not compressed)
    kv = mx.kv.create(name)
    kv.set_gradient_compression({"type": "2bit", "threshold": T})
    kv.init("a", mx.nd.zeros((2, 3)))
    kv.init("b", mx.nd.ones((2, 3)))
    assert (pulled(kv, "b", (2, 3)) == 1).all()
    for g, want in zip([0.4, 0.1, 0.2, 0.3, -0.7, -0.4], [0, 0.5, 0, 0.5, -0.5, -0.5]):
        kv.push("a", mx.nd.ones((2, 3)) * g)
        assert (pulled(kv, "a", (2, 3)) == want).all(), g


def test_one_residual_per_device_of_a_push():
    # measured with MXNet 1.9.1 ('device'): one residual per position in the pushed list
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": T})
    kv.init("c", mx.nd.zeros((5,)))
    kv.push("c", [mx.nd.array([0.3, 0.6, -0.6, 1.7, -0.2], ctx=mx.cpu(0)),
                  mx.nd.array([0.3, 0.1, -0.1, 0.2, -0.4], ctx=mx.cpu(1))])
    assert pulled(kv, "c", (5,)).tolist() == [0, 0.5, -0.5, 0.5, 0]
    kv.push("c", [mx.nd.array([0.3, 0, 0, 0, 0], ctx=mx.cpu(0)),
                  mx.nd.array([0.3, 0, 0, 0, 0], ctx=mx.cpu(1))])
    assert pulled(kv, "c", (5,)).tolist() == [1, 0, 0, 0.5, 0]
    kv.push("c", [mx.nd.array([0.3, 0, 0, 0, 0]), mx.nd.array([0.3, 0, 0, 0, 0])])
    assert pulled(kv, "c", (5,)).tolist() == [0, 0, 0, 0.5, 0]


def test_new_threshold_keeps_residuals():
    # measured with MXNet 1.9.1 ('device'): push 0.3 at t=0.5, set t=1.0, push 0.3 -> 0,
    # push 0.5 -> 1.0 (the residual 1.1 crossed the new threshold)
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init("d", mx.nd.zeros((4,)))
    kv.push("d", mx.nd.ones((4,)) * 0.3)
    kv.set_gradient_compression({"type": "2bit", "threshold": 1.0})
    kv.push("d", mx.nd.ones((4,)) * 0.3)
    assert (pulled(kv, "d", (4,)) == 0).all()
    kv.push("d", mx.nd.ones((4,)) * 0.5)
    assert (pulled(kv, "d", (4,)) == 1.0).all()


def test_random_pushes_with_optimizer_match_numpy_and_leave_caller_arrays():
    # MXNet's test_compress_kvstore.check_compr_random, with SGD(lr=1, rescale_grad=2) standing
    # in for its 'test' optimizer (weight += rescale_grad * grad: SGD subtracts it)
    rng = np.random.RandomState(3)
    shape, ndev, rate = (7, 9), 3, 2.0
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": T})
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, rescale_grad=rate))
    kv.init(13, mx.nd.zeros(shape))
    residuals = [np.zeros(shape[0] * shape[1], np.float32) for _ in range(ndev)]
    weight = np.zeros(shape, np.float32)
    for _ in range(4):
        grads_np = [rng.uniform(-0.6, 0.6, shape).astype(np.float32) for _ in range(ndev)]
        grads = [mx.nd.array(g, ctx=mx.cpu(d)) for d, g in enumerate(grads_np)]
        kv.push(13, grads)
        total = np.zeros(shape[0] * shape[1], np.float32)
        for d in range(ndev):
            sent, residuals[d] = np_quantize(grads_np[d], residuals[d], T)
            total += sent
        weight -= np.float32(rate) * total.reshape(shape)
        np.testing.assert_allclose(pulled(kv, 13, shape), weight, rtol=0, atol=1e-6)
        for g, g_np in zip(grads, grads_np):  # never written into
            np.testing.assert_array_equal(g.asnumpy(), g_np)


def test_row_sparse_and_float16_pushes_are_refused_and_change_nothing():
    # MXNet 1.9.1 dist: "Gradient compression for row sparse storage type is not supported",
    # "Gradient compression is only supported for float32 type of parameters"; its 'device'
    # store stores a wrong dense value for a row_sparse push and fails on float16
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": T})
    kv.init("r", mx.nd.zeros((4, 2)).tostype("row_sparse"))
    kv.init("h", mx.nd.zeros((4,), dtype="float16"))
    kv.init("w", mx.nd.zeros((4, 2)))
    g = mx.nd.sparse.row_sparse_array(([[0.6, 0.2]], [1]), shape=(4, 2))
    with pytest.raises(StorageTypeError, match="key 'r': gradient compression for row_sparse "
                                               "storage type is not supported"):
        kv.push("r", g)
    with pytest.raises(StorageTypeError, match="row_sparse storage type is not supported"):
        kv.push("w", [mx.nd.ones((4, 2)) * 0.3, g])  # one of the devices' pushes
    with pytest.raises(InvalidArgumentError, match="only supported for float32 values, the key "
                                                   "holds float16"):
        kv.push("h", mx.nd.ones((4,), dtype="float16"))
    with pytest.raises(InvalidArgumentError, match="float32"):  # a later key's error...
        kv.push(["w", "h"], [mx.nd.ones((4, 2)) * 0.3, mx.nd.ones((4,), dtype="float16")])
    kv.push("w", mx.nd.ones((4, 2)) * 0.3)  # ...left w's residual as it was: 0.3 < 0.5
    assert (pulled(kv, "w", (4, 2)) == 0).all()


# ---------------------------------------------------------------------- distributed
def _grad(rank, step, shape):
    rng = np.random.RandomState(100 * step + rank)
    return rng.uniform(-0.8, 0.8, shape).astype(np.float32)


SHAPES = {"small": (2, 3), "odd": (37, 3), "big": (200, 500)}


def scenario_compressed(rank, world):
    from sparsenet.base import DistributedError
    from sparsenet.kvstore import collective

    sent_bytes = []
    real_allgather, real_all_reduce = collective.allgather, collective.all_reduce_sum

    def allgather(t, *a, **kw):
        if kw.get("op") == "push":
            sent_bytes.append(t.numel() * t.element_size())
        return real_allgather(t, *a, **kw)

    def all_reduce_sum(t, *a, **kw):
        if kw.get("op") == "push":
            sent_bytes.append(t.numel() * t.element_size())
        return real_all_reduce(t, *a, **kw)
    collective.allgather, collective.all_reduce_sum = allgather, all_reduce_sum

    out = {}
    plain = mx.kv.create("dist_sync")  # bytes of an uncompressed dense push, for comparison
    plain.init("p", mx.nd.zeros(SHAPES["big"]))
    sent_bytes.clear()
    plain.push("p", mx.nd.array(_grad(rank, 0, SHAPES["big"])))
    out["plain_bytes"] = sum(sent_bytes)

    kv = plain  # set_gradient_compression on the same store, after an uncompressed push
    kv.set_gradient_compression({"type": "2bit", "threshold": T})
    for name, shape in SHAPES.items():
        kv.init(name, mx.nd.zeros(shape))
    kv.init("ones", mx.nd.ones((3, 4)))
    o = mx.nd.zeros((3, 4))
    kv.pull("ones", out=o)
    out["ones"] = o.asnumpy()  # init is not compressed
    pulls = []
    for step in range(3):
        sent_bytes.clear()
        kv.push(list(SHAPES), [mx.nd.array(_grad(rank, step, s)) for s in SHAPES.values()])
        out.setdefault("push_bytes", sum(sent_bytes))
        got = {}
        for name, shape in SHAPES.items():
            o = mx.nd.zeros(shape)
            kv.pull(name, out=o)
            got[name] = o.asnumpy()
        pulls.append(got)
    out["pulls"] = pulls
    sent_bytes.clear()
    kv.push("big", mx.nd.array(_grad(rank, 9, SHAPES["big"])))
    out["big_push_bytes"] = sum(sent_bytes)
    # MXNet's nightly check_compr_residual on a fresh key, with SGD(lr=1, rescale_grad=2)
    # (weight -= 2 * grad) in place of its 'test' optimizer (weight += 2 * grad)
    kv.init("res", mx.nd.zeros((2, 3)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, rescale_grad=2.0))
    seq = []
    for g in (0.4, T - 0.4, 0.2, T - 0.2):
        kv.push("res", mx.nd.ones((2, 3)) * g)
        o = mx.nd.zeros((2, 3))
        kv.pull("res", out=o)
        seq.append(o.asnumpy())
    out["residual_seq"] = seq
    # a row_sparse push is refused on every rank alike
    kv.init("rsp", mx.nd.zeros((4, 2)).tostype("row_sparse"))
    try:
        kv.push("rsp", mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [rank]), shape=(4, 2)))
        out["rsp"] = None
    except DistributedError as e:
        out["rsp"] = str(e)
    # a sharded key's rows are routed uncompressed: refused while compression is set
    kv.init_sharded("emb", (6, 2))
    try:
        kv.push("emb", mx.nd.ones((6, 2)))
        out["sharded"] = None
    except DistributedError as e:
        out["sharded"] = str(e)
    # ranks that disagree on compression are told so, instead of exchanging garbage
    kv.init("mix", mx.nd.zeros((4,)))
    if rank == 1:
        kv._compression = None
    try:
        kv.push("mix", mx.nd.ones((4,)))
        out["mix"] = None
    except DistributedError as e:
        out["mix"] = str(e)
    # a Trainer hands compression_params to the dist store it creates (MXNet's Trainer does)
    net = mx.gluon.nn.Dense(1, in_units=4, use_bias=False)
    net.initialize(mx.init.Zero())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                               kvstore="dist_sync",
                               compression_params={"type": "2bit", "threshold": T})
    with mx.autograd.record():
        loss = net(mx.nd.ones((1, 4)) * (rank + 1)).sum()
    loss.backward()
    trainer.step(1)
    out["trainer_w"] = net.weight.data().asnumpy()
    return out


def test_dist_two_ranks_pull_the_sum_of_quantised_pushes():
    world = 2
    outs = values(run_ranks("tests.kvstore.test_gradient_compression:scenario_compressed",
                            world, timeout=60, wall=150))
    residual = {(r, n): np.zeros(np.prod(s), np.float32) for r in range(world)
                for n, s in SHAPES.items()}
    for step in range(3):
        for name, shape in SHAPES.items():
            want = np.zeros(np.prod(shape), np.float32)
            for r in range(world):  # summed in rank order
                sent, residual[r, name] = np_quantize(_grad(r, step, shape), residual[r, name], T)
                want += sent
            for out in outs:
                np.testing.assert_array_equal(out["pulls"][step][name], want.reshape(shape))
    for out in outs:
        assert (out["ones"] == 1).all()
        # MXNet's nightly check_compr_residual at rate 2: 0, 1.0*W, 1.0*W, 2.0*W (negated)
        assert [-float(v.flat[0]) for v in out["residual_seq"]] == [0, T * 2 * world,
                                                                    T * 2 * world,
                                                                    2 * T * 2 * world]
        assert "row_sparse storage type is not supported" in out["rsp"]
        assert "gradient compression does not apply to a sharded key" in out["sharded"]
        assert "disagree on the call" in out["mix"] and "compression 2bit" in out["mix"]
        # bytes this rank hands the collectives for one dense push of 100 000 float32:
        # 400 000 uncompressed (+ 16 bytes of the push's storage-type metadata), 25 000
        # compressed (16 values per 4-byte word)
        assert out["plain_bytes"] == 200 * 500 * 4 + 16
        assert out["big_push_bytes"] == 4 * math.ceil(200 * 500 / 16)
        assert out["plain_bytes"] / out["big_push_bytes"] >= 14
        assert out["push_bytes"] == 4 * sum(math.ceil(np.prod(s) / 16) for s in SHAPES.values())
        # each rank's gradient (rank + 1 per weight, both at or above T) is sent as +T: the
        # store's SGD step sees world * T, not 1 + 2 (uncompressed)
        np.testing.assert_allclose(out["trainer_w"], np.full((1, 4), -0.1 * world * T),
                                   rtol=1e-6)


def test_trainer_checks_compression_params_and_warns_without_a_store():
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize()
    with pytest.raises(InvalidArgumentError):
        mx.gluon.Trainer(net.collect_params(), "sgd", compression_params={"type": "1bit"})
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               compression_params={"type": "2bit", "threshold": 0.5})
    with mx.autograd.record():
        loss = net(mx.nd.ones((1, 2))).sum()
    loss.backward()
    with pytest.warns(UserWarning, match="compression_params has no effect without a "
                                         "distributed kvstore"):
        trainer.step(1)


def test_module_checks_compression_params():
    with pytest.raises(InvalidArgumentError):
        mx.mod.Module(mx.sym.var("data") * 2, label_names=None,
                      compression_params={"type": "2bit", "threshold": -1})
