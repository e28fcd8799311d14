"""``_contrib_allclose``: whether two arrays are equal within a tolerance, as one flag.

>>> import sparsenet as mx
>>> mx.nd.contrib.allclose(mx.nd.array([1e10, 1e-8]), mx.nd.array([1.00001e10, 1e-9]),
...                        rtol=1e-4).asnumpy()
array([1], dtype=uint8)
"""
import torch

from ..base import InvalidArgumentError
from .registry import defop

__all__ = ["allclose"]


@defop(name="_contrib_allclose", differentiable=False)
def allclose(a, b, *, rtol=1e-05, atol=1e-08, equal_nan=True):
    """1 if ``|a - b| <= atol + rtol * |b|`` holds at every position, else 0.

    NumPy's ``allclose`` as an operator: the result is a one-element ``uint8``
    array (MXNet 1.9.1 returns a 0-d array, which its legacy operators reject).
    Infinite values are close only to an infinity of the same sign; NaN is
    close to NaN when ``equal_nan`` is true (the default, as in MXNet).

    Parameters
    ----------
    a, b : NDArray
        Arrays of one shape (their dtypes may differ).
    rtol : float
        Relative tolerance.
    atol : float
        Absolute tolerance.
    equal_nan : bool
        Whether NaN in ``a`` equals NaN at the same position of ``b``.

    Returns
    -------
    NDArray
        Shape ``(1,)``, dtype uint8.

    Examples
    --------
    >>> import sparsenet as mx
    >>> nan = float('nan')
    >>> int(mx.nd.contrib.allclose(mx.nd.array([1.0, nan]), mx.nd.array([1.0, nan])).asscalar())
    1
    >>> int(mx.nd.contrib.allclose(mx.nd.array([1.0, nan]), mx.nd.array([1.0, nan]),
    ...                            equal_nan=False).asscalar())
    0
    """
    if tuple(a.shape) != tuple(b.shape):
        raise InvalidArgumentError(f"allclose: a and b must have one shape, got "
                                   f"{tuple(a.shape)} and {tuple(b.shape)}")
    if b.device != a.device:
        raise InvalidArgumentError(f"allclose: a is on {a.device} and b on {b.device}; move "
                                   f"them to one device with .as_in_context()")
    wide = torch.float64 if a.device.type != "mps" else torch.float32
    close = torch.isclose(a.to(wide), b.to(wide), rtol=float(rtol), atol=float(atol),
                          equal_nan=bool(equal_nan))
    return close.all().to(torch.uint8)
