"""MXNet's ``Test`` optimizer (``mx.optimizer.create('test')``), used by MXNet's kvstore tests."""
import numpy as np

from ..ndarray.creation import zeros
from ..ops.update_rules import test_update
from .optimizer import Optimizer, register

__all__ = ["Test"]


@register
class Test(Optimizer):
    """The optimizer of MXNet's own kvstore tests: ``weight += rescale_grad * grad``.

    The state is a dense float32 copy of the weight after each update (MXNet's
    ``Test`` keeps one). No learning rate, weight decay or gradient clipping is read,
    and, as in MXNet, the update counters are not advanced.

    With ``multi_precision=True`` a float16 weight is updated through a float32
    master copy (state ``(master, copy)``, MXNet's layout) and rounded back to float16.

    Row_sparse gradients: the weight changes in the gradient's rows only whatever
    ``lazy_update`` says (a zero gradient leaves a row unchanged); ``lazy_update=False``
    (default, MXNet's result) refreshes every row of the state copy, ``True`` the
    gradient's rows only, ``'exact'`` catches the copy's other rows up on
    :meth:`~Optimizer.sync`.

    Unlike MXNet 1.9.1, a row_sparse weight works: MXNet updates it, then raises a
    TypeError copying it into the dense state (which MXNet's kvstore swallows).

    Parameters
    ----------
    lazy_update : {True, False, 'exact'}, default False
    **kwargs
        See :class:`Optimizer` (``rescale_grad``, ``multi_precision``).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.create('test', rescale_grad=2.0)
    >>> w = mx.nd.ones((2, 2)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [1]), shape=(2, 2)), st)
    >>> w.asnumpy()
    array([[1., 1.],
           [3., 3.]], dtype=float32)
    """

    __test__ = False  # an optimizer, not a pytest test class (its name starts with 'Test')

    def __init__(self, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)

    def create_state(self, index, weight):
        """A dense float32 array of zeros shaped like ``weight`` (MXNet's state)."""
        return zeros(weight.shape, weight.context, dtype=np.float32)

    def _update_impl(self, index, weight, grad, state):
        self._apply(weight, grad, state, {})

    def _fused(self, weight, grad, state, step, lazy):
        test_update.update(weight, grad, state, rescale_grad=self.rescale_grad,
                           lazy_update=bool(lazy))

    def _skip_map(self, step):
        return [[1.0, 0.0], [1.0, 0.0]]  # a zero gradient: weight kept, copy = weight

    def _exact_arrays(self, weight, state):
        return [weight, state]
