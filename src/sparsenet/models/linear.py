"""``LinearModel``: linear and logistic regression (binary and multiclass) on CSR input.

The weight ``(num_features, outputs)`` gets row_sparse gradients: a batch touches only
the rows of the features it holds.

>>> import sparsenet as mx
>>> net = LinearModel(4, task='binary')
>>> net.initialize()
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 3], [0, 1, 2]), shape=(2, 4))
>>> with mx.autograd.record():
...     out = net(x)
>>> out.backward()
>>> out.shape, net.linear.weight.grad().stype, net.linear.weight.grad().indices.asnumpy()
((2, 1), 'row_sparse', array([0, 3]))
"""
from ..base import InvalidArgumentError
from ..gluon.block import Block
from ..gluon.contrib.nn import SparseDense
from .tasks import check_task, num_outputs

__all__ = ["LinearModel", "check_features"]


def check_features(num_features):
    """Return ``num_features`` if it is a positive int, else raise ``InvalidArgumentError``."""
    if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
        raise InvalidArgumentError(f"num_features must be a positive integer, "
                                   f"got {num_features!r}")
    return num_features


class LinearModel(Block):
    """``scores = dot(x, weight) + bias`` for CSR (or dense) ``x`` of ``num_features`` columns.

    Parameters
    ----------
    num_features : int
    task : {'regression', 'binary', 'multiclass'}
        Linear regression, logistic regression, or softmax regression
        (see :mod:`sparsenet.models.tasks` for predictions and losses).
    num_classes : int
        Classes of a multiclass model (ignored otherwise).
    weight_initializer : Initializer or str
        Default ``'zeros'``.

    Returns scores of shape ``(batch, 1)``, or ``(batch, num_classes)`` for multiclass.
    """

    def __init__(self, num_features, task="binary", num_classes=2, weight_initializer="zeros",
                 **kwargs):
        super().__init__(**kwargs)
        self.num_features = check_features(num_features)
        self.task = check_task(task)
        self.num_outputs = num_outputs(task, num_classes)
        with self.name_scope():
            self.linear = SparseDense(self.num_outputs, in_units=num_features,
                                      weight_initializer=weight_initializer,
                                      weight_grad_stype="row_sparse")

    def forward(self, x):
        return self.linear(x)
