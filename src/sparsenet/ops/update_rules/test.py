"""The update operator of MXNet's ``Test`` optimizer (generic rows).

MXNet 1.9.1 has no operator for it (its ``Test.update`` is two NDArray statements); this one
gives the rule storage-type rows like every other optimizer's, so that a row_sparse gradient
on a dense or row_sparse weight runs on its rows without densifying.

>>> import sparsenet as mx
>>> from sparsenet.ops.update_rules import test_update
>>> w, s = mx.nd.ones((2,)), mx.nd.zeros((2,))
>>> _ = test_update(w, mx.nd.array([1.0, -1.0]), s, rescale_grad=2.0, out=w)
>>> w.asnumpy(), s.asnumpy()
(array([ 3., -1.], dtype=float32), array([ 3., -1.], dtype=float32))
"""
from .core import update_op

__all__ = ["test_update"]


@update_op(num_states=1)
def test_update(weight, grad, state, *, rescale_grad=1.0, lazy_update=False):
    """MXNet's ``Test`` rule: ``weight += grad * rescale_grad``, then ``state = weight``.

    No learning rate, weight decay or clipping (MXNet's ``Test`` reads none). The
    product is rounded before the sum, as MXNet computes it. The state may have another
    dtype than the weight (MXNet's ``Test`` keeps a float32 state): it is cast.

    Row_sparse gradient: ``lazy_update=False`` (default; MXNet's result) copies every
    row of the weight into the state; ``True`` copies the gradient's rows only (the
    weight is the same either way: a zero gradient leaves a row unchanged).

    >>> import sparsenet as mx
    >>> from sparsenet.ops.update_rules import test_update
    >>> w, s = mx.nd.ones((3, 1)), mx.nd.zeros((3, 1))
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
    >>> _ = test_update(w, g, s, rescale_grad=0.5, lazy_update=True, out=w)
    >>> w.asnumpy().ravel(), s.asnumpy().ravel()
    (array([1. , 1.5, 1. ], dtype=float32), array([0. , 1.5, 0. ], dtype=float32))
    """
    if grad is not None:
        weight.add_(grad * rescale_grad)
    state.copy_(weight)
    return weight


test_update.__test__ = False  # an operator, not a pytest test (its name starts with 'test')
