"""``FactorizationMachine``: a linear term plus order-2 factorised feature interactions.

``score(x) = b + x·w + ½ Σ_f [(x·V)_f² − (x²·V²)_f]`` (Rendle, 2010), with ``V`` of
shape ``(num_features, factor_size)``. ``w`` and ``V`` get row_sparse gradients.

>>> import sparsenet as mx
>>> net = FactorizationMachine(5, factor_size=2)
>>> net.initialize()
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 1.0, 3.0], [0, 4, 1, 2], [0, 2, 4]), shape=(2, 5))
>>> with mx.autograd.record():
...     out = net(x)
>>> out.backward()
>>> out.shape, net.factors.grad().stype, net.factors.grad().indices.asnumpy()
((2, 1), 'row_sparse', array([0, 1, 2, 4]))
"""
from .. import initializer
from .. import ndarray as nd
from ..base import InvalidArgumentError
from ..gluon.block import Block
from ..gluon.contrib.nn import SparseDense
from .linear import check_features
from .tasks import check_task, num_outputs

__all__ = ["FactorizationMachine"]


class FactorizationMachine(Block):
    """An order-2 factorization machine for regression or binary classification.

    Parameters
    ----------
    num_features : int
    factor_size : int
        Width ``k`` of each feature's factor vector.
    task : {'regression', 'binary'}
    factor_initializer : Initializer or str
        Default ``Normal(0.01)``; the linear term starts at zero.

    Returns scores of shape ``(batch, 1)``.
    """

    def __init__(self, num_features, factor_size=8, task="binary", factor_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.num_features = check_features(num_features)
        if isinstance(factor_size, bool) or not isinstance(factor_size, int) or factor_size < 1:
            raise InvalidArgumentError(f"factor_size must be a positive integer, "
                                       f"got {factor_size!r}")
        if check_task(task) == "multiclass":
            raise InvalidArgumentError("FactorizationMachine supports the tasks regression and "
                                       "binary, got 'multiclass'; use LinearModel or MLP")
        self.task, self.factor_size = task, factor_size
        self.num_outputs = num_outputs(task)
        with self.name_scope():
            self.linear = SparseDense(1, in_units=num_features, weight_initializer="zeros",
                                      weight_grad_stype="row_sparse")
            self.factors = self.params.get(
                "factors", shape=(num_features, factor_size),
                init=factor_initializer or initializer.Normal(0.01), grad_stype="row_sparse")

    def forward(self, x):
        v = self.factors.data(x.context)
        xv = nd.sparse.dot(x, v)
        x2v2 = nd.sparse.dot(nd.square(x), nd.square(v))
        pairs = 0.5 * nd.sum(nd.square(xv) - x2v2, axis=1, keepdims=True)
        return self.linear(x) + pairs
