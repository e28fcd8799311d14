"""Metrics against NumPy / scikit-learn / SciPy references computed here."""
import math
from collections import OrderedDict

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score, matthews_corrcoef

import sparsenet as mx


def _batches(rng, n_batches=3, n=8, k=4):
    labels = [rng.randint(0, k, size=n).astype("float32") for _ in range(n_batches)]
    preds = [rng.dirichlet(np.ones(k), size=n).astype("float32") for _ in range(n_batches)]
    return labels, preds


def _update(metric, labels, preds):
    for y, p in zip(labels, preds):
        metric.update([mx.nd.array(y)], [mx.nd.array(p)])


def test_accuracy_accumulates_counts_over_batches():
    rng = np.random.RandomState(1)
    labels, preds = _batches(rng)
    m = mx.metric.Accuracy()
    _update(m, labels, preds)
    y, p = np.concatenate(labels), np.concatenate(preds)
    assert m.get() == ('accuracy', pytest.approx(np.mean(p.argmax(1) == y)))
    assert m.num_inst == 24
    # predictions that are already class ids (same shape as the labels)
    m2 = mx.metric.create('acc')
    m2.update([mx.nd.array([1, 2, 3])], [mx.nd.array([1, 0, 3])])
    assert m2.get()[1] == pytest.approx(2 / 3)
    # axis selects the class axis
    m3 = mx.metric.Accuracy(axis=0)
    m3.update([mx.nd.array([1, 0])], [mx.nd.array([[0.1, 0.9], [0.8, 0.2]])])
    assert m3.get()[1] == 1.0


def test_top_k_accuracy():
    rng = np.random.RandomState(2)
    labels, preds = _batches(rng, k=6)
    m = mx.metric.create('top_k_accuracy', top_k=3)
    _update(m, labels, preds)
    y, p = np.concatenate(labels).astype(int), np.concatenate(preds)
    top3 = np.argsort(-p, axis=1)[:, :3]
    assert m.get() == ('top_k_accuracy_3', pytest.approx(np.mean((top3 == y[:, None]).any(1))))
    with pytest.raises(ValueError, match="use Accuracy for top_k = 1"):
        mx.metric.TopKAccuracy(top_k=1)


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_f1_and_mcc_against_sklearn(average):
    rng = np.random.RandomState(3)
    labels, preds = _batches(rng, n_batches=4, n=10, k=2)
    f1, mcc = mx.metric.F1(average=average), mx.metric.MCC(average=average)
    _update(f1, labels, preds)
    _update(mcc, labels, preds)
    per_batch = [(y, p.argmax(1)) for y, p in zip(labels, preds)]
    if average == "macro":
        ref_f1 = np.mean([f1_score(y, q, zero_division=0) for y, q in per_batch])
        ref_mcc = np.mean([matthews_corrcoef(y, q) for y, q in per_batch])
    else:
        y = np.concatenate([y for y, _ in per_batch])
        q = np.concatenate([q for _, q in per_batch])
        ref_f1, ref_mcc = f1_score(y, q), matthews_corrcoef(y, q)
    assert f1.get()[1] == pytest.approx(ref_f1)
    assert mcc.get()[1] == pytest.approx(ref_mcc)
    assert f1.get_global()[1] == pytest.approx(ref_f1)
    with pytest.raises(ValueError, match="binary classification only"):
        f1.update([mx.nd.array([0, 1, 2])], [mx.nd.ones((3, 3))])


@pytest.mark.parametrize("name, fn", [
    ("mae", lambda d: np.abs(d).mean()),
    ("mse", lambda d: (d ** 2).mean()),
    ("rmse", lambda d: np.sqrt((d ** 2).mean())),
])
def test_regression_metrics_average_per_batch_errors(name, fn):
    rng = np.random.RandomState(4)
    labels = [rng.randn(5).astype("float32") for _ in range(3)]
    preds = [rng.randn(5, 1).astype("float32") for _ in range(3)]
    m = mx.metric.create(name)
    _update(m, labels, preds)
    expected = np.mean([fn(y.reshape(-1, 1).astype('f8') - p.astype('f8'))
                        for y, p in zip(labels, preds)])
    assert m.get() == (name, pytest.approx(expected, rel=1e-12))


def test_cross_entropy_and_nll():
    rng = np.random.RandomState(5)
    labels, preds = _batches(rng)
    ce, nll = mx.metric.create('ce'), mx.metric.create('nll_loss')
    _update(ce, labels, preds)
    _update(nll, labels, preds)
    y, p = np.concatenate(labels).astype(int), np.concatenate(preds).astype('f8')
    expected = np.mean(-np.log(p[np.arange(len(y)), y] + 1e-12))
    assert ce.get() == ('cross-entropy', pytest.approx(expected, rel=1e-6))
    assert nll.get() == ('nll-loss', pytest.approx(expected, rel=1e-6))


def test_perplexity_with_ignored_label():
    rng = np.random.RandomState(6)
    labels, preds = _batches(rng)
    m = mx.metric.Perplexity(ignore_label=0)
    _update(m, labels, preds)
    y, p = np.concatenate(labels).astype(int), np.concatenate(preds).astype('f8')
    keep = y != 0
    expected = math.exp(np.mean(-np.log(np.maximum(1e-10, p[np.arange(len(y)), y][keep]))))
    assert m.get() == ('perplexity', pytest.approx(expected, rel=1e-6))
    assert m.num_inst == keep.sum()


def test_pearson_macro_and_micro():
    rng = np.random.RandomState(7)
    labels = [rng.randn(20) for _ in range(3)]
    preds = [y * 0.5 + rng.randn(20) for y in labels]
    macro, micro = mx.metric.create('pearsonr'), mx.metric.PearsonCorrelation(average='micro')
    _update(macro, labels, preds)
    _update(micro, labels, preds)
    assert macro.get()[1] == pytest.approx(np.mean([stats.pearsonr(p, y)[0]
                                                    for y, p in zip(labels, preds)]))
    ref = stats.pearsonr(np.concatenate(preds), np.concatenate(labels))[0]
    assert micro.get()[1] == pytest.approx(ref, rel=1e-6)
    micro.reset_local()
    assert math.isnan(micro.get()[1])
    assert micro.get_global()[1] == pytest.approx(ref, rel=1e-6)


def test_loss_metric_and_custom_metrics():
    m = mx.metric.Loss()
    m.update(None, [mx.nd.array([1.0, 2.0]), mx.nd.array([[3.0, 6.0]])])
    assert m.get() == ('loss', 3.0)

    def sum_and_count(label, pred):
        return float(np.abs(label - pred).sum()), label.size
    c = mx.metric.create(sum_and_count)
    c.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([2.0, 4.0])])
    assert c.get() == ('sum_and_count', 1.5)
    lam = mx.metric.np(lambda label, pred: float((label == pred).mean()))
    lam.update([mx.nd.array([1, 2])], [mx.nd.array([1, 3])])
    assert lam.get() == ('custom(<lambda>)', 0.5)
    with pytest.raises(TypeError, match="cannot be serialised"):
        lam.get_config()
    with pytest.raises(ValueError, match="does not match shape of predictions"):
        lam.update([mx.nd.ones((1,))], [])
    extra = mx.metric.CustomMetric(lambda y, p: 1.0, name='x', allow_extra_outputs=True)
    extra.update([mx.nd.ones((1,))], [mx.nd.ones((1,)), mx.nd.ones((1,))])
    assert extra.get() == ('x', 1.0)


def test_create_and_composite():
    comp = mx.metric.create(['acc', mx.metric.MSE(), lambda y, p: 0.0])
    assert isinstance(comp, mx.metric.CompositeEvalMetric)
    assert [type(m).__name__ for m in comp.metrics] == ['Accuracy', 'MSE', 'CustomMetric']
    comp.update([mx.nd.array([1, 0])], [mx.nd.array([[0.2, 0.8], [0.9, 0.1]])])
    names, values = comp.get()
    assert names == ['accuracy', 'mse', 'custom(<lambda>)']
    p = np.array([[0.2, 0.8], [0.9, 0.1]])
    assert values[0] == 1.0
    assert values[1] == pytest.approx(((np.array([[1.0], [0.0]]) - p) ** 2).mean())  # as MXNet
    assert comp.get_metric(1) is comp.metrics[1]
    with pytest.raises(IndexError, match="out of range"):
        comp.get_metric(5)
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        mx.metric.create('nope')
    with pytest.raises(TypeError, match="expected a name"):
        mx.metric.create(3)
    acc = mx.metric.Accuracy(axis=0, name='a0')
    again = mx.metric.create(**acc.get_config())
    assert (type(again), again.axis, again.name) == (mx.metric.Accuracy, 0, 'a0')


def test_update_dict_uses_names_and_local_global_split():
    m = mx.metric.MSE(output_names=['out2'], label_names=['lab'])
    preds = OrderedDict([('out1', mx.nd.array([9.0])), ('out2', mx.nd.array([1.0]))])
    m.update_dict({'lab': mx.nd.array([3.0]), 'other': mx.nd.array([0.0])}, preds)
    assert m.get() == ('mse', 4.0)
    m.reset_local()
    assert math.isnan(m.get()[1]) and m.get_global() == ('mse', 4.0)
    m.update([mx.nd.array([0.0])], [mx.nd.array([2.0])])
    assert m.get() == ('mse', 4.0) and m.get_global_name_value() == [('mse', 4.0)]
    m.reset()
    assert math.isnan(m.get_global()[1])
    comp = mx.metric.CompositeEvalMetric([mx.metric.MAE()], output_names=['out1'])
    comp.update_dict({'lab': mx.nd.array([3.0])}, preds)
    assert comp.get() == (['mae'], [6.0])
    assert str(mx.metric.MAE()) == "EvalMetric: {'mae': nan}"


def test_sparse_predictions_and_labels_are_read_densely():
    m = mx.metric.MSE()
    label = mx.nd.array([[0.0, 1.0], [0.0, 0.0]]).tostype('csr')
    pred = mx.nd.array([[0.0, 3.0], [0.0, 0.0]]).tostype('row_sparse')
    m.update([label], [pred])
    assert m.get() == ('mse', 1.0)
