"""Default tolerances of the comparisons, per dtype (MXNet 1.9.1's values).

``rtol``/``atol`` arguments of the comparison helpers are a number, a dict
``{dtype: tolerance}`` or None; None (or a dtype missing from the dict) takes
the default for the dtype of the data compared. Comparing two arrays uses the
larger of the two defaults.

>>> import numpy as np
>>> get_tols(np.ones(2, dtype=np.float16), np.ones(2), None, None)
(0.01, 0.1)
>>> get_rtol(), get_atol()
(1e-05, 1e-20)
"""
import numbers
import os

import numpy as np
import torch

from ..base import InvalidArgumentError

__all__ = ["default_dtype", "default_rtols", "default_atols", "default_numeric_eps",
           "effective_dtype", "get_tolerance", "get_tols", "get_rtol", "get_atol", "get_etol"]

_INTEGER_TYPES = (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                  np.int64, np.uint64)


def default_dtype():
    """float32, the dtype the test helpers create arrays in.

    >>> default_dtype()
    <class 'numpy.float32'>
    """
    return np.float32


def default_rtols():
    """Default relative tolerances: 1e-2, 1e-4, 1e-5 for float16/32/64, 0 for integers and bool.

    >>> default_rtols()[np.dtype(np.float32)]
    0.0001
    """
    table = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
             np.dtype(np.float64): 1e-5}
    table.update({np.dtype(t): 0 for t in _INTEGER_TYPES})
    return table


def default_atols():
    """Default absolute tolerances: 1e-1, 1e-3, 1e-20 for float16/32/64, 0 for integers and bool.

    >>> default_atols()[np.dtype(np.float16)]
    0.1
    """
    table = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
             np.dtype(np.float64): 1e-20}
    table.update({np.dtype(t): 0 for t in _INTEGER_TYPES})
    return table


def default_numeric_eps():
    """Finite-difference step per float dtype (powers of two, so the step is exact).

    >>> default_numeric_eps()[np.dtype(np.float32)]
    0.001953125
    """
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def _tf32_in_use(ctx):
    """Whether float32 matrix products on ``ctx`` run in TF32 (torch's switch, Ampere or newer)."""
    if ctx is None or getattr(ctx, "device_type", None) != "gpu":
        return False
    if os.environ.get("NVIDIA_TF32_OVERRIDE") == "0":
        return False
    if not torch.cuda.is_available() or ctx.device_id >= torch.cuda.device_count():
        return False
    major, _ = torch.cuda.get_device_capability(ctx.device_id)
    return major >= 8 and torch.backends.cuda.matmul.allow_tf32


def effective_dtype(dat):
    """The dtype whose tolerances fit ``dat``.

    Its dtype, except float32 data on a GPU whose float32 matrix products run
    in TF32 (``torch.backends.cuda.matmul.allow_tf32`` on compute capability
    8.0 or newer), whose precision is that of float16.

    Parameters
    ----------
    dat : NDArray or numpy.ndarray or numpy scalar

    Examples
    --------
    >>> import sparsenet as mx
    >>> effective_dtype(mx.nd.ones((2,)))
    dtype('float32')
    """
    dtype = np.dtype(dat.dtype) if hasattr(dat, "dtype") else np.asarray(dat).dtype
    if dtype == np.dtype(np.float32) and _tf32_in_use(getattr(dat, "context", None)):
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat, tol, default_tol):
    """The tolerance for ``dat``: ``tol`` if a number, else its dtype entry, else the default.

    Parameters
    ----------
    dat : NDArray or numpy.ndarray
    tol : None, float or dict of dtype to float
    default_tol : dict of dtype to float

    Examples
    --------
    >>> get_tolerance(np.ones(2), {np.dtype(np.float32): 0.5}, default_rtols())
    1e-05
    >>> get_tolerance(np.ones(2), 0.5, default_rtols())
    0.5
    """
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else {np.dtype(k): v for k, v in tol.items()}
    if dtype in tol:
        return tol[dtype]
    if dtype not in default_tol:
        raise InvalidArgumentError(f"no default tolerance for dtype {dtype}; known dtypes: "
                                   f"{sorted(str(d) for d in default_tol)}; pass rtol/atol")
    return default_tol[dtype]


def get_tols(x, y, rtol, atol):
    """``(rtol, atol)`` for comparing ``x`` and ``y``: the larger default of their dtypes.

    >>> get_tols(1.0, np.float32(2.0), None, None)
    (0.0001, 0.001)
    """
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype`` (float64 unless given).

    >>> get_rtol(dtype=np.float16)
    0.01
    """
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype`` (float64 unless given).

    >>> get_atol(dtype='float32')
    0.001
    """
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_etol(etol=None):
    """``etol``, or 0: the mismatch fraction :func:`assert_almost_equal_with_err` allows.

    >>> get_etol(), get_etol(0.1)
    (0, 0.1)
    """
    return 0 if etol is None else etol
