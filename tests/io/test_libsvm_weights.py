"""Instance weights, ``label:weight`` (reliability.md row 11: only with ``weights=True``)."""
import re

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.io import LibSVMFormatError, load_libsvm, save_libsvm
from sparsenet.io.libsvm.options import ParseOptions

TEXT = "1:0.5 0:1 2:2\n0 1:3\n# comment\n-1:2.5e1 qid:4 3:4\n1:0 0:7\n"
# hand-computed from TEXT
LABELS = [1.0, 0.0, -1.0, 1.0]
WEIGHTS = [0.5, 1.0, 25.0, 0.0]
DENSE = [[1, 0, 2, 0], [0, 3, 0, 0], [0, 0, 0, 4], [7, 0, 0, 0]]


def test_load_label_weight(write, backend):
    data, label, weight = load_libsvm(write(TEXT), num_features=4, weights=True)
    assert data.asnumpy().tolist() == DENSE
    assert label.asnumpy().tolist() == LABELS
    assert weight.asnumpy().tolist() == WEIGHTS and weight.dtype == np.float32


def test_load_weights_float64_and_qid(write, backend):
    data, label, weight, qid = load_libsvm(write(TEXT), weights=True, query_id=True,
                                           dtype="float64")
    assert weight.dtype == np.float64 and weight.asnumpy().tolist() == WEIGHTS
    assert qid.asnumpy().tolist() == [0, 0, 4, 0]


def test_label_weight_is_an_error_without_weights(write, backend):
    with pytest.raises(LibSVMFormatError, match=re.escape(
            "data.svm:1:1: invalid label '1:0.5': a line must start with its label (is the label "
            "missing? a 'label:weight' token needs weights=True)")):
        load_libsvm(write(TEXT))


@pytest.mark.parametrize("line,msg", [
    ("1:x 0:1", "data.svm:2:1: invalid instance weight 'x' in token '1:x': expected a number "
                "such as 1 or 0.5"),
    ("1: 0:1", "data.svm:2:1: invalid instance weight '' in token '1:'"),
    ("1:2:3 0:1", "data.svm:2:1: invalid instance weight '2:3' in token '1:2:3'"),
    ("1:-0.5 0:1", "data.svm:2:1: invalid instance weight '-0.5' in token '1:-0.5': weights "
                   "must be >= 0"),
    ("1:nan 0:1", "data.svm:2:1: invalid instance weight 'nan' in token '1:nan': pass "
                  "allow_nonfinite=True"),
    ("1:1e39 0:1", "data.svm:2:1: invalid instance weight '1e39' in token '1:1e39': out of "
                   "float32 range"),
    ("x:1 0:1", "data.svm:2:1: invalid label 'x:1': expected label:weight with a number"),
    (":1 0:1", "data.svm:2:1: invalid label ':1'"),
])
def test_bad_weights(write, backend, line, msg):
    with pytest.raises(LibSVMFormatError, match=re.escape(msg)) as e:
        load_libsvm(write("0 1:1\n" + line + "\n"), weights=True)
    assert (e.value.line, e.value.column) == (2, 1)


def test_nonfinite_weight_allowed(write, backend):
    _, _, w = load_libsvm(write("1:nan 0:1\n0:inf 0:2\n"), weights=True, allow_nonfinite=True)
    assert np.isnan(w.asnumpy()[0]) and w.asnumpy()[1] == np.inf


def test_weights_and_multilabel_cannot_combine():
    with pytest.raises(ValueError, match="cannot be combined with multilabel"):
        ParseOptions(weights=True, multilabel=True)


@pytest.mark.parametrize("kw", [{}, dict(cache_bytes=0, chunk_size=16)])
def test_iterator_batches_carry_weights(write, backend, kw):
    it = mx.io.LibSVMIter(data_libsvm=write(TEXT), data_shape=(4,), batch_size=3, weights=True,
                          **kw)
    assert [d.name for d in it.provide_label] == ["softmax_label", "softmax_label_weight"]
    for _ in range(2):  # two epochs: the padded batch wraps to the first rows
        got = [(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(),
                b.label[1].asnumpy().tolist(), b.pad) for b in it]
        assert got == [(DENSE[:3], LABELS[:3], WEIGHTS[:3], 0),
                       ([DENSE[3], DENSE[0], DENSE[1]], [LABELS[3], LABELS[0], LABELS[1]],
                        [WEIGHTS[3], WEIGHTS[0], WEIGHTS[1]], 2)]
        it.reset()


def test_iterator_without_round_batch(write, backend):
    it = mx.io.LibSVMIter(data_libsvm=write(TEXT), data_shape=(4,), batch_size=3, weights=True,
                          round_batch=False)
    assert [b.label[1].asnumpy().tolist() for b in it] == [WEIGHTS[:3], WEIGHTS[3:]]


def test_save_load_round_trip_with_weights(tmp_path):
    rng = np.random.default_rng(0)
    dense = (rng.random((6, 9)) < 0.3) * rng.standard_normal((6, 9)).astype(np.float32)
    label = rng.integers(0, 2, 6).astype(np.float32)
    weight = rng.random(6).astype(np.float32) * 3
    weight[2] = 0.0
    p = str(tmp_path / "w.svm")
    save_libsvm(p, mx.nd.array(dense).tostype("csr"), label, weight=weight)
    data, lab, w = load_libsvm(p, num_features=9, weights=True)
    assert np.array_equal(data.asnumpy(), dense)
    assert np.array_equal(lab.asnumpy(), label) and np.array_equal(w.asnumpy(), weight)


def test_save_rejects_bad_weights(tmp_path):
    x = mx.nd.array([[1.0, 0.0], [0.0, 2.0]]).tostype("csr")
    p = str(tmp_path / "w.svm")
    with pytest.raises(ValueError, match="weights must be >= 0, got -1.0 in row 1"):
        save_libsvm(p, x, [1, 0], weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="weight has 1 entries but data has 2 rows"):
        save_libsvm(p, x, [1, 0], weight=[1.0])
    with pytest.raises(ValueError, match="NaN or infinity"):
        save_libsvm(p, x, [1, 0], weight=[1.0, np.nan])
    assert not (tmp_path / "w.svm").exists()


def test_weights_feed_a_loss(write):
    """The weights are a loss's sample_weight: weighted mean equals the NumPy reference."""
    it = mx.io.LibSVMIter(data_libsvm=write(TEXT), data_shape=(4,), batch_size=4, weights=True)
    batch = it.next()
    pred = mx.nd.array([0.3, -0.2, 0.1, 0.4])
    loss = mx.gluon.loss.L2Loss()(pred, batch.label[0], batch.label[1])
    ref = 0.5 * (np.array(LABELS) - pred.asnumpy()) ** 2 * np.array(WEIGHTS)
    assert np.allclose(loss.asnumpy(), ref)
