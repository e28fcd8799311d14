"""Tolerant comparisons of arrays of every storage type, NumPy arrays and scalars.

A pair is close where ``|a - b| <= atol + rtol * |b|`` (NumPy's rule). The
assertions raise ``AssertionError`` with MXNet's message: the largest error
relative to the tolerance, how many positions mismatch, the location of the
worst one with both values, and the two arrays; the worst mismatches are also
printed, one line each.

>>> import sparsenet as mx
>>> a = mx.nd.array([1.0, 2.0, 3.0]).tostype('row_sparse')
>>> assert_almost_equal(a, np.array([1.0, 2.0, 3.00001]))
>>> almost_equal(a, np.array([1.0, 2.5, 3.0]))
False
"""
import numpy as np
import numpy.testing as npt
import scipy.sparse as sp
import torch

from ..ndarray.ndarray import NDArray
from .tolerances import get_atol, get_etol, get_rtol, get_tols

__all__ = ["same", "checkShapes", "almost_equal", "almost_equal_ignore_nan", "locationError",
           "assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err",
           "assert_almost_equal_ignore_nan", "assert_exception"]


def _as_numpy(x):
    """NumPy view of an array of any storage type, a SciPy matrix, a tensor or a scalar."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if sp.issparse(x):
        return x.toarray()
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _shown(x):
    """What a failure message prints for an input: NumPy for arrays, else the value itself."""
    return _as_numpy(x) if isinstance(x, (NDArray, torch.Tensor)) or sp.issparse(x) else x


def same(a, b):
    """True if ``a`` and ``b`` have the same shape and exactly equal values.

    >>> import sparsenet as mx
    >>> same(mx.nd.array([1.0, 2.0]), np.array([1.0, 2.0]))
    True
    """
    return bool(np.array_equal(_as_numpy(a), _as_numpy(b)))


def checkShapes(a, b):  # noqa: N802 - MXNet's name
    """Raise AssertionError unless ``a`` and ``b`` have the same shape.

    >>> checkShapes(np.ones(2), np.ones(3))
    Traceback (most recent call last):
    ...
    AssertionError: 
    Items are not equal: a.shape = (2,) and b.shape = (3,) are not equal
     ACTUAL: array([1., 1.])
     DESIRED: array([1., 1., 1.])
    """
    if tuple(a.shape) != tuple(b.shape):
        # builtin: an assertion helper fails with AssertionError, as numpy.testing does
        raise AssertionError(npt.build_err_msg(
            [_as_numpy(a), _as_numpy(b)],
            err_msg=f"a.shape = {tuple(a.shape)} and b.shape = {tuple(b.shape)} are not equal"))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """True if ``a`` and ``b`` are close everywhere (after broadcasting).

    The default tolerances are float64's (``rtol=1e-5``, ``atol=1e-20``)
    whatever the dtypes, as in MXNet. Shapes that do not broadcast give
    False; with ``use_broadcast=False`` different shapes raise AssertionError.

    >>> import sparsenet as mx
    >>> almost_equal(mx.nd.ones((2,)), np.ones(2) + 1e-7)
    True
    """
    if not use_broadcast:
        checkShapes(a, b)
    a, b = _as_numpy(a), _as_numpy(b)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def _without_nan(a, b):
    a, b = np.array(_as_numpy(a)), np.array(_as_numpy(b))
    a, b = np.broadcast_arrays(a, b)
    a, b = a.copy(), b.copy()
    mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[mask] = 0
    b[mask] = 0
    return a, b


def almost_equal_ignore_nan(a, b, rtol=None, atol=None):
    """:func:`almost_equal` ignoring every position where either array is NaN.

    >>> almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([2.0, 1.0]))
    True
    """
    a, b = _without_nan(a, b)
    return almost_equal(a, b, rtol, atol)


def locationError(a, b, index, names, maxError=False):  # noqa: N802,N803 - MXNet's names
    """The line naming a mismatched position and both values there.

    >>> locationError(np.array([1., 2.]), np.array([1., 3.]), (1,), ('x', 'y'))
    'Location of error: (1,), x=2.00000000, y=3.00000000'
    """
    maximum = "maximum " if maxError else ""
    index = tuple(int(i) for i in index)
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (maximum, index, names[0], a[index],
                                                          names[1], b[index])


def _violations(a, b, rtol, atol):
    """``|a - b| / (atol + rtol * |b|)`` per position (0 where equal, infinities included)."""
    if a.dtype.kind in "biu" or b.dtype.kind in "biu" or a.ndim == 0:
        # integers without wrap-around; scalars in float64 (NumPy 1.x's scalar arithmetic)
        a, b = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
        return absdiff / (atol + rtol * np.abs(b) + 1e-20)


def _mismatch_message(a, b, orig, rtol, atol, names, close, mismatches):
    """MXNet's report of the positions where ``close`` is False; prints the worst ones."""
    violation = _violations(a, b, rtol, atol)
    if a.ndim == 0:
        err = "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (violation, rtol, atol)
    else:
        bad = np.flatnonzero(~close.reshape(-1))
        v = violation.reshape(-1)[bad]
        # worst first: NaN errors, then the largest; ties in position order
        order = bad[np.lexsort((bad, -np.nan_to_num(v, nan=0.0), ~np.isnan(v)))]
        limit = mismatches[1]
        stopped = 0 < limit < order.size
        found = limit + 1 if stopped else order.size
        shown = min(mismatches[0], limit if stopped else order.size)
        where = [np.unravel_index(i, a.shape) for i in order]
        print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
        for k in range(max(shown, 0)):
            print("%3d: Error %f  %s" % (k + 1, violation[where[k]],
                                          locationError(a, b, where[k], names)))
        degree = "at least " if stopped else ""
        err = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
            violation[where[0]], rtol, atol, degree, 100 * found / a.size,
            locationError(a, b, where[0], names, maxError=True))
    with np.printoptions(threshold=4, suppress=True):
        return npt.build_err_msg(list(orig), err_msg=err)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError with MXNet's report of the worst mismatches unless ``a`` ~ ``b``.

    Parameters
    ----------
    a, b : NDArray (any storage type), numpy.ndarray, SciPy matrix or scalar
    rtol, atol : None, float or dict of dtype to float
        None (or a dtype missing from the dict): the larger default of the
        two dtypes (see :func:`~sparsenet.test_utils.get_tols`).
    names : tuple of str
        Names of ``a`` and ``b`` in the message.
    equal_nan : bool
        Whether NaN equals NaN.
    use_broadcast : bool
        Compare after broadcasting; if False, different shapes fail.
    mismatches : (int, int)
        How many mismatches to print, and at most how many to count (0: all).

    Examples
    --------
    >>> import sparsenet as mx
    >>> assert_almost_equal(mx.nd.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]))
    Traceback (most recent call last):
    ...
    AssertionError: 
    Items are not equal:
    Error 400.000000 exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03 (mismatch 33.333333%).
    Location of maximum error: (1,), a=2.00000000, b=2.50000000
    ...
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    shown = (_shown(a), _shown(b))
    a, b = _as_numpy(a), _as_numpy(b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        npt.assert_equal(a, b)
        return
    try:
        wa, wb = np.broadcast_arrays(a, b)
    except ValueError:
        # builtin: an assertion helper fails with AssertionError, as numpy.testing does
        raise AssertionError(npt.build_err_msg(
            [a, b], err_msg=f"{names[0]}.shape = {a.shape} and {names[1]}.shape = {b.shape} "
                            f"do not broadcast together")) from None
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(wa, wb, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    # builtin: an assertion helper fails with AssertionError, as numpy.testing does
    raise AssertionError(_mismatch_message(wa, wb, shown, rtol, atol, names, close, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """:func:`assert_almost_equal` with NumPy's ``assert_allclose`` defaults.

    >>> assert_allclose(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    """
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """:func:`assert_almost_equal` that passes while at most a fraction ``etol`` mismatches.

    >>> assert_almost_equal_with_err(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 9.0]),
    ...                              etol=0.3)
    """
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    shown = (_shown(a), _shown(b))
    wa, wb = np.broadcast_arrays(_as_numpy(a), _as_numpy(b))
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(wa, wb, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1 - np.count_nonzero(close) / close.size > etol:
        # builtin: an assertion helper fails with AssertionError, as numpy.testing does
        raise AssertionError(_mismatch_message(wa, wb, shown, rtol, atol, names, close,
                                               mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` ignoring every position where either array is NaN.

    >>> assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    """
    a, b = _without_nan(a, b)
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type`` (other exceptions propagate).

    >>> assert_exception(int, ValueError, 'x')
    >>> assert_exception(int, ValueError, '1')
    Traceback (most recent call last):
    ...
    AssertionError: int did not raise ValueError
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    # builtin: an assertion helper fails with AssertionError, as numpy.testing does
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")
