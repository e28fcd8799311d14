"""``MLP``: the network of seed 000 ("Sparse NDArrays with Gluon") as a ready model.

``SparseDense(128, sigmoid) -> Dense(8, sigmoid) -> Dense(outputs)``: the tutorial's
``FullyConnectedSparse`` first layer with a row_sparse weight gradient, then its two
dense layers. The tutorial's last sigmoid is the binary task's link
(:func:`sparsenet.models.tasks.predict`), so the block returns the scores before it.

>>> import sparsenet as mx
>>> net = MLP(10)
>>> net.initialize()
>>> x = mx.nd.sparse.csr_matrix(([1.0], [7], [0, 1]), shape=(1, 10))
>>> with mx.autograd.record():
...     out = net(x)
>>> out.backward()
>>> out.shape, net.embed.weight.grad().stype, net.embed.weight.grad().indices.asnumpy()
((1, 1), 'row_sparse', array([7]))
"""
from ..gluon.block import Block
from ..gluon.contrib.nn import SparseDense
from ..gluon.nn import Dense, Sequential
from .linear import check_features
from .tasks import check_task, num_outputs
from .wide_deep import check_hidden

__all__ = ["MLP"]


class MLP(Block):
    """Multilayer perceptron over CSR input, its first layer a ``SparseDense``.

    Parameters
    ----------
    num_features : int
    hidden : sequence of int
        Layer sizes; seed 000 uses ``(128, 8)`` (the default).
    activation : str
        Hidden activation; seed 000 uses ``'sigmoid'`` (the default).
    task : {'regression', 'binary', 'multiclass'}
    num_classes : int

    Returns scores of shape ``(batch, outputs)``.
    """

    def __init__(self, num_features, hidden=(128, 8), activation="sigmoid", task="binary",
                 num_classes=2, **kwargs):
        super().__init__(**kwargs)
        self.num_features = check_features(num_features)
        self.hidden = check_hidden(hidden)
        self.activation = activation
        self.task = check_task(task)
        self.num_outputs = num_outputs(task, num_classes)
        with self.name_scope():
            self.embed = SparseDense(self.hidden[0], in_units=num_features,
                                     activation=activation, weight_grad_stype="row_sparse")
            self.dense = Sequential()
            with self.dense.name_scope():
                for before, units in zip(self.hidden, self.hidden[1:]):
                    self.dense.add(Dense(units, in_units=before, activation=activation))
                self.dense.add(Dense(self.num_outputs, in_units=self.hidden[-1]))

    def forward(self, x):
        return self.dense(self.embed(x))
