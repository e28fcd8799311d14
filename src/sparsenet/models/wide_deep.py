"""``WideAndDeep``: a linear ("wide") part plus an MLP ("deep") over a ``SparseDense`` layer.

``scores = wide(x) + deep(relu(dot(x, W_embed) + b))`` (Cheng et al., 2016). Both
``(num_features, ·)`` tables, the wide weight and the deep embedding, get row_sparse
gradients.

>>> import sparsenet as mx
>>> net = WideAndDeep(6, hidden=(4, 3))
>>> net.initialize()
>>> x = mx.nd.sparse.csr_matrix(([1.0, 1.0], [1, 5], [0, 1, 2]), shape=(2, 6))
>>> with mx.autograd.record():
...     out = net(x)
>>> out.backward()
>>> out.shape, net.embed.weight.grad().stype, net.wide.weight.grad().indices.asnumpy()
((2, 1), 'row_sparse', array([1, 5]))
"""
from ..base import InvalidArgumentError
from ..gluon.block import Block
from ..gluon.contrib.nn import SparseDense
from ..gluon.nn import Dense, Sequential
from .linear import check_features
from .tasks import check_task, num_outputs

__all__ = ["WideAndDeep", "check_hidden"]


def check_hidden(hidden):
    """``hidden`` as a non-empty tuple of positive ints, else ``InvalidArgumentError``."""
    try:
        sizes = tuple(hidden)
    except TypeError:
        sizes = None
    if not sizes or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in sizes):
        raise InvalidArgumentError(f"hidden must be a non-empty sequence of positive layer "
                                   f"sizes such as (64, 32), got {hidden!r}")
    return sizes


class WideAndDeep(Block):
    """Wide (linear) plus deep (MLP over a sparse first layer) model.

    Parameters
    ----------
    num_features : int
    hidden : sequence of int
        Sizes of the deep part's layers; the first is the ``SparseDense`` embedding.
    task : {'regression', 'binary', 'multiclass'}
    num_classes : int
        Classes of a multiclass model.

    Returns scores of shape ``(batch, outputs)``.
    """

    def __init__(self, num_features, hidden=(64, 32), task="binary", num_classes=2, **kwargs):
        super().__init__(**kwargs)
        self.num_features = check_features(num_features)
        self.hidden = check_hidden(hidden)
        self.task = check_task(task)
        self.num_outputs = num_outputs(task, num_classes)
        with self.name_scope():
            self.wide = SparseDense(self.num_outputs, in_units=num_features,
                                    weight_initializer="zeros", weight_grad_stype="row_sparse")
            self.embed = SparseDense(self.hidden[0], in_units=num_features, activation="relu",
                                     weight_grad_stype="row_sparse")
            self.deep = Sequential()
            with self.deep.name_scope():
                for before, units in zip(self.hidden, self.hidden[1:]):
                    self.deep.add(Dense(units, in_units=before, activation="relu"))
                self.deep.add(Dense(self.num_outputs, in_units=self.hidden[-1]))

    def forward(self, x):
        return self.wide(x) + self.deep(self.embed(x))
