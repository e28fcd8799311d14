"""Each optimizer's default ``lazy_update`` is MXNet 1.9.1's: lazy where MXNet updates lazily
(SGD, Adam, LARS: their ``lazy_update=True``; AdaGrad, GroupAdaGrad, Ftrl: sparse kernels),
standard where MXNet densifies a row_sparse gradient; and lazy stays available everywhere.

The expected weights were measured with MXNet 1.9.1 (``mx.optimizer.create(name, **kwargs)``,
three ``update`` calls with the gradients below, on the weight ``W0``)."""
import numpy as np
import pytest

import sparsenet as mx

W0 = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1], [0.9, -0.4]], np.float32)
GRADS = [(np.array([[1.0, -2.0]], np.float32), [1]),
         (np.array([[0.5, 0.25], [-1.0, 3.0]], np.float32), [1, 3]),
         (np.array([[0.5, 0.5]], np.float32), [3])]

# name -> (constructor arguments, weight after the three updates, measured with MXNet 1.9.1)
MEASURED = {
    # no wd for NAG: MXNet's nag_mom_update reads the updated weight (docs/differences.md)
    "nag": (dict(momentum=0.9, learning_rate=0.1), [
        [0.5, -0.30000001], [-0.27939999, 1.42005],
        [-0.60000002, 0.1], [1.076, -1.3080001]]),
    "signum": (dict(momentum=0.9, wd=0.1, learning_rate=0.1, wd_lh=0.05), [
        [0.19403496, 0.0029800236], [-0.10148753, 1.0865624],
        [-0.29254243, 4.991889e-06], [0.98706496, -0.49452746]]),
    "rmsprop": (dict(wd=0.1, learning_rate=0.1, clip_weights=0.55), [
        [0.024438329, 0.00029965746], [-0.25075623, 0.48879501],
        [-0.069914408, -0.025123358], [0.38403666, -0.45057464]]),
    "rmsprop-centered": (dict(wd=0.1, learning_rate=0.1, centered=True, clip_weights=0.55), [
        [-0.47151774, 0.29781389], [-0.55000001, 0.55000001],
        [0.48705602, -0.00083954632], [0.40965641, -0.18644312]]),
    "adadelta": (dict(wd=0.1, rho=0.8), [
        [0.36449999, -0.21870002], [0.13568118, 0.58768189],
        [-0.43740004, 0.072899997], [0.65758443, -0.29979581]]),
    "adamax": (dict(wd=0.1, learning_rate=0.1), [
        [0.23090973, -0.050850771], [-0.020440686, 0.96033627],
        [-0.32581627, -0.059833337], [0.85483509, -0.39061487]]),
    "nadam": (dict(wd=0.1, learning_rate=0.1), [
        [0.26472709, -0.084120177], [0.032418348, 0.89362949],
        [-0.36048853, -0.0053953868], [0.84264708, -0.42318615]]),
    "ftml": (dict(wd=0.1, learning_rate=0.1), [
        [0.30288014, -0.11682886], [0.059996996, 0.88057733],
        [-0.39977884, 1.2505587e-09], [0.84047812, -0.40191573]]),
    "lamb": (dict(wd=0.1, learning_rate=0.1), [
        [0.48112059, -0.28867236], [-0.13273308, 1.0113171],
        [-0.57734472, 0.096224122], [0.98318309, -0.57368207]]),
    "sgd": (dict(momentum=0.9, wd=0.1, learning_rate=0.1), [
        [0.5, -0.30000001], [-0.044779986, 1.12988],
        [-0.60000002, 0.1], [1.01299, -1.00544]]),
    "adam": (dict(wd=0.1, learning_rate=0.1), [
        [0.5, -0.30000001], [0.0067808181, 0.95299745],
        [-0.60000002, 0.1], [0.98742032, -0.54093462]]),
    "lars": (dict(momentum=0.9, wd=0.1, learning_rate=0.1, eta=0.5), [
        [0.5, -0.30000001], [0.1256983, 0.90944427],
        [-0.60000002, 0.1], [0.88502586, -0.572914]]),
}

# MXNet 1.9.1: SGD, Adam and LARS take lazy_update (default True); AdaGrad, GroupAdaGrad and
# Ftrl (row_sparse weight) run sparse kernels on the gradient's rows; the others densify.
LAZY_BY_DEFAULT = {"sgd", "ccsgd", "adam", "lars", "adagrad", "groupadagrad", "ftrl", "lbsgd"}
# MXNet 1.9.1 densifies the gradient (DCASGD raises; AdamW is contrib.adamw_update's rule,
# which densifies too; Test's state copies every row of the weight)
STANDARD_BY_DEFAULT = {"nag", "signum", "sgld", "dcasgd", "rmsprop", "adamax", "nadam", "ftml",
                       "lamb", "adadelta", "adamw", "test"}


def _run(name, kwargs, stype="default", **extra):
    opt = mx.optimizer.create(name.split("-")[0], **kwargs, **extra)
    w = mx.nd.array(W0)
    if stype == "row_sparse":
        w = w.tostype("row_sparse")
    state = opt.create_state(0, w)
    for data, rows in GRADS:
        opt.update(0, w, mx.nd.sparse.row_sparse_array((data, rows), shape=W0.shape), state)
    return opt, w.asnumpy()


def test_every_builtin_optimizer_has_a_measured_default():
    builtin = {cls.__name__.lower() for cls in vars(mx.optimizer).values()
               if isinstance(cls, type) and issubclass(cls, mx.optimizer.Optimizer)
               and cls is not mx.optimizer.Optimizer}
    assert builtin == LAZY_BY_DEFAULT | STANDARD_BY_DEFAULT


@pytest.mark.parametrize("name", sorted(LAZY_BY_DEFAULT | STANDARD_BY_DEFAULT))
def test_default_lazy_update_is_mxnets(name):
    assert mx.optimizer.create(name).lazy_update is (name in LAZY_BY_DEFAULT)


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
@pytest.mark.parametrize("name", sorted(MEASURED))
def test_default_update_equals_mxnet(name, stype):
    kwargs, expected = MEASURED[name]
    _, got = _run(name, kwargs, stype)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=3e-6)


@pytest.mark.parametrize("name", sorted(n for n in MEASURED
                                        if n.split("-")[0] in STANDARD_BY_DEFAULT))
def test_lazy_update_stays_available(name):
    """``lazy_update=True`` on an optimizer MXNet densifies: rows without a gradient keep
    their weight, decay and ``clip_weights`` included."""
    kwargs, _ = MEASURED[name]
    opt, got = _run(name, kwargs, lazy_update=True)
    assert opt.lazy_update is True
    np.testing.assert_array_equal(got[[0, 2]], W0[[0, 2]])
    assert not np.array_equal(got[[1, 3]], W0[[1, 3]])


def test_rmsprop_standard_default_decays_and_clips_every_row():
    """The rows a row_sparse gradient does not hold get weight decay and clip_weights, as
    MXNet's densified update gives them (row 0 has no gradient in any step)."""
    kwargs, expected = MEASURED["rmsprop"]
    _, got = _run("rmsprop", kwargs)
    assert got[0, 0] != W0[0, 0]
    assert np.abs(got).max() <= 0.55 + 1e-7
    np.testing.assert_allclose(got[0], expected[0], rtol=2e-5, atol=3e-6)
